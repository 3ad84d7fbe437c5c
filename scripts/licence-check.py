#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""licence-check.py: everything linked into arbtable-dra may be distributed
with it, under Apache-2.0 (issue 45).

  licence-check.py --lib build/lib/libarbtable.so.X --cc gcc \
      --group 'SRCS...' 'CFLAGS...' [--group ...]

What is linked is read from the build, not listed by hand:
- the Go code: every non-test file of this module's packages that the
  commands in dra/cmd import (go list -deps), and the headers their cgo
  preambles include;
- libarbtable: the compilation units of the built library (its DWARF),
  each with every project header it compiles in (cc -MM with the flags
  mk/lib.mk builds it with, one --group per rule); a unit of the library
  that no --group names fails the check;
- the Go modules the binary is built from: their LICENSE files.

A project file passes when its SPDX-License-Identifier expression can be
satisfied by licences that may be combined with Apache-2.0: permissive
ones for Go (linked statically into the binary), and also the LGPL for
libarbtable (a shared library, dynamically linked). GPL-2.0 alone, or any
licence outside those sets, fails. Prints "ok"/"not ok" lines and
"licence-check: N passed, N failed".
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

PERMISSIVE = {"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "MIT", "ISC", "0BSD"}
# a dynamically linked library may be LGPL: the program using it keeps its
# own licence (LGPL-2.1 section 6)
LIBRARY = PERMISSIVE | {"LGPL-2.1-or-later", "LGPL-2.1+", "LGPL-2.1-only", "LGPL-2.1",
                        "LGPL-3.0-or-later", "LGPL-3.0-only"}

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def tokens(expr):
    return re.findall(r"\(|\)|[A-Za-z0-9.+-]+", expr)


def satisfiable(expr, allowed):
    """Whether some choice among expr's OR alternatives uses only allowed
    licences (an "A WITH B" counts as the licence "A WITH B")."""
    toks = tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def atom():
        if peek() == "(":
            take()
            v = disj()
            if take() != ")":
                raise ValueError("unbalanced parentheses")
            return v
        lic = take()
        if lic in ("AND", "OR", "WITH", ")"):
            raise ValueError("operator where a licence should be")
        if peek() == "WITH":
            take()
            lic += " WITH " + take()
        return lic in allowed

    def conj():
        v = atom()
        while peek() == "AND":
            take()
            v = atom() and v
        return v

    def disj():
        v = conj()
        while peek() == "OR":
            take()
            v = conj() or v
        return v

    v = disj()
    if pos != len(toks):
        raise ValueError("trailing " + " ".join(toks[pos:]))
    return v


def spdx(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f.readlines()[:3]:
            m = re.search(r"SPDX-License-Identifier:\s*(.*?)\s*(\*/)?\s*$", line)
            if m:
                return m.group(1)
    return None


def run(cmd, cwd=ROOT, env=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def deps(cc, src, cflags):
    """The project files compiling src includes (cc -MM: no system headers)."""
    out = run([cc, "-MM"] + shlex.split(cflags) + [src]).replace("\\\n", " ")
    return inside(out.split(":", 1)[1].split())


def inside(files):
    """The project's own files among files (libnl's headers, say, are not)."""
    rel = (os.path.relpath(os.path.normpath(os.path.join(ROOT, f)), ROOT) for f in files)
    return [f for f in rel if not f.startswith("../")]


def lib_units(lib):
    """The source files of the library's compilation units (DWARF)."""
    out = run(["readelf", "--debug-dump=info", lib])
    units, name, cdir = [], None, None
    for line in out.splitlines():
        if "DW_TAG_compile_unit" in line:
            name = cdir = None
        m = re.search(r"DW_AT_(name|comp_dir)\s*:.*?:\s*(\S+)\s*$", line) or \
            re.search(r"DW_AT_(name|comp_dir)\s*:\s*(\S+)\s*$", line)
        if m and name is None and m.group(1) == "name":
            name = m.group(2)
        elif m and cdir is None and m.group(1) == "comp_dir":
            cdir = m.group(2)
        if name and cdir:
            units.append(os.path.relpath(os.path.normpath(os.path.join(cdir, name)), ROOT))
            name, cdir = "", ""
    return sorted(set(u for u in units if u))


def go_files(go, env):
    """This module's non-test Go files linked into the commands, and the
    preamble includes of its cgo files (with their -I)."""
    fmt = '{{if not .Standard}}{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}|{{join .CgoFiles " "}}|{{join .CgoCFLAGS " "}}{{end}}'
    out = run([go, "list", "-deps", "-f", fmt, "./cmd/..."], cwd=os.path.join(ROOT, "dra"), env=env)
    files, cgo = [], []
    for line in out.splitlines():
        if not line.startswith("arbtable.dev/dra"):
            continue
        _, d, gof, cgof, cflags = line.split("|")
        for f in gof.split():
            files.append(os.path.relpath(os.path.join(d, f), ROOT))
        for f in cgof.split():
            cgo.append((os.path.join(d, f), cflags))
    return sorted(set(files)), cgo


def cgo_headers(cc, cgo):
    out = []
    for path, cflags in cgo:
        src = open(path, encoding="utf-8").read()
        m = re.search(r"/\*(.*?)\*/\s*import \"C\"", src, re.S)
        incs = [l for l in (m.group(1).splitlines() if m else []) if l.strip().startswith("#include")]
        if not incs:
            continue
        r = subprocess.run([cc, "-MM", "-x", "c"] + shlex.split(cflags) + ["-"],
                           input="\n".join(incs) + "\n", capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise RuntimeError("cgo preamble of %s: %s" % (path, r.stderr.strip()))
        out += inside(f for f in r.stdout.replace("\\\n", " ").split(":", 1)[1].split() if f != "-")
    return out


# a module's licence, from the words every copy of its text has
KINDS = [
    ("Apache-2.0", r"Apache License\s+Version 2\.0"),
    ("BSD-3-Clause", r"Redistribution and use in source and binary forms.*Neither the name"),
    ("BSD-2-Clause", r"Redistribution and use in source and binary forms"),
    ("MIT", r"Permission is hereby granted, free of charge"),
    ("ISC", r"Permission to use, copy, modify, and(/or)? distribute this software for any"),
]
COPYLEFT = r"GNU (Lesser |Library |Affero )?General Public License|Mozilla Public License|Eclipse Public License"


def module_licence(d):
    names = sorted(n for n in os.listdir(d) if re.match(r"(?i)(licen[cs]e|copying)", n))
    if not names:
        return None, "no LICENSE file"
    text = " ".join(open(os.path.join(d, n), encoding="utf-8", errors="replace").read() for n in names)
    text = re.sub(r"\s+", " ", text)
    if re.search(COPYLEFT, text):
        return None, "a copyleft licence in " + ", ".join(names)
    for kind, pat in KINDS:
        if re.search(pat, text, re.S):
            return kind, names[0]
    return None, "an unrecognised licence in " + ", ".join(names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--go", default="go")
    ap.add_argument("--group", nargs=2, action="append", default=[], metavar=("SRCS", "CFLAGS"))
    a = ap.parse_args()
    env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local")
    passed = failed = 0

    def verdict(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok " + what)
        else:
            failed += 1
            print("not ok " + what)

    def check(path, allowed, role):
        lic = spdx(os.path.join(ROOT, path))
        if lic is None:
            verdict(False, "%s (%s): no SPDX-License-Identifier" % (path, role))
            return
        try:
            ok = satisfiable(lic, allowed)
        except (ValueError, IndexError) as e:
            verdict(False, "%s (%s): SPDX %r does not parse: %s" % (path, role, lic, e))
            return
        verdict(ok, "%s (%s): %s%s" % (path, role, lic, "" if ok else
                                      ": not combinable with Apache-2.0 (want one of " + ", ".join(sorted(allowed)) + ")"))

    gofiles, cgo = go_files(a.go, env)
    verdict(len(gofiles) > 0, "the Go driver's own files found (%d)" % len(gofiles))
    for f in gofiles:
        check(f, PERMISSIVE, "Go, in the binary")

    lib_files = set(cgo_headers(a.cc, cgo))
    named = {}
    for srcs, cflags in a.group:
        for s in srcs.split():
            named[os.path.normpath(s)] = cflags
    units = lib_units(a.lib)
    verdict(len(units) > 0, "%s: compilation units read from its DWARF (%d)" % (a.lib, len(units)))
    for u in units:
        if u not in named:
            verdict(False, "%s links %s, which no --group names (its headers unknown)" % (a.lib, u))
            continue
        lib_files.update(deps(a.cc, u, named[u]))
    for f in sorted(lib_files):
        check(f, LIBRARY, "libarbtable")

    out = run([a.go, "list", "-deps", "-f", "{{with .Module}}{{.Path}}@{{.Version}}|{{.Dir}}{{end}}", "./cmd/..."],
              cwd=os.path.join(ROOT, "dra"), env=env)
    mods = sorted(set(l for l in out.splitlines() if l and not l.startswith("arbtable.dev/dra@")))
    for line in mods:
        mod, d = line.split("|")
        kind, why = module_licence(d)
        verdict(kind is not None and kind in PERMISSIVE,
                "module %s: %s" % (mod, kind + " (" + why + ")" if kind else why))

    print("licence-check: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print("not ok licence-check: %s" % e)
        print("licence-check: 0 passed, 1 failed")
        sys.exit(1)
