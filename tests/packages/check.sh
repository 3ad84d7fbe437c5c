#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages as a user installs them (issue 37): build/deb's
# packages (make deb) installed with dpkg into a fresh Debian 12 root
# (scripts/pkg-root.sh: debootstrap bookworm, cached; each run works on a
# copy), that root booted with vng on Debian 12's 6.1 and on Debian's own
# 7.2 image.  In the guest: DKMS builds the module for the running kernel
# inside the root (6.1: the headers package installed in the root; 7.2:
# its headers do not install on bookworm, so the tree
# scripts/distro-kernel.sh prepares is mounted read-only as
# /lib/modules/<7.2>/build), the module loads from DKMS's place, the
# README's first example (its tc lines, on a dummy device) runs with the
# packaged tc plugin and no TC_LIB_DIR, arbtablectl shows the qdisc; then
# every package is purged, dkms status is empty, no file dpkg -L listed is
# left, and (on the host, after the guest) no path exists in the root
# that was not there before the install (but for the logs, dpkg's and
# apt's bookkeeping, /root where the test keeps its files, and the
# /etc/sudoers virtme-ng's init writes into a root that has none).
#
#   tests/packages/check.sh [6.1|7.2 ...]     (default: both)
#   ARBTABLE_KVM=1 boots with KVM (default TCG, as scripts/vm.sh)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEB=${ARBT_DEB_DIR:-$ROOT/build/deb}
RUNS=${ARBT_PKGROOT_RUNS:-/var/lib/arbtable/pkgroot}
K61=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)
K72=${ARBT_DISTRO_KREL:-7.2.12+deb13-amd64}
T72=${K72_TREE:-/var/lib/arbtable/distro-7.2/src}
# a loaded 2-core host under TCG: dpkg -i with DKMS's build took 988 s
TMO=${ARBT_PKG_TIMEOUT:-3600}
say() { echo "[packages] $*"; }
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }

[ "$(id -u)" = 0 ] || { say "must run as root (the root's copy, bind mounts, vng as root)"; exit 1; }
base=$(bash "$ROOT/scripts/pkg-root.sh" --check) || { say "no package root (scripts/setup.sh builds it)"; exit 1; }
if ! ls "$DEB"/*_"$(cat "$ROOT/VERSION")"_*.deb >/dev/null 2>&1; then
	say "no packages of $(cat "$ROOT/VERSION") in $DEB: make deb"
	make -C "$ROOT" --no-print-directory deb >/dev/null || { say "make deb failed"; exit 1; }
fi
debs=()
for d in "$DEB"/*.deb; do case $d in *-dbgsym_*) ;; *) debs+=("$d") ;; esac; done
pkgs=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | tr '\n' ' ')
say "packages: $pkgs"

# the README's first example: the tc lines of its first block that adds
# an arbtable qdisc, on a dummy device instead of eth0
example=$(awk '/^```/ { if (inb) { if (hit) exit; inb = 0; buf = "" } else inb = 1; next }
	inb { buf = buf $0 "\n"; if ($0 ~ /^tc qdisc add .* arbtable/) hit = 1 }
	END { if (hit) printf "%s", buf }' "$ROOT/README.md" | grep '^tc ' | sed 's/dev eth0/dev arbt0/g')
[ -n "$example" ] || { say "no tc example found in README.md"; exit 1; }

mounts=()
cleanup() {
	local m
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	mounts=()
}
trap cleanup EXIT
# never remove a root with a host directory still bound into it
safe_rm() {
	local m
	case $1 in "$RUNS"/run-?*) ;; *) nok "safe_rm: $1 is not a run root under $RUNS"; return 1 ;; esac
	for m in $(findmnt -rn -o TARGET | grep -F "$1/" | sort -r); do umount "$m"; done
	if findmnt -rn -o TARGET | grep -qF "$1/"; then
		nok "$1: a mount inside it is still there; not removed"; return 1
	fi
	rm -rf "$1"
}

# the guest's part, run as root in the booted root
guest_script() {
	cat <<GUEST
#!/bin/bash
set -u
pkgs="$pkgs"
ok() { echo "ok - \$*"; }
nok() { echo "not ok - \$*"; }
k=\$(uname -r)
echo "guest: \$k, \$(. /etc/os-release; echo \$PRETTY_NAME)"
t0=\$(date +%s)
if dpkg -i /root/debs/*.deb >/root/dpkg-i.log 2>&1; then
	ok "dpkg -i \$pkgs (\$((\$(date +%s) - t0)) s, DKMS build included)"
else
	nok "dpkg -i failed:"; tail -n 30 /root/dpkg-i.log
fi
grep -i -E 'dkms|sch_arbtable|error' /root/dpkg-i.log | head -n 20 | sed 's/^/  | /'
st=\$(dkms status sch-arbtable 2>&1)
echo "  dkms status: \$st"
if grep -q "sch-arbtable/.*, \$k, .*: installed" <<<"\$st"; then
	ok "DKMS built and installed the module for \$k"
else
	nok "DKMS: no installed module for \$k"
	for f in /var/lib/dkms/sch-arbtable/*/build/make.log; do [ -f "\$f" ] && tail -n 20 "\$f"; done
