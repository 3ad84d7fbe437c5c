// SPDX-License-Identifier: GPL-2.0
/*
 * arbt_nlfuzz: netlink fuzzer for the arbtable qdisc (issue 4).
 *
 * Builds valid RTM_NEWQDISC / RTM_NEWTCLASS / RTM_DELTCLASS / RTM_DELQDISC
 * messages for an arbtable root on one device, mutates the attributes
 * nested in TCA_OPTIONS (types, lengths, truncation, padding, nesting,
 * duplicates, values at and beyond every bound of the uapi header and the
 * kernel policy), sends them and reads every ack. Deterministic for a seed.
 *
 * Checked:
 * - every rejection carries an extended-ack message, except the errnos the
 *   rtnetlink core returns on its own before the qdisc is asked (ENOENT:
 *   class or qdisc not found; EEXIST: exclusive create of an existing
 *   object), which are counted and reported separately;
 * - after every batch, the dump of the surviving configuration parses (all
 *   attributes well-formed, xstats of the expected size) and is
 *   self-consistent: every table entry names a dumped class, slots 0..63
 *   once each, weights 1..255, the occupancy and class count in the qdisc
 *   xstats match, each class's slot masks and weight sums match the
 *   tables, and in auto mode a class at distance d holds 64/d slots exactly
 *   d apart;
 * - the dump round-trips: the qdisc's dumped options, sent back as a
 *   change (strict parsing, so nested tables must carry NLA_F_NESTED),
 *   are accepted and dump the same bytes again (auto mode's tables
 *   too: the kernel takes the tables in force).
 *
 *   arbt_nlfuzz -d DEV [-n MESSAGES] [-b BATCH] [-s SEED] [-v]
 *
 * With -D SECONDS it sends nothing but dumps instead (issue 27, the KCSAN
 * kernel's test_dump_race.sh): qdisc dumps of DEV back to back for
 * SECONDS, a class dump after every fourth, going through the qdisc's
 * dump_stats and every class's dump_class_stats at a rate a tc loop cannot
 * reach (a race KCSAN samples is found in proportion to the racing reads).  Checked: every dump parses
 * with its xstats, and the qdisc xstats' counters never go back from one
 * dump to the next (one qdisc, not replaced, for the whole run).
 *
 *   arbt_nlfuzz -d DEV -D SECONDS
 *
 * With -R it sends the table refusals test_config.sh checks, messages tc
 * cannot send (a slot nest with a weight and no class, or a class and no
 * weight, 65 of them, ranges, a nest without its flag), and null slots
 * (an empty nest, weight 0) that must be accepted: every refusal with its
 * errno and extack, the qdisc's dump unchanged.
 *
 *   arbt_nlfuzz -d DEV -R
 *
 * With -T WHAT it makes one round trip of the qdisc as it is (WHAT names
 * the case in the output): its dump sent back whole must be accepted and
 * leave the dump and the capacity unchanged (issue 35, defect 4).
 *
 *   arbt_nlfuzz -d DEV -T WHAT
 *
 * With -P as well, the options are sent back as a kernel whose
 * nla_put_u64_64bit() pads (i386) dumps them: an empty TCA_ARBTABLE_PAD
 * (TCA_ARBTABLE_C_PAD) before every 64-bit attribute; and every class's
 * dumped options are sent back too, as a change of the class, which
 * must be accepted and leave the class's dump as it was.
 *
 *   arbt_nlfuzz -d DEV -T WHAT -P
 * Exit status: 0 all checks held, 1 a check failed, 2 usage/setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/gen_stats.h>
#include "linux/pkt_sched_arbtable.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif

#define BUFSZ		65536
#define HANDLE		0x10000u	/* 1: */
#define NMINORS		24		/* class minors 1:1 .. 1:18 (hex) */
/* classes a dump may hold: the module's own limit (64) and some more,
 * for a dump that breaks it to be reported, not overflow
 */
#define MAX_CLASSES	72

/* ------------------------------------------------------------ random */
static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64*: deterministic, good enough to pick mutations */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd_below(100) < percent;
}

/* Values at and beyond the bounds the header and the policy name. */
static uint64_t edge_value(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127,
		128, 254, 255, 256, 1500, 1514, 4095, 4096, 65535, 65536,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		125000, 1250000, 125000000, 1250000000ULL, 1ULL << 48,
		(1ULL << 63) - 1, 1ULL << 63, ~0ULL,
	};
	return v[rnd_below(sizeof(v) / sizeof(v[0]))];
}

/* ------------------------------------------------------------ message */
struct msg {
	uint8_t buf[BUFSZ];
	size_t len;
};

static struct nlattr *put_attr(struct msg *m, uint16_t type, const void *data,
			       size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);
	size_t tot = NLA_HDRLEN + len;

	if (m->len + NLA_ALIGN(tot) > BUFSZ - 64)
		return NULL;
	a->nla_type = type;
	a->nla_len = (uint16_t)tot;
	if (len)
		memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	memset((uint8_t *)a + tot, 0, NLA_ALIGN(tot) - tot);
	m->len += NLA_ALIGN(tot);
	return a;
}

