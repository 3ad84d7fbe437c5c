#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tc-testing: runs upstream's tdc.py (from Debian's linux-source-6.12,
# unchanged) on selftests/tdc/arbtable.json, the arbtable test cases in
# upstream's format, and reports every tdc test case as one TAP result.
#
# tdc comes from $ARBT_TDC_DIR, else /var/lib/arbtable/tc-testing-6.12,
# made on the host by selftests/tdc/prepare.sh (`make tdc-prepare`; not
# /var/cache: virtme-ng mounts a tmpfs over it in the guest).  Outside a
# VM it also finds an unpacked /var/cache/arbtable/linux-source-6.12.
# Extracting the tarball in the guest is not tried: xz under TCG takes
# more than 5 minutes.  tdc runs in a copy under /tmp because it writes
# next to itself; tdc_config_local.py gives its commands TC_LIB_DIR (tdc
# runs them with an empty environment) so tc finds our q_arbtable.so.
# The cases ask for tdc's nsPlugin, as upstream's ets.json does: each runs
# in its own namespace with the plugin's $DUMMY (python3-pyroute2, which
# scripts/setup.sh installs, creates it in-process).  They run one
# after the other in chunks of ARBT_TDC_CHUNK (22) per tdc.py run, so the
# results of finished chunks survive a timeout (each tdc.py start costs
# ~9 s under TCG: 22 per chunk took 185 s for 66 cases, 8 took 228 s);
# ARBT_TDC_JOBS=N passes -J N.
. "$(dirname "$0")/lib.sh"
tap_begin "upstream tdc.py on selftests/tdc/arbtable.json"

CACHE=${CACHE:-/var/cache/arbtable}
JSON=$ARBT_ROOT/selftests/tdc/arbtable.json
SUB=tools/testing/selftests/tc-testing
work=$(mktemp -d /tmp/arbtable-tdc.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Under scripts/vm.sh the module is loaded and TC_LIB_DIR set; a bare
# `vng --exec run_all.sh test_tdc.sh` gets the same here.
arb_load_module || diag "loading sch_arbtable failed"
export TC_LIB_DIR=${TC_LIB_DIR:-$ARBT_ROOT/build/tc}
if ! have_arbtable; then
	tap_fail "tdc: sch_arbtable module and tc plugin present"
	tap_end; exit
fi
# the distro python3 (with python3-pyroute2 if installed: faster netns set-up)
PY=$(command -v /usr/bin/python3 || command -v python3)
if [ -z "$PY" ]; then
	tap_fail "tdc: python3 present"
	tap_end; exit
fi

src=
for d in "${ARBT_TDC_DIR:-}" "${ARBT_TDC_CACHE:-/var/lib/arbtable}/tc-testing-6.12" \
	"$CACHE/linux-source-6.12/$SUB"; do
	if [ -n "$d" ] && [ -f "$d/tdc.py" ]; then src=$d; break; fi
done
if [ -z "$src" ]; then
	diag "no tc-testing found: run 'make tdc-prepare' (selftests/tdc/prepare.sh) on the host"
	tap_fail "tdc: upstream tc-testing from linux-source-6.12 prepared"
	tap_end; exit
fi
cp -a "$src" "$work/tdc" || { tap_fail "tdc: copy $src"; tap_end; exit; }
cat >"$work/tdc/tdc_config_local.py" <<EOF
# written by selftests/arbtable/test_tdc.sh
ENVIR = {
    'TC_LIB_DIR': '${TC_LIB_DIR}',
    'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
}
EXTRA_NAMES = {
    'TC': '$(command -v tc)',
    'IP': '$(command -v ip)',
    'TIMEOUT': 60,
}
EOF

jobs=${ARBT_TDC_JOBS:-1}
chunk=${ARBT_TDC_CHUNK:-22}
# run_all.sh kills a test file after ARBT_TEST_TIMEOUT (600 s, which it
# exports; the kselftest runner's settings allow 1500): stop starting tdc
# chunks before that, so what ran is still reported.  (A budget of 300 s
# here, below run_all's real limit, skipped 22 cases of a make test whose
# 6.1 VM ran beside a cold sanitizer-kernel build, 2026-11-25.)
budget=$((${ARBT_TDC_BUDGET:-$((${ARBT_TEST_TIMEOUT:-600} - 25))} - SECONDS))
mapfile -t ids < <("$PY" -c 'import json, sys; print("\n".join(t["id"] for t in json.load(open(sys.argv[1]))))' "$JSON")
diag "tdc from $src, $PY, ${#ids[@]} test cases in chunks of $chunk, -J $jobs, budget ${budget}s"
for l in $(ip -o link show type dummy 2>/dev/null | awk -F': ' '$2 ~ /^dummy1id/ { sub(/@.*/, "", $2); print $2 }'); do
	ip link del "$l"
done

# report RESULTS.TAP: one TAP result per tdc test case.  None of the
# cases is marked skip or has a probe (dependsOn), so tdc skips one only
# after an earlier case's setup or teardown failed: a failure here.
report() {
	local line t
	while IFS= read -r line; do
		case $line in
		"not ok "*)
			t=${line#not ok }; t=${t#* }; t=${t%%$'\t'*}
			diag "${line#*$'\t'}"
			tap_fail "tdc $t"
			;;
		"ok "*)
			t=${line#ok }; t=${t#* }
			case $t in
			*" # skipped"*) tap_fail "tdc ${t%% # skipped*}: not run by tdc (${t#* # skipped - })" ;;
			*) tap_ok "tdc $t" ;;
			esac
			;;
		"1.."*|"") ;;
		*) diag "$line" ;;
		esac
	done <"$1"
}

