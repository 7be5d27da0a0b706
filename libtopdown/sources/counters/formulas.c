/* SPDX-License-Identifier: MIT */
/*
 * TopDown level 1 from ordinary counters: one pure function per formula.
 *
 * Every formula here is linear in its counters, so it is applied to the
 * cumulative counter values of each reading, giving monotonic counts in
 * the units PERF_METRICS readings use (struct td_counts: slots, category
 * slots x 255); a region's delta of those is the formula applied to the
 * region's counter deltas, and td_decode turns it into fractions.
 * Arithmetic is modulo 2^64: a derived cumulative category (bad
 * speculation, backend) may dip below zero between readings; only
 * deltas are ever interpreted, as signed values.
 */
#include <string.h>

#include "x86_formulas.h"

/*
 * AMD Zen 4 (W=6) / Zen 5 (W=8) PipelineL1: slots = W x ls_not_halted_cyc,
 * FE, BE and SMT contention from de_no_dispatch_per_slot, retiring =
 * ex_ret_ops, bad speculation = de_src_op_disp.all - ex_ret_ops (perf
 * amdzen4/amdzen5 pipeline.json).
 */
void td_formula_zen(unsigned width, const uint64_t *v, struct td_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->slots = width * v[TD_ZEN_CYC];
	c->cat[TD_M_RETIRING] = 255 * v[TD_ZEN_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * (v[TD_ZEN_DISP] - v[TD_ZEN_RET]);
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_ZEN_FE];
	c->cat[TD_M_BE_BOUND] = 255 * v[TD_ZEN_BE];
	c->cat[TD_M_SMT] = 255 * v[TD_ZEN_SMT];
}

/* part x num / den, 0 when den is 0, at most part (a child of part). */
static int64_t share(int64_t part, uint64_t num, uint64_t den)
{
	double v;

	if (den == 0 || part <= 0)
		return 0;
	v = (double)part * (double)num / (double)den;
	return v < (double)part ? (int64_t)v : part;
}

/*
 * AMD Zen 4/5 PipelineL2 (perf amdzen4/amdzen5 pipeline.json) over a
 * region: cat[] holds its level-1
 * deltas (slots x 255, SMT contention at TD_M_SMT), w[] its level-2
 * event deltas (TD_ZEN2_*); fills the measured level-2 children of cat[]
 * (the rest are parent minus child in td_decode).  Mapping onto struct
 * td_result.l2 (topdown.h):
 *   heavy_ops     = retiring x ex_ret_ucode_ops / ex_ret_ops
 *                   (retiring_microcode)
 *   br_mispredict = bad_spec x ex_ret_brn_misp / (misp + restarts)
 *   fetch_lat     = W x no_ops_from_frontend[cmask=W] / (W x cycles) of
 *                   all slots (frontend_bound_latency)
 *   mem_bound     = backend x ex_no_retire.load_not_complete /
 *                   ex_no_retire.not_complete
 * light ops = retiring_fastpath, machine clears = pipeline restarts,
 * fetch bandwidth, core bound = backend_bound_cpu.  Each ratio's terms
 * are counted in one group (TD_ZEN2_*), so it is exact for the part of
 * the region that group counted.  perf clamps nothing; a child is kept
 * within its parent here so that td_decode's remainders stay >= 0.
 */
void td_formula_zen_l2(const uint64_t *w, int64_t *cat)
{
	int64_t all = cat[TD_M_RETIRING] + cat[TD_M_BAD_SPEC] +
		      cat[TD_M_FE_BOUND] + cat[TD_M_BE_BOUND] + cat[TD_M_SMT];

	cat[TD_M_HEAVY_OPS] = share(cat[TD_M_RETIRING], w[TD_ZEN2_UCODE],
				    w[TD_ZEN2_RET]);
	cat[TD_M_BR_MISPREDICT] = share(cat[TD_M_BAD_SPEC], w[TD_ZEN2_MISP],
					w[TD_ZEN2_MISP] + w[TD_ZEN2_RESTART]);
	cat[TD_M_FETCH_LAT] = share(all, w[TD_ZEN2_FE_CMASK], w[TD_ZEN2_CYC]);
	if (cat[TD_M_FETCH_LAT] > cat[TD_M_FE_BOUND])
		cat[TD_M_FETCH_LAT] =
			cat[TD_M_FE_BOUND] > 0 ? cat[TD_M_FE_BOUND] : 0;
	cat[TD_M_MEM_BOUND] = share(cat[TD_M_BE_BOUND], w[TD_ZEN2_LOAD_NC],
				    w[TD_ZEN2_NC]);
}

/*
 * Intel V4.5, Sandy Bridge .. Cascade Lake (Intel's TMA metrics, as in
 * perf's x86 skylake/skl-metrics.json):
 * slots = W x clocks, FE = IDQ_UOPS_NOT_DELIVERED.CORE, bad speculation =
 * UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + W x recovery cycles,
 * retiring = RETIRE_SLOTS, backend = the rest.  This is the SMT-off form
 * (per-thread clocks and recovery cycles); with SMT on, counters.c uses
 * td_formula_v45_any when the kernel grants AnyThread, else this one,
 * flagged approximate.
 */
