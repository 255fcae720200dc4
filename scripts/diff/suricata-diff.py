#!/usr/bin/env python3
"""Differential test: shrike against Suricata on the same captures, rules and config.

Both engines read every capture on its own (one process per capture and engine, run in
parallel), with the same suricata.yaml, the same rule file, `-k none` and `--runmode single`,
in UTC. Their EVE records are then matched and compared:

  flow     matched by (proto, src, sport, dst, dport, flow.start); leftovers by the same
           5-tuple in either direction and a start within --fuzz seconds. Matched pairs are
           compared field by field (state, reason, pkts/bytes per direction, start, end,
           age, app_proto, tcp flags, alerted). Flows only one side has are classified:
           `split` (the other side has the 5-tuple, at other start times: timeouts, port
           reuse) or `absent/<proto>` (the other side has no flow with that 5-tuple).
  anomaly  matched by (timestamp, type, event, 5-tuple); counted per (type, event).
  alert    matched by (timestamp, sid, 5-tuple); matched pairs compared on pkt_src, stream,
           app_proto, direction, payload.
  others   counted per event_type.

Usage:
  python3 scripts/diff/suricata-diff.py --shrike target/release/shrike --pcaps DIR
      [--pcaps DIR2 ...] [--rules FILE] [--config /etc/suricata/suricata.yaml]
      [--out DIR] [-j N] [--examples N] [--reuse] [--only-shrike] [--suricata-socket]

--suricata-socket runs one Suricata in unix-socket mode for all captures (rules are loaded
once, not per capture: ET Open costs Suricata ~20 s of start-up per run), each capture still
with its own output directory and flow table. Its host and IP-pair tables (thresholds by
source or destination, hostbits, xbits) carry over between captures, so a capture whose
alerts differ is read again by a Suricata run of its own before it is compared.
--reuse keeps Suricata's output from an earlier run with the same out dir when its command
line was the same (only shrike is run again); --only-shrike as well, and fails without it.
Writes OUT/summary.json (all counts and classes) and prints one table per record type and
per --pcaps directory, then a total. Captures an engine fails on (a link type Suricata
does not read, a corrupt file) are listed and left out of the comparison. Exit status 0:
differences are reported, not failures.
"""

import argparse
import collections
import datetime
import gzip
import json
import os
import time
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

CAPTURE_EXT = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".cap.gz")

# Flow fields compared on matched pairs: (label, getter).
FLOW_FIELDS = [
    ("state", lambda r: r.get("flow", {}).get("state")),
    ("reason", lambda r: r.get("flow", {}).get("reason")),
    ("pkts_toserver", lambda r: r.get("flow", {}).get("pkts_toserver")),
    ("pkts_toclient", lambda r: r.get("flow", {}).get("pkts_toclient")),
    ("bytes_toserver", lambda r: r.get("flow", {}).get("bytes_toserver")),
    ("bytes_toclient", lambda r: r.get("flow", {}).get("bytes_toclient")),
    ("start", lambda r: r.get("flow", {}).get("start")),
    ("end", lambda r: r.get("flow", {}).get("end")),
    ("age", lambda r: r.get("flow", {}).get("age")),
    ("alerted", lambda r: r.get("flow", {}).get("alerted")),
    ("app_proto", lambda r: r.get("app_proto")),
    ("tcp_flags", lambda r: r.get("tcp", {}).get("tcp_flags")),
    ("tcp_flags_ts", lambda r: r.get("tcp", {}).get("tcp_flags_ts")),
    ("tcp_flags_tc", lambda r: r.get("tcp", {}).get("tcp_flags_tc")),
    ("tcp.state", lambda r: r.get("tcp", {}).get("state")),
    ("vlan", lambda r: r.get("vlan")),
]

# Fields whose differences are counted per (suricata value, shrike value).
PAIRED = ("state", "reason", "app_proto", "tcp.state")

