#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fresh Debian 12 root the package test (tests/packages/check.sh)
# installs the packages into: debootstrap bookworm (minbase) with what
# the packages depend on and a user has before installing them (dkms and
# its compiler, the headers of the 6.1 kernel the VM boots, iproute2,
# libnl-3, json-c), so the guest needs no network.  Built once by
# scripts/setup.sh, cached under $ARBT_PKGROOT (default
# /var/lib/arbtable/pkgroot/base) keyed by the 6.1 release and the package
# list; the test works on a copy and never changes it.
#
#   scripts/pkg-root.sh [--check]   prints the root's path
set -euo pipefail
BASE=${ARBT_PKGROOT:-/var/lib/arbtable/pkgroot/base}
# the Debian 12 kernel the VM boots (the newest 6.1 image installed)
K61=${ARBT_PKGROOT_K61:-$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
MIRROR=${ARBT_PKGROOT_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
say() { echo "[pkg-root] $*" >&2; }

[ -n "$K61" ] || { say "no 6.1 kernel in /boot (scripts/setup.sh installs linux-image-amd64)"; exit 1; }
# what the packages depend on, and the 6.1 headers DKMS builds against
# (below; libnl-3-dev for libarbtable-dev); udev and poweroff for
# virtme-ng's init in the guest
PKGS="dkms,kmod,iproute2,libnl-3-200,libnl-route-3-200,libjson-c5,libnl-3-dev,libnl-route-3-dev,procps,udev,systemd-sysv"
key="bookworm minbase $PKGS linux-headers-$K61"
if [ -f "$BASE/.ready" ] && [ "$(cat "$BASE/.ready")" = "$key" ]; then
	echo "$BASE"
	exit 0
fi
[ "${1:-}" = --check ] && { say "not built (would be $BASE)"; exit 1; }
[ "$(id -u)" = 0 ] || { say "must run as root (debootstrap)"; exit 1; }
command -v debootstrap >/dev/null || { say "debootstrap missing (scripts/setup.sh installs it)"; exit 1; }

t0=$(date +%s)
tmp=$BASE.tmp
rm -rf "$tmp"
mkdir -p "$(dirname "$BASE")"
say "debootstrap bookworm into $tmp ($MIRROR; $PKGS)"
debootstrap --variant=minbase --include="$PKGS" bookworm "$tmp" "$MIRROR" >"$tmp.log" 2>&1 ||
	{ say "debootstrap failed; its log: $tmp.log"; tail -n 20 "$tmp.log" >&2; exit 1; }
# apt in the root works after apt-get update (the same mirror); the 6.1
# headers of a point release after bookworm's come from its security suite
sec=${MIRROR%/debian}/debian-security
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
	"$MIRROR" "$MIRROR" "$sec" >"$tmp/etc/apt/sources.list"
mount -t proc proc "$tmp/proc"
trap 'umount "$tmp/proc" 2>/dev/null || true' EXIT
say "installing linux-headers-$K61 in the root"
chroot "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
	"apt-get update -qq && apt-get install -y -qq --no-install-recommends linux-headers-$K61 && apt-get clean" \
	>"$tmp.log" 2>&1 || { say "apt-get in the root failed; its log: $tmp.log"; tail -n 20 "$tmp.log" >&2; exit 1; }
umount "$tmp/proc"
trap - EXIT
[ -e "$tmp/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n' >"$tmp/etc/hosts"
rm -f "$tmp.log"
rm -rf "$BASE"
mv "$tmp" "$BASE"
echo "$key" >"$BASE/.ready"
say "built in $(($(date +%s) - t0)) s: $(du -sh "$BASE" | cut -f1)"
echo "$BASE"
