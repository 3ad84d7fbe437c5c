# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by conf-check.sh and verbs-check.sh: the pass/fail counts, and
# the plugin run on a config with a CNI environment of nothing else (its
# container c1, eth0, a netns that does not exist), its error objects
# checked.  The caller sets, before sourcing:
#   CNI      the plugin (it stops with "0 passed, 1 failed" if not built)
#   ERR      where the plugin's stderr goes
#   RUN_ENV  an array: more NAME=VALUE for every run (may be empty)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
[ -x "$CNI" ] || { echo "FAIL $CNI not built (make cni)"; echo "0 passed, 1 failed"; exit 1; }

# run CMD CONFIG [ENV...]: OUT, RC
run() {
	local cmd=$1 conf=$2
	shift 2
	OUT=$(printf '%s' "$conf" | env -i CNI_COMMAND="$cmd" CNI_CONTAINERID=c1 CNI_IFNAME=eth0 \
		CNI_NETNS=/nonexistent "${RUN_ENV[@]}" "$@" "$CNI" 2>"$ERR")
	RC=$?
}
code() { printf '%s' "$OUT" | python3 -c 'import json,sys
d = json.load(sys.stdin)
assert d["cniVersion"] and d["msg"] and isinstance(d["code"], int)
print(d["code"])' 2>/dev/null; }
# expect DESC CODE MSG-REGEX CMD CONFIG [ENV...]
expect() {
	local d=$1 want=$2 re=$3
	shift 3
	run "$@"
	if [ "$RC" != 0 ] && [ "$(code)" = "$want" ] && grep -qE -- "$re" <<<"$OUT"; then
		ok "$d"
	else
		bad "$d: want code $want matching /$re/, got exit $RC: $OUT"
	fi
}
