#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Auto-mode configuration refused before it can break a guarantee, each
# with a message that says why, the configuration left as it was: a strict
# ceil not below the capacity (every admission would fail after it), a
# ceil below the class's own reserved rate, a rate above 2^48 bytes/s
# (refused by the attribute's policy).
. "$(dirname "$0")/lib.sh"
tap_begin "auto-mode configuration refusals"
trap 'dev_del $DEV' EXIT
have_arbtable || { tap_fail "auto config: module and plugin present"; tap_end; exit; }

run arb_base rate 10gbit
tap_check "auto config: qdisc rate 10gbit" test "$RUN_RC" = 0

bad "strict ceil 20gbit above the capacity 10gbit" \
	"$(ext 'strict ceil is not below the qdisc.s capacity: 20Gbit >= 10Gbit' 'strict ceil is not below the qdisc.s capacity')" \
	tc class add dev $DEV parent 1: classid 1:20 arbtable strict ceil 20gbit
bad "strict ceil 10gbit equal to the capacity" 'capacity' \
	tc class add dev $DEV parent 1: classid 1:20 arbtable strict ceil 10gbit
run tc class add dev $DEV parent 1: classid 1:20 arbtable strict ceil 1gbit
tap_check "strict ceil 1gbit below the capacity is taken (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc class add dev $DEV parent 1: classid 1:10 arbtable rate 1gbit distance 8
tap_check "and admissions work after it: 1:10 rate 1gbit (${RUN_ERR:-ok})" test "$RUN_RC" = 0
bad "class 1:10 ceil 500mbit below its reserved rate 1gbit" \
	"$(ext 'ceil is below the class.s reserved rate: 500Mbit < 1Gbit' 'ceil is below the class.s reserved rate')" \
	tc class change dev $DEV classid 1:10 arbtable ceil 500mbit
bad "new class rate 2gbit with ceil 1gbit" 'reserved rate' \
	tc class add dev $DEV parent 1: classid 1:21 arbtable rate 2gbit ceil 1gbit
bad "class rate 40000tbit above 2^48 bytes/s (tc names the range)" \
	'tc:rate.*2\^48' \
	tc class add dev $DEV parent 1: classid 1:22 arbtable rate 40000tbit

run tc class change dev $DEV classid 1:10 arbtable ceil 2gbit
tap_check "a ceil above the reserved rate is taken (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc class change dev $DEV classid 1:10 arbtable ceil 0
tap_check "and removed again with ceil 0 (${RUN_ERR:-ok})" \
	eval '[ "$RUN_RC" = 0 ] && ! arb_class_opts 10 | grep -qw ceil'
bad "the strict class's ceil removed on an auto qdisc" 'strict class needs a ceil' \
	tc class change dev $DEV classid 1:20 arbtable ceil 0
tap_end
