#!/usr/bin/env bash
# make check-mutants: the module built with each deliberate defect of
# tests/mutants/NN-name.patch and make test's full-run VM tests run on it
# (Debian's 7.2 image, one boot per mutant, the tests one file at a time,
# the fast kernel-facing ones first).  A file with a failed result runs
# again; the run stops after the first file with a check that failed
# ("not ok") both times.  Those checks kill the mutant if they pass on the
# unmutated module, built the same way and run afterwards on the killing
# tests; a guest that died or splatted inside a test kills it if that test
# passes there.  A run whose only deviations are skips SURVIVED it.
#
#   scripts/mutants.sh
#   ARBT_MUTANTS="03 01"        the mutants to run, in that order (numbers or names;
#                               default all)
#   ARBT_MUTANT_TESTS="a b"     the tests, in this order (default: the full run's,
#                               the patch's "Killed by:" test first)
#   ARBT_MUTANT_CONFIRM=0       no run of the killing tests on the unmutated module
#   ARBT_MUTANT_VM_TIMEOUT=S    one boot's limit (default 4800, as the full run's)
#   ARBT_MUTANT_REUSE=1         a mutant's finished run in build/mutants/ (same
#                               patch) is counted again, not repeated
#
# Ends with a table (mutant, result, killing test and check, time) and
# exits non-zero when a mutant survived, did not build, or its kill is not
# confirmed.  Logs in build/mutants/<name>/ (build.log, vm.log).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

# checkid: a check's name as two runs print it: without the measured
# numbers and the parenthesized values at its end
checkid() { sed -E 's/ \([^()]*\)$//; s/[0-9]+/N/g' | sort -u; }
# failed TAP: the descriptions of its failed results
failed() { sed -nE 's/^not ok [0-9]+ - //p' "$1"; }

# ---- guest side: run_all.sh once per test file, in the order given.
# A file with a failed result runs a second time: the checks that failed
# both times are the kill, and the run stops after that file (a timing
# check that failed once because the guest was starved is not a kill);
# ARBT_MUTANT_ALL=1 runs every file once, without stopping.
if [ "${1:-}" = --guest ]; then
	shift
	cd selftests/arbtable || exit 1
	for t in "$@"; do
		echo "@@MUT start $t"
		start=$SECONDS
		bash ./run_all.sh "$t" 2>&1 | tee /tmp/arbt-mutant.tap
		f=$(grep -c '^not ok ' /tmp/arbt-mutant.tap)
		s=$(grep -cE '^ok [0-9]+ .*# SKIP' /tmp/arbt-mutant.tap)
		twice=0
		if [ "$f" != 0 ] && [ "${ARBT_MUTANT_ALL:-0}" != 1 ]; then
			echo "@@MUT again $t"
			bash ./run_all.sh "$t" 2>&1 | tee /tmp/arbt-mutant2.tap
			failed /tmp/arbt-mutant.tap | checkid >/tmp/arbt-mutant.ids
			failed /tmp/arbt-mutant2.tap | while IFS= read -r c; do
				grep -qxF "$(checkid <<<"$c")" /tmp/arbt-mutant.ids && echo "$c"
			done >/tmp/arbt-mutant.twice
			sed 's/^/@@MUT twice /' /tmp/arbt-mutant.twice
			twice=$(grep -c . /tmp/arbt-mutant.twice)
		fi
		echo "@@MUT end $t $((SECONDS - start)) $f $s $twice"
		[ "$twice" = 0 ] || break
	done
	echo "@@MUT done"
	exit 0
fi

