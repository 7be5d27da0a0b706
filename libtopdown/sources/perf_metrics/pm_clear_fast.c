/* SPDX-License-Identifier: MIT */
/*
 * Metrics-clear mode's fast path (the PERF_METRICS source's fast_begin
 * and fast_end, source.h): every user RDPMC of the trigger register
 * zeroes SLOTS and PERF_METRICS (tools/perf/Documentation/topdown.txt;
 * the kernel sets the clear bit of fixed counter 3 for a slots event
 * whose config1 asks for it, arch/x86/events/intel/core.c
 * intel_pmu_enable_fixed, and saves and restores both registers at
 * context switches with ring-0 accesses, which do not clear:
 * intel_update_topdown_event, icl_set_topdown_event_period), so each
 * reading is the interval since the previous one.  What the slow path
 * (pm_reading.c clear_sample) does at such a reading, less what a page
 * unchanged since the last reading makes needless: the capability,
 * index and time loads (no schedule-in, so no restore to account for
 * and no descheduling to flag; the selectors are the ones the slow path
 * last read, which stand while the page's lock does) and the
 * comparison of the whole state to learn that it changed.  As in the
 * slow path's one pass, a page update during the reads does not void
 * them (the kernel restores what it saved), the counter lost does.
 *
 * A region's counts are the readings after its begin's, up to its
 * end's.  A begin keeps its reading raw (pending), to be folded by the
 * next reading, which usually is its region's end: an end that finds
 * its own begin's reading still pending knows that no reading came
 * between, so the region's delta is the end's reading alone, decoded as
 * it is (pm_decode.h, the integers td_pm_delta would give: fields x
 * SLOTS less nothing).  When that region is the handle's only open one
 * no region spans either reading (a later begin copies the state after
 * them), so neither is folded: the handle's state is left as it was,
 * and the region's next begin finds its copy of it still current (its
 * key) and makes none.  The counts the state holds are only ever used
 * as differences across open regions, and the policy's positions as
 * differences within one stretch of open regions, which both readings
 * end: leaving out a stretch's readings once it closes shifts neither.
 *
 * Until the trigger is known (the slow path's probe), on a page that
 * moved, or where the probe found no clearing after all, the slow path.
 */
#include "arch.h"
#include "barrier.h"
#include "begin_state.h"
#include "perf_metrics.h"
#include "pm_decode.h"
#include "source.h"

const char td_pm_pend_kept;

/* A reading into the handle's counts: as clear_sample folds one. */
static inline void fold_reading(struct td *td, uint64_t slots,
				uint64_t metrics)
{
	td_counts_add(&td->snap.base, slots, metrics);
	td->snap.qerr_base += slots; /* no restore since the last reading */
}

/*
 * A reading a fast begin kept raw (td_pm_of(td)->pm.pending): folded
 * now.  Before anything reads the handle's counts (td_pm_sample, the
 * next fast boundary), so that the begin's own fold stays out of the
 * region.  A new version of the state: regions' copies of the old one
 * are stale (their key).
 */
void td_pm_fold_pending(struct td *td)
{
	struct td_pm *pm = &td_pm_of(td)->pm;

	if (!pm->pending)
		return;
	pm->pending = NULL;
	fold_reading(td, pm->pend_slots, pm->pend_metrics);
	td_snap_new_version(td);
	if (pm->pend_alone) { /* td_policy_open's start, now known */
		pm->pend_alone = NULL;
		td->policy.open_since = td->snap.base.slots;
		td->policy.measured_less -= td->snap.base.slots;
	}
}

/*
 * The policy's count of open regions, taken by a begin before its reads
 * (td_policy_open's, but the stretch's start: td_pm_fold_pending sets it
 * where this begin opened the stretch, once its reading is folded, and
 * an end that folds neither reading needs none), and given back where
 * the begin goes the slow way after all, which opens it again.
 */
static inline __attribute__((always_inline)) void
policy_open_early(struct td *td, const struct td_region_priv *p)
{
	td_pm_of(td)->pm.pend_alone = ++td->policy.open_less1 == 0 ? p : NULL;
}

static inline __attribute__((always_inline)) void
policy_open_undo(struct td *td)
{
	td->policy.open_less1--;
	td_pm_of(td)->pm.pend_alone = NULL;
}

