/* SPDX-License-Identifier: MIT */
/*
 * Arm level 2 (Neoverse N3, V3): Arm's Topdown_Frontend and
 * Topdown_Backend stall-cycle events (Arm's telemetry-solution
 * neoverse-n3/v3.json; perf's arm64 neoverse-v3/metrics.json) as
 * a second group beside level 1's, kept only when both groups count
 * together.  Level 1 already takes six event counters and the cycle
 * counter, so on a six-counter part level 2 does not fit and is not
 * multiplexed in: that would make level 1 a scaled estimate too.  The
 * budget is probed as counters_open.c probes level 1's (EINVAL at open, never
 * scheduled right after the enable); its failure sets l2_unfit, which
 * td_query reports as TD_INFO_L2_NO_COUNTERS.
 *
 * Readings put the level-2 events, cumulative, in td_counts.cat[] after
 * level 1's, and in TD_ARM_L2_GAP the time the group was not counting
 * plus its failed readings: a region whose gap grew gets level 1 only
 * (td_arm_delta), so TD_RESULT_L2 means level 2 counted all along.
 */
#include <errno.h>

#include "arm.h"

/* Level 1's time not counting (time_enabled - time_running), ns. */
static int l1_unsched(const struct td_gen *g, uint64_t *ns)
{
	uint64_t v[TD_GEN_MAX], t[2];
	int err = td_gen_read_group(g, v, t);

	*ns = t[0] - t[1];
	return err;
}

/*
 * After level 1 is open and td->path chosen.  Never fails td_open: a
 * handle without level 2 is still a handle.  The kernel reschedules
 * every flexible group when one is enabled; level 1, the older, comes
 * first, but that level 1 still counts all along is checked, not
 * assumed.  On the RDPMC path level 2 must offer RDPMC too: a read(2)
 * per region end would put system calls on the hot path.
 */
void td_arm_l2_open(struct td *td, struct td_gen *g, bool include_kernel)
{
	struct td_gen *l2;
	uint64_t before = 0, after = 0;
	int err;

	/* Zen's nr2 is multiplexed instead (td_gen_open_l2_mux): Arm only */
	if (g->m.formula != TD_F_ARM || !g->m.nr2 || !(l2 = td_gen_sub(g, g->m.config2, g->m.nr2)))
		return;
	err = l1_unsched(g, &before);
	if (err == 0)
		err = td_gen_group_open(td, l2, td->pmu.type, include_kernel,
					true);
	if (err == 0)
		err = l1_unsched(g, &after);
	if (err == 0 && after != before)
		err = -ENOSPC;
	if (err == 0 && td->path == TD_PATH_RDPMC &&
	    !td_gen_rdpmc_offered(td, l2))
		err = -EOPNOTSUPP;
	if (err < 0) {
		td_gen_free(td, l2);
		g->l2_unfit = err == -ENOSPC;
		return;
	}
	g->l2 = l2;
}

/* Level 2's events into c, after level 1's (td_arm_counts). */
void td_arm_l2_sample(struct td_gen *g, bool rdpmc, struct td_counts *c)
{
	uint64_t w[TD_GEN_MAX], t[2];

	if (!g->l2)
		return;
	if (td_gen_values(g->l2, rdpmc, w, t) < 0) {
		g->l2_fails++;
		c->cat[TD_ARM_L2_GAP] = g->l2_gap + g->l2_fails;
		return; /* the events stay 0: this region has no level 2 */
	}
	for (int k = 0; k < TD_ARM2_NR; k++)
		c->cat[TD_ARM_L2_AT + k] = w[k];
	g->l2_gap = t[0] - t[1];
	c->cat[TD_ARM_L2_GAP] = g->l2_gap + g->l2_fails;
}