t0=$(date +%s)
el() { local s=$(($(date +%s) - ${1:-$t0})); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
say() { echo "[mutants $(el)] $*"; }

K72_TREE=${K72_TREE:-/var/lib/arbtable/distro-7.2/src}
KVER=$(cat "$K72_TREE/include/config/kernel.release" 2>/dev/null)
[ -n "$KVER" ] || { say "Debian's 7.2 tree is not prepared ($K72_TREE; scripts/setup.sh)"; exit 1; }
[ -f build/tc/q_arbtable.so ] || { say "build/tc/q_arbtable.so not built (make all)"; exit 1; }
MUTDIR=$ROOT/build/mutants
mkdir -p "$MUTDIR"

# The full run's tests as scripts/test.sh lists them (every test_*.sh but
# the sanitizer kernel's own), the fast kernel-facing ones first: a mutant
# is killed in minutes instead of after the containers' tests; checks of
# counts and configuration before the rate checks, which a loaded host's
# starved guest fails now and then (each failure costs a second run).
san_only=$(sed -n 's/^SAN_ONLY="\(.*\)"$/\1/p' scripts/test.sh)
[ -n "$san_only" ] || { say "no SAN_ONLY list in scripts/test.sh"; exit 1; }
all=$(ls selftests/arbtable/test_*.sh | sed 's|.*/test_||; s|\.sh$||' | grep -vxF -f <(tr ' ' '\n' <<<"$san_only"))
first="mtu_follow gso_default gso_children deficit config auto_config auto_admit ceil
	strict iba vlan_frames link_change stalled emptied roundtrip dump_lock child_drop
	change_traffic auto_reserve auto_hol classify paths mq gso lib stress tdc arbsim
	capacity auto_churn tcp_tenants"
tests=$(for t in $first; do grep -qxF "$t" <<<"$all" && echo "$t"; done
	grep -vxF -f <(tr ' \t' '\n\n' <<<"$first" | grep .) <<<"$all")
tests=${ARBT_MUTANT_TESTS:-$(echo $tests)}
# order PATCH: the tests for one mutant: without ARBT_MUTANT_TESTS, the
# test its header names ("Killed by: test_NAME", the last run's killer)
# first, then the others in the order above; the run still stops at the
# first file with a check failed twice, whichever it is
order() {
	local k
	k=$(sed -n 's/^Killed by: test_\([a-z0-9_]*\).*/\1/p' "$1" | head -n1)
	if [ -n "${ARBT_MUTANT_TESTS:-}" ] || [ -z "$k" ] || ! grep -qw -- "$k" <<<"$tests"; then
		tr -s ' \t\n' '   ' <<<"$tests"
		return
	fi
	{ echo "$k"; tr ' ' '\n' <<<"$tests" | grep -vxF -- "$k"; } | paste -sd ' ' -
}
ntests=$(wc -w <<<"$tests")

# make test's sizes for the full run (scripts/test.sh without ARBT_FULL)
export ARBT_STRESS_CYCLES=${ARBT_STRESS_CYCLES:-500} ARBT_STRESS_MANUAL=${ARBT_STRESS_MANUAL:-100}
export ARBT_STRESS_REPLACE=${ARBT_STRESS_REPLACE:-3} ARBT_STRESS_DOWNUP=${ARBT_STRESS_DOWNUP:-2}
export ARBT_PODMAN_CYCLES=${ARBT_PODMAN_CYCLES:-2} ARBT_CONTAINERD_CYCLES=${ARBT_CONTAINERD_CYCLES:-2}
export ARBT_CNI_BE_PODS=${ARBT_CNI_BE_PODS:-72} ARBT_TCP_FAST_K=${ARBT_TCP_FAST_K:-3}

# the mutants asked for
patches=()
all_p=(tests/mutants/[0-9]*.patch)
set -f
read -r -a sel <<<"${ARBT_MUTANTS:-*}"
set +f
for m in "${sel[@]}"; do
	k=${#patches[@]}
	for p in "${all_p[@]}"; do
		n=$(basename "$p" .patch)
		# shellcheck disable=SC2254
		case $n in $m|$m-*) patches+=("$p") ;; esac
	done
	[ ${#patches[@]} -gt "$k" ] || { say "no mutant matches '$m' (ARBT_MUTANTS)"; exit 1; }
done

# build NAME [PATCH]: the sources and the module's make rule (Makefile,
# mk/module.mk) copied to build/mutants/NAME/tree, the patch applied, the
# module built for the 7.2 image as make all builds it (W=1, -Werror);
# prints the module's path
build() {
	local d=$MUTDIR/$1 p=${2:-}
	rm -rf "$d"
	mkdir -p "$d/tree/mk"
	cp -r Makefile VERSION kernel include "$d/tree/" && cp mk/module.mk "$d/tree/mk/" || return 1
	if [ -n "$p" ] && ! patch -d "$d/tree" -p1 --no-backup-if-mismatch -s <"$p" >"$d/build.log" 2>&1; then
		echo "patch $p does not apply" >>"$d/build.log"
		return 1
	fi
	make -C "$d/tree" WERROR=1 KVERS="$KVER" K72_TREE="$K72_TREE" BUILD="$d/build" \
		"$d/build/$KVER/sch_arbtable.ko" >>"$d/build.log" 2>&1 || return 1
	echo "$d/build/$KVER/sch_arbtable.ko"
}

# boot NAME KO LABEL STOP TEST...: one guest with module KO running the
# tests one file at a time; progress on stdout, the whole output in
# build/mutants/NAME/vm.log, and per test "name secs fails skips twice" in
# build/mutants/NAME/tests.txt; returns vm.sh's exit
boot() {
	local ko=$2 label=$3 stop=$4 d=$MUTDIR/$1 line i=0 tb vrc t sec f k w
	shift 4
	tb=$(date +%s)
	: >"$d/tests.txt"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$d/vm.log"
		case $line in
		"@@MUT start "*)
			i=$((i + 1))
			say "$label: test ${line#@@MUT start } ($i of $#), boot started $(el "$tb") ago" ;;
		"@@MUT again "*) say "$label: test_${line#@@MUT again } failed: running it again" ;;
		"@@MUT end "*)
			echo "${line#@@MUT end }" >>"$d/tests.txt"
			read -r _ _ t sec f k w <<<"$line"
			say "$label: test_$t: $f failed${w:+ ($w of them twice)}, $k skipped in ${sec}s" ;;
		"not ok "*) say "$label: $line" ;;
		"[vm "*) say "$label: ${line#\[vm * }" ;;
		esac
	done < <(ARBT_KO=$ko ARBT_MUTANT_ALL=$([ "$stop" = 1 ] && echo 0 || echo 1) \
		bash scripts/vm.sh -n -k "$KVER" -t "${ARBT_MUTANT_VM_TIMEOUT:-4800}" -- \
		bash scripts/mutants.sh --guest "$@" 2>&1; echo "@@MUT vm rc=$?")
	vrc=$(sed -n 's/^@@MUT vm rc=//p' "$d/vm.log" | tail -n1)
	return "${vrc:-125}"
}

