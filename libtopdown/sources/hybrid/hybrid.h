/* SPDX-License-Identifier: MIT */
/*
 * The hybrid source's own state and entries: the E-core group and the
 * rseq guard of hybrid parts (hybrid.c), composed with the PERF_METRICS
 * source (hybrid_source.c).  Not installed.
 */
#ifndef TD_HYBRID_H
#define TD_HYBRID_H

#include "counter_group.h"
#include "perf_metrics.h"
#include "x86_formulas.h"

/*
 * The E-cores' slots (plain slots, cumulative) in an entry of struct
 * td_counts that PERF_METRICS leaves free, so that a region's own delta
 * says whether any of its slots came from an E-core (level 2 per
 * region).  The hybrid source's alone.
 */
#define TD_C_ECORE_SLOTS (TD_NR_COUNTS - 1)
_Static_assert(TD_C_ECORE_SLOTS > TD_M_SMT,
	       "the E-cores' slots must not be a result category");

/*
 * TD_OPT_L2_MULTIPLEX on Gracemont E-cores: the level-2
 * groups' cumulative event counts (TD_A2_*, config2 order), raw, in the
 * entries PERF_METRICS leaves free without the memory drill-down (whose
 * nodes take the same entries: the two are not combined, hybrid.c).
 */
#define TD_C_ECORE_L2 (TD_M_SMT + 1)
_Static_assert(TD_C_ECORE_L2 + TD_A2_NR <= TD_C_ECORE_SLOTS,
	       "the E-cores' level-2 values fit before their slots");

/* The hybrid source's own state, in its handle (struct td_hybrid_handle). */
struct td_hybrid {
	/* the guard of RDPMC: where the fixed selectors exist (hybrid.c) */
	const uint64_t *pcores;  /* bitmap of the CPUs of cpu_core, or NULL:
				    no guard, the read(2) path */
	uint32_t nr_cpus;        /* bits in pcores */
	struct rseq *rseq;       /* the owner thread's registered rseq area */
	/*
	 * The E-cores' ordinary-counter group on cpu_atom, folded into base
	 * at every reading (slot-weighted combination), or NULL.
	 */
	struct td_gen *ecore;
	struct td_counts ecore_last; /* its counts at the last reading */
	/*
	 * TD_OPT_L2_MULTIPLEX (the E group's mux[] open): its level-1
	 * group's and level-2 groups' time running at the last reading.
	 */
	uint64_t mux_run1, mux_run2;
	/*
	 * Time neither group counted (hybrid.c pair_times): the last valid
	 * reading's measure of it, which group's clock that measure is on,
	 * and how often it moved or could not be compared (the source's
	 * unsched).  ecore_c: cpu_core's time_enabled minus cpu_atom's
	 * (constant: both stay enabled), once learnt.
	 */
	uint64_t last_u;
	uint32_t p_lock;        /* cpu_core's page lock at the last P reading */
	bool last_u_ecore;
	bool have_last_u;
	uint64_t uncounted;
	int64_t ecore_c;
	bool ecore_c_ok;
};

/*
 * A handle of the hybrid source: the PERF_METRICS source's, whose
 * readings it composes with the E-cores', then its own state.
 */
struct td_hybrid_handle {
	struct td_pm_handle pm;
	struct td_hybrid hybrid;
};

static inline struct td_hybrid *td_hybrid_of(const struct td *td)
{
	return &td_container_of(td, struct td_hybrid_handle, pm.td)->hybrid;
}

TD_HIDDEN void td_hybrid_init(struct td *td);
TD_HIDDEN void td_hybrid_close(struct td *td);
TD_HIDDEN void td_hybrid_ecore_open(struct td *td, bool include_kernel,
				    bool l2_multiplex);
TD_HIDDEN void td_hybrid_fold(struct td *td, struct td_sample *s);
/*
 * The E group's cached values (hybrid.c ecore_values_off) still stand,
 * it has not run since they were read, when its leader page's lock is
 * the one seen then.
 */
static inline bool td_hybrid_ecore_cached(const struct td_gen *g,
					  uint32_t lock)
{
	return g->cached && lock == g->cached_lock;
}
/*
 * The fast paths' test that the E group has not run since its values
 * were cached (hybrid_fast.c ecore_quiet, pm_clear_fast.c clear_go),
 * one load and one compare: *quiet_lock == quiet_want (struct td_pm).
 * quiet_lock is the E page's lock while the values are cached
 * (quiet_want the lock then), else quiet_not (never quiet_want); with
 * no E group, quiet_want itself.  Kept with the cache.
 */
TD_HIDDEN void td_hybrid_quiet_update(struct td *td);
/* hybrid_fast.c: the source's fast path (source.h) and its setup. */
struct td_region_priv;
TD_HIDDEN int td_hybrid_fast_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_hybrid_fast_end(struct td *td, struct td_region_priv *p,
				 struct td_result *res);
TD_HIDDEN int td_hybrid_fast_begin_uop(struct td *td,
				       struct td_region_priv *p);
TD_HIDDEN int td_hybrid_fast_end_uop(struct td *td, struct td_region_priv *p,
				     struct td_result *res);
/* source.h fast_end_first: the reads, then the region's checks. */
TD_HIDDEN int td_hybrid_fast_end_first(struct td *td, struct td_region *r,
				       struct td_result *res);
TD_HIDDEN int td_hybrid_fast_end_first_uop(struct td *td, struct td_region *r,
					   struct td_result *res);
TD_HIDDEN void td_hybrid_fast_setup(struct td *td);
TD_HIDDEN void td_hybrid_clear_fast_setup(struct td *td);

#endif
