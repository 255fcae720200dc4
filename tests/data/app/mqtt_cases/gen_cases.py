# Generates cases.pcap: python3 gen_cases.py cases.pcap (MQTT edge cases: v5 properties,
# byte-by-byte segments, pipelining, events, malformed data, truncation, max-tx).
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from mk import *
pc = Pcap(sys.argv[1])
port = 40000
def S():
    global port; port += 1; return Sess(pc, port)
def connect(v=4, cid='cid', flags=0x02, user=None, pw=None, will=None, pr=b'', wpr=b''):
    b = st('MQTT' if v >= 4 else 'MQIsdp') + bytes([v])
    f = flags | (0x80 if user is not None else 0) | (0x40 if pw is not None else 0) | (0x04 if will else 0)
    b += bytes([f]) + b'\x00\x3c'
    if v == 5: b += props(pr)
    b += st(cid)
    if will:
        if v == 5: b += props(wpr)
        b += st(will[0]) + st(will[1])
    if user is not None: b += st(user)
    if pw is not None: b += st(pw)
    return m(0x10, b)
def connack(v=4, rc=0, sp=0, pr=b''):
    return m(0x20, bytes([sp, rc]) + (props(pr) if v == 5 else b''))
def publish(topic, msg, qos=0, mid=1, v=4, pr=b'', dup=0, retain=0):
    b = st(topic) + (struct.pack('!H', mid) if qos else b'') + (props(pr) if v == 5 else b'') + msg
    return m(0x30 | (dup << 3) | (qos << 1) | retain, b)
def ack(t, mid, rc=None, pr=None):
    b = struct.pack('!H', mid)
    if rc is not None: b += bytes([rc])
    if pr is not None: b += props(pr)
    return m(t, b)

# 1: v5 session with all properties, split byte by byte, user property, unknown property id
allp = (b'\x01\x01' + b'\x02\x00\x00\x00\x05' + b'\x03' + st('text/plain') + b'\x08' + st('resp') + b'\x09' + st(b'\xff\x00c') +
        b'\x0b\x81\x01' + b'\x23\x00\x07' + b'\x26' + st('k1') + st('v1') + b'\x26' + st('k1') + st('v2'))
s = S()
s.cli(connect(5, 'c5', user='u', pw=b'p\xffw', will=('wt', b'wm\x00'), pr=b'\x11\x00\x00\x00\x0a\x15' + st('SCRAM') + b'\x16' + st(b'\x01\x02') + b'\x17\x01\x19\x01\x27\x00\x00\x10\x00\x21\x00\x0a\x22\x00\x05', wpr=b'\x18\x00\x00\x00\x02'), chunk=1)
s.srv(connack(5, 0, 1, b'\x12' + st('assigned') + b'\x13\x00\x3c\x1a' + st('ri') + b'\x1c' + st('sr') + b'\x1f' + st('reason') + b'\x24\x01\x25\x01\x28\x01\x29\x00\x2a\x01'), chunk=2)
s.cli(publish('t/1', b'hello\xfe', 1, 7, 5, allp), chunk=3)
s.srv(ack(0x40, 7, 0x10, b'\x1f' + st('no subs')))
s.cli(publish('t/2', b'two', 2, 8, 5))
s.srv(ack(0x50, 8))
s.cli(ack(0x62, 8, 0))
s.srv(ack(0x70, 8, 0, b''))
sub = struct.pack('!H', 9) + props(b'\x0b\x05') + st('a/#') + b'\x01' + st('b/+') + b'\x02'
s.cli(m(0x82, sub))
s.srv(m(0x90, struct.pack('!H', 9) + props(b'') + b'\x01\x80'))
s.cli(m(0xa2, struct.pack('!H', 10) + props(b'') + st('a/#') + st('b/+')))
s.srv(m(0xb0, struct.pack('!H', 10) + props(b'') + b'\x00\x11'))
s.cli(m(0xf0, b'\x18' + props(b'\x15' + st('SCRAM'))))
s.srv(m(0xf0, b'\x00' + props(b'')))
s.cli(m(0xc0, b'')); s.srv(m(0xd0, b''))
s.cli(m(0xe0, b'\x04'))
s.close()