static struct nlattr *nest_start(struct msg *m, uint16_t type)
{
	return put_attr(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct msg *m, struct nlattr *a)
{
	if (a)
		a->nla_len = (uint16_t)(m->buf + m->len - (uint8_t *)a);
}

/*
 * Put an integer attribute of natural size @size, maybe mutated: another
 * size (truncated or longer), an edge value, or a random type up to a few
 * past @maxtype.
 */
static void put_int_of(struct msg *m, uint16_t type, uint16_t maxtype,
		       unsigned int size, uint64_t val)
{
	uint8_t b[16] = { 0 };
	unsigned int len = size;

	if (chance(8))
		val = edge_value();
	if (chance(3))
		len = rnd_below(13);	/* 0..12 bytes: short, long, odd */
	if (chance(2))
		type = (uint16_t)rnd_below(maxtype + 4);
	memcpy(b, &val, sizeof(val) < len ? sizeof(val) : len);
	put_attr(m, type, b, len);
}

static void put_int(struct msg *m, uint16_t type, unsigned int size,
		    uint64_t val)
{
	put_int_of(m, type, TCA_ARBTABLE_MAX, size, val);
}

/*
 * One slot nest: class and weight, maybe mutated: either left out, edge
 * values, other sizes and types, another type for the nest or its
 * NLA_F_NESTED missing, a nest inside it.
 */
static void put_slot(struct msg *m, uint32_t minor, uint32_t weight)
{
	struct nlattr *n = nest_start(m, chance(2) ? (uint16_t)rnd_below(4) :
				      TCA_ARBTABLE_TBL_SLOT);

	if (!chance(5))
		put_int_of(m, TCA_ARBTABLE_SLOT_CLASS, TCA_ARBTABLE_SLOT_MAX,
			   4, minor);
	if (!chance(5))
		put_int_of(m, TCA_ARBTABLE_SLOT_WEIGHT, TCA_ARBTABLE_SLOT_MAX,
			   4, weight);
	if (chance(1)) {
		struct nlattr *in = nest_start(m, TCA_ARBTABLE_SLOT_CLASS);

		put_int_of(m, TCA_ARBTABLE_SLOT_WEIGHT, 0, 4, 1);
		nest_end(m, in);
	}
	nest_end(m, n);
	if (n && chance(2))
		n->nla_type &= (uint16_t)~NLA_F_NESTED;
}

/* Slot nests in slot order, some null (empty), sometimes more than 64 */
static void put_table(struct msg *m, uint16_t type)
{
	struct nlattr *n = nest_start(m, type);
	unsigned int i, cnt = rnd_below(chance(10) ? 80 : 12);

	if (chance(3)) {	/* not nested at all: raw bytes */
		uint32_t junk = rnd();

		m->len -= NLA_HDRLEN;
		put_attr(m, type, &junk, rnd_below(5));
		return;
	}
	for (i = 0; i < cnt; i++) {
		if (chance(15)) {
			nest_end(m, nest_start(m, TCA_ARBTABLE_TBL_SLOT));
			continue;
		}
		put_slot(m, 1 + rnd_below(NMINORS),
			 chance(5) ? 0 : 1 + rnd_below(255));
	}
	nest_end(m, n);
}

static void put_priomap(struct msg *m)
{
	struct nlattr *n = nest_start(m, TCA_ARBTABLE_PRIOMAP);
	unsigned int i, cnt = chance(70) ? TC_ARBTABLE_PRIO_BANDS :
				rnd_below(20);

	for (i = 0; i < cnt; i++) {
		uint32_t v = chance(50) ? 0 : 1 + rnd_below(NMINORS);

		put_attr(m, chance(3) ? (uint16_t)rnd_below(4) :
			 TCA_ARBTABLE_PRIOMAP_BAND, &v,
			 chance(3) ? rnd_below(9) : 4);
	}
	nest_end(m, n);
}

/* Qdisc options: a valid-looking subset, then noise. */
static void put_qdisc_opts(struct msg *m, bool create)
{
	struct nlattr *o = nest_start(m, TCA_OPTIONS);

	if (create || chance(10))
		put_int(m, TCA_ARBTABLE_MODE, 4, rnd_below(2) ^ chance(3));
	if (chance(40))
		put_int(m, TCA_ARBTABLE_RATE, 8,
			chance(80) ? 125000 * (1 + rnd_below(1000)) : 0);
	if (chance(25))
		put_int(m, TCA_ARBTABLE_HIGHLIMIT, 4, rnd_below(260));
	if (chance(20))
		put_int(m, TCA_ARBTABLE_ACCOUNTING, 4, rnd_below(3));
	if (chance(20))
		put_int(m, TCA_ARBTABLE_DEFAULT, 4, rnd_below(NMINORS + 2));
	if (chance(15))
		put_priomap(m);
	if (chance(15))
		put_int(m, TCA_ARBTABLE_MTU, 4, 64 + rnd_below(10000));
	if (chance(15))
		put_int(m, TCA_ARBTABLE_MAXWEIGHT, 4, rnd_below(260));
	if (chance(40))
		put_table(m, TCA_ARBTABLE_HIGH);
	if (chance(30))
		put_table(m, TCA_ARBTABLE_LOW);
	if (chance(5))	/* a duplicate */
		put_int(m, TCA_ARBTABLE_HIGHLIMIT, 4, rnd_below(300));
	if (chance(3))	/* unknown attribute */
		put_int(m, (uint16_t)(TCA_ARBTABLE_MAX + 1 + rnd_below(20)), 4, rnd());
	nest_end(m, o);
	if (o && chance(2))	/* options not nested */
		o->nla_type &= (uint16_t)~NLA_F_NESTED;
	if (o && chance(2))	/* length beyond the message */
		o->nla_len = (uint16_t)(o->nla_len + 4 + rnd_below(64));
}

static void put_class_opts(struct msg *m)
{
	struct nlattr *o = nest_start(m, TCA_OPTIONS);
	unsigned int shape = rnd_below(6);

	switch (shape) {
	case 0:	/* rate + latency */
		put_int(m, TCA_ARBTABLE_C_RATE, 8, 12500 * (1 + rnd_below(400)));
		put_int(m, TCA_ARBTABLE_C_LATENCY, 8,
			1000ULL * (1 + rnd_below(1000000)));
		break;
	case 1:	/* rate + distance */
		put_int(m, TCA_ARBTABLE_C_RATE, 8, 12500 * (1 + rnd_below(400)));
		put_int(m, TCA_ARBTABLE_C_DISTANCE, 4, 1 + rnd_below(70));
		break;
	case 2:	/* share */
		put_int(m, TCA_ARBTABLE_C_SHARE, 4, rnd_below(260));
		if (chance(30))
			put_int(m, TCA_ARBTABLE_C_DISTANCE, 4, rnd_below(70));
		break;
	case 3:	/* strict + ceil */
		put_int(m, TCA_ARBTABLE_C_STRICT, 4, rnd_below(3));
		put_int(m, TCA_ARBTABLE_C_CEIL, 8, 12500 * rnd_below(400));
		break;
	case 4:	/* ceil only, or nothing */
		if (chance(50))
			put_int(m, TCA_ARBTABLE_C_CEIL, 8, 12500 * rnd_below(400));
		break;
	default: /* everything at once */
		put_int(m, TCA_ARBTABLE_C_STRICT, 4, rnd_below(2));
		put_int(m, TCA_ARBTABLE_C_CEIL, 8, edge_value());
		put_int(m, TCA_ARBTABLE_C_RATE, 8, edge_value());
		put_int(m, TCA_ARBTABLE_C_LATENCY, 8, edge_value());
		put_int(m, TCA_ARBTABLE_C_DISTANCE, 4, edge_value());
		put_int(m, TCA_ARBTABLE_C_SHARE, 4, edge_value());
		break;
	}
	if (chance(3))
		put_int(m, (uint16_t)(TCA_ARBTABLE_C_MAX + 1 + rnd_below(10)), 8, rnd());
	nest_end(m, o);
	if (o && chance(2))
		o->nla_type &= (uint16_t)~NLA_F_NESTED;
}

enum op { OP_QCREATE, OP_QCHANGE, OP_CADD, OP_CCHANGE, OP_CDEL, OP_QDEL, OP_N };
static const char *const op_name[OP_N] = {
	"qdisc-create", "qdisc-change", "class-add", "class-change",
	"class-del", "qdisc-del",
};

static int ifindex;
static uint32_t seq;

static const char kind[] = "arbtable";

/*
 * Start @m as a request for an ack on the device: the netlink header
 * of @type and the tcmsg; the caller sets parent, handle and attributes.
 */
static struct tcmsg *msg_begin(struct msg *m, uint16_t type)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	struct tcmsg *t;

