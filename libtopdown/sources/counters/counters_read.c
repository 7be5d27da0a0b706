/* SPDX-License-Identifier: MIT */
/*
 * Reading a group of ordinary counters: every event by RDPMC (MRS on
 * arm64) under its page's seqlock, with the standard formula of
 * linux/perf_event.h's UAPI comment and libperf's perf_mmap__read_self:
 *   count = offset + sign_extend(rdpmc(index - 1), pmc_width),
 * checked by a plausibility guard, and else one read(2) of the group,
 * which for ordinary counters is exact and resets nothing.
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "counter_group.h"
#include "userpage.h"

/* read(2) of the group: {nr, time_enabled, time_running, value[nr]}. */
int td_gen_read_group(const struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t buf[3 + TD_GEN_MAX];
	size_t len = (3 + g->nr) * sizeof(uint64_t);
	int n = td_sys_read(g->fd[0], buf, len);

	if (n != (int)len || buf[0] != g->nr)
		return n < 0 ? n : -EIO;
	memcpy(v, buf + 3, g->nr * sizeof(uint64_t));
	times[0] = buf[1];
	times[1] = buf[2];
	return 0;
}

/*
 * One event by RDPMC (MRS on arm64) under its page's seqlock
 * (userpage.h); false when its index is 0 (not counting on this CPU now)
 * or RDPMC is not offered.  Unguarded, the hybrid source's E-core group
 * too: cpu_atom's counters are a subset of cpu_core's (6 of 8 on Alder
 * Lake, arch/x86/events/intel/core.c intel_pmu_init; 8 of 8 where CPUID
 * leaf 0x23 enumerates them, update_pmu_cap), so a move to a P-core
 * between the index load and the RDPMC reads a counter that exists, and
 * the page's lock refuses its value.
 */
static inline bool read_one(const struct perf_event_mmap_page *pc,
			    uint64_t *v, uint64_t *times, uint32_t *lock)
{
	struct td_user_reading r;

	if (!td_user_read(pc, NULL, true, &r))
		return false;
	*v = r.count;
	times[0] = r.time_enabled;
	times[1] = r.time_running;
	*lock = r.lock;
	return true;
}

/* times[] from the leader's page, whose lock goes to g->times_lock. */
static bool read_rdpmc(struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t t[2];
	uint32_t lock;

	if (!read_one(g->pc[0], &v[0], times, &g->times_lock))
		return false;
	for (unsigned k = 1; k < g->nr; k++)
		if (!read_one(g->pc[k], &v[k], t, &lock))
			return false;
	return true;
}

/*
 * The plausibility guard.  An RDPMC reading is trusted because the page's
 * index names our counter; x86 rewrites the page (index 0, lock += 2) at
 * every schedule-out (x86_pmu_del calls perf_event_update_userpage after
 * x86_pmu_stop set PERF_HES_STOPPED, which perf_event_index turns into 0),
 * so the seqlock makes that safe.  Should a page still name a counter
 * another context now owns, the values would be that context's: cheap
 * checks against the last accepted reading catch the common shapes of
 * that (a counter going backwards, a jump no core counts between two
 * readings, a category larger than the slots), and then read(2), exact
 * for ordinary counters and resetting nothing, replaces the reading.
 * Readings that pass cost a subtraction and two compares per event.
 */

/* Category slack over an interval's slots (in-flight skew). */
#define TD_GEN_SKEW_SLOTS 4096

/* Every open event counted forward: cumulative counts never go back. */
static bool steps_plausible(const struct td_gen *g, const uint64_t *v)
{
	for (unsigned k = 0; k < g->nr; k++) {
		uint64_t d = v[g->ev[k]] - g->last[g->ev[k]];

		if ((int64_t)d < 0)
			return false;
	}
	return true;
}

/* No open event jumped by more than TD_GEN_STEP_MAX. */
static bool jumps_plausible(const struct td_gen *g, const uint64_t *v)
{
	for (unsigned k = 0; k < g->nr; k++)
		if (v[g->ev[k]] - g->last[g->ev[k]] > TD_GEN_STEP_MAX)
			return false;
	return true;
}

/*
 * Linear formulas: no category moved by more than a few times the
 * interval's slots (plus skew): a category is a share of the slots, but
 * V4.5's SMT form halves the _ANY clocks, so with the sibling idle a
 * category can reach twice the slots it computes.  Arm keeps raw events
 * in cat[]: not applicable there.
 */
static bool categories_plausible(const struct td_gen *g, const uint64_t *v)
{
	struct td_counts a, b;
	uint64_t slots, bound;

	if (g->m.formula == TD_F_ARM || g->m.formula == TD_F_ARM_CYCLES)
		return true;
	td_formula_counts(&g->m, g->last, &a);
	td_formula_counts(&g->m, v, &b);
	slots = b.slots - a.slots;
	if ((int64_t)slots < 0)
		return false;
	bound = 255 * (4 * slots + TD_GEN_SKEW_SLOTS);
	for (unsigned i = 0; i <= TD_M_SMT; i++) {
		int64_t d = (int64_t)(b.cat[i] - a.cat[i]);

		if (d > (int64_t)bound || d < -(int64_t)bound)
			return false;
	}
	return true;
}

/* Could an exact reading follow the last accepted one? */
static bool consistent(const struct td_gen *g, const uint64_t *v)
{
	return !g->have_last ||
	       (steps_plausible(g, v) && categories_plausible(g, v));
}

/* Model-order values of open ones: the derived one computed. */
void td_gen_model_values(const struct td_gen *g, const uint64_t *open,
			 uint64_t *v)
{
	memset(v, 0, TD_GEN_MAX * sizeof(*v));
	for (unsigned k = 0; k < g->nr; k++)
		v[g->ev[k]] = open[k];
	if (g->derived)
		td_formula_derive(&g->m, g->derived, v);
}

static bool rdpmc_values(struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t open[TD_GEN_MAX];

	if (!read_rdpmc(g, open, times))
		return false;
	td_gen_model_values(g, open, v);
	/* a first RDPMC reading has nothing to compare: read(2) instead */
	return g->have_last && consistent(g, v) && jumps_plausible(g, v);
}

/*
 * Cumulative values of the model's events, v[] in model order: by RDPMC
 * (rdpmc) when the page offers it and the guard accepts the reading, else
 * by read(2) (TD_GEN_BY_READ).  TD_GEN_SUSPECT: read(2)'s exact values do
 * not follow the last accepted ones either, so that one was wrong (a
 * foreign value that looked plausible): the caller flags the regions
 * spanning it.
 */
int td_gen_values(struct td_gen *g, bool rdpmc, uint64_t *v,
		  uint64_t *times)
{
	uint64_t open[TD_GEN_MAX];
	int ret = 0;

	if (!rdpmc || !rdpmc_values(g, v, times)) {
		int err = td_gen_read_group(g, open, times);

		if (err < 0)
			return err;
		td_gen_model_values(g, open, v);
		ret = TD_GEN_BY_READ | (consistent(g, v) ? 0 : TD_GEN_SUSPECT);
	}
	memcpy(g->last, v, sizeof(g->last));
	g->have_last = true;
	return ret;
}
