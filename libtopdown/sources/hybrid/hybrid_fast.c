/* SPDX-License-Identifier: MIT */
/*
 * The hybrid source's fast path: PERF_METRICS' begin and end (pm_fast.c)
 * with the reads inside the rseq guard (arch_x86.h td_rdpmc_guarded and
 * td_rdpmc_guarded3: the fixed selectors exist only on P-cores) and one
 * more check, that the E-core group did not run since the slow path last
 * looked at it.
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
/* The E-core group has not run since its values were cached. */
static inline bool ecore_quiet(const struct td_hybrid *h)
{
	const struct td_gen *g = h->ecore;

	return !g || td_hybrid_ecore_cached(g, td_load_once(g->pc[0]->lock));
}

/*
 * Both registers on a P-core, or false, and INT_MISC.UOP_DROPPING's count
 * (pm_uop.c) where the handle counts it: the three in one rseq section
 * (arch_x86.h td_rdpmc_guarded3), the ordinary counter guarded as the
 * fixed ones are, for an E-core may have fewer general-purpose counters
 * than the selector a P-core gave it (RDPMC of a counter it lacks: #GP).
 * The selectors are the pages'; index 0 (cpu_core's group not scheduled:
 * on an E-core, or switched out on a P-core) gives up at once, as the
 * slow path's read does (pm_reading.c rdpmc_read): on a P-core the guard
 * would let RDPMC of selector 0xffffffff through, a #GP.  A selector the
 * page named a moment ago names the same fixed counter still (foreign
 * values at worst, which the caller's lock check after the read
 * refuses); the count's selector is the one the slow path last read,
 * which stands while SLOTS' page is as it saw it (the same check).  An
 * abort (the thread preempted or moved inside the section) gives up to
 * the slow path, which retries.  aux is left as it is (0) where the
 * handle does not count the drop.  Inlined: a call would take the
 * outputs through memory, on the fast path, twice.
 */
static inline __attribute__((always_inline)) bool
guarded_read(const struct td *td, uint64_t *slots, uint64_t *metrics,
	     uint64_t *aux)
{
	const struct td_hybrid *h = td_hybrid_of(td);
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint32_t sidx = td_load_once(td_pm_of(td)->slots_pc->index);
	uint32_t midx = td_load_once(td_pm_of(td)->metric_pc->index);
	enum td_guard g;

	if (TD_UNLIKELY(!sidx || !midx))
		return false;
	if (u->on) {
		g = td_rdpmc_guarded3(h->rseq, h->pcores, h->nr_cpus, sidx - 1,
				      midx - 1, u->sel, slots, metrics, aux);
		*aux += u->offset;
	} else {
		g = td_rdpmc_guarded(h->rseq, h->pcores, h->nr_cpus, sidx - 1,
				     midx - 1, slots, metrics);
	}
	*slots &= TD_SLOTS_MASK;
	return g == TD_GUARD_OK;
}

/*
 * The key and the E-cores are checked before the guarded read, and the
 * page's lock once more after it: the thread may be preempted between
 * the checks and the rseq section (outside it, nothing aborts), moved to
 * an E-core and back, so that the reading follows a stint the handle's
 * state does not hold yet; cpu_core's page records the trip (its
 * schedule-out and -in).
 */
int td_hybrid_fast_begin(struct td *td, struct td_region_priv *p)
{
	uint64_t slots, metrics, aux = 0;

	if ((td_load_once(td_pm_of(td)->slots_pc->lock) | td->epoch_hi) != p->key ||
	    !ecore_quiet(td_hybrid_of(td)) ||
	    !guarded_read(td, &slots, &metrics, &aux) ||
	    td_load_once(td_pm_of(td)->slots_pc->lock) != (uint32_t)p->key ||
	    td_reset_may_be_due(td, p, slots) ||
	    slots < td_pm_of(td)->last_raw_slots)
		return td_slow_begin(td, p);
	td_pm_of(td)->last_raw_slots = slots;
	td_pm_of(td)->last_pair_slots = slots; /* a pair: a foreign reset folds it */
	td_pm_of(td)->last_raw_metrics = metrics;
	p->slots = slots;
	p->raw = metrics;
	p->aux = aux;
	p->owner = td;
	td_policy_open(&td->policy, slots + p->snap.base.slots);
	return 0;
}

int td_hybrid_fast_end(struct td *td, struct td_region_priv *p,
		       struct td_result *res)
{
	uint64_t slots, metrics, aux = 0;

	if (!guarded_read(td, &slots, &metrics, &aux) ||
	    td_load_once(td_pm_of(td)->slots_pc->lock) != td->last_lock ||
	    !ecore_quiet(td_hybrid_of(td)) || slots < td_pm_of(td)->last_raw_slots)
		return td_slow_end_read(td, p, res);
	if (res)
		return td_pm_end_reading_result(td, p, res, slots, metrics,
						aux);
	return td_pm_end_reading(td, p, res, slots, metrics, aux);
}

/*
 * Metrics-clear mode's fast path, its reads inside the guard
 * (pm_clear_fast.c td_pm_clear_guarded_fast_begin): a reading stands
 * when cpu_core's page is as last seen after it and the E-cores stayed
 * quiet, as above (a trip to an E-core between the checks and the
 * guarded reads); else the slow path folds it with the E-cores' counts.
 */
static bool clear_fast_stands(const struct td *td)
{
	td_compiler_barrier();
	return td_load_once(td_pm_of(td)->slots_pc->lock) == td->last_lock &&
	       ecore_quiet(td_hybrid_of(td));
}

/* The guard in place (an rseq area and the P-cores' list), RDPMC. */
static bool guard_armed(const struct td *td)
{
	return td->path == TD_PATH_RDPMC && td_hybrid_of(td)->rseq &&
	       td_hybrid_of(td)->pcores;
}

/*
 * The source's ready operation: the guard armed, counters that keep
 * counting across reads (not metrics-clear mode), and a policy that does
 * not reset at every begin.
 */
void td_hybrid_fast_setup(struct td *td)
{
	const struct td_gen *e = td_hybrid_of(td)->ecore;

	td->src_fast = guard_armed(td) && !td_pm_of(td)->pm.clear_mode &&
		       !td_pm_of(td)->pm.mem.on && /* its reads: general route */
		       !(e && e->mux[0]) && /* E level 2: read(2) (hybrid.c) */
		       td->policy.kind != TD_RESET_ALWAYS;
}

/* The same in metrics-clear mode (td_source_hybrid_clear): the guard armed. */
void td_hybrid_clear_fast_setup(struct td *td)
{
	td_pm_of(td)->pm.clear_fast_stands = clear_fast_stands;
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

void td_hybrid_fast_setup(struct td *td)
{
	(void)td; /* no guard: the slow path */
}

void td_hybrid_clear_fast_setup(struct td *td)
{
	(void)td;
}
#endif