/*
 * The state in which the fast path may read: the trigger known (so
 * metrics-clear in effect: the probe leaves it unknown where it finds
 * no clearing), the page's lock as the last reading left it (no
 * schedule-in to judge, the selectors as last read), and, guarded, the
 * source's own check (pm.quiet_lock: the hybrid source's E-cores quiet,
 * one load and one compare).
 */
static inline __attribute__((always_inline)) bool
clear_go_at(const struct td *td, const struct perf_event_mmap_page *pc,
	    bool guarded)
{
	const struct td_pm *pm = &td_pm_of(td)->pm;

	if (guarded && td_load_once(*pm->quiet_lock) != pm->quiet_want)
		return false;
	return td_load_once(pc->lock) == td->last_lock;
}

static inline __attribute__((always_inline)) bool
clear_go(const struct td *td, bool guarded)
{
	return clear_go_at(td, td_pm_of(td)->slots_pc, guarded);
}

/* SLOTS, 48 bits wide (pm_decode.h): bits 32-47 from EDX. */
static inline __attribute__((always_inline)) uint64_t slots48(uint32_t sel)
{
	uint64_t lo, hi;

	td_rdpmc_halves(sel, &lo, &hi);
	return (hi << 48 >> 16) | lo;
}

/*
 * Both registers, the trigger last (the slow path's order, pm_reading.c
 * clear_mode_read), by the selectors the last reading used.  Guarded
 * (a source whose CPUs do not all have the fixed selectors: the hybrid
 * source's rseq guard), the trigger's RDPMC is the section's commit
 * (arch_x86.h td_rseq_read2_commit), so an abort comes before it ran,
 * nothing cleared, and the slow path reads the same interval.  False:
 * off those CPUs, or aborted, before the trigger's read.
 */
static inline __attribute__((always_inline)) bool
clear_read2(const struct td *td, bool guarded, bool by_metrics,
	    uint64_t *slots, uint64_t *metrics)
{
	const struct td_pm *pm = &td_pm_of(td)->pm;
	uint32_t first = by_metrics ? pm->clear_sel_slots : pm->clear_sel_metrics;
	uint32_t second = by_metrics ? pm->clear_sel_metrics : pm->clear_sel_slots;

	if (guarded) {
#if TD_HAVE_RSEQ_GUARD
		uint64_t a, lo, hi;

		if (TD_UNLIKELY(!td_rseq_read2_commit(
			    pm->guard.rseq, &pm->guard.cpus,
			    by_metrics ? &pm->clear_sel_slots
				       : &pm->clear_sel_metrics,
			    by_metrics ? &pm->clear_sel_metrics
				       : &pm->clear_sel_slots,
			    by_metrics, &a, &lo, &hi)))
			return false;
		if (by_metrics) {
			*slots = a;
			*metrics = (hi << 32) | lo;
		} else {
			*metrics = a;
			*slots = (hi << 48 >> 16) | lo; /* slots48's */
		}
		return true;
#else
		return false; /* no guard: never set up (hybrid_fast.c) */
#endif
	}
	if (by_metrics) {
		*slots = slots48(first);
		*metrics = td_rdpmc(second);
	} else {
		*metrics = td_rdpmc(first);
		*slots = slots48(second);
	}
	return true;
}

/*
 * The page moved since clear_go looked: a schedule-in came during the
 * reads (or the guard's retry after an abort read on another CPU), and
 * may have come before them, restoring registers that are not ours
 * (pm_reading.c clear_judge_restores), or the counter was lost (index
 * 0).  A reading already pending is folded; this one, taken, is kept
 * as a begin's is, with the error of a restore re-quantising its slots
 * (pm_reading.c restore_error), and the slow path, which folds it
 * first, judges the schedule-in at its own reading: the page's lock
 * left as last seen sends it there.  Cold: out of the fast path's line.
 */
static __attribute__((noinline, cold)) void
page_moved_keep(struct td *td, uint32_t lock, uint64_t slots,
		uint64_t metrics)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	uint32_t restores = td_pm_restores(td->last_lock, lock);

	td_pm_fold_pending(td);
	td->snap.qerr_base += (uint64_t)restores * slots;
	pm->pend_slots = slots;
	pm->pend_metrics = metrics;
	pm->pending = TD_PM_PEND_KEPT;
	td_snap_new_version(td);
}

