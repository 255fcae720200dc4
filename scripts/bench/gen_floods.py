#!/usr/bin/env python3
"""Hostile-load captures for the flood bench (issue 25): deterministic, pure Python.

Writes one classic pcap (Ethernet, microsecond timestamps, 1 µs apart unless noted) per
flood into OUT (default bench-out/floods, which git ignores):

  syn        SYN flood of random tuples: every packet a new flow, 54-byte frames
  udp        UDP flood of random tuples, 60-byte frames
  frag       IPv4 fragment flood: first fragments of datagrams that never complete,
             mixed with complete two-fragment datagrams
  tinyseg    TCP connections carrying 1-byte segments, each group of 32 sent in reverse
             order (everything out of order until the group's first byte comes)
  reuse      TCP session reuse storm: 16 tuples, each reused by new sessions
             (SYN, SYN/ACK, ACK, request, FIN both ways) over and over
  dns        DNS query flood: random source ports, ids and random subdomains of one zone
  http       HTTP request flood on one connection: pipelined GETs, each answered
  tls        TLS handshake flood: new connections, ClientHello (SNI), ServerHello, RST

The IPv4 header checksum is right; TCP/UDP checksums are zero (run engines with -k none).
Usage: gen_floods.py [--out DIR] [--only syn,udp] [--scale 1.0]
"""

import argparse
import random
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08
MAC_C = b"\x02\x00\x00\x00\x00\x01"
MAC_S = b"\x02\x00\x00\x00\x00\x02"


class Pcap:
    def __init__(self, path):
        self.f = open(path, "wb", buffering=1 << 22)
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.n = 0
        self.t = 1_700_000_000 * 1_000_000

    def write(self, frame, gap_us=1):
        self.t += gap_us
        n = len(frame)
        self.f.write(struct.pack("<IIII", self.t // 1_000_000, self.t % 1_000_000, n, n))
        self.f.write(frame)
        self.n += 1

    def close(self):
        self.f.close()
        return self.n


def csum(b):
    s = int.from_bytes(b, "big") % 0xFFFF
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, ident=0, frag=0, ttl=64):
    h = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, frag, ttl, proto, 0, src, dst)
    return h[:10] + struct.pack(">H", csum(h)) + h[12:] + payload


def eth(to_server, ip):
    return (MAC_S + MAC_C if to_server else MAC_C + MAC_S) + b"\x08\x00" + ip


def tcp(sp, dp, seq, ack, flags, payload=b""):
    return struct.pack(">HHIIBBHHH", sp, dp, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 0x50, flags, 65535, 0, 0) + payload


def udp(sp, dp, payload):
    return struct.pack(">HHHH", sp, dp, 8 + len(payload), 0) + payload


class Conn:
    """One TCP connection between c=(ip, port) and s=(ip, port), tracking sequence numbers."""

    def __init__(self, pcap, cip, cport, sip, sport, rng):
        self.p = pcap
        self.cip, self.cport, self.sip, self.sport = cip, cport, sip, sport
        self.cseq = rng.randrange(1 << 32)
        self.sseq = rng.randrange(1 << 32)

    def seg(self, to_server, flags, data=b"", seq=None, gap=1):
        if to_server:
            s = self.cseq if seq is None else seq
            t = tcp(self.cport, self.sport, s, self.sseq, flags, data)
            frame = eth(True, ipv4(self.cip, self.sip, 6, t))
        else:
            s = self.sseq if seq is None else seq
            t = tcp(self.sport, self.cport, s, self.cseq, flags, data)
            frame = eth(False, ipv4(self.sip, self.cip, 6, t))
        self.p.write(frame, gap)

    def send(self, to_server, data, flags=PSH | ACK):
        self.seg(to_server, flags, data)
        if to_server:
            self.cseq += len(data)
        else:
            self.sseq += len(data)

    def handshake(self):
        self.seg(True, SYN)
        self.cseq += 1
        self.seg(False, SYN | ACK)
        self.sseq += 1
        self.seg(True, ACK)

    def close(self):
        self.seg(True, FIN | ACK)
        self.cseq += 1
        self.seg(False, FIN | ACK)
        self.sseq += 1
        self.seg(True, ACK)


def rand_ip(rng):
    return struct.pack(">I", rng.randrange(0x0B000000, 0xDF000000))


SERVER = bytes((10, 0, 0, 80))


def gen_syn(p, rng, n):
    # 54-byte frames: Ethernet + IPv4 + TCP without options.
    for _ in range(n):
        t = tcp(rng.randrange(1024, 65536), 80, rng.randrange(1 << 32), 0, SYN)
        p.write(eth(True, ipv4(rand_ip(rng), SERVER, 6, t, rng.randrange(65536))))


def gen_udp(p, rng, n):
    for _ in range(n):
        u = udp(rng.randrange(1024, 65536), rng.randrange(1, 65536), rng.randbytes(18))
        p.write(eth(True, ipv4(rand_ip(rng), rand_ip(rng), 17, u, rng.randrange(65536))))


