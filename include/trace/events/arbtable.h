/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of sch_arbtable, for trace-cmd, perf and bpftrace:
 *   arbtable:arbtable_enqueue  one per packet queued (per segment of a
 *                              GSO skb the qdisc split)
 *   arbtable:arbtable_dequeue  one per packet leaving the arbiter
 *   arbtable:arbtable_admit    a class got slots from the allocator
 *   arbtable:arbtable_release  a class gave its slots back
 *   arbtable:arbtable_swap     defragmentation exchanged two slots
 *   arbtable:arbtable_guarantee an admitted class's guarantee broke or
 *                              held again after the device's mtu changed
 * Each names the qdisc by its device's ifindex and handle.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM arbtable

#if !defined(_TRACE_ARBTABLE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_ARBTABLE_H

#include <linux/tracepoint.h>
#include <net/sch_generic.h>

/* With arbtable_dequeue, the exact queue of every class in bytes: waits
 * (head-of-line, in bytes of other classes) measured from a trace.
 */
TRACE_EVENT(arbtable_enqueue,
	TP_PROTO(const struct Qdisc *sch, u32 classid, u32 len, u32 qlen),
	TP_ARGS(sch, classid, len, qlen),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u32, classid)
		__field(u32, len)
		__field(u32, qlen)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->classid = classid;
		__entry->len = len;
		__entry->qlen = qlen;
	),
	TP_printk("ifindex=%d qdisc=%x: class=%x:%x len=%u qlen=%u",
		  __entry->ifindex, __entry->handle >> 16, __entry->classid >> 16,
		  __entry->classid & 0xffff, __entry->len, __entry->qlen)
);

/* table and slot: where the arbiter is; credit: what the slot may still
 * send in this visit, bytes (negative: debt); hp_counter: bytes HIGH may
 * still send before LOW is owed a turn; both after this packet. wait:
 * the head-of-line wait the kernel measured for this packet, in ns of
 * its clock (0: not measured, the packet found the qdisc idle); the
 * class's max_hol_wait is the largest of these.
 */
TRACE_EVENT(arbtable_dequeue,
	TP_PROTO(const struct Qdisc *sch, u32 classid, u8 table, u8 slot, s32 credit,
		 s32 hp_counter, u32 len, u64 wait),
	TP_ARGS(sch, classid, table, slot, credit, hp_counter, len, wait),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u32, classid)
		__field(u8, table)
		__field(u8, slot)
		__field(s32, credit)
		__field(s32, hp_counter)
		__field(u32, len)
		__field(u64, wait)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->classid = classid;
		__entry->table = table;
		__entry->slot = slot;
		__entry->credit = credit;
		__entry->hp_counter = hp_counter;
		__entry->len = len;
		__entry->wait = wait;
	),
	TP_printk("ifindex=%d qdisc=%x: class=%x:%x table=%s slot=%u credit=%d hp_counter=%d len=%u wait=%llu",
		  __entry->ifindex, __entry->handle >> 16, __entry->classid >> 16,
		  __entry->classid & 0xffff,
		  __print_symbolic(__entry->table, { 0, "high" }, { 1, "low" },
				   { 2, "strict" }, { 3, "slotless" },
				   { 4, "unclassified" }),
		  __entry->slot, __entry->credit, __entry->hp_counter,
		  __entry->len, __entry->wait)
);

TRACE_EVENT(arbtable_admit,
	TP_PROTO(const struct Qdisc *sch, u32 classid, u8 table, u32 distance, u32 weight,
		 u64 slots, u64 bound_ns),
	TP_ARGS(sch, classid, table, distance, weight, slots, bound_ns),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u32, classid)
		__field(u8, table)
		__field(u32, distance)
		__field(u32, weight)
		__field(u64, slots)
		__field(u64, bound_ns)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->classid = classid;
		__entry->table = table;
		__entry->distance = distance;
		__entry->weight = weight;
		__entry->slots = slots;
		__entry->bound_ns = bound_ns;
	),
	TP_printk("ifindex=%d qdisc=%x: class=%x:%x table=%s distance=%u weight=%u slots=%#llx bound=%lluns",
		  __entry->ifindex, __entry->handle >> 16, __entry->classid >> 16,
		  __entry->classid & 0xffff, __entry->table ? "low" : "high",
		  __entry->distance, __entry->weight, __entry->slots,
		  __entry->bound_ns)
);

TRACE_EVENT(arbtable_release,
	TP_PROTO(const struct Qdisc *sch, u32 classid, u8 table, u64 slots, u32 swaps),
	TP_ARGS(sch, classid, table, slots, swaps),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u32, classid)
		__field(u8, table)
		__field(u64, slots)
		__field(u32, swaps)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->classid = classid;
		__entry->table = table;
		__entry->slots = slots;
		__entry->swaps = swaps;
	),
	TP_printk("ifindex=%d qdisc=%x: class=%x:%x table=%s slots=%#llx swaps=%u",
		  __entry->ifindex, __entry->handle >> 16, __entry->classid >> 16,
		  __entry->classid & 0xffff, __entry->table ? "low" : "high",
		  __entry->slots, __entry->swaps)
);

TRACE_EVENT(arbtable_swap,
	TP_PROTO(const struct Qdisc *sch, u8 table, u8 a, u8 b),
	TP_ARGS(sch, table, a, b),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u8, table)
		__field(u8, a)
		__field(u8, b)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->table = table;
		__entry->a = a;
		__entry->b = b;
	),
	TP_printk("ifindex=%d qdisc=%x: table=%s swap slots %u <-> %u",
		  __entry->ifindex, __entry->handle >> 16, __entry->table ? "low" : "high",
		  __entry->a, __entry->b)
);

/* rate: bytes/s the class's weight now guarantees; bound: its head-of-line
 * bound at @mtu; broken: either no longer meets what the class asked
 */
TRACE_EVENT(arbtable_guarantee,
	TP_PROTO(const struct Qdisc *sch, u32 classid, u32 mtu, u64 rate,
		 u64 bound_ns, bool broken),
	TP_ARGS(sch, classid, mtu, rate, bound_ns, broken),
	TP_STRUCT__entry(
		__field(int, ifindex)
		__field(u32, handle)
		__field(u32, classid)
		__field(u32, mtu)
		__field(u64, rate)
		__field(u64, bound_ns)
		__field(bool, broken)
	),
	TP_fast_assign(
		__entry->ifindex = qdisc_dev(sch)->ifindex;
		__entry->handle = sch->handle;
		__entry->classid = classid;
		__entry->mtu = mtu;
		__entry->rate = rate;
		__entry->bound_ns = bound_ns;
		__entry->broken = broken;
	),
	TP_printk("ifindex=%d qdisc=%x: class=%x:%x mtu=%u rate=%lluB/s bound=%lluns broken=%d",
		  __entry->ifindex, __entry->handle >> 16,
		  __entry->classid >> 16, __entry->classid & 0xffff,
		  __entry->mtu, __entry->rate, __entry->bound_ns,
		  __entry->broken)
);

#endif /* _TRACE_ARBTABLE_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
