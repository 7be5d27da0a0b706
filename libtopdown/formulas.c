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

#include "generic.h"

/*
 * AMD Zen 4 (W=6) / Zen 5 (W=8) PipelineL1: slots = W x ls_not_halted_cyc,
 * FE, BE and SMT contention from de_no_dispatch_per_slot, retiring =
 * ex_ret_ops, bad speculation = de_src_op_disp.all - ex_ret_ops (perf
 * amdzen4/amdzen5 pipeline.json; arm-amd-topdown.md section 5.2).
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

/*
 * Intel V4.5, Sandy Bridge .. Cascade Lake (reference 001, "V4.5"):
 * slots = W x clocks, FE = IDQ_UOPS_NOT_DELIVERED.CORE, bad speculation =
 * UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + W x recovery cycles,
 * retiring = RETIRE_SLOTS, backend = the rest.  Per-thread clocks and
 * recovery cycles (the formula's SMT-off form): with SMT on, the per-core
 * _ANY forms halved are the reference's choice, but the kernel lets
 * only privileged users count AnyThread (config bit 21) (inference: its
 * x86 hw_config checks perf_allow_cpu for it), and a per-thread handle
 * must not depend on privilege, so the per-thread form is used; the
 * README says it is approximate with SMT on.
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
 * Intel Atom V2, Tremont .. Skymont (reference 001, "V2.0"; perf's JSON
 * for cpu_atom, intel-kernel-topdown.md section 6): slots = W x
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

void td_formula_counts(const struct td_gen_model *m, const uint64_t *v,
		       struct td_counts *c)
{
	switch (m->formula) {
	case TD_F_ZEN:
		td_formula_zen(m->width, v, c);
		break;
	case TD_F_V45:
		td_formula_v45(m->width, v, c);
		break;
	case TD_F_ATOM_V2:
		td_formula_atom_v2(m->width, v, c);
		break;
	case TD_F_ARM:
	case TD_F_ARM_CYCLES:
		td_arm_counts(m, v, c); /* raw: applied to deltas */
		break;
	}
}
