#!/usr/bin/env bash
# Static check of the per-packet path of the built module (issue 6: no
# per-packet division, allocation or table scan). For every kernel built
# under build/<kver>/, disassemble the functions a packet runs through
# (enqueue with its inlined classification, dequeue and its busy half)
# and check that they contain no division instruction and call nothing
# outside a short allow-list: the clock, tracepoint and ftrace hooks, the
# retpoline/return thunks (a grafted child's own ops), the watchdog, and
# our own out-of-line slow paths, which are checked the same way: the
# classification after skb->priority, the slotless round robin, the table
# walk's round skipping (every eligible slot in debt; bounded whatever the
# debts) and the retry of stalled (shaped) children.
# arbtable_enqueue_oversize (a GSO skb longer than the mtu, split into
# segments: allocation by design, as in tbf and cake) may be called and is
# not checked: it is per GSO skb, not per packet the arbiter schedules.
# The lockless mode's enqueue and dequeue (arbtable_enqueue_ll,
# arbtable_dequeue_ll) are checked too; the enqueue may take its class
# ring's producer lock (_raw_spin_lock), which only senders of one class
# share.
# A 64-slot scan cannot be told from the machine code; the arbiter's
# bitmask walk is covered by bench-core's flat instruction counts.
#
#   scripts/hotpath-check.sh [KVER...]     default: every build/<kver>/
# Output: one "ok"/"not ok" line per check, then "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FUNCS="arbtable_enqueue arbtable_dequeue arbtable_dequeue_busy arbtable_dequeue_busy_ll arbtable_classify_slow arb_select_slotless arb_table_skip_rounds arbtable_retry_stalled arbtable_enqueue_ll arbtable_dequeue_ll"
# what the per-packet functions may call (symbol names, without +offset)
ALLOW="__fentry__ __x86_indirect_thunk_rax __x86_indirect_thunk_r11 __x86_return_thunk
ktime_get __SCT__tp_func_arbtable_dequeue __SCT__tp_func_arbtable_enqueue __SCT__preempt_schedule_notrace
__SCT__preempt_schedule qdisc_watchdog_schedule_range_ns tcf_classify __stack_chk_fail
arbtable_dequeue_busy arbtable_dequeue_busy_ll arbtable_classify_slow arb_select_slotless arb_table_skip_rounds arbtable_retry_stalled arbtable_enqueue_oversize
arbtable_enqueue_ll arbtable_dequeue_ll _raw_spin_lock _raw_spin_unlock"
passed=0
failed=0
check() { # desc result(0/1) [detail]
	if [ "$2" = 0 ]; then
		echo "ok $((passed + failed + 1)) - $1"
		passed=$((passed + 1))
	else
		echo "not ok $((passed + failed + 1)) - $1${3:+: $3}"
		failed=$((failed + 1))
	fi
}

kvers=("$@")
if [ ${#kvers[@]} = 0 ]; then
	for ko in "$ROOT"/build/*/sch_arbtable.ko; do
		[ -f "$ko" ] || continue
		k=$(basename "$(dirname "$ko")")
		[ "$k" = debug ] || kvers+=("$k")
	done
fi
if ! command -v objdump >/dev/null; then
	check "objdump available (binutils)" 1
	kvers=()
fi
[ ${#kvers[@]} -gt 0 ] || check "a built module under build/<kver>/ (make all)" 1

for k in "${kvers[@]}"; do
	ko=$ROOT/build/$k/sch_arbtable.ko
	dis=$(objdump -dr --no-show-raw-insn "$ko" 2>/dev/null)
	# A kernel built with UBSAN's bounds and shift checks (Debian's 7.2
	# image) instruments every indexed access: a compare, and on the
	# out-of-range side only a jump to a report block gcc puts out of
	# line in .text without a symbol (a section-relative jump), which
	# calls __ubsan_handle_*.  Those are allowed for such a kernel only.
	ubsan_allow=
	if grep -qs '^CONFIG_UBSAN=y' "/boot/config-$k"; then
		ubsan_allow=".text __ubsan_handle_out_of_bounds __ubsan_handle_shift_out_of_bounds"
	fi
	for f in $FUNCS; do
		body=$(awk -v f="<$f>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' <<<"$dis")
		if [ -z "$body" ]; then
			check "$k: $f present in the module" 1
			continue
		fi
		divs=$(grep -cE '[[:space:]]i?div[bwlq]?[[:space:]]' <<<"$body")
		check "$k: $f: no division instruction" "$([ "$divs" = 0 ] && echo 0 || echo 1)" "$divs found"
		# call and jump targets: a relocation right after a call/jmp
		# (another object) or a direct call to another function of the
		# module; data relocations are not calls. A relocated call's
		# own operand is a placeholder (the next symbol when the call
		# ends the function): the relocation names the target.
		calls=$(awk '
			/R_X86_64_(PLT32|PC32)/ { if (prev ~ /^(call|jmp)/) { s = $NF; sub(/[-+].*/, "", s); print s }; pend = ""; next }
			{ if (pend != "") print pend; pend = ""; i = $0; sub(/^[[:space:]]*[0-9a-f]+:[[:space:]]*/, "", i); prev = i }
			prev ~ /^call[[:space:]]+[0-9a-f]+ </ { t = prev; sub(/.*</, "", t); sub(/[>+].*/, "", t); pend = t }
			END { if (pend != "") print pend }
		' <<<"$body" | sort -u | grep -vxF "$f")
		bad=$(grep -vxF -f <(tr ' ' '\n' <<<"$ALLOW $ubsan_allow" | grep .) <<<"$calls" | grep . | tr '\n' ' ')
		check "$k: $f: calls only the allow-list (clock, trace, thunks, watchdog, slow paths)" \
			"$([ -z "$bad" ] && echo 0 || echo 1)" "also calls: $bad"
	done
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
