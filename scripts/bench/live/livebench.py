#!/usr/bin/env python3
"""Helpers for scripts/bench/live.sh (standard library only).

    livebench.py pcap-info PCAP                 -> "packets frame_bytes max_frame rewritable"
    livebench.py trafgen-cfg [--unique] PCAP OUT.cfg
                                                writes a netsniff-ng trafgen config that sends
                                                the capture's frames in order; --unique gives
                                                10/8 and fd00::/8 hosts new addresses on each
                                                pass (see unique_plan)
    livebench.py frames [--unique] PCAP OUT.bin the same for pace.c (scripts/bench/live/pace.c)
    livebench.py counters ENGINE LOGDIR STDOUT  -> the engine's final counters, one line of
                                                key=value (see `counters`)
    livebench.py report RECORDS.jsonl MD JSON   prints the result table, writes markdown + JSON

The counters come from the *last* EVE `stats` record the engine wrote (both shrike and
Suricata 7 write one at shutdown): `decoder.pkts` is what the engine inspected;
`capture.kernel_packets` and `capture.kernel_drops` are the AF_PACKET socket's counters
(kernel_packets includes the drops, as in Suricata). Without a stats record the engine's exit
line is used (Suricata: "device: v0: packets: N, drops: M"; shrike: "shrike: N packets").
"""
import json
import os
import re
import struct
import sys


