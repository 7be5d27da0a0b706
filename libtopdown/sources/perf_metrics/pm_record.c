/* SPDX-License-Identifier: MIT */
/*
 * Records of readings and raw readings of SLOTS and PERF_METRICS turned
 * into counts: what finishes the records the fast end writes
 * (pm_fast.c end_to_record), which output/record.c calls through the
 * record's finisher (internal.h struct td_record_finisher), and the
 * public td_decode_readings.
 */
#include <errno.h>
#include <string.h>

#include "perf_metrics.h"
#include "pm_decode.h"

/*
 * A record of readings as the counts of a finished record: the same
 * delta end_same_snap takes of the same two readings (with the same
 * moves of INT_MISC.UOP_DROPPING's share where TD_RECORD_UOP and of
 * INT_MISC.CLEARS_COUNT's where TD_RECORD_CLEARS), and the
 * same consistency test.
 */
static void finish_readings(const struct td_record_finisher *f,
			    struct td_record *rec)
{
	bool l2 = rec->flags & TD_RESULT_L2;
	unsigned fe = rec->flags & (TD_RESULT_FE_UNREFINED |
				    TD_RESULT_BE_UNREFINED);
	struct td_delta d;

	(void)f;
	td_readings_delta(rec->qerr, (uint64_t)rec->cat[0], rec->slots,
			  (uint64_t)rec->cat[1], &d);
	if (rec->flags & TD_RECORD_UOP)
		td_uop_move(&d, l2, rec->cat[2]);
	if (rec->flags & TD_RECORD_CLEARS)
		td_clears_move(&d, rec->cat[3]);
	rec->slots = d.slots > 0 ? (uint64_t)d.slots : 0;
	memcpy(rec->cat, d.cat, sizeof(rec->cat));
	if (!l2)
		memset(rec->cat + TD_NR_L1, 0,
		       (TD_NR_METRICS - TD_NR_L1) * sizeof(rec->cat[0]));
	rec->qerr = d.qerr;
	rec->flags = (l2 ? TD_RESULT_L2 : 0) | fe;
	if (!td_delta_consistent(&d, l2))
		rec->flags |= TD_RESULT_UNRELIABLE;
	rec->resets = 0;
	rec->name = NULL;
	memset(rec->reserved, 0, sizeof(rec->reserved));
}

/* Immutable, never freed: a copied record decodes after its handle. */
const struct td_record_finisher td_pm_readings_finisher = {
	finish_readings
};

int td_decode_readings(uint64_t slots0, uint64_t metrics0, uint64_t slots1,
		       uint64_t metrics1, unsigned levels,
		       struct td_result *res)
{
	struct td_delta d;

	if (!res || (levels != 1 && levels != 2))
		return -EINVAL;
	slots0 &= TD_SLOTS_MASK;
	slots1 &= TD_SLOTS_MASK;
	if (slots1 < slots0)
		return -ERANGE;
	td_readings_delta(slots0, metrics0, slots1, metrics1, &d);
	if (levels == 1) /* the level-2 bytes are not the CPU's */
		memset(d.cat + TD_NR_L1, 0,
		       (TD_NR_METRICS - TD_NR_L1) * sizeof(d.cat[0]));
	td_decode(&d, levels == 2, res);
	res->resets = 0;
	return 0;
}
