#!/usr/bin/env python3
"""Extract app-layer payload fixtures from a pcap, plus Suricata 7's EVE output for it.

usage: extract.py PCAP OUT_PREFIX PORT [SURICATA_YAML]

Writes OUT_PREFIX.fix: one line per payload, "<flow> <proto> <S|C> <hex>", where flow numbers
follow first appearance, proto is udp/tcp, S = to the server (destination port PORT). TCP
payloads are deduplicated by sequence number (retransmissions dropped), in capture order.
With SURICATA_YAML, runs `suricata` and writes OUT_PREFIX.eve: "<flow> <json of the dns/tls
object>" for each dns/tls event (flow numbers mapped through the 5-tuple).
"""
import json, os, struct, subprocess, sys, tempfile


def packets(path):
    data = open(path, 'rb').read()
    magic = struct.unpack('<I', data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = '<'
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = '>'
    else:
        raise SystemExit('pcapng not supported: ' + path)
    link = struct.unpack(e + 'I', data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(e + 'IIII', data[off:off + 16])
        yield link, data[off + 16:off + 16 + incl]
        off += 16 + incl


def l3(link, p):
    if link == 1:
        et, o = struct.unpack('>H', p[12:14])[0], 14
        while et in (0x8100, 0x88a8):
            et, o = struct.unpack('>H', p[o + 2:o + 4])[0], o + 4
        return et, p[o:]
    if link == 113:
        return struct.unpack('>H', p[14:16])[0], p[16:]
    if link in (101, 12, 228, 229):
        return (0x86dd if p[0] >> 4 == 6 else 0x800), p
    if link == 0:
        return (0x86dd if p[4] >> 4 == 6 else 0x800), p[4:]
    return None, b''


def l4(et, ip):
    if et == 0x800 and len(ip) >= 20:
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack('>H', ip[2:4])[0]
        return ip[9], ip[12:16], ip[16:20], ip[ihl:tot]
    if et == 0x86dd and len(ip) >= 40:
        plen = struct.unpack('>H', ip[4:6])[0]
        return ip[6], ip[8:24], ip[24:40], ip[40:40 + plen]
    return None, None, None, b''


def main():
    pcap, out, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    flows, seen, lines = {}, set(), []
    for link, p in packets(pcap):
        et, ip = l3(link, p)
        proto, src, dst, seg = l4(et, ip)
        if proto not in (6, 17) or len(seg) < 8:
            continue
        sp, dp = struct.unpack('>HH', seg[:4])
        if proto == 17:
            payload, name, seq = seg[8:], 'udp', None
        else:
            doff = (seg[12] >> 4) * 4
            payload, name, seq = seg[doff:], 'tcp', struct.unpack('>I', seg[4:8])[0]
        if not payload or port not in (sp, dp):
            continue
        to_server = dp == port
        key = (proto,) + ((src, sp, dst, dp) if to_server else (dst, dp, src, sp))
        fid = flows.setdefault(key, len(flows))
        if seq is not None:
            if (key, to_server, seq) in seen:
                continue
            seen.add((key, to_server, seq))
        lines.append('%d %s %s %s' % (fid, name, 'S' if to_server else 'C', payload.hex()))
    open(out + '.fix', 'w').write('\n'.join(lines) + '\n')
    if len(sys.argv) > 4:
        d = tempfile.mkdtemp()
        subprocess.run(['suricata', '-c', sys.argv[4], '-r', pcap, '-l', d, '-k', 'none'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import ipaddress
        eve = []
        for l in open(os.path.join(d, 'eve.json')):
            j = json.loads(l)
            t = j.get('event_type')
            if t not in ('dns', 'tls'):
                continue
            proto = 6 if j['proto'] == 'TCP' else 17
            a = ipaddress.ip_address(j['src_ip']).packed
            b = ipaddress.ip_address(j['dest_ip']).packed
            k1 = (proto, a, j['src_port'], b, j['dest_port'])
            k2 = (proto, b, j['dest_port'], a, j['src_port'])
            fid = flows.get(k1, flows.get(k2, -1))
            eve.append('%d %s' % (fid, json.dumps(j[t], separators=(',', ':'))))
        open(out + '.eve', 'w').write('\n'.join(eve) + '\n')


main()
