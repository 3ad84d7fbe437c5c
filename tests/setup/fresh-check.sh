#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-fresh: the README's set-up on a machine that has never run it
# (issue 43).  A clean Debian 12 root (debootstrap minbase with what a
# user has before the README: git, make, ca-certificates; the host's apt
# sources, apt network settings and certificate authorities, as on a
# machine of this kind), a fresh clone of this commit in
# it, then in a chroot:
#   1. scripts/setup.sh, the first time: must end 0 ("setup: done");
#   2. scripts/setup.sh again: must end 0 and only check;
#   3. make all bpf (WERROR=1), as make test builds;
#   4. one VM test booted from the root: Debian's 7.2 image, the module
#      built there, selftests/arbtable/run_all.sh config.
# Needs the network (apt's mirror and the Go module proxy), as a new
# user's machine does; nothing on the host changes but $ARBT_FRESH
# (default /var/lib/arbtable/fresh), removed at the end unless
# ARBT_FRESH_KEEP=1.  Ends "check-fresh: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
W=${ARBT_FRESH:-/var/lib/arbtable/fresh}
R=$W/root
K72=${ARBTABLE_K72:-7.2.12+deb13-amd64}
MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
pass=0 fail=0
t0=$(date +%s)
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
say() { echo "[check-fresh $(($(date +%s) - t0))s] $*"; }
unmount_root() {
	for m in dev/pts dev sys proc run; do umount -l "$R/$m" 2>/dev/null; done
}
# never through a mount the root still has (/dev is the host's)
remove_root() {
	if findmnt -rn -o TARGET | grep -q "^$W/"; then
		echo "check-fresh: mounts left under $W; not removing it" >&2
		return 1
	fi
	rm -rf --one-file-system "$W"
}
finish() {
	unmount_root
	[ "${ARBT_FRESH_KEEP:-0}" = 1 ] || remove_root
	echo "check-fresh: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}
[ "$(id -u)" = 0 ] || { nok "must run as root (debootstrap, chroot)"; finish; }
command -v debootstrap >/dev/null || { nok "debootstrap missing (scripts/setup.sh installs it)"; finish; }
trap finish INT TERM
unmount_root
remove_root || { nok "mounts left under $W from an earlier run"; exit 1; }
mkdir -p "$W"
say "debootstrap bookworm (minbase, git make ca-certificates) into $R"
if ! debootstrap --variant=minbase --include=git,make,ca-certificates bookworm "$R" "$MIRROR" >"$W/debootstrap.log" 2>&1; then
	nok "debootstrap failed: $(tail -n 3 "$W/debootstrap.log" | tr '\n' ' ')"
	finish
fi
# the machine's own sources (deb822, with updates and security), as a
# machine of this kind has them
rm -f "$R/etc/apt/sources.list"
cp /etc/apt/sources.list.d/debian.sources "$R/etc/apt/sources.list.d/"
# and its apt network settings (Acquire::*: on these machines the mirror
# is a dated snapshot, read with Check-Valid-Until off)
for f in /etc/apt/apt.conf.d/*; do
	grep -q '^[[:space:]]*Acquire::' "$f" 2>/dev/null && cp "$f" "$R/etc/apt/apt.conf.d/"
done
# and the machine's own certificate authorities (its egress to the Go
# module proxy is signed by one)
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$R/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/"
	chroot "$R" update-ca-certificates >/dev/null 2>&1 ||
		{ nok "update-ca-certificates in the root failed"; finish; }
fi
cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
printf '127.0.0.1\tlocalhost\n' >"$R/etc/hosts"
mount -t proc proc "$R/proc" && mount -t sysfs sys "$R/sys" &&
	mount --bind /dev "$R/dev" && mount --bind /dev/pts "$R/dev/pts" && mount -t tmpfs tmpfs "$R/run" ||
	{ nok "mounting /proc, /sys, /dev, /run in the root failed"; finish; }
# a fresh clone of this commit (what the README starts from)
if ! git clone -q "$here" "$R/root/arbtable" 2>"$W/clone.log" ||
   ! git -C "$R/root/arbtable" checkout -q "$(git -C "$here" rev-parse HEAD)"; then
	nok "git clone of $here failed: $(cat "$W/clone.log")"
	finish
fi
inroot() { # log command...: run in the chroot as root's login shell would
	local log=$1
	shift
	chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c 'cd /root/arbtable && "$@"' _ "$@" >"$W/$log.log" 2>&1
}
s=$(date +%s)
say "scripts/setup.sh, the first time (log: $W/setup1.log)"
if inroot setup1 bash scripts/setup.sh && grep -q '^setup: done' "$W/setup1.log"; then
	ok "setup.sh on a fresh Debian 12 root, the first time: done in $(($(date +%s) - s)) s"
else
	nok "setup.sh on a fresh Debian 12 root failed the first time after $(($(date +%s) - s)) s: $(grep -E '^(E:|setup)|rror' "$W/setup1.log" | tail -n 5 | tr '\n' ' ')"
	finish
fi
s=$(date +%s)
if inroot setup2 bash scripts/setup.sh && ! grep -q 'installing' "$W/setup2.log"; then
	ok "setup.sh again: nothing to install ($(($(date +%s) - s)) s)"
else
	nok "setup.sh again: $(tail -n 5 "$W/setup2.log" | tr '\n' ' ')"
fi
s=$(date +%s)
say "make all bpf (log: $W/build.log)"
if inroot build make -j2 WERROR=1 all bpf && [ -f "$R/root/arbtable/build/$K72/sch_arbtable.ko" ]; then
	ok "make all bpf (WERROR=1) in the root, the module for $K72 included: $(($(date +%s) - s)) s"
else
	nok "make all bpf in the root: $(tail -n 5 "$W/build.log" | tr '\n' ' ')"
	finish
fi
s=$(date +%s)
say "one VM test from the root: $K72, run_all.sh config (log: $W/vm.log)"
inroot vm bash scripts/vm.sh -k "$K72" -n -t 1500 -- selftests/arbtable/run_all.sh config
vrc=$?
np=$(grep -cE '^ok [0-9]+' "$W/vm.log")
nf=$(grep -cE '^not ok [0-9]+' "$W/vm.log")
plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$W/vm.log" | tail -n1)
if [ "$vrc" = 0 ] && [ "$nf" = 0 ] && [ -n "$plan" ] && [ "$plan" = "$np" ] && [ "$np" -gt 2 ]; then
	ok "test_config on $K72 booted from the fresh root: $np passed ($(($(date +%s) - s)) s)"
else
	grep -E '^not ok|^\[vm' "$W/vm.log" | tail -n 10
	nok "test_config from the fresh root: vm.sh exit $vrc, $np passed, $nf failed, plan ${plan:-none}"
fi
say "done in $(($(date +%s) - t0)) s"
finish
