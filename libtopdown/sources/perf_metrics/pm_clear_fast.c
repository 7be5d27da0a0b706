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
 * A reading a fast begin kept raw (td_pm_of(td)->pm.pending): folded now.  Before
 * anything reads the handle's counts (td_pm_sample, the next fast
 * boundary), so that the begin's own fold stays out of the region.
 */
void td_pm_fold_pending(struct td *td)
{
	if (!td_pm_of(td)->pm.pending)
		return;
	td_pm_of(td)->pm.pending = false;
	td_counts_add(&td->snap.base, td_pm_of(td)->pm.pend_slots, td_pm_of(td)->pm.pend_metrics);
	td->snap.qerr_base += td_pm_of(td)->pm.pend_slots; /* no restore since */
	td_snap_new_version(td);
}

/* What the fast path needs to read at all; else the slow path reads. */
static inline __attribute__((always_inline)) bool
clear_ready(struct td *td, uint32_t *sidx, uint32_t *midx)
{
	if (TD_UNLIKELY(!td_pm_of(td)->pm.clear_mode)) {
		td->src_fast = false; /* the probe found no clearing: for good */
		return false;
	}
	if (TD_UNLIKELY(td_load_once(td_pm_of(td)->slots_pc->lock) != td->last_lock ||
			td_pm_of(td)->pm.clear_trigger == TD_CLEAR_UNKNOWN))
		return false; /* a restore to count, or the probe to run */
	td_compiler_barrier();
	*sidx = td_load_once(td_pm_of(td)->slots_pc->index);
	*midx = td_load_once(td_pm_of(td)->metric_pc->index);
	return *sidx && *midx;
}

/*
 * The two reads inside the guard of a source whose CPUs do not all have
 * the fixed selectors (the hybrid source's rseq guard), the trigger last
 * as in the slow path's pass (pm_reading.c clear_pass_read): the guard's
 * second RDPMC is its commit instruction, so an abort comes before it
 * ran, nothing cleared, and the retry reads the same interval.  False:
 * off those CPUs, before any read.
 */
static inline __attribute__((always_inline)) bool
guarded_read2(const struct td *td, uint32_t sidx, uint32_t midx,
	      uint64_t *slots, uint64_t *metrics)
{
#if TD_HAVE_RSEQ_GUARD
	const struct td_pm *pm = &td_pm_of(td)->pm;
	bool by_metrics = pm->clear_trigger == TD_CLEAR_BY_METRICS;
	uint32_t first = by_metrics ? sidx : midx;
	uint32_t second = by_metrics ? midx : sidx;
	uint64_t a, b;
	enum td_guard g;

	do
		g = td_rdpmc_guarded(pm->guard.rseq, pm->guard.cpus,
				     pm->guard.nr_cpus, first - 1, second - 1,
				     &a, &b);
	while (TD_UNLIKELY(g == TD_GUARD_ABORTED));
	*slots = (by_metrics ? a : b) & TD_SLOTS_MASK;
	*metrics = by_metrics ? b : a;
	td_compiler_barrier();
	return g == TD_GUARD_OK &&
	       td_load_once(td_pm_of(td)->slots_pc->index) != 0;
#else
	(void)td, (void)sidx, (void)midx, (void)slots, (void)metrics;
	return false; /* no guard: never set up (hybrid_fast.c) */
#endif
}

/*
 * Both registers, the one that does not clear first; false when the
 * counter was lost between the reads (index 0), which voids them as in
 * the slow path's pass: it then reads an unreadable group and flags the
 * regions spanning it.
 */
static inline __attribute__((always_inline)) bool
clear_read2(const struct td *td, uint32_t sidx, uint32_t midx,
	    uint64_t *slots, uint64_t *metrics, bool guarded)
{
	if (guarded)
		return guarded_read2(td, sidx, midx, slots, metrics);
	if (td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS) {
		*slots = td_rdpmc(sidx - 1) & TD_SLOTS_MASK;
		*metrics = td_rdpmc(midx - 1);
	} else {
		*metrics = td_rdpmc(midx - 1);
		*slots = td_rdpmc(sidx - 1) & TD_SLOTS_MASK;
	}
	td_compiler_barrier();
	return td_load_once(td_pm_of(td)->slots_pc->index) != 0;
}

/*
 * A guarded reading taken that the source must fold itself
 * (clear_fast_stands): kept as a fast begin's is, so that the slow
 * path's reading, which comes next, folds it first (td_pm_fold_pending)
 * with the source's own.
 */
static inline __attribute__((always_inline)) bool
reading_stands(struct td *td, uint64_t slots, uint64_t metrics, bool guarded)
{
	if (!guarded || td_pm_of(td)->pm.clear_fast_stands(td))
		return true;
	td_pm_of(td)->pm.pend_slots = slots;
	td_pm_of(td)->pm.pend_metrics = metrics;
	td_pm_of(td)->pm.pending = true;
	return false;
}

/*
 * The page moved since clear_ready looked: a schedule-in came during the
 * reads (or the guard's retry after an abort read on another CPU), and
 * may have come before them, restoring registers that are not ours
 * (pm_reading.c clear_judge_restores).  The reading, taken, is kept as
 * a begin's is, with the error of a restore re-quantising its slots
 * (pm_reading.c restore_error), and the slow path, which folds it first,
 * judges the schedule-in at its own reading: the page's lock left as
 * last seen sends it there.  Cold: out of the fast path's line.
 */
