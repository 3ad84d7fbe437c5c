#!/usr/bin/env bash
# `make bench-vm`: guest instructions per packet through each qdisc,
# counted by a QEMU TCG plugin (tests/bench/vm/insn_plugin.c) in one VM
# run with one vCPU; packets/s from the same runs as a secondary column.
# Not a test: nothing here fails on a number.
#
#   tests/bench/vm/run.sh [KVER]      default: the 6.12 distro kernel
# Environment: BENCH_MODES, BENCH_QDISCS, BENCH_NS, BENCH_SIZES, BENCH_REPS,
# BENCH_PKTS, BENCH_SHAPED_PKTS, BENCH_SHAPED_PPS, BENCH_GSO_QDISCS,
# BENCH_GSO_BYTES, BENCH_GSO_REPS (see guest-bench.sh; BENCH_MODES=gso:
# TCP over veth, instructions per segment; gso-mss536 and gso-vxlan the
# same at MSS 536 and inside VXLAN; BENCH_MODES=mq: a 4-queue device, 4
# vCPUs, one pinned sender per CPU, BENCH_MQ_QDISCS, BENCH_MQ_PKTS; alone
# in its run, and on the newest 7.x kernel by default, for cake_mq);
# BENCH_PROFILE=1 also attributes instructions to kernel symbols per run
# (slow); BENCH_KDIR=<tree> boots a built kernel tree instead (the
# sanitizer kernel: vm.sh -K); BENCH_NO_MODULE=1 never loads sch_arbtable
# (vm.sh -M; only with BENCH_QDISCS that leave arbtable out), and the
# guest says at the end whether the module was ever loaded.
# Results: build/bench/vm-results.{csv,json}.
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
CACHE=${CACHE:-/var/cache/arbtable}
OUT=$ROOT/build/bench/vm
# mq: 4 vCPUs for 4 senders.  The other modes count one vCPU's path, so
# mq does not share their boot (idle vCPUs' ticks would enter their counts).
cpus=1
newest=6.12
case " ${BENCH_MODES:-} " in
*" mq "*)
	if [ "$(echo ${BENCH_MODES})" != mq ]; then
		echo "bench-vm: BENCH_MODES=mq runs alone (4 vCPUs; the other modes are counted on 1)" >&2
		exit 2
	fi
	cpus=4
	newest=7 ;;
esac
KVER=${1:-$(ls /boot/vmlinuz-$newest.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
kopt=(-k "$KVER")
if [ -n "${BENCH_KDIR:-}" ]; then
	kopt=(-K "$BENCH_KDIR")
	KVER=$(cat "$BENCH_KDIR/include/config/kernel.release")
fi
if [ "${BENCH_NO_MODULE:-0}" = 1 ]; then
	qs=${BENCH_QDISCS:-arbtable}
	case " ${BENCH_MODES:-unshaped shaped} " in *" gso"*) qs+=" ${BENCH_GSO_QDISCS:-arbtable}" ;; esac
	case " ${BENCH_MODES:-} " in *" mq "*) qs+=" ${BENCH_MQ_QDISCS:-arbtable}" ;; esac
	case $qs in
	*arbtable*)
		echo "bench-vm: BENCH_NO_MODULE=1 needs BENCH_QDISCS (and BENCH_GSO_QDISCS in gso mode, BENCH_MQ_QDISCS in mq mode) without arbtable" >&2
		exit 2 ;;
	esac
	kopt+=(-M)
fi
mkdir -p "$OUT"

# qemu-plugin.h from Debian's qemu source package, of the very version
# the installed qemu-system-x86 was built from (its source version, a
# binNMU's +bN suffix stripped: the source package has none), as setup.sh
# fetches tc's source: a bare `apt-get source qemu` picks the newest
# source apt knows, bookworm-backports' (10.0.2, whose .dsc the archive
# answered with 404 on 2026-11-25), not the QEMU that loads the plugin.
# Fetched once per version into $CACHE/qemu-src/<version>/; only the
# orig tarball is read, and its top directory is taken from the tarball.
qver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null || true)
qver=$(printf '%s' "$qver" | sed -E 's/\+b[0-9]+$//')
if [ -z "$qver" ]; then
	echo "bench-vm: qemu-system-x86 is not installed (scripts/setup.sh installs it)" >&2
	exit 1
