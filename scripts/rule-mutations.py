#!/usr/bin/env python3
"""Malformed-rule table: ET Open rules mutated systematically, each judged by Suricata.

Picks ET Open rules deterministically (fixed seed), applies every mutation operator below to
a few rules each (quoting, escaping, terminators, option names and values, header fields,
content modifiers, pcre, flow, threshold, byte_test, unicode, length ...), keeps some rules
unmutated as controls, and runs `suricata -T` on each rule in its own rules file:

    suricata -T -c /etc/suricata/suricata.yaml -S <one-rule file> -l <tmp dir> --init-errors-fatal

A rule is accepted when that exits 0 (Suricata loaded it), rejected otherwise; the first
error line Suricata printed is kept as the reason. The output is a TSV with the columns
`id operator verdict suricata_message rule`, read by `tests/rule_mutations.rs`.

Usage: scripts/rule-mutations.py [--rules DIR] [--out FILE] [--jobs N] [--per-op N]
Re-running it with the same ET Open snapshot and Suricata gives the same table.
"""

import argparse
import concurrent.futures
import glob
import os
import random
import re
import subprocess
import sys
import tempfile

SEED = 20261202
CONTROLS = 40

# ---------------------------------------------------------------- rule helpers


def split_options(rule):
    """(header, [option strings without the `;`]) of a well-formed rule."""
    open_ = rule.index("(")
    header = rule[:open_].strip()
    body = rule[open_ + 1 :].rstrip()
    assert body.endswith(")")
    body = body[:-1]
    opts, cur, i, inq = [], "", 0, False
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            cur += body[i : i + 2]
            i += 2
            continue
        if c == '"':
            inq = not inq
        if c == ";" and not inq:
            opts.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        opts.append(cur.strip())
    return header, opts


def join(header, opts):
    return header + " (" + "; ".join(opts) + ";)"


def name_of(opt):
    return opt.split(":", 1)[0].strip()


def find(opts, name):
    for i, o in enumerate(opts):
        if name_of(o) == name:
            return i
    return None


def with_opts(fn):
    """Operator on (header, opts) -> (header, opts) or None."""

    def op(rule):
        h, o = split_options(rule)
        r = fn(h, list(o))
        if r is None:
            return None
        return join(*r)

    return op


def header_field(idx, new):
    def f(h, o):
        t = h.split()
        if len(t) != 7:
            return None
        v = new(t[idx]) if callable(new) else new
        if v is None:
            return None
        t[idx] = v
        return " ".join(t), o

    return with_opts(f)


def replace_opt(name, new):
    """Replace the value of the first `name` option (new: str or fn(old value))."""

    def f(h, o):
        i = find(o, name)
        if i is None:
            return None
        old = o[i].split(":", 1)[1] if ":" in o[i] else ""
        v = new(old) if callable(new) else new
        if v is None:
            return None
        o[i] = v
        return h, o

    return with_opts(f)


def insert_before(name, text):
    """Insert option `text` before the first `name` option."""

    def f(h, o):
        i = find(o, name)
        if i is None:
            return None
        o.insert(i, text)
        return h, o

    return with_opts(f)


def insert_after(name, text):
    def f(h, o):
        i = find(o, name)
        if i is None:
            return None
        o.insert(i + 1, text)
        return h, o

    return with_opts(f)


def add_before_sid(text):
    return insert_before("sid", text)


def msg_edit(fn):
    def g(old):
        if not (old.startswith('"') and old.endswith('"')) or len(old) < 6:
            return None
        inner = old[1:-1]
        r = fn(inner)
        return None if r is None else "msg:" + r

    return replace_opt("msg", g)


def content_edit(fn):
    def g(old):
        old = old.strip()
        if not (old.startswith('"') and old.endswith('"')) or len(old) < 4:
            return None
        r = fn(old[1:-1])
        return None if r is None else "content:" + r

    return replace_opt("content", g)


def mid(s):
    return len(s) // 2


def drop_semicolon_after(name):
    """Remove the `;` ending the first `name` option (joins it with the next option)."""

    def op(rule):
        h, o = split_options(rule)
        i = find(o, name)
        if i is None or i + 1 >= len(o):
            return None
        o[i] = o[i] + " " + o.pop(i + 1)
        return join(h, o)

    return op


