/* SPDX-License-Identifier: MIT */
/*
 * The hybrid source's fast path: PERF_METRICS' begin and end (pm_fast.c)
 * with the reads inside rseq sections (arch_x86.h td_rseq_read48x,
 * td_rseq_read_halves, td_rseq_read3: the fixed selectors exist only on
 * P-cores) and one more check, that the E-core group did not run since
 * the slow path last looked at it.
 *
 * What the slow path would do at such a reading is nothing but keep the
 * raw SLOTS and PERF_METRICS: cpu_core's page unchanged (the region's key,
 * or the last lock at an end) means no schedule-in to account for, and
 * cpu_atom's page unchanged since its values were cached (hybrid.c
 * ecore_values_off) means the E-cores added nothing to fold: the handle's
 * folded state is the one the region copied.  A guard that finds the
 * thread on an E-core, a page that moved, SLOTS going backwards or a
 * reset due: the slow path.  An end goes on as PERF_METRICS' fast end
 * does with its two readings (pm_fast.c td_pm_end_reading): a region that
 * ran on P-cores only, nothing folded since its begin, is theirs alone.
 */
#include "arch.h"
#include "barrier.h"
#include "begin_state.h"
#include "counter_group.h"
#include "hybrid.h"
#include "perf_metrics.h"
#include "source.h"

#if TD_HAVE_RSEQ_GUARD
/*
 * The E-core group has not run since its values were cached (hybrid.h
 * td_hybrid_quiet_update: td_hybrid_ecore_cached in one load and one
 * compare).
 */
static inline bool ecore_quiet(const struct td_pm *pm)
{
	return td_load_once(*pm->quiet_lock) == pm->quiet_want;
}

/*
 * The fixed selectors (arch/x86/include/asm/perf_event.h:
 * INTEL_PMC_FIXED_RDPMC_BASE | 3, SLOTS being fixed counter 3 on every
 * P-core, and INTEL_PMC_FIXED_RDPMC_METRICS), which the kernel publishes
 * + 1 as the user pages' index while the group is scheduled in.  The
 * fast path reads by these constants, not by the pages' indices: on a
 * P-core both registers exist (no #GP whatever the group's state), and a
 * reading stands only where the page's lock, checked after the reads,
 * is one under which the index was these (selectors_hold).
 */
#define TD_RDPMC_SLOTS   ((1u << 30) | 3)
#define TD_RDPMC_METRICS (1u << 29)

/*
 * The pages name the fixed selectors: the group is scheduled in on this
 * P-core (index 0 otherwise, the registers another context's).  Loaded
 * before the lock the caller compares next (a seqlock's order: the
 * kernel writes index only under a new lock, perf_event_update_userpage).
 */
static inline __attribute__((always_inline)) bool
selectors_hold(const struct td_pm_handle *h)
{
	return td_load_once(h->slots_pc->index) == TD_RDPMC_SLOTS + 1 &&
	       td_load_once(h->metric_pc->index) == TD_RDPMC_METRICS + 1;
}

/*
 * INT_MISC.UOP_DROPPING (pm_uop.c), where the handle counts it (uop: a
 * constant of each copy of the fast path, chosen at open:
 * hybrid_source.c), is read in the same section as the fixed counters:
 * an E-core may have fewer general-purpose counters than the selector a
 * P-core gave the event (RDPMC of a counter it lacks: #GP).  Its
 * selector is the one the slow path last read, which stands while
 * SLOTS' page is as it saw it.
 */

/*
 * A begin whose PERF_METRICS reading failed after the region was opened
 * on SLOTS': the stretch of open regions as it was (td_policy_open's
 * inverse), then the slow path.
 */
static __attribute__((noinline, cold)) int
begin_undo(struct td *td, struct td_region_priv *p)
{
	if (td->policy.open_less1-- == 0)
		td->policy.measured_less += p->slots + p->snap.base.slots;
	return td_slow_begin(td, p);
}

/*
 * The begin in two rseq sections, so that only PERF_METRICS' read is
 * left for the last, as PERF_METRICS' own begin leaves it (pm_fast.c
 * td_region_begin): SLOTS (and the drop's counter) in the first, the
 * checks and the region's state between, PERF_METRICS alone in the
 * second.  The key and the E-cores are checked before the first; the
 * page's lock once more after the second: the thread may be preempted
 * before either section or between them (outside them, nothing aborts),
 * moved to an E-core and back, so that a reading would follow a stint
 * the handle's state does not hold yet; cpu_core's page records the trip
 * (its schedule-out and -in), and the selectors' check between the
 * sections, under the lock compared last, says the constant selectors
 * were the group's.  The handle's last readings are stored only then,
 * for the slow path judges a foreign reset by them.
 */