def pcap_frames(path):
    """Yields the frames of a classic pcap file (either byte order, µs or ns)."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise ValueError(f"{path}: not a pcap file")
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            endian = ">"
        else:
            raise ValueError(f"{path}: not a classic pcap file (pcapng is not supported here)")
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            _, _, incl, _ = rec.unpack(h)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield data


def cmd_pcap_info(args):
    """-> "packets frame_bytes max_frame rewritable": rewritable = frames that get fresh
    addresses on each pass (0 when the capture has no 10/8 or fd00::/8 hosts, or when
    rewriting would merge addresses; see unique_plan)."""
    frames = list(pcap_frames(args[0]))
    n = len(frames)
    b = sum(len(f) for f in frames)
    m = max((len(f) for f in frames), default=0)
    u = 0
    if unique_plan(frames) is not None:
        u = sum(1 for f in frames if frame_elements(f, True)[1])
    print(n, b, m, u)
    return 0


UNIQUE_V4 = 10  # 10.0.0.0/8: the second octet becomes the loop counter
UNIQUE_V6 = 0xFD  # fd00::/8 (unique local): the second byte becomes the loop counter


def l3_offset(fr):
    """Offset of the IP header after Ethernet and up to two VLAN tags, and the EtherType."""
    off = 12
    for _ in range(3):
        if len(fr) < off + 2:
            return None, None
        et = (fr[off] << 8) | fr[off + 1]
        if et in (0x8100, 0x88A8):
            off += 4
            continue
        return off + 2, et
    return None, None


def unique_plan(frames):
    """Which address bytes get the per-loop counter, or None when that would merge addresses.

    Every flow with a 10.0.0.0/8 (or fd00::/8) endpoint gets fresh addresses on each pass
    over the capture: the second byte of those addresses is replaced by a trafgen runtime
    counter (0..255) that every frame increments once per pass, so both directions of a flow
    stay consistent and the rewritten addresses stay in the same private range (HOME_NET).
    Without it, looping a small capture replays the *same* TCP sessions (same ISNs), which
    an engine treats as retransmissions and does not parse again."""
    v4, v6 = set(), set()
    for fr in frames:
        ip, et = l3_offset(fr)
        if ip is None:
            continue
        if et == 0x0800 and len(fr) >= ip + 20:
            for a in (fr[ip + 12:ip + 16], fr[ip + 16:ip + 20]):
                if a[0] == UNIQUE_V4:
                    v4.add(bytes(a))
        elif et == 0x86DD and len(fr) >= ip + 40:
            for a in (fr[ip + 8:ip + 24], fr[ip + 24:ip + 40]):
                if a[0] == UNIQUE_V6:
                    v6.add(bytes(a))
    for s in (v4, v6):
        if len({a[:1] + a[2:] for a in s}) != len(s):
            return None
    return len(v4) + len(v6)


def rewrite_spec(fr):
    """Where the per-pass counter goes in one frame: (counter offsets, the offsets of the
    16-bit checksum words holding them, IPv4 header checksum offset or None, TCP/UDP checksum
    offset or None, whether that is UDP's, the IP header offset). No counters: ([], ...)."""
    ip, et = l3_offset(fr)
    cnt, ipc, l4c, udp = [], None, None, False
    if et == 0x0800 and ip is not None and len(fr) >= ip + 20:
        ihl = (fr[ip] & 0x0F) * 4
        cnt = [a + 1 for a in (ip + 12, ip + 16) if fr[a] == UNIQUE_V4]
        if cnt and ihl >= 20 and len(fr) >= ip + ihl:
            ipc = ip + 10
            frag = ((fr[ip + 6] & 0x3F) << 8) | fr[ip + 7]
            l4, proto = ip + ihl, fr[ip + 9]
            if frag == 0 and proto == 6 and len(fr) >= l4 + 20:
                l4c = l4 + 16
            elif frag == 0 and proto == 17 and len(fr) >= l4 + 8 and fr[l4 + 6:l4 + 8] != b"\0\0":
                l4c, udp = l4 + 6, True
    elif et == 0x86DD and ip is not None and len(fr) >= ip + 40:
        cnt = [a + 1 for a in (ip + 8, ip + 24) if fr[a] == UNIQUE_V6]
        l4, nh = ip + 40, fr[ip + 6]
        if cnt and nh == 6 and len(fr) >= l4 + 20:
            l4c = l4 + 16
        elif cnt and nh == 17 and len(fr) >= l4 + 8:
            l4c, udp = l4 + 6, True
    words = [ip + ((c - ip) & ~1) for c in cnt]
    return cnt, words, ipc, l4c, udp, ip


def frame_elements(fr, unique):
    """trafgen elements for one frame: literal bytes, and with `unique` the counters and the
    checksums (IPv4 header, TCP/UDP over IPv4 and IPv6) recomputed over them."""
    el = ["0x%02x" % c for c in fr]
    if not unique:
        return el, False
    cnt, _, ipc, l4c, udp, ip = rewrite_spec(fr)
    if not cnt:
        return el, False
    v6 = ipc is None
    for c in cnt:
        el[c] = "dinc(0, 255, 1)"
    if ipc is not None:
        ihl = (fr[ip] & 0x0F) * 4
        el[ipc], el[ipc + 1] = "csumip(%d, %d)" % (ip, ip + ihl - 1), None
    if l4c is not None:
        l4 = l4c - (6 if udp else 16)
        fn = ("csumudp" if udp else "csumtcp") + ("6" if v6 else "")
        el[l4c], el[l4c + 1] = "%s(%d, %d)" % (fn, ip, l4), None
    return [e for e in el if e is not None], True


def cmd_frames(args):
    """frames [--unique] PCAP OUT: the binary frames file of pace.c; prints "unique=N/M".

    Layout: b"SHRKPACE", u32 count, then per frame: u16 length, u8 counters, u8 is-UDP,
    u16 counter offsets[4], u16 checksum-word offsets[4], u16 IPv4 checksum offset, u16
    TCP/UDP checksum offset (0xFFFF: none), the frame bytes. Little-endian."""
    unique = args[0] == "--unique"
    if unique:
        args = args[1:]
    src, out = args
    frames = list(pcap_frames(src))
    if not frames:
        print(f"livebench.py: {src} has no frames", file=sys.stderr)
        return 1
    if unique and unique_plan(frames) is None:
        print(f"livebench.py: {src}: rewriting the second address byte would merge addresses; "
              "looping without unique flows", file=sys.stderr)
        unique = False
    none = 0xFFFF
    n = 0
    with open(out, "wb") as o:
        o.write(b"SHRKPACE" + struct.pack("<I", len(frames)))
        for fr in frames:
            if len(fr) > 0xFFFF:
                print(f"livebench.py: {src}: a {len(fr)}-byte frame is too long", file=sys.stderr)
                return 1
            cnt, words, ipc, l4c, udp, _ = rewrite_spec(fr) if unique else ([], [], None, None, False, 0)
            n += bool(cnt)
            pad = lambda xs: (xs + [none] * 4)[:4]
            o.write(struct.pack("<HBB4H4HHH", len(fr), len(cnt), int(udp), *pad(cnt), *pad(words),
                                none if ipc is None else ipc, none if l4c is None else l4c))
            o.write(fr)
    print(f"unique={n}/{len(frames)}")
    return 0


def cmd_trafgen_cfg(args):
    """trafgen-cfg [--unique] PCAP OUT: prints "unique=N/M" (frames with a per-loop counter)."""
    unique = args[0] == "--unique"
    if unique:
        args = args[1:]
    src, out = args
    frames = list(pcap_frames(src))
    if not frames:
        print(f"livebench.py: {src} has no frames", file=sys.stderr)
        return 1
    if unique and unique_plan(frames) is None:
        print(f"livebench.py: {src}: rewriting the second address byte would merge addresses; "
              "looping without unique flows", file=sys.stderr)
        unique = False
    n = 0
    with open(out, "w") as o:
        o.write(f"/* {os.path.basename(src)}: frames in capture order (livebench.py) */\n")
        for fr in frames:
            el, touched = frame_elements(fr, unique)
            n += touched
            o.write("{ " + ", ".join(el) + " }\n")
    print(f"unique={n}/{len(frames)}")
    return 0


def last_stats(eve):
    """The last `stats` record of an EVE file, read from its end (the file can be large)."""
    try:
        f = open(eve, "rb")
    except OSError:
        return None
    with f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        tail = b""
        pos = end
        while pos > 0:
            step = min(1 << 20, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            lines = tail.split(b"\n")
            # The first piece may be a partial line unless we reached the start.
            candidates = lines if pos == 0 else lines[1:]
            for line in reversed(candidates):
                if b'"event_type":"stats"' in line or b'"event_type": "stats"' in line:
                    try:
                        return json.loads(line)
                    except ValueError:
                        continue
            tail = lines[0]
    return None


def get(d, path):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def rules_loaded(stats):
    """`detect.engines[].rules_loaded` (Suricata 7's layout), summed; None when absent."""
    engines = get(stats, "detect.engines")
    if isinstance(engines, list):
        vals = [e.get("rules_loaded") for e in engines if isinstance(e, dict)]
        vals = [v for v in vals if isinstance(v, int)]
        if vals:
            return max(vals)
    v = get(stats, "detect.rules_loaded")
    return v if isinstance(v, int) else None


def cmd_counters(args):
    engine, logdir, stdout = args
    text = ""
    for p in (stdout, os.path.join(logdir, "suricata.log")):
        try:
            with open(p, errors="replace") as f:
                text += f.read()
        except OSError:
            pass
    rec = last_stats(os.path.join(logdir, "eve.json"))
    st = rec.get("stats", {}) if rec else {}
    pkts = get(st, "decoder.pkts")
    kp = get(st, "capture.kernel_packets")
    kd = get(st, "capture.kernel_drops")
    source = "eve-stats"
    if isinstance(pkts, int) and isinstance(kp, int) and pkts == 0 and kp > 0:
        pkts = None  # a decoder that does not count: fall back to the kernel's view
    if isinstance(pkts, int):
        inspected = pkts
    elif isinstance(kp, int) and isinstance(kd, int):
        inspected = kp - kd
        source = "eve-kernel"
    else:
        inspected = None
        if engine == "suricata":
            m = re.findall(r"device: \S+: packets: (\d+), drops: (\d+)", text)
            if m:
                kp, kd = int(m[-1][0]), int(m[-1][1])
                inspected = kp - kd
                source = "suricata-log"
        else:
            m = re.findall(r"^shrike: (\d+) packets", text, re.M)
            if m:
                inspected = int(m[-1])
                source = "shrike-summary"
    rules = rules_loaded(st)
    if rules is None and engine == "shrike":
        # "shrike: rules: 1 file(s), 24825 rule(s): 3544 loaded, 0 failed to load, ..."
        m = re.findall(r"^shrike: rules: .*?(\d+) loaded, (\d+) failed", text, re.M)
        if m:
            rules = int(m[-1][0])
    if rules is None and engine == "suricata":
        m = re.findall(r"(\d+) signatures processed", text)
        if m:
            rules = int(m[-1])
        elif re.search(r"no rules were loaded", text):
            rules = 0
    alerts = get(st, "detect.alert")
    if not isinstance(alerts, int):
        m = re.findall(r"^shrike: \d+ packets, \d+ bytes, \d+ flows, (\d+) alerts", text, re.M)
        alerts = int(m[-1]) if m else None

    def show(v):
        return "-" if v is None else str(v)

    print(f"inspected={show(inspected)} kernel_packets={show(kp)} kernel_drops={show(kd)} "
          f"rules={show(rules)} alerts={show(alerts)} source={source if inspected is not None else 'none'}")
    return 0 if inspected is not None else 1


def fmt_int(v):
    return f"{int(v):,}"


def ratio_cell(s, r, rules_given=False):
    """shrike/Suricata as text, honest about the generator's ceiling and about rules that one
    engine did not load."""
    if s is None or r is None:
        return "n/a", "an engine has no result"
    if rules_given and s.get("rules_loaded") is None:
        return "n/a", ("shrike reported no loaded rules (neither detect.rules_loaded in its "
                       "stats nor a rules line at start-up) while Suricata loaded %s: not the "
                       "same work, so no ratio"
                       % (r.get("rules_loaded"),))
    if rules_given and r.get("rules_loaded") != s.get("rules_loaded"):
        cell, note = ratio_cell(s, r, False)
        extra = "shrike loaded %s rules, Suricata %s" % (s.get("rules_loaded"), r.get("rules_loaded"))
        return cell, (note + "; " if note else "") + extra
    sg, rg = s["limit"] == "generator", r["limit"] == "generator"
    if sg and rg:
        return "n/a", ("both engines were loss-free at the highest rate the generator reached: "
                       "both figures are lower bounds and the ratio is not measurable here")
    if r["pps"] <= 0:
        return "n/a", "Suricata lost packets at every rate tried"
    x = s["pps"] / r["pps"]
    if s["pps"] <= 0:
        return "n/a", "shrike lost packets at every rate tried"
    if sg:
        return f"≥ {x:.2f}×", "shrike reached the generator's ceiling: a lower bound"
    if rg:
        return f"≤ {x:.2f}×", "Suricata reached the generator's ceiling: an upper bound"
    return f"{x:.2f}×", ""


def cmd_report(args):
    src, md_out, json_out = args
    meta, results, trials = {}, [], []
    with open(src) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            kind = r.pop("kind")
            if kind == "meta":
                meta.update(r)
            elif kind == "trial":
                trials.append(r)
            elif kind == "result":
                results.append(r)
    for r in results:
        r["trials"] = [t for t in trials if t["input"] == r["input"] and t["engine"] == r["engine"]]
        r["mbps"] = round(r["pps"] * r["avg_frame_bytes"] * 8 / 1e6, 1)
    by = {(r["input"], r["engine"]): r for r in results}
    inputs = []
    for r in results:
        if r["input"] not in inputs:
            inputs.append(r["input"])
    ratios = []
    for i in inputs:
        cell, note = ratio_cell(by.get((i, "shrike")), by.get((i, "suricata")),
                                meta.get("rule_lines", 0) > 0)
        ratios.append({"input": i, "ratio": cell, "note": note})
    rat = {x["input"]: x for x in ratios}

    def pps_cell(r):
        if r["limit"] == "generator":
            return f"≥ {fmt_int(r['pps'])}"
        if r["pps"] <= 0:
            return f"< {fmt_int(r['lowest_failed'])}"
        return fmt_int(r["pps"])

    head = ["input", "engine", "rules loaded", "loss-free pps", "Mbit/s", "limit", "trials", "ratio"]
    rows = []
    for i in inputs:
        for e in ("shrike", "suricata"):
            r = by.get((i, e))
            if not r:
                continue
            mb = f"{r['mbps']:.1f}"
            if r["limit"] == "generator":
                mb = "≥ " + mb
            rules = "-" if r.get("rules_loaded") is None else fmt_int(r["rules_loaded"])
            rows.append([i, e, rules, pps_cell(r), mb, r["limit"], str(len(r["trials"])),
                         rat[i]["ratio"] if e == "shrike" else ""])
    widths = [max(len(h), *(len(x[k]) for x in rows)) if rows else len(h) for k, h in enumerate(head)]
    right = {3, 4, 6, 7}

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if k in right else c.ljust(w)
                                 for k, (c, w) in enumerate(zip(cells, widths))) + " |"
    sep = "|" + "|".join(("-" * (w + 1) + ":") if k in right else (":" + "-" * (w + 1))
                         for k, w in enumerate(widths)) + "|"
    table = "\n".join([line(head), sep] + [line(r) for r in rows])
    notes = [f"* {x['input']}: {x['note']}" for x in ratios if x["note"]]
    ceil = [f"* {i}: generator ceiling {fmt_int(meta.get('ceilings', {}).get(i, 0))} pps with no "
            f"engine attached" for i in inputs if meta.get("ceilings", {}).get(i)]
    header = (f"Loss-free rate on a veth pair, generator {meta.get('generator')}, "
              f"{meta.get('threads')} thread(s) per engine, rules: {meta.get('rules_desc')}, "
              f"{meta.get('duration')} s trials, loss tolerance {meta.get('loss_pct')}%, "
              f"{meta.get('cpus')} CPUs, {meta.get('date')}")
    legend = ("loss-free pps: the highest replay rate at which the engine inspected every packet "
              "the generator sent (decoder.pkts of its final EVE stats); Mbit/s: that rate times "
              "the input's mean frame size as captured (no FCS, preamble or gap); limit: "
              "'generator' = loss-free at the highest rate the generator reached (its top speed, "
              "or a paced rate it fell short of), so the engine's real limit is higher (shown "
              "as ≥), 'engine' = found by binary search below a rate with loss; "
              "ratio: shrike / Suricata.")
    print(header)
    print()
    print(table)
    print()
    for n in ceil + notes:
        print(n)
    md = [f"{header}", "", f"Command: `{meta.get('command')}`", "", table, ""]
    md += ceil + notes
    md += ["", legend, ""]
    with open(md_out, "w") as f:
        f.write("\n".join(md))
    with open(json_out, "w") as f:
        json.dump({"meta": meta, "results": results, "ratios": ratios}, f, indent=2)
        f.write("\n")
    return 0


def main():
    cmds = {"pcap-info": (cmd_pcap_info, 1), "trafgen-cfg": (cmd_trafgen_cfg, (2, 3)),
            "frames": (cmd_frames, (2, 3)), "counters": (cmd_counters, 3),
            "report": (cmd_report, 3)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    want = cmds[sys.argv[1]][1]
    if len(sys.argv) - 2 not in (want if isinstance(want, tuple) else (want,)):
        print(__doc__, file=sys.stderr)
        return 2
    fn, _ = cmds[sys.argv[1]]
    return fn(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
