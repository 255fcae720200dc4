#!/usr/bin/env python3
"""Edge-case captures for stream reassembly and IP defragmentation: overlapping data under
every host-os-policy.

Writes into OUT (default bench-out/gen/overlaps):

  tcp-overlaps.pcap    for each of Suricata's 13 host-os-policies (server 10.1.P.2, P the
                       policy's index) and each overlap shape (9 shapes, old segment first or
                       new segment first): one TCP session to port 7777 whose bytes say where
                       they came from (original data lowercase, overlapping data uppercase),
                       then "ZZEND" and a FIN handshake
  ip-overlaps.pcap     the same shapes on IPv4 fragments of UDP datagrams to port 7777
                       (fragment offsets in 8-byte units)
  ip6-overlaps.pcap    the same on IPv6 fragments (server fd00:1:P::2)
  overlaps.yaml        the stock /etc/suricata/suricata.yaml with host-os-policy mapping
                       10.1.P.0/24 and fd00:1:P::/48 to policy P and alert payloads printed
  overlaps.rules       rules that alert on "ZZEND" in the stream and in UDP datagrams

Run both engines with the config and rules and compare the alerts (their `payload_printable`
shows which bytes each engine kept):

  python3 scripts/diff/suricata-diff.py --shrike target/release/shrike \\
      --pcaps OUT --config OUT/overlaps.yaml --rules OUT/overlaps.rules --out OUT/diff

Every case is deterministic (no randomness).
"""

import argparse
import os
import re
import struct

POLICIES = [
    "bsd",
    "bsd-right",
    "old-linux",
    "linux",
    "old-solaris",
    "solaris",
    "hpux10",
    "hpux11",
    "irix",
    "macos",
    "windows",
    "vista",
    "windows2k3",
]
CLIENT = bytes([10, 0, 0, 1])
T0 = 1_700_000_000

