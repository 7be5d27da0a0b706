/* SPDX-License-Identifier: MIT */
/*
 * The hybrid source (Alder Lake and later): the PERF_METRICS source on
 * the P-cores' PMU composed with an ordinary-counter group (the Atom V2
 * formula) on the E-cores' PMU, folded into one count at every reading
 * (hybrid.c), and the rseq guard that keeps RDPMC of the fixed
 * selectors off the E-cores.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "counter_group.h"
#include "hybrid.h"
#include "perf_metrics.h"
#include "sources.h"

/*
 * PERF_METRICS' RDPMC of SLOTS and PERF_METRICS on a hybrid part: only on
 * a P-core, inside the rseq critical section (hybrid.c).  An abort
 * (preempted or migrated mid-section) retries; an E-core makes the
 * reading invalid, which flags the region.
 */
static bool guarded_read(const struct td *td, uint32_t sidx, uint32_t midx,
			 uint64_t *slots, uint64_t *metrics)
{
#if TD_HAVE_RSEQ_GUARD
	const struct td_hybrid *h = td_hybrid_of(td);
	enum td_guard g;

	do
		g = td_rdpmc_guarded(h->rseq, h->pcores, h->nr_cpus, sidx - 1,
				     midx - 1, slots, metrics);
	while (g == TD_GUARD_ABORTED);
	return g == TD_GUARD_OK;
#else
	(void)td, (void)sidx, (void)midx, (void)slots, (void)metrics;
	return false;
#endif
}

static const struct td_source_ops hybrid_clear, hybrid_uop;

/*
 * Metrics-clear mode where cpu_core offers it (Lunar Lake, Arrow Lake:
 * format/metrics_clear) and the guard is armed: its one-pass reads go
 * inside the rseq guard too (pm_reading.c clear_pass_read).  Without the
 * guard the handle reads with read(2), where nothing clears (the clear
 * comes from a user RDPMC only, as pm_group.c choose_path says).
 */
static int hybrid_open(struct td *td, const struct td_open_req *req)
{
	struct td_hybrid *h = td_hybrid_of(td);
	struct td_pm *pm = &td_pm_of(td)->pm;
	int err;

	err = td_pm_group_open(td, req);
	if (err < 0)
		return err;
	td_hybrid_ecore_open(td, req->include_kernel,
			     req->l2_multiplex && !req->memory);
	td_hybrid_init(td);
	if (h->pcores) {
		pm->guarded_read = guarded_read;
		pm->guard.rseq = h->rseq;
		pm->guard.cpus = h->pcores;
		pm->guard.nr_cpus = h->nr_cpus;
	}
	if (td->path != TD_PATH_RDPMC)
		pm->clear_mode = false;
	if (pm->clear_mode)
		td->src = &hybrid_clear; /* its own fast path */
	pm->saved_read_fallback = h->ecore != NULL;
	/* never fast_capable: the E-cores fault on the selectors */
	err = td_pm_mem_open(td, req);
	if (err == 0 && req->memory)
		td->src = &td_source_hybrid_memory;
	if (err == 0)
		td_pm_uop_open(td, req);
	if (err == 0 && td->src == &td_source_hybrid && pm->uop.on)
		td->src = &hybrid_uop; /* the fast path's copy that reads it */
	return err;
}

static void hybrid_close(struct td *td)
{
	td_pm_close(td);
	td_hybrid_close(td);
}

static int hybrid_sample(struct td *td, struct td_sample *s)
{
	int err = td_pm_sample(td, s);

	if (td_hybrid_of(td)->ecore && err == 0)
		td_hybrid_fold(td, s); /* before note_schedule: fixes unsched */
	return err;
}

/* All of the region's slots came from E-cores. */
static bool ecore_region(const struct td_counts *a, const struct td_counts *b,
			 const struct td_delta *d)
{
	int64_t e = (int64_t)(b->cat[TD_C_ECORE_SLOTS] -
			      a->cat[TD_C_ECORE_SLOTS]);

	return e == d->slots;
}

