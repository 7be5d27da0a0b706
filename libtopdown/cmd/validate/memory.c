/* SPDX-License-Identifier: MIT */
/*
 * Check 5: the memory drill-down (TD_OPT_MEMORY) on a contrasting pair
 * of pointer chases (workloads.c), each a dependent load per step over a
 * random cyclic permutation of 64-byte lines:
 *   L1 chase    16 KiB, held by L1: each load waits for L1's latency and
 *               nothing else, which perf's tma_l1_bound counts (cycles
 *               with loads outstanding, EXE_ACTIVITY.BOUND_ON_LOADS,
 *               less those with an L1 miss outstanding,
 *               MEMORY_ACTIVITY.STALLS_L1D_MISS: sapphirerapids/
 *               spr-metrics.json);
 *   DRAM chase  at least 4 times the last-level cache: nearly every load
 *               misses it, tma_dram_bound's stalls (STALLS_L3_MISS).
 * It passes when the L1 chase's largest node is l1_bound, or its memory
 * bound is small (not above perf's MetricThreshold of tma_memory_bound,
 * 0.2), and the DRAM chase's largest node is dram_bound.  Where the
 * drill-down cannot be had (td_open refuses the option) the check is
 * skipped with td_strerror's reason.
 *
 * Emulated, each chase's breakdown and where its memory bound stalls are
 * the emulator's synthetic answer, set here before the chase runs; the
 * library's route (the option's group, its readings, the nodes' split)
 * is the real one, and that is all the check then shows.
 */
#include <string.h>

#include "validate.h"

#define V_MEM_CHECK "memory drill-down"
#define V_MEM_SMALL 0.2 /* perf's MetricThreshold: tma_memory_bound > 0.2 */

static const char *const node_names[TD_MEM_COUNT] = {
	"l1_bound", "l2_bound", "l3_bound", "dram_bound", "store_bound",
};

struct v_chase_desc {
	const char *name;
	int expect;                /* enum td_mem expected to be largest */
	/* Emulated only: the synthetic mix (as struct v_kernel_desc's) and
	 * memory bound's shares by node, in enum td_mem's order. */
	double emu_mix[8];
	double emu_mem[TD_MEM_COUNT];
};

static const struct v_chase_desc chases[V_CHASE_COUNT] = {
	[V_CHASE_L1] = { "L1 chase", TD_L1_BOUND,
		{ 0.25, 0.02, 0.05, 0.68, 0.01, 0.01, 0.03, 0.45 },
		{ 0.90, 0.06, 0.04, 0, 0 } },
	[V_CHASE_DRAM] = { "DRAM chase", TD_DRAM_BOUND,
		{ 0.08, 0.02, 0.05, 0.85, 0.00, 0.01, 0.03, 0.75 },
		{ 0.04, 0.03, 0.08, 0.85, 0 } },
};

/* Slot-weighted sums over the regions that measured the nodes. */
struct v_mem_agg {
	double mem_bound, node[TD_MEM_COUNT];
	uint64_t slots;
	unsigned regions, flagged, without;
};

static void run_chase(struct td *td, const struct v_opts *o,
		      enum v_chase c, struct v_mem_agg *a)
{
	memset(a, 0, sizeof(*a));
	v_emu_set_mix(chases[c].emu_mix);
	v_emu_set_mem_shares(chases[c].emu_mem);
	v_chase_run(c); /* warm the caches (and the TLB) */
	for (int i = 0; i < o->regions; i++) {
		struct td_region reg;
		struct td_result res;
		double w;

		memset(&reg, 0, sizeof(reg));
		if (td_region_begin(td, &reg) < 0)
			continue;
		v_chase_run(c);
		if (td_region_end(td, &reg, &res) < 0)
			continue;
		a->regions++;
		if (res.flags & TD_RESULT_UNRELIABLE) {
			a->flagged++;
			continue;
		}
		if (!(res.flags & TD_RESULT_MEMORY)) {
			a->without++; /* a hybrid part's E-core stint */
			continue;
		}
		w = (double)res.slots;
		a->slots += res.slots;
		a->mem_bound += res.l2[TD_MEM_BOUND] * w;
		for (int n = 0; n < TD_MEM_COUNT; n++)
			a->node[n] += res.mem[n] * w;
	}
	v_emu_set_mem_shares(NULL);
	v_emu_set_mix(NULL);
	for (int n = 0; a->slots && n < TD_MEM_COUNT; n++)
		a->node[n] /= (double)a->slots;
	if (a->slots)
		a->mem_bound /= (double)a->slots;
}

