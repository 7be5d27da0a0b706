/* SPDX-License-Identifier: MIT */
/*
 * Arm's TopDown level 1 (Arm's Topdown Methodology for Neoverse;
 * telemetry-solution data/pmu/cpu/neoverse/; perf's arm64 metrics.json).
 *
 * Retiring and bad speculation split the non-stalled slots by the ratio
 * OP_RETIRED / OP_SPEC, so unlike formulas.c these are not linear in the
 * counters: readings keep the raw cumulative events (td_arm_counts) and
 * the formula is applied to a region's deltas (td_arm_delta), giving
 * category slots x 255 as every other source does.  td_decode then
 * normalises by the sum, which is the whole of slots: per-mispredict
 * corrections move slots between categories (kf + kb = kbs), they do not
 * create any (an inference from the formulas; the algebra holds
 * exactly when STALL_SLOT = STALL_SLOT_FRONTEND + STALL_SLOT_BACKEND).
 */
#include <string.h>

#include "arm.h"
#include "decode.h"

void td_arm_counts(const struct td_gen_model *m, const uint64_t *v,
		   struct td_counts *c)
{
	const struct td_arm_params *p = &m->arm;

	td_counts_zero_cats(c);
	for (int k = 0; k < TD_ARM_NR; k++)
		c->cat[k] = p->at[k] >= 0 ? v[p->at[k]] : 0;
	c->slots = p->slots * c->cat[TD_ARM_CYC];
}

/*
 * Counter budget (counters.c, td_formula_derive): STALL_SLOT =
 * STALL_SLOT_FRONTEND + STALL_SLOT_BACKEND (the event's description in
 * Arm's PMUv3 event list; an inference), which td_arm_fractions treats
 * as it treats the event (derived_stall).
 */
void td_arm_derive(const struct td_gen_model *m, unsigned derived,
		   uint64_t *v)
{
	const int8_t *at = m->arm.at;

	if (m->formula == TD_F_ARM && (int)derived == at[TD_ARM_STALL])
		v[derived] = v[at[TD_ARM_FE]] + v[at[TD_ARM_BE]];
}

/*
 * dv: the region's event deltas; f: fractions of S x CPU_CYCLES in
 * TD_M_* order.  With T = S x CYC, X the per-core mispredict/flush event:
 *   FE  = STALL_SLOT_FRONTEND / T - kf x X / CYC
 *   BE  = STALL_SLOT_BACKEND / T - kb x X / CYC
 *   BS  = (1 - OP_RETIRED / OP_SPEC) x (1 - STALL_SLOT / T) + kbs x X / CYC
 *   RET = OP_RETIRED / OP_SPEC x (1 - STALL_SLOT / T)
 * (N2 r0p3, V2: kf 1, kb 3, kbs 4; V1: 4, 0, 4; N3, V3 with
 * STALL_FRONTEND_FLUSH: 1, 0, 1; SBSA generic: 0, 0, 0.)
 * N2 r0p0..r0p2, erratum: STALL_SLOT and STALL_SLOT_FRONTEND minus
 * CPU_CYCLES first (Arm's neoverse-n2.json r0p2; perf's
 * neoverse-n2-v2 metrics via strcmp_cpuid_str 0x410fd493).
 * STALL_SLOT derived as FE + BE: its event definition ("the sum of
 * STALL_SLOT_FRONTEND and STALL_SLOT_BACKEND"), before the erratum
 * correction, which then applies to it as to the event.
 */
static inline __attribute__((always_inline)) void
fractions(const struct td_arm_params *p, const double *dv, double *f)
{
	double cyc = dv[TD_ARM_CYC], t = p->slots * cyc;
	double fe = dv[TD_ARM_FE], be = dv[TD_ARM_BE];
	double stall = p->derived_stall ? fe + be : dv[TD_ARM_STALL];
	double ratio, busy, x;

	memset(f, 0, 4 * sizeof(*f));
	if (cyc <= 0)
		return;
	if (p->erratum) {
		fe -= cyc;
		stall -= cyc;
	}
	ratio = dv[TD_ARM_SPEC] > 0 ? dv[TD_ARM_RET] / dv[TD_ARM_SPEC] : 0;
	busy = 1 - stall / t;
	x = dv[TD_ARM_X] / cyc;
	f[TD_M_FE_BOUND] = fe / t - p->kf * x;
	f[TD_M_BE_BOUND] = be / t - p->kb * x;
	f[TD_M_BAD_SPEC] = (1 - ratio) * busy + p->kbs * x;
	f[TD_M_RETIRING] = ratio * busy;
}