def raw(fn):
    """Operator on the rule text."""
    return fn


# ---------------------------------------------------------------- operators

OPS = {
    # quoting
    "msg_drop_open_quote": msg_edit(lambda s: s + '"'),
    "msg_drop_close_quote": msg_edit(lambda s: '"' + s),
    "msg_unquoted": msg_edit(lambda s: s if '"' not in s and ";" not in s else None),
    "msg_double_open_quote": msg_edit(lambda s: '""' + s + '"'),
    "msg_double_close_quote": msg_edit(lambda s: '"' + s + '""'),
    "msg_stray_quote_inside": msg_edit(lambda s: '"' + s[: mid(s)] + '"' + s[mid(s) :] + '"'),
    "msg_escaped_quote_inside": msg_edit(
        lambda s: '"' + s[: mid(s)] + '\\"' + s[mid(s) :] + '"'
    ),
    "msg_empty": replace_opt("msg", 'msg:""'),
    "msg_space_around_value": msg_edit(lambda s: '  "' + s + '"  '),
    "content_drop_close_quote": content_edit(lambda s: '"' + s),
    "content_unquoted": content_edit(
        lambda s: s if re.fullmatch(r"[A-Za-z0-9._/-]+", s) else None
    ),
    "content_stray_quote_inside": content_edit(
        lambda s: '"' + s[: mid(s)] + '"' + s[mid(s) :] + '"'
    ),
    "content_escaped_quote_inside": content_edit(
        lambda s: '"' + s[: mid(s)] + '\\"' + s[mid(s) :] + '"' if "|" not in s else None
    ),
    "flow_quoted": replace_opt("flow", lambda v: 'flow:"' + v.strip() + '"'),
    "depth_quoted": replace_opt("depth", lambda v: 'depth:"' + v.strip() + '"'),
    "sid_quoted": replace_opt("sid", lambda v: 'sid:"' + v.strip() + '"'),
    "classtype_quoted": replace_opt("classtype", lambda v: 'classtype:"' + v.strip() + '"'),
    "reference_quoted": replace_opt("reference", lambda v: 'reference:"' + v.strip() + '"'),
    "pcre_unquoted": replace_opt(
        "pcre", lambda v: "pcre:" + v.strip()[1:-1] if v.strip().startswith('"') else None
    ),
    # terminators and escapes
    "drop_semicolon_after_msg": drop_semicolon_after("msg"),
    "drop_semicolon_after_flow": drop_semicolon_after("flow"),
    "drop_semicolon_after_content": drop_semicolon_after("content"),
    "drop_semicolon_after_classtype": drop_semicolon_after("classtype"),
    "drop_last_semicolon": raw(lambda r: r[: r.rindex(";")] + r[r.rindex(";") + 1 :]),
    "semicolon_in_msg": msg_edit(lambda s: '"' + s[: mid(s)] + ";" + s[mid(s) :] + '"'),
    "escaped_semicolon_in_msg": msg_edit(lambda s: '"' + s[: mid(s)] + "\\;" + s[mid(s) :] + '"'),
    "semicolon_in_content": content_edit(lambda s: '"' + s[: mid(s)] + ";" + s[mid(s) :] + '"'
                                         if "|" not in s else None),
    "escaped_semicolon_in_content": content_edit(
        lambda s: '"' + s[: mid(s)] + "\\;" + s[mid(s) :] + '"' if "|" not in s else None
    ),
    "semicolon_in_flow": replace_opt("flow", lambda v: "flow:" + v.replace(",", ";,", 1)
                                     if "," in v else None),
    "escaped_semicolon_in_flow": replace_opt("flow", lambda v: "flow:" + v.replace(",", "\\;,", 1)
                                             if "," in v else None),
    "empty_option": add_before_sid(""),
    "colon_without_value": add_before_sid("rev:"),
    "space_before_colon": replace_opt("msg", lambda v: "msg :" + v),
    "uppercase_keyword": replace_opt("msg", lambda v: "MSG:" + v),
    "backslash_at_end_of_msg": msg_edit(lambda s: '"' + s + '\\"'),
    # unknown names
    "unknown_keyword": add_before_sid("frobnicate"),
    "unknown_keyword_with_value": add_before_sid("frobnicate:1"),
    "misspelled_keyword": replace_opt("classtype", lambda v: "clastype:" + v),
    "unknown_flow_option": replace_opt("flow", lambda v: "flow:" + v.strip() + ",to_sever"),
    "conflicting_flow_options": replace_opt("flow", "flow:to_server,to_client"),
    "flow_duplicate_option": replace_opt("flow", "flow:established,established"),
    "unknown_classtype": replace_opt("classtype", "classtype:no-such-class"),
    "unknown_reference_type": replace_opt("reference", "reference:nosuchtype,example.com"),
    "unknown_flowbits_command": replace_opt("flowbits", "flowbits:toggle,foo"),
    "flowbits_missing_name": replace_opt("flowbits", "flowbits:set"),
    "unknown_metadata_form": replace_opt("metadata", "metadata:nospace"),
    "flags_bad_letter": add_before_sid("flags:Z"),
    # modifiers
    "nocase_without_content": insert_before("content", "nocase"),
    "nocase_with_value": insert_after("content", "nocase:1"),
    "depth_zero": insert_after("content", "depth:0"),
    "depth_negative": insert_after("content", "depth:-5"),
    "depth_huge": insert_after("content", "depth:99999999999"),
    "offset_negative": insert_after("content", "offset:-1"),
    "offset_not_a_number": insert_after("content", "offset:abc"),
    "within_before_content": insert_before("content", "within:10"),
    "distance_before_content": insert_before("content", "distance:1"),
    "depth_and_within": insert_after("content", "depth:10; within:10"),
    "depth_twice": insert_after("content", "depth:10; depth:20"),
    "depth_smaller_than_content": insert_after("content", "depth:1"),
    "fast_pattern_twice": insert_after("content", "fast_pattern; fast_pattern"),
    "fast_pattern_without_content": insert_before("content", "fast_pattern"),
    "content_empty": replace_opt("content", 'content:""'),
    "content_negated_empty": replace_opt("content", 'content:!""'),
    "content_negated": replace_opt("content", lambda v: "content:!" + v.strip()),
    "content_bad_hex": content_edit(lambda s: '"' + s + '|4G|"'),
    "content_unterminated_hex": content_edit(lambda s: '"' + s + '|41"'),
    "content_odd_hex": content_edit(lambda s: '"' + s + '|414|"'),
    "content_double_negation": replace_opt("content", lambda v: "content:!!" + v.strip()),
    # header
    "bad_action": header_field(0, "alrt"),
    "bad_protocol": header_field(1, "tcpx"),
    "src_unterminated_bracket": header_field(2, "[1.2.3.4"),
    "src_negated_any": header_field(2, "!any"),
    "src_undefined_var": header_field(2, "$UNDEF_NET"),
    "src_bad_cidr": header_field(2, "1.2.3.4/33"),
    "src_bad_octet": header_field(2, "1.2.3.300"),
    "src_empty_list": header_field(2, "[]"),
    "src_self_negating": header_field(2, "[1.2.3.4,!1.2.3.4]"),
    "src_negated_home": header_field(2, "!$HOME_NET"),
    "src_ipv6": header_field(2, "[2001:db8::/32,10.0.0.0/8]"),
    "src_trailing_comma": header_field(2, "[1.2.3.4,]"),
    "sport_unterminated_bracket": header_field(3, "[80"),
    "sport_too_big": header_field(3, "65536"),
    "sport_negated_any": header_field(3, "!any"),
    "sport_undefined_var": header_field(3, "$UNDEF_PORTS"),
    "sport_reversed_range": header_field(3, "90:80"),
    "sport_open_range": header_field(3, "1024:"),
    "sport_not_a_number": header_field(3, "http"),
    "sport_address_var": header_field(3, "$HOME_NET"),
    "dst_address_port_var": header_field(5, "$HTTP_PORTS"),
    "direction_backwards": header_field(4, "<-"),
    "direction_single": header_field(4, ">"),
    "direction_both": header_field(4, "<>"),
    "missing_dport": raw(lambda r: re.sub(r"^(\S+ \S+ \S+ \S+ \S+ \S+) \S+ \(", r"\1 (", r)),
    # sid, rev, gid, priority
    "missing_sid": with_opts(lambda h, o: (h, [x for x in o if name_of(x) != "sid"])),
    "duplicate_sid": insert_after("sid", "sid:1"),
    "sid_zero": replace_opt("sid", "sid:0"),
    "sid_negative": replace_opt("sid", "sid:-1"),
    "sid_not_a_number": replace_opt("sid", "sid:abc"),
    "sid_huge": replace_opt("sid", "sid:99999999999"),
    "rev_not_a_number": replace_opt("rev", "rev:x"),
    "gid_not_a_number": add_before_sid("gid:x"),
    "priority_out_of_range": add_before_sid("priority:300"),
    "priority_not_a_number": add_before_sid("priority:high"),
    "duplicate_msg": insert_after("msg", 'msg:"second msg"'),
    "duplicate_classtype": insert_after("classtype", "classtype:trojan-activity"),
    # parentheses and trailing text
    "missing_close_paren": raw(lambda r: r.rstrip()[:-1]),
    "missing_open_paren": raw(lambda r: r.replace(" (", " ", 1)),
    "double_close_paren": raw(lambda r: r + ")"),
    "stray_text_after_paren": raw(lambda r: r + " x"),
    "stray_semicolon_after_paren": raw(lambda r: r + ";"),
    "no_options": raw(lambda r: r[: r.index("(")].strip()),
    "empty_options": raw(lambda r: r[: r.index("(")].strip() + " ()"),
    # pcre
    "pcre_unterminated": add_before_sid('pcre:"/abc"'),
    "pcre_bad_flag": add_before_sid('pcre:"/abc/Z"'),
    "pcre_bad_regex": add_before_sid('pcre:"/(abc/"'),
    "pcre_no_slash": add_before_sid('pcre:"abc"'),
    "pcre_negated": add_before_sid('pcre:!"/abc/i"'),
    "pcre_relative_first": add_before_sid('pcre:"/abc/R"'),
    "pcre_existing_unterminated": replace_opt(
        "pcre", lambda v: "pcre:" + v.strip()[: v.strip().rindex("/")] + '"'
        if v.strip().count("/") >= 2 else None
    ),
    # thresholds and counters
    "threshold_missing_seconds": add_before_sid("threshold:type limit, track by_src, count 1"),
    "threshold_bad_type": add_before_sid("threshold:type foo, track by_src, count 1, seconds 60"),
    "threshold_bad_track": add_before_sid("threshold:type limit, track by_foo, count 1, seconds 60"),
    "threshold_valid": add_before_sid("threshold:type limit, track by_src, count 1, seconds 60"),
    "threshold_twice": add_before_sid(
        "threshold:type limit, track by_src, count 1, seconds 60; "
        "threshold:type limit, track by_dst, count 1, seconds 60"
    ),
    "detection_filter_missing_count": add_before_sid("detection_filter:track by_src, seconds 60"),
    "detection_filter_bad_track": add_before_sid(
        "detection_filter:track by_rule2, count 3, seconds 60"
    ),
    "byte_test_too_few_args": add_before_sid("byte_test:4,>"),
    "byte_test_bad_operator": add_before_sid("byte_test:4,~,1,0"),
    "byte_test_too_many_bytes": add_before_sid("byte_test:11,>,1,0"),
    "byte_jump_too_few_args": add_before_sid("byte_jump:4"),
    "byte_extract_bad_name": add_before_sid("byte_extract:4,0,1abc"),
    "isdataat_no_value": add_before_sid("isdataat"),
    "isdataat_bad_value": add_before_sid("isdataat:abc"),
    "dsize_bad": add_before_sid("dsize:>"),
    "dsize_range_reversed": add_before_sid("dsize:10<>5"),
    "ttl_bad": add_before_sid("ttl:300"),
    "itype_bad": add_before_sid("itype:abc"),
    "stream_size_bad": add_before_sid("stream_size:server,>"),
    # unicode and length
    "unicode_in_msg": msg_edit(lambda s: '"' + s + ' \u00e9\u4e2d\U0001f600"'),
    "unicode_in_content": content_edit(lambda s: '"' + s + '\u00e9"' if "|" not in s else None),
    "unicode_keyword": add_before_sid("fl\u00f6w:established"),
    "long_msg_8000": msg_edit(lambda s: '"' + s + "A" * 8000 + '"'),
    "long_msg_2000": msg_edit(lambda s: '"' + s + "A" * 2000 + '"'),
    "long_content_4000": content_edit(lambda s: '"' + "B" * 4000 + '"'),
    "control_character_in_msg": msg_edit(lambda s: '"' + s + '\x01"'),
}

