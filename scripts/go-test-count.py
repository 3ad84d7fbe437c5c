#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count `go test -json` events per test for scripts/test.sh's host suites.

Reads the JSON stream on stdin; prints one TAP-like line per test result
(subtests included, each counted), the skip reason where Go printed one,
every package that failed without a failed test (a build error, a panic
in init, TestMain's exit) as a failure, and ends with
"NAME: N passed, N failed, N skipped".  Exits 1 on any failure or when
nothing ran.  Usage: go test -json ./... | go-test-count.py NAME
"""
import json
import sys

name = sys.argv[1] if len(sys.argv) > 1 else "go-test"
passed = failed = skipped = 0
out = {}          # (pkg, test) -> output lines
pkg_failed_tests = {}
pkg_result = {}
started = {}      # pkg -> tests in the order they started
ended = set()
noise = []
for raw in sys.stdin:
    raw = raw.rstrip("\n")
    try:
        ev = json.loads(raw)
    except ValueError:
        # go's own errors (a build failure) come as plain text
        if raw.strip():
            noise.append(raw)
        continue
    pkg = ev.get("Package", "")
    test = ev.get("Test")
    act = ev.get("Action")
    if act == "output":
        out.setdefault((pkg, test), []).append(ev.get("Output", ""))
        continue
    if act == "run" and test is not None:
        started.setdefault(pkg, []).append(test)
        continue
    if act not in ("pass", "fail", "skip"):
        continue
    if test is not None:
        ended.add((pkg, test))
    if test is None:
        pkg_result[pkg] = act
        continue
    if act == "pass":
        passed += 1
        print(f"ok - {pkg} {test}")
    elif act == "skip":
        skipped += 1
        why = [l.strip() for l in out.get((pkg, test), [])
               if l.strip() and not l.lstrip().startswith(("=== ", "--- "))]
        print(f"ok - {pkg} {test} # SKIP {why[-1] if why else 'no reason printed'}")
    else:
        failed += 1
        pkg_failed_tests[pkg] = pkg_failed_tests.get(pkg, 0) + 1
        print(f"not ok - {pkg} {test}")
        for l in out.get((pkg, test), [])[-20:]:
            print("#", l.rstrip())
for pkg, act in sorted(pkg_result.items()):
    if act == "fail" and not pkg_failed_tests.get(pkg):
        failed += 1
        print(f"not ok - {pkg}: the package failed without a failed test")
        for l in out.get((pkg, None), [])[-20:]:
            print("#", l.rstrip())
        # a timeout's panic is the output of the test still running
        for t in started.get(pkg, []):
            if (pkg, t) not in ended:
                print(f"# {t} started and never ended:")
                for l in out.get((pkg, t), [])[-20:]:
                    print("#", l.rstrip())
for l in noise[-20:]:
    print("#", l)
if noise and not pkg_result:
    failed += 1
    print("not ok - go test printed no results")
print(f"{name}: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed + skipped == 0 else 0)
