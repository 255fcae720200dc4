#!/usr/bin/env python3
"""Build a pcap with one TCP flow per case from a JSON case file.

Input JSON: [{"name": str, "segs": [["c"|"s", "<hex bytes>"], ...]}, ...]
Each case becomes a flow 10.0.0.1:<10000+i> -> 10.0.0.2:80 with a full
handshake, the segments in order (each one TCP segment, ACKed), and a FIN
exchange.  Used only to ask Suricata (the reference) what it makes of the
payloads; the resulting expectations are committed as data.
"""
import json
import struct
import sys


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(a: str) -> bytes:
    return bytes(int(x) for x in a.split("."))


def packet(src, dst, sp, dp, seq, ack, flags, payload=b""):
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0)
    pseudo = ip4(src) + ip4(dst) + struct.pack("!BBH", 0, 6, len(tcp) + len(payload))
    c = csum(pseudo + tcp + payload)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    tot = 20 + len(tcp) + len(payload)
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, tot, 1, 0, 64, 6, 0, ip4(src), ip4(dst))
    iph = iph[:10] + struct.pack("!H", csum(iph)) + iph[12:]
    eth = b"\x00\x11\x22\x33\x44\x55" + b"\x66\x77\x88\x99\xaa\xbb" + b"\x08\x00"
    return eth + iph + tcp + payload


def main():
    cases = json.load(open(sys.argv[1]))
    out = open(sys.argv[2], "wb")
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    t = 1_600_000_000
    usec = 0

    def emit(pkt):
        nonlocal usec, t
        usec += 10
        if usec >= 1_000_000:
            usec = 0
            t += 1
        out.write(struct.pack("<IIII", t, usec, len(pkt), len(pkt)))
        out.write(pkt)

    SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01
    for i, case in enumerate(cases):
        c, s = "10.0.0.1", "10.0.0.2"
        cp, sp = 10000 + i, 80
        cseq, sseq = 1000, 5000
        emit(packet(c, s, cp, sp, cseq, 0, SYN))
        emit(packet(s, c, sp, cp, sseq, cseq + 1, SYN | ACK))
        cseq += 1
        sseq += 1
        emit(packet(c, s, cp, sp, cseq, sseq, ACK))
        for d, hx in case["segs"]:
            data = bytes.fromhex(hx)
            if not data:
                continue
            if d == "c":
                emit(packet(c, s, cp, sp, cseq, sseq, ACK | PSH, data))
                cseq += len(data)
                emit(packet(s, c, sp, cp, sseq, cseq, ACK))
            else:
                emit(packet(s, c, sp, cp, sseq, cseq, ACK | PSH, data))
                sseq += len(data)
                emit(packet(c, s, cp, sp, cseq, sseq, ACK))
        emit(packet(c, s, cp, sp, cseq, sseq, FIN | ACK))
        cseq += 1
        emit(packet(s, c, sp, cp, sseq, cseq, FIN | ACK))
        sseq += 1
        emit(packet(c, s, cp, sp, cseq, sseq, ACK))
    out.close()


if __name__ == "__main__":
    main()
