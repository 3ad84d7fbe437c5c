#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup.sh refuses a host that is not Debian 12 before it touches
# anything (issue 37).  Each case runs setup with a fake os-release
# (ARBTABLE_OS_RELEASE), a fake `id` that says "not root" and shims of
# apt-get, apt-cache, dpkg, dpkg-query and mkdir that record a call: if the
# OS check let a host through, setup stops at its root check (it never
# reaches apt or /etc/apt as a non-root), so this test cannot change the
# machine even when setup is wrong.  A refused host must print the
# refusal and what to do, exit 1, and call none of the shims; Debian 12
# and the override must get past the check (to the root check).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
for c in apt-get apt-cache dpkg dpkg-query mkdir debootstrap; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\nexit 1\n' "$c" "$tmp" >"$tmp/bin/$c"
done
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id"
chmod +x "$tmp/bin"/*

pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }

# case name, os-release text, expected outcome (refuse|through), env...
run() {
	local name=$1 text=$2 want=$3
	shift 3
	printf '%b' "$text" >"$tmp/os-release"
	rm -f "$tmp/calls"
	out=$(env -i PATH="$tmp/bin:/usr/bin:/bin" HOME="$tmp" ARBTABLE_CACHE="$tmp/cache" \
		ARBTABLE_OS_RELEASE="$tmp/os-release" "$@" bash "$here/scripts/setup.sh" 2>&1)
	rc=$?
	case $want in
	refuse)
		if [ $rc = 1 ] && grep -q 'not Debian 12' <<<"$out" &&
		   grep -q 'nothing was changed' <<<"$out" &&
		   grep -q 'make && sudo make install' <<<"$out" &&
		   grep -q 'linux-headers' <<<"$out" && [ ! -e "$tmp/calls" ] &&
		   [ ! -e "$tmp/cache" ]; then
			ok "$name: refused before touching anything (exit $rc, $(grep -c . <<<"$out") lines of advice)"
		else
			nok "$name: want a refusal with advice and no call; exit $rc, calls: $(cat "$tmp/calls" 2>/dev/null | tr '\n' ';'), output: $out"
		fi ;;
	through)
		if [ $rc = 1 ] && grep -q 'must run as root' <<<"$out" &&
		   ! grep -q 'not Debian 12' <<<"$out"; then
			ok "$name: past the OS check (stopped at the root check)"
		else
			nok "$name: want it past the OS check; exit $rc, output: $out"
		fi ;;
	esac
}

run "Ubuntu 24.04" 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n' refuse
run "Debian 13" 'ID=debian\nVERSION_ID="13"\n' refuse
run "Debian 11" 'ID=debian\nVERSION_ID="11"\n' refuse
run "Debian sid (no VERSION_ID)" 'ID=debian\n' refuse
run "Fedora 41" 'ID=fedora\nVERSION_ID=41\n' refuse
run "no os-release" '' refuse
run "Debian 12" 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n' through
run "Ubuntu with ARBTABLE_SETUP_ANY_OS=1" 'ID=ubuntu\nVERSION_ID="24.04"\n' through ARBTABLE_SETUP_ANY_OS=1
# the real host's os-release through the same check
if grep -q '^VERSION_ID="12"' /etc/os-release && grep -q '^ID=debian' /etc/os-release; then
	run "this host (/etc/os-release)" "$(cat /etc/os-release)\n" through
fi
echo "setup-check: $pass passed, $fail failed"
[ $fail = 0 ]