/* A begin or end whose page moved: the reading kept, the slow path. */
static __attribute__((noinline, cold)) int
begin_page_moved(struct td *td, struct td_region_priv *p, uint32_t lock,
		 uint64_t slots, uint64_t metrics)
{
	policy_open_undo(td);
	td_pm_of(td)->pm.pending = NULL; /* begin_read's, before its reads */
	page_moved_keep(td, lock, slots, metrics);
	return td_slow_begin(td, p);
}

/* A guarded begin off the CPUs having the selectors: nothing read. */
static __attribute__((noinline, cold)) int
begin_unread(struct td *td, struct td_region_priv *p)
{
	policy_open_undo(td);
	td_pm_of(td)->pm.pending = NULL; /* begin_read's, before its reads */
	return td_slow_begin(td, p);
}

/*
 * The region's copy of the handle's state: the counts its delta takes
 * (td_pm_delta: SLOTS and the eight categories; the PERF_METRICS
 * source's others are never counted where this path runs, TD_OPT_MEMORY
 * taking the general route), the reset and untrusted-event counts its
 * end compares; the error scale is the begin's to set.  Guarded (the
 * hybrid source, whose E-core counts follow), all of it.
 */
static inline __attribute__((always_inline)) void
copy_state(struct td *td, struct td_region_priv *p, bool guarded)
{
	if (guarded) {
		p->snap = td->snap;
		return;
	}
	_Static_assert(offsetof(struct td_counts, cat) ==
			       offsetof(struct td_counts, slots) + 8,
		       "slots, then the categories");
	memcpy(&p->snap.base, &td->snap.base,
	       offsetof(struct td_counts, cat[TD_NR_METRICS]));
	p->snap.resets = td->snap.resets;
	p->snap.untrusted = td->snap.untrusted;
}

static __attribute__((noinline, cold)) int
end_page_moved(struct td *td, struct td_region_priv *p, struct td_result *res,
	       uint32_t lock, uint64_t slots, uint64_t metrics)
{
	page_moved_keep(td, lock, slots, metrics);
	return td_slow_end_read(td, p, res);
}

/*
 * The begin folds a reading still pending (a nested begin's), copies
 * the handle's state unless its copy is current (its key: the state's
 * version when it was made), reads last, and keeps the reading raw:
 * the region's counts are the copy's plus the reading (region_slow.c
 * region_delta adds p->slots and p->raw), and the handle folds it later
 * (td_pm_fold_pending), or never (clear_fast_end).  The error scale: a
 * region's is the readings' since its begin, not its begin's own (the
 * slow path copies the state after folding it), and region_delta adds
 * p->slots back, hence the copy's scale plus twice the slots.
 */
static inline __attribute__((always_inline)) int
begin_read(struct td *td, struct td_region_priv *p, bool guarded,
	   bool by_metrics)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	uint64_t slots, metrics, qerr, key = td->epoch_hi;
	const struct perf_event_mmap_page *pc;
	uint32_t lock;

	if (TD_UNLIKELY(p->key != key)) {
		copy_state(td, p, guarded);
		p->key = key;
	}
	qerr = td->snap.qerr_base;
	p->owner = td;
	policy_open_early(td, p);
	/*
	 * Whatever does not need the reading, before the reads: the
	 * pending reading's owner (its value comes after them; the
	 * routes that leave without one put NULL back), and the page's
	 * address in a register (the empty asm), so that after the last
	 * read the check is a load and a compare
	 */
	pm->pending = p;
	pc = td_pm_of(td)->slots_pc;
	__asm__("" : "+r"(pc));
	td_compiler_barrier(); /* the copy before the reads */
	if (TD_UNLIKELY(!clear_read2(td, guarded, by_metrics, &slots,
				     &metrics)))
		return begin_unread(td, p);
	td_compiler_barrier();
	lock = td_load_once(pc->lock); /* the page's lock after the reads */
	if (TD_UNLIKELY(lock != td->last_lock))
		return begin_page_moved(td, p, lock, slots, metrics);
	pm->pend_slots = slots;
	pm->pend_metrics = metrics;
	p->slots = slots;
	p->raw = metrics;
	p->snap.qerr_base = qerr + 2 * slots;
	return 0;
}

/*
 * A begin that finds a reading pending (a nested one's): folded, then
 * the reads.  Out of line, so that the fast path calls nothing but in
 * its tail (no registers to save).
 */
