# Write TCP sessions (handshake, data segments with ACKs, FIN) to a pcap.
import struct, sys

def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b)//2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff

class Pcap:
    def __init__(s, path):
        s.f = open(path, 'wb'); s.t = 1_600_000_000.0
        s.f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    def pkt(s, src, dst, sp, dp, seq, ack, flags, data=b''):
        tcp = struct.pack('!HHIIBBHHH', sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
        ph = bytes(map(int, src.split('.'))) + bytes(map(int, dst.split('.'))) + struct.pack('!BBH', 0, 6, len(tcp))
        c = csum(ph + tcp)
        tcp = tcp[:16] + struct.pack('!H', c) + tcp[18:]
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes(map(int, src.split('.'))), bytes(map(int, dst.split('.'))))
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        fr = b'\x00\x01\x02\x03\x04\x05\x00\x01\x02\x03\x04\x06\x08\x00' + ip + tcp
        s.t += 0.001
        sec = int(s.t); us = int((s.t - sec) * 1e6)
        s.f.write(struct.pack('<IIII', sec, us, len(fr), len(fr)) + fr)

class Sess:
    def __init__(s, pc, cport, sport=1883, cip='10.0.0.1', sip='10.0.0.2'):
        s.pc, s.c, s.s, s.cp, s.sp = pc, cip, sip, cport, sport
        s.cs, s.ss = 1000, 5000
        pc.pkt(cip, sip, cport, sport, s.cs, 0, 0x02); s.cs += 1
        pc.pkt(sip, cip, sport, cport, s.ss, s.cs, 0x12); s.ss += 1
        pc.pkt(cip, sip, cport, sport, s.cs, s.ss, 0x10)
    def cli(s, data, chunk=None):
        for i in range(0, len(data), chunk or max(1, len(data))):
            d = data[i:i + (chunk or len(data))]
            s.pc.pkt(s.c, s.s, s.cp, s.sp, s.cs, s.ss, 0x18, d); s.cs += len(d)
            s.pc.pkt(s.s, s.c, s.sp, s.cp, s.ss, s.cs, 0x10)
    def srv(s, data, chunk=None):
        for i in range(0, len(data), chunk or max(1, len(data))):
            d = data[i:i + (chunk or len(data))]
            s.pc.pkt(s.s, s.c, s.sp, s.cp, s.ss, s.cs, 0x18, d); s.ss += len(d)
            s.pc.pkt(s.c, s.s, s.cp, s.sp, s.cs, s.ss, 0x10)
    def close(s):
        s.pc.pkt(s.c, s.s, s.cp, s.sp, s.cs, s.ss, 0x11); s.cs += 1
        s.pc.pkt(s.s, s.c, s.sp, s.cp, s.ss, s.cs, 0x11); s.ss += 1
        s.pc.pkt(s.c, s.s, s.cp, s.sp, s.cs, s.ss, 0x10)

def vi(n):
    o = b''
    while True:
        b = n % 128; n //= 128
        if n: b |= 128
        o += bytes([b])
        if not n: return o
def m(first, body): return bytes([first]) + vi(len(body)) + body
def st(x):
    if isinstance(x, str): x = x.encode()
    return struct.pack('!H', len(x)) + x
def props(p): return vi(len(p)) + p
