#!/usr/bin/env python3
"""Compare the EVE output of two shrike binaries, record by record.

Used to show that a refactor changes no output: both binaries read the same inputs with the
same rules and config (`--runmode single`, `-k none`, so the run is deterministic), and every
EVE record of every type is compared after sorting. Volatile fields are masked: the whole
`stats` record's timing fields (`uptime`), and nothing else.

Inputs (each run as one shrike process, `-r` on the folder or file):
  zeek   ../shared/corpus/pcaps/zeek
  ndpi   ../shared/corpus/pcaps/ndpi
  mix    a generated HTTP/TLS/DNS mix (../shared/tools/gen-traffic.py, made once under
         bench-out/compare-eve/)

Usage:
  scripts/compare-eve.py --a OLD_BIN --b NEW_BIN [--inputs zeek,ndpi,mix] [--rules FILE...]
                         [--out DIR] [--keep]

Prints, per input, the record count per event_type for both binaries and the number of
records only one side has; exits 1 on any difference. Default rules: every ET Open file in
../shared/corpus/rules/et-open.
"""

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(REPO, "..", "shared")

# Fields whose values depend on wall time or the process, not on the input.
VOLATILE_STATS = ("uptime",)


def mask(rec):
    if rec.get("event_type") == "stats":
        st = rec.get("stats", {})
        for k in VOLATILE_STATS:
            st.pop(k, None)
    return rec


def load(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                out.append({"event_type": "<invalid json>", "line": line})
                continue
            out.append(mask(rec))
    return out


def canon(rec):
    return json.dumps(rec, sort_keys=True, separators=(",", ":"))


def make_mix(workdir):
    path = os.path.join(workdir, "mix.pcap")
    if not os.path.exists(path):
        os.makedirs(workdir, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                os.path.join(SHARED, "tools", "gen-traffic.py"),
                "--mode",
                "mix",
                "-o",
                path,
                "--size-mb",
                "40",
                "--seed",
                "1",
            ],
            check=True,
        )
    return path


def run(binary, inp, rules, outdir, extra):
    os.makedirs(outdir, exist_ok=True)
    cmd = [binary, "-r", inp, "-l", outdir, "-k", "none", "--runmode", "single", "-q"]
    for r in rules:
        cmd += ["-S", r]
    cmd += extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr[-2000:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the binary before")
    ap.add_argument("--b", required=True, help="the binary after")
    ap.add_argument("--inputs", default="zeek,ndpi,mix")
    ap.add_argument("--rules", nargs="*", help="rule files (default: all of ET Open)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-out", "compare-eve"))
    ap.add_argument("--keep", action="store_true", help="keep the EVE files")
    ap.add_argument("--extra", default="", help="extra shrike arguments, space separated")
    a = ap.parse_args()

    rules = a.rules
    if rules is None:
        rules = sorted(glob.glob(os.path.join(SHARED, "corpus", "rules", "et-open", "*.rules")))
    inputs = {}
    for name in a.inputs.split(","):
        if name in ("zeek", "ndpi"):
            inputs[name] = os.path.join(SHARED, "corpus", "pcaps", name)
        elif name == "mix":
            inputs[name] = make_mix(os.path.join(a.out, "inputs"))
        elif os.path.exists(name):
            inputs[os.path.basename(name)] = name
        else:
            sys.exit(f"unknown input {name}")

    tmp = tempfile.mkdtemp(prefix="compare-eve-", dir=a.out if os.path.isdir(a.out) else None)
    jobs = []
    for name, inp in inputs.items():
        for side, binary in (("a", a.a), ("b", a.b)):
            jobs.append((name, side, binary, inp, os.path.join(tmp, name, side)))
    extra = a.extra.split() if a.extra else []
    with ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda j: (j, run(j[2], j[3], rules, j[4], extra)), jobs))
    failed = False
    codes = {}
    for (name, side, binary, _inp, outdir), (rc, err) in results:
        codes.setdefault(name, {})[side] = rc
        if rc != 0:
            last = err.strip().splitlines()[-1:] or [""]
            print(f"{name}/{side}: exit status {rc} ({last[0][:160]})")
    for name, c in codes.items():
        if c.get("a") != c.get("b"):
            print(f"{name}: exit status differs: {c}")
            failed = True

    print(f"{'input':<6} {'event_type':<14} {'a':>9} {'b':>9} {'only a':>7} {'only b':>7}")
    for name in inputs:
        ra = load(os.path.join(tmp, name, "a", "eve.json"))
        rb = load(os.path.join(tmp, name, "b", "eve.json"))
        ca = collections.Counter(canon(r) for r in ra)
        cb = collections.Counter(canon(r) for r in rb)
        types = sorted({r.get("event_type", "?") for r in ra + rb})
        for t in types:
            na = sum(1 for r in ra if r.get("event_type") == t)
            nb = sum(1 for r in rb if r.get("event_type") == t)
            only_a = sum(
                (ca[k] - cb.get(k, 0))
                for k in ca
                if ca[k] > cb.get(k, 0) and json.loads(k).get("event_type") == t
            )
            only_b = sum(
                (cb[k] - ca.get(k, 0))
                for k in cb
                if cb[k] > ca.get(k, 0) and json.loads(k).get("event_type") == t
            )
            if only_a or only_b:
                failed = True
            print(f"{name:<6} {t:<14} {na:>9} {nb:>9} {only_a:>7} {only_b:>7}")
        for f in ("fast.log",):
            fa = os.path.join(tmp, name, "a", f)
            fb = os.path.join(tmp, name, "b", f)
            if os.path.exists(fa) or os.path.exists(fb):
                la = sorted(open(fa, errors="replace").read().splitlines()) if os.path.exists(fa) else []
                lb = sorted(open(fb, errors="replace").read().splitlines()) if os.path.exists(fb) else []
                same = la == lb
                failed |= not same
                print(f"{name:<6} {f:<14} {len(la):>9} {len(lb):>9} {'same' if same else 'DIFFERENT':>15}")
    if a.keep:
        print(f"EVE files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print("IDENTICAL" if not failed else "DIFFERENT")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
