/* SPDX-License-Identifier: MIT */
/*
 * The Arm PMUv3 source: Arm's TopDown formulas (arm_formulas.c) over an
 * ordinary-counter group of the core's PMU (counters.c, counters_open.c), the
 * core identified by its MIDR (arm_cpu.c), and level 2 on Neoverse N3/V3
 * from a second group kept only where it counts beside level 1
 * (arm_level2.c).  Read with EL0 MRS where perf_user_access allows.
 */
#include "arm.h"
#include "source.h"
#include "sources.h"

static int arm_open(struct td *td, const struct td_open_req *req)
{
	int err = td_generic_open(td, req, td_arm_model);

	if (err < 0)
		return err;
	td_arm_l2_open(td, td_gen_of(td)->gen, req->include_kernel);
	td_gen_of(td)->gen->m.arm.l2 = td_gen_of(td)->gen->l2 != NULL;
	td_gen_fast_setup(td); /* level 1 alone: its second group has times */
	return 0;
}

static int arm_sample(struct td *td, struct td_sample *s)
{
	int err = td_generic_sample(td, s);

	if (err == 0)
		td_arm_l2_sample(td_gen_of(td)->gen, td->path == TD_PATH_RDPMC, &s->c);
	return err;
}

/*
 * Arm's formulas are not linear: applied to the region's raw deltas.
 * Its readings are counts at once (raw_slots and raw 0: nothing to add).
 */
static unsigned arm_delta(const struct td *td, const struct td_counts *a,
			  uint64_t raw_slots, uint64_t raw,
			  const struct td_counts *b, struct td_delta *d)
{
	(void)raw_slots, (void)raw;
	return td_arm_delta(&td_gen_of(td)->gen->m, a, b, d);
}

static void arm_info(const struct td *td, struct td_info *i)
{
	td_generic_info(td, i);
	i->levels = td_gen_of(td)->gen->l2 ? 2 : 1;
	if (td->pmu.rdpmc_knob == 0) /* /proc/sys/kernel/perf_user_access */
		i->flags |= TD_INFO_USER_ACCESS_OFF;
	if (td_gen_of(td)->gen->l2_unfit)
		i->flags |= TD_INFO_L2_NO_COUNTERS;
}

const struct td_source_ops td_source_arm = {
	.name = "arm",
	.handle_size = sizeof(struct td_gen_handle),
	.open = arm_open,
	.close = td_generic_close,
	.sample = arm_sample,
	.delta = arm_delta,
	.consistent = td_generic_consistent,
	.info = arm_info,
	.fast_begin = td_gen_fast_begin,
	.fast_end = td_gen_fast_end,
	.fast_end_first = td_gen_fast_end_first_locked,
	.begin_counts = td_gen_begin_counts,
};