static __attribute__((noinline, cold)) bool
page_moved_keep(struct td *td, uint32_t lock, uint64_t slots,
		uint64_t metrics)
{
	uint32_t restores = td_pm_restores(td->last_lock, lock);

	td->snap.qerr_base += (uint64_t)restores * slots;
	td_pm_of(td)->pm.pend_slots = slots;
	td_pm_of(td)->pm.pend_metrics = metrics;
	td_pm_of(td)->pm.pending = true;
	return false;
}

/*
 * Did the page stay as clear_ready saw it?  Else the reading is kept.
 * Guarded, the source's check that the reading stands looked already
 * (reading_stands: the hybrid source's clear_fast_stands).
 */
static inline __attribute__((always_inline)) bool
page_unmoved(struct td *td, uint64_t slots, uint64_t metrics, bool guarded)
{
	uint32_t lock;

	if (guarded)
		return true;
	td_compiler_barrier();
	lock = td_load_once(td_pm_of(td)->slots_pc->lock);
	if (TD_LIKELY(lock == td->last_lock))
		return true;
	return page_moved_keep(td, lock, slots, metrics);
}

/*
 * The begin copies the handle's state first, reads last, and keeps the
 * reading raw, as the fixed-selector path does: its counts are the copy's
 * plus the reading (region_slow.c region_delta adds p->slots and
 * p->raw), and the handle folds it later (td_pm_fold_pending).  The
 * error scale: a region's is the readings' since its begin, not its
 * begin's own (the slow path copies the state after folding it), and
 * region_delta adds p->slots back, hence twice the slots here.
 */
static inline __attribute__((always_inline)) int
clear_fast_begin(struct td *td, struct td_region_priv *p, bool guarded)
{
	uint32_t sidx, midx;
	uint64_t slots, metrics;

	if (!clear_ready(td, &sidx, &midx))
		return td_slow_begin(td, p);
	td_pm_fold_pending(td);
	p->snap = td->snap;
	p->key = 0;
	td_compiler_barrier(); /* the copy before the reads */
	if (TD_UNLIKELY(!clear_read2(td, sidx, midx, &slots, &metrics, guarded) ||
			!reading_stands(td, slots, metrics, guarded) ||
			!page_unmoved(td, slots, metrics, guarded)))
		return td_slow_begin(td, p);
	p->slots = slots;
	p->raw = metrics;
	p->snap.qerr_base += 2 * slots;
	td_pm_of(td)->pm.pend_slots = slots;
	td_pm_of(td)->pm.pend_metrics = metrics;
	td_pm_of(td)->pm.pending = true;
	p->owner = td;
	td_policy_open(&td->policy, p->snap.base.slots + slots);
	return 0;
}

/* An end with somewhere to send its numbers: the slow path's route. */
static __attribute__((noinline)) int end_sampled(struct td *td,
						 struct td_region_priv *p,
						 struct td_result *res)
{
	struct td_sample s;

	s.c = td->snap.base;
	s.raw_slots = 0;
	s.raw = 0;
	s.qerr_base = td->snap.qerr_base;
	s.qself = 0;
	s.aux = TD_AUX_NONE; /* no INT_MISC.UOP_DROPPING in this mode */
	s.aux2 = TD_AUX_NONE;
	s.unsched = td->last_unsched; /* the page unchanged: as last seen */
	s.valid = true;
	td_end_sampled(td, p, &s, res);
	return 0;
}

static inline __attribute__((always_inline)) int
clear_fast_end(struct td *td, struct td_region_priv *p, struct td_result *res,
	       bool guarded)
{
	uint32_t sidx, midx;
	uint64_t slots, metrics;

	if (!clear_ready(td, &sidx, &midx) ||
	    !clear_read2(td, sidx, midx, &slots, &metrics, guarded))
		return td_slow_end_read(td, p, res); /* it folds what is kept */
	if (TD_LIKELY(td_pm_of(td)->pm.pending)) /* the fast begin's, usually */
		td_pm_fold_pending(td);
	if (TD_UNLIKELY(!reading_stands(td, slots, metrics, guarded) ||
			!page_unmoved(td, slots, metrics, guarded)))
		return td_slow_end_read(td, p, res);
	td_counts_add(&td->snap.base, slots, metrics);
	td->snap.qerr_base += slots; /* no restore since the last reading */
	td_snap_new_version(td);
	if (!res && !(td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED))) {
		/* nothing to return or record: the length, as finish_end */
		if (!(p->snap.resets & TD_BEGIN_UNREAD))
			td_learn_length(td, p, td->snap.base.slots -
					(p->snap.base.slots + p->slots));
		td_policy_close(&td->policy, td->snap.base.slots);
		p->owner = NULL;
		return 0;
	}
	return end_sampled(td, p, res);
}

int td_pm_clear_fast_begin(struct td *td, struct td_region_priv *p)
{
	return clear_fast_begin(td, p, false);
}

int td_pm_clear_fast_end(struct td *td, struct td_region_priv *p,
			 struct td_result *res)
{
	return clear_fast_end(td, p, res, false);
}

/*
 * The same with the reads inside the guard of a source whose CPUs do not
 * all have the fixed selectors (pm.guarded_read), and its check that a
 * reading stands (pm.clear_fast_stands): the hybrid source's.
 */
int td_pm_clear_guarded_fast_begin(struct td *td, struct td_region_priv *p)
{
	return clear_fast_begin(td, p, true);
}

int td_pm_clear_guarded_fast_end(struct td *td, struct td_region_priv *p,
				 struct td_result *res)
{
	return clear_fast_end(td, p, res, true);
}
