/* SPDX-License-Identifier: MIT */
/*
 * What a region's end hands out: a result it cannot trust, marked so, and
 * a record put where the handle's user asked for records (an attached
 * buffer, a named region's totals): no division, no allocation, no
 * syscall.
 */
#include <string.h>

#include "internal.h"

/* What fill_result (region_slow.c) does to a region it cannot trust. */
void td_record_mark_unreliable(struct td_result *res)
{
	memset(res->l1, 0, sizeof(res->l1));
	memset(res->l2, 0, sizeof(res->l2));
	res->smt_contention = 0;
	res->err = 1;
	res->flags |= TD_RESULT_UNRELIABLE;
	res->flags &= ~(TD_RESULT_L2 | TD_RESULT_L2_FE_BE | TD_RESULT_MEMORY);
}

/*
 * The record of a region's end, to the named region being ended (through
 * the hook td_named_end set) and to the attached buffer, if any.
 */
void td_sink_put(struct td *td, struct td_record *rec, const uint64_t *l2raw)
{
	struct td_sink *k = &td->sink;

	if (k->pending) {
		rec->name = k->pending->name;
		k->to_named(k->pending, rec, l2raw);
		k->pending = NULL;
	}
	if (!k->buf)
		return;
	if (k->next < k->end)
		*k->next++ = *rec;
	else
		k->dropped++;
}