/*
 * May a region with e of its slots from the E-cores keep the P-cores'
 * level 2?  When e is at most one step of PERF_METRICS' 8-bit fields
 * over the region's slots (each field a fraction of SLOTS in 1/0xff
 * steps: arch/x86/events/intel/core.c icl_get_metrics_event_value):
 * 255 x e <= slots.  Such a share comes, as a rule, from the library's
 * own reading: a thread migrated to an E-core just before a region's end
 * reads there (cpu_core's group is not scheduled on an E-core:
 * intel_pmu_filter in the same file, which kernel/events/core.c
 * visit_groups_merge obeys), so the library's instructions from the
 * migration to the end's reads are counted by cpu_atom's group: the slow
 * route's few thousand instructions (bench/overhead), under one step of
 * a region of some millions of slots.  A shorter region that ends so
 * loses level 2, as does one with more real work on the E-cores, unless
 * all of its slots came from E-cores whose group counts their own level
 * 2 (Skymont, Crestmont: hybrid.c ecore_l2_counts, the frontend and
 * backend children, TD_RESULT_L2_FE_BE; Gracemont with
 * TD_OPT_L2_MULTIPLEX: ecore_mux_l2), which then reports the E-cores'
 * level 2 (ecore_delta).  A region on both
 * core types beyond that bound has none: the two trees' nodes are not
 * the same (the memory-bound entry is resource bound on the E-cores).
 */
static bool ecore_share_bounded(uint64_t e, int64_t slots)
{
	return slots > 0 && e <= (uint64_t)slots / 255;
}

/*
 * Beyond the E-cores' own level 2 of a region all on them (ecore_delta),
 * the E-cores measure level 1 only: cpu_atom has no PERF_METRICS
 * (arch/x86/events/intel/core.c intel_pmu_init_hybrid sets perf_metrics
 * for the big core type alone), and the E group here reads the Atom
 * level-1 events.  A region's E-core slots are its own delta of
 * TD_C_ECORE_SLOTS, so a P-only region after an E-core stint has level
 * 2.  One with a bounded E-core share (above) keeps it too: its level-2
 * counts are the P-cores' alone, so each measured level-2 category
 * misses at most the E-cores' e slots, and a parent minus a measured
 * child (light ops, machine clears, fetch bandwidth, core bound) is off
 * by at most e on top: within the bound of decode.c when e slots,
 * 255 x e in qerr's 1/255-slot units, join the region's qerr (err grows
 * by at most what one more reading of the region would add).  Any larger
 * E-core share loses level 2: zeroed, and TD_RESULT_L2 not set.  Out of
 * line: most regions have no E-core slot.
 */
static __attribute__((noinline)) unsigned
ecore_share_delta(const struct td_counts *a, const struct td_counts *b,
		  unsigned flags, struct td_delta *d)
{
	uint64_t e = b->cat[TD_C_ECORE_SLOTS] - a->cat[TD_C_ECORE_SLOTS];

	if ((flags & TD_RESULT_L2) && ecore_share_bounded(e, d->slots)) {
		d->qerr += 255 * e;
		return flags;
	}
	for (unsigned i = TD_NR_L1; i < TD_NR_METRICS; i++)
		d->cat[i] = 0;
	return flags & ~TD_RESULT_L2;
}

/* c within [0, parent]: sampling can put an estimate just outside. */
static void clamp_child(int64_t *c, int64_t parent)
{
	int64_t p = parent > 0 ? parent : 0;

	*c = *c < 0 ? 0 : *c > p ? p : *c;
}

/*
 * A region all on Gracemont E-cores, TD_OPT_L2_MULTIPLEX
 * (hybrid.c ecore_mux_fold): the Atom level-2 tree from the level-2
 * groups' counts over the region (td_formula_atom_l2, as the standalone
 * cores' multiplexed mode: each node its event per the level-2 group's
 * own slots, applied to the region's scaled slots), when that group
 * counted a part of it worth a breakdown; else none.  Each child is
 * kept within its parent.  Returns the flags.
 */
static unsigned ecore_mux_l2(const struct td *td, const struct td_counts *a,
			     const struct td_counts *b, unsigned flags,
			     struct td_delta *d)
{
	const struct td_gen_model *m = &td_hybrid_of(td)->ecore->m;
	uint64_t w[TD_L2_VALUES] = { 0 };
	unsigned l2;

	for (unsigned i = 0; i < m->nr2; i++)
		w[i] = b->cat[TD_C_ECORE_L2 + i] - a->cat[TD_C_ECORE_L2 + i];
	if (m->width * w[TD_A2_CLK] < TD_SHORT_SLOTS)
		return ecore_share_delta(a, b, flags & ~TD_RESULT_L2, d);
	l2 = td_formula_atom_l2(m->width, m->l2_fe_be, w, d->slots, d->cat);
	for (unsigned i = TD_NR_L1; i < TD_NR_METRICS; i++)
		clamp_child(&d->cat[i], d->cat[i - TD_NR_L1]);
	return (flags & ~TD_RESULT_L2) | l2;
}

/*
 * Named totals of the multiplexed mode (struct td_delta l2raw, summed
 * over a named region's calls: hybrid_fold_named): the level-2 groups'
 * event counts (TD_A2_*), then how many calls passed them (never 0: no
 * call is "unsampled", named_counted_word) and how many of those had
 * E-core slots only, and the tag: the E-cores' width and tree.
 */
