#!/usr/bin/env python3
"""Writes a pcap of fixed-size Ethernet/IPv4/UDP frames for throughput tests (RFC 2544).

    mkpcap.py --size 64 --count 10000 --flows 256 out.pcap

--size is the RFC 2544 frame size *including* the 4-byte FCS (64..1518 on Ethernet), so the
captured frames are size-4 bytes long. Each frame belongs to one of --flows UDP flows (source
port 1024+i, source address 198.18.0.0/15 per RFC 2544 benchmarking range), spreading the load
over RSS queues and fanout workers. Only the Python standard library is used.
"""
import argparse
import struct
import sys

FCS = 4
HDRS = 14 + 20 + 8  # Ethernet + IPv4 + UDP


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(size: int, flow: int, seq: int) -> bytes:
    wire = size - FCS
    payload_len = wire - HDRS
    if payload_len < 0:
        raise ValueError(f"frame size {size} is below the minimum {HDRS + FCS}")
    dst_mac = bytes.fromhex("02005e100001")
    src_mac = bytes.fromhex("02005e100002")
    eth = dst_mac + src_mac + struct.pack("!H", 0x0800)
    src_ip = bytes([198, 18, (flow >> 8) & 0xFF, flow & 0xFF])
    dst_ip = bytes([198, 19, 0, 1])
    total = 20 + 8 + payload_len
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, seq & 0xFFFF, 0, 64, 17, 0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    payload = struct.pack("!I", seq & 0xFFFFFFFF).ljust(payload_len, b"\xa5")[:payload_len]
    udp = struct.pack("!HHHH", 1024 + flow, 9, 8 + payload_len, 0) + payload
    return eth + ip + udp


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, required=True, help="frame size with FCS (64..9018)")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--flows", type=int, default=256)
    ap.add_argument("out")
    a = ap.parse_args()
    if a.size < 64 or a.size > 9018:
        print(f"mkpcap.py: --size {a.size}: expected 64..9018", file=sys.stderr)
        return 2
    if a.flows < 1 or a.flows > 65535 - 1024:
        print("mkpcap.py: --flows must be 1..64511", file=sys.stderr)
        return 2
    with open(a.out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(a.count):
            data = frame(a.size, i % a.flows, i)
            # 1 µs apart; tcpreplay's --pps/--topspeed override the timing anyway.
            f.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(data), len(data)))
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