# ---------------------------------------------------------------- corpus and runs


def load_corpus(rules_dir):
    rules = []
    for path in sorted(glob.glob(os.path.join(rules_dir, "*.rules"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if re.match(r"^(alert|drop|pass|reject|rejectsrc|rejectdst|rejectboth) ", line):
                    try:
                        split_options(line)
                    except (AssertionError, ValueError):
                        continue
                    rules.append(line)
    return rules


def build_table(rules, per_op):
    rng = random.Random(SEED)
    pool = rng.sample(rules, min(4000, len(rules)))
    rows = []
    for r in pool[:CONTROLS]:
        rows.append(("control", r))
    seen = set()
    for op_name in sorted(OPS):
        op = OPS[op_name]
        order = pool[:]
        random.Random(f"{SEED}:{op_name}").shuffle(order)
        n = 0
        for r in order:
            try:
                m = op(r)
            except (ValueError, IndexError, AssertionError):
                m = None
            if m is None or m == r or m in seen or "\t" in m or "\n" in m:
                continue
            seen.add(m)
            rows.append((op_name, m))
            n += 1
            if n >= per_op:
                break
        if n == 0:
            print(f"operator {op_name} applied to no rule", file=sys.stderr)
    return rows


def suricata_verdict(args):
    rule, suricata, config = args
    with tempfile.TemporaryDirectory(prefix="rulemut-") as d:
        path = os.path.join(d, "one.rules")
        with open(path, "w", encoding="utf-8") as f:
            f.write(rule + "\n")
        p = subprocess.run(
            [suricata, "-T", "-c", config, "-S", path, "-l", d, "--init-errors-fatal"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=120,
        )
    lines = (p.stdout + p.stderr).splitlines()
    errors = [l for l in lines if l.startswith("E: ")]
    warns = [l for l in lines if l.startswith("W: ")]
    first = (errors or warns or [""])[0]
    first = re.sub(r"^[EW]: [\w-]+: ", "", first)
    # Suricata's message echoes the rule: keep the reason part short and on one line.
    first = first.replace("\t", " ")[:200]
    return ("accept" if p.returncode == 0 else "reject"), first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--rules", default=os.path.join(here, "../../shared/corpus/rules/et-open"))
    ap.add_argument("--out", default=os.path.join(here, "../tests/data/rule-mutations.tsv"))
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--per-op", type=int, default=3)
    ap.add_argument("--suricata", default="suricata")
    ap.add_argument("--config", default="/etc/suricata/suricata.yaml")
    a = ap.parse_args()

    rules = load_corpus(a.rules)
    if not rules:
        sys.exit(f"no rules found in {a.rules}")
    rows = build_table(rules, a.per_op)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        verdicts = list(ex.map(suricata_verdict, [(r, a.suricata, a.config) for _, r in rows]))
    version = subprocess.run([a.suricata, "-V"], capture_output=True, text=True).stdout.strip()
    mutated = sum(1 for op, _ in rows if op != "control")
    rejected = sum(1 for (op, _), (v, _) in zip(rows, verdicts) if op != "control" and v == "reject")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(f"# Made by scripts/rule-mutations.py (seed {SEED}, --per-op {a.per_op}) from "
                f"{len(rules)} ET Open rules; verdicts by: {version}\n")
        f.write(f"# {len(rows)} rules: {len(rows) - mutated} controls, {mutated} mutated "
                f"({rejected} rejected by Suricata), {len(OPS)} operators\n")
        f.write("id\toperator\tsuricata\tsuricata_message\trule\n")
        for i, ((op, r), (v, msg)) in enumerate(zip(rows, verdicts), 1):
            f.write(f"{i}\t{op}\t{v}\t{msg}\t{r}\n")
    print(f"{a.out}: {len(rows)} rules, {mutated} mutated, {rejected} rejected by Suricata")


if __name__ == "__main__":
    main()
