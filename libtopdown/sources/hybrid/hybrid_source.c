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

/*
 * Without metrics-clear mode, even where cpu_core offers it (Lunar Lake,
 * Arrow Lake: format/metrics_clear): its readings are one pass whose
 * RDPMCs have no rseq guard (pm_reading.c clear_read), and a migration
 * to an E-core between its index check and an RDPMC of a fixed selector
 * would fault there.  The cumulative readings are guarded on every path
 * (hybrid.c); the reset policy keeps their 8-bit fields precise.
 */
static int hybrid_open(struct td *td, const struct td_open_req *req)
{
	struct td_open_req guarded = *req;
	struct td_hybrid *h = td_hybrid_of(td);
	struct td_pm *pm = &td_pm_of(td)->pm;
	int err;

	guarded.metrics_clear = false;
	err = td_pm_group_open(td, &guarded);
	if (err < 0)
		return err;
	td_hybrid_ecore_open(td, req->include_kernel);
	td_hybrid_init(td);
	if (h->pcores)
		pm->guarded_read = guarded_read;
	pm->saved_read_fallback = h->ecore != NULL;
	return 0; /* never fast_capable: the E-cores fault on the selectors */
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

const struct td_source_ops td_source_hybrid = {
	.name = "hybrid",
	.handle_size = sizeof(struct td_hybrid_handle),
	.open = hybrid_open,
	.close = hybrid_close,
	.sample = hybrid_sample,
	.reset = td_pm_reset,
	.delta = hybrid_delta,
	.consistent = td_pm_consistent,
	.info = hybrid_info,
	.fast_begin = td_hybrid_fast_begin,
	.fast_end = td_hybrid_fast_end,
	.ready = td_hybrid_fast_setup,
};
