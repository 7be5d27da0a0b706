/* SPDX-License-Identifier: MIT */
/*
 * The decoder's body, inline: td_decode and td_delta_consistent (decode.c)
 * are these functions out of line, and a source's fast end with a result
 * inlines them on its delta, so that every route runs the same
 * arithmetic (see decode.c for the formulas and the error bound) while
 * the hot path keeps its categories in registers.
 */
#ifndef TD_DECODE_H
#define TD_DECODE_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

#define TD_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Written so that the compiler makes two branchless min/max of it. */
TD_ALWAYS_INLINE double td_clamp01(double x)
{
	x = x > 0 ? x : 0;
	return x < 1 ? x : 1;
}

TD_ALWAYS_INLINE double td_pos(double x)
{
	return x > 0 ? x : 0;
}

/* Level 2: the measured children, then parent minus child. */
TD_ALWAYS_INLINE void td_decode_l2(const int64_t *cat, double inv,
				   struct td_result *res)
{
	double *l2 = res->l2;
	const double *l1 = res->l1;

	l2[TD_HEAVY_OPS] = td_clamp01((double)cat[TD_M_HEAVY_OPS] * inv);
	l2[TD_BR_MISPREDICT] = td_clamp01((double)cat[TD_M_BR_MISPREDICT] * inv);
	l2[TD_FETCH_LAT] = td_clamp01((double)cat[TD_M_FETCH_LAT] * inv);
	l2[TD_MEM_BOUND] = td_clamp01((double)cat[TD_M_MEM_BOUND] * inv);
	l2[TD_LIGHT_OPS] = td_pos(l1[TD_RETIRING] - l2[TD_HEAVY_OPS]);
	l2[TD_MACHINE_CLEARS] = td_pos(l1[TD_BAD_SPEC] - l2[TD_BR_MISPREDICT]);
	l2[TD_FETCH_BW] = td_pos(l1[TD_FE_BOUND] - l2[TD_FETCH_LAT]);
	l2[TD_CORE_BOUND] = td_pos(l1[TD_BE_BOUND] - l2[TD_MEM_BOUND]);
}

/* No fraction: every field of res as a region without slots has it. */
TD_ALWAYS_INLINE void td_decode_none(struct td_result *res)
{
	memset(res->l1, 0, sizeof(res->l1));
	memset(res->l2, 0, sizeof(res->l2));
	res->smt_contention = 0;
	res->err = 1;
}

/*
 * td_decode (decode.c).  Every field it sets is written once: no clearing
 * first.  The sum wraps instead of overflowing on absurd deltas (fuzzing).
 */
TD_ALWAYS_INLINE void td_decode_inline(const struct td_delta *d, bool l2,
				       struct td_result *res)
{
	const int64_t *cat = d->cat;
	int64_t smt = cat[TD_M_SMT]; /* 0 where not measured; in the sum */
	int64_t sum = (int64_t)((uint64_t)cat[TD_M_RETIRING] +
				(uint64_t)cat[TD_M_BAD_SPEC] +
				(uint64_t)cat[TD_M_FE_BOUND] +
				(uint64_t)cat[TD_M_BE_BOUND] + (uint64_t)smt);
	uint64_t slots = d->slots > 0 ? (uint64_t)d->slots : 0;
	double inv, e1;

	res->slots = slots;
	res->flags = slots < TD_SHORT_SLOTS ? TD_RESULT_SHORT : 0;
	if (sum <= 0) {
		td_decode_none(res);
		return;
	}
	inv = 1.0 / (double)sum;
#pragma GCC unroll 4
	for (int i = 0; i < TD_L1_COUNT; i++)
		res->l1[i] = td_clamp01((double)cat[i] * inv);
	res->smt_contention = td_clamp01((double)smt * inv);
	e1 = ((double)d->qerr + fabs(255.0 * (double)d->slots - (double)sum)) *
	     inv;
	if (l2) {
		td_decode_l2(cat, inv, res);
		res->flags |= TD_RESULT_L2;
		e1 *= 2;
	} else {
		memset(res->l2, 0, sizeof(res->l2));
	}
	res->err = e1 < 1 ? e1 : 1;
}

/* td_delta_consistent (decode.c). */
TD_ALWAYS_INLINE bool td_delta_consistent_inline(const struct td_delta *d,
						 bool l2)
{
	int64_t floor = -(int64_t)(d->qerr > INT64_MAX ? INT64_MAX : d->qerr);
	const int64_t *c = d->cat;
	int64_t low = c[0];

#pragma GCC unroll 8
	for (unsigned i = 1; i < TD_NR_METRICS; i++)
		if (i < TD_NR_L1 || l2)
			low = c[i] < low ? c[i] : low;
	return d->slots >= 0 && low >= floor;
}

#endif
