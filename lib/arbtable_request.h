/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arbtable_request.h - the one check of a reservation request (rate,
 * share, latency, distance) for every front end that decides without the
 * kernel: arbtable-cni's tenant requests and system class, arbtablectl's
 * request and admit, arbsim's class and change lines.  The rules are the
 * module's, and so are the words of the rules across options; a plain
 * range the module refuses through its netlink policy (tc then prints
 * only "integer out of range"), so here the text names the option and
 * its range.  Each front end puts its own context before the reason
 * ("request: ", "runtimeConfig.arbtable: ", ...).
 *
 * Internal to the project (compiled into each tool, not exported by
 * libarbtable): no ABI promise.
 */
#ifndef ARBTABLE_REQUEST_H
#define ARBTABLE_REQUEST_H

#include <stdint.h>

/* The module's limits (static_asserts in arbsim and tests/unit keep them
 * equal to kernel/arbtable_core.h's and the uapi's)
 */
#define ARBT_RQ_SLOTS		64			/* ARB_SLOTS */
#define ARBT_RQ_SHARE_MAX	255			/* TC_ARBTABLE_WEIGHT_MAX */
#define ARBT_RQ_RATE_MAX	(1ULL << 48)		/* ARB_RATE_MAX, bytes/s */

/* Which options a request gives */
#define ARBT_RQ_RATE		(1u << 0)
#define ARBT_RQ_LATENCY		(1u << 1)
#define ARBT_RQ_DISTANCE	(1u << 2)
#define ARBT_RQ_SHARE		(1u << 3)

/* The options one class add or change gives, as given */
struct arbt_request {
	unsigned int	given;		/* ARBT_RQ_* */
	uint64_t	rate;		/* bytes/s */
	uint64_t	latency_ns;
	uint32_t	distance;	/* slots */
	uint32_t	share;		/* LOW table weight, 64-byte units */
};

/* The reservation a class holds after the request (0: none) */
struct arbt_resv {
	uint64_t	rate;
	uint64_t	latency_ns;
	uint32_t	distance;
	uint32_t	share;
};

/*
 * The options on their own, in the module's order: a rate above 0 and at
 * most 2^48 bytes/s, not with a share; a share of 1..255; not both a
 * latency and a distance; a latency above 0; a distance of 1..64.  NULL
 * when they pass, else the module's reason.
 */
const char *arbt_request_check(const struct arbt_request *rq);

/*
 * The reservation a class ends up with (a change merges its options into
 * what the class had; a new class has exactly what it asked for), and
 * whether the class is the strict one: a latency only with a rate, a
 * latency or distance only with a rate or a share, no rate or share for
 * the strict class.  NULL or the module's reason.
 */
const char *arbt_resv_check(const struct arbt_resv *r, int strict);

/* A request's reservation when it makes a new class */
void arbt_request_resv(const struct arbt_request *rq, struct arbt_resv *r);

/* Flags of arbt_request_check_new() */
#define ARBT_RQ_NEED_RESV	(1u << 0)	/* a rate or a share is required */

/*
 * A new class's request whole: arbt_request_check(), then
 * arbt_resv_check() of what it reserves, then (ARBT_RQ_NEED_RESV, for a
 * tenant that must hold something) "give a rate (HIGH table) or a share
 * (LOW table)".  NULL or the reason.
 */
const char *arbt_request_check_new(const struct arbt_request *rq, int strict,
				   unsigned int flags);

#endif /* ARBTABLE_REQUEST_H */