static inline __attribute__((always_inline)) int
fast_begin(struct td *td, struct td_region_priv *p, bool uop)
{
	struct td_pm_handle *h = td_pm_of(td);
	const struct td_hybrid *hy = td_hybrid_of(td);
	const struct perf_event_mmap_page *pc = h->slots_pc;
	uint64_t slots, aux = 0;
	uint32_t lo, hi;

	if ((td_load_once(pc->lock) | td->epoch_hi) != p->key ||
	    !ecore_quiet(&h->pm) ||
	    !td_rseq_read48x(hy->rseq, &hy->pcores, TD_RDPMC_SLOTS,
			     uop, &h->pm.uop.sel, &slots, &aux) ||
	    !selectors_hold(h) || td_reset_may_be_due(td, p, slots) ||
	    slots < h->last_raw_slots)
		return td_slow_begin(td, p);
	p->aux = uop ? aux + h->pm.uop.offset : 0;
	p->slots = slots;
	p->owner = td;
	td_policy_open(&td->policy, slots + p->snap.base.slots);
	if (TD_UNLIKELY(!td_rseq_read_halves(hy->rseq, &hy->pcores,
					     TD_RDPMC_METRICS, &lo, &hi)))
		return begin_undo(td, p);
	td_pm_store_halves(&p->raw, lo, hi);
	if (TD_UNLIKELY(td_load_once(pc->lock) != (uint32_t)p->key))
		return begin_undo(td, p);
	h->last_raw_slots = slots;
	/* a pair: a foreign reset folds it; one store, unmerged */
	td_store_once(h->last_pair_slots, slots);
	h->last_raw_metrics_half[0] = lo;
	h->last_raw_metrics_half[1] = hi;
	return 0;
}

/*
 * The end's checks once the three registers are read (the page as last
 * seen, with the selectors; the E-cores quiet; SLOTS not backwards),
 * then the PERF_METRICS end with the readings.
 */
static inline __attribute__((always_inline)) int
end_read(struct td *td, struct td_region_priv *p, struct td_result *res,
	 bool uop, uint64_t slots, uint64_t metrics, uint64_t aux)
{
	struct td_pm_handle *h = td_pm_of(td);

	if (!selectors_hold(h) ||
	    td_load_once(h->slots_pc->lock) != td->last_lock ||
	    !ecore_quiet(&h->pm) || slots < h->last_raw_slots)
		return td_slow_end_read(td, p, res);
	if (uop)
		aux += h->pm.uop.offset;
	if (res)
		return td_pm_end_reading_result(td, p, res, slots, metrics,
						aux);
	return td_pm_end_reading(td, p, res, slots, metrics, aux);
}

/* The three registers in one section, by the constant selectors. */
static inline __attribute__((always_inline)) bool
end_read3(struct td *td, bool uop, uint64_t *slots, uint64_t *metrics,
	  uint64_t *aux)
{
	const struct td_hybrid *hy = td_hybrid_of(td);

	return td_rseq_read3(hy->rseq, &hy->pcores, TD_RDPMC_SLOTS,
			     TD_RDPMC_METRICS, uop, &td_pm_of(td)->pm.uop.sel,
			     slots, metrics, aux);
}

/*
 * The end of a region the general route checked: the reads first, so
 * that nothing but the section's CPU check comes before them.
 */
static inline __attribute__((always_inline)) int
fast_end(struct td *td, struct td_region_priv *p, struct td_result *res,
	 bool uop)
{
	uint64_t slots, metrics, aux = 0;

	if (!end_read3(td, uop, &slots, &metrics, &aux))
		return td_slow_end_read(td, p, res);
	return end_read(td, p, res, uop, slots, metrics, aux);
}

/*
 * The end entry of this thread's fast handle (source.h fast_end_first):
 * the reads before the region is checked too, so that its checks are
 * not charged to the region; a region that is not this handle's open
 * one (NULL, not begun, another handle's) discards the reading for the
 * checks' answer (td_end_checked), as does a thread off the P-cores
 * (the checks, then the end above).
 */
