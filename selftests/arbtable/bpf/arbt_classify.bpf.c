// SPDX-License-Identifier: GPL-2.0
/*
 * A tc BPF classifier for test_classify.sh, attached in direct-action
 * mode to the arbtable qdisc:
 *
 *   tc filter add dev D parent 1: protocol all pref 5 \
 *           bpf obj build/bpf/arbt_classify.bpf.o sec tc da classid 1:
 *
 * A packet whose skb->mark carries the tag 0xab in bits 16..23 (set by an
 * nftables rule: meta mark set 0xab0060) goes to the class whose minor is
 * the mark's low 16 bits (1:60).  Other packets are left to the next
 * filter (TC_ACT_UNSPEC).
 *
 * skb->tc_classid is 16 bits wide (qdisc_skb_cb): cls_bpf puts the
 * filter's own classid major ("classid 1:") above it, so the filter must
 * be given the qdisc's major; without it the result is 0:60, which names
 * no class.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define ARBT_MARK_TAG	0x00ab0000u
#define ARBT_TAG_MASK	0xffff0000u

SEC("tc")
int arbt_classify(struct __sk_buff *skb)
{
	__u32 mark = skb->mark;

	if ((mark & ARBT_TAG_MASK) != ARBT_MARK_TAG)
		return TC_ACT_UNSPEC;
	skb->tc_classid = mark & 0xffff;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