enum { HYBRID_RAW_CALLS = TD_A2_NR, HYBRID_RAW_ECORE_ONLY };
_Static_assert(HYBRID_RAW_ECORE_ONLY < TD_L2RAW_TAG, "struct td_delta.l2raw");
#define HYBRID_RAW_TAG(m) \
	((m)->width | (uint64_t)(m)->l2_fe_be << 8 | UINT64_C(1) << 16)

static void ecore_mux_raw(const struct td_gen_model *m,
			  const struct td_counts *a, const struct td_counts *b,
			  bool ecore_only, struct td_delta *d)
{
	memset(d->l2raw, 0, sizeof(d->l2raw));
	for (unsigned i = 0; i < m->nr2; i++)
		d->l2raw[i] = b->cat[TD_C_ECORE_L2 + i] -
			      a->cat[TD_C_ECORE_L2 + i];
	d->l2raw[HYBRID_RAW_CALLS] = 1;
	d->l2raw[HYBRID_RAW_ECORE_ONLY] = ecore_only;
	d->l2raw[TD_L2RAW_TAG] = HYBRID_RAW_TAG(m);
}

/*
 * A named region's totals in the multiplexed mode (named.c acc_totals,
 * when every reliable call passed ecore_mux_raw's words): where every
 * call ran on E-cores only, the Atom tree from the level-2 groups'
 * counts summed over the calls, applied to the summed level 1, as
 * ecore_mux_l2 does for one region (perf stat's estimate from
 * multiplexed counts); none where a call also ran on P-cores (two
 * trees) or the level-2 groups counted too little.
 */
static unsigned hybrid_fold_named(const uint64_t *raw, struct td_delta *d)
{
	uint64_t w[TD_L2_VALUES] = { 0 };
	unsigned width = (unsigned)(raw[TD_L2RAW_TAG] & 0xff);
	bool fe_be = raw[TD_L2RAW_TAG] >> 8 & 1;
	unsigned l2;

	memset(d->cat + TD_NR_L1, 0, TD_NR_L1 * sizeof(d->cat[0]));
	if (!(raw[TD_L2RAW_TAG] >> 16) ||
	    raw[HYBRID_RAW_ECORE_ONLY] != raw[HYBRID_RAW_CALLS])
		return 0;
	memcpy(w, raw, TD_A2_NR * sizeof(w[0]));
	if (width * w[TD_A2_CLK] < TD_SHORT_SLOTS)
		return 0;
	l2 = td_formula_atom_l2(width, fe_be, w, d->slots, d->cat);
	for (unsigned i = TD_NR_L1; i < TD_NR_METRICS; i++)
		clamp_child(&d->cat[i], d->cat[i - TD_NR_L1]);
	return l2;
}

/*
 * A region with E-core slots: the E-cores' own level 2 where all of its
 * slots came from them and their group measures it (Skymont and
 * Crestmont in the group, Gracemont multiplexed: its E-core counts then
 * scaled, the region flagged TD_RESULT_MULTIPLEXED, its named totals'
 * words kept); else ecore_share_delta's rule.  Out of line, as that is.
 */
static __attribute__((noinline)) unsigned
ecore_delta(const struct td *td, const struct td_counts *a,
	    const struct td_counts *b, unsigned flags, struct td_delta *d)
{
	const struct td_gen *g = td_hybrid_of(td)->ecore;

	if (g->mux[0]) {
		flags |= TD_RESULT_MULTIPLEXED;
		ecore_mux_raw(&g->m, a, b, ecore_region(a, b, d), d);
	}
	if (ecore_region(a, b, d) && g->m.l2_in_group) {
		d->cat[TD_M_HEAVY_OPS] = 0;
		d->cat[TD_M_BR_MISPREDICT] = 0;
		return flags | TD_RESULT_L2 | TD_RESULT_L2_FE_BE;
	}
	if (ecore_region(a, b, d) && g->mux[0])
		return ecore_mux_l2(td, a, b, flags, d);
	return ecore_share_delta(a, b, flags, d);
}

/*
 * TD_OPT_L2_MULTIPLEX: the E-cores' level-2 groups counted in a region
 * whose level-1 group did not (all of its E-core time in their turns:
 * no E-core slots, the region flagged for its lost level 1), whose
 * counts named totals still take (ecore_mux_raw).
 */
static bool ecore_l2_only(const struct td *td, const struct td_counts *a,
			  const struct td_counts *b)
{
	const struct td_gen *g = td_hybrid_of(td)->ecore;

	return g && g->mux[0] && b->cat[TD_C_ECORE_L2 + TD_A2_CLK] !=
					 a->cat[TD_C_ECORE_L2 + TD_A2_CLK];
}

