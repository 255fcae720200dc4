#!/usr/bin/env python3
"""Write a pcap of TCP dialogues (handshake, the given payloads in turn, FIN teardown).

Used for small app-layer fixtures: `tcp_dialogue.py OUT.pcap DIALOGUE.json` where the JSON is
a list of flows, each {"sport":N, "dport":N, "msgs":[["c"|"s", "text with \\r\\n"], ...]}.
Pure stdlib, deterministic (fixed addresses and timestamps), checksums filled in.
"""
import json
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(src, dst, sport, dport, seq, ack, flags, payload):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    ph = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + tcp


def main():
    out, spec = sys.argv[1], json.load(open(sys.argv[2]))
    recs = []
    t = 1_700_000_000.0
    for i, f in enumerate(spec):
        c, s = bytes([10, 0, 0, 1]), bytes([10, 0, 1, 1 + i])
        cp, sp = f["sport"], f["dport"]
        cs, ss = 1000, 5000

        def add(p):
            nonlocal t
            t += 0.001
            recs.append((t, p))

        add(packet(c, s, cp, sp, cs, 0, 0x02, b""))
        add(packet(s, c, sp, cp, ss, cs + 1, 0x12, b""))
        cs += 1
        ss += 1
        add(packet(c, s, cp, sp, cs, ss, 0x10, b""))
        for who, text in f["msgs"]:
            data = text.encode()
            if who == "c":
                add(packet(c, s, cp, sp, cs, ss, 0x18, data))
                cs += len(data)
                add(packet(s, c, sp, cp, ss, cs, 0x10, b""))
            else:
                add(packet(s, c, sp, cp, ss, cs, 0x18, data))
                ss += len(data)
                add(packet(c, s, cp, sp, cs, ss, 0x10, b""))
        add(packet(c, s, cp, sp, cs, ss, 0x11, b""))
        add(packet(s, c, sp, cp, ss, cs + 1, 0x11, b""))
        add(packet(c, s, cp, sp, cs + 1, ss + 1, 0x10, b""))
    with open(out, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, p in recs:
            sec = int(ts)
            usec = int(round((ts - sec) * 1e6))
            w.write(struct.pack("<IIII", sec, usec, len(p), len(p)) + p)


main()
