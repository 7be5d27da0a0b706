/* SPDX-License-Identifier: MIT */
/* The true fractions of emulated work, shared by tests and benchmarks. */
#ifndef TD_TEST_TRUTH_H
#define TD_TEST_TRUTH_H

#include <math.h>

#include "emu.h"
#include "topdown.h"

/* True fractions of the work between two truth snapshots. */
struct truth_frac {
	double l1[TD_L1_COUNT];
	double l2[TD_L2_COUNT];
};

static inline struct truth_frac truth_between(const struct emu_truth *a,
					      const struct emu_truth *b)
{
	struct truth_frac t;
	double s = (double)(b->slots - a->slots);
	double c[8];

	for (int i = 0; i < 8; i++)
		c[i] = (double)(b->cat[i] - a->cat[i]) / s;
	for (int i = 0; i < 4; i++)
		t.l1[i] = c[i];
	t.l2[TD_HEAVY_OPS] = c[4];
	t.l2[TD_LIGHT_OPS] = c[0] - c[4];
	t.l2[TD_BR_MISPREDICT] = c[5];
	t.l2[TD_MACHINE_CLEARS] = c[1] - c[5];
	t.l2[TD_FETCH_LAT] = c[6];
	t.l2[TD_FETCH_BW] = c[2] - c[6];
	t.l2[TD_MEM_BOUND] = c[7];
	t.l2[TD_CORE_BOUND] = c[3] - c[7];
	return t;
}

/*
 * What a result flagged TD_RESULT_FE_UNREFINED reports of the same work:
 * PERF_METRICS' own numbers, which on the cores whose perf lists subtract
 * INT_MISC.UOP_DROPPING from tma_frontend_bound and tma_fetch_latency
 * count the dropped uops' slots as frontend bound and fetch latency
 * (emu_set_uop_dropping), where the truth keeps them as bad speculation
 * (machine clears).  Fetch bandwidth, frontend bound less fetch latency,
 * is the same.
 */
static inline struct truth_frac truth_unrefined(const struct emu_truth *a,
					       const struct emu_truth *b)
{
	struct truth_frac t = truth_between(a, b);
	double drop = (double)(b->uop_drop - a->uop_drop) /
		      (double)(b->slots - a->slots);

	t.l1[TD_FE_BOUND] += drop;
	t.l1[TD_BAD_SPEC] -= drop;
	t.l2[TD_FETCH_LAT] += drop;
	t.l2[TD_MACHINE_CLEARS] -= drop;
	return t;
}

/* The truth res is to be held to: truth_unrefined where res says so. */
static inline struct truth_frac truth_for(const struct td_result *res,
					  const struct emu_truth *a,
					  const struct emu_truth *b)
{
	if (res->flags & TD_RESULT_FE_UNREFINED)
		return truth_unrefined(a, b);
	return truth_between(a, b);
}

/* Largest |reported - true| over every fraction the result reports. */
static inline double max_error(const struct td_result *r,
			       const struct truth_frac *t)
{
	double worst = 0;

	for (int i = 0; i < TD_L1_COUNT; i++)
		worst = fmax(worst, fabs(r->l1[i] - t->l1[i]));
	if (r->flags & TD_RESULT_L2)
		for (int i = 0; i < TD_L2_COUNT; i++)
			worst = fmax(worst, fabs(r->l2[i] - t->l2[i]));
	return worst;
}

/* Some mixes with distinct level-1 and level-2 compositions. */
static const struct emu_mix MIX_CHAIN = { { 0.30, 0.05, 0.10, 0.55,
					    0.02, 0.04, 0.06, 0.15 } };
static const struct emu_mix MIX_BRANCHY = { { 0.25, 0.45, 0.20, 0.10,
					      0.05, 0.40, 0.15, 0.04 } };
static const struct emu_mix MIX_STREAM = { { 0.70, 0.02, 0.08, 0.20,
					     0.10, 0.01, 0.03, 0.12 } };
static const struct emu_mix MIX_DRAM = { { 0.08, 0.01, 0.06, 0.85,
					   0.01, 0.005, 0.02, 0.78 } };

#endif
