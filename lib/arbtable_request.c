// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arbtable_request.c - the reservation request check every front end
 * shares (see arbtable_request.h).  The texts are the module's extack
 * messages, word for word.
 */
#include <stddef.h>

#include "arbtable_request.h"

const char *arbt_request_check(const struct arbt_request *rq)
{
	if (rq->given & ARBT_RQ_RATE) {
		if (!rq->rate)
			return "rate must be greater than 0 bytes/s";
		if (rq->rate > ARBT_RQ_RATE_MAX)
			return "rate above the largest rate, 2^48 bytes/s";
	}
	if (rq->given & ARBT_RQ_SHARE) {
		if (rq->given & ARBT_RQ_RATE)
			return "give either rate (HIGH table) or share (LOW table), not both";
		if (!rq->share || rq->share > ARBT_RQ_SHARE_MAX)
			return "share out of range 1..255 (LOW table weight, units of 64 bytes)";
	}
	if ((rq->given & ARBT_RQ_LATENCY) && (rq->given & ARBT_RQ_DISTANCE))
		return "give either latency or distance, not both";
	if ((rq->given & ARBT_RQ_LATENCY) && !rq->latency_ns)
		return "latency must be greater than 0";
	if ((rq->given & ARBT_RQ_DISTANCE) &&
	    (!rq->distance || rq->distance > ARBT_RQ_SLOTS))
		return "distance out of range 1..64 slots";
	return NULL;
}

const char *arbt_resv_check(const struct arbt_resv *r, int strict)
{
	if (r->latency_ns && r->share)
		return "latency bounds are for rate classes in the HIGH table; give a share class a distance instead";
	if ((r->latency_ns || r->distance) && !r->rate && !r->share)
		return "latency/distance need a rate (HIGH table) or a share (LOW table)";
	if (strict && (r->rate || r->share))
		return "the strict class is served before the tables and takes no rate or share";
	return NULL;
}

void arbt_request_resv(const struct arbt_request *rq, struct arbt_resv *r)
{
	r->rate = rq->given & ARBT_RQ_RATE ? rq->rate : 0;
	r->latency_ns = rq->given & ARBT_RQ_LATENCY ? rq->latency_ns : 0;
	r->distance = rq->given & ARBT_RQ_DISTANCE ? rq->distance : 0;
	r->share = rq->given & ARBT_RQ_SHARE ? rq->share : 0;
}

const char *arbt_request_check_new(const struct arbt_request *rq, int strict,
				   unsigned int flags)
{
	struct arbt_resv r;
	const char *why = arbt_request_check(rq);

	if (why)
		return why;
	arbt_request_resv(rq, &r);
	why = arbt_resv_check(&r, strict);
	if (why)
		return why;
	if ((flags & ARBT_RQ_NEED_RESV) && !r.rate && !r.share)
		return "give a rate (HIGH table) or a share (LOW table)";
	return NULL;
}
