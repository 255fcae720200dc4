#!/usr/bin/env python3
"""Per-protocol bench inputs (issues 18-22): deterministic, pure Python.

Writes one classic pcap (Ethernet, microsecond timestamps) per input into OUT:

  windows    the corpus captures of SMB, DCERPC, Kerberos, NTLMSSP, NFS and RDP (issue 18)
  mail       the corpus captures of SMTP, FTP, SSH, SIP, RFB/VNC, TFTP, Telnet, IMAP, POP3 (19)
  quic       the corpus captures of QUIC and Google QUIC (20)
  ics        generated Modbus/TCP, DNP3 (link CRCs, transport, application) and MQTT 3.1.1/5
             sessions (21)
  downloads  generated HTTP/1.1 downloads of 16 KiB to 1 MiB, file types rotating through PE,
             PDF, ZIP, PNG, ELF, GIF and text (22; run with force-hash and force-magic)

A corpus input takes the Ethernet captures (pcap or pcapng, gzip or not) of ../shared/corpus/pcaps
whose file name matches the input's pattern (PATTERNS below), lays them end to end on one
timeline (each capture's packets keep their gaps, capped at 600 s; 1 s between captures) and
repeats that until the input reaches its size. Copy k of a capture has the last octet of every
IPv4 address (the last byte of every IPv6 address) XORed with k, so copies are distinct flows
and stay in the same /24 (HOME_NET is unchanged); the IPv4 header checksum is recomputed, the
TCP/UDP checksums are not (run engines with -k none).

Usage: gen_proto.py [--out DIR] [--only windows,ics] [--size-mb 150]
"""

import argparse
import gzip
import random
import re
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_floods import ACK, FIN, PSH, SYN, Conn, Pcap, eth, ipv4, udp  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "pcaps"

PATTERNS = {
    "windows": r"smb|dce-?rpc|krb|kerberos|ntlm|nfs|rdp",
    "mail": r"smtp|ftp|ssh|sip|rfb|vnc|tftp|telnet|imap|pop3",
    "quic": r"quic",
}

# ------------------------------------------------------------------ corpus captures


def read_capture(path):
    """(ts_us, frame) of the Ethernet packets of a pcap or pcapng file; [] for other link types."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError):
        return []
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D, 0xD4C3B2A1, 0x4D3CB2A1):
        return read_pcap(data)
    if magic == 0x0A0D0D0A:
        return read_pcapng(data)
    return []


def read_pcap(data):
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    if struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF != 1:
        return []
    out, off = [], 24
    while off + 16 <= len(data):
        s, frac, incl, _ = struct.unpack_from(e + "IIII", data, off)
        off += 16
        if incl > 262144 or off + incl > len(data):
            break
        out.append((s * 1_000_000 + (frac // 1000 if nano else frac), data[off:off + incl]))
        off += incl
    return out


def read_pcapng(data):
    out, off, e = [], 0, "<"
    ifaces = []  # (linktype, ticks per second)
    while off + 12 <= len(data):
        btype = struct.unpack_from(e + "I", data, off)[0]
        if btype == 0x0A0D0D0A:
            bom = struct.unpack_from("<I", data, off + 8)[0]
            e = "<" if bom == 0x1A2B3C4D else ">"
            ifaces = []
        blen = struct.unpack_from(e + "I", data, off + 4)[0]
        if blen < 12 or off + blen > len(data):
            break
        body = data[off + 8:off + blen - 4]
        if btype == 1 and len(body) >= 8:
            link = struct.unpack_from(e + "H", body, 0)[0]
            tps = 1_000_000
            o = 8
            while o + 4 <= len(body):
                code, olen = struct.unpack_from(e + "HH", body, o)
                if code == 0:
                    break
                if code == 9 and olen >= 1:
                    v = body[o + 4]
                    tps = 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
                o += 4 + ((olen + 3) & ~3)
            ifaces.append((link, tps))
        elif btype == 6 and len(body) >= 20:
            iface, hi, lo, caplen = struct.unpack_from(e + "IIII", body, 0)
            if iface < len(ifaces) and ifaces[iface][0] == 1 and 20 + caplen <= len(body):
                ticks = (hi << 32) | lo
                out.append((ticks * 1_000_000 // ifaces[iface][1], body[20:20 + caplen]))
        off += blen
    return out


def ip_checksum(h):
    s = 0
    for i in range(0, len(h), 2):
        s += (h[i] << 8) | h[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def remap(frame, k):
    """The frame with its outermost IP addresses' last byte XORed with k."""
    if k == 0 or len(frame) < 14:
        return frame
    off = 12
    etype = struct.unpack_from(">H", frame, off)[0]
    while etype in (0x8100, 0x88A8, 0x9100) and off + 6 <= len(frame):
        off += 4
        etype = struct.unpack_from(">H", frame, off)[0]
    ip = off + 2
    b = bytearray(frame)
    if etype == 0x0800 and len(b) >= ip + 20 and b[ip] >> 4 == 4:
        ihl = (b[ip] & 0x0F) * 4
        if ihl < 20 or len(b) < ip + ihl:
            return frame
        b[ip + 15] ^= k
        b[ip + 19] ^= k
        b[ip + 10:ip + 12] = b"\0\0"
        b[ip + 10:ip + 12] = struct.pack(">H", ip_checksum(b[ip:ip + ihl]))
    elif etype == 0x86DD and len(b) >= ip + 40:
        b[ip + 23] ^= k
        b[ip + 39] ^= k
    else:
        return frame
    return bytes(b)


