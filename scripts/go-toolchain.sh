#!/usr/bin/env bash
# The Go that builds arbtable-dra (dra/) and the test cluster
# (tests/kubernetes/cluster): the version their go.mod files state, or
# newer.  Prints that Go's bin directory.
#
#   go-toolchain.sh            find it; fetch the pinned toolchain if needed
#   go-toolchain.sh --offline  find it; never fetch (make, tests)
#
# A Go already on the machine (PATH, /usr/local/go) is used when it is new
# enough.  Otherwise the Go that setup installs from bookworm-backports
# (golang-1.23-go) takes the pinned release from the Go module proxy, as
# its own toolchain switch does (the module golang.org/toolchain, kept in
# the module cache): setup runs this online once; make and the tests run
# it with --offline and find the cached copy.
set -euo pipefail
PIN=${ARBTABLE_GO_TOOLCHAIN:-go1.26.8}
root=$(cd "$(dirname "$0")/.." && pwd)
offline=
[ "${1:-}" = --offline ] && offline=1

need=$(awk '$1 == "go" { print $2; exit }' "$root/dra/go.mod")
# ver_ok GO: GO's own version (no switching) is at least $need
ver_ok() {
	local v
	v=$(GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null) || return 1
	v=${v#go}
	[ "$(printf '%s\n%s\n' "$need" "$v" | sort -V | head -n1)" = "$need" ]
}

for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
	if [ -n "$g" ] && [ -x "$g" ] && ver_ok "$g"; then
		dirname "$(readlink -f "$g")"
		exit 0
	fi
done

# an older Go that can switch (1.21 or newer): the newest of Debian's
base=$(command -v go 2>/dev/null || true)
for g in /usr/lib/go-1.2[1-9]/bin/go; do # the glob's last is the newest
	[ -x "$g" ] && base=$g
done
if [ -z "$base" ]; then
	echo "go-toolchain: no Go on this machine (scripts/setup.sh installs golang-1.23-go from bookworm-backports)" >&2
	exit 1
fi
if [ -n "$offline" ]; then
	goroot=$(GOPROXY=off GOTOOLCHAIN=$PIN "$base" env GOROOT 2>/dev/null) || {
		echo "go-toolchain: $PIN is not in the module cache (scripts/setup.sh fetches it)" >&2
		exit 1
	}
else
	goroot=$(GOTOOLCHAIN=$PIN "$base" env GOROOT) || {
		echo "go-toolchain: $base could not take $PIN from the Go module proxy" >&2
		exit 1
	}
fi
ver_ok "$goroot/bin/go" || { echo "go-toolchain: $goroot/bin/go is older than go $need" >&2; exit 1; }
echo "$goroot/bin"
