#!/usr/bin/env python3
"""Regenerates the fuzz seed corpora under fuzz/corpus/<target>/ from the shared corpus
(../shared/corpus: pcaps and ET Open rules), the installed suricata.yaml and a few
synthetic inputs. Seeds are written in each target's input format (see fuzz_targets/*.rs
and src/lib.rs `steps`). Deterministic; caps keep the total small (a few MB).

    python3 fuzz/seeds.py [SHARED_DIR]
"""
import hashlib
import os
import struct
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "..", "shared")
if not os.path.isdir(SHARED):
    SHARED = "/work/shared"
OUT = os.path.join(ROOT, "corpus")

# LinkType::SUPPORTED order in capture/src/lib.rs.
LINK_INDEX = {0: 0, 1: 1, 12: 2, 14: 2, 101: 2, 108: 3, 113: 4, 228: 5, 229: 6, 276: 7}

counts = {}


def put(target, data, limit):
    if counts.get(target, 0) >= limit:
        return
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    p = os.path.join(d, name)
    if not os.path.exists(p):
        with open(p, "wb") as f:
            f.write(data)
        counts[target] = counts.get(target, 0) + 1


def read_capture(path):
    """Yields (linktype, frame) from a pcap or pcapng file; stops quietly on damage."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if magic[0] in (0xD4, 0x4D) else ">"
        link = struct.unpack(e + "I", data[20:24])[0] & 0xFFFF
        off = 24
        while off + 16 <= len(data):
            incl = struct.unpack(e + "I", data[off + 8 : off + 12])[0]
            if incl > 262144:
                return
            yield link, data[off + 16 : off + 16 + incl]
            off += 16 + incl
    elif magic == b"\x0a\x0d\x0d\x0a":
        off = 0
        e = "<"
        links = []
        while off + 12 <= len(data):
            btype = struct.unpack(e + "I", data[off : off + 4])[0]
            if btype == 0x0A0D0D0A:
                e = "<" if data[off + 8 : off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                links = []
            blen = struct.unpack(e + "I", data[off + 4 : off + 8])[0]
            if blen < 12 or off + blen > len(data):
                return
            body = data[off + 8 : off + blen - 4]
            if btype == 1 and len(body) >= 2:
                links.append(struct.unpack(e + "H", body[:2])[0])
            elif btype == 6 and len(body) >= 20:
                ifc, _, _, cap, _ = struct.unpack(e + "IIIII", body[:20])
                if ifc < len(links):
                    yield links[ifc], body[20 : 20 + cap]
            off += blen


def captures():
    base = os.path.join(SHARED, "corpus", "pcaps")
    for sub in ("ndpi", "zeek"):
        d = os.path.join(base, sub)
        if not os.path.isdir(d):
            continue
        for n in sorted(os.listdir(d)):
            if n.endswith((".pcap", ".pcapng", ".cap")):
                yield os.path.join(d, n)


def l3_of(link, frame):
    """(offset of the IP header, version) for the common link types, else None."""
    off = None
    if link == 1:
        off = 14
        et = struct.unpack(">H", frame[12:14])[0] if len(frame) >= 14 else 0
        while et in (0x8100, 0x88A8) and len(frame) >= off + 4:
            et = struct.unpack(">H", frame[off + 2 : off + 4])[0]
            off += 4
        if et not in (0x0800, 0x86DD):
            return None
    elif link in (12, 14, 101, 228, 229):
        off = 0
    elif link == 113:
        off = 16
    elif link in (0, 108):
        off = 4
    else:
        return None
    if len(frame) <= off:
        return None
    return off, frame[off] >> 4


def transport(frame, link):
    """(proto, src, dst, sport, dport, seq, ack, flags, win, payload) for IPv4/IPv6 TCP/UDP."""
    r = l3_of(link, frame)
    if not r:
        return None
    off, ver = r
    ip = frame[off:]
    if ver == 4 and len(ip) >= 20:
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack(">H", ip[2:4])[0]
        if struct.unpack(">H", ip[6:8])[0] & 0x3FFF:
            return None
        proto, src, dst = ip[9], ip[12:16], ip[16:20]
        l4 = ip[ihl:tot] if tot >= ihl else b""
    elif ver == 6 and len(ip) >= 40:
        proto, src, dst = ip[6], ip[8:24], ip[24:40]
        l4 = ip[40 : 40 + struct.unpack(">H", ip[4:6])[0]]
    else:
        return None
    if proto == 6 and len(l4) >= 20:
        sp, dp, seq, ack = struct.unpack(">HHII", l4[:12])
        doff = (l4[12] >> 4) * 4
        return (6, src, dst, sp, dp, seq, ack, l4[13], struct.unpack(">H", l4[14:16])[0], l4[doff:], l4[20:doff])
    if proto == 17 and len(l4) >= 8:
        sp, dp = struct.unpack(">HH", l4[:4])
        return (17, src, dst, sp, dp, 0, 0, 0, 0, l4[8:], b"")
    return None


def steps_encode(chunks):
    """chunks: [(to_server, bytes)] -> the `steps` format (data steps of <= 255 bytes)."""
    out = bytearray()
    for ts, data in chunks:
        for i in range(0, len(data), 255):
            part = data[i : i + 255]
            out.append((0 if ts else 1) | (16 << 3))
            out.append(len(part))
            out += part
    return bytes(out)


def main():
    flows = {}
    n_files = 0
    for path in captures():
        n_files += 1
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        with open(path, "rb") as f:
            raw = f.read()
        # pcap_reader: whole small files, plus header-and-first-records cuts of big ones.
        put("pcap_reader", raw[:16384], 400)
        frames = 0
        for link, frame in read_capture(path):
            frames += 1
            if frames > 3000:
                break
            li = LINK_INDEX.get(link)
            if li is not None and frames <= 40:
                put("decode", bytes([li]) + frame, 6000)
            t = transport(frame, link)
            if not t:
                continue
            proto, src, dst, sp, dp, seq, ack, fl, win, payload, opts = t
            a, b = (src, sp), (dst, dp)
            key = (path, proto) + ((a, b) if a <= b else (b, a))
            fl_list = flows.setdefault(key, [])
            if len(fl_list) < 200:
                fl_list.append((a, proto, seq, ack, fl, win, payload, opts, sp, dp))
    # App-layer and stream seeds from the flows.
    for key, pkts in flows.items():
        proto = key[1]
        first = pkts[0]
        client = first[0]
        ports = (first[8], first[9])
        chunks = [(p[0] == client, p[6]) for p in pkts if p[6]]
        if proto == 17 and 53 in ports:
            put("dns", b"\x00" + steps_encode(chunks[:20]), 600)
        if proto == 17 and (5060 in ports or 5061 in ports):
            put("sip", steps_encode(chunks[:20]), 400)
        if proto == 17 and 69 in ports:
            put("tftp", steps_encode(chunks[:10]), 200)
        if proto == 17 and 2049 in ports:
            put("nfs_udp", steps_encode(chunks[:20]), 200)
        if proto == 6 and any(c[1][:4].upper() == b"RFB " for c in chunks[:2]):
            put("rfb", steps_encode(chunks[:30]), 200)
        if proto == 6 and any(c[1][:4] == b"SSH-" for c in chunks[:2]):
            put("ssh", steps_encode(chunks[:30]), 200)
        if proto == 6:
            if 53 in ports:
                put("dns", b"\x01" + steps_encode(chunks[:40]), 600)
            if 80 in ports or 8080 in ports:
                put("http", b"\x00" + steps_encode(chunks[:40]), 600)
            if 443 in ports or any(c[1][:1] == b"\x16" for c in chunks[:2]):
                put("tls", b"\x01" + steps_encode(chunks[:40]), 600)
            if 1883 in ports:
                put("mqtt", steps_encode(chunks[:40]), 600)
            if 5432 in ports:
                put("pgsql", steps_encode(chunks[:40]), 600)
            if 2049 in ports:
                put("nfs", steps_encode(chunks[:40]), 400)
            # stream: the segments in the target's op format.
            syn = next((p for p in pkts if p[4] & 0x02 and not p[4] & 0x10), None)
            if syn is None:
                continue
            client = syn[0]
            sa = next((p for p in pkts if p[4] & 0x12 == 0x12), None)
            isn = [syn[2], sa[2] if sa else 0]
            out = bytearray([0x20, 4, 8, 8, 2])  # check overlap, depth 4096, chunk 129, BSD
            out += struct.pack(">II", isn[0], isn[1])
            for p in pkts[:60]:
                d = 0 if p[0] == client else 1
                rs = (p[2] - isn[d]) & 0xFFFFFFFF
                ra = (p[3] - isn[1 - d]) & 0xFFFFFFFF
                plen = len(p[6])
                op = d
                body = bytearray()
                if rs <= 0xFFFF and ra <= 0xFFFF:
                    body += struct.pack(">HH", rs, ra)
                else:
                    op |= 2
                    body += struct.pack(">II", p[2], p[3])
                op |= 4
                body += struct.pack(">H", p[5])
                o = p[7][:40]
                if o:
                    op |= 8
                    body.append(len(o))
                    body += o
                pl = p[6][:2999]
                if pl:
                    op |= 3 << 6
                    body += struct.pack(">H", len(pl))
                    body += pl
                out.append(op)
                out.append(p[4])
                out += body
            put("stream", bytes(out), 400)
    # Rules: ET Open in slices of 30 lines, plus the sample rules.
    rdir = os.path.join(SHARED, "corpus", "rules", "et-open")
    if os.path.isdir(rdir):
        for n in sorted(os.listdir(rdir)):
            if not n.endswith(".rules"):
                continue
            with open(os.path.join(rdir, n), "rb") as f:
                lines = [l for l in f.read().splitlines(True) if l.strip() and not l.startswith(b"#")]
            for i in range(0, min(len(lines), 150), 30):
                put("rules", b"".join(lines[i : i + 30]), 800)
    sample = os.path.join(ROOT, "..", "samples", "sample.rules")
    if os.path.exists(sample):
        with open(sample, "rb") as f:
            put("rules", f.read(), 10_000)
    # Deep nesting (issue 26): negation runs, nested address/port lists, negated groups,
    # variables, near and past the 64-level and 8191-byte limits.
    for n in (1, 63, 64, 65, 200, 4000, 4001):
        put("rules", b"alert tcp " + b"!" * n + b"1.2.3.4 any -> any any (sid:1;)\n", 10_000)
    for n in (63, 64, 65, 500, 2000):
        put("rules", b"alert tcp [" * 1 + b"[" * n + b"1.2.3.4" + b"]" * (n + 1) + b" any -> any any (sid:2;)\n", 10_000)
        put("rules", b"alert tcp any " + b"[!" * n + b"80" + b"]" * n + b" -> any any (sid:3;)\n", 10_000)
    put("rules", b"alert tcp $HOME_NET $HTTP_PORTS -> [$EXTERNAL_NET,![$HOME_NET,!10.0.0.1]] [!$HTTP_PORTS,[1:5,!3]] (sid:4;)\n", 10_000)
    put("rules", b"alert tcp any any -> any any (" + b"content:\"a\"; " * 600 + b"sid:5;)\n", 10_000)
    # Config: suricata.yaml, its sections, and shrike YAML.
    for y in ("/etc/suricata/suricata.yaml",):
        if os.path.exists(y):
            with open(y, "rb") as f:
                text = f.read()
            put("config_yaml", text, 100)
            parts = text.split(b"\n\n")
            for i in range(0, len(parts), 4):
                put("config_yaml", b"%YAML 1.1\n---\n" + b"\n\n".join(parts[i : i + 4]), 100)
    for t in (
        b"stats:\n  enabled: true\n  interval: 5\n",
        b"detect:\n  flow:\n    max-flows: 10\n  decoder:\n    checksum-validation: yes\n",
        b"workers:\n  count: 2\n  runmode: single\noutput:\n  eve:\n    enabled: yes\n",
        b"interfaces:\n  - name: eth0\n    capture: af-packet\n    threads: 2\n    cpus: [1, 2]\n",
        b"vars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\"\nrules:\n  rule-files: [a.rules]\n",
    ):
        put("config_yaml", t, 100)
    # Defrag: synthetic fragment trains (op, off16, len, data, proto, dt).
    for v6 in (0, 1):
        for mf_last in (0, 1):
            out = bytearray([0x00, 30, 1])
            for k in range(4):
                mf = 0x20 if (k < 3 or mf_last) else 0
                out.append(v6 | (1 << 1) | mf | (0 << 6))
                out += struct.pack(">H", k * 2)
                out.append(16)
                out += bytes([0x41 + k]) * 16
                out += bytes([0, 1])
            put("defrag", bytes(out), 50)
        # Overlaps.
        out = bytearray([0x01, 4, 8, 0x10, 0x00, 10, 2])
        for off, l in ((0, 24), (1, 24), (0, 8), (3, 8)):
            out.append(v6 | 0x20 | (0 << 6))
            out += struct.pack(">H", off)
            out.append(l)
            out += bytes([0x30 + off]) * l
            out += bytes([1, 0])
        put("defrag", bytes(out), 50)
    # DNS compression loops and pointer chains.
    hdr = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    loop = hdr + b"\xc0\x0c" + b"\x00\x01\x00\x01"
    chain = hdr + b"\x01a\xc0\x0c" + b"\x00\x01\x00\x01"
    for m in (loop, chain):
        put("dns", b"\x00" + steps_encode([(True, m), (False, m)]), 10_000)
        put("dns", b"\x01" + steps_encode([(True, struct.pack(">H", len(m)) + m)]), 10_000)
    print(f"{n_files} captures read")
    for t in sorted(counts):
        print(f"{t}: {counts[t]} seeds")


if __name__ == "__main__":
    main()