def corpus_input(pcap, pattern, size_bytes):
    rx = re.compile(pattern, re.I)
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and rx.search(p.name))
    caps = [c for c in (read_capture(p) for p in files) if c]
    if not caps:
        raise SystemExit(f"no Ethernet capture matches /{pattern}/ under {CORPUS}")
    total, k = 0, 0
    while total < size_bytes and k < 256:
        for cap in caps:
            prev = None
            for ts, frame in cap:
                gap = 1 if prev is None else min(max(ts - prev, 0), 600_000_000)
                prev = ts
                f = remap(frame, k)
                pcap.write(f, gap)
                total += len(f)
            pcap.t += 1_000_000
        k += 1
    return len(caps), k


# ------------------------------------------------------------------ ICS / IoT sessions


def crc_dnp(data):
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA6BC if crc & 1 else crc >> 1
    return struct.pack("<H", (~crc) & 0xFFFF)


def dnp3_frame(to_outstation, dst, src, app):
    """One DNP3 link frame carrying one transport segment (FIR|FIN) with APP."""
    user = bytes([0xC0]) + app  # transport header: FIN, FIR, sequence 0
    ctrl = 0xC4 if to_outstation else 0x44  # DIR|PRM + unconfirmed user data
    head = struct.pack("<BBBBHH", 0x05, 0x64, 5 + len(user), ctrl, dst, src)
    out = head + crc_dnp(head)
    for i in range(0, len(user), 16):
        chunk = user[i:i + 16]
        out += chunk + crc_dnp(chunk)
    return out


def modbus_session(conn, rng, requests):
    tid = rng.randrange(65536)
    for _ in range(requests):
        tid = (tid + 1) & 0xFFFF
        unit = rng.randrange(1, 8)
        fn = rng.choice((1, 3, 3, 4, 5, 6, 16))
        addr = rng.randrange(0, 2000)
        if fn in (1, 3, 4):
            qty = rng.randrange(1, 100 if fn != 1 else 400)
            pdu = struct.pack(">BHH", fn, addr, qty)
            nbytes = (qty + 7) // 8 if fn == 1 else qty * 2
            resp = struct.pack(">BB", fn, nbytes) + rng.randbytes(nbytes)
        elif fn in (5, 6):
            val = rng.choice((0xFF00, 0x0000)) if fn == 5 else rng.randrange(65536)
            pdu = struct.pack(">BHH", fn, addr, val)
            resp = pdu
        else:
            qty = rng.randrange(1, 20)
            pdu = struct.pack(">BHHB", fn, addr, qty, qty * 2) + rng.randbytes(qty * 2)
            resp = struct.pack(">BHH", fn, addr, qty)
        if rng.random() < 0.05:
            resp = struct.pack(">BB", fn | 0x80, rng.choice((1, 2, 3)))
        conn.send(True, struct.pack(">HHHB", tid, 0, len(pdu) + 1, unit) + pdu)
        conn.send(False, struct.pack(">HHHB", tid, 0, len(resp) + 1, unit) + resp)
        conn.seg(True, ACK)


