#!/usr/bin/env bash
# `make bench-vm`: guest instructions per packet through each qdisc,
# counted by a QEMU TCG plugin (tests/bench/vm/insn_plugin.c) in one VM
# run with one vCPU; packets/s from the same runs as a secondary column.
# Not a test: nothing here fails on a number.
#
#   tests/bench/vm/run.sh [KVER]      default: the 6.12 distro kernel
# Environment: BENCH_MODES, BENCH_QDISCS, BENCH_NS, BENCH_SIZES, BENCH_REPS,
# BENCH_PKTS, BENCH_SHAPED_PKTS, BENCH_SHAPED_PPS (see guest-bench.sh);
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

rm -f "$OUT/plugin.log"
echo "bench-vm: one VM ($KVER, TCG, 1 vCPU, instruction-counting plugin); progress below"
t0=$(date +%s)
popt=
[ -n "${BENCH_PROFILE:-}" ] && popt=,profile=on
ARBTABLE_VM_CPUS=1 ARBTABLE_VM_QEMU_OPTS="-plugin $OUT/insn_plugin.so$popt -d plugin -D $OUT/plugin.log" \
	bash "$ROOT/scripts/vm.sh" -k "$KVER" -t 5400 -- env \
	BENCH_QDISCS="${BENCH_QDISCS:-}" BENCH_NS="${BENCH_NS:-}" BENCH_SIZES="${BENCH_SIZES:-}" \
	BENCH_REPS="${BENCH_REPS:-}" BENCH_PKTS="${BENCH_PKTS:-}" BENCH_PROFILE="${BENCH_PROFILE:-}" MARKER="$OUT/marker" \
	BENCH_MODES="${BENCH_MODES:-}" BENCH_SHAPED_PKTS="${BENCH_SHAPED_PKTS:-}" BENCH_SHAPED_PPS="${BENCH_SHAPED_PPS:-}" \
	bash "$ROOT/tests/bench/vm/guest-bench.sh" 2>&1 | tee "$OUT/guest.log" | grep --line-buffered -E '^(RUN|BENCH|\[vm)' || true
echo "bench-vm: VM run took $(($(date +%s) - t0)) s"
python3 "$ROOT/tests/bench/vm/report.py" --guest "$OUT/guest.log" --marks "$OUT/plugin.log" \
	--kernel "$KVER" --out "$ROOT/build/bench" ${BENCH_PROFILE:+--profile}
