#!/usr/bin/env python3
"""Extracts HTTP/1.x TCP conversations from the shared pcap corpus as oracle cases.

Reads pcap and pcapng (Ethernet, VLAN, raw IP, Linux SLL), follows each TCP flow whose
first client payload starts with a request method and a space, keeps the payload segments
in capture order (retransmitted bytes dropped), and skips flows with holes. The cases are
replayed to Suricata through a clean pcap by gen_expected.py, so both parsers see exactly
the same bytes in the same order.
"""
import gzip
import os
import struct

METHODS = (b"GET ", b"POST ", b"HEAD ", b"PUT ", b"OPTIONS ", b"CONNECT ", b"DELETE ", b"PROPFIND ")


def read_packets(path):
    """Yields (linktype, data) for every packet of a pcap or pcapng file."""
    raw = open(path, "rb").read()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    if len(raw) < 24:
        return
    magic = raw[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    elif magic == b"\x0a\x0d\x0d\x0a":
        yield from read_pcapng(raw)
        return
    else:
        return
    link = struct.unpack(e + "I", raw[20:24])[0]
    off = 24
    while off + 16 <= len(raw):
        _, _, incl, _ = struct.unpack(e + "IIII", raw[off:off + 16])
        off += 16
        yield link, raw[off:off + incl]
        off += incl


def read_pcapng(raw):
    off = 0
    e = "<"
    links = []
    while off + 12 <= len(raw):
        btype = struct.unpack(e + "I", raw[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            bom = raw[off + 8:off + 12]
            e = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            links = []
        blen = struct.unpack(e + "I", raw[off + 4:off + 8])[0]
        if blen < 12:
            return
        body = raw[off + 8:off + blen - 4]
        if btype == 1:
            links.append(struct.unpack(e + "H", body[:2])[0])
        elif btype == 6:
            iface, _, _, cap, _ = struct.unpack(e + "IIIII", body[:20])
            if iface < len(links):
                yield links[iface], body[20:20 + cap]
        elif btype == 3 and links:
            olen = struct.unpack(e + "I", body[:4])[0]
            yield links[0], body[4:4 + olen]
        off += blen


def ip_payload(link, d):
    """Returns (src, dst, proto, payload) or None."""
    if link == 1:
        if len(d) < 14:
            return None
        et = struct.unpack("!H", d[12:14])[0]
        d = d[14:]
        while et in (0x8100, 0x88A8) and len(d) >= 4:
            et = struct.unpack("!H", d[2:4])[0]
            d = d[4:]
    elif link == 113:
        if len(d) < 16:
            return None
        et = struct.unpack("!H", d[14:16])[0]
        d = d[16:]
    elif link in (101, 12, 228, 229):
        et = 0x0800 if d and d[0] >> 4 == 4 else 0x86DD
    else:
        return None
    if et == 0x0800 and len(d) >= 20:
        ihl = (d[0] & 15) * 4
        tot = struct.unpack("!H", d[2:4])[0]
        frag = struct.unpack("!H", d[6:8])[0]
        if frag & 0x3FFF:
            return None
        return d[12:16], d[16:20], d[9], d[ihl:tot]
    if et == 0x86DD and len(d) >= 40:
        plen = struct.unpack("!H", d[4:6])[0]
        return d[8:24], d[24:40], d[6], d[40:40 + plen]
    return None


def flows(path, max_bytes=65536):
    conns = {}
    order = []
    for link, pkt in read_packets(path):
        ip = ip_payload(link, pkt)
        if ip is None or ip[2] != 6 or len(ip[3]) < 20:
            continue
        src, dst, _, t = ip
        sp, dp, seq = struct.unpack("!HHI", t[:8])
        off = (t[12] >> 4) * 4
        flags = t[13]
        data = t[off:]
        key = (src, sp, dst, dp)
        rkey = (dst, dp, src, sp)
        if key not in conns and rkey not in conns:
            if not (flags & 0x02) or (flags & 0x10):
                continue  # only flows whose SYN we saw
            conns[key] = {"client": key, "next": {key: seq + 1}, "segs": [], "bad": False, "n": 0}
            order.append(key)
            continue
        c = conns.get(key) or conns.get(rkey)
        if c["bad"]:
            continue
        if flags & 0x02:
            c["next"][key] = seq + 1
            continue
        if not data:
            continue
        nxt = c["next"].get(key)
        if nxt is None:
            c["bad"] = True
            continue
        delta = (seq - nxt) & 0xFFFFFFFF
        if delta == 0:
            pass
        elif delta > 0x80000000:
            back = (nxt - seq) & 0xFFFFFFFF
            if back >= len(data):
                continue
            data = data[back:]
        else:
            c["bad"] = True  # hole
            continue
        c["next"][key] = (nxt + len(data)) & 0xFFFFFFFF
        c["n"] += len(data)
        if c["n"] > max_bytes:
            c["bad"] = True
            continue
        c["segs"].append(("c" if key == c["client"] else "s", data))
    out = []
    for k in order:
        c = conns[k]
        if c["bad"] or not c["segs"] or c["segs"][0][0] != "c":
            continue
        if not c["segs"][0][1].startswith(METHODS):
            continue
        out.append(c["segs"])
    return out


def corpus_cases(root, max_flows_per_file=4, max_total=160):
    cases = []
    for sub in ("ndpi", "zeek"):
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if "http" not in name.lower() or "http2" in name.lower():
                continue
            try:
                fl = flows(os.path.join(d, name))
            except Exception:
                continue
            for i, segs in enumerate(fl[:max_flows_per_file]):
                cases.append(("corpus %s/%s #%d" % (sub, name, i), segs))
                if len(cases) >= max_total:
                    return cases
    return cases


if __name__ == "__main__":
    import sys
    cs = corpus_cases(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/corpus/pcaps")
    print(len(cs), "flows", sum(len(x) for _, s in cs for _, x in s), "bytes")
    for n, s in cs:
        print(n, len(s))
