/* SPDX-License-Identifier: MIT */
/*
 * Per-iteration records: the buffer a harness attaches, the hand-off from
 * td_region_end (td_sink_put: no division, no allocation, no syscall), and
 * the pure functions that turn a record or two raw readings into a result.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

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
	if (k->used < k->cap)
		k->buf[k->used++] = *rec;
	else
		k->dropped++;
}

int td_records_attach(struct td *td, struct td_record *buf, size_t cap)
{
	if (!td || !buf || !cap)
		return -EINVAL;
	td->sink.buf = buf;
	td->sink.cap = cap;
	td->sink.used = 0;
	td->sink.dropped = 0;
	td_end_key_refresh(td);
	return 0;
}

int td_records_detach(struct td *td, size_t *count, uint64_t *dropped)
{
	if (!td)
		return -EINVAL;
	if (!td->sink.buf)
		return -ENOENT;
	if (count)
		*count = td->sink.used;
	if (dropped)
		*dropped = td->sink.dropped;
	td->sink.buf = NULL;
	td->sink.cap = td->sink.used = 0;
	td->sink.dropped = 0;
	td_end_key_refresh(td);
	return 0;
}

/* What fill_result (region.c) does to a region it cannot trust. */
void td_record_mark_unreliable(struct td_result *res)
{
	memset(res->l1, 0, sizeof(res->l1));
	memset(res->l2, 0, sizeof(res->l2));
	res->smt_contention = 0;
	res->err = 1;
	res->flags |= TD_RESULT_UNRELIABLE;
	res->flags &= ~(TD_RESULT_L2 | TD_RESULT_L2_FE_BE);
}

int td_record_decode(const struct td_record *rec, struct td_result *res)
{
	struct td_delta d;

	if (!rec || !res)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)rec->slots;
	memcpy(d.cat, rec->cat, sizeof(rec->cat));
	d.qerr = rec->qerr;
	td_decode_src(&d, rec->flags & TD_RESULT_L2, rec->flags, res);
	res->resets = rec->resets;
	res->flags |= rec->flags & (TD_RESULT_READ_PATH | TD_RESULT_CYCLES |
				    TD_RESULT_MULTIPLEXED);
	if (rec->flags & TD_RESULT_UNRELIABLE)
		td_record_mark_unreliable(res);
	return 0;
}

/* One reading as category slots x 255, as pm_reading.c counts them. */
static void counts_of(uint64_t slots, uint64_t metrics, unsigned nr,
		      int64_t cat[TD_NR_METRICS])
{
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		cat[i] = i < nr ? (int64_t)(((metrics >> (8 * i)) & 0xff) *
					    slots)
				: 0;
}

int td_decode_readings(uint64_t slots0, uint64_t metrics0, uint64_t slots1,
		       uint64_t metrics1, unsigned levels,
		       struct td_result *res)
{
	unsigned nr = levels == 2 ? TD_NR_METRICS : TD_NR_L1;
	int64_t c0[TD_NR_METRICS], c1[TD_NR_METRICS];
	struct td_delta d;

	if (!res || (levels != 1 && levels != 2))
		return -EINVAL;
	slots0 &= TD_SLOTS_MASK;
	slots1 &= TD_SLOTS_MASK;
	if (slots1 < slots0)
		return -ERANGE;
	counts_of(slots0, metrics0, nr, c0);
	counts_of(slots1, metrics1, nr, c1);
	d.slots = (int64_t)(slots1 - slots0);
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d.cat[i] = c1[i] - c0[i];
	d.cat[TD_M_SMT] = 0;
	d.qerr = slots0 + slots1;
	td_decode(&d, levels == 2, res);
	res->resets = 0;
	return 0;
}
