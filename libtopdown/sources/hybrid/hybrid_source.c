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

static const struct td_source_ops hybrid_clear;

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
	td_hybrid_ecore_open(td, req->include_kernel);
	td_hybrid_init(td);
	if (h->pcores) {
		pm->guarded_read = guarded_read;
		pm->guard_rseq = h->rseq;
		pm->guard_cpus = h->pcores;
		pm->guard_nr_cpus = h->nr_cpus;
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

/*
 * E-cores measure level 1 only: a region has level 2 when none of its
 * slots came from an E-core (its own delta of TD_C_ECORE_SLOTS), so a
 * P-only region after an E-core stint still gets it; a region that ran
 * on E-cores too loses its P-only level-2 counts.
 */
static unsigned hybrid_delta(const struct td *td, const struct td_counts *a,
			     uint64_t raw_slots, uint64_t raw,
			     const struct td_counts *b, struct td_delta *d)
{
	unsigned flags = td_pm_delta(td, a, raw_slots, raw, b, d);

	if (b->cat[TD_C_ECORE_SLOTS] == a->cat[TD_C_ECORE_SLOTS])
		return flags;
	for (unsigned i = TD_NR_L1; i < TD_NR_METRICS; i++)
		d->cat[i] = 0;
	return flags & ~TD_RESULT_L2;
}

static void hybrid_info(const struct td *td, struct td_info *i)
{
	char caps[32] = "";

	td_pm_info(td, i);
	if (!td_hybrid_of(td)->ecore)
		return;
	i->flags |= TD_INFO_HYBRID_ECORE;
	td_pm_pmu_name(td, caps, sizeof(caps));
	/* e.g. "alderlake_hybrid+gracemont"; a longer one is cut short */
	if (snprintf(i->uarch, sizeof(i->uarch), "%s+%s", caps,
		     td_hybrid_of(td)->ecore->m.name) >= (int)sizeof(i->uarch))
		i->uarch[sizeof(i->uarch) - 1] = '\0';
}

/*
 * What every table of this source shares: the handle, its open and
 * close, the reset and the consistency check of PERF_METRICS, the info.
 * The tables differ in how a reading is taken and decoded (the memory
 * drill-down) and in their fast path (metrics-clear mode).
 */
#define HYBRID_OPS                                                       \
	.name = "hybrid", .handle_size = sizeof(struct td_hybrid_handle),  \
	.open = hybrid_open, .close = hybrid_close, .reset = td_pm_reset, \
	.consistent = td_pm_consistent, .info = hybrid_info

const struct td_source_ops td_source_hybrid = {
	HYBRID_OPS,
	.sample = hybrid_sample,
	.delta = hybrid_delta,
	.fast_begin = td_hybrid_fast_begin,
	.fast_end = td_hybrid_fast_end,
	.ready = td_hybrid_fast_setup,
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
	HYBRID_OPS,
	.sample = hybrid_mem_sample,
	.delta = hybrid_mem_delta,
	.fast_begin = td_hybrid_fast_begin,
	.fast_end = td_hybrid_fast_end,
	.ready = td_hybrid_fast_setup,
	.decode_more = td_pm_mem_decode,
	.record_more = td_pm_mem_record,
};

/*
 * The same in metrics-clear mode: its fast path is PERF_METRICS' in that
 * mode with the reads inside the guard (pm_clear_fast.c), chosen at open
 * so that neither fast path tests the mode at every boundary.
 */
static const struct td_source_ops hybrid_clear = {
	HYBRID_OPS,
	.sample = hybrid_sample,
	.delta = hybrid_delta,
	.fast_begin = td_pm_clear_guarded_fast_begin,
	.fast_end = td_pm_clear_guarded_fast_end,
	.ready = td_hybrid_clear_fast_setup,
};
