#!/usr/bin/env python3
"""shrike vs Suricata 7, side by side in one run.

Generates the inputs (../shared/tools/gen-traffic.py: HTTP/TLS/DNS mix, 64-byte and
1460-byte UDP; a merge of ../shared/corpus/pcaps), runs both engines on the same inputs and
rules several times, and reports per-core packets/s and Gbit/s, CPU seconds, peak RSS,
start-up time and alert counts (medians) with the shrike/Suricata ratio.

Per-core rates divide by the CPU time spent processing: the CPU seconds (user+sys, all
threads) of the run minus the median CPU seconds of a start-up run on a 20-packet capture
with the same rules. That makes a 24 s rule-loading start-up not count as packet work, and
makes a two-thread run pay for both threads.

Protocol inputs (scripts/bench/gen_proto.py; issues 18-22): windows, mail, quic (corpus captures
of those protocols repeated as distinct flows), ics (generated Modbus/DNP3/MQTT sessions) and
downloads (generated HTTP downloads). Both engines read them with the same configuration: the
stock suricata.yaml (`-c`), with Modbus and DNP3 enabled for ics, and for downloads `force-magic`,
`force-hash: [md5, sha256]`, no response-body limit and no stream depth (every byte of every file
hashed and typed); the start-up run uses the same configuration.

Writes <out>/results.json, <out>/results.md and, when matplotlib is present, PNG charts.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_proto  # noqa: E402
SHARED = ROOT.parent / "shared"
GEN = SHARED / "tools" / "gen-traffic.py"
ET_OPEN = SHARED / "corpus" / "rules" / "et-open"
SURICATA_YAML = Path("/etc/suricata/suricata.yaml")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- inputs

def pcap_stats(path):
    """(packets, captured frame bytes) of a classic pcap file. Captured (not original) lengths:
    some corpus captures are cut by a small snaplen, and only captured bytes are processed."""
    pkts = nbytes = 0
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            _, _, incl, orig = rec.unpack(h)
            f.seek(incl, 1)
            pkts += 1
            nbytes += incl
    return pkts, nbytes


def truncate_pcap(src, dst, count):
    with open(src, "rb") as f, open(dst, "wb") as o:
        hdr = f.read(24)
        o.write(hdr)
        magic = struct.unpack("<I", hdr[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        rec = struct.Struct(endian + "IIII")
        for _ in range(count):
            h = f.read(16)
            if len(h) < 16:
                break
            incl = rec.unpack(h)[2]
            o.write(h + f.read(incl))


def merge_corpus(dst):
    """Concatenate the Ethernet pcaps of the corpus into one pcap (pcapng and other link
    types are left out: one classic pcap has one link type)."""
    files = sorted(p for p in (SHARED / "corpus" / "pcaps").rglob("*") if p.is_file())
    with open(dst, "wb") as o:
        o.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        n = 0
        for p in files:
            try:
                with open(p, "rb") as f:
                    hdr = f.read(24)
                    if len(hdr) < 24:
                        continue
                    magic = struct.unpack("<I", hdr[:4])[0]
                    if magic == 0xA1B2C3D4:
                        e = "<"
                    elif magic == 0xD4C3B2A1:
                        e = ">"
                    else:
                        continue
                    if struct.unpack(e + "I", hdr[20:24])[0] & 0x0FFFFFFF != 1:
                        continue
                    rec = struct.Struct(e + "IIII")
                    while True:
                        h = f.read(16)
                        if len(h) < 16:
                            break
                        s, us, incl, orig = rec.unpack(h)
                        data = f.read(incl)
                        if len(data) < incl or incl > 262144:
                            break
                        o.write(struct.pack("<IIII", s, us, incl, orig) + data)
                        n += 1
            except OSError:
                continue
    return n


def make_inputs(out, quick, only=None):
    """The bench inputs (only those named in `only`, plus mix for the tiny start-up input)."""
    inp = out / "inputs"
    inp.mkdir(parents=True, exist_ok=True)
    size = "30" if quick else "200"
    specs = {
        "mix": ["--mode", "mix", "--size-mb", size, "--seed", "2"],
        "udp64": ["--mode", "udp", "--udp-payload", "64", "--count", "300000" if quick else "1200000"],
        "udp1460": ["--mode", "udp", "--udp-payload", "1460", "--size-mb", size],
    }
    paths = {}
    for name, args in specs.items():
        p = inp / f"{name}.pcap"
        if only is not None and name not in only and name != "mix":
            continue
        if not p.exists():
            log(f"generating {p}")
            subprocess.run([sys.executable, str(GEN), *args, "-o", str(p)], check=True,
                           stdout=subprocess.DEVNULL)
        paths[name] = p
    for name in gen_proto.INPUTS:
        p = inp / f"{name}.pcap"
        if only is not None and name not in only:
            continue
        if not p.exists():
            log(f"generating {p}")
            log("  " + gen_proto.make(name, p, 30 if quick else 150))
        paths[name] = p
    corpus = inp / "corpus.pcap"
    wanted = only is None or "corpus" in only
    if wanted and not corpus.exists() and (SHARED / "corpus" / "pcaps").is_dir():
        log(f"merging corpus into {corpus}")
        merge_corpus(corpus)
    if corpus.exists():
        paths["corpus"] = corpus
    tiny = inp / "tiny.pcap"
    if not tiny.exists():
        truncate_pcap(paths["mix"], tiny, 20)
    return paths, tiny


def make_rules(out, which):
    if which == "none":
        p = out / "empty.rules"
        p.write_text("")
        return p
    if which == "etopen":
        p = out / "et-open-all.rules"
        if not p.exists():
            with open(p, "w") as o:
                for f in sorted(ET_OPEN.glob("*.rules")):
                    o.write(f.read_text(errors="replace"))
                    o.write("\n")
        return p
    if which.startswith("et") and which[2:].isdigit():
        # The first N rules of the concatenated ET Open set (for the throughput vs rules chart).
        n = int(which[2:])
        p = out / f"et-open-{n}.rules"
        if not p.exists():
            kept = []
            for line in make_rules(out, "etopen").read_text(errors="replace").splitlines():
                if len(kept) >= n:
                    break
                if line.strip() and not line.lstrip().startswith("#"):
                    kept.append(line)
            p.write_text("\n".join(kept) + "\n")
        return p
    return Path(which)


def rule_count(path):
    """Rule lines (not blank, not comments) in a rules file."""
    try:
        return sum(1 for line in Path(path).read_text(errors="replace").splitlines()
                   if line.strip() and not line.lstrip().startswith("#"))
    except OSError:
        return 0


def input_config(out, name):
    """(config file, --set list) both engines use for input NAME; (None, []) for the defaults."""
    if name not in gen_proto.INPUTS:
        return None, []
    if name == "ics":
        return SURICATA_YAML, ["app-layer.protocols.modbus.enabled=yes",
                               "app-layer.protocols.dnp3.enabled=yes"]
    if name == "downloads":
        p = out / "suricata-files.yaml"
        text = SURICATA_YAML.read_text()
        text = text.replace("force-magic: no   # force logging magic on all logged files",
                            "force-magic: yes", 1)
        text = text.replace("#force-hash: [md5]", "force-hash: [md5, sha256]", 1)
        if "force-magic: yes" not in text or "force-hash: [md5, sha256]" not in text:
            raise SystemExit(f"{SURICATA_YAML}: no eve-log files force-magic/force-hash lines to turn on")
        p.write_text(text)
        return p, ["app-layer.protocols.http.libhtp.default-config.response-body-limit=0",
                   "stream.reassembly.depth=0"]
    return SURICATA_YAML, []


def with_config(cmd, cfg):
    path, sets = cfg
    if path is None:
        return cmd
    extra = ["-c", str(path)]
    for s in sets:
        extra += ["--set", s]
    if cmd[0] == "suricata":
        # suricata_cmd already names the stock config: replace it.
        i = cmd.index("-c")
        return cmd[:i] + extra + cmd[i + 2:]
    return cmd[:1] + extra + cmd[1:]


# ---------------------------------------------------------------- engines

def shrike_cmd(binary, pcap, rules, outdir, workers, mode):
    cmd = [str(binary), "-q", "-k", "none", "-r", str(pcap), "-l", str(outdir), "-S", str(rules)]
    if mode == "single":
        cmd += ["--runmode", "single"]
    else:
        cmd += ["--workers", str(workers)]
    return cmd


def suricata_cmd(pcap, rules, outdir, workers, mode):
    cmd = ["suricata", "-c", str(SURICATA_YAML), "-k", "none", "-r", str(pcap), "-l", str(outdir),
           "-S", str(rules), "--set", "classification-file=" + str(ET_OPEN / "classification.config")]
    # ET Open ships no reference.config: keep the system one (a missing file is an error).
    if (ET_OPEN / "reference.config").exists():
        cmd += ["--set", "reference-config-file=" + str(ET_OPEN / "reference.config")]
    if workers == 1:
        cmd += ["--runmode", "single"]
    else:
        cmd += ["--runmode", "autofp", "--set", "threading.set-cpu-affinity=no",
                "--set", f"threading.detect-thread-ratio={workers / max(1, os.cpu_count()):.2f}"]
    return cmd


def run_once(cmd, outdir):
    if outdir.exists():
        shutil.rmtree(outdir)
    outdir.mkdir(parents=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # /usr/bin/time -f %M gives this child's own peak RSS (RUSAGE_CHILDREN keeps the max of all).
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss_kb = 0
    for line in p.stderr.splitlines():
        if line.startswith("MAXRSS "):
            rss_kb = int(line.split()[1])
    if p.returncode != 0:
        log(f"  command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    alerts = 0
    eve = outdir / "eve.json"
    if eve.exists():
        with open(eve, "rb") as f:
            for line in f:
                if b'"event_type":"alert"' in line:
                    alerts += 1
    return {"wall": wall, "cpu": cpu, "rss_mb": rss_kb / 1024, "alerts": alerts, "rc": p.returncode}


def med(values):
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench-out"))
    ap.add_argument("--binary", default=str(ROOT / "target" / "dist" / "shrike"))
    ap.add_argument("--baseline", help="a second shrike binary (e.g. main's), run as the engine "
                    "'baseline-single' (--runmode single), interleaved with the others")
    ap.add_argument("--inputs", default="mix,udp64,udp1460,corpus")
    ap.add_argument("--rules", default="none,etopen", help="none, etopen, or rule file paths")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--engines", default="shrike,shrike-single,suricata",
                    help="shrike (dispatch: reader + N workers), shrike-single (--runmode single), suricata")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller inputs")
    ap.add_argument("--append", action="store_true",
                    help="merge these rows into <out>/results.json instead of replacing it")
    a = ap.parse_args()

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    inputs, tiny = make_inputs(out, a.quick, set(a.inputs.split(",")))
    chosen = [i for i in a.inputs.split(",") if i in inputs]
    engines = a.engines.split(",")
    if a.baseline and "baseline-single" not in engines:
        engines.append("baseline-single")
    if "suricata" in engines and not shutil.which("suricata"):
        log("suricata not found: run ../shared/tools/install-suricata.sh; continuing without it")
        engines.remove("suricata")
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="shrike-bench-"))
    try:
        for rules_name in a.rules.split(","):
            rules = make_rules(out, rules_name)
            nrules = rule_count(rules)
            for workers in [int(w) for w in a.workers.split(",")]:
                group = [e for e in engines
                         if not (e in ("shrike-single", "baseline-single") and workers != 1)]

                def cmd(engine, pcap, od, cfg=(None, []), workers=workers):
                    if engine == "baseline-single":
                        c = shrike_cmd(a.baseline, pcap, rules, od, workers, "single")
                    elif engine.startswith("shrike"):
                        mode = "single" if engine == "shrike-single" else "dispatch"
                        c = shrike_cmd(a.binary, pcap, rules, od, workers, mode)
                    else:
                        c = suricata_cmd(pcap, rules, od, workers, "")
                    return with_config(c, cfg)

                # Runs are interleaved (run r of every engine before run r + 1) so that load
                # from other processes on a shared machine spreads over all engines alike.
                # One start-up measure per configuration the chosen inputs use.
                all_starts = {}
                for name in chosen:
                    cfg = input_config(out, name)
                    key = (str(cfg[0]), tuple(cfg[1]))
                    if key in all_starts:
                        continue
                    all_starts[key] = {e: [] for e in group}
                    for _ in range(a.runs):
                        for e in group:
                            all_starts[key][e].append(
                                run_once(cmd(e, tiny, scratch / "s", cfg), scratch / "s"))
                for name in chosen:
                    cfg = input_config(out, name)
                    starts = all_starts[(str(cfg[0]), tuple(cfg[1]))]
                    pcap = inputs[name]
                    pkts, nbytes = pcap_stats(pcap)
                    runs = {e: [] for e in group}
                    for r in range(a.runs):
                        for e in group:
                            res = run_once(cmd(e, pcap, scratch / "o", cfg), scratch / "o")
                            log(f"{e:13} w={workers} rules={rules_name:6} {name:8} run {r + 1}: "
                                f"wall {res['wall']:.2f}s cpu {res['cpu']:.2f}s rss {res['rss_mb']:.0f}MB "
                                f"alerts {res['alerts']}")
                            runs[e].append(res)
                    for e in group:
                        start_cpu = med([x["cpu"] for x in starts[e]])
                        rs = runs[e]
                        proc_cpu = max(1e-6, med([x["cpu"] for x in rs]) - start_cpu)
                        rows.append({
                            "engine": e, "workers": workers, "rules": rules_name,
                            "config": " ".join(with_config(["x"], cfg)[1:]),
                            "rule_count": nrules, "input": name,
                            "packets": pkts, "bytes": nbytes,
                            "wall_s": med([x["wall"] for x in rs]),
                            "cpu_s": med([x["cpu"] for x in rs]),
                            "cpu_s_runs": [round(x["cpu"], 3) for x in rs],
                            "startup_wall_s": med([x["wall"] for x in starts[e]]),
                            "startup_cpu_s": start_cpu,
                            "pps_per_core": pkts / proc_cpu,
                            "gbps_per_core": nbytes * 8 / proc_cpu / 1e9,
                            "peak_rss_mb": med([x["rss_mb"] for x in rs]),
                            "alerts": int(med([x["alerts"] for x in rs])),
                            "failed_runs": sum(1 for x in rs if x["rc"] != 0),
                            "runs": len(rs),
                        })
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    if a.append and (out / "results.json").exists():
        old = json.loads((out / "results.json").read_text())
        keys = {(r["engine"], r["workers"], r["rules"], r["input"]) for r in rows}
        kept = [r for r in old["rows"] if (r["engine"], r["workers"], r["rules"], r["input"]) not in keys]
        rows = kept + rows
        a.commands = old.get("commands", [old.get("command", "")]) + [command_line()]
    else:
        a.commands = [command_line()]
    write_reports(out, rows, a)


def command_line():
    return "scripts/bench/run.sh " + " ".join(sys.argv[1:])


def write_reports(out, rows, a):
    rows = sorted(rows, key=lambda r: (r.get("rule_count", 0) if r["rules"] != "none" else -1,
                                       r["workers"], r["input"], r["engine"]))
    by = {(r["engine"], r["workers"], r["rules"], r["input"]): r for r in rows}
    lines = [
        "| input | rules | workers | engine | pkts/s per core | Gbit/s per core | CPU s | peak RSS MB | start-up s | alerts | ratio pkts/s per core | ratio RSS | ratio start-up |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        other = by.get(("suricata", r["workers"], r["rules"], r["input"]))
        ratio = rss = start = ""
        if r["engine"].startswith("shrike") and other and other["pps_per_core"] > 0:
            ratio = f"{r['pps_per_core'] / other['pps_per_core']:.2f}x"
            if r["peak_rss_mb"] > 0:
                rss = f"1/{other['peak_rss_mb'] / r['peak_rss_mb']:.1f}"
            if r["startup_wall_s"] > 0:
                start = f"1/{other['startup_wall_s'] / r['startup_wall_s']:.0f}"
        rname = r["rules"] if r["rules"] in ("none", "etopen") else r["rules"]
        rname += f" ({r.get('rule_count', 0):,})" if r["rules"] != "none" else ""
        lines.append(
            f"| {r['input']} | {rname} | {r['workers']} | {r['engine']} | {r['pps_per_core']:,.0f} | "
            f"{r['gbps_per_core']:.3f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['startup_wall_s']:.2f} | "
            f"{r['alerts']} | {ratio} | {rss} | {start} |")
    cmds = "\n".join(f"    {c}" for c in a.commands)
    md = (f"# shrike vs Suricata: benchmark results\n\nCommands (in this order, `--append` merges):\n\n{cmds}\n\n"
          f"Medians of {a.runs} runs, engines interleaved run by run. Per-core rates = packets / (CPU "
          f"seconds, user+sys of all threads, of the run minus the CPU seconds of a 20-packet start-up "
          f"run with the same rules). Start-up = wall time of that 20-packet run. Ratios: shrike / "
          f"Suricata for pkts/s per core; RSS and start-up as a fraction of Suricata's.\n\n"
          + "\n".join(lines) + "\n")
    (out / "results.md").write_text(md)
    (out / "results.json").write_text(json.dumps({"commands": a.commands, "rows": rows}, indent=1))
    print(md)
    charts(out, rows)


def charts(out, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not installed: no charts")
        return
    for rules in sorted({r["rules"] for r in rows}):
        if len({r["workers"] for r in rows if r["rules"] == rules}) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        for engine in sorted({r["engine"] for r in rows}):
            for inp in sorted({r["input"] for r in rows}):
                pts = sorted((r["workers"], r["pps_per_core"] * r["workers"]) for r in rows
                             if r["engine"] == engine and r["input"] == inp and r["rules"] == rules)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], marker="o",
                            label=f"{engine} {inp}")
        ax.set_xlabel("workers (suricata: 1 = --runmode single, 2 = autofp with 2 detect threads)")
        ax.set_ylabel("Mpps (per-core rate x workers)")
        ax.set_xticks(sorted({r["workers"] for r in rows if r["rules"] == rules}))
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"throughput vs workers, rules: {rules}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"throughput-{rules}.png", dpi=110)
        plt.close(fig)
    # Throughput vs number of rules, one worker, per input the sweep covers.
    for inp in sorted({r["input"] for r in rows}):
        sel = [r for r in rows if r["input"] == inp and r["workers"] == 1]
        if len({r["rules"] for r in sel}) < 3:
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        for engine in sorted({r["engine"] for r in sel}):
            pts = sorted((r.get("rule_count", 0), r["pps_per_core"]) for r in sel if r["engine"] == engine)
            ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], marker="o", label=engine)
        ax.set_xscale("symlog", linthresh=1000)
        ax.set_yscale("log")
        ax.set_xlabel("rules loaded (first N of ET Open)")
        ax.set_ylabel("kpps per core (CPU-second based)")
        ax.set_title(f"throughput vs rules, input: {inp}, 1 worker")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / f"rules-{inp}.png", dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
