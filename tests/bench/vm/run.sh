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
# TCP over veth, instructions per segment);
# BENCH_PROFILE=1 also attributes instructions to kernel symbols per run
# (slow).  Results: build/bench/vm-results.{csv,json}.
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
CACHE=${CACHE:-/var/cache/arbtable}
OUT=$ROOT/build/bench/vm
KVER=${1:-$(ls /boot/vmlinuz-6.12.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
mkdir -p "$OUT"

# qemu-plugin.h from Debian's qemu source package (QEMU 7.2, the
# installed qemu-system-x86's version), fetched once into the cache.
hdr=$CACHE/qemu-src/qemu-7.2.0/include/qemu/qemu-plugin.h
if [ ! -f "$hdr" ]; then
	echo "bench-vm: fetching qemu-plugin.h (apt-get source --download-only qemu)"
	mkdir -p "$CACHE/qemu-src"
	(cd "$CACHE/qemu-src" && apt-get source --download-only -qq qemu >/dev/null 2>&1)
	tar -C "$CACHE/qemu-src" -xJf "$(ls "$CACHE"/qemu-src/qemu_*.orig.tar.xz | head -n1)" \
		qemu-7.2.0/include/qemu/qemu-plugin.h
fi
cc -O2 -shared -fPIC -Wall -Wextra -Werror -I"$(dirname "$hdr")" \
	-o "$OUT/insn_plugin.so" "$ROOT/tests/bench/vm/insn_plugin.c"
cc -O2 -static -o "$OUT/marker" "$ROOT/tests/bench/vm/marker.c"
make -s -C "$ROOT" all >/dev/null

rm -f "$OUT"/guest-*.log "$OUT"/plugin-*.log "$OUT/skip" "$OUT/tries" "$OUT/left-out"
touch "$OUT/skip" "$OUT/tries"
popt=
[ -n "${BENCH_PROFILE:-}" ] && popt=,profile=on
# One VM normally.  If the guest dies (seen here: the 6.12 distro kernel's
# slab list corrupted in dummy_xmit -> kfree_skb under a tbf parent, after
# 8-15 minutes of shaped bursts, with no arbtable qdisc configured), boot
# again and go on with the configurations not yet finished; the one a
# crash interrupted is retried once, then left out and named.
boots=${BENCH_BOOTS:-4}
t0=$(date +%s)
b=0
while [ "$b" -lt "$boots" ]; do
	b=$((b + 1))
	echo "bench-vm: VM boot $b ($KVER, TCG, 1 vCPU, instruction-counting plugin); progress below"
	ARBTABLE_VM_VERBOSE=1 ARBTABLE_VM_CPUS=1 \
	ARBTABLE_VM_QEMU_OPTS="-plugin $OUT/insn_plugin.so$popt -d plugin -D $OUT/plugin-$b.log" \
		bash "$ROOT/scripts/vm.sh" -k "$KVER" -t 5400 -- env \
		BENCH_QDISCS="${BENCH_QDISCS:-}" BENCH_NS="${BENCH_NS:-}" BENCH_SIZES="${BENCH_SIZES:-}" \
		BENCH_REPS="${BENCH_REPS:-}" BENCH_PKTS="${BENCH_PKTS:-}" BENCH_PROFILE="${BENCH_PROFILE:-}" MARKER="$OUT/marker" \
		BENCH_MODES="${BENCH_MODES:-}" BENCH_SHAPED_PKTS="${BENCH_SHAPED_PKTS:-}" BENCH_SHAPED_PPS="${BENCH_SHAPED_PPS:-}" \
		BENCH_GSO_QDISCS="${BENCH_GSO_QDISCS:-}" BENCH_GSO_BYTES="${BENCH_GSO_BYTES:-}" BENCH_GSO_REPS="${BENCH_GSO_REPS:-}" \
		BENCH_SKIP="$OUT/skip" \
		bash "$ROOT/tests/bench/vm/guest-bench.sh" 2>&1 | tee "$OUT/guest-$b.log" |
		grep --line-buffered -E '^(RUN|BENCH|\[vm)' || true
	grep -q '^BENCH-DONE' "$OUT/guest-$b.log" && break
	echo "bench-vm: the guest died in boot $b; its kernel said:"
	grep -m 4 -E 'BUG|corruption|Oops|panic|WARNING' "$OUT/guest-$b.log" | sed 's/^/  /'
	sed -nE 's/^COMBO (.*)$/\1/p' "$OUT/guest-$b.log" >>"$OUT/skip"
	cur=$(sed -nE 's/^START (.*)$/\1/p' "$OUT/guest-$b.log" | tail -n1)
	if [ -n "$cur" ] && ! grep -qxF "$cur" "$OUT/skip"; then
		if grep -qxF "$cur" "$OUT/tries"; then
			echo "bench-vm: left out (the guest died in it twice): $cur"
			echo "$cur" >>"$OUT/skip"
			echo "LEFT-OUT $cur" >>"$OUT/left-out"
		else
			echo "$cur" >>"$OUT/tries"
		fi
	fi
done
echo "bench-vm: VM runs took $(($(date +%s) - t0)) s in $b boot(s)"
args=()
for ((i = 1; i <= b; i++)); do
	args+=(--guest "$OUT/guest-$i.log" --marks "$OUT/plugin-$i.log")
done
python3 "$ROOT/tests/bench/vm/report.py" "${args[@]}" \
	--left-out "$OUT/left-out" --kernel "$KVER" --out "$ROOT/build/bench" ${BENCH_PROFILE:+--profile}
