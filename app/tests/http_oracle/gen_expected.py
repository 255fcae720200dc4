#!/usr/bin/env python3
"""Regenerates expected.json: what Suricata 7 (libhtp 0.5.50) makes of each case.

Needs `suricata` (7.0.x, with Lua) on the PATH. Each case is a TCP conversation; the
script writes a pcap (mkpcap.py), runs Suricata with a Lua output script that dumps
libhtp's view of every transaction (hex), collects EVE `http` objects and `anomaly`
events, and stores it all per case. app/tests/http_oracle.rs replays the cases through
shrike's parser and compares. Run: python3 gen_expected.py (from any directory).
"""
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

LUA = r'''
function init(args)
    local needs = {}
    needs["protocol"] = "http"
    return needs
end
local function hex(s)
    if s == nil then return "-" end
    return (s:gsub(".", function(c) return string.format("%02x", string.byte(c)) end))
end
function setup(args)
    file = assert(io.open(SCLogPath() .. "/http_oracle.log", "w"))
end
function log(args)
    local ipver, srcip, dstip, proto, sp, dp = SCFlowTuple()
    local t = {}
    t[#t+1] = "sp=" .. tostring(sp)
    t[#t+1] = "uri_raw=" .. hex(HttpGetRequestUriRaw())
    t[#t+1] = "uri_norm=" .. hex(HttpGetRequestUriNormalized())
    t[#t+1] = "req_line=" .. hex(HttpGetRequestLine())
    t[#t+1] = "resp_line=" .. hex(HttpGetResponseLine())
    t[#t+1] = "host=" .. hex(HttpGetRequestHost())
    t[#t+1] = "raw_req_hdrs=" .. hex(HttpGetRawRequestHeaders())
    t[#t+1] = "raw_resp_hdrs=" .. hex(HttpGetRawResponseHeaders())
    local function body(f)
        local ok, a = pcall(f)
        if not ok or a == nil then return "-" end
        if type(a) == "table" then return hex(table.concat(a, "")) end
        return hex(a)
    end
    t[#t+1] = "req_body=" .. body(HttpGetRequestBody)
    t[#t+1] = "resp_body=" .. body(HttpGetResponseBody)
    file:write(table.concat(t, " ") .. "\n")
    file:flush()
end
function deinit(args)
    file:close()
end
'''

YAML = '''%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "any"
    EXTERNAL_NET: "any"
  port-groups:
    HTTP_PORTS: "80"
default-log-dir: {out}
outputs:
  - eve-log:
      enabled: yes
      filetype: regular
      filename: eve.json
      types:
        - anomaly:
            enabled: yes
            types:
              decode: no
              stream: no
              applayer: yes
        - http:
            extended: yes
            dump-all-headers: both
  - lua:
      enabled: yes
      scripts-dir: {dir}
      scripts:
        - http.lua
app-layer:
  protocols:
    http:
      enabled: yes
      libhtp:
        default-config:
          personality: IDS
          request-body-limit: 100kb
          response-body-limit: 100kb
          double-decode-path: no
          double-decode-query: no
stream:
  checksum-validation: no
  reassembly:
    depth: 1mb
'''

RULES = ('alert http any any -> any any (http.request_body; content:"NEVERMATCH1"; sid:1;)\n'
         'alert http any any -> any any (file.data; content:"NEVERMATCH2"; sid:2;)\n')

R0 = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


def get(uri, extra=""):
    return "GET %s HTTP/1.1\r\nHost: h\r\n%s\r\n" % (uri, extra)


