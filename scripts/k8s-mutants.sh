#!/usr/bin/env bash
# make check-k8s-mutants: the Kubernetes driver built with deliberate
# defects (tests/kubernetes/mutants/NN-name.patch) and check-k8s run on
# the scenarios each patch's header names.  A mutant is killed when a
# check of one of its scenarios fails and the check's text contains the
# header's "Killed by:" words; it survived when none does.  The patches
# are planted together in one clone of HEAD (their scenarios must not
# overlap, so that each failure has one cause) and the run has the
# publish scenario first, as every check-k8s run does.
#
#   scripts/k8s-mutants.sh
#   ARBT_K8S_MUTANTS="01 02"   the mutants (numbers; default all)
#
# The unmutated driver passes the same checks in make check-k8s (its
# default list has every scenario). Ends with a table and
# "N passed, N failed, N skipped" (a mutant killed passes); exits non-zero
# when a mutant survived or did not apply. Logs in build/k8s-mutants/.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/tests/kubernetes/mutants
out=$root/build/k8s-mutants
want=${ARBT_K8S_MUTANTS:-$(cd "$dir" && ls -- *.patch | cut -c1-2)}

hdr() { sed -n "s/^$2: //p" "$1" | head -n1; }

patches=()
scen=""
for n in $want; do
	p=$(ls "$dir/$n"-*.patch 2>/dev/null | head -n1)
	if [ -z "$p" ]; then
		echo "k8s-mutants: no mutant $n in $dir"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	for s in $(hdr "$p" Scenarios); do
		case " $scen " in
		*" $s "*)
			echo "k8s-mutants: two mutants on scenario $s: run them apart (ARBT_K8S_MUTANTS)"
			echo "0 passed, 1 failed, 0 skipped"
			exit 1 ;;
		esac
		scen="$scen $s"
	done
	patches+=("$p")
done

rm -rf "$out"
mkdir -p "$out"
git clone -q "$root" "$out/src" || exit 1
for p in "${patches[@]}"; do
	if ! git -C "$out/src" apply "$p"; then
		echo "k8s-mutants: $(basename "$p") does not apply to HEAD: update it"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
done
echo "k8s-mutants: planted $(printf '%s ' "${patches[@]##*/}"); scenarios publish$scen"
t0=$SECONDS
(cd "$out/src" && ARBT_K8S_SCENARIOS="publish$scen" make check-k8s) >"$out/check-k8s.log" 2>&1
echo "k8s-mutants: check-k8s ran $((SECONDS - t0)) s (log: $out/check-k8s.log)"

# each failed check with its scenario: "# scenario NAME: ..." follows its
# checks; those after the last (the kernel log's) have none
tap=$out/src/build/k8s/run/tap.log
awk '/^not ok /{f[n++]=$0} /^# scenario [a-z0-9_]+:/{s=$3; sub(":", "", s); for (i = 0; i < n; i++) print s "\t" f[i]; n=0}
	END {for (i = 0; i < n; i++) print "(no scenario)\t" f[i]}' \
	"$tap" >"$out/failed.tsv" 2>/dev/null

pass=0 fail=0
printf '%-36s %-8s %s\n' mutant result "killing check"
for p in "${patches[@]}"; do
	by=$(hdr "$p" "Killed by")
	kill=""
	for s in $(hdr "$p" Scenarios); do
		kill=$(awk -F'\t' -v s="$s" '$1 == s' "$out/failed.tsv" | cut -f2 | grep -F -- "$by" | head -n1)
		[ -n "$kill" ] && kill="$s: $kill" && break
	done
	if [ -n "$kill" ]; then
		printf '%-36s %-8s %s\n' "$(basename "$p" .patch)" killed "$kill"
		pass=$((pass + 1))
	else
		printf '%-36s %-8s %s\n' "$(basename "$p" .patch)" SURVIVED "no failed check of $(hdr "$p" Scenarios) says \"$by\""
		fail=$((fail + 1))
	fi
done
# failures no mutant accounts for: a flaky check, or a mutant's reach
# beyond its scenarios
other=$(awk -F'\t' -v sc="$scen" 'BEGIN { n = split(sc, a, " "); for (i = 1; i <= n; i++) m[a[i]] = 1 } !($1 in m)' "$out/failed.tsv")
[ -n "$other" ] && { echo "failed outside the mutants' scenarios:"; echo "$other" | sed 's/^/  /'; }
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
