/* SPDX-License-Identifier: MIT */
/*
 * The Arm source's own layout and entries: where its raw events sit in
 * struct td_counts, and the functions of arm_formulas.c, arm_level2.c,
 * arm_cpu.c and arm_pmu.c.  Built on the ordinary-counter group
 * (counter_group.h), which reaches Arm's formulas only through the
 * model (struct td_gen_family), never through this header.  Not
 * installed.
 */
#ifndef TD_ARM_H
#define TD_ARM_H

#include "counter_group.h"

/*
 * Arm: the raw events a formula reads, each kept cumulative in
 * td_counts.cat[] at its own position (the formulas are not linear in
 * them, so they are applied to a region's deltas: td_arm_delta).  X is
 * BR_MIS_PRED (N2, V1, V2) or STALL_FRONTEND_FLUSH (N3, V3).  On N1, FE
 * and BE are the cycle events STALL_FRONTEND and STALL_BACKEND.
 */
enum { TD_ARM_CYC, TD_ARM_FE, TD_ARM_BE, TD_ARM_RET, TD_ARM_SPEC, TD_ARM_X,
       TD_ARM_STALL, TD_ARM_NR };
/* Each is an event of the level-1 group: td_arm_params.at[] holds them. */
_Static_assert(TD_ARM_NR <= TD_GEN_MAX, "Arm events exceed td_arm_params.at");
/*
 * td_arm_params.in[]'s position of an absent event: past every event a
 * model opens (one per TD_ARM_* role at most: arm_cpu.c add), so that a
 * fast end's values hold 0 there (counters_fast.c fast_take).
 */
#define TD_ARM_ABSENT (TD_GEN_MAX - 1)
_Static_assert(TD_ARM_NR <= TD_ARM_ABSENT,
	       "TD_ARM_ABSENT lies past every Arm model's events");
/*
 * Arm level 2 (N3, V3; arm_level2.c): the second group's events, config2[]
 * order, kept in td_counts.cat[] from TD_ARM_L2_AT on; TD_ARM_L2_GAP
 * counts the group's time not counting and failed readings.
 */
enum { TD_ARM2_FE, TD_ARM2_FE_MEM, TD_ARM2_BE, TD_ARM2_BE_MEM, TD_ARM2_NR };
#define TD_ARM_L2_AT  TD_ARM_NR
#define TD_ARM_L2_GAP (TD_ARM_L2_AT + TD_ARM2_NR)
_Static_assert(TD_ARM_L2_GAP < TD_NR_COUNTS, "Arm counts exceed td_counts");

/* The Arm core PMU's own part (arm_pmu.c), besides struct td_pmu. */
struct td_arm_pmu {
	unsigned cpu;         /* the CPU td_open ran on */
	unsigned slots;       /* caps/slots, 0 if absent */
};

/* arm_formulas.c: Arm's level 1 on deltas; pure. */
TD_HIDDEN void td_arm_counts(const struct td_gen_model *m, const uint64_t *v,
			     struct td_counts *c);
TD_HIDDEN void td_arm_derive(const struct td_gen_model *m, unsigned derived,
			     uint64_t *v);
TD_HIDDEN void td_arm_fractions(const struct td_arm_params *p,
				const double *dv, double *f);
TD_HIDDEN unsigned td_arm_delta(const struct td_gen_model *m,
				const struct td_counts *a,
				const struct td_counts *b, struct td_delta *d);
TD_HIDDEN unsigned td_arm_values_delta(const struct td_gen_model *m,
				       const uint64_t *v, struct td_delta *d);
TD_HIDDEN int64_t td_arm_values_result(const struct td_gen_model *m,
				       const uint64_t *v, uint64_t qerr,
				       struct td_result *res);

/* arm_level2.c: Arm level 2's group, opened after level 1's, and read. */
TD_HIDDEN void td_arm_l2_open(struct td *td, struct td_gen *g,
			      bool include_kernel);
TD_HIDDEN void td_arm_l2_sample(struct td_gen *g, bool rdpmc,
				struct td_counts *c);

/* arm_cpu.c: Arm core identification (MIDR_EL1) and its model. */
TD_HIDDEN int td_arm_lookup(uint32_t midr, unsigned caps_slots,
			    struct td_gen_model *m);
TD_HIDDEN int td_arm_midr_parse(const char *cpuinfo, uint32_t *midr);
TD_HIDDEN int td_arm_model(const struct td *td, const struct td_open_req *req,
			   struct td_gen_model *m);

/* arm_pmu.c: the Arm core PMU of the current CPU; -ENODEV if none. */
TD_HIDDEN int td_arm_pmu_find(struct td_pmu *pmu, struct td_arm_pmu *arm);

#endif
