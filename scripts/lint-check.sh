#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make lint` inside `make test` (issue 15): checkpatch on the kernel
# sources and the uapi header, kernel-doc, sparse (C=2, W=1) against each kernel in
# KVERS, no stack frame above 256 bytes (-fstack-usage), and .rst
# documents that docutils parses without a warning, man pages that groff
# renders without a warning.  The W=1 -Werror module builds themselves are part of `make all`.
# Any new warning fails.  Ends with "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
pass=0
fail=0
one() { # desc make-target...
	local d=$1 out t0=$SECONDS
	shift
	if out=$(make --no-print-directory "$@" 2>&1); then
		pass=$((pass + 1)); echo "ok   $d ($((SECONDS - t0)) s)"
	else
		fail=$((fail + 1)); echo "FAIL $d"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
	fi
}
one "checkpatch --strict: kernel/*.[ch] and the uapi header have no error, warning or check" checkpatch
one "kernel-doc -Wall: the uapi header's structs and enums fully described" kerneldoc
one "sparse (C=2, W=1): no warning on any kernel in KVERS" sparse
one "stack (-fstack-usage): no frame above 256 bytes on any kernel in KVERS" stack
one "rst: every Documentation/networking/*.rst, Documentation/dev/*.rst and the selftests README parses without a docutils warning" rst
one "man pages: every page renders without a groff warning" man-lint
one "extack: every formatted refusal of the qdisc fits NL_SET_ERR_MSG_FMT's 80 bytes" extack
echo "lint: $pass passed, $fail failed"
[ "$fail" = 0 ]
