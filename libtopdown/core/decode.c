/* SPDX-License-Identifier: MIT */
/*
 * From slot-count deltas to fractions.  Pure arithmetic, no state.
 *
 * Level 1 is normalised by the sum of the four level-1 deltas, as perf does
 * (kernel document; perf's td_metric_ratio and TopdownL1 JSON), and level 2
 * by the same sum.  Light ops, machine clears, fetch bandwidth and core
 * bound are parent minus measured child, clamped at 0.
 *
 * Error bound.  Each reading k that enters the region (its begin, its end,
 * and every fold at a reset between them) estimates each category as
 * field x S_k / 255 where the 8-bit field is within one step of the true
 * fraction, so within S_k/255 slots.  With E = sum of S_k (delta->qerr, in
 * 1/255-slot units) every measured category delta y_i is within E of the
 * truth x_i.  Reported fraction y_i/Y (Y = sum of L1 deltas) against true
 * x_i/R (R = 255 x slots delta, exact):
 *   |y_i/Y - x_i/R| <= |y_i - x_i|/Y + (x_i/R)|R - Y|/Y <= (E + |R - Y|)/Y,
 * since x_i <= R.  A derived category is a difference of two measured
 * ones: twice that.  Clamping to [0, 1] only moves towards the truth.
 * So err = e1 for level 1 alone, 2 x e1 when level 2 is reported.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* smt_contention took one of the reserved words: the size is ABI. */
_Static_assert(sizeof(struct td_result) == 168,
	       "struct td_result changed size");

static double clamp01(double x)
{
	return x < 0 ? 0 : (x > 1 ? 1 : x);
}

static double pos(double x)
{
	return x < 0 ? 0 : x;
}

static void decode_l2(const struct td_delta *d, double inv,
		      struct td_result *res)
{
	double *l2 = res->l2;
	const double *l1 = res->l1;

	l2[TD_HEAVY_OPS] = clamp01(d->cat[TD_M_HEAVY_OPS] * inv);
	l2[TD_BR_MISPREDICT] = clamp01(d->cat[TD_M_BR_MISPREDICT] * inv);
	l2[TD_FETCH_LAT] = clamp01(d->cat[TD_M_FETCH_LAT] * inv);
	l2[TD_MEM_BOUND] = clamp01(d->cat[TD_M_MEM_BOUND] * inv);
	l2[TD_LIGHT_OPS] = pos(l1[TD_RETIRING] - l2[TD_HEAVY_OPS]);
	l2[TD_MACHINE_CLEARS] = pos(l1[TD_BAD_SPEC] - l2[TD_BR_MISPREDICT]);
	l2[TD_FETCH_BW] = pos(l1[TD_FE_BOUND] - l2[TD_FETCH_LAT]);
	l2[TD_CORE_BOUND] = pos(l1[TD_BE_BOUND] - l2[TD_MEM_BOUND]);
}

/*
 * Without a reset the library did not see, every measured category's
 * delta is at least its true value (>= 0) minus the quantisation bound:
 * one below -qerr proves the counters were zeroed inside the region.
 */
bool td_delta_consistent(const struct td_delta *d, bool l2)
{
	unsigned n = l2 ? TD_NR_METRICS : TD_NR_L1;
	int64_t floor = -(int64_t)(d->qerr > INT64_MAX ? INT64_MAX : d->qerr);

	if (d->slots < 0)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (d->cat[i] < floor)
			return false;
	return true;
}

/*
 * A source that measures level 2 for this delta says so in its flags
 * (TD_RESULT_L2: Arm N3/V3 per region, arm_level2.c); with TD_RESULT_L2_FE_BE
 * retiring and bad speculation have no children: 0, not the whole
 * parent that parent-minus-child would give them.
 */
void td_decode_src(const struct td_delta *d, bool l2, unsigned src,
		   struct td_result *res)
{
	td_decode(d, l2 || (src & TD_RESULT_L2), res);
	if (!(res->flags & TD_RESULT_L2) || !(src & TD_RESULT_L2_FE_BE))
		return;
	res->l2[TD_LIGHT_OPS] = 0;
	res->l2[TD_MACHINE_CLEARS] = 0;
	res->flags |= TD_RESULT_L2_FE_BE;
}

void td_decode(const struct td_delta *d, bool l2, struct td_result *res)
{
	/* unsigned: absurd deltas (fuzzing) wrap instead of overflowing */
	/* SMT contention (0 but on AMD) is in the sum. */
	int64_t smt = d->cat[TD_M_SMT];
	int64_t sum = (int64_t)((uint64_t)d->cat[TD_M_RETIRING] +
				(uint64_t)d->cat[TD_M_BAD_SPEC] +
				(uint64_t)d->cat[TD_M_FE_BOUND] +
				(uint64_t)d->cat[TD_M_BE_BOUND] + (uint64_t)smt);
	double inv, e1;

	memset(res->l1, 0, sizeof(res->l1));
	memset(res->l2, 0, sizeof(res->l2));
	res->smt_contention = 0;
	res->slots = d->slots > 0 ? (uint64_t)d->slots : 0;
	res->flags = res->slots < TD_SHORT_SLOTS ? TD_RESULT_SHORT : 0;
	if (sum <= 0) {
		res->err = 1;
		return;
	}
	inv = 1.0 / (double)sum;
	for (int i = 0; i < TD_L1_COUNT; i++)
		res->l1[i] = clamp01(d->cat[i] * inv);
	res->smt_contention = clamp01((double)smt * inv);
	e1 = ((double)d->qerr + fabs(255.0 * (double)d->slots - (double)sum)) *
	     inv;
	if (l2) {
		decode_l2(d, inv, res);
		res->flags |= TD_RESULT_L2;
		e1 *= 2;
	}
	res->err = e1 < 1 ? e1 : 1;
}