def dnp3_session(conn, rng, requests):
    master, outstation = rng.randrange(1, 100), rng.randrange(1000, 1100)
    for i in range(requests):
        seq = 0xC0 | (i & 0x0F)  # FIR|FIN
        if rng.random() < 0.7:
            # READ class 0 (group 60 variation 1, all objects)
            app = bytes([seq, 0x01, 60, 1, 0x06])
            objs = bytes([30, 2, 0x00, 0, 9]) + b"".join(
                b"\x01" + struct.pack("<h", rng.randrange(-30000, 30000)) for _ in range(10))
            resp = bytes([seq, 0x81, 0x00, 0x00]) + objs
        else:
            # DIRECT_OPERATE a CROB (group 12 variation 1)
            crob = bytes([12, 1, 0x28, 1, 0]) + struct.pack("<HBBIIB", rng.randrange(16), 0x03, 1, 100, 0, 0)
            app = bytes([seq, 0x05]) + crob
            resp = bytes([seq, 0x81, 0x00, 0x00]) + crob
        conn.send(True, dnp3_frame(True, outstation, master, app))
        conn.send(False, dnp3_frame(False, master, outstation, resp))
        conn.seg(True, ACK)


def mqtt_str(s):
    return struct.pack(">H", len(s)) + s


def mqtt_packet(ptype, flags, body):
    n, rem = len(body), b""
    while True:
        byte = n % 128
        n //= 128
        rem += bytes([byte | (0x80 if n else 0)])
        if not n:
            break
    return bytes([(ptype << 4) | flags]) + rem + body


def mqtt_session(conn, rng, messages):
    v5 = rng.random() < 0.5
    level = 5 if v5 else 4
    props = b"\x00" if v5 else b""
    client = b"sensor-%06d" % rng.randrange(1_000_000)
    connect = (mqtt_str(b"MQTT") + bytes([level, 0xC2]) + struct.pack(">H", 60) + props
               + mqtt_str(client) + mqtt_str(b"user%d" % rng.randrange(100)) + mqtt_str(b"secret"))
    conn.send(True, mqtt_packet(1, 0, connect))
    conn.send(False, mqtt_packet(2, 0, b"\x00\x00" + props))
    topic = b"plant/line%d/#" % rng.randrange(10)
    conn.send(True, mqtt_packet(8, 2, struct.pack(">H", 1) + props + mqtt_str(topic) + b"\x01"))
    conn.send(False, mqtt_packet(9, 0, struct.pack(">H", 1) + props + b"\x01"))
    for i in range(messages):
        t = b"plant/line%d/sensor%d" % (rng.randrange(10), rng.randrange(50))
        payload = b'{"t":%d,"v":%d}' % (i, rng.randrange(100000))
        if rng.random() < 0.5:
            conn.send(True, mqtt_packet(3, 0, mqtt_str(t) + props + payload))
        else:
            pid = 2 + i
            conn.send(True, mqtt_packet(3, 2, mqtt_str(t) + struct.pack(">H", pid) + props + payload))
            conn.send(False, mqtt_packet(4, 0, struct.pack(">H", pid)))
        if i % 8 == 7:
            conn.send(True, mqtt_packet(12, 0, b""))
            conn.send(False, mqtt_packet(13, 0, b""))
    conn.send(True, mqtt_packet(14, 0, b"\x00\x00" if v5 else b""))