fi
for p in \$pkgs; do dpkg -L \$p; done | sort -u >/root/listed.txt
echo "  dpkg -L: \$(wc -l </root/listed.txt) paths"
if modprobe sch_arbtable; then
	ok "modprobe sch_arbtable: \$(modinfo -n sch_arbtable), version \$(modinfo -F version sch_arbtable)"
else
	nok "modprobe sch_arbtable"
fi
case \$(modinfo -n sch_arbtable 2>/dev/null) in
/lib/modules/\$k/updates/dkms/sch_arbtable.ko*) ok "the module is DKMS's" ;;
*) nok "the module is not DKMS's: \$(modinfo -n sch_arbtable 2>&1)" ;;
esac
unset TC_LIB_DIR
ip link add arbt0 type dummy && ip link set arbt0 up
echo "  the README's first example (dev arbt0, the packaged plugin):"
fails=0
while IFS= read -r line; do
	echo "  # \$line"
	out=\$(bash -c "\$line" 2>&1); rc=\$?
	[ -n "\$out" ] && sed 's/^/  /' <<<"\$out"
	[ \$rc = 0 ] || { echo "  (exit \$rc)"; fails=\$((fails + 1)); }
done <<'EXAMPLE'
$example
EXAMPLE
[ \$fails = 0 ] && ok "the README's first example: every command succeeded" || nok "the README's first example: \$fails commands failed"
q=\$(tc qdisc show dev arbt0)
grep -q '^qdisc arbtable 1: root' <<<"\$q" && ok "tc shows the qdisc with the packaged plugin: \$(head -n1 <<<"\$q")" || nok "tc qdisc show: \$q"
# as many classes as the example adds
want=\$(grep -c '^tc class add' <<'EXAMPLE'
$example
EXAMPLE
)
n=\$(tc class show dev arbt0 | grep -c '^class arbtable')
[ "\$n" -eq "\$want" ] && ok "tc shows the example's \$n arbtable classes" || nok "tc shows \$n arbtable classes, the example adds \$want"
if out=\$(arbtablectl show arbt0 2>&1); then ok "arbtablectl show arbt0 (\$(wc -l <<<"\$out") lines)"; else nok "arbtablectl show arbt0: \$out"; fi
arbsim --version >/dev/null 2>&1 || arbsim -h >/dev/null 2>&1; echo "  arbsim: \$(command -v arbsim)"
tc qdisc del dev arbt0 root; ip link del arbt0
rmmod sch_arbtable || nok "rmmod sch_arbtable"
# the splats selftests/arbtable/lib_debug.sh looks for (case as printed:
# "loops_per_jiffy" is no Oops)
if dmesg | grep -E 'cut here|BUG|WARNING|Oops|KASAN|KFENCE|UBSAN|general protection|Kernel panic|blocked for more than|soft lockup|refcount_t|list_(add|del) corruption|lockdep|sleeping function called|scheduling while atomic'; then
	nok "kernel log has a splat"
else
	ok "kernel log: no splat"
fi
t0=\$(date +%s)
if dpkg --purge \$pkgs >/root/dpkg-purge.log 2>&1; then
	ok "dpkg --purge (\$((\$(date +%s) - t0)) s)"
else
	nok "dpkg --purge failed:"; tail -n 20 /root/dpkg-purge.log
fi
st=\$(dkms status 2>&1)
[ -z "\$st" ] && ok "dkms status is empty" || nok "dkms status: \$st"
left=\$(while read -r f; do [ -d "\$f" ] && continue; [ -e "\$f" ] || [ -L "\$f" ] && echo "\$f"; done </root/listed.txt)
[ -z "\$left" ] && ok "no file dpkg -L listed is left" || nok "left after purge: \$left"
[ -e /var/lib/dkms/sch-arbtable ] && nok "/var/lib/dkms/sch-arbtable left" || ok "/var/lib/dkms/sch-arbtable gone"
ls /lib/modules/\$k/updates 2>/dev/null | grep -q . && nok "/lib/modules/\$k/updates not empty: \$(ls -R /lib/modules/\$k/updates)" || ok "/lib/modules/\$k/updates has no module left"
GUEST
}