fi
qdir=$CACHE/qemu-src/${qver#*:}
hdr=$qdir/qemu-plugin.h
if [ ! -f "$hdr" ]; then
	echo "bench-vm: fetching qemu-plugin.h (apt-get source --download-only qemu=$qver)"
	mkdir -p "$CACHE/qemu-src"
	qtmp=$(mktemp -d "$CACHE/qemu-src/.fetch.XXXXXX")
	chmod 755 "$qtmp" # apt's _apt user downloads into it
	if ! (cd "$qtmp" && apt-get source --download-only -qq "qemu=$qver" >/dev/null 2>&1); then
		echo "bench-vm: apt-get source --download-only qemu=$qver failed" \
		     "(is the bookworm deb-src entry from scripts/setup.sh there?)" >&2
		rm -rf "$qtmp"
		exit 1
	fi
	orig=$(ls "$qtmp"/qemu_*.orig.tar.* 2>/dev/null | head -n1)
	member=
	[ -n "$orig" ] && member=$(tar -taf "$orig" | grep -m1 -E '^[^/]+/include/qemu/qemu-plugin\.h$' || true)
	if [ -z "$member" ] || ! tar -C "$qtmp" -xaf "$orig" "$member"; then
		echo "bench-vm: no */include/qemu/qemu-plugin.h in qemu $qver's orig tarball (${orig:-none downloaded})" >&2
		rm -rf "$qtmp"
		exit 1
	fi
	mkdir -p "$qdir"
	mv "$qtmp/$member" "$hdr"
	rm -rf "$qtmp"
fi
cc -O2 -shared -fPIC -Wall -Wextra -Werror -I"$(dirname "$hdr")" \
	-o "$OUT/insn_plugin.so" "$ROOT/tests/bench/vm/insn_plugin.c"
cc -O2 -static -o "$OUT/marker" "$ROOT/tests/bench/vm/marker.c"
make -s -C "$ROOT" all >/dev/null

rm -f "$OUT"/guest-*.log "$OUT"/plugin-*.log
popt=
[ -n "${BENCH_PROFILE:-}" ] && popt=,profile=on
# One VM, and a guest that dies fails the run: no resume.  A crash once
# seen here (the 6.12 distro kernel's slab list corrupted in dummy_xmit ->
# kfree_skb under a tbf parent, no arbtable qdisc configured) was neither
# reproduced without the module nor found by KASAN with it (the same
# sequence on the sanitizer kernel, BENCH_KDIR): see
# Documentation/networking/arbtable-bench.rst, "The 6.12 guest crash".
# Booting again past it would hide a bug of ours, so the run stops.
t0=$(date +%s)
echo "bench-vm: VM boot ($KVER, TCG, $cpus vCPU(s), instruction-counting plugin); progress below"
ARBTABLE_VM_VERBOSE=1 ARBTABLE_VM_CPUS=$cpus \
ARBTABLE_VM_QEMU_OPTS="-plugin $OUT/insn_plugin.so$popt -d plugin -D $OUT/plugin-1.log" \
	bash "$ROOT/scripts/vm.sh" "${kopt[@]}" -t 5400 -- env \
	BENCH_QDISCS="${BENCH_QDISCS:-}" BENCH_NS="${BENCH_NS:-}" BENCH_SIZES="${BENCH_SIZES:-}" \
	BENCH_REPS="${BENCH_REPS:-}" BENCH_PKTS="${BENCH_PKTS:-}" BENCH_PROFILE="${BENCH_PROFILE:-}" MARKER="$OUT/marker" \
	BENCH_MODES="${BENCH_MODES:-}" BENCH_SHAPED_PKTS="${BENCH_SHAPED_PKTS:-}" BENCH_SHAPED_PPS="${BENCH_SHAPED_PPS:-}" \
	BENCH_GSO_QDISCS="${BENCH_GSO_QDISCS:-}" BENCH_GSO_BYTES="${BENCH_GSO_BYTES:-}" BENCH_GSO_REPS="${BENCH_GSO_REPS:-}" \
	BENCH_MQ_QDISCS="${BENCH_MQ_QDISCS:-}" BENCH_MQ_PKTS="${BENCH_MQ_PKTS:-}" \
	bash "$ROOT/tests/bench/vm/guest-bench.sh" 2>&1 | tee "$OUT/guest-1.log" |
	grep --line-buffered -E '^(RUN|SPREAD|BENCH|\[vm)' || true
grep -E '^(MODULE|SPLATS|KMEMLEAK [0-9]+ unref)' "$OUT/guest-1.log" || true
echo "bench-vm: the VM run took $(($(date +%s) - t0)) s"
if ! grep -q '^BENCH-DONE' "$OUT/guest-1.log"; then
	echo "bench-vm: FAILED: the guest died in: $(sed -nE 's/^START (.*)$/\1/p' "$OUT/guest-1.log" | tail -n1)"
	echo "bench-vm: its kernel said (whole console: $OUT/guest-1.log):"
	grep -m 8 -E 'BUG|corruption|Oops|panic|WARNING|KASAN' "$OUT/guest-1.log" | sed 's/^/  /'
	exit 1
fi
python3 "$ROOT/tests/bench/vm/report.py" --guest "$OUT/guest-1.log" --marks "$OUT/plugin-1.log" \
	--kernel "$KVER" --cpus "$cpus" --out "$ROOT/build/bench" ${BENCH_PROFILE:+--profile}
