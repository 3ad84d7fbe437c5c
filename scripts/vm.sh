#!/usr/bin/env bash
# Boot a distro kernel under virtme-ng with the host filesystem, load the
# built sch_arbtable module, point tc at the built plugin and run a command.
#
#   scripts/vm.sh [-k KVER | -K DIR] [-n] [-t SECONDS] [-M] [--] CMD [ARG...]
#
#   -k KVER     kernel in /boot (default: the 6.1 distro kernel)
#   -K DIR      a built kernel source tree instead (the sanitizer kernel,
#               scripts/sanitizer-kernel.sh); vng boots it with its own
#               modules, sch_arbtable included (modprobe, unless ARBT_KO)
#   -n          two virtio-net NICs on one QEMU hub (vng --network loop)
#   -t SECONDS  hard timeout for boot + command (default 1200)
#   -M          do not insmod the module (harness dry runs)
#
# Environment: ARBTABLE_KVM=1 uses KVM (default TCG: nested KVM hangs at boot
# on our CI machines), ARBTABLE_VM_VERBOSE=1 shows the guest console,
# ARBTABLE_VM_CPUS / ARBTABLE_VM_MEM override 4 / 2G, ARBTABLE_VM_QEMU_OPTS
# adds QEMU options (the bench's TCG plugin), ARBTABLE_VM_APPEND kernel boot
# options, ARBTABLE_VM_9P_CACHE the root's 9p cache mode (default loose),
# ARBTABLE_VM_BOOT_TMO seconds a guest may take to come up before it is
# stopped and booted again (default 1500; ARBTABLE_VM_BOOT_TRIES, 3),
# ARBTABLE_VM_WARM=0 leaves the programs' files on 9p (scripts/vm-warm.sh),
# ARBTABLE_VM_ASLR=1 boots without norandmaps, ARBTABLE_VM_IOEVENTFD=1
# with vng's virtio devices as they are (both below);
# ARBT_* variables are exported into the guest (e.g. ARBT_TESTS="deficit ceil" for run_all.sh;
# ARBT_KO=FILE loads that module instead of build/<kver>/sch_arbtable.ko).
# Exit status: the command's; 124 on timeout; 125 when the VM did not boot
# or died before the command finished; 126 when the command finished but
# the console shows a kernel splat.  No tty or stdin needed.  The guest
# console (kernel messages at warning level and above) goes to a file in
# build/vm/; on a timeout or a death its tail is printed and the file kept.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KVER=${KVER:-$(ls /boot/vmlinuz-6.1.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
NET=
TMO=${ARBTABLE_VM_TIMEOUT:-1200}
LOADMOD=1
KDIR=
while [ $# -gt 0 ]; do
	case $1 in
	-k) KVER=$2; shift 2 ;;
	-K) KDIR=$2; shift 2 ;;
	-n) NET=1; shift ;;
	-t) TMO=$2; shift 2 ;;
	-M) LOADMOD=; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	-*) echo "vm.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "vm.sh: no command given (see -h)" >&2; exit 2; }
say() { echo "[vm $KVER] $*"; }

if [ -n "$KDIR" ]; then
	kimg=$KDIR
	KVER=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null) ||
		{ echo "vm.sh: $KDIR is not a built kernel tree"; exit 125; }
	[ -r "$KDIR/arch/x86/boot/bzImage" ] || { say "no $KDIR/arch/x86/boot/bzImage"; exit 125; }
else
	kimg=/boot/vmlinuz-$KVER
	[ -r "$kimg" ] || { say "no kernel image $kimg"; exit 125; }
fi
command -v vng >/dev/null || { say "vng not installed (run scripts/setup.sh)"; exit 125; }

