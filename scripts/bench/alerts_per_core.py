#!/usr/bin/env python3
"""Issue 5: alerts per second per core, shrike vs Suricata 7, in one interleaved run.

Input: bench-out/inputs/udp64.pcap (1,200,000 64-byte-payload UDP packets, made by bench.py).
Rule: `alert udp any any -> any any (msg:"every"; dsize:>0; sid:1;)`, so every packet alerts.
Both engines get the same suricata.yaml: EVE to a regular file with `buffer-size: 64kb`,
`heartbeat.output-flush-interval: 1`, event types alert + flow (shrike writes flow records in any
case), no fast.log, no stats. Per-core rate = alerts / (CPU seconds user+sys of the run minus the
CPU seconds of a 20-packet start-up run), medians of --runs runs.

Usage: python3 scripts/bench/alerts_per_core.py [--runs 3] [--out bench-out/alerts]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

YAML = """%YAML 1.1
---
default-log-dir: /tmp
stats:
  enabled: no
outputs:
  - eve-log:
      enabled: yes
      filetype: regular
      filename: eve.json
      buffer-size: 64kb
      types:
        - alert
        - flow
  - fast:
      enabled: no
  - stats:
      enabled: no
heartbeat:
  output-flush-interval: 1
logging:
  default-log-level: notice
  outputs:
    - console:
        enabled: yes
"""
RULE = 'alert udp any any -> any any (msg:"every"; dsize:>0; sid:1;)\n'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(bench.ROOT / "bench-out" / "alerts"))
    ap.add_argument("--binary", default=str(bench.ROOT / "target" / "dist" / "shrike"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    inputs, tiny = bench.make_inputs(bench.ROOT / "bench-out", False)
    pcap = inputs["udp64"]
    pkts, _ = bench.pcap_stats(pcap)
    yaml = out / "alert-eve.yaml"
    yaml.write_text(YAML)
    rules = out / "every.rules"
    rules.write_text(RULE)
    engines = {
        "shrike-single": lambda p, od: [a.binary, "-q", "-c", str(yaml), "-k", "none", "-r", str(p),
                                        "-l", str(od), "-S", str(rules), "--runmode", "single"],
        "shrike-1w": lambda p, od: [a.binary, "-q", "-c", str(yaml), "-k", "none", "-r", str(p),
                                    "-l", str(od), "-S", str(rules), "--workers", "1"],
        "suricata-single": lambda p, od: ["suricata", "-c", str(yaml), "-k", "none", "-r", str(p),
                                          "-l", str(od), "-S", str(rules), "--runmode", "single"],
    }
    scratch = out / "scratch"
    starts = {e: [] for e in engines}
    runs = {e: [] for e in engines}
    for _ in range(a.runs):
        for e, c in engines.items():
            starts[e].append(bench.run_once(c(tiny, scratch), scratch))
    for r in range(a.runs):
        for e, c in engines.items():
            res = bench.run_once(c(pcap, scratch), scratch)
            bench.log(f"{e:16} run {r + 1}: wall {res['wall']:.2f}s cpu {res['cpu']:.2f}s "
                      f"alerts {res['alerts']} rss {res['rss_mb']:.0f}MB")
            runs[e].append(res)
    rows = []
    for e in engines:
        start_cpu = bench.med([x["cpu"] for x in starts[e]])
        cpu = bench.med([x["cpu"] for x in runs[e]])
        alerts = int(bench.med([x["alerts"] for x in runs[e]]))
        rows.append({"engine": e, "packets": pkts, "alerts": alerts, "cpu_s": cpu,
                     "cpu_s_runs": [round(x["cpu"], 3) for x in runs[e]],
                     "wall_s": bench.med([x["wall"] for x in runs[e]]),
                     "startup_cpu_s": start_cpu,
                     "alerts_per_s_per_core": alerts / max(1e-6, cpu - start_cpu)})
    base = next(r for r in rows if r["engine"] == "suricata-single")["alerts_per_s_per_core"]
    lines = ["| engine | alerts | CPU s (runs) | start-up CPU s | alerts/s per core | ratio |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['engine']} | {r['alerts']:,} | {r['cpu_s']:.2f} ({', '.join(map(str, r['cpu_s_runs']))}) | "
                     f"{r['startup_cpu_s']:.2f} | {r['alerts_per_s_per_core']:,.0f} | "
                     f"{r['alerts_per_s_per_core'] / base:.2f}x |")
    md = "\n".join(lines)
    print(md)
    (out / "alerts.json").write_text(json.dumps(rows, indent=1))
    (out / "alerts.md").write_text(md + "\n")


if __name__ == "__main__":
    main()