declare -A res check killer secs skips
names=()
for p in "${patches[@]}"; do
	n=$(basename "$p" .patch)
	names+=("$n")
	tm=$(date +%s)
	if [ "${ARBT_MUTANT_REUSE:-0}" = 1 ] && [ -s "$MUTDIR/$n/time.txt" ] &&
		cmp -s "$p" "$MUTDIR/$n/mutant.patch"; then
		say "mutant $n: the run in build/mutants/$n/ (ARBT_MUTANT_REUSE=1)"
		read -r secs[$n] vrc <"$MUTDIR/$n/time.txt"
	else
		say "mutant $n: building ($(sed -n 1p "$p"))"
		if ! ko=$(build "$n" "$p"); then
			res[$n]="ERROR: does not build"
			check[$n]="$(tail -n 3 "$MUTDIR/$n/build.log" | tr '\n' ' ' | cut -c1-200)"
			secs[$n]=$(($(date +%s) - tm))
			say "mutant $n: ${res[$n]} (build/mutants/$n/build.log)"
			continue
		fi
		cp "$p" "$MUTDIR/$n/mutant.patch"
		say "mutant $n: built in $(el "$tm"); booting $KVER ($ntests tests, stop after the first file with a check failed twice)"
		: >"$MUTDIR/$n/vm.log"
		read -r -a ord <<<"$(order "$p")"
		boot "$n" "$ko" "mutant $n" 1 "${ord[@]}"
		vrc=$?
		secs[$n]=$(($(date +%s) - tm))
		echo "${secs[$n]} $vrc" >"$MUTDIR/$n/time.txt"
	fi
	skips[$n]=$(awk '{ s += $4 } END { print s + 0 }' "$MUTDIR/$n/tests.txt")
	read -r kt _ _ _ kw < <(awk '$5 > 0' "$MUTDIR/$n/tests.txt" | head -n1)
	ran=$(grep -c . "$MUTDIR/$n/tests.txt")
	last=$(sed -n 's/^@@MUT start //p' "$MUTDIR/$n/vm.log" | tail -n1)
	if [ -n "${kt:-}" ]; then
		res[$n]=killed
		killer[$n]=$kt
		# the checks of that file that failed in both runs
		sed -n 's/^@@MUT twice //p' "$MUTDIR/$n/vm.log" >"$MUTDIR/$n/killing-checks.txt"
		check[$n]=$(head -n 3 "$MUTDIR/$n/killing-checks.txt" | cut -c1-160 | paste -sd '|' -)
		[ "$kw" -gt 3 ] && check[$n]="${check[$n]}| ($kw checks)"
	elif grep -q '^@@MUT done' "$MUTDIR/$n/vm.log" && [ "$ran" = "$ntests" ] && [ "$vrc" = 0 ]; then
		res[$n]=SURVIVED
		check[$n]="all $ntests tests passed (${skips[$n]} skipped)"
	elif [ "$vrc" = 126 ] || { [ "$vrc" = 125 ] && [ -n "$last" ]; }; then
		# make test fails on these too: a splat on the console, or a
		# guest that died inside a test
		res[$n]=killed
		killer[$n]=$last
		: >"$MUTDIR/$n/killing-checks.txt"
		check[$n]="vm.sh exit $vrc ($([ "$vrc" = 126 ] && echo "kernel splat on the console" || echo "guest died"), in test_$last): $(sed -nE 's/^\[vm [^]]*\] console: //p' "$MUTDIR/$n/vm.log" | tail -n1 | cut -c1-120)"
	else
		res[$n]="ERROR: run incomplete"
		check[$n]="vm.sh exit $vrc after $ran of $ntests tests${last:+ (last: test_$last)}"
	fi
	say "mutant $n: ${res[$n]}${killer[$n]:+ by test_${killer[$n]}}: ${check[$n]} ($(el "$tm"))"