# The guest sees the host filesystem read-only: the wrapper lives in build/.
mkdir -p "$ROOT/build/vm"
guest=$(mktemp "$ROOT/build/vm/guest.XXXXXX.sh")
trap 'rm -f "$guest"' EXIT
# the files the tests' process starts read, copied into the guest's
# memory before the command runs (scripts/vm-warm.sh says why;
# ARBTABLE_VM_WARM=0 leaves them on 9p)
warm=
[ "${ARBTABLE_VM_WARM:-1}" = 1 ] && warm=$(bash "$ROOT/scripts/vm-warm.sh")
{
	printf '#!/usr/bin/env bash\n'
	printf 'ROOT=%q KVER=%q LOADMOD=%q\n' "$ROOT" "$KVER" "$LOADMOD"
	printf 'WARM=%q\n' "$warm"
	printf 'KDIR=%q\n' "$KDIR"
	# test selection and tuning knobs (ARBT_*) follow into the guest
	for v in ${!ARBT_@}; do printf 'export %s=%q\n' "$v" "${!v}"; done
	cat <<'GUEST'
# the command's stderr joins its stdout: the VM's stderr is the console
exec 2>&1
echo "@@ARBT guest up: $(uname -r)"
cd "$ROOT" || exit 125
# one touch copies them all up into the overlays' tmpfs upper layers
if [ -n "$WARM" ]; then
	mapfile -t wf <<<"$WARM"
	t0=${EPOCHREALTIME/./}
	touch -a -c -- "${wf[@]}" 2>/dev/null || echo "vm: not every file could be copied up (no overlay on /usr or /etc?)"
	t1=${EPOCHREALTIME/./}
	echo "vm: ${#wf[@]} files the tests' process starts read, copied into the guest's memory in $(((t1 - t0) / 1000)) ms"
fi
# -K: the tree's modules (vng installs them under $KDIR/.virtme_mods as
# release 0.0.0) must be what modprobe finds, both for the tests' own
# modprobe calls and for the kernel's request_module() ("ip link add type
# dummy", qdisc and classifier names). virtme-init's link at
# /lib/modules/<release> was not there on a kernel tree ("Unknown
# device type"), so both go through a wrapper that names the tree.
if [ -n "$KDIR" ]; then
	mkdir -p /tmp/arbt-bin
	printf '#!/bin/sh\nexec /sbin/modprobe -d %q -S 0.0.0 "$@"\n' \
		"$KDIR/.virtme_mods" >/tmp/arbt-bin/modprobe
	chmod +x /tmp/arbt-bin/modprobe
	export PATH=/tmp/arbt-bin:$PATH
	echo /tmp/arbt-bin/modprobe >/proc/sys/kernel/modprobe ||
		echo "vm: cannot point the kernel's modprobe at $KDIR"
fi
export TC_LIB_DIR=$ROOT/build/tc ARBT_ROOT=$ROOT KVER
# every tc run that names arbtable dlopens the plugin: from the guest's
# memory (/tmp is an overlay on tmpfs), not over 9p; the same file
if [ -n "$WARM" ] && mkdir -p /tmp/arbt-tclib && cp "$TC_LIB_DIR"/*.so /tmp/arbt-tclib/ 2>/dev/null; then
	TC_LIB_DIR=/tmp/arbt-tclib
fi
ko=${ARBT_KO:-$ROOT/build/$KVER/sch_arbtable.ko}
if [ -n "$LOADMOD" ] && [ -n "$KDIR" ] && [ -z "${ARBT_KO:-}" ]; then
	# a kernel tree with sch_arbtable in net/sched: its own module
	if modprobe sch_arbtable; then
		echo "vm: loaded the tree's sch_arbtable (modprobe)"
	else
		echo "vm: modprobe sch_arbtable from $KDIR failed:"; dmesg | tail -n 5
	fi
elif [ -n "$LOADMOD" ]; then
	if [ -f "$ko" ]; then
		for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
			modprobe "$dep" || echo "vm: modprobe $dep (needed by sch_arbtable) failed"
		done
		if insmod "$ko"; then
			echo "vm: loaded $ko"
		else
			echo "vm: insmod $ko failed:"; dmesg | tail -n 5
		fi
	else
		echo "vm: $ko not built (make module)"
	fi
	[ -f "$TC_LIB_DIR/q_arbtable.so" ] || echo "vm: $TC_LIB_DIR/q_arbtable.so not built (make plugin)"
fi
"$@"
rc=$?
echo "@@ARBT guest rc=$rc"
exit $rc
GUEST
} >"$guest"
chmod +x "$guest"

args=(--run "$kimg" --user root --cpus "${ARBTABLE_VM_CPUS:-4}" --memory "${ARBTABLE_VM_MEM:-2G}")
mode=TCG
# Under TCG every vCPU runs in one host thread (thread=single): with
# multi-threaded TCG a vCPU could still run a translated block holding an
# int3 the kernel had already patched away (6.12 guests died of "Oops:
# int3" in ttwu_do_activate, on an idle CPU, with no arbtable frame: text
# patching of a static key; make test from a fresh clone of bf2de82,
# 2026-11-27).  ARBTABLE_VM_TCG_THREAD=multi restores multi-threaded TCG.
tcg_opt=
if [ "${ARBTABLE_KVM:-0}" = 1 ]; then
	mode=KVM
else
	args+=(--disable-kvm)
	mode="TCG ${ARBTABLE_VM_TCG_THREAD:-single}-threaded"
	tcg_opt="-accel tcg,thread=${ARBTABLE_VM_TCG_THREAD:-single}"
fi
[ -n "$NET" ] && args+=(--network loop)
# a host directory the guest may write, at /tmp/arbt-rw in the guest
# (scripts/test.sh's full-run queue; vng mounts it only under a path
# the guest can create, not on the read-only root)
[ -n "${ARBTABLE_VM_RWDIR:-}" ] && args+=("--rwdir=/tmp/arbt-rw=$ARBTABLE_VM_RWDIR")
# Kernel boot options for the guest (none by default).  Under TCG the
# clocksource watchdog can mark the TSC unstable; the 6.12 guest then died
# in the int3 text patching that follows ("Oops: int3" in
# ttwu_do_activate, 2 of 2 runs of test_tcp_tenants), which
# ARBTABLE_VM_APPEND=tsc=reliable avoided in one run; but a CI-path run
# with it hung the 6.1 guest at test_child_drop's setup, so it is not the
# default.
# The console: ARBTABLE_VM_VERBOSE=1 shows all of it inline; otherwise
# warnings and worse (loglevel=5: an oops, a splat's trace, a hung task, a
# lockup) go to $console, so a guest that dies or hangs says why.
# log_buf_len: a ring buffer that holds a whole test's kernel log, so
# that each test's window of it is read whole (run_all.sh; it fails a
# window whose records were overwritten before they were read)
# The root: the host's, over 9p (--force-9p: the same on a host with a
# Rust virtiofsd as on Debian 12, which has none), read-only, with the
# guest's page cache kept (cache=loose; vng mounts it uncached).  Every
# process start in the guest reads its binary and libraries again when
# uncached: booting the sanitizer kernel took 176 s uncached and 115 s
# cached (2026-11-27).  Nothing on the host writes what a guest reads
# while it runs (make all has built it); ARBTABLE_VM_9P_CACHE=none mounts
# it uncached again.
# norandmaps: every process of the guest maps its binary, its libraries
# and its stack at the same addresses, so that QEMU's TCG finds the code
# it translated for the last process at the same guest addresses (its jump
# cache is indexed by virtual address) instead of translating it again.
# A process start costs about half as much: bash -c true 123 -> 48 ms,
# tc qdisc show 102 -> 57-77 ms on 7.2 (2026-12-02), and test_config,
# test_cni and test_capacity took 176 s instead of 273 s, one guest
# alone.  A whole make test: 1473 s against 1743 s on the fast end, but
# next to nothing at the slow end (its lanes ended at 3566 s against
# 3548; Documentation/dev/testing.rst, Time).  It touches only user space address layout (KASLR stays);
# ARBTABLE_VM_ASLR=1 keeps the randomised layout.
args+=(--force-9p)
append="rootflags=version=9p2000.L,trans=virtio,access=any,cache=${ARBTABLE_VM_9P_CACHE:-loose} log_buf_len=16M"
[ "${ARBTABLE_VM_ASLR:-0}" = 1 ] || append+=" norandmaps"
append+="${ARBTABLE_VM_APPEND:+ $ARBTABLE_VM_APPEND}"
console=
args+=(--verbose)
if [ "${ARBTABLE_VM_VERBOSE:-0}" != 1 ]; then
	console=$ROOT/build/vm/console-$KVER.$$.log
	append="loglevel=5${append:+ $append}"
fi
[ -n "$append" ] && args+=(--append "$append")
# An entropy source for the guest: virtme gives it none, and an idle TCG
# guest then takes minutes to seed its CRNG (the sanitizer kernel: "crng
# init done" 268 s after boot, while a program blocked in getrandom()
# left test_gso without a result for 20 minutes, 2026-11-25); with
# virtio-rng (HW_RANDOM_VIRTIO in both kernels) it was seeded at 21 s.
# QEMU's main loop polls every ioeventfd of every device on each of its
# wakeups (thousands a second under TCG: guest timers, kicks).  vng adds
# six virtio-serial devices of 31 ports each: 395 eventfds, and the main
# loop took 30 % of a guest's CPU time, most of it in the host kernel's
# poll (do_sys_poll, fdget, eventfd_poll).  Two ports a device (port 0 is
# the console's, vng uses port 1) and, under TCG, no ioeventfd at all (a
# guest's notify is taken in the vCPU thread that made it; KVM keeps
# them): one 7.2 guest alone ran test_containerd, test_auto_config,
# test_strict, test_json and test_capacity on 174 + 89 = 263 CPU-seconds
# of QEMU before, 163 + 21 = 184 after (2026-12-02).  The NICs' notify
# in the vCPU thread also let a guest make test_tcp_tenants' 30 Mbit/s
# load at the slow end: two guests in one CPU's time kept the link busy
# 0.95 of the window with it, 0.82-0.83 with the NICs' ioeventfd on (the
# UDP flood then made 12.7 and 26.3 of its 36 Mbit/s: a skip).  A whole
# make test at the slow end: 2219 s against 3847 (testing.rst, Time).
# ARBTABLE_VM_IOEVENTFD=1 keeps vng's devices as they are.
dev_opts=
if [ "${ARBTABLE_VM_IOEVENTFD:-0}" != 1 ]; then
	dev_opts="-global virtio-serial-pci.max_ports=2"
	[ -n "$tcg_opt" ] && for d in virtio-serial-pci virtio-9p-pci virtio-net-pci virtio-rng-pci; do
		dev_opts+=" -global $d.ioeventfd=off"
	done
fi
qopts="-device virtio-rng-pci${tcg_opt:+ $tcg_opt}${dev_opts:+ $dev_opts}${ARBTABLE_VM_QEMU_OPTS:+ $ARBTABLE_VM_QEMU_OPTS}"
args+=("--qemu-opts=$qopts")
cmd=$(printf '%q ' bash "$guest" "$@")
args+=(--exec "$cmd")

# what a kernel splat prints (selftests/arbtable/lib_debug.sh's list)
SPLAT_PAT=$(sed -n "s/^_klog_pat='\(.*\)'\$/\1/p" "$ROOT/selftests/arbtable/lib_debug.sh")
[ -n "$SPLAT_PAT" ] || SPLAT_PAT='BUG|WARNING|Oops|Kernel panic'
# console_tail: the console's last lines, and its first splat on one line
# ("[vm KVER] console: ...") for the caller's failure summary
console_tail() {
	[ -n "$console" ] && [ -s "$console" ] || { say "console: nothing printed (warning level and above)"; return; }
	say "guest console, last 40 lines (all in $console):"
	tail -n 40 "$console" | sed 's/^/    /'
	local first
	first=$(grep -v 'Command line:' "$console" | grep -m1 -E "$SPLAT_PAT|Out of memory")
	say "console: ${first:-no oops, splat or lockup among $(wc -l <"$console") lines}"
}
# A boot that fails before the guest is up (vng exit 255 within seconds,
# seen once in CI between two VMs and not reproducible) is retried: the
# module is not loaded yet, so nothing of ours ran.  So is a guest not up
# after ARBTABLE_VM_BOOT_TMO seconds (default 1500; the sanitizer guest
# boots in 148-434 s, 440 s on a host loaded with three guests): the
# sanitizer guest of a cold make test printed its console's early lines
# (to "tsc: Unable to calibrate against PIT", as every boot here does)
# and then nothing until its 4200 s limit, its lane's whole run lost
# (2026-11-29).  A failure after the guest came up is never retried.
tries=${ARBTABLE_VM_BOOT_TRIES:-3}
boot_tmo=${ARBTABLE_VM_BOOT_TMO:-1500}
try=0
while :; do
	try=$((try + 1))
	say "booting ($mode, ${ARBTABLE_VM_CPUS:-4} cpus${NET:+, network loop}, timeout ${TMO}s${try:+, try $try of $tries})"
	start=$(date +%s)
	booted=
	finished=
	grc=
	vrc=
	tpid=
	stuck=
	part=
	while :; do
		if IFS= read -r -t 10 line; then
			line=$part$line
			part=
		elif [ $? -gt 128 ]; then
			# nothing for 10 s (a partial line kept for the next read)
			part+=$line
			if [ -z "$booted" ] && [ -z "$stuck" ] && [ -n "$tpid" ] &&
				[ $(($(date +%s) - start)) -ge "$boot_tmo" ]; then
				stuck=1
				say "the guest is not up after ${boot_tmo}s: stopping it"
				kill -TERM "$tpid" 2>/dev/null
			fi
			continue
		else
			break
		fi
		case $line in
		"@@ARBT guest up:"*)
			booted=$(($(date +%s) - start))
			say "booted in ${booted}s"
			;;
		"@@ARBT guest rc="*)
			finished=1
			grc=${line#@@ARBT guest rc=}
			;;
		"@@ARBT vng rc="*) vrc=${line#@@ARBT vng rc=} ;;
		"@@ARBT timeout pid="*) tpid=${line#@@ARBT timeout pid=} ;;
		*) printf '%s\n' "$line" ;;
		esac
	done < <(if [ -n "$console" ]; then
			timeout -k 20 "$TMO" vng "${args[@]}" </dev/null 2>"$console" &
		else
			timeout -k 20 "$TMO" vng "${args[@]}" </dev/null 2>&1 &
		fi
		echo "@@ARBT timeout pid=$!"
		wait $!
		echo "@@ARBT vng rc=$?")
	if [ -n "$stuck" ] && [ "$try" -lt "$tries" ]; then
		console_tail
		say "boot stopped after ${boot_tmo}s without the guest; booting again"
		sleep 5
		continue
	fi
	[ -z "$booted" ] && [ "$vrc" != 124 ] && [ "$vrc" != 137 ] && [ "$try" -lt "$tries" ] || break
	say "boot failed before the guest was up (vng exit $vrc after $(($(date +%s) - start))s); booting again"
	sleep 5
done
el=$(($(date +%s) - start))
if [ "$vrc" = 124 ] || [ "$vrc" = 137 ]; then
	console_tail
	say "TIMEOUT after ${el}s (limit ${TMO}s)${booted:+; guest had booted in ${booted}s}"
	exit 124
fi
if [ -z "$booted" ] || [ -z "$finished" ]; then
	console_tail
fi
if [ -z "$booted" ]; then
	say "BOOT FAILED after ${el}s (vng exit $vrc); rerun with ARBTABLE_VM_VERBOSE=1 for the console"
	exit 125
fi
if [ -z "$finished" ]; then
	say "guest died before the command finished (vng exit $vrc, ${el}s); kernel panic? rerun with ARBTABLE_VM_VERBOSE=1"
	exit 125
fi
# A clean exit is not a clean kernel: the console (warning level and
# above, the whole run) is scanned on success too, and a splat on it
# fails the run (exit 126) with its lines, whatever the command said.
say "done in ${el}s (boot ${booted}s), command exit $grc"
if [ -n "$console" ]; then
	# (KCSAN reports: the guest's own check tells ours from the others)
	splat=$(grep -v -e 'Command line:' -e 'BUG: KCSAN:' "$console" | grep -E "$SPLAT_PAT")
	if [ -n "$splat" ]; then
		console_tail
		say "KERNEL SPLAT on the console of a run that finished (exit $grc): counted as a failure"
		exit 126
	fi
	rm -f "$console"
fi
exit "$grc"
