/* SPDX-License-Identifier: MIT */
/*
 * The Intel PERF_METRICS source, and hybrid parts as its composition
 * with an ordinary-counter group on the E-cores' PMU (hybrid.c).
 *
 * Counts are PERF_METRICS' eight 8-bit fields times SLOTS (x255 units,
 * struct td_counts), in the kernel's byte order (INTEL_TD_METRIC_* of
 * arch/x86/include/asm/perf_event.h); readings are taken by reading.c's
 * RDPMC, metrics-clear and read(2) paths.
 */
#include <stdio.h>
#include <string.h>

#include "generic.h"
#include "source.h"

/* RDPMC metrics-clear mode where the PMU offers it (format/metrics_clear). */
static int group_open(struct td *td, const struct td_open_req *req)
{
	td->clear_mode = td->pmu.metrics_clear_config1 && req->metrics_clear;
	return td_group_open(td, req->include_kernel, req->want_rdpmc);
}

static int pm_open(struct td *td, const struct td_open_req *req)
{
	int err = group_open(td, req);

	/*
	 * Every CPU of a PMU that covers them all has fixed counter 3 and
	 * PERF_METRICS: begin/end may RDPMC their fixed selectors before
	 * any check (region.c).
	 */
	if (err == 0)
		td->fast_capable = true;
	return err;
}

static void pm_close(struct td *td)
{
	if (td->leader_fd >= 0)
		td_group_close(td);
}

static bool pm_level2(const struct td *td)
{
	return td->pmu.nr_metrics == TD_NR_METRICS;
}

/* Counts of PERF_METRICS subtract: b - a per category. */
static unsigned pm_delta(const struct td *td, const struct td_counts *a,
			 const struct td_counts *b, struct td_delta *d)
{
	d->slots = (int64_t)(b->slots - a->slots);
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d->cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
	d->cat[TD_M_SMT] = 0;
	return pm_level2(td) ? TD_RESULT_L2 : 0;
}

static bool pm_consistent(const struct td *td, const struct td_delta *d)
{
	return td_delta_consistent(d, pm_level2(td));
}

/* The kernel's caps/pmu_name of the core PMU, "" when it does not say. */
static void pmu_name(const struct td *td, char *out, size_t len)
{
	char path[96];
	int n;

	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/caps/pmu_name",
		 td->pmu.name);
	n = td_sys_read_file(path, out, len);
	out[n > 0 ? strcspn(out, "\n") : 0] = '\0';
}

static void pm_info(const struct td *td, struct td_info *i)
{
	i->levels = pm_level2(td) ? 2 : 1;
	if (td->clear_mode)
		i->flags |= TD_INFO_METRICS_CLEAR;
	pmu_name(td, i->uarch, sizeof(i->uarch));
}

const struct td_source_ops td_source_perf_metrics = {
	.name = "perf_metrics",
	.open = pm_open,
	.close = pm_close,
	.sample = td_pm_sample,
	.delta = pm_delta,
	.consistent = pm_consistent,
	.info = pm_info,
};

/* ---- hybrid: P-cores' PERF_METRICS + the E-cores' group ----------------- */

static int hybrid_open(struct td *td, const struct td_open_req *req)
{
	int err = group_open(td, req);

	if (err < 0)
		return err;
	td_hybrid_ecore_open(td, req->include_kernel);
	td_hybrid_init(td);
	return 0; /* never fast_capable: the E-cores fault on the selectors */
}

static void hybrid_close(struct td *td)
{
	pm_close(td);
	td_hybrid_close(td);
}

static int hybrid_sample(struct td *td, struct td_sample *s)
{
	int err = td_pm_sample(td, s);

	if (td->ecore && err == 0)
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
			     const struct td_counts *b, struct td_delta *d)
{
	unsigned flags = pm_delta(td, a, b, d);

	if (b->cat[TD_C_ECORE_SLOTS] == a->cat[TD_C_ECORE_SLOTS])
		return flags;
	for (unsigned i = TD_NR_L1; i < TD_NR_METRICS; i++)
		d->cat[i] = 0;
	return flags & ~TD_RESULT_L2;
}

static void hybrid_info(const struct td *td, struct td_info *i)
{
	char caps[32] = "";

	pm_info(td, i);
	if (!td->ecore)
		return;
	i->flags |= TD_INFO_HYBRID_ECORE;
	pmu_name(td, caps, sizeof(caps));
	snprintf(i->uarch, sizeof(i->uarch), "%s+%s", caps, td->ecore->m.name);
}

const struct td_source_ops td_source_hybrid = {
	.name = "hybrid",
	.open = hybrid_open,
	.close = hybrid_close,
	.sample = hybrid_sample,
	.delta = hybrid_delta,
	.consistent = pm_consistent,
	.info = hybrid_info,
};
