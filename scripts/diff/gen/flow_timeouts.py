#!/usr/bin/env python3
"""Edge-case captures for the flow table: timeouts by packet time, states, protocols.

Writes one pcap per case into OUT (default bench-out/gen/flow-timeouts); run them through
both engines with scripts/diff/suricata-diff.py --pcaps OUT. Every case is small and
deterministic (no randomness); the timestamps sit on the edges of the stock suricata.yaml
flow-timeouts (udp new 30, udp established 300, tcp new 60, default new 30).

  udp-gap-new-30.8     one-way UDP, gaps of 30.8 s (same flow: whole seconds decide) and 31 s
  udp-gap-est          two-way UDP, gaps of 299 s, 302 s
  udp-keepalive-144    one-way UDP every 45 s, 144 times: one flow per packet
  tcp-nosyn-gap        TCP data without a handshake (no session, midstream off),
                       gaps of 59 s and 90 s
  tcp-handshake-gap    a TCP session, established, idle 700 s, then more data
  igmp                 IGMP membership reports (no flow in Suricata)
  proto-253            an IP protocol no decoder knows (no flow)
"""

import argparse
import os
import struct

A = bytes([10, 0, 0, 1])
B = bytes([10, 0, 0, 2])
T0 = 1_700_000_000


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, ttl=64):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, ttl, proto, 0, src, dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def pseudo(src, dst, proto, seg):
    return src + dst + struct.pack("!BBH", 0, proto, len(seg))


def udp(src, dst, sp, dp, data):
    seg = struct.pack("!HHHH", sp, dp, 8 + len(data), 0) + data
    c = csum(pseudo(src, dst, 17, seg) + seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def tcp(src, dst, sp, dp, seq, ack, flags, data=b""):
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    c = csum(pseudo(src, dst, 6, seg) + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def eth(ip):
    return b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00" + ip


def write(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, frame in pkts:
            sec = int(t)
            usec = int(round((t - sec) * 1_000_000))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)


def u(t, fwd=True, data=b"x"):
    s, d, sp, dp = (A, B, 40000, 9999) if fwd else (B, A, 9999, 40000)
    return (T0 + t, eth(ipv4(s, d, 17, udp(s, d, sp, dp, data))))


def cases():
    # 30.8 s idle but the same whole second + 30: one flow in Suricata; then 31 s: a new one.
    yield "udp-gap-new-30.8", [u(0.1), u(30.9), u(61.9)]
    yield "udp-gap-est", [u(0.5), u(0.6, False), u(299.5), u(601.7, False)]
    yield "udp-keepalive-144", [u(45.0 * i) for i in range(144)]
    seq = 1000

    def t(at, fwd, flags, data=b""):
        s, d, sp, dp = (A, B, 40001, 80) if fwd else (B, A, 80, 40001)
        return (T0 + at, eth(ipv4(s, d, 6, tcp(s, d, sp, dp, seq if fwd else 5000, 1, flags, data))))

    yield "tcp-nosyn-gap", [t(0.2, True, 0x18, b"a"), t(59.3, True, 0x18, b"b"), t(150.0, False, 0x18, b"c")]
    yield "tcp-handshake-gap", [
        (T0 + 0.1, eth(ipv4(A, B, 6, tcp(A, B, 40002, 80, 100, 0, 0x02)))),
        (T0 + 0.2, eth(ipv4(B, A, 6, tcp(B, A, 80, 40002, 500, 101, 0x12)))),
        (T0 + 0.3, eth(ipv4(A, B, 6, tcp(A, B, 40002, 80, 101, 501, 0x10)))),
        (T0 + 0.4, eth(ipv4(A, B, 6, tcp(A, B, 40002, 80, 101, 501, 0x18, b"hello")))),
        (T0 + 700.4, eth(ipv4(A, B, 6, tcp(A, B, 40002, 80, 106, 501, 0x18, b"again")))),
    ]
    igmp = bytes([0x16, 0, 0, 0]) + bytes([239, 1, 1, 1])
    igmp = igmp[:2] + struct.pack("!H", csum(igmp)) + igmp[4:]
    yield "igmp", [(T0 + i * 10.0, eth(ipv4(A, bytes([239, 1, 1, 1]), 2, igmp, ttl=1))) for i in range(3)]
    yield "proto-253", [(T0 + i, eth(ipv4(A, B, 253, b"data"))) for i in range(3)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench-out/gen/flow-timeouts")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, pkts in cases():
        write(os.path.join(a.out, name + ".pcap"), pkts)
        print(f"{name}.pcap: {len(pkts)} packets")


if __name__ == "__main__":
    main()