def ics_input(pcap, size_bytes, rng):
    sessions = 0
    kinds = ((502, modbus_session), (20000, dnp3_session), (1883, mqtt_session))
    start = pcap.f.tell()
    while pcap.f.tell() - start < size_bytes:
        port, fn = kinds[sessions % 3]
        cip = bytes((10, 20, rng.randrange(256), rng.randrange(1, 255)))
        sip = bytes((10, 30, 0, 1 + sessions % 40))
        c = Conn(pcap, cip, rng.randrange(1024, 65536), sip, port, rng)
        c.handshake()
        fn(c, rng, rng.randrange(20, 60))
        c.close()
        sessions += 1
        pcap.f.flush()
    return sessions


# ------------------------------------------------------------------ HTTP downloads

MAGICS = [
    ("application/x-dosexec", "exe", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
     b"\xb8" + b"\x00" * 7 + b"\x40" + b"\x00" * 35 + b"\x80\x00\x00\x00" + b"\x00" * 64 + b"PE\x00\x00"
     b"\x4c\x01\x03\x00" + b"\x00" * 12 + b"\xe0\x00\x02\x01\x0b\x01"),
    ("application/pdf", "pdf", b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"),
    ("application/zip", "zip", b"PK\x03\x04\x14\x00\x00\x00\x08\x00"),
    ("image/png", "png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00"),
    ("application/octet-stream", "bin", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00"),
    ("image/gif", "gif", b"GIF89a\x10\x00\x10\x00\x80\x00\x00"),
    ("text/plain", "txt", b"Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n"),
]


def downloads_input(pcap, size_bytes, rng):
    files = 0
    start = pcap.f.tell()
    while pcap.f.tell() - start < size_bytes:
        cip = bytes((192, 168, rng.randrange(256), rng.randrange(1, 255)))
        sip = bytes((198, 51, 100, 1 + files % 50))
        c = Conn(pcap, cip, rng.randrange(1024, 65536), sip, 80, rng)
        c.handshake()
        for _ in range(rng.randrange(1, 4)):
            ctype, ext, head = MAGICS[files % len(MAGICS)]
            size = rng.choice((16 << 10, 64 << 10, 200 << 10, 512 << 10, 1 << 20))
            body = head + rng.randbytes(size - len(head)) if ext != "txt" else (head * (size // len(head) + 1))[:size]
            c.send(True, b"GET /files/f%d.%s HTTP/1.1\r\nHost: dl%d.example.com\r\n"
                   b"User-Agent: Mozilla/5.0\r\nAccept: */*\r\n\r\n" % (files, ext.encode(), files % 50))
            hdr = (b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                   % (ctype.encode(), size))
            data = hdr + body
            for i in range(0, len(data), 1448):
                c.send(False, data[i:i + 1448])
                if (i // 1448) % 2 == 1:
                    c.seg(True, ACK)
            c.seg(True, ACK)
            files += 1
        c.close()
        pcap.f.flush()
    return files


INPUTS = ("windows", "mail", "quic", "ics", "downloads")


def make(name, path, size_mb, seed=21):
    """Write input NAME to PATH; returns a one-line description."""
    pcap = Pcap(path)
    rng = random.Random(seed + INPUTS.index(name))
    size = int(size_mb * 1_000_000)
    if name in PATTERNS:
        caps, copies = corpus_input(pcap, PATTERNS[name], size)
        what = f"{caps} corpus captures x {copies}"
    elif name == "ics":
        what = f"{ics_input(pcap, size, rng)} Modbus/DNP3/MQTT sessions"
    else:
        what = f"{downloads_input(pcap, size, rng)} HTTP downloads"
    n = pcap.close()
    return f"{name}: {n} packets, {what}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench-out" / "proto"))
    ap.add_argument("--only", default=",".join(INPUTS))
    ap.add_argument("--size-mb", type=float, default=150)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in a.only.split(","):
        print(make(name, out / f"{name}.pcap", a.size_mb))


if __name__ == "__main__":
    main()