	memset(m->buf, 0, NLMSG_SPACE(sizeof(*t)));
	m->len = NLMSG_SPACE(sizeof(*t));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = ++seq;
	t = NLMSG_DATA(h);
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	return t;
}

/* The root arbtable qdisc 1: as the target of @m (its TCA_KIND put) */
static void put_root_qdisc(struct msg *m, struct tcmsg *t)
{
	t->tcm_parent = TC_H_ROOT;
	t->tcm_handle = HANDLE;
	put_attr(m, TCA_KIND, kind, sizeof(kind));
}

/* An RTM_NEWQDISC of the root qdisc 1:, the caller puts TCA_OPTIONS */
static struct nlmsghdr *qdisc_msg_begin(struct msg *m)
{
	put_root_qdisc(m, msg_begin(m, RTM_NEWQDISC));
	return (struct nlmsghdr *)m->buf;
}

static enum op build(struct msg *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	unsigned int r = rnd_below(100);
	enum op op = r < 8 ? OP_QCREATE : r < 30 ? OP_QCHANGE : r < 60 ? OP_CADD :
		     r < 80 ? OP_CCHANGE : r < 99 ? OP_CDEL : OP_QDEL;
	struct tcmsg *t = msg_begin(m, 0);

	switch (op) {
	case OP_QCREATE:
	case OP_QCHANGE:
		h->nlmsg_type = RTM_NEWQDISC;
		if (op == OP_QCREATE)
			h->nlmsg_flags |= NLM_F_CREATE | (chance(50) ? NLM_F_EXCL : NLM_F_REPLACE);
		put_root_qdisc(m, t);
		if (!chance(3))
			put_qdisc_opts(m, op == OP_QCREATE);
		break;
	case OP_CADD:
	case OP_CCHANGE:
		h->nlmsg_type = RTM_NEWTCLASS;
		if (op == OP_CADD)
			h->nlmsg_flags |= NLM_F_CREATE | (chance(70) ? NLM_F_EXCL : 0);
		t->tcm_parent = HANDLE;
		t->tcm_handle = HANDLE | (chance(2) ? rnd_below(0x10000) :
					  1 + rnd_below(NMINORS));
		put_attr(m, TCA_KIND, kind, sizeof(kind));
		if (!chance(3))
			put_class_opts(m);
		break;
	case OP_CDEL:
		h->nlmsg_type = RTM_DELTCLASS;
		t->tcm_handle = HANDLE | (1 + rnd_below(NMINORS));
		break;
	default:
		h->nlmsg_type = RTM_DELQDISC;
		t->tcm_parent = TC_H_ROOT;
		t->tcm_handle = HANDLE;
		break;
	}
	h->nlmsg_len = (uint32_t)m->len;
	return op;
}

/* ------------------------------------------------------------ acks */
static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int one = 1, rcv = 4 << 20;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The ack's error (0 = accepted) and whether it carried a message. */
static int read_ack(int fd, uint32_t want_seq, char *msg, size_t msglen)
{
	static uint8_t buf[BUFSZ];

	msg[0] = '\0';
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1000 - errno;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			struct nlmsgerr *e;
			struct nlattr *a;
			size_t off;
			int rem;

			if (h->nlmsg_seq != want_seq || h->nlmsg_type != NLMSG_ERROR)
				continue;
			e = NLMSG_DATA(h);
			if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
				return e->error;
			off = sizeof(*e);
			if (!(h->nlmsg_flags & NLM_F_CAPPED))
				off += e->msg.nlmsg_len - sizeof(e->msg);
			a = (struct nlattr *)((uint8_t *)e + NLMSG_ALIGN(off));
			rem = (int)h->nlmsg_len - (int)NLMSG_HDRLEN - (int)NLMSG_ALIGN(off);
			while (rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= rem) {
				if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
					snprintf(msg, msglen, "%.*s",
						 (int)(a->nla_len - NLA_HDRLEN),
						 (char *)a + NLA_HDRLEN);
				rem -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((uint8_t *)a + NLA_ALIGN(a->nla_len));
			}
			return e->error;
		}
	}
}

/* ------------------------------------------------------------ dump check */
struct slotref {
	uint32_t minor;
	uint32_t weight;
};

struct dumpstate {
	bool have_qdisc;
	uint8_t mode;
	struct slotref tbl[TC_ARBTABLE_NTABLES][TC_ARBTABLE_SLOTS];
	struct tc_arbtable_xstats xs;
	bool have_xs;
	unsigned int nclasses;
	uint32_t minors[MAX_CLASSES];
	struct tc_arbtable_class_xstats cxs[MAX_CLASSES];
	bool have_cxs[MAX_CLASSES];
	uint8_t opts[4096];	/* the dumped TCA_OPTIONS payload */
	int optlen;
	uint8_t copts[MAX_CLASSES][256];	/* each class's, the same */
	int coptlen[MAX_CLASSES];
	char why[512];
};

static bool bad(struct dumpstate *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->why[0]) {
		va_start(ap, fmt);
		vsnprintf(d->why, sizeof(d->why), fmt, ap);
		va_end(ap);
	}
	return false;
}

