#!/usr/bin/env python3
"""Flood bench (issue 25): shrike vs Suricata 7 on the hostile captures of gen_floods.py.

For every flood, with the flow table full (shrike `detect.flow.max-flows`, Suricata
`flow.memcap`, both small) and with room (both large), both engines run --runs times,
interleaved, on one worker (`--runmode single`) with the same rules (default: none). Reported
per run: per-core packets/s (packets / (CPU seconds - start-up CPU seconds), medians), the
per-packet cost relative to the HTTP/TLS/DNS mix of the same engine and variant, peak RSS,
and the flow table's emergency-mode counters from the final EVE stats record.

Writes <out>/floods.json and <out>/floods.md (default out: bench-out/floods).
Usage: scripts/bench/floods.py [--binary target/release/shrike] [--runs 3]
       [--floods syn,udp,...] [--variants full,room] [--engines shrike,suricata]
       [--baseline path/to/older/shrike]   (adds the engine 'baseline', interleaved)
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (same directory)

ROOT = bench.ROOT
FLOODS = ["syn", "udp", "frag", "tinyseg", "reuse", "dns", "http", "tls"]
# (shrike --set, suricata --set) per variant.
VARIANTS = {
    "full": (["detect.flow.max-flows=100000"], ["flow.memcap=32mb"]),
    "room": (["detect.flow.max-flows=4000000"], ["flow.memcap=4gb"]),
}


def last_stats(eve):
    """The flow counters of the last EVE stats record (read from the file's tail)."""
    try:
        with open(eve, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - (4 << 20)))
            tail = f.read()
    except OSError:
        return {}
    for line in reversed(tail.splitlines()):
        if b'"event_type":"stats"' in line:
            try:
                flow = json.loads(line)["stats"].get("flow", {})
            except (ValueError, KeyError):
                return {}
            return {k: flow.get(k) for k in ("total", "emerg_mode_entered", "emerg_mode_over",
                                               "memcap", "get_used", "get_used_failed", "active")}
    return {}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench-out" / "floods"))
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "shrike"))
    ap.add_argument("--floods", default=",".join(FLOODS))
    ap.add_argument("--variants", default="full,room")
    ap.add_argument("--engines", default="shrike,suricata")
    ap.add_argument("--baseline", help="a second shrike binary, run as the engine 'baseline'")
    ap.add_argument("--rules", default="none")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", default="1.0", help="capture size factor for gen_floods.py")
    ap.add_argument("--mix-mb", default="30", help="size of the reference mix capture")
    a = ap.parse_args()

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    floods = a.floods.split(",")
    subprocess.run([sys.executable, str(Path(__file__).with_name("gen_floods.py")), "--out", str(out),
                    "--only", ",".join(floods), "--scale", a.scale], check=True)
    mix = out / "mix.pcap"
    if not mix.exists():
        subprocess.run([sys.executable, str(bench.GEN), "--mode", "mix", "--size-mb", a.mix_mb,
                        "--seed", "2", "-o", str(mix)], check=True, stdout=subprocess.DEVNULL)
    tiny = out / "tiny.pcap"
    if not tiny.exists():
        bench.truncate_pcap(mix, tiny, 20)
    rules = bench.make_rules(out, a.rules)
    engines = a.engines.split(",")
    if a.baseline:
        engines.insert(1 if engines and engines[0] == "shrike" else 0, "baseline")
    if "suricata" in engines and not shutil.which("suricata"):
        bench.log("suricata not found; continuing without it")
        engines.remove("suricata")
    scratch = Path(tempfile.mkdtemp(prefix="shrike-floods-"))
    rows = []
    try:
        for variant in a.variants.split(","):
            s_set, q_set = VARIANTS[variant]

            def cmd(engine, pcap, od, s_set=s_set, q_set=q_set):
                if engine in ("shrike", "baseline"):
                    binary = a.baseline if engine == "baseline" else a.binary
                    c = bench.shrike_cmd(binary, pcap, rules, od, 1, "single")
                    for kv in s_set:
                        c += ["--set", kv]
                    return c
                c = bench.suricata_cmd(pcap, rules, od, 1, "")
                for kv in q_set:
                    c += ["--set", kv]
                return c

            starts = {e: [] for e in engines}
            for _ in range(a.runs):
                for e in engines:
                    starts[e].append(bench.run_once(cmd(e, tiny, scratch / "s"), scratch / "s"))
            for name in ["mix"] + floods:
                pcap = out / f"{name}.pcap"
                pkts, nbytes = bench.pcap_stats(pcap)
                runs = {e: [] for e in engines}
                stats = {}
                for r in range(a.runs):
                    for e in engines:
                        res = bench.run_once(cmd(e, pcap, scratch / "o"), scratch / "o")
                        stats[e] = last_stats(scratch / "o" / "eve.json")
                        bench.log(f"{e:9} {variant:4} {name:8} run {r + 1}: wall {res['wall']:.2f}s "
                                  f"cpu {res['cpu']:.2f}s rss {res['rss_mb']:.0f}MB rc {res['rc']} {stats[e]}")
                        runs[e].append(res)
                for e in engines:
                    start_cpu = bench.med([x["cpu"] for x in starts[e]])
                    proc = max(1e-6, bench.med([x["cpu"] for x in runs[e]]) - start_cpu)
                    rows.append({
                        "engine": e, "variant": variant, "flood": name, "packets": pkts, "bytes": nbytes,
                        "cpu_s_runs": [round(x["cpu"], 3) for x in runs[e]],
                        "startup_cpu_s": round(start_cpu, 3),
                        "pps_per_core": pkts / proc,
                        "ns_per_pkt": proc / pkts * 1e9,
                        "peak_rss_mb": bench.med([x["rss_mb"] for x in runs[e]]),
                        "startup_rss_mb": bench.med([x["rss_mb"] for x in starts[e]]),
                        "failed_runs": sum(1 for x in runs[e] if x["rc"] != 0),
                        "flow": stats.get(e, {}),
                    })
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for r in rows:
        base = next((x for x in rows if x["engine"] == r["engine"] and x["variant"] == r["variant"]
                     and x["flood"] == "mix"), None)
        r["x_mix"] = r["ns_per_pkt"] / base["ns_per_pkt"] if base else None
    cmdline = "scripts/bench/floods.py " + " ".join(sys.argv[1:])
    (out / "floods.json").write_text(json.dumps({"command": cmdline, "rows": rows}, indent=1))
    lines = [f"`{cmdline}`", "",
             "| variant | flood | packets | engine | pkts/s per core | ns/pkt | × mix | peak RSS MB (start-up) | emerg entered/over | flows total / get_used / get_used_failed | runs CPU s |",
             "|---|---|---:|---|---:|---:|---:|---:|---|---|---|"]
    for r in rows:
        f = r["flow"]
        lines.append(
            f"| {r['variant']} | {r['flood']} | {r['packets']} | {r['engine']} | {r['pps_per_core']:,.0f} | "
            f"{r['ns_per_pkt']:.0f} | {r['x_mix']:.2f} | {r['peak_rss_mb']:.0f} ({r['startup_rss_mb']:.0f}) | "
            f"{f.get('emerg_mode_entered')}/{f.get('emerg_mode_over')} | "
            f"{f.get('total')} / {f.get('get_used')} / {f.get('get_used_failed')} | "
            f"{' '.join(str(c) for c in r['cpu_s_runs'])}{' FAILED' if r['failed_runs'] else ''} |")
    (out / "floods.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
