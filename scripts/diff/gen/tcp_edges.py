#!/usr/bin/env python3
"""Edge-case TCP sessions for the stream engine, one capture per case.

Writes into OUT (default bench-out/gen/tcp-edges) one pcap per case below, plus
`tcp-edges.yaml` (the stock /etc/suricata/suricata.yaml with anomaly records for decoder
and stream events and alert payloads printed) and `tcp-edges.rules` (an alert on "ZZEND"
anywhere to port 7777, packet or stream, and on a few stream events). Compare the engines:

  python3 scripts/diff/suricata-diff.py --shrike target/release/shrike --pcaps OUT \\
      --config OUT/tcp-edges.yaml --rules OUT/tcp-edges.rules --out OUT/diff

Cases (client 10.0.0.1, server 10.0.0.2:7777; every one deterministic):

  rst-with-data        data on the client's RST after the handshake
  rst-then-data        the client resets, then sends more data
  fin-with-data        data on the client's FIN
  data-after-fin       data after the client's FIN was acknowledged
  syn-with-data        data on the SYN (TCP Fast Open style), then a normal session
  synack-with-data     data on the server's SYN-ACK
  data-before-ack      client data before the handshake's final ACK
  no-synack            SYN, then client data, no SYN-ACK seen (async / one side)
  midstream            a session without its handshake (stream.midstream is off)
  bad-ack              the client acknowledges data the server never sent
  ack-unseen-data      the server acknowledges client data beyond what was captured (a gap)
  window-zero          the server advertises window 0; the client sends anyway
  beyond-window        the client sends past the server's advertised window
  urgent               data with URG and an urgent pointer
  ts-backwards         timestamps option going backwards (PAWS) on a data segment
  port-reuse           a closed session, then a new SYN on the same ports with another ISN
  syn-retransmit-isn   a second SYN with another ISN before the SYN-ACK
  four-way-close       both FINs and ACKs, then a late retransmission
  rst-bad-seq          an RST whose sequence number is outside the window
  small-segments       the marker split into 1-byte segments, out of order
  server-fin-unacked   the server answers and closes; the client acknowledges the data but
                       not the FIN, sends its own FIN, the server's ACK of it carries the
                       sequence number after its FIN (Suricata's CLOSING: wrong seq), the
                       client resends its FIN and finally acknowledges (marker from server)
  simultaneous-close   both FINs cross, then both ACKs (marker from server)
"""

import argparse
import os
import re
import struct

A = bytes([10, 0, 0, 1])
B = bytes([10, 0, 0, 2])
T0 = 1_700_000_000
CP, SP = 40000, 7777