one() { # kernel-label release
	local label=$1 k=$2 run=$RUNS/run-$1 t0 log
	t0=$(date +%s)
	say "--- $label ($k): fresh root $run"
	if [ ! -r "/boot/vmlinuz-$k" ] || [ ! -d "/lib/modules/$k/kernel" ]; then
		nok "$label: /boot/vmlinuz-$k or /lib/modules/$k not installed (scripts/setup.sh)"; return
	fi
	safe_rm "$run" || { nok "$label: could not remove the last run's root $run"; return; }
	cp -a "$base" "$run"
	# the kernel's own modules (dummy, ...): its modules.* copied, kernel/
	# bound read-only from the host; depmod in the guest writes the root's
	mkdir -p "$run/lib/modules/$k/kernel"
	cp -a /lib/modules/"$k"/modules.* "$run/lib/modules/$k/"
	mount --bind "/lib/modules/$k/kernel" "$run/lib/modules/$k/kernel" &&
		mount -o remount,bind,ro "$run/lib/modules/$k/kernel" && mounts+=("$run/lib/modules/$k/kernel")
	if [ "$label" = 7.2 ]; then
		[ -f "$T72/include/config/kernel.release" ] || { nok "7.2: no prepared tree $T72 (scripts/distro-kernel.sh)"; cleanup; return; }
		rm -rf "$run/lib/modules/$k/build"
		mkdir -p "$run/lib/modules/$k/build"
		mount --bind "$T72" "$run/lib/modules/$k/build" &&
			mount -o remount,bind,ro "$run/lib/modules/$k/build" && mounts+=("$run/lib/modules/$k/build")
	fi
	# what was there before (host side): compared after the purge
	(cd "$run" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./tmp \) -prune -o -print) |
		sort >"$RUNS/before-$label.txt"
	mkdir -p "$run/root/debs"
	cp "${debs[@]}" "$run/root/debs/"
	guest_script >"$run/root/pkgtest.sh"
	chmod +x "$run/root/pkgtest.sh"
	local args=(--run "/boot/vmlinuz-$k" --root "$run" --rw --user root --cpus 2 --memory 2G)
	local qopts="-device virtio-rng-pci"
	if [ "${ARBTABLE_KVM:-0}" != 1 ]; then
		args+=(--disable-kvm); qopts="$qopts -accel tcg,thread=single"
	fi
	log=$ROOT/build/packages-$label.console.log
	mkdir -p "$ROOT/build"
	timeout -k 20 "$TMO" vng "${args[@]}" --qemu-opts="$qopts" --verbose --append "loglevel=4" \
		--exec "bash /root/pkgtest.sh" </dev/null >"$RUNS/guest-$label.out" 2>"$log"
	local vrc=$?
	grep -E '^(ok|not ok) - |^  |^guest:' "$RUNS/guest-$label.out" | sed "s/^\(not \)\{0,1\}ok - /&$label: /"
	pass=$((pass + $(grep -c '^ok - ' "$RUNS/guest-$label.out")))
	fail=$((fail + $(grep -c '^not ok - ' "$RUNS/guest-$label.out")))
	[ "$vrc" = 0 ] || nok "$label: vng exit $vrc (console: $log)"
	grep -q '^ok - dkms status is empty' "$RUNS/guest-$label.out" ||
		nok "$label: the guest did not get to the end of its checks"
	cleanup
	# leftovers: paths in the root now that were not before the install,
	# but for the logs, apt/dpkg's own bookkeeping and the test's files
	(cd "$run" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./tmp \) -prune -o -print) |
		sort >"$RUNS/after-$label.txt"
	local new
	new=$(comm -13 "$RUNS/before-$label.txt" "$RUNS/after-$label.txt" |
		grep -v -E '^\./(var/log|var/lib/dpkg|var/cache|var/lib/systemd|var/tmp|root)(/|$)|^\./etc/(ld\.so\.cache|sudoers)$')
	if [ -z "$new" ]; then
		ok "$label: no path in the root that was not there before the install (find, host side)"
	else
		nok "$label: left in the root after the purge: $(echo $new)"
	fi
	say "$label: $(($(date +%s) - t0)) s"
	[ "${ARBT_PKG_KEEP:-0}" = 1 ] || safe_rm "$run"
}

labels=${*:-6.1 7.2}
for l in $labels; do
	case $l in
	6.1) one 6.1 "$K61" ;;
	7.2) one 7.2 "$K72" ;;
	*) nok "unknown kernel $l (6.1 or 7.2)" ;;
	esac
done
echo "packages-check: $pass passed, $fail failed"
[ "$fail" = 0 ]