/* The common region, no E-core slot: as PERF_METRICS' delta alone. */
static unsigned hybrid_delta(const struct td *td, const struct td_counts *a,
			     uint64_t raw_slots, uint64_t raw,
			     const struct td_counts *b, struct td_delta *d)
{
	unsigned flags = td_pm_delta(td, a, raw_slots, raw, b, d);

	if (TD_LIKELY(b->cat[TD_C_ECORE_SLOTS] == a->cat[TD_C_ECORE_SLOTS]) &&
	    !ecore_l2_only(td, a, b))
		return flags;
	return ecore_delta(td, a, b, flags, d);
}

static void hybrid_info(const struct td *td, struct td_info *i)
{
	char caps[32] = "";

	td_pm_info(td, i);
	if (!td_hybrid_of(td)->ecore)
		return;
	i->flags |= TD_INFO_HYBRID_ECORE;
	if (td_hybrid_of(td)->ecore->mux[0])
		i->flags |= TD_INFO_MULTIPLEXED;
	td_pm_pmu_name(td, caps, sizeof(caps));
	/* e.g. "alderlake_hybrid+gracemont"; a longer one is cut short */
	if (snprintf(i->uarch, sizeof(i->uarch), "%s+%s", caps,
		     td_hybrid_of(td)->ecore->m.name) >= (int)sizeof(i->uarch))
		i->uarch[sizeof(i->uarch) - 1] = '\0';
}

/*
 * A table of this source.  Every one shares the handle, its open and
 * close, the reset and the consistency check of PERF_METRICS, the info;
 * they differ only in how a reading is taken and decoded (sample, delta:
 * the memory drill-down) and in their fast path (fast_begin, fast_end
 * and its setup, ready: metrics-clear mode, the drop counter).
 */
#define HYBRID_OPS(sample_fn, delta_fn, begin_fn, end_fn, ready_fn)        \
	.name = "hybrid", .handle_size = sizeof(struct td_hybrid_handle),  \
	.open = hybrid_open, .close = hybrid_close, .reset = td_pm_reset, \
	.consistent = td_pm_consistent, .info = hybrid_info,              \
	.fold_named = hybrid_fold_named,                                   \
	.named_counted_word = HYBRID_RAW_CALLS, .sample = (sample_fn),     \
	.delta = (delta_fn), .fast_begin = (begin_fn),                     \
	.fast_end = (end_fn), .ready = (ready_fn)

const struct td_source_ops td_source_hybrid = {
	HYBRID_OPS(hybrid_sample, hybrid_delta, td_hybrid_fast_begin,
		   td_hybrid_fast_end, td_hybrid_fast_setup),
	.fast_end_first = td_hybrid_fast_end_first,
};

/*
 * The same where INT_MISC.UOP_DROPPING counts (pm_uop.c): the fast
 * path's copy that reads it beside the fixed counters, chosen at open so
 * that neither copy tests it at every boundary.
 */
static const struct td_source_ops hybrid_uop = {
	HYBRID_OPS(hybrid_sample, hybrid_delta, td_hybrid_fast_begin_uop,
		   td_hybrid_fast_end_uop, td_hybrid_fast_setup),
	.fast_end_first = td_hybrid_fast_end_first_uop,
};

/* TD_OPT_MEMORY: the same, reading and decoding the memory events too. */
static int hybrid_mem_sample(struct td *td, struct td_sample *s)
{
	int err = hybrid_sample(td, s);

	if (err == 0)
		td_pm_mem_sample(td, s);
	return err;
}

static unsigned hybrid_mem_delta(const struct td *td,
				 const struct td_counts *a, uint64_t raw_slots,
				 uint64_t raw, const struct td_counts *b,
				 struct td_delta *d)
{
	td_pm_mem_delta(a, b, d);
	return hybrid_delta(td, a, raw_slots, raw, b, d);
}

const struct td_source_ops td_source_hybrid_memory = {
	HYBRID_OPS(hybrid_mem_sample, hybrid_mem_delta, td_hybrid_fast_begin,
		   td_hybrid_fast_end, td_hybrid_fast_setup),
	.decode_more = td_pm_mem_decode,
	.record_more = td_pm_mem_record,
};

/*
 * The same in metrics-clear mode: its fast path is PERF_METRICS' in that
 * mode with the reads inside the guard (pm_clear_fast.c), chosen at open
 * so that neither fast path tests the mode at every boundary.
 */
static const struct td_source_ops hybrid_clear = {
	HYBRID_OPS(hybrid_sample, hybrid_delta,
		   td_pm_clear_guarded_fast_begin,
		   td_pm_clear_guarded_fast_end, td_hybrid_clear_fast_setup),
};