FIN, SYN, RST, PSH, ACK, URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0x4000, 64, proto, 0, src, dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def tcp(src, dst, sp, dp, seq, ack, flags, data=b"", win=65535, urp=0, opts=b""):
    while len(opts) % 4:
        opts += b"\x01"
    off = (20 + len(opts)) // 4
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4, flags, win, 0, urp)
    seg += opts + data
    ph = src + dst + struct.pack("!BBH", 0, 6, len(seg))
    c = csum(ph + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def eth(ip):
    return b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00" + ip


def write(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, frame in pkts:
            sec = int(t)
            usec = int(round((t - sec) * 1_000_000))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)


class Conv:
    """A client/server conversation with explicit sequence numbers."""

    def __init__(self, cisn=1000, sisn=5000, cport=CP):
        self.pkts = []
        self.t = T0
        self.c = cisn  # next client seq
        self.s = sisn  # next server seq
        self.cport = cport

    def _add(self, fwd, seq, ack, flags, data=b"", **kw):
        self.t += 0.01
        s, d, sp, dp = (A, B, self.cport, SP) if fwd else (B, A, SP, self.cport)
        self.pkts.append((self.t, eth(ipv4(s, d, 6, tcp(s, d, sp, dp, seq, ack, flags, data, **kw)))))

    def cli(self, flags, data=b"", seq=None, ack=None, **kw):
        seq = self.c if seq is None else seq
        self._add(True, seq, self.s if ack is None else ack, flags, data, **kw)
        if seq == self.c:
            self.c += len(data) + (1 if flags & (SYN | FIN) else 0)

    def srv(self, flags, data=b"", seq=None, ack=None, **kw):
        seq = self.s if seq is None else seq
        self._add(False, seq, self.c if ack is None else ack, flags, data, **kw)
        if seq == self.s:
            self.s += len(data) + (1 if flags & (SYN | FIN) else 0)

    def handshake(self):
        self.cli(SYN, ack=0)
        self.srv(SYN | ACK)
        self.cli(ACK)

    def close(self):
        self.cli(FIN | ACK)
        self.srv(FIN | ACK)
        self.cli(ACK)


def cases():
    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"hello ")
    c.srv(ACK)
    c.cli(RST | ACK, b"ZZEND in rst")
    yield "rst-with-data", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"hello ")
    c.srv(ACK)
    c.cli(RST | ACK)
    c.cli(PSH | ACK, b"ZZEND after rst")
    yield "rst-then-data", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"hello ")
    c.srv(ACK)
    c.cli(FIN | PSH | ACK, b"ZZEND on fin")
    c.srv(FIN | ACK)
    c.cli(ACK)
    yield "fin-with-data", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"hello ")
    c.cli(FIN | ACK)
    c.srv(ACK)
    c.cli(PSH | ACK, b"ZZEND after fin")
    c.srv(FIN | ACK)
    yield "data-after-fin", c

    c = Conv()
    c.cli(SYN, b"ZZEND on syn", ack=0)
    c.c -= len(b"ZZEND on syn")  # the server does not take SYN data
    c.srv(SYN | ACK)
    c.cli(ACK)
    c.cli(PSH | ACK, b"normal data")
    c.srv(ACK)
    c.close()
    yield "syn-with-data", c

    c = Conv()
    c.cli(SYN, ack=0)
    c.srv(SYN | ACK, b"ZZEND on synack")
    c.cli(ACK)
    c.srv(PSH | ACK, b"more")
    c.cli(ACK)
    c.close()
    yield "synack-with-data", c

    c = Conv()
    c.cli(SYN, ack=0)
    c.srv(SYN | ACK)
    c.cli(PSH | ACK, b"early ZZEND data")
    c.srv(ACK)
    c.close()
    yield "data-before-ack", c

    c = Conv()
    c.cli(SYN, ack=0)
    c.s += 1
    c.cli(ACK)
    c.cli(PSH | ACK, b"one-sided ZZEND")
    c.cli(PSH | ACK, b"more one-sided")
    c.cli(FIN | ACK)
    yield "no-synack", c

    c = Conv()
    c.cli(PSH | ACK, b"midstream ZZEND")
    c.srv(ACK)
    c.srv(PSH | ACK, b"reply")
    c.cli(ACK)
    c.close()
    yield "midstream", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"hello ZZEND", ack=c.s + 100000)
    c.srv(ACK)
    c.close()
    yield "bad-ack", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"part one ")
    c.c += 500  # 500 bytes never captured
    c.cli(PSH | ACK, b"ZZEND after gap")
    c.srv(ACK)
    c.close()
    yield "ack-unseen-data", c

    c = Conv()
    c.handshake()
    c.srv(ACK, win=0)
    c.cli(PSH | ACK, b"into zero window ZZEND")
    c.srv(ACK, win=0)
    c.srv(ACK, win=65535)
    c.close()
    yield "window-zero", c

    c = Conv()
    c.cli(SYN, ack=0)
    c.srv(SYN | ACK, win=10)
    c.cli(ACK)
    c.cli(PSH | ACK, b"0123456789" * 3 + b"ZZEND beyond")
    c.srv(ACK, win=10)
    c.close()
    yield "beyond-window", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK | URG, b"uZZEND urgent", urp=1)
    c.srv(ACK)
    c.close()
    yield "urgent", c

    def ts(v, e):
        return b"\x01\x01\x08\x0a" + struct.pack("!II", v, e)

    c = Conv()
    c.cli(SYN, ack=0, opts=ts(1000, 0))
    c.srv(SYN | ACK, opts=ts(5000, 1000))
    c.cli(ACK, opts=ts(1001, 5000))
    c.cli(PSH | ACK, b"fresh ", opts=ts(1002, 5000))
    c.cli(PSH | ACK, b"old ts ZZEND", opts=ts(900, 5000))
    c.srv(ACK, opts=ts(5001, 1002))
    c.close()
    yield "ts-backwards", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"first session")
    c.srv(ACK)
    c.close()
    c.t += 1
    d = Conv(cisn=900000, sisn=700000)
    d.t = c.t
    d.handshake()
    d.cli(PSH | ACK, b"second ZZEND session")
    d.srv(ACK)
    d.close()
    c.pkts += d.pkts
    yield "port-reuse", c

    c = Conv()
    c.cli(SYN, ack=0)
    c.c = 3000
    c.cli(SYN, ack=0)
    c.srv(SYN | ACK)
    c.cli(ACK)
    c.cli(PSH | ACK, b"after second syn ZZEND")
    c.srv(ACK)
    c.close()
    yield "syn-retransmit-isn", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"ZZEND closing")
    c.srv(ACK)
    c.close()
    c.cli(PSH | ACK, b"ZZEND closing", seq=c.c - 1 - len(b"ZZEND closing"))
    yield "four-way-close", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"before ZZEND")
    c.cli(RST | ACK, seq=c.c + 10_000_000)
    c.srv(ACK)
    c.cli(PSH | ACK, b"still alive")
    c.srv(ACK)
    c.close()
    yield "rst-bad-seq", c

    c = Conv()
    c.handshake()
    base = c.c
    word = b"xxZZENDyy"
    for i in [0, 2, 1, 4, 3, 6, 5, 8, 7]:
        c.cli(PSH | ACK, word[i : i + 1], seq=base + i)
    c.c = base + len(word)
    c.srv(ACK)
    c.close()
    yield "small-segments", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"login")
    c.srv(PSH | ACK, b"ZZSRV not allowed")
    data_end = c.s
    c.srv(FIN | ACK)
    c.cli(ACK, ack=data_end)
    c.cli(FIN | ACK, ack=data_end)
    c.srv(ACK)
    c.cli(FIN | ACK, seq=c.c - 1, ack=data_end)
    c.cli(ACK)
    yield "server-fin-unacked", c

    c = Conv()
    c.handshake()
    c.cli(PSH | ACK, b"query")
    c.srv(PSH | ACK, b"ZZSRV answer")
    c.cli(ACK)
    cfin = c.c
    c.cli(FIN | ACK)
    c.srv(FIN | ACK, ack=cfin)
    c.cli(ACK)
    c.srv(ACK)
    yield "simultaneous-close", c