#define TD_BEGIN_NESTED(name, guarded, by_metrics)                       \
	static __attribute__((noinline)) int name(struct td *td,           \
						  struct td_region_priv *p) \
	{                                                                  \
		td_pm_fold_pending(td);                                    \
		return begin_read(td, p, guarded, by_metrics);             \
	}
TD_BEGIN_NESTED(begin_nested_by_metrics, false, true)
TD_BEGIN_NESTED(begin_nested_by_slots, false, false)
TD_BEGIN_NESTED(begin_nested_guarded_by_metrics, true, true)
TD_BEGIN_NESTED(begin_nested_guarded_by_slots, true, false)

static inline __attribute__((always_inline)) int
begin_nested(struct td *td, struct td_region_priv *p, bool guarded,
	     bool by_metrics)
{
	if (guarded)
		return by_metrics ? begin_nested_guarded_by_metrics(td, p)
				  : begin_nested_guarded_by_slots(td, p);
	return by_metrics ? begin_nested_by_metrics(td, p)
			  : begin_nested_by_slots(td, p);
}

static inline __attribute__((always_inline)) int
clear_fast_begin(struct td *td, struct td_region_priv *p, bool guarded,
		 bool by_metrics)
{
	if (TD_UNLIKELY(!clear_go(td, guarded)))
		return td_slow_begin(td, p);
	if (TD_UNLIKELY(td_pm_of(td)->pm.pending))
		return begin_nested(td, p, guarded, by_metrics);
	return begin_read(td, p, guarded, by_metrics);
}

/* Readings too large for the exact doubles of pm_decode.h: integers. */
static __attribute__((noinline)) void end_decode_wide(const struct td *td,
						      uint64_t slots,
						      uint64_t metrics,
						      bool l2,
						      struct td_result *res)
{
	bool ok = td_decode_readings_scalar(0, 0, slots, metrics, l2, res);

	res->resets = 0;
	res->flags |= td_pm_of(td)->pm.uop.fe_flag;
	if (!ok)
		td_record_mark_unreliable(res);
}

/*
 * The result of a region whose counts are the end's reading alone:
 * what the general route's delta (td_pm_delta: fields x SLOTS at end
 * less the begin's, which cancel) and decode give, bit for bit
 * (pm_decode.h td_decode_readings_end against td_decode_inline; the
 * error scale the end's SLOTS, as region_delta's).  Nothing changed the
 * handle's state since the begin: no reset, no untrusted event.
 */
static __attribute__((noinline)) int end_alone_result(const struct td *td,
						      uint64_t slots,
						      uint64_t metrics,
						      struct td_result *res)
{
	static const uint64_t none;
	bool l2 = td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;
	unsigned fe = td_pm_of(td)->pm.uop.fe_flag;

	if (TD_UNLIKELY(!td_decode_readings_exact(UINT64_C(0), slots))) {
		end_decode_wide(td, slots, metrics, l2, res);
		return 0;
	}
	if (TD_LIKELY(l2)) {
		if (TD_UNLIKELY(!td_decode_readings_end(0, &none, slots,
							metrics, true, false,
							0, fe, res)))
			td_record_mark_unreliable(res);
		return 0;
	}
	if (!td_decode_readings_end(0, &none, slots, metrics, false, false, 0,
				    fe, res))
		td_record_mark_unreliable(res);
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

/*
 * Any other end that read: the pending reading and this one folded,
 * then the length (nothing asked of the end) or the general route.
 */
static __attribute__((noinline)) int end_folded(struct td *td,
						struct td_region_priv *p,
						struct td_result *res,
						uint64_t slots,
						uint64_t metrics)
{
	td_pm_fold_pending(td);
	fold_reading(td, slots, metrics);
	td_snap_new_version(td);
	if (res || (td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED)))
		return end_sampled(td, p, res);
	/* nothing to return or record: the length, as finish_end */
	if (!(p->snap.resets & TD_BEGIN_UNREAD))
		td_learn_length(td, p, td->snap.base.slots -
				(p->snap.base.slots + p->slots));
	td_policy_close(&td->policy, td->snap.base.slots);
	p->owner = NULL;
	return 0;
}

/*
 * The end of the only region open, no reading since its begin's: the
 * reading its begin kept is dropped with the end's (the file's head),
 * the length learnt (the end's SLOTS: the general route's folded SLOTS
 * less the begin's, both readings' slots in the first) and the stretch
 * closed (td_policy_close: the measured slots grow by the region's,
 * from the begin's reading to the end's).
 */