ALERT_FIELDS = [
    ("pkt_src", lambda r: r.get("pkt_src")),
    ("stream", lambda r: r.get("stream")),
    ("app_proto", lambda r: r.get("app_proto")),
    ("direction", lambda r: r.get("direction")),
    ("payload", lambda r: r.get("payload")),
    ("action", lambda r: r.get("alert", {}).get("action")),
]


def find_captures(path):
    if os.path.isfile(path):
        return [path]
    out = []
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f.lower().endswith(CAPTURE_EXT):
                out.append(os.path.join(root, f))
    return sorted(out)


def plain_capture(path, inputs_dir):
    """Suricata reads no gzip: give both engines the same decompressed file."""
    if not path.endswith(".gz"):
        return path
    os.makedirs(inputs_dir, exist_ok=True)
    dst = os.path.join(inputs_dir, os.path.basename(path)[:-3])
    if not os.path.exists(dst):
        with gzip.open(path, "rb") as src, open(dst + ".tmp", "wb") as out:
            shutil.copyfileobj(src, out)
        os.replace(dst + ".tmp", dst)
    return dst


def engine_cmd(engine, binary, config, rules, pcap, outdir):
    cmd = [binary, "-c", config, "-r", pcap, "-l", outdir, "-k", "none", "--runmode", "single"]
    cmd += ["-S", rules]
    if engine == "shrike":
        cmd += ["-q"]
    else:
        # Parallel runs would share the stock control socket path; it writes no records.
        cmd += ["--set", "unix-command.enabled=no"]
    return cmd


def run_engine(engine, binary, config, rules, pcap, outdir, reuse):
    cmd = engine_cmd(engine, binary, config, rules, pcap, outdir)
    # The binary's identity too: a rebuilt shrike at the same path runs again.
    exe = shutil.which(binary) or binary
    st = os.stat(exe)
    ident = cmd + [f"{st.st_size}:{st.st_mtime_ns}"]
    stamp = os.path.join(outdir, ".run")
    if reuse and os.path.exists(stamp):
        # The same command ran before: its output (or its failure) stands.
        with open(stamp) as f:
            try:
                prev = json.load(f)
            except ValueError:
                prev = {}
        if prev.get("cmd") == ident:
            return prev.get("rc", 1), prev.get("err", "")
    if os.path.isdir(outdir):
        shutil.rmtree(outdir)
    os.makedirs(outdir)
    env = dict(os.environ, TZ="UTC")
    try:
        p = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=900
        )
    except subprocess.TimeoutExpired:
        return 124, "timeout"
    err = (p.stderr or p.stdout)[-600:] if p.returncode != 0 else ""
    with open(stamp, "w") as f:
        json.dump({"cmd": ident, "rc": p.returncode, "err": err}, f)
    return p.returncode, err


