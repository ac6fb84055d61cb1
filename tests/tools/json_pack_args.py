#!/usr/bin/env python3
"""Check that every json_pack() call in the C sources passes as many
arguments as its format string asks for.

jansson reads json_pack's arguments with va_arg, so a missing key or value
is not a compile error: the call returns NULL at run time (or reads a stray
word as a pointer), and json_array_append_new(a, NULL) fails silently. A
follow of a run's log once lost every pod recorded after it began this way.

Usage: json_pack_args.py FILE_OR_DIR...   (exit 1 and one line per mismatch)
"""
import os
import re
import sys

CALL = re.compile(r"\bjson_pack\s*\(")


def call_args(text, start):
    """The top-level arguments of the call whose '(' is at text[start]."""
    depth, args, cur, i = 0, [], [], start
    in_str = in_chr = False
    while i < len(text):
        c = text[i]
        if in_str or in_chr:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 2
                continue
            if (in_str and c == '"') or (in_chr and c == "'"):
                in_str = in_chr = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c == "'":
            in_chr = True
            cur.append(c)
        elif c in "([{":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return None


def literal(arg):
    """The value of a string literal argument (adjacent literals joined), or
    None when the format is not a literal."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', arg)
    if not parts or re.sub(r'"((?:[^"\\]|\\.)*)"', "", arg).strip():
        return None
    return "".join(parts)


def needed(fmt):
    """How many arguments the jansson pack format consumes."""
    n, i = 0, 0
    while i < len(fmt):
        c = fmt[i]
        nxt = fmt[i + 1] if i + 1 < len(fmt) else ""
        if c == "s":
            n += 1
            if nxt in "#%":
                n += 1
                i += 1
            elif nxt in "?*":
                i += 1
        elif c in "bifIoO":
            n += 1
            if nxt in "?*":
                i += 1
        elif c == "+":  # concatenation: another string (s, s#, s%)
            if nxt in "#%":
                n += 2
                i += 1
            else:
                n += 1
        i += 1
    return n


def check_file(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    bad = []
    for m in CALL.finditer(text):
        args = call_args(text, m.end() - 1)
        if not args:
            continue
        fmt = literal(args[0])
        if fmt is None:
            continue
        want, got = needed(fmt), len(args) - 1
        if want != got:
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{path}:{line}: json_pack(\"{fmt}\") needs {want} arguments, gets {got}")
    return bad


def main(paths):
    bad = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                bad += [b for f in sorted(files) if f.endswith(".c")
                        for b in check_file(os.path.join(root, f))]
        else:
            bad += check_file(p)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["gateway"]))