/* Walk attributes in [a, a + len); every one must be well-formed. */
static bool attrs_ok(struct dumpstate *d, const uint8_t *p, int len,
		     struct nlattr **tb, int max)
{
	while (len >= (int)NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return bad(d, "malformed attribute type %d len %u (room %d)",
				   type, a->nla_len, len);
		if (tb && type <= max)
			tb[type] = (struct nlattr *)a;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	if (len > 0 && len >= (int)NLA_HDRLEN)
		return bad(d, "%d trailing bytes", len);
	return true;
}

#define ADATA(a)	((uint8_t *)(a) + NLA_HDRLEN)
#define ALEN(a)		((int)(a)->nla_len - (int)NLA_HDRLEN)

/*
 * A dumped table: one nested TCA_ARBTABLE_TBL_SLOT per slot from slot 0
 * to the last non-null one, a null slot empty, the others a class in
 * 1..0xffff and a weight in 1..255.
 */
static bool parse_table(struct dumpstate *d, struct nlattr *nest, int t)
{
	const uint8_t *p = ADATA(nest);
	int len = ALEN(nest), s = 0;
	bool last_null = false;

	if (!attrs_ok(d, p, len, NULL, 0))
		return false;
	for (; len >= (int)NLA_HDRLEN; s++) {
		const struct nlattr *a = (const struct nlattr *)p;
		struct nlattr *f[TCA_ARBTABLE_SLOT_MAX + 1] = { 0 };
		uint32_t minor, weight;

		if (a->nla_type != (TCA_ARBTABLE_TBL_SLOT | NLA_F_NESTED))
			return bad(d, "table %d slot %d: type %#x", t, s,
				   a->nla_type);
		if (s >= TC_ARBTABLE_SLOTS)
			return bad(d, "table %d: more than 64 slots", t);
		if (!attrs_ok(d, ADATA(a), ALEN(a), f, TCA_ARBTABLE_SLOT_MAX))
			return false;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
		last_null = !ALEN(a);
		if (last_null)
			continue;
		if (!f[TCA_ARBTABLE_SLOT_CLASS] || !f[TCA_ARBTABLE_SLOT_WEIGHT] ||
		    ALEN(f[TCA_ARBTABLE_SLOT_CLASS]) != 4 ||
		    ALEN(f[TCA_ARBTABLE_SLOT_WEIGHT]) != 4)
			return bad(d, "table %d slot %d: not a class and a weight",
				   t, s);
		memcpy(&minor, ADATA(f[TCA_ARBTABLE_SLOT_CLASS]), 4);
		memcpy(&weight, ADATA(f[TCA_ARBTABLE_SLOT_WEIGHT]), 4);
		if (!weight || weight > TC_ARBTABLE_WEIGHT_MAX || !minor ||
		    minor > 0xffff)
			return bad(d, "table %d slot %d: class %#x weight %u",
				   t, s, minor, weight);
		d->tbl[t][s].minor = minor;
		d->tbl[t][s].weight = weight;
	}
	if (last_null)
		return bad(d, "table %d: a null slot dumped last", t);
	return true;
}

static bool take_xstats(struct dumpstate *d, struct nlattr **tca, void *dst,
			size_t size, __u32 type, const char *what)
{
	__u32 t;

	struct nlattr *st[TCA_STATS_MAX + 1] = { 0 };

	if (!tca[TCA_STATS2])
		return bad(d, "%s: no TCA_STATS2", what);
	if (!attrs_ok(d, ADATA(tca[TCA_STATS2]), ALEN(tca[TCA_STATS2]), st,
		      TCA_STATS_MAX))
		return false;
	if (!st[TCA_STATS_APP] || ALEN(st[TCA_STATS_APP]) != (int)size)
		return bad(d, "%s: xstats %d bytes, want %zu", what,
			   st[TCA_STATS_APP] ? ALEN(st[TCA_STATS_APP]) : -1, size);
	memcpy(dst, ADATA(st[TCA_STATS_APP]), size);
	memcpy(&t, dst, sizeof(t));	/* both structs start with their type */
	if (t != type)
		return bad(d, "%s: xstats type %u, want %u", what, t, type);
	return true;
}

static bool on_qdisc(struct dumpstate *d, struct nlmsghdr *h)
{
	struct tcmsg *t = NLMSG_DATA(h);
	struct nlattr *tca[TCA_MAX + 1] = { 0 };
	struct nlattr *o[TCA_ARBTABLE_MAX + 1] = { 0 };
	int len = (int)h->nlmsg_len - (int)NLMSG_SPACE(sizeof(*t));
	uint32_t mode;

	if (!attrs_ok(d, (uint8_t *)t + NLMSG_ALIGN(sizeof(*t)), len, tca, TCA_MAX))
		return false;
	if (t->tcm_ifindex != ifindex || t->tcm_handle != HANDLE ||
	    !tca[TCA_KIND] || strcmp((char *)ADATA(tca[TCA_KIND]), "arbtable"))
		return true;
	d->have_qdisc = true;
	if (!tca[TCA_OPTIONS])
		return bad(d, "qdisc: no TCA_OPTIONS");
	if (ALEN(tca[TCA_OPTIONS]) > (int)sizeof(d->opts))
		return bad(d, "qdisc: %d bytes of options", ALEN(tca[TCA_OPTIONS]));
	d->optlen = ALEN(tca[TCA_OPTIONS]);
	memcpy(d->opts, ADATA(tca[TCA_OPTIONS]), d->optlen);
	if (!attrs_ok(d, ADATA(tca[TCA_OPTIONS]), ALEN(tca[TCA_OPTIONS]), o,
		      TCA_ARBTABLE_MAX))
		return false;
	if (!o[TCA_ARBTABLE_MODE] || ALEN(o[TCA_ARBTABLE_MODE]) != 4)
		return bad(d, "qdisc: no mode");
	memcpy(&mode, ADATA(o[TCA_ARBTABLE_MODE]), sizeof(mode));
	if (mode >= __TC_ARBTABLE_MODE_MAX)
		return bad(d, "qdisc: mode %u", mode);
	d->mode = (uint8_t)mode;
	if (o[TCA_ARBTABLE_HIGH] && !parse_table(d, o[TCA_ARBTABLE_HIGH], 0))
		return false;
	if (o[TCA_ARBTABLE_LOW] && !parse_table(d, o[TCA_ARBTABLE_LOW], 1))
		return false;
	if (!take_xstats(d, tca, &d->xs, sizeof(d->xs),
			 TCA_ARBTABLE_XSTATS_QDISC, "qdisc"))
		return false;
	d->have_xs = true;
	return true;
}

static bool on_class(struct dumpstate *d, struct nlmsghdr *h)
{
	struct tcmsg *t = NLMSG_DATA(h);
	struct nlattr *tca[TCA_MAX + 1] = { 0 };
	int len = (int)h->nlmsg_len - (int)NLMSG_SPACE(sizeof(*t));
	unsigned int i = d->nclasses;

	if (!attrs_ok(d, (uint8_t *)t + NLMSG_ALIGN(sizeof(*t)), len, tca, TCA_MAX))
		return false;
	if (!tca[TCA_KIND] || strcmp((char *)ADATA(tca[TCA_KIND]), "arbtable"))
		return true;
	if (TC_H_MAJ(t->tcm_handle) != HANDLE)
		return bad(d, "class %x outside 1:", t->tcm_handle);
	if (i >= MAX_CLASSES)
		return bad(d, "more than %d classes dumped", MAX_CLASSES);
	d->minors[i] = TC_H_MIN(t->tcm_handle);
	d->coptlen[i] = 0;
	if (tca[TCA_OPTIONS] &&
	    ALEN(tca[TCA_OPTIONS]) <= (int)sizeof(d->copts[i])) {
		d->coptlen[i] = ALEN(tca[TCA_OPTIONS]);
		memcpy(d->copts[i], ADATA(tca[TCA_OPTIONS]), d->coptlen[i]);
	}
	if (!take_xstats(d, tca, &d->cxs[i], sizeof(d->cxs[i]),
			 TCA_ARBTABLE_XSTATS_CLASS, "class"))
		return false;
	d->have_cxs[i] = true;
	d->nclasses++;
	return true;
}

static bool dump(int fd, struct dumpstate *d, int type)
{
	static uint8_t buf[BUFSZ];
	struct {
		struct nlmsghdr h;
		struct tcmsg t;
	} req = { 0 };

	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = (uint16_t)type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = ++seq;
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = ifindex;
	if (send(fd, &req, sizeof(req), 0) < 0)
		return bad(d, "dump send: %s", strerror(errno));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return bad(d, "dump recv: %s", strerror(errno));
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != req.h.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return true;
			if (h->nlmsg_type == NLMSG_ERROR)
				return bad(d, "dump error %d",
					   ((struct nlmsgerr *)NLMSG_DATA(h))->error);
			if (type == RTM_GETQDISC ? !on_qdisc(d, h) : !on_class(d, h))
				return false;
		}
	}
}

