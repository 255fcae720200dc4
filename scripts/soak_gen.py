#!/usr/bin/env python3
"""Writes an endless (or --minutes long) pcap stream to stdout for the soak test: a fixed
mix of traffic (HTTP conversations, DNS, ICMP, TLS-like sessions, fragmented UDP, a SYN
flood trickle), looped with timestamps shifted forward by --advance seconds of packet time
each loop and client ports changed, so every loop brings new flows and old ones time out.

    python3 scripts/soak_gen.py --minutes 30 --pps 20000 | shrike -r - -l logs

Throttled to --pps packets per second of wall time (0 = as fast as possible).
"""
import argparse
import random
import struct
import sys
import time


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, body, ident=1, frag=0x4000):
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ident, frag, 64, proto, 0, bytes(src), bytes(dst)))
    struct.pack_into("!H", h, 10, csum(bytes(h)))
    return bytes(h) + body


def eth(l3):
    return b"\x00\x11\x22\x33\x44\x55\x00\x66\x77\x88\x99\xaa\x08\x00" + l3


def tcp(sp, dp, seq, ack, flags, payload=b""):
    return struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 0x50, flags, 65535, 0, 0) + payload


def udp(sp, dp, payload):
    return struct.pack("!HHHH", sp, dp, 8 + len(payload), 0) + payload


SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01
# Byte offset of the TCP/UDP source port in an Ethernet+IPv4(20) frame.
SPORT = 14 + 20
DPORT = SPORT + 2