static inline __attribute__((always_inline)) int
fast_end_first(struct td *td, struct td_region *r, struct td_result *res,
	       bool uop)
{
	uint64_t slots, metrics, aux = 0;

	if (!end_read3(td, uop, &slots, &metrics, &aux) || !r ||
	    priv(r)->owner != td)
		return td_end_checked(td, r, res);
	return end_read(td, priv(r), res, uop, slots, metrics, aux);
}

/* The copies: without INT_MISC.UOP_DROPPING, and with it. */
int td_hybrid_fast_begin(struct td *td, struct td_region_priv *p)
{
	return fast_begin(td, p, false);
}

int td_hybrid_fast_end(struct td *td, struct td_region_priv *p,
		       struct td_result *res)
{
	return fast_end(td, p, res, false);
}

int td_hybrid_fast_begin_uop(struct td *td, struct td_region_priv *p)
{
	return fast_begin(td, p, true);
}

int td_hybrid_fast_end_uop(struct td *td, struct td_region_priv *p,
			   struct td_result *res)
{
	return fast_end(td, p, res, true);
}

int td_hybrid_fast_end_first(struct td *td, struct td_region *r,
			     struct td_result *res)
{
	return fast_end_first(td, r, res, false);
}

int td_hybrid_fast_end_first_uop(struct td *td, struct td_region *r,
				 struct td_result *res)
{
	return fast_end_first(td, r, res, true);
}

/* The guard in place (an rseq area and the P-cores' list), RDPMC. */
static bool guard_armed(const struct td *td)
{
	return td->path == TD_PATH_RDPMC && td_hybrid_of(td)->rseq &&
	       td_hybrid_of(td)->pcores;
}

/*
 * The source's ready operation: the guard armed, counters that keep
 * counting across reads (not metrics-clear mode), the copy of the fast
 * path for them, and a policy that does not reset at every begin.
 */
void td_hybrid_fast_setup(struct td *td)
{
	const struct td_gen *e = td_hybrid_of(td)->ecore;
	bool uop = td_pm_of(td)->pm.uop.on;

	td_hybrid_quiet_update(td);
	td->src_fast = guard_armed(td) && !td_pm_of(td)->pm.clear_mode &&
		       /* the copy that reads the counters the handle has */
		       td->src->fast_end == (uop ? td_hybrid_fast_end_uop
						 : td_hybrid_fast_end) &&
		       !td_pm_of(td)->pm.mem.on && /* its reads: general route */
		       !(e && e->mux[0]) && /* E level 2: read(2) (hybrid.c) */
		       td->policy.kind != TD_RESET_ALWAYS;
}

/*
 * The same in metrics-clear mode (td_source_hybrid_clear): its fast
 * path is PERF_METRICS' in that mode with the reads inside the guard
 * (pm_clear_fast.c td_pm_clear_guarded_fast_begin), a reading standing
 * where cpu_core's page is as last seen and the E-cores quiet (struct
 * td_pm quiet_lock, kept here), as above; else the slow path folds it
 * with the E-cores' counts.  The guard armed.
 */
void td_hybrid_clear_fast_setup(struct td *td)
{
	td_hybrid_quiet_update(td);
	td->src_fast = guard_armed(td) && td_pm_of(td)->pm.clear_mode;
}
#else
int td_hybrid_fast_begin(struct td *td, struct td_region_priv *p)
{
	return td_slow_begin(td, p);
}

int td_hybrid_fast_end(struct td *td, struct td_region_priv *p,
		       struct td_result *res)
{
	return td_slow_end_read(td, p, res);
}

int td_hybrid_fast_begin_uop(struct td *td, struct td_region_priv *p)
{
	return td_slow_begin(td, p);
}

int td_hybrid_fast_end_uop(struct td *td, struct td_region_priv *p,
			   struct td_result *res)
{
	return td_slow_end_read(td, p, res);
}

int td_hybrid_fast_end_first(struct td *td, struct td_region *r,
			     struct td_result *res)
{
	return td_end_checked(td, r, res);
}

int td_hybrid_fast_end_first_uop(struct td *td, struct td_region *r,
				 struct td_result *res)
{
	return td_end_checked(td, r, res);
}

void td_hybrid_fast_setup(struct td *td)
{
	(void)td; /* no guard: the slow path */
}

void td_hybrid_clear_fast_setup(struct td *td)
{
	(void)td;
}
#endif