static bool consistent(struct dumpstate *d)
{
	unsigned int t, s, i, used[2] = { 0 };

	if (!d->have_qdisc)
		return true;	/* deleted by the stream: nothing to check */
	if (d->xs.nclasses != d->nclasses)
		return bad(d, "xstats nclasses %u, %u classes dumped",
			   d->xs.nclasses, d->nclasses);
	for (t = 0; t < 2; t++) {
		for (s = 0; s < TC_ARBTABLE_SLOTS; s++) {
			const struct slotref *r = &d->tbl[t][s];

			if (!r->weight)
				continue;
			used[t]++;
			for (i = 0; i < d->nclasses; i++)
				if (d->minors[i] == r->minor)
					break;
			if (i == d->nclasses)
				return bad(d, "table %u slot %u names 1:%x, not a class",
					   t, s, r->minor);
		}
	}
	if (used[0] != d->xs.high_used || used[1] != d->xs.low_used)
		return bad(d, "occupancy %u/%u in xstats, tables hold %u/%u",
			   d->xs.high_used, d->xs.low_used, used[0], used[1]);
	for (i = 0; i < d->nclasses; i++) {
		const struct tc_arbtable_class_xstats *c = &d->cxs[i];
		uint64_t mask[2] = { 0 }, mt;
		uint32_t wsum[2] = { 0 };

		for (t = 0; t < 2; t++)
			for (s = 0; s < TC_ARBTABLE_SLOTS; s++)
				if (d->tbl[t][s].weight && d->tbl[t][s].minor == d->minors[i]) {
					mask[t] |= 1ULL << s;
					wsum[t] += d->tbl[t][s].weight;
				}
		if (mask[0] != c->high_slots || mask[1] != c->low_slots)
			return bad(d, "class 1:%x: xstats slots %llx/%llx, tables %llx/%llx",
				   d->minors[i], (unsigned long long)c->high_slots,
				   (unsigned long long)c->low_slots,
				   (unsigned long long)mask[0], (unsigned long long)mask[1]);
		if (wsum[0] != c->high_weight || wsum[1] != c->low_weight)
			return bad(d, "class 1:%x: xstats weights %u/%u, tables %u/%u",
				   d->minors[i], c->high_weight, c->low_weight,
				   wsum[0], wsum[1]);
		if (d->mode != TC_ARBTABLE_MODE_AUTO) {
			if (c->distance)
				return bad(d, "manual class 1:%x has distance %u",
					   d->minors[i], c->distance);
			continue;
		}
		mt = mask[0] ? mask[0] : mask[1];
		if (mask[0] && mask[1])
			return bad(d, "auto class 1:%x in both tables", d->minors[i]);
		if (!c->distance) {
			if (mt)
				return bad(d, "auto class 1:%x holds slots, distance 0",
					   d->minors[i]);
			continue;
		}
		if (c->distance > 64 || (c->distance & (c->distance - 1)) ||
		    (unsigned int)__builtin_popcountll(mt) != 64 / c->distance)
			return bad(d, "auto class 1:%x: distance %u, %d slots",
				   d->minors[i], c->distance, __builtin_popcountll(mt));
		for (s = 0; s < TC_ARBTABLE_SLOTS; s++)
			if ((mt >> s & 1) &&
			    !(mt >> ((s + c->distance) % TC_ARBTABLE_SLOTS) & 1))
				return bad(d, "auto class 1:%x: slots %llx not %u apart",
					   d->minors[i], (unsigned long long)mt,
					   c->distance);
	}
	return true;
}

/* -P: pads before 64-bit attributes, as an i386 kernel dumps them */
static bool pads;

/*
 * The dumped options @p as TCA_OPTIONS of @m (tc sends it as a nest),
 * with -P an empty @pad attribute before each 64-bit one.
 */
static void put_dumped_opts(struct msg *m, const uint8_t *p, int len,
			    uint16_t pad)
{
	struct nlattr *opts = nest_start(m, TCA_OPTIONS);

	while (len >= (int)NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (pads && a->nla_len == NLA_HDRLEN + 8)
			put_attr(m, pad, NULL, 0);
		memcpy(m->buf + m->len, a, NLA_ALIGN(a->nla_len));
		m->len += NLA_ALIGN(a->nla_len);
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	nest_end(m, opts);
}

/*
 * Send the dumped options back, whole, as a change of the qdisc (auto
 * mode's tables too: the kernel takes the tables in force). 0 accepted,
 * else the errno, *msg the extack.
 */
static int replay(int fd, const struct dumpstate *d, char *msg, size_t msglen)
{
	static struct msg m;
	struct nlmsghdr *h = qdisc_msg_begin(&m);

	put_dumped_opts(&m, d->opts, d->optlen, TCA_ARBTABLE_PAD);
	h->nlmsg_len = (uint32_t)m.len;
	if (send(fd, m.buf, m.len, 0) < 0)
		return -errno;
	return read_ack(fd, h->nlmsg_seq, msg, msglen);
}

/* ------------------------------------------------------------ refusals */
static void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put_attr(m, type, &v, sizeof(v));
}

/* A slot nest with a class and a weight, each left out when 0 */
static struct nlattr *put_slot_of(struct msg *m, uint32_t minor,
				  uint32_t weight)
{
	struct nlattr *n = nest_start(m, TCA_ARBTABLE_TBL_SLOT);

	if (minor)
		put_u32(m, TCA_ARBTABLE_SLOT_CLASS, minor);
	if (weight)
		put_u32(m, TCA_ARBTABLE_SLOT_WEIGHT, weight);
	nest_end(m, n);
	return n;
}

static void r_weight_only(struct msg *m)
{
	put_slot_of(m, 0, 5);
}

static void r_class_only(struct msg *m)
{
	put_slot_of(m, 0x10, 0);
}

static void r_class_big(struct msg *m)
{
	put_slot_of(m, 0x10000, 5);
}

static void r_weight_big(struct msg *m)
{
	put_slot_of(m, 0x10, 256);
}

static void r_missing_class(struct msg *m)
{
	put_slot_of(m, 0x99, 5);
}

static void r_unspec(struct msg *m)
{
	put_u32(m, TCA_ARBTABLE_TBL_UNSPEC, 0);
}