# 2: v3.1.1 everything pipelined in one segment each way
s = S()
s.cli(connect(4, 'pipe', user='bob', pw=b'secret') + publish('x', b'0', 0) + publish('y', b'1', 1, 3) + m(0xc0, b'') + m(0x82, struct.pack('!H', 4) + st('s1') + b'\x00' + st('s2') + b'\x01'))
s.srv(connack() + ack(0x40, 3) + m(0xd0, b'') + m(0x90, struct.pack('!H', 4) + b'\x00\x01') + publish('srv/t', b'from server', 1, 99, dup=1, retain=1))
s.cli(ack(0x40, 99))
s.cli(m(0xa2, struct.pack('!H', 5) + st('s1')))
s.srv(m(0xb0, struct.pack('!H', 5)))
s.cli(m(0xe0, b''))
s.close()

# 3: events: missing connect, unassigned type, invalid qos, double connect, missing_msg_id? (qos1 w/o id impossible), unpaired acks
s = S()
s.srv(connack())
s.cli(publish('q', b'x', 0))
s.cli(ack(0x40, 77)); s.srv(ack(0x90, 78) + b'\x00'); s.srv(ack(0xb0, 79)); s.cli(ack(0x50, 80)); s.cli(ack(0x62, 81))
s.cli(connect(4, 'a')); s.srv(connack()); s.cli(connect(4, 'b')); s.srv(connack(rc=5))
s.cli(m(0x36, st('q3') + b'\x00\x01x'))
s.cli(m(0x00, b''))
s.cli(m(0xc0, b''))
s.close()

# 4: malformed: SUBSCRIBE without topics, after it nothing is parsed
s = S()
s.cli(connect(4, 'm')); s.srv(connack())
s.cli(m(0x82, struct.pack('!H', 1)))
s.cli(publish('after', b'x'))
s.srv(m(0xd0, b''))
s.close()

# 5: v5 bad property length
s = S()
s.cli(connect(5, 'm5')); s.srv(connack(5))
s.cli(m(0x30, st('t') + b'\x30\x01\x01'))
s.close()

# 6: non utf8 strings, empty client id, will in v3.1
s = S()
s.cli(connect(3, b'\xc3\x28x', user='', will=('w\xe9'.encode('latin1'), b'\x00\x01')))
s.srv(connack(3))
s.cli(publish(b'\xff\xfe', b'\x00\x01\x02"\\', 0))
s.cli(m(0xe0, b''))
s.close()

# 7: long messages (max-msg-length 100 in config) split across segments, then normal
s = S()
s.cli(connect(4, 'long')); s.srv(connack())
s.cli(publish('big', b'A' * 300, 1, 1), chunk=50)
s.srv(ack(0x40, 1))
s.cli(publish('big2', b'B' * 150, 0) + publish('small', b'ok', 0), chunk=70)
s.srv(publish('bigsrv', b'C' * 200, 0), chunk=33)
s.cli(m(0xe0, b''))
s.close()

# 8: many open txs (max-tx 5 in config)
s = S()
s.cli(connect(4, 'many')); s.srv(connack())
for i in range(12):
    s.cli(publish('m', b'%d' % i, 1, 100 + i))
s.srv(ack(0x40, 111))
s.close()

# 9: v5 disconnect variants, puback variants
s = S()
s.cli(connect(5, 'd5')); s.srv(connack(5))
s.cli(publish('p', b'1', 1, 1, 5)); s.srv(ack(0x40, 1))
s.cli(publish('p', b'2', 1, 2, 5)); s.srv(ack(0x40, 2, 0x87))
s.srv(m(0xe0, b'\x8b'))
s.cli(m(0xe0, b'\x04' + props(b'\x11\x00\x00\x00\x01')))
s.close()
