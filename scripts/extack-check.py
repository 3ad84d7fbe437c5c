#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every formatted extack of the module fits NL_SET_ERR_MSG_FMT's buffer.

    scripts/extack-check.py kernel/arbtable_qdisc.c ...

Since 6.2 a refusal with numbers is formatted into 80 bytes
(NETLINK_MAX_FMTMSG_LEN, the NUL included); a longer one is cut and the
kernel warns. For each arbtable_refuse() and arbtable_err() call this adds
the constant text to the widest each conversion can print, read from the
format alone: %u 10, %hu 5, %hhu 3, %x 8, %hx 4, %hhx 2, %d 11, %llu 20,
%s only with a precision (%.12s: 12). A bare %s is refused: its width is
unknown. The core's own refusals (arb_reject_format) are checked by the
unit test test_alloc (test_reject_fits_netlink). Exit 1 if one does not fit.
"""
import re
import sys

LIMIT = 80 - 1          # NETLINK_MAX_FMTMSG_LEN, less the NUL
WIDTH = {"u": 10, "hu": 5, "hhu": 3, "x": 8, "hx": 4, "hhx": 2, "d": 11,
         "hd": 6, "llu": 20, "lld": 20, "llx": 16}
STR = r'"(?:[^"\\]|\\.)*"'
CALL = re.compile(r'\barbtable_(refuse|err)\s*\(')
CONV = re.compile(r'%%|%(\.(\d+))?(s|hh[uxd]|h[uxd]|ll[uxd]|[uxd])')


def strings(text):
    """The concatenated string literals at the start of @text, and the rest."""
    out, pos = "", 0
    while True:
        m = re.compile(r'\s*(' + STR + r')').match(text, pos)
        if not m:
            return out, text[pos:]
        out += bytes(m.group(1)[1:-1], "utf-8").decode("unicode_escape")
        pos = m.end()


def split_args(text):
    """The top-level comma-separated arguments of a call whose '(' is gone."""
    args, depth, cur, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if c == '"':
            m = re.compile(STR).match(text, i)
            cur += m.group(0)
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(cur)
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(cur)
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    return args


def widest(fmt):
    """The longest @fmt can print, or None for an unbounded conversion."""
    n, pos = 0, 0
    for m in CONV.finditer(fmt):
        n += m.start() - pos
        pos = m.end()
        if m.group(0) == "%%":
            n += 1
        elif m.group(3) == "s":
            if m.group(2) is None:
                return None
            n += int(m.group(2))
        else:
            n += WIDTH[m.group(3)]
    return n + len(fmt) - pos


def check(path):
    src = open(path, encoding="utf-8").read()
    bad = 0
    for call in CALL.finditer(src):
        if src[:call.start()].rstrip().endswith("#define"):
            continue        # the macros themselves
        line = src.count("\n", 0, call.start()) + 1
        args = split_args(src[call.end():])
        if call.group(1) == "refuse":   # extack, attr, what, detail, ...
            what, _ = strings(args[2])
            detail, _ = strings(args[3])
            fmt = what + detail
        else:                           # extack, attr, fixed, fmt, ...
            fmt, _ = strings(args[3])
        n = widest(fmt)
        if n is None:
            print(f"{path}:{line}: a %s without a precision: '{fmt}'")
            bad += 1
        elif n > LIMIT:
            print(f"{path}:{line}: up to {n} characters, more than {LIMIT}: '{fmt}'")
            bad += 1
    return bad


def main():
    bad = sum(check(p) for p in sys.argv[1:])
    if bad:
        print(f"extack: {bad} formatted refusal(s) may not fit {LIMIT + 1} bytes")
        return 1
    print("extack: every formatted refusal fits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