static void r_class_zero(struct msg *m)
{
	struct nlattr *n = nest_start(m, TCA_ARBTABLE_TBL_SLOT);

	put_u32(m, TCA_ARBTABLE_SLOT_CLASS, 0);
	put_u32(m, TCA_ARBTABLE_SLOT_WEIGHT, 5);
	nest_end(m, n);
}

static void r_not_nested(struct msg *m)
{
	struct nlattr *n = put_slot_of(m, 0x10, 5);

	n->nla_type &= (uint16_t)~NLA_F_NESTED;
}

static void r_65_slots(struct msg *m)
{
	int i;

	for (i = 0; i < TC_ARBTABLE_SLOTS; i++)
		put_slot_of(m, 0, 0);
	put_slot_of(m, 0x10, 1);
}

/* slot 0 empty, slot 1 class 1:10 weight 0: both null; slot 2 1:10/3 */
static void r_null_slots(struct msg *m)
{
	struct nlattr *n;

	put_slot_of(m, 0, 0);
	n = nest_start(m, TCA_ARBTABLE_TBL_SLOT);
	put_u32(m, TCA_ARBTABLE_SLOT_CLASS, 0x10);
	put_u32(m, TCA_ARBTABLE_SLOT_WEIGHT, 0);
	nest_end(m, n);
	put_slot_of(m, 0x10, 3);
}

/* Qdisc options outside the tables, as no tc sends them */
static void put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	put_attr(m, type, &v, sizeof(v));
}

static void r_rate_max(struct msg *m)
{
	put_u64(m, TCA_ARBTABLE_RATE, UINT64_MAX);
}

static void r_rate_above(struct msg *m)
{
	put_u64(m, TCA_ARBTABLE_RATE, (1ULL << 48) + 1);
}

static void r_mtu_small(struct msg *m)
{
	put_u32(m, TCA_ARBTABLE_MTU, 63);
}

static void r_maxweight_zero(struct msg *m)
{
	put_u32(m, TCA_ARBTABLE_MAXWEIGHT, 0);
}

static void r_highlimit_big(struct msg *m)
{
	put_u32(m, TCA_ARBTABLE_HIGHLIMIT, 256);
}

/* the mode as the u8 it was before issue 35 */
static void r_mode_u8(struct msg *m)
{
	uint8_t v = TC_ARBTABLE_MODE_MANUAL;

	put_attr(m, TCA_ARBTABLE_MODE, &v, sizeof(v));
}

static void r_mode_big(struct msg *m)
{
	put_u32(m, TCA_ARBTABLE_MODE, __TC_ARBTABLE_MODE_MAX);
}

static void r_rate_link_rate(struct msg *m)
{
	put_u64(m, TCA_ARBTABLE_RATE, 5000000);
	put_attr(m, TCA_ARBTABLE_RATE_LINK, NULL, 0);
}

static const struct refusal {
	const char *what;
	const char *want;	/* in the extack; NULL: accepted */
	int err;
	void (*put)(struct msg *m);
	bool top;		/* in the options, not in the HIGH nest */
} refusals[] = {
	{ "qdisc rate 2^64-1 B/s (policy)", "integer out of range", -ERANGE, r_rate_max, true },
	{ "qdisc rate 2^48+1 B/s (policy)", "integer out of range", -ERANGE, r_rate_above, true },
	{ "mtu 63", "mtu out of range", -EINVAL, r_mtu_small, true },
	{ "maxweight 0 (policy)", "integer out of range", -ERANGE, r_maxweight_zero, true },
	{ "highlimit 256 (policy)", "integer out of range", -ERANGE, r_highlimit_big, true },
	{ "mode as a u8 (policy)", "invalid attribute length", -EINVAL, r_mode_u8, true },
	{ "mode 2 (policy)", "integer out of range", -ERANGE, r_mode_big, true },
	{ "rate_link with rate 40mbit", "rate_link", -EINVAL, r_rate_link_rate, true },
	{ "a weight without a class", "needs both a class and a weight", -EINVAL, r_weight_only, false },
	{ "a class without a weight", "needs both a class and a weight", -EINVAL, r_class_only, false },
	{ "65 slot nests", "more than 64 slots", -EINVAL, r_65_slots, false },
	{ "class 0 (policy)", "integer out of range", -ERANGE, r_class_zero, false },
	{ "class 0x10000 (policy)", "integer out of range", -ERANGE, r_class_big, false },
	{ "weight 256 (policy)", "integer out of range", -ERANGE, r_weight_big, false },
	{ "a slot nest without NLA_F_NESTED", "NLA_F_NESTED", -EINVAL, r_not_nested, false },
	{ "an attribute of type 0 among the slots", "Unknown attribute type", -EINVAL, r_unspec, false },
	{ "a slot naming a missing class", "does not exist", -ENOENT, r_missing_class, false },
	{ "null slots: an empty nest and weight 0", NULL, 0, r_null_slots, false },
};

/* The device's qdisc 1: changed to HIGH { @r's slots }: the errno */
static int send_high(int fd, const struct refusal *r, char *msg, size_t msglen)
{
	static struct msg m;
	struct nlmsghdr *h = qdisc_msg_begin(&m);
	struct nlattr *opts, *high;

	opts = nest_start(&m, TCA_OPTIONS);
	if (r->top) {
		r->put(&m);
	} else {
		high = nest_start(&m, TCA_ARBTABLE_HIGH);
		r->put(&m);
		nest_end(&m, high);
	}
	nest_end(&m, opts);
	h->nlmsg_len = (uint32_t)m.len;
	if (send(fd, m.buf, m.len, 0) < 0)
		return -errno;
	return read_ack(fd, h->nlmsg_seq, msg, msglen);
}

/*
 * -R: the table refusals of a manual qdisc 1: on the device whose class
 * 1:10 exists and 1:99 does not, each checked for its errno, its extack
 * and the configuration left as it was; then null slots accepted.
 */
static int refusal_checks(int fd)
{
	static struct dumpstate before, after;
	unsigned int i, nbad = 0;
	char msg[512];

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		bool kept, ok;
		int err;

		memset(&before, 0, sizeof(before));
		memset(&after, 0, sizeof(after));
		if (!dump(fd, &before, RTM_GETQDISC) || !before.have_qdisc ||
		    before.mode != TC_ARBTABLE_MODE_MANUAL) {
			printf("not ok - table refusals: a manual qdisc 1: on the device (%s)\n",
			       before.why[0] ? before.why : "none");
			return 1;
		}
		err = send_high(fd, r, msg, sizeof(msg));
		if (!dump(fd, &after, RTM_GETQDISC) || !after.have_qdisc) {
			printf("not ok - table: %s: no dump after (%s)\n",
			       r->what, after.why);
			nbad++;
			continue;
		}
		kept = after.optlen == before.optlen &&
		       !memcmp(after.opts, before.opts, before.optlen);
		if (!r->want) {
			ok = !err && after.tbl[0][2].minor == 0x10 &&
			     after.tbl[0][2].weight == 3 &&
			     !after.tbl[0][0].weight && !after.tbl[0][1].weight;
			printf("%s - table: %s accepted, dumped as slot 2 only (%s)\n",
			       ok ? "ok" : "not ok", r->what,
			       err ? (msg[0] ? msg : strerror(-err)) : "rc 0");
		} else {
			ok = err == r->err && strstr(msg, r->want) && kept;
			printf("%s - %s: %s refused (%s: '%s'), configuration %s\n",
			       ok ? "ok" : "not ok", r->top ? "options" : "table",
			       r->what, err ? strerror(-err) : "accepted", msg,
			       kept ? "kept" : "changed");
		}
		nbad += !ok;
	}
	return nbad ? 1 : 0;
}