def config(out):
    src = open("/etc/suricata/suricata.yaml").read()
    src = src.replace("            # payload-printable: yes", "            payload-printable: yes", 1)
    # Anomaly records for decoder and stream events as well as app-layer ones.
    src = re.sub(r"(?m)^(\s+)# decode: no$", r"\1decode: yes", src, count=1)
    src = re.sub(r"(?m)^(\s+)# stream: no$", r"\1stream: yes", src, count=1)
    with open(os.path.join(out, "tcp-edges.yaml"), "w") as f:
        f.write(src)
    with open(os.path.join(out, "tcp-edges.rules"), "w") as f:
        f.write('alert tcp any any -> any 7777 (msg:"marker"; content:"ZZEND"; sid:1;)\n')
        f.write('alert tcp any any -> any any (msg:"stream event"; stream-event:pkt_invalid_ack; sid:2;)\n')
        f.write('alert tcp any any -> any any (msg:"rst invalid"; stream-event:rst_invalid_ack; sid:3;)\n')
        f.write('alert tcp any 7777 -> any any (msg:"server marker"; flow:from_server; content:"ZZSRV"; sid:4;)\n')


def expected(out, suricata):
    """Runs Suricata on every capture with the config and rules and writes what
    tests/tcp_edges_fidelity.rs compares (`suricata-7.0.10.json`)."""
    import json
    import subprocess
    import tempfile

    res = {}
    for name in sorted(f for f in os.listdir(out) if f.endswith(".pcap")):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(
                [suricata, "-c", os.path.join(out, "tcp-edges.yaml"), "-k", "none", "--runmode", "single",
                 "-r", os.path.join(out, name), "-S", os.path.join(out, "tcp-edges.rules"), "-l", d,
                 "--set", "unix-command.enabled=no"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, TZ="UTC"),
            )
            recs = [json.loads(l) for l in open(os.path.join(d, "eve.json")) if l.strip()]
        ts = lambda r: r["timestamp"][11:26]
        res[name] = {
            "alert": [[ts(r), r["alert"]["signature_id"], r.get("stream", 0)] for r in recs if r["event_type"] == "alert"],
            "anomaly": [[ts(r), r["anomaly"]["event"]] for r in recs if r["event_type"] == "anomaly"],
            "flow": [[r["flow"]["state"], r.get("tcp", {}).get("state"), r["flow"]["pkts_toserver"], r["flow"]["pkts_toclient"]]
                     for r in recs if r["event_type"] == "flow"],
        }
    with open(os.path.join(out, "suricata-7.0.10.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench-out/gen/tcp-edges")
    ap.add_argument("--suricata", help="also run this Suricata 7.0.10 and write suricata-7.0.10.json")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, conv in cases():
        write(os.path.join(a.out, name + ".pcap"), conv.pkts)
        print(f"{name}.pcap: {len(conv.pkts)} packets")
    config(a.out)
    if a.suricata:
        expected(a.out, a.suricata)


if __name__ == "__main__":
    main()