start=$SECONDS
done_n=0
for ((c = 0; c < ${#ids[@]}; c += chunk)); do
	part=("${ids[@]:c:chunk}")
	left=$((budget - (SECONDS - start)))
	# a chunk cut off by the timeout loses its results: do not start one
	# that the pace so far says cannot finish (a loaded host under TCG);
	# every case not run then fails
	need=20
	[ "$done_n" -gt 0 ] && need=$(( (SECONDS - start) * ${#part[@]} / done_n + 10 ))
	if [ "$left" -lt "$need" ]; then
		for id in "${ids[@]:c}"; do tap_fail "tdc $id: not run, the time budget (${budget}s) used up"; done
		diag "tdc: $(( ${#ids[@]} - c )) test cases not run: ${left}s left, a chunk needs ~${need}s; raise ARBT_TEST_TIMEOUT"
		break
	fi
	out=$work/results.$c.tap
	rm -f "$out"
	# progress as it happens (a timeout still shows how far tdc got)
	(cd "$work/tdc" && timeout -k 5 "$left" \
		"$PY" -u ./tdc.py -J "$jobs" -f "$JSON" -e "${part[@]}" --outfile "$out" ${ARBT_TDC_ARGS:-}
		echo "@@tdc rc $?") 2>&1 | tee "$work/stdout" | while IFS= read -r l; do
		case $l in "Test "*) diag "$((SECONDS - start))s: $l" ;; esac
	done
	rc=$(sed -n 's/^@@tdc rc //p' "$work/stdout")
	# set-up/teardown failures and tdc's own errors are only on its stdout
	grep -E -A3 'Could not execute|Exception|Traceback|timed out' "$work/stdout" | head -n 40 |
		while IFS= read -r l; do diag "tdc: $l"; done
	if [ ! -s "$out" ]; then
		diag "$(tail -n 20 "$work/stdout")"
		tap_fail "tdc: chunk ${part[0]}..${part[-1]} produced results (tdc.py exit $rc)"
		continue
	fi
	report "$out"
	done_n=$((done_n + $(grep -cE '^(not )?ok ' "$out")))
done
diag "tdc: $done_n test cases run in $((SECONDS - start)) s"
tap_end
