/* SPDX-License-Identifier: MIT */
/*
 * Metrics-clear mode's fast path (the PERF_METRICS source's fast_begin
 * and fast_end, source.h): every user RDPMC of the trigger register
 * zeroes SLOTS and PERF_METRICS (tools/perf/Documentation/topdown.txt),
 * so each reading is folded into the handle's counts at once and a
 * region keeps the counts, not a raw reading.  What the slow path
 * (pm_reading.c clear_sample) does at such a reading, less what a page
 * unchanged since the last reading makes needless: the capability and
 * time loads (no schedule-in, so no restore to account for and no
 * descheduling to flag) and the comparison of the whole state to learn
 * that it changed (it did: the reading was folded).  As in the slow
 * path's one pass, a page update during the reads does not void them
 * (the kernel restores what it saved), the counter lost does.
 *
 * Until the trigger is known (the slow path's probe), on a page that
 * moved, or where the probe found no clearing after all, the slow path.
 */
#include "arch.h"
#include "barrier.h"
#include "begin_state.h"
#include "perf_metrics.h"
#include "source.h"

/*
 * Both registers, the one that does not clear first, and folded into the
 * handle's counts; false (nothing read) where the slow path must read.
 */
static bool clear_fold(struct td *td)
{
	uint32_t sidx, midx;
	uint64_t slots, metrics;

	if (TD_UNLIKELY(!td->pm.clear_mode)) {
		td->src_fast = false; /* the probe found no clearing: for good */
		return false;
	}
	if (TD_UNLIKELY(td_load_once(td->slots_pc->lock) != td->last_lock))
		return false;
	td_compiler_barrier();
	sidx = td_load_once(td->slots_pc->index);
	midx = td_load_once(td->metric_pc->index);
	if (TD_UNLIKELY(!sidx || !midx))
		return false;
	if (td->pm.clear_trigger == TD_CLEAR_BY_METRICS) {
		slots = td_rdpmc(sidx - 1) & TD_SLOTS_MASK;
		metrics = td_rdpmc(midx - 1);
	} else if (td->pm.clear_trigger == TD_CLEAR_BY_SLOTS) {
		metrics = td_rdpmc(midx - 1);
		slots = td_rdpmc(sidx - 1) & TD_SLOTS_MASK;
	} else {
		return false; /* the probe has not run yet */
	}
	td_compiler_barrier();
	/*
	 * The counter lost between the reads (index 0) voids them, as in
	 * the slow path's pass, which then reads an unreadable group and
	 * flags the regions spanning it.
	 */
	if (TD_UNLIKELY(!td_load_once(td->slots_pc->index)))
		return false;
	td_counts_add(&td->snap.base, slots, metrics);
	td->snap.qerr_base += slots; /* no restore since the last reading */
	td_snap_new_version(td);
	return true;
}

int td_pm_clear_fast_begin(struct td *td, struct td_region_priv *p)
{
	if (!clear_fold(td))
		return td_slow_begin(td, p);
	/* as the slow path's store_begin keeps a folded reading */
	p->snap = td->snap;
	p->slots = 0;
	p->metrics = 0;
	p->key = 0;
	p->owner = td;
	return 0;
}

int td_pm_clear_fast_end(struct td *td, struct td_region_priv *p,
			 struct td_result *res)
{
	struct td_sample s;

	if (!clear_fold(td))
		return td_slow_end_read(td, p, res);
	if (!res && !(td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED))) {
		/* nothing to return or record: the length, as finish_end */
		if (!(p->snap.resets & TD_BEGIN_UNREAD))
			td_learn_length(td, p, td->snap.base.slots -
						       p->snap.base.slots);
		p->owner = NULL;
		return 0;
	}
	s.c = td->snap.base;
	s.raw_slots = 0;
	s.raw_metrics = 0;
	s.qerr_base = td->snap.qerr_base;
	s.qself = 0;
	s.unsched = td->last_unsched; /* the page unchanged: as last seen */
	s.valid = true;
	s.on_ecore = false;
	td_end_sampled(td, p, &s, res);
	return 0;
}