def base_loop(rng):
    """[(time offset in µs, frame, port offset to vary or None)] for one loop."""
    recs = []
    t = 0

    def add(frame, vary):
        nonlocal t
        t += rng.randint(50, 5000)
        recs.append((t, frame, vary))

    srv = [10, 0, 0, 80]
    for c in range(20):  # HTTP
        cli = [172, 16, 0, c + 1]
        sp = 20000 + c
        req = b"GET /soak/%d HTTP/1.1\r\nHost: soak.example\r\nUser-Agent: soak\r\n\r\n" % c
        body = b"x" * 2000
        resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + body
        add(eth(ipv4(cli, srv, 6, tcp(sp, 80, 1000, 0, SYN))), SPORT)
        add(eth(ipv4(srv, cli, 6, tcp(80, sp, 5000, 1001, SYN | ACK))), DPORT)
        add(eth(ipv4(cli, srv, 6, tcp(sp, 80, 1001, 5001, ACK))), SPORT)
        add(eth(ipv4(cli, srv, 6, tcp(sp, 80, 1001, 5001, ACK | PSH, req))), SPORT)
        s = 5001
        for part in (resp[:1400], resp[1400:]):
            add(eth(ipv4(srv, cli, 6, tcp(80, sp, s, 1001 + len(req), ACK | PSH, part))), DPORT)
            s += len(part)
        add(eth(ipv4(cli, srv, 6, tcp(sp, 80, 1001 + len(req), s, ACK | FIN))), SPORT)
        add(eth(ipv4(srv, cli, 6, tcp(80, sp, s, 1002 + len(req), ACK | FIN))), DPORT)
        add(eth(ipv4(cli, srv, 6, tcp(sp, 80, 1002 + len(req), s + 1, ACK))), SPORT)
    dns = [10, 0, 0, 53]
    for q in range(100):  # DNS
        cli = [172, 17, q // 256, q % 256]
        name = b"".join(bytes([len(p)]) + p for p in (b"host%d" % q, b"soak", b"example")) + b"\0"
        query = struct.pack("!HHHHHH", q, 0x0100, 1, 0, 0, 0) + name + b"\x00\x01\x00\x01"
        answer = struct.pack("!HHHHHH", q, 0x8180, 1, 1, 0, 0) + name + b"\x00\x01\x00\x01"
        answer += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x01\x02\x03"
        add(eth(ipv4(cli, dns, 17, udp(30000 + q, 53, query))), SPORT)
        add(eth(ipv4(dns, cli, 17, udp(53, 30000 + q, answer))), DPORT)
    for i in range(50):  # ICMP echo
        cli = [172, 18, 0, i + 1]
        echo = struct.pack("!BBHHH", 8, 0, 0, 7, i) + b"ping" * 8
        reply = struct.pack("!BBHHH", 0, 0, 0, 7, i) + b"ping" * 8
        add(eth(ipv4(cli, srv, 1, echo)), None)
        add(eth(ipv4(srv, cli, 1, reply)), None)
    tls = [10, 0, 0, 44]
    for c in range(10):  # TLS-like
        cli = [172, 19, 0, c + 1]
        sp = 40000 + c
        hello = b"\x16\x03\x01\x00\x40\x01\x00\x00\x3c\x03\x03" + bytes(rng.getrandbits(8) for _ in range(60))
        add(eth(ipv4(cli, tls, 6, tcp(sp, 443, 1, 0, SYN))), SPORT)
        add(eth(ipv4(tls, cli, 6, tcp(443, sp, 9, 2, SYN | ACK))), DPORT)
        add(eth(ipv4(cli, tls, 6, tcp(sp, 443, 2, 10, ACK))), SPORT)
        add(eth(ipv4(cli, tls, 6, tcp(sp, 443, 2, 10, ACK | PSH, hello))), SPORT)
        for k in range(5):
            add(eth(ipv4(tls, cli, 6, tcp(443, sp, 10 + 1000 * k, 2 + len(hello), ACK, bytes(1000)))), DPORT)
        add(eth(ipv4(cli, tls, 6, tcp(sp, 443, 2 + len(hello), 5010, ACK | FIN))), SPORT)
    for f in range(20):  # fragmented UDP
        cli = [172, 20, 0, f + 1]
        dgram = udp(50000 + f, 9999, bytes([f]) * 2400)
        for k, off in enumerate(range(0, len(dgram), 1000)):
            part = dgram[off : off + 1000]
            mf = 0x2000 if off + 1000 < len(dgram) else 0
            add(eth(ipv4(cli, srv, 17, part, ident=f + 1, frag=mf | (off // 8))), None)
    for s in range(300):  # SYN trickle from many sources
        src = [192, 168, s // 256, s % 256]
        add(eth(ipv4(src, srv, 6, tcp(1024 + s, 8080, rng.getrandbits(32), 0, SYN))), SPORT)
    recs.sort(key=lambda r: r[0])
    return recs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long (0 = forever)")
    ap.add_argument("--pps", type=int, default=20000, help="packets per second (0 = unthrottled)")
    ap.add_argument("--advance", type=float, default=10.0, help="packet-time seconds per loop")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    recs = base_loop(rng)
    # One loop as a blob of pcap records; per loop only timestamps and ports are patched.
    blob = bytearray()
    ts_at, port_at = [], []
    for t, frame, vary in recs:
        ts_at.append((len(blob), t))
        blob += struct.pack("<IIII", 0, 0, len(frame), len(frame))
        if vary is not None:
            port_at.append(len(blob) + vary)
        blob += frame
    out = sys.stdout.buffer
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    start = time.monotonic()
    deadline = start + a.minutes * 60 if a.minutes > 0 else None
    base_us = 1_700_000_000_000_000
    n = len(recs)
    loop = 0
    sent = 0
    try:
        while deadline is None or time.monotonic() < deadline:
            t0 = base_us + int(loop * a.advance * 1e6)
            for off, t in ts_at:
                us = t0 + t
                struct.pack_into("<II", blob, off, us // 1_000_000, us % 1_000_000)
            shift = (loop * 7) % 4000
            for off in port_at:
                p = struct.unpack_from("!H", blob, off)[0]
                struct.pack_into("!H", blob, off, ((p + 7) % 60000) + 1024 if shift else p)
            out.write(blob)
            sent += n
            loop += 1
            if a.pps > 0:
                ahead = sent / a.pps - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
    except BrokenPipeError:
        pass
    try:
        out.flush()
    except BrokenPipeError:
        pass
    print(f"soak_gen: {loop} loops, {sent} packets", file=sys.stderr)


if __name__ == "__main__":
    main()
