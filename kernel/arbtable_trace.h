/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of sch_arbtable, for trace-cmd, perf and bpftrace:
 *   arbtable:arbtable_dequeue  one per packet leaving the arbiter
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM arbtable

#if !defined(_ARBTABLE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _ARBTABLE_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(arbtable_dequeue,
	TP_PROTO(u32 handle, u32 classid, u8 table, u8 slot, s32 credit,
		 u32 len),
	TP_ARGS(handle, classid, table, slot, credit, len),
	TP_STRUCT__entry(
		__field(u32, handle)
		__field(u32, classid)
		__field(u8, table)
		__field(u8, slot)
		__field(s32, credit)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->handle = handle;
		__entry->classid = classid;
		__entry->table = table;
		__entry->slot = slot;
		__entry->credit = credit;
		__entry->len = len;
	),
	TP_printk("qdisc=%x: class=%x:%x table=%s slot=%u credit=%d len=%u",
		  __entry->handle >> 16, __entry->classid >> 16,
		  __entry->classid & 0xffff,
		  __print_symbolic(__entry->table, { 0, "high" }, { 1, "low" },
				   { 2, "strict" }, { 3, "slotless" },
				   { 4, "unclassified" }),
		  __entry->slot, __entry->credit, __entry->len)
);

#endif /* _ARBTABLE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE arbtable_trace
#include <trace/define_trace.h>