def gen_frag(p, rng, n):
    i = 0
    while i < n:
        src = rand_ip(rng)
        ident = rng.randrange(65536)
        body = udp(rng.randrange(1024, 65536), 53, rng.randbytes(56))
        if rng.random() < 0.8:
            # First fragment only (MF, offset 0): a reassembly that never completes.
            p.write(eth(True, ipv4(src, SERVER, 17, body[:32], ident, 0x2000)))
            i += 1
        else:
            p.write(eth(True, ipv4(src, SERVER, 17, body[32:], ident, 32 // 8)))
            p.write(eth(True, ipv4(src, SERVER, 17, body[:32], ident, 0x2000)))
            i += 2


def gen_tinyseg(p, rng, n):
    i = 0
    port = 1024
    while i < n:
        c = Conn(p, rand_ip(rng), port, SERVER, 80, rng)
        port = port + 1 if port < 65000 else 1024
        c.handshake()
        base = c.cseq
        for g in range(0, 2048, 32):
            for k in reversed(range(32)):
                c.seg(True, PSH | ACK, bytes((0x41 + (g + k) % 26,)), seq=base + g + k)
            c.seg(False, ACK)
        c.cseq = base + 2048
        c.close()
        i += 3 + 2048 + 64 + 3


def gen_reuse(p, rng, n):
    tuples = [(rand_ip(rng), rng.randrange(1024, 65536)) for _ in range(16)]
    i = 0
    req = b"GET / HTTP/1.1\r\nHost: reuse.example\r\n\r\n"
    while i < n:
        for ip, port in tuples:
            c = Conn(p, ip, port, SERVER, 80, rng)
            c.handshake()
            c.send(True, req)
            c.close()
            i += 7


def gen_dns(p, rng, n):
    dns_server = bytes((10, 0, 0, 53))
    client = bytes((10, 1, 0, 7))
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
    for _ in range(n):
        label = "".join(rng.choice(alnum) for _ in range(12)).encode()
        q = bytes((len(label),)) + label + b"\x07example\x03com\x00" + struct.pack(">HH", 1, 1)
        msg = struct.pack(">HHHHHH", rng.randrange(65536), 0x0100, 1, 0, 0, 0) + q
        u = udp(rng.randrange(1024, 65536), 53, msg)
        p.write(eth(True, ipv4(client, dns_server, 17, u, rng.randrange(65536))))


def gen_http(p, rng, n):
    c = Conn(p, bytes((10, 1, 0, 8)), 40000, SERVER, 80, rng)
    c.handshake()
    body = b"ok\n"
    resp = (b"HTTP/1.1 200 OK\r\nServer: flood\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body
    i = 3
    k = 0
    while i < n - 3:
        req = (b"GET /item/%d?q=%d HTTP/1.1\r\nHost: www.example.com\r\n"
               b"User-Agent: flood/1.0\r\nAccept: */*\r\n\r\n" % (k, rng.randrange(1 << 30)))
        c.send(True, req)
        c.send(False, resp)
        i += 2
        k += 1
    c.close()


def client_hello(rng, sni):
    name = sni.encode()
    ext = struct.pack(">HHHBH", 0, len(name) + 5, len(name) + 3, 0, len(name)) + name
    ext += b"\x00\x0a\x00\x04\x00\x02\x00\x1d" + b"\x00\x0d\x00\x04\x00\x02\x04\x03"
    suites = b"\x13\x01\x13\x02\xc0\x2b\xc0\x2f\x00\x2f"
    body = (b"\x03\x03" + rng.randbytes(32) + b"\x00" + struct.pack(">H", len(suites)) + suites
            + b"\x01\x00" + struct.pack(">H", len(ext)) + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs


def server_hello(rng):
    exts = b"\xff\x01\x00\x01\x00"
    body = b"\x03\x03" + rng.randbytes(32) + b"\x00" + b"\xc0\x2f\x00" + struct.pack(">H", len(exts)) + exts
    hs = b"\x02" + len(body).to_bytes(3, "big") + body
    shd = b"\x0e\x00\x00\x00"
    return b"\x16\x03\x03" + struct.pack(">H", len(hs) + len(shd)) + hs + shd


def gen_tls(p, rng, n):
    i = 0
    while i < n:
        c = Conn(p, rand_ip(rng), rng.randrange(1024, 65536), SERVER, 443, rng)
        c.handshake()
        c.send(True, client_hello(rng, "h%d.example.org" % rng.randrange(1 << 20)))
        c.send(False, server_hello(rng))
        c.seg(True, RST | ACK)
        i += 6


FLOODS = {
    # name: (generator, packets at scale 1)
    "syn": (gen_syn, 2_000_000),
    "udp": (gen_udp, 1_000_000),
    "frag": (gen_frag, 500_000),
    "tinyseg": (gen_tinyseg, 500_000),
    "reuse": (gen_reuse, 400_000),
    "dns": (gen_dns, 500_000),
    "http": (gen_http, 400_000),
    "tls": (gen_tls, 300_000),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench-out" / "floods"))
    ap.add_argument("--only", default=",".join(FLOODS))
    ap.add_argument("--scale", type=float, default=1.0, help="packet count factor")
    ap.add_argument("--force", action="store_true", help="regenerate existing captures")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in a.only.split(","):
        gen, n = FLOODS[name]
        path = out / f"{name}.pcap"
        if path.exists() and not a.force:
            continue
        rng = random.Random(25_000 + sorted(FLOODS).index(name))
        p = Pcap(path)
        gen(p, rng, int(n * a.scale))
        print(f"{path}: {p.close()} packets", file=sys.stderr)


if __name__ == "__main__":
    main()
