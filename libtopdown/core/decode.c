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
 *
 * The arithmetic itself is in decode.h, inline, shared with the fast end.
 */
#include "decode.h"

/* smt_contention took one of the reserved words: the size is ABI. */
_Static_assert(sizeof(struct td_result) == 168,
	       "struct td_result changed size");

/*
 * Without a reset the library did not see, every measured category's
 * delta is at least its true value (>= 0) minus the quantisation bound:
 * one below -qerr proves the counters were zeroed inside the region.
 */
bool td_delta_consistent(const struct td_delta *d, bool l2)
{
	return td_delta_consistent_inline(d, l2);
}

/*
 * A source that measures level 2 for this delta says so in its flags
 * (TD_RESULT_L2, where it decides per region); with TD_RESULT_L2_FE_BE
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
	td_decode_inline(d, l2, res);
}

