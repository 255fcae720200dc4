#!/usr/bin/env python3
"""Regenerate src/suricata_keys.txt: every key path a Suricata 7 suricata.yaml may hold.

Sources (all genuine Suricata configuration):
  1. Suricata 7.0.10's suricata.yaml.in, its keys and its commented-out keys (`#ethernet: no`,
     `# payload: yes`), placed under their parent by indentation;
  2. the configs of suricata-verify's tests (`tests/*/suricata.yaml`, and its top-level
     suricata.yaml), which Suricata runs.

Usage:
  git --git-dir=/work/.mirror/OISF+suricata/repo show suricata-7.0.10:suricata.yaml.in > /tmp/s.in
  scripts/suricata-keys.py /tmp/s.in ../shared/suricata-verify > src/suricata_keys.txt

A path joins map keys with `.`; `[]` is a list item; `*` stands for a name the user chooses
(address groups, dataset names, libhtp server names, DPDK EAL parameters).
"""
import glob
import os
import re
import sys

import yaml

# Paths whose keys are names the user picks; their children are still checked.
WILDCARDS = {
    "vars.address-groups",
    "vars.port-groups",
    "app-layer.protocols.http.libhtp.server-config[]",
    "datasets",
    "dpdk.eal-params",
}


# Keys shrike reads beyond Suricata 7.0.10's (a later Suricata's, or shrike's own ring options).
EXTRA = {
    "af-packet[].frame-size",
    "af-packet[].poll-timeout",
    "af-packet[].promisc",
    "outputs[].eve-log.buffer-size",
}


def join(parent, key):
    if parent in WILDCARDS:
        key = "*"
    return f"{parent}.{key}" if parent else key


def walk(node, path, out):
    if isinstance(node, dict):
        for k, v in node.items():
            p = join(path, str(k))
            out.add(p)
            walk(v, p, out)
    elif isinstance(node, list):
        for item in node:
            walk(item, path + "[]", out)


class Loader(yaml.SafeLoader):
    pass


# Suricata's configs use `!include` and duplicate keys; keep the loader permissive.
Loader.add_constructor("!include", lambda loader, node: None)

KEY = re.compile(r"^(?P<dash>- +)?(?P<key>[a-z][a-z0-9_.-]*):(\s|$)")


def commented_keys(text, out):
    """Keys in the template, commented out or not, placed under their parent by indentation."""
    stack = []  # (indent, path)
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        commented = stripped.startswith("#")
        if commented:
            body = stripped[1:]
            spaces = len(body) - len(body.lstrip(" "))
            body = body.lstrip(" ")
            indent += max(0, spaces - 1)
        else:
            body = stripped
        if "@" in body:
            # `@e_magic_file_comment@magic-file:` and similar template lines.
            body = re.sub(r"^@[a-z_]+@", "", body)
        m = KEY.match(body)
        if not m or body.startswith(("http:", "https:")) and "//" in body:
            continue
        key = m.group("key")
        if "." in key:
            continue
        if m.group("dash"):
            dash = indent
            indent = dash + len(m.group("dash"))
            while stack and stack[-1][0] >= dash:
                stack.pop()
            # A list at the same indent as its key (`key:\n- item`) is rare in the template.
            parent = (stack[-1][1] if stack else "") + "[]"
            # The item itself, so its other keys (at `indent`) find it as their parent.
            stack.append((dash, parent))
        else:
            while stack and stack[-1][0] >= indent:
                stack.pop()
            parent = stack[-1][1] if stack else ""
        path = join(parent, key)
        if commented:
            out.add(path)
        stack.append((indent, path))


def main():
    template, sv = sys.argv[1], sys.argv[2]
    keys = set(EXTRA)
    text = open(template).read()
    commented_keys(text, keys)
    # The template's real keys, after filling in its @placeholders@.
    filled = re.sub(r"@[a-z_]+@", "x", text)
    walk(yaml.load(filled, Loader=Loader), "", keys)
    files = [os.path.join(sv, "suricata.yaml")] + sorted(
        glob.glob(os.path.join(sv, "tests", "*", "suricata.yaml"))
    )
    for f in files:
        try:
            walk(yaml.load(open(f).read(), Loader=Loader), "", keys)
        except yaml.YAMLError as e:
            print(f"skipped {f}: {e}", file=sys.stderr)
    print("# Key paths of Suricata 7's suricata.yaml, made by scripts/suricata-keys.py")
    print("# (suricata-7.0.10 suricata.yaml.in, commented-out keys included, and the")
    print("# suricata-verify test configs, and the few keys shrike reads beyond them).")
    print("# `[]` is a list item, `*` a user-chosen name.")
    for k in sorted(keys):
        print(k)


if __name__ == "__main__":
    main()
