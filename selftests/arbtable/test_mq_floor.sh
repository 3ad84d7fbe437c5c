#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Floors, head-of-line bounds and work conservation of the lockless mode
# (issue 46): test_tcp_tenants.sh's tenants (TCP with GSO, a UDP flood)
# through a lockless root of a 4-queue veth, gold's four flows sent from
# four CPUs, then gold alone on one CPU.  Its fast phase only with
# ARBT_TCP_FAST_LL=1 (make check-full).
ARBT_TCP_LOCKLESS=1 ARBT_TCP_FAST=${ARBT_TCP_FAST_LL:-0} exec "$(dirname "$0")/test_tcp_tenants.sh"