/* Inlined where a delta is made, so that dv and f stay in registers. */
void td_arm_fractions(const struct td_arm_params *p, const double *dv,
		      double *f)
{
	fractions(p, dv, f);
}

/*
 * Neoverse N1 has no slot events: Arm's Cycle_Accounting stage instead
 * (neoverse-n1.json): frontend = STALL_FRONTEND / CPU_CYCLES, backend =
 * STALL_BACKEND / CPU_CYCLES.  Reported in l1[TD_FE_BOUND] and
 * l1[TD_BE_BOUND], the cycles with neither in l1[TD_RETIRING], slots
 * counting cycles, under TD_RESULT_CYCLES: never slot-based TopDown
 * (reporting them so, labelled, is an inference).
 */
static inline __attribute__((always_inline)) void
cycles_cats(const double *dv, int64_t *cat)
{
	cat[TD_M_FE_BOUND] = (int64_t)(255 * dv[TD_ARM_FE]);
	cat[TD_M_BE_BOUND] = (int64_t)(255 * dv[TD_ARM_BE]);
	cat[TD_M_RETIRING] = (int64_t)(255 * (dv[TD_ARM_CYC] - dv[TD_ARM_FE] -
					      dv[TD_ARM_BE]));
	cat[TD_M_BAD_SPEC] = 0;
}