/*
 * -T: one round trip of the qdisc 1: on the device as it is: its dumped
 * options sent back whole (a change) must be accepted and leave the dump,
 * the capacity and the classes' reservations as they were.
 */
static int roundtrip_check(int fd, const char *what)
{
	static struct dumpstate before, after;
	bool same, cap;
	char msg[512] = "";
	int err;

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	if (!dump(fd, &before, RTM_GETQDISC) || !before.have_qdisc ||
	    !before.have_xs) {
		printf("not ok - round trip %s: a qdisc 1: on the device (%s)\n",
		       what, before.why[0] ? before.why : "none");
		return 1;
	}
	err = replay(fd, &before, msg, sizeof(msg));
	if (!dump(fd, &after, RTM_GETQDISC) || !after.have_xs) {
		printf("not ok - round trip %s: no dump after (%s)\n", what,
		       after.why);
		return 1;
	}
	same = after.optlen == before.optlen &&
	       !memcmp(after.opts, before.opts, before.optlen);
	cap = after.xs.capacity == before.xs.capacity &&
	      after.xs.nclasses == before.xs.nclasses;
	printf("%s - round trip %s: the dump sent back is %s (%s), dump %s, capacity %llu -> %llu\n",
	       !err && same && cap ? "ok" : "not ok", what,
	       err ? "refused" : "accepted",
	       err ? (msg[0] ? msg : strerror(-err)) : "rc 0",
	       same ? "the same" : "changed",
	       (unsigned long long)before.xs.capacity,
	       (unsigned long long)after.xs.capacity);
	return !err && same && cap ? 0 : 1;
}

/* The dumped options of class @i sent back as a change of the class */
static int replay_class(int fd, const struct dumpstate *d, unsigned int i,
			char *msg, size_t msglen)
{
	static struct msg m;
	struct tcmsg *t = msg_begin(&m, RTM_NEWTCLASS);
	struct nlmsghdr *h = (struct nlmsghdr *)m.buf;

	t->tcm_parent = HANDLE;
	t->tcm_handle = HANDLE | d->minors[i];
	put_attr(&m, TCA_KIND, kind, sizeof(kind));
	put_dumped_opts(&m, d->copts[i], d->coptlen[i], TCA_ARBTABLE_C_PAD);
	h->nlmsg_len = (uint32_t)m.len;
	if (send(fd, m.buf, m.len, 0) < 0)
		return -errno;
	return read_ack(fd, h->nlmsg_seq, msg, msglen);
}

/*
 * -T -P: every class's dump sent back as a change is accepted and leaves
 * the classes' dumps as they were.
 */
static int class_roundtrip_check(int fd, const char *what)
{
	static struct dumpstate before, after;
	unsigned int i, nbad = 0;
	char msg[512];

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	if (!dump(fd, &before, RTM_GETTCLASS)) {
		printf("not ok - class round trip %s: no class dump (%s)\n",
		       what, before.why);
		return 1;
	}
	for (i = 0; i < before.nclasses; i++) {
		int err;

		msg[0] = '\0';
		err = replay_class(fd, &before, i, msg, sizeof(msg));
		if (err) {
			printf("# class 1:%x: its dump sent back is refused: %s\n",
			       before.minors[i], msg[0] ? msg : strerror(-err));
			nbad++;
		}
	}
	if (!dump(fd, &after, RTM_GETTCLASS) ||
	    after.nclasses != before.nclasses) {
		printf("not ok - class round trip %s: no class dump after (%s)\n",
		       what, after.why);
		return 1;
	}
	for (i = 0; i < before.nclasses; i++)
		if (after.coptlen[i] != before.coptlen[i] ||
		    memcmp(after.copts[i], before.copts[i], before.coptlen[i])) {
			printf("# class 1:%x: dumps differently after\n",
			       before.minors[i]);
			nbad++;
		}
	printf("%s - class round trip %s: %u classes' dumps sent back%s, %u refused or changed\n",
	       nbad ? "not ok" : "ok", what, before.nclasses,
	       pads ? " with pads" : "", nbad);
	return nbad ? 1 : 0;
}