def suricata_socket_runs(binary, config, rules, todo, workdir, reuse):
    """Runs Suricata once in unix-socket mode (rules loaded once) and hands it every capture
    of `todo` ([(pcap, outdir)]) with `pcap-file`; Suricata reads them one after another, each
    with its own output directory and a clean flow table, as a run of its own. Returns
    {outdir: (rc, err)}; rc is 1 where a capture left no eve.json."""
    res = {}
    exe = shutil.which(binary) or binary
    st = os.stat(exe)
    rst = os.stat(rules)
    ident_base = [exe, "--unix-socket", config, rules, f"{st.st_size}:{st.st_mtime_ns}", f"{rst.st_size}:{rst.st_mtime_ns}"]
    pending = []
    for pcap, odir in todo:
        stamp = os.path.join(odir, ".run")
        ident = ident_base + [pcap]
        if reuse and os.path.exists(stamp):
            try:
                with open(stamp) as f:
                    prev = json.load(f)
            except ValueError:
                prev = {}
            if prev.get("cmd") == ident:
                res[odir] = (prev.get("rc", 1), prev.get("err", ""))
                continue
        if os.path.isdir(odir):
            shutil.rmtree(odir)
        os.makedirs(odir)
        pending.append((pcap, odir, ident))
    if not pending:
        return res
    os.makedirs(workdir, exist_ok=True)
    sock = os.path.join(workdir, "suricata.sock")
    if os.path.exists(sock):
        os.remove(sock)
    env = dict(os.environ, TZ="UTC")
    log = open(os.path.join(workdir, "suricata-socket.log"), "w")
    proc = subprocess.Popen(
        [binary, "-c", config, f"--unix-socket={sock}", "-k", "none", "--runmode", "single", "-l", workdir, "-S", rules],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )

    def cmd(c):
        p = subprocess.run(["suricatasc", "-c", c, sock], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            return json.loads(p.stdout)
        except ValueError:
            return None

    deadline = time.time() + 600
    while not os.path.exists(sock) or cmd("version") is None:
        if proc.poll() is not None or time.time() > deadline:
            for pcap, odir, ident in pending:
                res[odir] = (1, "Suricata unix-socket mode did not start")
            return res
        time.sleep(1)
    for pcap, odir, _ in pending:
        cmd(f"pcap-file {pcap} {odir}")
    while proc.poll() is None:
        n = cmd("pcap-file-number")
        c = cmd("pcap-current")
        if n and c and n.get("message") == 0 and c.get("message") == "None":
            break
        time.sleep(0.5)
    alive = proc.poll() is None
    if alive:
        cmd("shutdown")
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    for pcap, odir, ident in pending:
        ok = os.path.exists(os.path.join(odir, "eve.json"))
        rc, err = (0, "") if ok else (1, "no eve.json (Suricata's unix-socket run of this capture failed)" + ("" if alive else "; Suricata exited"))
        if ok or alive:
            with open(os.path.join(odir, ".run"), "w") as f:
                json.dump({"cmd": ident, "rc": rc, "err": err}, f)
        res[odir] = (rc, err)
    return res


def load(path):
    out = collections.defaultdict(list)
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                out["<invalid json>"].append({"line": line[:200]})
                continue
            out[rec.get("event_type", "<none>")].append(rec)
    return out


def ts_seconds(s):
    if not s:
        return None
    try:
        return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except ValueError:
        return None


def ports(r):
    if "src_port" in r or "dest_port" in r:
        return r.get("src_port"), r.get("dest_port")
    return r.get("icmp_type"), r.get("icmp_code")


def tuple_of(r):
    sp, dp = ports(r)
    return (r.get("proto"), r.get("src_ip"), sp, r.get("dest_ip"), dp)


def unordered(t):
    proto, a, ap, b, bp = t
    ends = sorted([(str(a), str(ap)), (str(b), str(bp))])
    return (proto, ends[0], ends[1])


def match(srecs, krecs, key, fuzzy_key=None, fuzzy_time=None, fuzz=0.0):
    """Pairs records on exact key, then leftovers on fuzzy_key with times within fuzz."""
    by = collections.defaultdict(list)
    for i, r in enumerate(krecs):
        by[key(r)].append(i)
    used = set()
    pairs, s_left = [], []
    for r in srecs:
        lst = by.get(key(r))
        if lst:
            i = lst.pop(0)
            used.add(i)
            pairs.append((r, krecs[i]))
        else:
            s_left.append(r)
    k_left = [r for i, r in enumerate(krecs) if i not in used]
    if fuzzy_key is None or not s_left or not k_left:
        return pairs, s_left, k_left
    fz = collections.defaultdict(list)
    for j, r in enumerate(k_left):
        fz[fuzzy_key(r)].append(j)
    used2 = set()
    s_rest = []
    for r in s_left:
        best = None
        t = fuzzy_time(r)
        for j in fz.get(fuzzy_key(r), []):
            if j in used2:
                continue
            t2 = fuzzy_time(k_left[j])
            if t is None or t2 is None:
                continue
            d = abs(t - t2)
            if d <= fuzz and (best is None or d < best[0]):
                best = (d, j)
        if best is None:
            s_rest.append(r)
        else:
            used2.add(best[1])
            pairs.append((r, k_left[best[1]]))
    k_rest = [r for j, r in enumerate(k_left) if j not in used2]
    return pairs, s_rest, k_rest


class Stats:
    """Counts and examples for one record type, summed over captures."""

    def __init__(self):
        self.count = collections.Counter()  # side -> records
        self.matched = 0
        self.only = {"suricata": collections.Counter(), "shrike": collections.Counter()}
        self.fields = collections.Counter()
        self.examples = collections.defaultdict(list)
        self.per_key = collections.defaultdict(collections.Counter)  # (type,event) -> side

    def example(self, cls, text, limit):
        if len(self.examples[cls]) < limit:
            self.examples[cls].append(text)

    def merge(self, o, limit):
        self.count.update(o.count)
        self.matched += o.matched
        for side in self.only:
            self.only[side].update(o.only[side])
        self.fields.update(o.fields)
        for k, v in o.examples.items():
            for e in v:
                self.example(k, e, limit)
        for k, v in o.per_key.items():
            self.per_key[k].update(v)

    def to_json(self):
        return {
            "count": dict(self.count),
            "matched": self.matched,
            "only": {k: dict(v) for k, v in self.only.items()},
            "fields": dict(self.fields),
            "per_key": {" ".join(map(str, k)): dict(v) for k, v in self.per_key.items()},
            "examples": dict(self.examples),
        }


def fmt_tuple(r):
    p, a, ap, b, bp = tuple_of(r)
    return f"{p} {a}:{ap}->{b}:{bp}"


def compare_flows(name, s, k, fuzz, limit):
    st = Stats()
    st.count["suricata"] = len(s)
    st.count["shrike"] = len(k)

    def key(r):
        return tuple_of(r) + (r.get("flow", {}).get("start"),)

    def fkey(r):
        return unordered(tuple_of(r))

    def ftime(r):
        return ts_seconds(r.get("flow", {}).get("start"))

    pairs, s_left, k_left = match(s, k, key, fkey, ftime, fuzz)
    st.matched = len(pairs)
    for a, b in pairs:
        if tuple_of(a) != tuple_of(b):
            st.fields["direction"] += 1
            st.example("direction", f"{name}: {fmt_tuple(a)} vs {fmt_tuple(b)}", limit)
        for label, get in FLOW_FIELDS:
            va, vb = get(a), get(b)
            if va != vb:
                if label in PAIRED:
                    # Which values differ says why (e.g. reason shutdown/timeout: timing).
                    label = f"{label} {va}/{vb}"
                st.fields[label] += 1
                st.example(
                    label, f"{name}: {fmt_tuple(a)} start {ftime_s(a)}: suricata={va!r} shrike={vb!r}", limit
                )
    s_tuples = collections.Counter(fkey(r) for r in s)
    k_tuples = collections.Counter(fkey(r) for r in k)
    for side, left, other in (("suricata", s_left, k_tuples), ("shrike", k_left, s_tuples)):
        for r in left:
            if other.get(fkey(r)):
                cls = "split"
            else:
                cls = f"absent/{r.get('proto')}"
            st.only[side][cls] += 1
            fl = r.get("flow", {})
            st.example(
                f"only-{side}/{cls}",
                f"{name}: {fmt_tuple(r)} start {fl.get('start')} end {fl.get('end')} "
                f"pkts {fl.get('pkts_toserver')}/{fl.get('pkts_toclient')} state {fl.get('state')} "
                f"reason {fl.get('reason')} app {r.get('app_proto')}",
                limit,
            )
    return st


def ftime_s(r):
    return r.get("flow", {}).get("start")


def compare_anomalies(name, s, k, limit):
    st = Stats()
    st.count["suricata"] = len(s)
    st.count["shrike"] = len(k)

    def ev(r):
        a = r.get("anomaly", {})
        return (a.get("type"), a.get("event"))

    for side, recs in (("suricata", s), ("shrike", k)):
        for r in recs:
            st.per_key[ev(r)][side] += 1

    def key(r):
        return (r.get("timestamp"),) + ev(r) + (unordered(tuple_of(r)),)

    pairs, s_left, k_left = match(s, k, key)
    st.matched = len(pairs)
    for side, left in (("suricata", s_left), ("shrike", k_left)):
        for r in left:
            cls = "/".join(str(x) for x in ev(r))
            st.only[side][cls] += 1
            st.example(f"only-{side}/{cls}", f"{name}: {r.get('timestamp')} {fmt_tuple(r)}", limit)
    return st


def compare_alerts(name, s, k, limit):
    st = Stats()
    st.count["suricata"] = len(s)
    st.count["shrike"] = len(k)

    def sid(r):
        return r.get("alert", {}).get("signature_id")

    for side, recs in (("suricata", s), ("shrike", k)):
        for r in recs:
            st.per_key[(sid(r),)][side] += 1

    def key(r):
        return (r.get("timestamp"), sid(r), unordered(tuple_of(r)))

    def fkey(r):
        return (sid(r), unordered(tuple_of(r)))

    def ftime(r):
        return ts_seconds(r.get("timestamp"))

    pairs, s_left, k_left = match(s, k, key, fkey, ftime, 3600.0)
    st.matched = len(pairs)
    for a, b in pairs:
        if a.get("timestamp") != b.get("timestamp"):
            st.fields["timestamp (other packet)"] += 1
            st.example(
                "timestamp (other packet)",
                f"{name}: sid {sid(a)} {fmt_tuple(a)}: suricata={a.get('timestamp')} shrike={b.get('timestamp')}",
                limit,
            )
        for label, get in ALERT_FIELDS:
            va, vb = get(a), get(b)
            if va != vb:
                st.fields[label] += 1
                st.example(label, f"{name}: sid {sid(a)} {fmt_tuple(a)}: suricata={va!r} shrike={vb!r}", limit)
    for side, left in (("suricata", s_left), ("shrike", k_left)):
        for r in left:
            cls = f"sid {sid(r)}"
            st.only[side][cls] += 1
            st.example(f"only-{side}/{cls}", f"{name}: {r.get('timestamp')} {fmt_tuple(r)}", limit)
    return st


def compare_capture(name, sdir, kdir, fuzz, limit):
    s = load(os.path.join(sdir, "eve.json"))
    k = load(os.path.join(kdir, "eve.json"))
    res = {
        "flow": compare_flows(name, s.get("flow", []), k.get("flow", []), fuzz, limit),
        "anomaly": compare_anomalies(name, s.get("anomaly", []), k.get("anomaly", []), limit),
        "alert": compare_alerts(name, s.get("alert", []), k.get("alert", []), limit),
    }
    other = collections.defaultdict(collections.Counter)
    for side, recs in (("suricata", s), ("shrike", k)):
        for et, lst in recs.items():
            if et in ("flow", "anomaly", "alert", "stats"):
                continue
            other[et][side] += len(lst)
    return res, other


def print_stats(title, rtype, st, examples):
    c = st.count
    ds = c.get("suricata", 0)
    dk = c.get("shrike", 0)
    pct = f"{(dk - ds) * 100.0 / ds:+.1f}%" if ds else "n/a"
    print(f"\n== {title}: {rtype} ==")
    print(
        f"  suricata {ds:>8}  shrike {dk:>8}  ({pct})  matched {st.matched:>8}  "
        f"only-suricata {sum(st.only['suricata'].values()):>6}  only-shrike {sum(st.only['shrike'].values()):>6}"
    )
    for side in ("suricata", "shrike"):
        for cls, n in st.only[side].most_common():
            print(f"    only-{side:<9} {cls:<44} {n:>7}")
            for e in st.examples.get(f"only-{side}/{cls}", [])[:examples]:
                print(f"        e.g. {e}")
    if st.fields:
        print("  field differences on matched records:")
        for f, n in st.fields.most_common():
            print(f"    {f:<28} {n:>7}")
            for e in st.examples.get(f, [])[:examples]:
                print(f"        e.g. {e}")
    if st.per_key and rtype == "anomaly":
        print("  per (type, event):   suricata   shrike")
        for kk, v in sorted(st.per_key.items(), key=lambda x: -max(x[1].values())):
            print(f"    {'/'.join(map(str, kk)):<44} {v.get('suricata', 0):>7} {v.get('shrike', 0):>7}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shrike", required=True, help="shrike binary")
    ap.add_argument("--suricata", default="suricata", help="Suricata binary (7.0.10)")
    ap.add_argument("--pcaps", required=True, action="append", help="capture file or directory (repeatable)")
    ap.add_argument("--rules", help="rule file for both engines (default: an empty one)")
    ap.add_argument("--config", default="/etc/suricata/suricata.yaml")
    ap.add_argument("--out", default="bench-out/suricata-diff")
    ap.add_argument("-j", type=int, default=4, help="parallel engine runs")
    ap.add_argument("--fuzz", type=float, default=1.0, help="seconds of start-time slack for flows")
    ap.add_argument("--examples", type=int, default=3, help="examples printed per class")
    ap.add_argument("--reuse", action="store_true", help="keep Suricata output of an identical earlier run")
    ap.add_argument("--only-shrike", action="store_true", help="never run Suricata (needs its earlier output)")
    ap.add_argument(
        "--suricata-socket",
        action="store_true",
        help="one Suricata in unix-socket mode reads every capture (rules loaded once: for large rule sets)",
    )
    a = ap.parse_args()

    shrike = os.path.abspath(a.shrike)
    config = os.path.abspath(a.config)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    if a.rules:
        rules = os.path.abspath(a.rules)
    else:
        # Not /dev/null: shrike refuses world-writable rule files.
        rules = os.path.join(out, "empty.rules")
        with open(rules, "w"):
            pass
        os.chmod(rules, 0o644)

    jobs = []  # (dirlabel, name, pcap)
    for d in a.pcaps:
        label = os.path.basename(os.path.normpath(d))
        for p in find_captures(d):
            rel = os.path.relpath(p, d) if os.path.isdir(d) else os.path.basename(p)
            plain = plain_capture(p, os.path.join(out, "inputs", label))
            jobs.append((label, rel, plain))
    if not jobs:
        sys.exit("no captures found")

    def base_of(job):
        label, rel, _pcap = job
        return os.path.join(out, "runs", label, rel.replace(os.sep, "__"))

    socket_res = {}
    if a.suricata_socket and not a.only_shrike:
        socket_res = suricata_socket_runs(
            a.suricata, config, rules, [(j[2], os.path.join(base_of(j), "suricata")) for j in jobs],
            os.path.join(out, "socket"), a.reuse,
        )

    def run_one(job):
        label, rel, pcap = job
        base = base_of(job)
        res = {}
        for engine, binary in (("suricata", a.suricata), ("shrike", shrike)):
            odir = os.path.join(base, engine)
            if engine == "suricata" and odir in socket_res:
                res[engine] = socket_res[odir]
                continue
            if engine == "suricata" and a.only_shrike:
                if not os.path.exists(os.path.join(odir, "eve.json")):
                    res[engine] = (1, "no earlier Suricata output (--only-shrike)")
                else:
                    res[engine] = (0, "")
                continue
            res[engine] = run_engine(
                engine, binary, config, rules, pcap, odir, a.reuse or (engine == "suricata" and a.only_shrike)
            )
        return job, base, res

    failed = []
    with ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        results = list(ex.map(run_one, jobs))
    per_dir = collections.defaultdict(lambda: collections.defaultdict(Stats))
    other_dir = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    per_capture = []
    for (label, rel, _pcap), base, res in results:
        bad = False
        for engine, (rc, err) in res.items():
            if rc != 0:
                bad = True
                last = (err.strip().splitlines() or [""])[-1][:200]
                failed.append(f"{label}/{rel} {engine}: exit {rc}: {last}")
        if bad:
            # A capture one engine cannot read (a link type Suricata lacks, a corrupt file)
            # is listed, not compared.
            continue
        r, other = compare_capture(
            f"{label}/{rel}", os.path.join(base, "suricata"), os.path.join(base, "shrike"), a.fuzz, a.examples
        )
        if socket_res and sum(r["alert"].only["suricata"].values()) + sum(r["alert"].only["shrike"].values()) > 0:
            # Suricata's unix-socket mode keeps its host and IP-pair tables (thresholds
            # tracked by source or destination, hostbits, xbits) from one capture to the
            # next: a capture whose alerts differ is read again by a Suricata of its own.
            odir = os.path.join(base, "suricata")
            rc, err = run_engine("suricata", a.suricata, config, rules, _pcap, odir, a.reuse)
            if rc != 0:
                last = (err.strip().splitlines() or [""])[-1][:200]
                failed.append(f"{label}/{rel} suricata: exit {rc}: {last}")
                continue
            r, other = compare_capture(f"{label}/{rel}", odir, os.path.join(base, "shrike"), a.fuzz, a.examples)
        for rtype, st in r.items():
            per_dir[label][rtype].merge(st, a.examples)
        for et, c in other.items():
            other_dir[label][et].update(c)
        fl = r["flow"].count
        an = r["anomaly"].count
        per_capture.append(
            {
                "capture": f"{label}/{rel}",
                "flow": dict(fl),
                "anomaly": dict(an),
                "alert": dict(r["alert"].count),
            }
        )

    total = collections.defaultdict(Stats)
    for label in per_dir:
        for rtype, st in per_dir[label].items():
            total[rtype].merge(st, a.examples)
    for label in sorted(per_dir):
        for rtype in ("flow", "anomaly", "alert"):
            print_stats(label, rtype, per_dir[label][rtype], a.examples)
        print(f"\n== {label}: other event types ==   suricata   shrike")
        for et, c in sorted(other_dir[label].items()):
            print(f"    {et:<20} {c.get('suricata', 0):>8} {c.get('shrike', 0):>8}")

    print("\n== summary ==")
    print(f"  {'dir':<10} {'type':<8} {'suricata':>9} {'shrike':>9} {'diff':>7} {'matched':>8}")
    rows = []
    for label in sorted(per_dir) + (["TOTAL"] if len(per_dir) > 1 else []):
        src = total if label == "TOTAL" else per_dir[label]
        for rtype in ("flow", "anomaly", "alert"):
            st = src[rtype]
            ds, dk = st.count.get("suricata", 0), st.count.get("shrike", 0)
            pct = f"{(dk - ds) * 100.0 / ds:+.1f}%" if ds else "n/a"
            print(f"  {label:<10} {rtype:<8} {ds:>9} {dk:>9} {pct:>7} {st.matched:>8}")
            rows.append({"dir": label, "type": rtype, "suricata": ds, "shrike": dk, "matched": st.matched})
    # Captures with the largest flow-count differences: where to look first.
    per_capture.sort(
        key=lambda c: -abs(c["flow"].get("suricata", 0) - c["flow"].get("shrike", 0))
    )
    print("\n  captures with the largest flow-count difference (suricata, shrike):")
    for c in per_capture[:10]:
        print(f"    {c['capture']:<60} {c['flow'].get('suricata', 0):>6} {c['flow'].get('shrike', 0):>6}")
    if failed:
        print(f"\n  {len(failed)} engine runs failed (those captures are not compared):")
        for f in failed[:40]:
            print(f"    {f}")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(
            {
                "summary": rows,
                "per_dir": {
                    label: {rtype: st.to_json() for rtype, st in d.items()} for label, d in per_dir.items()
                },
                "other": {label: {et: dict(c) for et, c in d.items()} for label, d in other_dir.items()},
                "per_capture": per_capture,
                "failed": failed,
            },
            f,
            indent=1,
        )
    sys.exit(0)


if __name__ == "__main__":
    main()