/* Nearest integer, without libm: static consumers link no -lm. */
static int64_t nearest(double x)
{
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

/*
 * A category the formula makes negative (its per-mispredict or flush
 * correction exceeding the stall slots it corrects, or on N1 stall
 * cycles overlapping) is set to 0, not left for td_decode to clamp: the
 * categories then sum to more than the slots, so td_decode normalises
 * by that sum and its err, (|255 x slots - sum| + qerr) / sum, widens
 * by the amount cut off, which the user then sees (fractions still sum
 * to 1).
 */
static inline __attribute__((always_inline)) void
clamp_negative(int64_t *cat)
{
#pragma GCC unroll 4
	for (int i = 0; i < TD_NR_L1; i++)
		if (cat[i] < 0)
			cat[i] = 0;
}

static double share(int64_t part, int64_t whole)
{
	double f = whole > 0 ? (double)part / (double)whole : 0;

	return f < 0 ? 0 : (f > 1 ? 1 : f);
}

/*
 * Level 2 of N3 and V3 (arm_level2.c), only if its group counted all along
 * (TD_ARM_L2_GAP unchanged).  Arm's frontend_mem_bound =
 * STALL_FRONTEND_MEMBOUND / STALL_FRONTEND and backend_mem_bound =
 * STALL_BACKEND_MEMBOUND / STALL_BACKEND are shares of stall cycles
 * (telemetry-solution neoverse-v3.json); scaled onto level 1's frontend and
 * backend slots they become fetch latency and memory bound.  That
 * stalled cycles and stalled slots split alike is an inference,
 * not Arm's statement.  td_decode_src makes fetch bandwidth and core
 * bound the rest of their parents and leaves retiring's and bad
 * speculation's children 0 (TD_RESULT_L2_FE_BE).
 */
static unsigned l2_delta(const struct td_counts *a, const struct td_counts *b,
			 struct td_delta *d)
{
	int64_t e[TD_ARM2_NR];

	if (b->cat[TD_ARM_L2_GAP] != a->cat[TD_ARM_L2_GAP])
		return 0;
	for (int k = 0; k < TD_ARM2_NR; k++)
		e[k] = (int64_t)(b->cat[TD_ARM_L2_AT + k] -
				 a->cat[TD_ARM_L2_AT + k]);
	d->cat[TD_M_FETCH_LAT] = nearest(share(e[TD_ARM2_FE_MEM],
					       e[TD_ARM2_FE]) *
					 (double)d->cat[TD_M_FE_BOUND]);
	d->cat[TD_M_MEM_BOUND] = nearest(share(e[TD_ARM2_BE_MEM],
					       e[TD_ARM2_BE]) *
					 (double)d->cat[TD_M_BE_BOUND]);
	return TD_RESULT_L2 | TD_RESULT_L2_FE_BE;
}

/*
 * Level 1's categories (cat[TD_M_*] below TD_NR_L1) of a region whose
 * events changed by dv[] (TD_ARM_* order) over `slots` slots, and the
 * flags.
 */
static inline __attribute__((always_inline)) unsigned
l1_cats(const struct td_gen_model *m, const double *dv, int64_t slots,
	int64_t *cat)
{
	double f[4];
	unsigned flags = 0;

	_Static_assert(TD_NR_L1 == 4 && TD_M_RETIRING < 4 &&
			       TD_M_BAD_SPEC < 4 && TD_M_FE_BOUND < 4 &&
			       TD_M_BE_BOUND < 4,
		       "level 1 is cat[0..3]");
	if (m->formula == TD_F_ARM_CYCLES) {
		cycles_cats(dv, cat);
		flags = TD_RESULT_CYCLES;
	} else {
		fractions(&m->arm, dv, f);
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			cat[i] = nearest(f[i] * 255.0 * (double)slots);
	}
	clamp_negative(cat);
	return flags;
}

/* The same as a delta: every category but level 2's, and the flags. */
static inline __attribute__((always_inline)) unsigned
l1_delta(const struct td_gen_model *m, const double *dv, int64_t slots,
	 struct td_delta *d)
{
	memset(d->cat, 0, sizeof(d->cat));
	d->slots = slots;
	return l1_cats(m, dv, slots, d->cat);
}

unsigned td_arm_delta(const struct td_gen_model *m, const struct td_counts *a,
		      const struct td_counts *b, struct td_delta *d)
{
	double dv[TD_ARM_NR];
	unsigned flags;

	for (int k = 0; k < TD_ARM_NR; k++)
		dv[k] = (double)(b->cat[k] - a->cat[k]);
	flags = l1_delta(m, dv, (int64_t)(b->slots - a->slots), d);
	if (m->arm.l2 && d->slots > 0) /* no slots: nothing measured */
		flags |= l2_delta(a, b, d);
	return flags;
}

/*
 * td_arm_delta from zero counts to the counts of values v (config[]
 * order, derived event filled in), without those counts: each event's
 * delta is its value (td_arm_counts copies v[at[k]], 0 where absent),
 * the slots S x CPU_CYCLES's, in the same integer and double steps, so
 * the result is the same bit for bit.  A fast end's record's, when it
 * is finished (counters_fast.c finish_values): with a level-2 group
 * open, the counts' route, for its flags.
 */
unsigned td_arm_values_delta(const struct td_gen_model *m, const uint64_t *v,
			     struct td_delta *d)
{
	static const struct td_counts zero;
	const int8_t *at = m->arm.at;
	double dv[TD_ARM_NR];
	uint64_t cyc;
	struct td_counts c;

	if (TD_UNLIKELY(m->arm.l2)) {
		td_arm_counts(m, v, &c);
		return td_arm_delta(m, &zero, &c, d);
	}
#pragma GCC unroll 8
	for (int k = 0; k < TD_ARM_NR; k++)
		dv[k] = at[k] >= 0 ? (double)v[at[k]] : (double)(uint64_t)0;
	cyc = at[TD_ARM_CYC] >= 0 ? v[at[TD_ARM_CYC]] : 0;
	return l1_delta(m, dv, (int64_t)(m->arm.slots * cyc), d);
}

/*
 * td_arm_values_delta's delta of v, then its result as the general
 * route makes that of a delta without level 2 (core/region_slow.c
 * td_delta_result: td_decode_src, td_decode_inline, the source's flags
 * or'ed in): a fast end's (counters_fast.c end_result), whose handle has
 * no level-2 group (td_gen_fast_setup: its readings need their times),
 * so neither m->arm.l2 nor a level-2 flag.  One function, so that the
 * delta never leaves registers; the same functions (l1_cats, the whole
 * of l1_delta but its zeroing, and td_decode_inline) on the same doubles
 * in the same order, so the same result bit for bit (test_arm.c
 * test_values_result_bitwise).  v holds TD_GEN_MAX values, 0 at TD_ARM_ABSENT
 * (a fast end's differences: fast_take fills the model's positions
 * alone), so that an absent event reads 0, (double)0 as
 * td_arm_values_delta gives it, without a test.  Returns the delta's
 * slots.
 */
int64_t td_arm_values_result(const struct td_gen_model *m, const uint64_t *v,
			     uint64_t qerr, struct td_result *res)
{
	const uint8_t *in = m->arm.in;
	double dv[TD_ARM_NR];
	struct td_delta d;
	unsigned flags;

#pragma GCC unroll 8
	for (int k = 0; k < TD_ARM_NR; k++)
		dv[k] = (double)v[in[k]];
	d.slots = (int64_t)(m->arm.slots * v[in[TD_ARM_CYC]]);
	flags = l1_cats(m, dv, d.slots, d.cat);
	/* of what l1_delta zeroes, all td_decode_inline reads without L2 */
	d.cat[TD_M_SMT] = 0;
	d.qerr = qerr;
	td_decode_inline(&d, false, res);
	res->flags |= flags;
	return d.slots;
}