def cases():
    c = []
    gz = gzip.compress(b"hello gzip world " * 20)
    zl = zlib.compress(b"zlib body " * 10)
    raw = zlib.compress(b"raw deflate body", 9)[2:-4]
    # URI normalisation
    for u in ["/a/b/../c/./d//e%41%2f?x=1+2%20&y#frag", "/.", "/..", "/a/..", "/a/.",
              "./a", "/a/b/..", "/../x", "mid/content=5/../6", "/%2e%2e/x", "/a%5cb",
              "/caf%C3%A9", "/caf\xe9x", "/x\xc3", "/%u0041%uff0f", "/%uzzzz", "/%4", "/%zz",
              "/a?b+c%2Bd%u0041", "/a#f%41%u0042+", "/%00x", "/a//b///c", "/\\\\x",
              "/%c0%af", "/\xed\xa0\x80", "*", "http://h", "http://h?q", "http:foo", "a:b/c",
              "http://User:Pw@WWW.Abs.COM.:81/P%41th?q=%41", "http://[::1]:8080/v6",
              "http://h%41st/", "/p?%uD800%zz%%41", "/%E4%BD%A0%E5%A5%BD"]:
        c.append(("uri " + u, [("c", get(u)), ("s", R0)]))
    # Host header
    for hn in ["WWW.Example.COM.:8080", "WWW.Example.COM.", "www.x.com:80", "[::1]:80",
               " sp.com ", "a b.com", "x.com:abc", "", "x.com:0", "x.com:65536", "[::1", "a..b"]:
        c.append(("host " + hn, [("c", "GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % hn), ("s", R0)]))
    c.append(("host ambiguous", [("c", "GET http://a.com/ HTTP/1.1\r\nHost: b.com\r\n\r\n"), ("s", R0)]))
    c.append(("host same", [("c", "GET http://A.com:80/ HTTP/1.1\r\nHost: a.com:80\r\n\r\n"), ("s", R0)]))
    c.append(("host port differs", [("c", "GET http://a.com:81/ HTTP/1.1\r\nHost: a.com:80\r\n\r\n"), ("s", R0)]))
    # Request lines
    for rl in ["GET\t/t HTTP/1.1", "GET /t\tHTTP/1.1", "  GET /lw HTTP/1.1", "GET /ts HTTP/1.1 ",
               "GET /a b HTTP/1.1", "GET  /two HTTP/1.1", "get /lower HTTP/1.1", "FOO /m HTTP/1.1",
               "GET / HTTP/1.2", "GET / http/1.1", "GET / HTTP/1.10"]:
        c.append(("reqline " + rl, [("c", rl + "\r\nHost: h\r\n\r\n"), ("s", R0)]))
    c.append(("http09", [("c", "GET /nine\r\n"), ("s", "hello 0.9 body")]))
    c.append(("http09 method only", [("c", "GET\r\n"), ("s", "body")]))
    c.append(("missing protocol", [("c", "GET /mp\r\nHost: h\r\n\r\n"), ("s", R0)]))
    c.append(("garbage request", [("c", "xyz\r\n"), ("s", "x")]))
    c.append(("empty lines before", [("c", "\r\n\r\nGET /el HTTP/1.1\r\nHost: h\r\n\r\n"), ("s", R0)]))
    c.append(("bare lf", [("c", "GET /lf HTTP/1.1\nHost: h\nA: b\n\n"), ("s", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx")]))
    # Headers
    c.append(("dup headers", [("c", get("/", "User-Agent: ua1\r\nUser-Agent: ua2\r\nA: 1\r\na: 2\r\n")), ("s", R0)]))
    c.append(("folding", [("c", get("/", "X-Fold: a\r\n   b\r\n\tc\r\nY: z\r\n")), ("s", "HTTP/1.1 200 OK\r\nX-R: 1\r\n 2\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("bad folding", [("c", "GET / HTTP/1.1\r\n folded: v\r\nHost: h\r\n\r\n"), ("s", R0)]))
    c.append(("missing colon", [("c", get("/", "NoColonHere\r\n")), ("s", "HTTP/1.1 200 OK\r\nBad Line\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("empty name", [("c", get("/", ": v\r\n")), ("s", R0)]))
    c.append(("lws after name", [("c", get("/", "Ab : v\r\nCd\t: w\r\n")), ("s", "HTTP/1.1 200 OK\r\nSrv\t: x\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("non token name", [("c", get("/", "A(b: v\r\n")), ("s", R0)]))
    c.append(("nul in value", [("c", get("/", "X: ab\x00cd\r\n")), ("s", R0)]))
    c.append(("empty value", [("c", get("/", "User-Agent:\r\nCookie: \r\n")), ("s", R0)]))
    c.append(("cookies", [("c", get("/", "Cookie: a=1\r\nCookie: b=2\r\nAccept: */*\r\n")), ("s", "HTTP/1.1 200 OK\r\nSet-Cookie: s=1\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("dup cl same", [("c", get("/", "Content-Length: 0\r\ncontent-length: 0\r\n")), ("s", R0)]))
    c.append(("dup cl differ", [("c", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\nX"), ("s", R0)]))
    c.append(("no host 1.1", [("c", "GET / HTTP/1.1\r\n\r\n"), ("s", R0)]))
    c.append(("no host 1.0", [("c", "GET / HTTP/1.0\r\n\r\n"), ("s", R0)]))
    c.append(("auth unknown", [("c", get("/", "Authorization: NTLM abc\r\n")), ("s", R0)]))
    # Bodies
    c.append(("post cl", [("c", "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"), ("s", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")]))
    c.append(("cl junk", [("c", "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: x5y\r\n\r\nhello"), ("s", "HTTP/1.1 200 OK\r\nContent-Length: 3 ; z\r\n\r\nabc")]))
    c.append(("chunked", [("c", "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nTrail: t\r\n\r\n"),
                          ("s", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")]))
    c.append(("chunked 1.0", [("c", "POST /p HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"),
                              ("s", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n")]))
    c.append(("chunked abnormal te", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n")]))
    c.append(("chunked with cl", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n2\r\nok\r\n0\r\n\r\n")]))
    c.append(("invalid resp chunk", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nrest of body")]))
    c.append(("resp until close", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\n\r\nall the rest")]))
    c.append(("resp invalid cl", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nbody")]))
    c.append(("head", [("c", "HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
                       ("s", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")]))
    c.append(("204 304", [("c", get("/a") + get("/b")), ("s", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n")]))
    c.append(("100 continue", [("c", "POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"),
                               ("s", "HTTP/1.1 100 Continue\r\nX: y\r\n\r\n"), ("c", "data"), ("s", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")]))
    c.append(("100 twice", [("c", get("/")), ("s", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("gzip", [("c", get("/")), ("s", b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(gz) + gz)]))
    c.append(("deflate zlib", [("c", get("/")), ("s", b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n" % len(zl) + zl)]))
    c.append(("deflate raw", [("c", get("/")), ("s", b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n" % len(raw) + raw)]))
    c.append(("gzip broken", [("c", get("/")), ("s", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!")]))
    c.append(("gzip request", [("c", b"POST / HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(gz) + gz), ("s", R0)]))
    c.append(("gzip chunked", [("c", get("/")), ("s", b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % 10 + gz[:10] + b"\r\n%x\r\n" % (len(gz) - 10) + gz[10:] + b"\r\n0\r\n\r\n")]))
    # Status lines
    for sl in ["HTTP/1.1 2X0 OK", "HTTP/1.1 abc OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/2.5 200 OK",
               "HTTP/1.1 200", "HTTP/1.1", "  HTTP/1.1 200 OK", "HTTP/1.1  404   Not  Found ", "http/1.1 200 ok"]:
        c.append(("status " + sl, [("c", get("/")), ("s", sl + "\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("resp as body", [("c", get("/")), ("s", "garbage line\r\nmore\r\n")]))
    # Pipelining and pairing
    c.append(("pipelined", [("c", get("/1") + get("/2") + "POST /3 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nxy"),
                            ("s", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na" "HTTP/1.1 404 NF\r\nContent-Length: 1\r\n\r\nb" "HTTP/1.1 201 C\r\nContent-Length: 0\r\n\r\n")]))
    c.append(("response without request", [("s", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz")]))
    c.append(("extra response", [("c", get("/1")), ("s", R0 + R0)]))
    # CONNECT and upgrades
    c.append(("connect ok", [("c", "CONNECT www.x.com:443 HTTP/1.1\r\nHost: www.x.com:443\r\n\r\n"), ("s", "HTTP/1.1 200 Connection established\r\n\r\n"),
                             ("c", "\x16\x03\x01\x00\x05hello"), ("s", "\x16\x03\x03\x00\x02hi")]))
    c.append(("connect denied", [("c", "CONNECT www.x.com:443 HTTP/1.1\r\nHost: www.x.com:443\r\n\r\n"), ("s", "HTTP/1.1 407 Proxy Auth\r\nContent-Length: 0\r\n\r\n"),
                                 ("c", get("/after")), ("s", R0)]))
    c.append(("upgrade 101", [("c", get("/ws", "Upgrade: websocket\r\nConnection: Upgrade\r\n")), ("s", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"),
                              ("c", "\x81\x85abcdxxxxx")]))
    return c


def h(x):
    return x.encode("latin1") if isinstance(x, str) else x


def main():
    write(cases(), os.path.join(HERE, "expected.json"))
    sys.path.insert(0, HERE)
    import corpus_flows
    corpus = corpus_flows.corpus_cases("/work/shared/corpus/pcaps", max_flows_per_file=3, max_total=80)
    corpus = [(n, s) for n, s in corpus if sum(len(x) for _, x in s) <= 16384]
    write(corpus, os.path.join(HERE, "corpus_expected.json"))


def write(cs, out_path):
    tmp = tempfile.mkdtemp()
    try:
        outd = os.path.join(tmp, "out")
        os.mkdir(outd)
        open(os.path.join(tmp, "http.lua"), "w").write(LUA)
        open(os.path.join(tmp, "suri.yaml"), "w").write(YAML.format(out=outd, dir=tmp))
        open(os.path.join(tmp, "t.rules"), "w").write(RULES)
        spec = [{"name": n, "segs": [[d, h(x).hex()] for d, x in segs]} for n, segs in cs]
        json.dump(spec, open(os.path.join(tmp, "cases.json"), "w"))
        subprocess.run([sys.executable, os.path.join(HERE, "mkpcap.py"), os.path.join(tmp, "cases.json"),
                        os.path.join(tmp, "cases.pcap")], check=True)
        subprocess.run(["suricata", "-c", os.path.join(tmp, "suri.yaml"), "-r", os.path.join(tmp, "cases.pcap"),
                        "-S", os.path.join(tmp, "t.rules"), "-k", "none", "--runmode", "single", "-l", outd],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        res = collections.defaultdict(lambda: {"tx": [], "eve": {}, "events": collections.defaultdict(set)})
        for line in open(os.path.join(outd, "http_oracle.log")):
            kv = dict(p.split("=", 1) for p in line.split())
            i = int(kv.pop("sp")) - 10000
            res[i]["tx"].append(kv)
        for line in open(os.path.join(outd, "eve.json")):
            e = json.loads(line)
            if "src_port" not in e:
                continue
            sp = e["src_port"] if e["src_port"] != 80 else e["dest_port"]
            i = sp - 10000
            if e["event_type"] == "http":
                res[i]["eve"][e["tx_id"]] = e["http"]
            elif e["event_type"] == "anomaly" and e["anomaly"].get("app_proto") == "http":
                tid = e.get("tx_id")
                if tid is not None:
                    res[i]["events"][tid].add(e["anomaly"]["event"].lower())
        out = []
        for i, (name, segs) in enumerate(cs):
            r = res[i]
            txs = []
            for n, kv in enumerate(r["tx"]):
                kv = dict(kv)
                kv["eve"] = r["eve"].get(n)
                kv["events"] = sorted(r["events"].get(n, set()))
                txs.append(kv)
            out.append({"name": name, "segs": [[d, h(x).hex()] for d, x in segs], "txs": txs})
        json.dump(out, open(out_path, "w"), indent=0, sort_keys=True)
        print("wrote", out_path, len(out), "cases")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
