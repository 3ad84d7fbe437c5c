#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One JSON type per key: every object in the given JSON documents (tc -j
qdisc and class output, arbtablectl --json), at any depth, and every key
in them; a key holding a number in one place and a bool, string, list or
object in another fails (tc-arbtable(8) promises one type per key).

  json-types.py FILE...     prints the keys and their type, exit 1 on a clash
"""
import json
import sys


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def walk(v, where, types):
    if isinstance(v, dict):
        for k, x in v.items():
            types.setdefault(k, {}).setdefault(kind(x), where + "." + k)
            walk(x, where + "." + k, types)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, "%s[%d]" % (where, i), types)


types = {}
for f in sys.argv[1:]:
    walk(json.load(open(f)), f.rsplit("/", 1)[-1], types)
clash = {k: t for k, t in types.items() if len(t) > 1}
for k, t in sorted(clash.items()):
    print("key %r: %s" % (k, "; ".join("%s at %s" % x for x in sorted(t.items()))))
print("%d keys, %d with more than one type" % (len(types), len(clash)))
sys.exit(1 if clash else 0)