/* ------------------------------------------------------------ main */
static void usage(void)
{
	fprintf(stderr, "usage: arbt_nlfuzz -d DEV [-n MESSAGES] [-b BATCH] [-s SEED] [-v]\n"
			"       arbt_nlfuzz -d DEV -D SECONDS\n"
			"       arbt_nlfuzz -d DEV -R\n"
			"       arbt_nlfuzz -d DEV -T WHAT [-P]\n");
	exit(2);
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* -D: dumps back to back; see the head comment */
static int dump_loop(int fd, double secs)
{
	static struct dumpstate d;
	struct tc_arbtable_xstats prev = { 0 };
	unsigned long n = 0, nbad = 0, nback = 0;
	struct timespec t0;
	bool have_prev = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (since(&t0) < secs) {
		const struct tc_arbtable_xstats *x = &d.xs;

		memset(&d, 0, sizeof(d));
		n++;
		/* the class dump every fourth time: the qdisc's dump_stats
		 * reads the counters the datapath writes most often
		 */
		if (!dump(fd, &d, RTM_GETQDISC) ||
		    (n % 4 == 0 && !dump(fd, &d, RTM_GETTCLASS)) || !d.have_xs) {
			if (++nbad <= 10)
				printf("# dump %lu: %s\n", n,
				       d.why[0] ? d.why : "no arbtable qdisc 1:");
			continue;
		}
		if (have_prev &&
		    (x->unclassified_pkts < prev.unclassified_pkts ||
		     x->unclassified_drops < prev.unclassified_drops ||
		     x->swaps < prev.swaps || x->throttled < prev.throttled ||
		     x->gso_split < prev.gso_split ||
		     x->gso_segs < prev.gso_segs ||
		     x->oversize_drops < prev.oversize_drops ||
		     x->link_changes < prev.link_changes ||
		     x->mtu_changes < prev.mtu_changes ||
		     x->stalls < prev.stalls) && ++nback <= 10)
			printf("# dump %lu: a qdisc xstats counter went back (unclassified %llu/%llu, swaps %llu, throttled %llu, stalls %llu after %llu/%llu, %llu, %llu, %llu)\n",
			       n, (unsigned long long)x->unclassified_pkts,
			       (unsigned long long)x->unclassified_drops,
			       (unsigned long long)x->swaps,
			       (unsigned long long)x->throttled,
			       (unsigned long long)x->stalls,
			       (unsigned long long)prev.unclassified_pkts,
			       (unsigned long long)prev.unclassified_drops,
			       (unsigned long long)prev.swaps,
			       (unsigned long long)prev.throttled,
			       (unsigned long long)prev.stalls);
		prev = *x;
		have_prev = true;
	}
	printf("# %lu qdisc dumps, %lu class dumps in %.1f s\n", n, n / 4,
	       since(&t0));
	printf("%s - dump loop: every qdisc and class dump parsed with its xstats (%lu of %lu bad)\n",
	       nbad || !n ? "not ok" : "ok", nbad, n);
	printf("%s - dump loop: no qdisc xstats counter went back between dumps (%lu times)\n",
	       nback ? "not ok" : "ok", nback);
	return nbad || !n || nback ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct msg m;
	static struct dumpstate d;
	const char *dev = NULL;
	unsigned long total = 100000, batch = 200, sent = 0, nbatch = 0;
	unsigned long acc[OP_N] = { 0 }, rej[OP_N] = { 0 };
	unsigned long nomsg_core[2] = { 0 }, nomsg_bad = 0, dump_bad = 0;
	unsigned long replays = 0, replay_bad = 0;
	static struct dumpstate d2;
	bool verbose = false, refuse = false;
	const char *trip = NULL;
	double loop_secs = 0;
	struct timespec t0, t1;
	int fd, c, rc = 0;

	rng = 0x9e3779b97f4a7c15ULL;
	while ((c = getopt(argc, argv, "d:n:b:s:vD:RPT:")) != -1) {
		switch (c) {
		case 'R': refuse = true; break;
		case 'P': pads = true; break;
		case 'T': trip = optarg; break;
		case 'd': dev = optarg; break;
		case 'D': loop_secs = strtod(optarg, NULL); if (loop_secs <= 0) usage(); break;
		case 'n': total = strtoul(optarg, NULL, 0); break;
		case 'b': batch = strtoul(optarg, NULL, 0); break;
		case 's': rng ^= strtoull(optarg, NULL, 0) * 0x100000001b3ULL; break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (!dev || !batch)
		usage();
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex) {
		fprintf(stderr, "arbt_nlfuzz: no device %s\n", dev);
		return 2;
	}
	fd = nl_open();
	if (fd < 0) {
		perror("arbt_nlfuzz: netlink socket");
		return 2;
	}
	if (trip) {
		rc = roundtrip_check(fd, trip);
		if (pads)
			rc |= class_roundtrip_check(fd, trip);
		close(fd);
		return rc;
	}
	if (loop_secs > 0 || refuse) {
		rc = refuse ? refusal_checks(fd) : dump_loop(fd, loop_secs);
		close(fd);
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (sent < total) {
		unsigned long k;

		for (k = 0; k < batch && sent < total; k++) {
			char msg[512];
			enum op op = build(&m);
			uint32_t s = ((struct nlmsghdr *)m.buf)->nlmsg_seq;
			int err;

			if (send(fd, m.buf, m.len, 0) < 0) {
				fprintf(stderr, "arbt_nlfuzz: send: %s\n", strerror(errno));
				return 2;
			}
			sent++;
			err = read_ack(fd, s, msg, sizeof(msg));
			if (err <= -1000) {
				fprintf(stderr, "arbt_nlfuzz: recv: %s\n", strerror(-err - 1000));
				return 2;
			}
			if (!err) {
				acc[op]++;
				continue;
			}
			rej[op]++;
			if (msg[0]) {
				if (verbose)
					printf("# %s: %s (%d)\n", op_name[op], msg, err);
				continue;
			}
			if (err == -ENOENT)
				nomsg_core[0]++;
			else if (err == -EEXIST)
				nomsg_core[1]++;
			else {
				nomsg_bad++;
				if (nomsg_bad <= 10)
					printf("# no extack: %s message %u: %s\n",
					       op_name[op], s, strerror(-err));
			}
		}
		nbatch++;
		memset(&d, 0, sizeof(d));
		if (!dump(fd, &d, RTM_GETQDISC) || !dump(fd, &d, RTM_GETTCLASS) ||
		    !consistent(&d)) {
			dump_bad++;
			if (dump_bad <= 10)
				printf("# batch %lu: dump: %s\n", nbatch, d.why);
		} else if (d.have_qdisc) {
			char msg[512];
			int err = replay(fd, &d, msg, sizeof(msg));

			replays++;
			memset(&d2, 0, sizeof(d2));
			if (err) {
				replay_bad++;
				if (replay_bad <= 10)
					printf("# batch %lu: the dumped options sent back as a change: %s (%d)\n",
					       nbatch, msg[0] ? msg : strerror(-err), err);
			} else if (!dump(fd, &d2, RTM_GETQDISC) || !d2.have_qdisc ||
				   d2.optlen != d.optlen ||
				   memcmp(d2.opts, d.opts, d.optlen)) {
				replay_bad++;
				if (replay_bad <= 10)
					printf("# batch %lu: after replaying its dump the qdisc dumps differently (%d vs %d bytes)%s%s\n",
					       nbatch, d2.optlen, d.optlen,
					       d2.why[0] ? ": " : "", d2.why);
			}
		}
		if (nbatch % 50 == 0)
			fprintf(stderr, "arbt_nlfuzz: %lu/%lu messages\n", sent, total);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (c = 0; c < OP_N; c++)
		printf("# %-13s accepted %7lu rejected %7lu\n", op_name[c], acc[c], rej[c]);
	printf("# %lu messages in %.1f s, %lu batches; rejections without extack: "
	       "%lu ENOENT + %lu EEXIST from the rtnetlink core, %lu other\n",
	       sent, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       nbatch, nomsg_core[0], nomsg_core[1], nomsg_bad);
	printf("%s - nlfuzz: every rejection outside the core's ENOENT/EEXIST carries an extack message (%lu without)\n",
	       nomsg_bad ? "not ok" : "ok", nomsg_bad);
	printf("%s - nlfuzz: dump parses and is self-consistent after each of %lu batches (%lu bad)\n",
	       dump_bad ? "not ok" : "ok", nbatch, dump_bad);
	printf("%s - nlfuzz: the qdisc's dump, sent back as a change, is accepted and dumps the same (%lu replays, %lu bad)\n",
	       replay_bad || !replays ? "not ok" : "ok", replays, replay_bad);
	if (nomsg_bad || dump_bad || replay_bad || !replays)
		rc = 1;
	close(fd);
	return rc;
}
