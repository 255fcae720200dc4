#!/usr/bin/env python3
"""Compare shrike's alerts with Suricata 7's on a set of pcaps with the same rules.

Both engines read every pcap of the given folders (Suricata once per folder, in pcap-file
directory mode with `pcap_filename` logged; shrike once per pcap), with `-k none`. Alerts
are reduced to (signature_id, flow) pairs, the flow being the protocol and the two
endpoints in sorted order, so direction does not matter. Prints:

  * how many of Suricata's pairs shrike also has, and how many of shrike's Suricata has;
  * the differences grouped by sid (count of pairs only one side has, and examples).

Usage:
  scripts/compare-alerts.py [--rules FILE ...] [--shrike BIN] [--limit N] [--json OUT] DIR...

Defaults: the ET Open rules in ../shared/corpus/rules/et-open, the pcap folders
../shared/corpus/pcaps/ndpi and ../shared/corpus/pcaps/zeek, target/release/shrike.
"""

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(REPO, "..", "shared")
PCAP_EXT = (".pcap", ".pcapng", ".cap")


def flow_key(r):
    proto = r.get("proto", "")
    a = (r.get("src_ip", ""), r.get("src_port", 0))
    b = (r.get("dest_ip", ""), r.get("dest_port", 0))
    lo, hi = sorted([a, b])
    return (proto, lo[0], lo[1], hi[0], hi[1])


def read_alerts(path):
    out = set()
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("event_type") != "alert":
                continue
            # Suricata's directory mode names the file being read when the alert is
            # logged, not the packet's (flow-timeout alerts get a later file): the pcap
            # is not part of the key, the flow's 5-tuple is.
            out.add(("", r["alert"]["signature_id"]) + flow_key(r))
    return out


def run_suricata(folder, pcaps, rules, work):
    """One Suricata run over a folder of (symlinked) pcaps."""
    d = tempfile.mkdtemp(prefix="suri-in-", dir=work)
    for p in pcaps:
        # Suricata's directory mode skips symbolic links: hard link, else copy.
        dst = os.path.join(d, os.path.basename(p))
        try:
            os.link(os.path.abspath(p), dst)
        except OSError:
            shutil.copyfile(p, dst)
    logd = tempfile.mkdtemp(prefix="suri-out-", dir=work)
    cmd = [
        "suricata", "-k", "none", "-r", d, "-l", logd, "-S", rules,
        "--set", "outputs.1.eve-log.pcap-file=true",
        "--set", "pcap-file.recursive=false",
    ]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return read_alerts(os.path.join(logd, "eve.json"))


def run_shrike(binary, pcap, rules, work):
    logd = tempfile.mkdtemp(prefix="shrike-out-", dir=work)
    cmd = [binary, "-k", "none", "-r", pcap, "-l", logd, "-S", rules]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        # Retry without -k (older builds may not take it).
        cmd = [binary, "-r", pcap, "-l", logd, "-S", rules]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    a = read_alerts(os.path.join(logd, "eve.json"))
    shutil.rmtree(logd, ignore_errors=True)
    return a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--rules", nargs="*", help="rule files (default: ET Open)")
    ap.add_argument("--shrike", default=os.path.join(REPO, "target", "release", "shrike"))
    ap.add_argument("--limit", type=int, default=0, help="at most N pcaps per folder")
    ap.add_argument("-j", type=int, default=2, help="parallel shrike runs")
    ap.add_argument("--json", help="write the pairs and differences here")
    ap.add_argument("--examples", type=int, default=2)
    a = ap.parse_args()

    dirs = a.dirs or [os.path.join(SHARED, "corpus", "pcaps", x) for x in ("ndpi", "zeek")]
    rule_files = a.rules or sorted(glob.glob(os.path.join(SHARED, "corpus", "rules", "et-open", "*.rules")))
    work = tempfile.mkdtemp(prefix="compare-alerts-")
    rules = os.path.join(work, "all.rules")
    with open(rules, "w") as out:
        for rf in rule_files:
            with open(rf, errors="replace") as f:
                out.write(f.read())
                out.write("\n")

    suri, shr = set(), set()
    for d in dirs:
        pcaps = sorted(p for p in glob.glob(os.path.join(d, "**", "*"), recursive=True)
                       if p.lower().endswith(PCAP_EXT) and os.path.isfile(p))
        if a.limit:
            pcaps = pcaps[: a.limit]
        # Base names must be unique within a Suricata run.
        seen = set()
        pcaps = [p for p in pcaps if not (os.path.basename(p) in seen or seen.add(os.path.basename(p)))]
        print(f"{d}: {len(pcaps)} pcaps", file=sys.stderr)
        suri |= run_suricata(d, pcaps, rules, work)
        with ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
            for s in ex.map(lambda p: run_shrike(a.shrike, p, rules, work), pcaps):
                shr |= s

    both = suri & shr
    only_s = suri - shr
    only_k = shr - suri
    pct = lambda n, d: 100.0 * n / d if d else 100.0
    print(f"Suricata pairs: {len(suri)}; shrike pairs: {len(shr)}; common: {len(both)}")
    print(f"shrike finds {pct(len(both), len(suri)):.1f}% of Suricata's (signature, flow) pairs")
    print(f"{pct(len(both), len(shr)):.1f}% of shrike's pairs are also Suricata's")

    def group(pairs):
        g = collections.defaultdict(list)
        for p in pairs:
            g[p[1]].append(p)
        return sorted(g.items(), key=lambda kv: -len(kv[1]))

    for title, pairs in (("Only Suricata", only_s), ("Only shrike", only_k)):
        print(f"\n{title}: {len(pairs)} pairs")
        for sid, ps in group(pairs):
            ex = "; ".join(f"{p[0]} {p[2]} {p[3]}:{p[4]}-{p[5]}:{p[6]}" for p in sorted(ps)[: a.examples])
            print(f"  sid {sid}: {len(ps)}  e.g. {ex}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({
                "suricata": len(suri), "shrike": len(shr), "common": len(both),
                "only_suricata": sorted(only_s), "only_shrike": sorted(only_k),
            }, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