static inline __attribute__((always_inline)) void
end_alone_close(struct td *td, struct td_region_priv *p, uint64_t slots)
{
	struct td_pm *pm = &td_pm_of(td)->pm;

	pm->pending = NULL;
	pm->pend_alone = NULL;
	td_learn_length(td, p, slots);
	td->policy.open_less1 = -1; /* none open: measured_less is measured */
	td->policy.measured_less += slots;
	p->owner = NULL;
}

/*
 * The same end with records attached and nothing else asked: a record
 * of readings (internal.h TD_RECORD_READINGS), the begin's (0, 0) and
 * this one, which finishing it (pm_record.c finish_readings) turns
 * into the counts the general route's record has: the delta
 * td_pm_delta takes, the end's SLOTS as its error scale, no reset, not
 * flagged but by its own consistency.  A full buffer counts it dropped,
 * as td_sink_put does.
 */
static __attribute__((noinline)) int end_alone_record(struct td *td,
						      struct td_region_priv *p,
						      uint64_t slots,
						      uint64_t metrics)
{
	struct td_sink *k = &td->sink;
	struct td_record *rec;

	end_alone_close(td, p, slots);
	rec = k->next;
	if (TD_UNLIKELY(rec == k->end)) {
		k->dropped++;
		return 0;
	}
	k->next = rec + 1;
	rec->slots = slots;
	rec->qerr = 0; /* the begin's SLOTS and PERF_METRICS: none */
	rec->cat[0] = 0;
	rec->cat[1] = (int64_t)metrics;
	rec->flags = k->readings_flags | td_pm_of(td)->pm.uop.fe_flag;
	rec->reserved[0] = (uintptr_t)&td_pm_readings_finisher;
	return 0;
}

/*
 * An end whose page's lock after the reads is not end_key: the page
 * moved, or records to write (end_key is the last lock with the sink's
 * bits, TD_END_KEY_NAMED where a named region ends: internal.h
 * td_end_key_refresh).
 */
static __attribute__((noinline)) int end_keyed(struct td *td,
					       struct td_region_priv *p,
					       struct td_result *res,
					       uint32_t lock, uint64_t slots,
					       uint64_t metrics)
{
	if (lock != td->last_lock)
		return end_page_moved(td, p, res, lock, slots, metrics);
	if ((lock | TD_END_KEY_SINK) == td->end_key && !res &&
	    td_pm_of(td)->pm.pend_alone == p)
		return end_alone_record(td, p, slots, metrics);
	return end_folded(td, p, res, slots, metrics);
}

/*
 * The end: the page's lock before the reads (no clearing read while a
 * schedule-in since the last reading may have given the registers to
 * another context), the reads, the lock again.  The region's begin
 * reading still pending, no other region open (pm.pend_alone), nothing
 * asked but a result or a record of readings (end_keyed): its counts
 * are this reading alone and nothing is folded (the file's head,
 * end_alone_close).
 */
static inline __attribute__((always_inline)) int
clear_fast_end(struct td *td, struct td_region_priv *p, struct td_result *res,
	       bool guarded, bool by_metrics)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	const struct perf_event_mmap_page *pc = td_pm_of(td)->slots_pc;
	uint64_t slots, metrics;
	uint32_t lock;

	/* the page's address kept in a register for the lock after */
	if (TD_UNLIKELY(!clear_go_at(td, pc, guarded) ||
			!clear_read2(td, guarded, by_metrics, &slots,
				     &metrics)))
		return td_slow_end_read(td, p, res); /* it folds what is kept */
	td_compiler_barrier();
	lock = td_load_once(pc->lock); /* the page's lock after the reads */
	if (TD_UNLIKELY(lock != td->end_key))
		return end_keyed(td, p, res, lock, slots, metrics);
	if (TD_UNLIKELY(pm->pend_alone != p))
		return end_folded(td, p, res, slots, metrics);
	end_alone_close(td, p, slots);
	if (res)
		return end_alone_result(td, slots, metrics, res);
	return 0;
}

/*
 * Each trigger's copy of the fast path, the order of its reads a
 * constant: the entries this thread's fast handle takes once the slow
 * path's probe learnt the trigger (choose_copy), so that they test
 * nothing of it.  The end's is the end entry (source.h fast_end_first),
 * which checks the region before its reads: a clearing read for a
 * region that is not the handle's would take that interval from the
 * region that is.
 */