# Overlap shapes (start, end) of the new data against the original [8, 24), both in units
# (TCP: bytes times 2; IP: 8-byte fragment blocks).
SHAPES = {
    "before-inside": (4, 12),
    "same-start-shorter": (8, 16),
    "inside": (12, 20),
    "inside-same-end": (16, 24),
    "inside-after": (20, 28),
    "exact": (8, 24),
    "covers": (4, 28),
    "same-start-longer": (8, 28),
    "before-same-end": (4, 24),
}
ORIG = (8, 24)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, ident=1, frag=0x4000):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, frag, 64, proto, 0, src, dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(src, dst, sp, dp, seq, ack, flags, data=b""):
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xFFFFFFFF, ack, 5 << 4, flags, 65535, 0, 0) + data
    ph = src + dst + struct.pack("!BBH", 0, 6, len(seg))
    c = csum(ph + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def eth(ip):
    return b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00" + ip


def eth6(ip):
    return b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x86\xdd" + ip


CLIENT6 = bytes.fromhex("fd000000000000000000000000000001")


def server6(p):
    return bytes.fromhex("fd000001%04x00000000000000000002" % p)


def ipv6_frag(src, dst, payload, ident, offset_units, more):
    fh = struct.pack("!BBHI", 17, 0, (offset_units << 3) | (1 if more else 0), ident)
    body = fh + payload
    return struct.pack("!IHBB16s16s", 6 << 28, len(body), 44, 64, src, dst) + body


def write(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, frame in pkts:
            sec = int(t)
            usec = int(round((t - sec) * 1_000_000))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)


def fill(start, end, upper):
    """Bytes for positions [start, end): a letter per position, upper case for new data."""
    s = bytes(ord("a") + (i % 26) for i in range(start, end))
    return s.upper() if upper else s


def server(p):
    return bytes([10, 1, p, 2])


def tcp_cases():
    pkts = []
    t = [T0 + 0.0]

    def add(frame):
        t[0] += 0.001
        pkts.append((t[0], eth(frame)))

    port = 20000
    for p, _ in enumerate(POLICIES):
        srv = server(p)
        for name, (ns, ne) in SHAPES.items():
            for new_first in (False, True):
                port += 1
                cisn, sisn = 1000, 9000
                c = lambda seq, flags, data=b"": add(
                    ipv4(CLIENT, srv, 6, tcp(CLIENT, srv, port, 7777, seq, sisn + 1, flags, data))
                )
                s = lambda seq, ack, flags: add(ipv4(srv, CLIENT, 6, tcp(srv, CLIENT, 7777, port, seq, ack, flags)))
                add(ipv4(CLIENT, srv, 6, tcp(CLIENT, srv, port, 7777, cisn, 0, 0x02)))
                s(sisn, cisn + 1, 0x12)
                base = cisn + 1
                c(base, 0x10)
                # TCP units are 2 bytes: the original covers bytes [16, 48).
                o0, o1 = ORIG[0] * 2, ORIG[1] * 2
                n0, n1 = ns * 2, ne * 2
                c(base, 0x18, fill(0, o0, False))
                segs = [(o0, fill(o0, o1, False)), (n0, fill(n0, n1, True))]
                if new_first:
                    segs.reverse()
                for off, data in segs:
                    c(base + off, 0x18, data)
                end = max(o1, n1)
                c(base + end, 0x18, b"ZZEND")
                fin = base + end + 5
                s(sisn + 1, fin, 0x10)
                c(fin, 0x11)
                s(sisn + 1, fin + 1, 0x11)
                add(ipv4(CLIENT, srv, 6, tcp(CLIENT, srv, port, 7777, fin + 1, sisn + 2, 0x10)))
    return pkts


def udp_header(sp, dp, payload_len):
    return struct.pack("!HHHH", sp, dp, 8 + payload_len, 0)


def frag_cases(t0, ident, port, v6):
    """Every policy × shape × order on one UDP datagram each, fragmented in 8-byte blocks
    (block 0 holds the UDP header and the first payload bytes)."""
    pkts = []
    t = [t0]

    def add(frame):
        t[0] += 0.001
        pkts.append((t[0], eth6(frame) if v6 else eth(frame)))

    for p, _ in enumerate(POLICIES):
        srv = server6(p) if v6 else server(p)
        cases = [(n, s, False) for n, s in SHAPES.items()] + [(n, s, True) for n, s in SHAPES.items()]
        for name, (ns, ne), new_first in cases:
            ident += 1
            port += 1
            total = max(ORIG[1], ne) + 1
            payload_len = total * 8 - 8
            body = bytearray(fill(0, payload_len, False))
            body[-5:] = b"ZZEND"
            udp = bytearray(udp_header(port, 7777, payload_len) + bytes(body))
            if v6:
                # The checksum covers the original bytes; overlaps that change data make
                # it wrong in both engines alike (checksums are not validated with -k none).
                ph = CLIENT6 + srv + struct.pack("!IxxxB", len(udp), 17)
                udp[6:8] = struct.pack("!H", csum(ph + bytes(udp)) or 0xFFFF)
            udp = bytes(udp)

            def piece(start, end, upper):
                if upper:
                    d = bytearray(udp[start * 8 : end * 8].upper())
                    if start == 0:
                        d[:8] = udp[:8]
                    return bytes(d)
                return udp[start * 8 : end * 8]

            def frag(start, end, upper, last=False):
                data = piece(start, end, upper)
                if v6:
                    return ipv6_frag(CLIENT6, srv, data, ident, start, not last)
                return ipv4(CLIENT, srv, 17, data, ident=ident, frag=(0 if last else 0x2000) | start)

            frags = [frag(ORIG[0], ORIG[1], False), frag(ns, ne, True)]
            if new_first:
                frags.reverse()
            add(frag(0, ORIG[0], False))
            for f in frags:
                add(f)
            end = max(ORIG[1], ne)
            add(frag(end, total, False, last=True))
    return pkts


def ip_cases():
    return frag_cases(T0 + 10_000.0, 100, 30000, v6=False)


def ip6_cases():
    return frag_cases(T0 + 20_000.0, 500, 40000, v6=True)


def config(out):
    src = open("/etc/suricata/suricata.yaml").read()
    lines = ["host-os-policy:"]
    for p, name in enumerate(POLICIES):
        lines.append(f"  {name}: [10.1.{p}.0/24, \"fd00:1:{p:x}::/48\"]")
    policy = "\n".join(lines) + "\n"
    src = re.sub(r"(?ms)^host-os-policy:\n(?:^[ #].*\n|^\n)*", policy + "\n", src)
    src = src.replace("            # payload-printable: yes", "            payload-printable: yes", 1)
    with open(os.path.join(out, "overlaps.yaml"), "w") as f:
        f.write(src)
    with open(os.path.join(out, "overlaps.rules"), "w") as f:
        f.write('alert tcp any any -> any 7777 (msg:"stream end"; flow:to_server; content:"ZZEND"; sid:1;)\n')
        f.write('alert udp any any -> any 7777 (msg:"datagram end"; content:"ZZEND"; sid:2;)\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench-out/gen/overlaps")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, pkts in (("tcp-overlaps", tcp_cases()), ("ip-overlaps", ip_cases()), ("ip6-overlaps", ip6_cases())):
        write(os.path.join(a.out, name + ".pcap"), pkts)
        print(f"{name}.pcap: {len(pkts)} packets")
    config(a.out)


if __name__ == "__main__":
    main()
