#!/usr/bin/env python3
"""Compare app-layer frames with Suricata: `frame` records (eve-log frame on) and the
alerts of `frame:` rules, per capture.

usage: frames-diff.py --shrike BIN --rules RULES [--suricata suricata] PCAP...

Both engines run the stock /etc/suricata/suricata.yaml with frame records enabled; the
records are compared as sorted tuples (app_proto, direction, type, id, stream_offset,
length, tx_id, complete, payload); alerts as (sid, frame type, frame id).
"""
import argparse, json, os, subprocess, sys, tempfile, collections

SET = ["--set", "outputs.1.eve-log.types.1.frame.enabled=yes"]


def run(cmd, out):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    recs = []
    p = os.path.join(out, "eve.json")
    if os.path.exists(p):
        for line in open(p):
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


def key_frames(recs):
    c = collections.Counter()
    for r in recs:
        if r.get("event_type") != "frame":
            continue
        f = r.get("frame", {})
        c[(r.get("app_proto"), f.get("direction"), f.get("type"), f.get("id"),
           f.get("stream_offset"), f.get("length"), f.get("tx_id"), f.get("complete"),
           f.get("payload"))] += 1
    return c


def key_alerts(recs):
    c = collections.Counter()
    for r in recs:
        if r.get("event_type") != "alert":
            continue
        f = r.get("frame") or {}
        c[(r["alert"]["signature_id"], f.get("type"), f.get("id"), f.get("length"))] += 1
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shrike", required=True)
    ap.add_argument("--suricata", default="suricata")
    ap.add_argument("--rules", required=True)
    ap.add_argument("pcaps", nargs="+")
    a = ap.parse_args()
    bad = 0
    for pcap in a.pcaps:
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            base = ["-c", "/etc/suricata/suricata.yaml", "-k", "none", "-r", pcap, "-S", a.rules]
            s = run([a.suricata, "--runmode", "single", "-l", d1] + base + SET, d1)
            m = run([a.shrike, "-l", d2] + base + SET, d2)
        for what, f in (("frames", key_frames), ("alerts", key_alerts)):
            ks, km = f(s), f(m)
            if ks != km:
                bad += 1
                print(f"{os.path.basename(pcap)} {what}: suricata {sum(ks.values())} shrike {sum(km.values())}")
                for k in sorted(set(ks) | set(km), key=str)[:400]:
                    if ks[k] != km[k]:
                        print(f"   S{ks[k]} M{km[k]} {k}"[:300])
            else:
                print(f"{os.path.basename(pcap)} {what}: equal ({sum(ks.values())})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