done

# passed LOG TEST: the checks of TEST that passed (not skipped) in a
# guest's log
passed() {
	sed -n "/^@@MUT start $2\$/,/^@@MUT end $2 /p" "$1" | grep -E "^ok [0-9]+ - " |
		grep -v '# SKIP' | sed -E 's/^ok [0-9]+ - //'
}

# The killing tests on the unmutated module: a kill counts by the checks
# that failed with the mutant and pass without it
ktests=$(for n in "${names[@]}"; do [ "${res[$n]}" = killed ] && echo "${killer[$n]}"; done | sort -u)
if [ -n "$ktests" ] && [ "${ARBT_MUTANT_CONFIRM:-1}" = 1 ]; then
	tm=$(date +%s)
	say "unmutated module: building, then the killing tests ($(echo $ktests))"
	if ko=$(build 00-none ""); then
		: >"$MUTDIR/00-none/vm.log"
		boot 00-none "$ko" "unmutated" 0 $ktests
		say "unmutated: done in $(el "$tm"), vm.sh exit $?"
	else
		say "unmutated module does not build (build/mutants/00-none/build.log)"
	fi
	for n in "${names[@]}"; do
		[ "${res[$n]}" = killed ] || continue
		kt=${killer[$n]}
		if ! grep -q "^$kt " "$MUTDIR/00-none/tests.txt" 2>/dev/null; then
			res[$n]="ERROR: kill not confirmed"
			check[$n]="test_$kt did not run on the unmutated module; ${check[$n]}"
			continue
		fi
		# the mutant's killing checks that pass without it; a guest
		# that died or splatted: the test passes without the mutant
		if [ ! -s "$MUTDIR/$n/killing-checks.txt" ]; then
			awk -v t="$kt" '$1 == t && $3 == 0 { ok = 1 } END { exit !ok }' "$MUTDIR/00-none/tests.txt" &&
				good=${check[$n]} || good=
		else
			# (a failed check may add its reason after a colon:
			# lib.sh's rejects print "DESC: why", pass as "DESC (...)")
			good=$(passed "$MUTDIR/00-none/vm.log" "$kt" | checkid >"$MUTDIR/$n/base-ok.txt"
				while IFS= read -r c; do
					id=$(checkid <<<"$c")
					while IFS= read -r b; do
						case $id in "$b"|"$b: "*) echo "$c"; break ;; esac
					done <"$MUTDIR/$n/base-ok.txt"
				done <"$MUTDIR/$n/killing-checks.txt")
		fi
		if [ -z "$good" ]; then
			res[$n]="ERROR: kill not confirmed"
			check[$n]="every failed check of test_$kt fails without the mutant too; ${check[$n]}"
		else
			check[$n]="$(head -n 3 <<<"$good" | paste -sd '|' -)$([ "$(grep -c . <<<"$good")" -gt 3 ] && echo " ($(grep -c . <<<"$good") checks)")"
		fi
	done
fi

echo
echo "mutant | result | killing test | check | time"
rc=0
for n in "${names[@]}"; do
	printf '%s | %s | %s | %s | %ss\n' "$n" "${res[$n]}" "${killer[$n]:+test_${killer[$n]}}" "${check[$n]}" "${secs[$n]}"
	[ "${res[$n]}" = killed ] || rc=1
done
echo "mutants: $(for n in "${names[@]}"; do echo "${res[$n]}"; done | grep -cx killed) killed of ${#names[@]} in $(el)"
exit $rc