void td_formula_v45(unsigned width, const uint64_t *v, struct td_counts *c)
{
	uint64_t slots = width * v[TD_V45_CLK];
	uint64_t bad = v[TD_V45_ISSUED] - v[TD_V45_RET_SLOTS] +
		       width * v[TD_V45_RECOVERY];

	memset(c, 0, sizeof(*c));
	c->slots = slots;
	c->cat[TD_M_RETIRING] = 255 * v[TD_V45_RET_SLOTS];
	c->cat[TD_M_BAD_SPEC] = 255 * bad;
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_V45_IDQ_ND];
	c->cat[TD_M_BE_BOUND] = 255 * (slots - v[TD_V45_IDQ_ND] - bad -
				       v[TD_V45_RET_SLOTS]);
}

/*
 * V4.5 with SMT on (perf's skl-metrics.json): CORE_CLKS =
 * CPU_CLK_UNHALTED.THREAD_ANY / 2, Recovery_Cycles =
 * INT_MISC.RECOVERY_CYCLES_ANY / 2; the rest as
 * above.  W is 4 on every V4.5 core, so W x clocks / 2 stays integral.
 */
void td_formula_v45_any(unsigned width, const uint64_t *v,
			struct td_counts *c)
{
	uint64_t half[TD_V45_NR];

	memcpy(half, v, sizeof(half));
	half[TD_V45_CLK] = 0;
	half[TD_V45_RECOVERY] = 0;
	td_formula_v45(width, half, c);
	c->slots = width * v[TD_V45_CLK] / 2;
	c->cat[TD_M_BAD_SPEC] += 255 * (width * v[TD_V45_RECOVERY] / 2);
	c->cat[TD_M_BE_BOUND] = 255 * c->slots - c->cat[TD_M_RETIRING] -
				c->cat[TD_M_BAD_SPEC] - c->cat[TD_M_FE_BOUND];
}

/*
 * Intel V1, Silvermont and Knights Landing (pmu-tools slm_ratios.py and
 * knl_ratios.py), cycle
 * based: FE = NO_ALLOC_CYCLES.NOT_DELIVERED / clocks, bad speculation =
 * NO_ALLOC_CYCLES.MISPREDICTS / clocks, retiring = UOPS_RETIRED.ALL / (W x
 * clocks), backend by exclusion.  In slots (W x clocks): W x each cycle
 * count; W = 2 on both.
 */
void td_formula_v1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	uint64_t slots = width * v[TD_V1_CLK];
	uint64_t fe = width * v[TD_V1_FE], bad = width * v[TD_V1_BAD];

	memset(c, 0, sizeof(*c));
	c->slots = slots;
	c->cat[TD_M_RETIRING] = 255 * v[TD_V1_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * bad;
	c->cat[TD_M_FE_BOUND] = 255 * fe;
	c->cat[TD_M_BE_BOUND] = 255 * (slots - fe - bad - v[TD_V1_RET]);
}

/*
 * Intel Atom V2, Tremont .. Skymont (perf's JSON for cpu_atom, e.g.
 * alderlake/adl-metrics.json; arch/x86/events/intel/core.c topdown-*
 * aliases): slots = W x
 * CPU_CLK_UNHALTED.CORE, each category its TOPDOWN_*.ALL event.  The four
 * are counted independently; td_decode normalises by their sum and
 * reports how far it is from slots in err.
 */
void td_formula_atom_v2(unsigned width, const uint64_t *v,
			struct td_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->slots = width * v[TD_V2_CLK];
	c->cat[TD_M_RETIRING] = 255 * v[TD_V2_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * v[TD_V2_BAD];
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_V2_FE];
	c->cat[TD_M_BE_BOUND] = 255 * v[TD_V2_BE];
}

/*
 * Counter budget (counters.c): the one event a formula can do without,
 * computed from the others, which must then sum to the slots exactly.
 * Zen: smt_contention = W x cycles - FE - BE - de_src_op_disp.all
 * (inference: empty slots by reason
 * plus dispatched ops partition the slots).  Atom V2: backend = W x
 * clocks - FE - bad - retiring (inference: the V2 TOPDOWN_*.ALL events
 * classify every slot once, so the four partition the slots).  Arm's is
 * its own (td_arm_derive), reached through the model.
 */
void td_formula_derive(const struct td_gen_model *m, unsigned derived,
		       uint64_t *v)
{
	uint64_t slots = m->width * v[0];

	if (m->family)
		m->family->derive(m, derived, v);
	else if (m->formula == TD_F_ZEN && derived == TD_ZEN_SMT)
		v[TD_ZEN_SMT] = slots - v[TD_ZEN_FE] - v[TD_ZEN_BE] -
				v[TD_ZEN_DISP];
	else if (m->formula == TD_F_ATOM_V2 && derived == TD_V2_BE)
		v[TD_V2_BE] = slots - v[TD_V2_FE] - v[TD_V2_BAD] -
			      v[TD_V2_RET];
}

void td_formula_counts(const struct td_gen_model *m, const uint64_t *v,
		       struct td_counts *c)
{
	switch (m->formula) {
	case TD_F_ZEN:
		td_formula_zen(m->width, v, c);
		break;
	case TD_F_V45:
		if (m->any)
			td_formula_v45_any(m->width, v, c);
		else
			td_formula_v45(m->width, v, c);
		break;
	case TD_F_V1:
		td_formula_v1(m->width, v, c);
		break;
	case TD_F_ATOM_V2:
		td_formula_atom_v2(m->width, v, c);
		break;
	case TD_F_ARM:
	case TD_F_ARM_CYCLES:
		m->family->counts(m, v, c); /* raw: applied to deltas */
		break;
	}
}
