#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/go-toolchain.sh, offline as make and the tests call it: on this
# machine it names a Go at least as new as dra/go.mod states; on a machine
# whose only Go is older (here: /usr/local/go hidden by a private mount,
# PATH without go, an empty module cache, bookworm-backports' golang-1.23
# left) it names no Go and says that setup fetches the pinned one, and it
# fetches nothing.  The fetch itself needs the Go module proxy, which no
# test reaches (Documentation/dev/kubernetes-test-cluster.rst says how it
# was checked).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
need=$(awk '$1 == "go" { print $2; exit }' "$here/dra/go.mod")

if bin=$(bash "$here/scripts/go-toolchain.sh" --offline 2>&1); then
	v=$(GOTOOLCHAIN=local "$bin/go" env GOVERSION 2>/dev/null)
	v=${v#go}
	if [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$need" "$v" | sort -V | head -n1)" = "$need" ]; then
		ok "this machine: $bin/go is go$v, at least go.mod's $need"
	else
		nok "this machine: $bin/go is '${v:-?}', go.mod wants $need"
	fi
else
	nok "this machine: no Go found: $bin"
fi

if [ "$(id -u)" = 0 ] && [ -x /usr/lib/go-1.23/bin/go ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/empty" "$tmp/home"
	out=$(unshare -m --propagation private bash -c '
		[ -d /usr/local/go ] && mount --bind "$1/empty" /usr/local/go
		env -i PATH=/usr/bin:/bin HOME="$1/home" bash "$2/scripts/go-toolchain.sh" --offline' _ "$tmp" "$here" 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -q 'not in the module cache (scripts/setup.sh fetches it)' <<<"$out" &&
	   [ -z "$(find "$tmp/home" -path '*golang.org/toolchain@*' -print -quit)" ]; then
		ok "only golang-1.23: --offline names no Go and points at setup (exit $rc), fetching nothing"
	else
		nok "only golang-1.23: exit $rc, output: $out"
	fi
else
	nok "needs root and bookworm-backports' golang-1.23-go (scripts/setup.sh installs it)"
fi
echo "go-toolchain-check: $pass passed, $fail failed"
[ $fail = 0 ]