#define TD_CLEAR_COPY(name, guarded, by_metrics)                           \
	static int name##_begin(struct td *td, struct td_region_priv *p)   \
	{                                                                  \
		return clear_fast_begin(td, p, guarded, by_metrics);       \
	}                                                                  \
	static int name##_end(struct td *td, struct td_region *r,          \
			      struct td_result *res)                       \
	{                                                                  \
		if (TD_UNLIKELY(!r || priv(r)->owner != td))               \
			return td_end_checked(td, r, res);                 \
		return clear_fast_end(td, priv(r), res, guarded,           \
				      by_metrics);                         \
	}
TD_CLEAR_COPY(by_metrics, false, true)
TD_CLEAR_COPY(by_slots, false, false)
TD_CLEAR_COPY(guarded_by_metrics, true, true)
TD_CLEAR_COPY(guarded_by_slots, true, false)

/*
 * The trigger known: the handle's entries (struct td src_begin and
 * end_entry, which the entry points take for this thread's fast handle)
 * go to its copy from the next begin or end on.
 */
static inline __attribute__((always_inline)) void
choose_copy(struct td *td, bool guarded, bool by_metrics)
{
	if (guarded) {
		td->src_begin = by_metrics ? guarded_by_metrics_begin
					   : guarded_by_slots_begin;
		td->end_entry = by_metrics ? guarded_by_metrics_end
					   : guarded_by_slots_end;
	} else {
		td->src_begin = by_metrics ? by_metrics_begin : by_slots_begin;
		td->end_entry = by_metrics ? by_metrics_end : by_slots_end;
	}
}

/*
 * The entry points the handle starts with (and the general route's:
 * source.h fast_begin, fast_end): the trigger learnt by the slow path's
 * probe picks the order of the reads, and the begin points the handle's
 * entries at that order's copy; the rarer order and the probe out of
 * line, so that the usual one tests the trigger with one compare.  Until
 * it is learnt (or where the probe found no clearing), the slow path.
 */
static __attribute__((noinline)) int begin_other(struct td *td,
						 struct td_region_priv *p,
						 bool guarded)
{
	if (td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_SLOTS) {
		choose_copy(td, guarded, false);
		return guarded ? clear_fast_begin(td, p, true, false)
			       : clear_fast_begin(td, p, false, false);
	}
	if (!td_pm_of(td)->pm.clear_mode)
		td->src_fast = false; /* the probe found no clearing: for good */
	return td_slow_begin(td, p); /* the probe to run */
}

static __attribute__((noinline)) int end_other(struct td *td,
					       struct td_region_priv *p,
					       struct td_result *res,
					       bool guarded)
{
	if (td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_SLOTS)
		return guarded ? clear_fast_end(td, p, res, true, false)
			       : clear_fast_end(td, p, res, false, false);
	return td_slow_end_read(td, p, res);
}

int td_pm_clear_fast_begin(struct td *td, struct td_region_priv *p)
{
	if (TD_LIKELY(td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS)) {
		choose_copy(td, false, true);
		return clear_fast_begin(td, p, false, true);
	}
	return begin_other(td, p, false);
}

int td_pm_clear_fast_end(struct td *td, struct td_region_priv *p,
			 struct td_result *res)
{
	if (TD_LIKELY(td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS))
		return clear_fast_end(td, p, res, false, true);
	return end_other(td, p, res, false);
}

/*
 * The same with the reads inside the guard of a source whose CPUs do not
 * all have the fixed selectors (pm.guard.rseq), and its check that a
 * reading may be taken (pm.quiet_lock): the hybrid source's.  The check
 * comes before the reads, the page's lock after them as unguarded: a
 * trip to another CPU between the two (outside the guard's section,
 * nothing aborts) switches cpu_core's group out and in, which moves that
 * lock.
 */
int td_pm_clear_guarded_fast_begin(struct td *td, struct td_region_priv *p)
{
	if (TD_LIKELY(td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS)) {
		choose_copy(td, true, true);
		return clear_fast_begin(td, p, true, true);
	}
	return begin_other(td, p, true);
}

int td_pm_clear_guarded_fast_end(struct td *td, struct td_region_priv *p,
				 struct td_result *res)
{
	if (TD_LIKELY(td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS))
		return clear_fast_end(td, p, res, true, true);
	return end_other(td, p, res, true);
}