static int largest(const struct v_mem_agg *a)
{
	int big = 0;

	for (int n = 1; n < TD_MEM_COUNT; n++)
		if (a->node[n] > a->node[big])
			big = n;
	return big;
}

static bool chase_ok(enum v_chase c, const struct v_mem_agg *a)
{
	if (!a->slots)
		return false;
	if (c == V_CHASE_L1 && a->mem_bound <= V_MEM_SMALL)
		return true;
	return largest(a) == chases[c].expect;
}

/* "L1 chase (16 KiB): memory bound 0.450, largest l1_bound 0.405" */
static int describe(char *out, size_t n, enum v_chase c,
		    const struct v_mem_agg *a)
{
	size_t kib = v_chase_bytes(c) >> 10;

	if (!a->slots)
		return snprintf(out, n, "%s: no region with the nodes (%u of "
				"%u flagged, %u without them)", chases[c].name,
				a->flagged, a->regions, a->without);
	return snprintf(out, n, "%s (%zu %s): memory bound %.3f, largest %s "
			"%.3f", chases[c].name, kib >= 1024 ? kib >> 10 : kib,
			kib >= 1024 ? "MiB" : "KiB", a->mem_bound,
			node_names[largest(a)], a->node[largest(a)]);
}

static void figures(struct v_report *r, const struct v_mem_agg *a)
{
	v_figure(r, V_MEM_CHECK,
		 "{\"l1_chase\": {\"bytes\": %zu, \"regions\": %u, "
		 "\"flagged\": %u, \"without_nodes\": %u, \"memory_bound\": "
		 "%.5f, \"l1_bound\": %.5f, \"l2_bound\": %.5f, \"l3_bound\": "
		 "%.5f, \"dram_bound\": %.5f, \"store_bound\": %.5f}, "
		 "\"dram_chase\": {\"bytes\": %zu, \"regions\": %u, "
		 "\"flagged\": %u, \"without_nodes\": %u, \"memory_bound\": "
		 "%.5f, \"l1_bound\": %.5f, \"l2_bound\": %.5f, \"l3_bound\": "
		 "%.5f, \"dram_bound\": %.5f, \"store_bound\": %.5f}}",
		 v_chase_bytes(V_CHASE_L1), a[0].regions, a[0].flagged,
		 a[0].without, a[0].mem_bound, a[0].node[0], a[0].node[1],
		 a[0].node[2], a[0].node[3], a[0].node[4],
		 v_chase_bytes(V_CHASE_DRAM), a[1].regions, a[1].flagged,
		 a[1].without, a[1].mem_bound, a[1].node[0], a[1].node[1],
		 a[1].node[2], a[1].node[3], a[1].node[4]);
}

void v_check_memory(const struct v_opts *o, struct v_report *r)
{
	struct td_options opts = TD_OPTIONS_INIT;
	struct v_mem_agg a[V_CHASE_COUNT];
	struct td *td = NULL;
	char l1[160], dram[160];
	enum v_status st;
	int err;

	opts.flags = TD_OPT_MEMORY;
	err = td_open(&td, &opts);
	if (err < 0) {
		v_add(r, V_MEM_CHECK, V_SKIP, "skipped: %s", td_strerror(err));
		return;
	}
	for (int c = 0; c < V_CHASE_COUNT; c++)
		run_chase(td, o, (enum v_chase)c, &a[c]);
	td_close(td);
	describe(l1, sizeof(l1), V_CHASE_L1, &a[V_CHASE_L1]);
	describe(dram, sizeof(dram), V_CHASE_DRAM, &a[V_CHASE_DRAM]);
	figures(r, a);
	if (!a[0].slots && !a[1].slots && !a[0].flagged && !a[1].flagged) {
		v_add(r, V_MEM_CHECK, V_SKIP, "skipped: no region ran where "
		      "the drill-down counts (hybrid E-cores?); %s; %s", l1,
		      dram);
		return;
	}
	st = chase_ok(V_CHASE_L1, &a[V_CHASE_L1]) &&
	     chase_ok(V_CHASE_DRAM, &a[V_CHASE_DRAM]) ? V_PASS : V_FAIL;
	v_add(r, V_MEM_CHECK, st, "%s%s; %s",
	      r->emulated ? "[EMULATED: the emulator's synthetic mix and "
			    "memory shares] " : "", l1, dram);
}
