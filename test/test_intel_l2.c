/* SPDX-License-Identifier: MIT */
/*
 * Intel level 2 on ordinary counters: Skylake's TopdownL2 (perf's
 * skylake/skl-metrics.json), Sandy Bridge's to Broadwell's
 * (snb-, ivb-, hsw-, bdw-metrics.json) and Gracemont's
 * (alderlaken/adln-metrics.json).  First the formulas against perf's
 * expressions written out here from those files, on random counter
 * sets; then end to end on the emulated Skylake, Sandy Bridge, Haswell,
 * Broadwell and Gracemont, whose level-2 groups the emulated kernel
 * rotates (TD_OPT_L2_MULTIPLEX, or TOPDOWN_L2=multiplex), against the
 * workload's true fractions; Crestmont's frontend and backend children
 * (sierraforest/srf-metrics.json); and the Atom cores perf defines no
 * level 2 for, which stay at level 1 and say nothing about multiplexing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "truth.h"
#include "x86_formulas.h"

/* ---- the formulas against perf's expressions ---------------------------- */

/* xorshift64: reproducible random counter sets */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t below)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return below ? rnd_state % below : 0;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* A delta of level-1 counts since zero (one reading of each group). */
static void delta_of(const struct td_counts *c, struct td_delta *d)
{
	d->slots = (int64_t)c->slots;
	for (int i = 0; i < TD_NR_CATS; i++)
		d->cat[i] = (int64_t)c->cat[i];
	d->qerr = 0;
}

/*
 * Level 1 of skl-, snb-, ivb-, hsw- and bdw-metrics.json, as perf
 * evaluates it (SMT: CORE_CLKS = CPU_CLK_UNHALTED.THREAD_ANY / 2,
 * INT_MISC.RECOVERY_CYCLES_ANY / 2): fills l1, returns the slots.
 */
static double perf_l1(double clk, double idq, double issued,
		      double ret_slots, double recovery, bool smt, double *l1)
{
	double clks = smt ? clk / 2 : clk;
	double slots = 4 * clks;
	double rec = smt ? recovery / 2 : recovery;

	l1[TD_RETIRING] = ret_slots / slots;
	l1[TD_BAD_SPEC] = (issued - ret_slots + 4 * rec) / slots;
	l1[TD_FE_BOUND] = idq / slots;
	l1[TD_BE_BOUND] = 1 - l1[TD_FE_BOUND] - (issued + 4 * rec) / slots;
	return slots;
}

/*
 * skl-metrics.json, as perf evaluates it (SMT: CORE_CLKS =
 * CPU_CLK_UNHALTED.THREAD_ANY / 2, INT_MISC.RECOVERY_CYCLES_ANY / 2):
 * level 1, then the four measured TopdownL2 nodes and their siblings.
 */
struct skl_events {
	double clk, idq, issued, ret_slots, recovery;       /* level 1 */
	double inst, macro_fused, cyc0, misp, clears;       /* level 2 */
	double stalls_mem, bound_stores, stalls_total, ports_1, ports_2;
};

static void perf_skl(const struct skl_events *e, bool smt, double *l1,
		     double *l2)
{
	double slots = perf_l1(e->clk, e->idq, e->issued, e->ret_slots,
			       e->recovery, smt, l1);
	double fe = l1[TD_FE_BOUND], bad = l1[TD_BAD_SPEC];
	double ret = l1[TD_RETIRING], be = l1[TD_BE_BOUND];

	l2[TD_HEAVY_OPS] = (e->ret_slots + e->macro_fused - e->inst) / slots;
	l2[TD_LIGHT_OPS] = ret - l2[TD_HEAVY_OPS];
	l2[TD_BR_MISPREDICT] = e->misp / (e->misp + e->clears) * bad;
	l2[TD_MACHINE_CLEARS] = bad - l2[TD_BR_MISPREDICT];
	l2[TD_FETCH_LAT] = 4 * e->cyc0 / slots;
	l2[TD_FETCH_BW] = fe - l2[TD_FETCH_LAT];
	l2[TD_MEM_BOUND] = (e->stalls_mem + e->bound_stores) /
			   (e->stalls_total + (e->ports_1 + ret * e->ports_2) +
			    e->bound_stores) * be;
	l2[TD_CORE_BOUND] = be - l2[TD_MEM_BOUND];
}

/* A plausible random Skylake counter set: every node within its parent. */
static void random_skl(struct skl_events *e, bool smt)
{
	/* even clocks, recovery cycles: the SMT form halves them */
	uint64_t clk = (100000 + rnd(10000000)) & ~1ull;
	uint64_t rest = 4 * (smt ? clk / 2 : clk);

	memset(e, 0, sizeof(*e));
	e->clk = (double)clk;
	e->idq = (double)rnd(rest / 3);
	rest -= (uint64_t)e->idq;
	e->ret_slots = (double)rnd(rest / 2);
	rest -= (uint64_t)e->ret_slots;
	e->recovery = (double)(rnd(rest / 8) & ~1ull);
	e->issued = e->ret_slots + (double)rnd(rest / 4);
	e->macro_fused = (double)rnd((uint64_t)e->ret_slots / 4 + 1);
	e->inst = e->ret_slots + e->macro_fused -
		  (double)rnd((uint64_t)e->ret_slots + 1);
	e->cyc0 = (double)rnd((uint64_t)e->idq / 4 + 1);
	e->misp = (double)(1 + rnd(100000));
	e->clears = (double)rnd(100000);
	e->stalls_total = (double)(1 + rnd(clk));
	e->stalls_mem = (double)rnd((uint64_t)e->stalls_total);
	e->bound_stores = (double)rnd(clk / 8 + 1);
	e->ports_1 = (double)rnd(clk / 4 + 1);
	e->ports_2 = (double)rnd(clk / 4 + 1);
}

/* The library's route: level-1 counts, level-2 values, td_decode. */
static void library_skl(const struct skl_events *e, bool smt,
			struct td_result *r)
{
	uint64_t v[TD_V45_NR] = { (uint64_t)e->clk, (uint64_t)e->idq,
				  (uint64_t)e->issued, (uint64_t)e->ret_slots,
				  (uint64_t)e->recovery };
	uint64_t w[TD_V45L2_NR] = { 0 };
	struct td_counts c;
	struct td_delta d;

	if (smt)
		td_formula_v45_any(4, v, &c);
	else
		td_formula_v45(4, v, &c);
	/* one group's reading: its clocks are level 1's */
	w[TD_V45L2_CLK1] = (uint64_t)e->clk;
	w[TD_V45L2_HEAVY] = (uint64_t)(e->ret_slots + e->macro_fused - e->inst);
	w[TD_V45L2_CYC0] = (uint64_t)e->cyc0;
	w[TD_V45L2_P2] = (uint64_t)e->ports_2;
	w[TD_V45L2_CLK2] = (uint64_t)e->clk;
	w[TD_V45L2_MEM_NUM] = (uint64_t)(e->stalls_mem + e->bound_stores);
	w[TD_V45L2_MEM_DEN] = (uint64_t)(e->stalls_total + e->ports_1 +
					 e->bound_stores);
	w[TD_V45L2_MISP] = (uint64_t)e->misp;
	w[TD_V45L2_MC] = (uint64_t)e->clears;
	memset(&d, 0, sizeof(d));
	delta_of(&c, &d);
	td_formula_v45_l2(4, smt, w, d.slots, d.cat);
	td_decode(&d, true, r);
}

/*
 * perf's values, clamped to [0, 1] as td_decode keeps every node (perf
 * clamps nothing), equal to the library's but for its units: a measured
 * node is kept in whole 1/255 slots (struct td_counts), so within
 * 1 / (255 x slots) of perf's, a sibling (parent minus node) within
 * twice that.
 */
static void check_against_perf(const struct td_result *r, const double *l1,
			       const double *l2)
{
	double unit = 2.0 / (255.0 * (double)r->slots) + 1e-12;

	assert_true(r->flags & TD_RESULT_L2);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(r->l1[i], clamp01(l1[i]), 1e-12);
	for (int i = 0; i < TD_L2_COUNT; i++)
		if (fabs(r->l2[i] - clamp01(l2[i])) > unit)
			fail_msg("l2[%d] %.12f perf %.12f slots %llu", i,
				 r->l2[i], clamp01(l2[i]),
				 (unsigned long long)r->slots);
}

static void test_skl_formula_vs_perf(void **state)
{
	(void)state;
	for (int smt = 0; smt < 2; smt++) {
		for (int k = 0; k < 2000; k++) {
			struct skl_events e;
			struct td_result r;
			double l1[TD_L1_COUNT], l2[TD_L2_COUNT];

			random_skl(&e, smt);
			perf_skl(&e, smt, l1, l2);
			library_skl(&e, smt, &r);
			check_against_perf(&r, l1, l2);
		}
	}
}

/*
 * snb-metrics.json (Sandy Bridge), ivb-metrics.json (Ivy Bridge),
 * hsw-metrics.json (Haswell) and bdw-metrics.json (Broadwell), as perf
 * evaluates them: level 1 as Skylake's (CORE_CLKS = THREAD_ANY / 2 with
 * SMT on), tma_info_thread_ipc = INST_RETIRED.ANY / CPU_CLK_UNHALTED.
 * THREAD, and the four measured TopdownL2 nodes:
 *   tma_heavy_operations = UOPS_RETIRED.RETIRE_SLOTS / UOPS_ISSUED.ANY *
 *       IDQ.MS_UOPS / slots
 *   tma_fetch_latency = 4 * min(CPU_CLK_UNHALTED.THREAD,
 *       CYCLES_0_UOPS_DELIV.CORE) / slots, Broadwell's without the min
 *   tma_branch_mispredicts as Skylake's
 *   tma_memory_bound = (min(THREAD, mem) + RESOURCE_STALLS.SB) /
 *       (min(THREAD, stalls) + exe1 - (exe3 if ipc > 1.8 else exe2) -
 *       (RS_EVENTS.EMPTY_CYCLES if tma_fetch_latency > 0.1 else 0) +
 *       RESOURCE_STALLS.SB) * tma_backend_bound
 * with each list's mem, stalls and exe<n> events (formulas.c
 * td_formula_snb_l2), Broadwell's without the mins, Haswell's exe1 -
 * exe<n> (UOPS_EXECUTED.CORE, the core's) halved with SMT on.
 */
struct snb_events {
	double clk, idq, issued, ret_slots, recovery;       /* level 1 */
	double thread, inst, cyc0, ms, mem, stalls, sb, rs_empty;
	double exe1, exe2, exe3, misp, clears;              /* level 2 */
};

/* The lists' forms: Sandy Bridge and Ivy Bridge, Haswell, Broadwell. */
enum snb_form { FORM_SNB_IVB, FORM_HSW, FORM_BDW, FORM_NR };

static void perf_snb(const struct snb_events *e, enum snb_form form,
		     bool smt, double *l1, double *l2)
{
	double slots = perf_l1(e->clk, e->idq, e->issued, e->ret_slots,
			       e->recovery, smt, l1);
	double fe = l1[TD_FE_BOUND], bad = l1[TD_BAD_SPEC];
	double ret = l1[TD_RETIRING], be = l1[TD_BE_BOUND];
	double ipc = e->inst / e->thread;
	bool min = form != FORM_BDW;
	double exe, num, den;

	l2[TD_HEAVY_OPS] = e->ret_slots / e->issued * e->ms / slots;
	l2[TD_LIGHT_OPS] = ret - l2[TD_HEAVY_OPS];
	l2[TD_BR_MISPREDICT] = e->misp / (e->misp + e->clears) * bad;
	l2[TD_MACHINE_CLEARS] = bad - l2[TD_BR_MISPREDICT];
	l2[TD_FETCH_LAT] = 4 * (min ? fmin(e->thread, e->cyc0) : e->cyc0) /
			   slots;
	l2[TD_FETCH_BW] = fe - l2[TD_FETCH_LAT];
	exe = e->exe1 - (ipc > 1.8 ? e->exe3 : e->exe2);
	if (form == FORM_HSW && smt)
		exe /= 2;
	num = (min ? fmin(e->thread, e->mem) : e->mem) + e->sb;
	den = (min ? fmin(e->thread, e->stalls) : e->stalls) + exe -
	      (l2[TD_FETCH_LAT] > 0.1 ? e->rs_empty : 0) + e->sb;
	l2[TD_MEM_BOUND] = num / den * be;
	l2[TD_CORE_BOUND] = be - l2[TD_MEM_BOUND];
}

/*
 * A plausible random counter set, every node within its parent.  SMT
 * off: the thread's clocks are the groups' clocks, and the cycle counts
 * the lists take the minimum of may exceed them
 * (as multiplexing's scaling can make them in perf); SMT on: the groups'
 * clocks are THREAD_ANY, the thread's its own part, which bounds them
 * (formulas.c td_formula_snb_l2).  IPC on either side of 1.8, fetch
 * latency on either side of 0.1.
 */
static void random_snb(struct snb_events *e, bool smt)
{
	uint64_t clk = (100000 + rnd(10000000)) & ~1ull;
	uint64_t thread = smt ? clk / 2 + rnd(clk / 2) : clk;
	uint64_t rest = 4 * (smt ? clk / 2 : clk);
	uint64_t cap = smt ? thread : thread + thread / 4, gap;

	memset(e, 0, sizeof(*e));
	e->clk = (double)clk;
	e->thread = (double)thread;
	e->idq = (double)rnd(rest / 3);
	rest -= (uint64_t)e->idq;
	e->ret_slots = (double)(1 + rnd(rest / 2));
	rest -= (uint64_t)e->ret_slots;
	e->recovery = (double)(rnd(rest / 8) & ~1ull);
	e->issued = e->ret_slots + (double)rnd(rest / 4);
	e->ms = (double)rnd((uint64_t)e->issued + 1);
	e->inst = (double)rnd(3 * thread);
	e->cyc0 = (double)rnd((uint64_t)e->idq / 4 + 1);
	if (!smt && e->cyc0 > (double)thread) /* tma_fetch_latency <= fe */
		e->cyc0 = (double)thread;
	e->misp = (double)(1 + rnd(100000));
	e->clears = (double)rnd(100000);
	e->stalls = (double)(1 + rnd(cap));
	e->mem = (double)rnd((uint64_t)e->stalls);
	gap = (uint64_t)(fmin(e->stalls, (double)thread) -
			 fmin(e->mem, (double)thread));
	e->rs_empty = (double)rnd(gap + 1);
	e->sb = (double)rnd(clk / 8 + 1);
	e->exe3 = (double)rnd(clk / 4 + 1);
	e->exe2 = e->exe3 + (double)rnd(clk / 4 + 1);
	e->exe1 = e->exe2 + (double)rnd(clk / 4 + 1);
}

/* The library's route: level-1 counts, level-2 values, td_decode. */
static void library_snb(const struct snb_events *e, enum snb_form form,
			bool smt, struct td_result *r)
{
	uint64_t v[TD_V45_NR] = { (uint64_t)e->clk, (uint64_t)e->idq,
				  (uint64_t)e->issued, (uint64_t)e->ret_slots,
				  (uint64_t)e->recovery };
	uint64_t w[TD_SNBL2_NR] = { 0 };
	struct td_counts c;
	struct td_delta d;

	if (smt)
		td_formula_v45_any(4, v, &c);
	else
		td_formula_v45(4, v, &c);
	/* one reading of each group: every group's clocks are level 1's */
	w[TD_SNBL2_CLK1] = (uint64_t)e->clk;
	w[TD_SNBL2_CYC0] = (uint64_t)e->cyc0;
	w[TD_SNBL2_MS] = (uint64_t)e->ms;
	w[TD_SNBL2_RET] = (uint64_t)e->ret_slots;
	w[TD_SNBL2_ISSUED] = (uint64_t)e->issued;
	w[TD_SNBL2_CLK2] = (uint64_t)e->clk;
	w[TD_SNBL2_MEM] = (uint64_t)e->mem;
	w[TD_SNBL2_STALLS] = (uint64_t)e->stalls;
	w[TD_SNBL2_SB] = (uint64_t)e->sb;
	w[TD_SNBL2_RS_EMPTY] = (uint64_t)e->rs_empty;
	w[TD_SNBL2_CLK3] = (uint64_t)e->clk;
	w[TD_SNBL2_IPC18] = 5 * (uint64_t)e->inst - 9 * (uint64_t)e->thread;
	w[TD_SNBL2_EXE_1_2] = (uint64_t)(e->exe1 - e->exe2);
	w[TD_SNBL2_EXE_1_3] = (uint64_t)(e->exe1 - e->exe3);
	w[TD_SNBL2_MISP] = (uint64_t)e->misp;
	w[TD_SNBL2_MC] = (uint64_t)e->clears;
	memset(&d, 0, sizeof(d));
	delta_of(&c, &d);
	td_formula_snb_l2(4, smt, form != FORM_BDW, form == FORM_HSW, w,
			  d.slots, d.cat);
	td_decode(&d, true, r);
}

static void test_snb_bdw_formula_vs_perf(void **state)
{
	(void)state;
	for (int form = 0; form < FORM_NR; form++) {
		for (int smt = 0; smt < 2; smt++) {
			for (int k = 0; k < 2000; k++) {
				struct snb_events e;
				struct td_result r;
				double l1[TD_L1_COUNT], l2[TD_L2_COUNT];

				random_snb(&e, smt);
				perf_snb(&e, (enum snb_form)form, smt, l1, l2);
				library_snb(&e, (enum snb_form)form, smt, &r);
				check_against_perf(&r, l1, l2);
			}
		}
	}
}

/*
 * Each model takes its list's form: the minimums of Sandy Bridge's, Ivy
 * Bridge's and Haswell's lists, Haswell's core-wide execution cycles
 * (UOPS_EXECUTED.CORE, umask 0x02) and the others' per-thread ones
 * (umask 0x01), in 4 groups.  The server models (jaketown, ivytown,
 * haswellx, broadwellx, broadwellde in perf's x86 mapfile.csv) take
 * their client's form: their lists were not compared (formulas.c).
 */
static void test_snb_bdw_models(void **state)
{
	static const struct {
		unsigned model;
		bool min, core;
	} models[] = {
		{ 0x2a, true, false }, { 0x2d, true, false },
		{ 0x3a, true, false }, { 0x3e, true, false },
		{ 0x3c, true, true },  { 0x3f, true, true },
		{ 0x45, true, true },  { 0x46, true, true },
		{ 0x3d, false, false }, { 0x47, false, false },
		{ 0x4f, false, false }, { 0x56, false, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		struct td_gen_model m;
		uint64_t exe = models[i].core ? 0x02 : 0x01;

		assert_int_equal(td_cpu_lookup("GenuineIntel", 6,
					       models[i].model, &m), 0);
		assert_true(m.l2_snb);
		assert_int_equal(m.nr2, TD_SNB2_NR);
		assert_int_equal(m.l2_min_clk, models[i].min);
		assert_int_equal(m.l2_exe_core, models[i].core);
		/* event 0xb1, umask, cmask 1, 2, 3 */
		for (unsigned n = 1; n <= 3; n++)
			assert_int_equal(m.config2[TD_SNB2_EXE1 + n - 1],
					 0xb1 | exe << 8 | (uint64_t)n << 24);
		assert_int_equal(m.l2_group[0] + m.l2_group[1] +
					 m.l2_group[2] + m.l2_group[3],
				 TD_SNB2_NR);
	}
}

/*
 * adln-metrics.json (Gracemont, 5 wide): level 1 and level 2 are each
 * an event over 5 x CPU_CLK_UNHALTED.CORE.  The library normalises
 * level 1 by the sum of its four events (td_decode) and its level 2
 * alike, so on a counter set whose four level-1 events sum to the
 * slots the two agree exactly; elsewhere every node is perf's times
 * slots / sum.  perf's tma_ifetch_bandwidth and tma_machine_clears are
 * events of their own; the library reports their parents minus the
 * measured sibling (formulas.c): the random sets here partition the
 * parents, as the umasks do.
 */
struct grt_events {
	double clk, fe, bad, ret, be;
	double fe_lat, fe_bw, misp, clears, alloc, ms;
};

static void perf_grt(const struct grt_events *e, double *l1, double *l2)
{
	double slots = 5 * e->clk;

	l1[TD_RETIRING] = e->ret / slots;
	l1[TD_BAD_SPEC] = e->bad / slots;
	l1[TD_FE_BOUND] = e->fe / slots;
	l1[TD_BE_BOUND] = e->be / slots;
	l2[TD_HEAVY_OPS] = e->ms / slots;                    /* tma_ms_uops */
	l2[TD_LIGHT_OPS] = (e->ret - e->ms) / slots;         /* tma_base */
	l2[TD_BR_MISPREDICT] = e->misp / slots;
	l2[TD_MACHINE_CLEARS] = e->clears / slots;
	l2[TD_FETCH_LAT] = e->fe_lat / slots;               /* ifetch_latency */
	l2[TD_FETCH_BW] = e->fe_bw / slots;                 /* ifetch_bandwidth */
	l2[TD_CORE_BOUND] = e->alloc / slots;                /* tma_core_bound */
	l2[TD_MEM_BOUND] = l1[TD_BE_BOUND] - l2[TD_CORE_BOUND]; /* resource */
}

static void random_grt(struct grt_events *e)
{
	uint64_t clk = 100000 + rnd(10000000), rest = 5 * clk;

	e->clk = (double)clk;
	e->fe = (double)rnd(rest / 2);
	rest -= (uint64_t)e->fe;
	e->bad = (double)rnd(rest / 2);
	rest -= (uint64_t)e->bad;
	e->ret = (double)rnd(rest);
	e->be = (double)(rest - (uint64_t)e->ret);
	e->fe_lat = (double)rnd((uint64_t)e->fe + 1);
	e->fe_bw = e->fe - e->fe_lat;
	e->misp = (double)rnd((uint64_t)e->bad + 1);
	e->clears = e->bad - e->misp;
	e->alloc = (double)rnd((uint64_t)e->be + 1);
	e->ms = (double)rnd((uint64_t)e->ret + 1);
}

static void library_grt(const struct grt_events *e, struct td_result *r)
{
	uint64_t v[TD_V2_NR] = { (uint64_t)e->clk, (uint64_t)e->fe,
				 (uint64_t)e->bad, (uint64_t)e->ret,
				 (uint64_t)e->be };
	uint64_t w[TD_A2_NR];
	struct td_counts c;
	struct td_delta d;

	w[TD_A2_CLK] = (uint64_t)e->clk;
	w[TD_A2_FE_LAT] = (uint64_t)e->fe_lat;
	w[TD_A2_ALLOC] = (uint64_t)e->alloc;
	w[TD_A2_MISP] = (uint64_t)e->misp;
	w[TD_A2_MS] = (uint64_t)e->ms;
	td_formula_atom_v2(5, v, &c);
	memset(&d, 0, sizeof(d));
	delta_of(&c, &d);
	assert_int_equal(td_formula_atom_l2(5, false, w, d.slots, d.cat),
			 TD_RESULT_L2);
	td_decode(&d, true, r);
}

static void test_grt_formula_vs_perf(void **state)
{
	(void)state;
	for (int k = 0; k < 2000; k++) {
		struct grt_events e;
		struct td_result r;
		double l1[TD_L1_COUNT], l2[TD_L2_COUNT];

		random_grt(&e);
		perf_grt(&e, l1, l2);
		library_grt(&e, &r);
		check_against_perf(&r, l1, l2);
	}
}

/* ---- end to end on the emulator ------------------------------------------ */

/* Slots between the emulated kernel's rotations (a few ms of a core). */
#define MUX_INTERVAL 300000

/*
 * Sandy Bridge and Broadwell: the Haswell profile with their models and
 * encodings (emu_hsw_model); not profiles of their own.
 */
#define EMU_SNB_AS_HSW ((enum emu_profile)-1)
#define EMU_BDW_AS_HSW ((enum emu_profile)-2)

/*
 * The handle a test has open, closed by teardown_l2 when a failed check
 * left the test before its close_l2.  Left open, its named slots stay
 * in the thread's totals (td_named_totals adds the calling thread's open
 * handles' to the struct's: named.c totals_locked), and the next
 * profile's named_totals_l2, whose struct td_named is the same, would
 * sum another model's calls and level-2 events with its own.
 */
static struct td *test_td;

static void close_l2(struct td *td)
{
	td_close(td);
	test_td = NULL;
}

static struct td *open_l2(enum emu_profile p, unsigned flags)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td;

	emu_setup(p == EMU_SNB_AS_HSW || p == EMU_BDW_AS_HSW ? EMU_HSW : p);
	if (p == EMU_SNB_AS_HSW)
		emu_hsw_model(0x2a);
	if (p == EMU_BDW_AS_HSW)
		emu_hsw_model(0x3d);
	emu_set_mux_interval(MUX_INTERVAL);
	o.flags = flags;
	assert_int_equal(td_open(&td, &o), 0);
	test_td = td;
	return td;
}

static void assert_levels(struct td *td, unsigned levels, unsigned flags,
			  unsigned not_flags)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.levels, levels);
	assert_int_equal(info.flags & (flags | not_flags), flags);
}

static void measure(struct td *td, uint64_t slots, const struct emu_mix *m,
		    struct td_result *r, struct truth_frac *t)
{
	struct td_region reg = { { 0 } };
	struct emu_truth a, b;

	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_truth(&a);
	emu_run(slots, m);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &reg, r), 0);
	*t = truth_between(&a, &b);
}

/* Every level-1 and level-2 fraction within tol of the truth. */
static void assert_truth(const struct td_result *r,
			 const struct truth_frac *t, double tol)
{
	assert_false(r->flags & TD_RESULT_UNRELIABLE);
	assert_true(r->flags & TD_RESULT_MULTIPLEXED);
	assert_true(r->flags & TD_RESULT_L2);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(r->l1[i], t->l1[i], tol);
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_float_equal(r->l2[i], t->l2[i], tol);
}

static const struct emu_mix *const mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					       &MIX_STREAM, &MIX_DRAM };

/*
 * Long regions of steady mixes: every group counted a part of each; the
 * true fractions back, to rounding.
 */
static void long_regions(enum emu_profile p, unsigned flags)
{
	struct td *td = open_l2(p, flags);
	struct td_result r;
	struct truth_frac t;

	assert_levels(td, 2, TD_INFO_MULTIPLEXED, TD_INFO_L2_NEEDS_MULTIPLEX);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		measure(td, 40 * MUX_INTERVAL, mixes[i], &r, &t);
		assert_truth(&r, &t, 2e-3);
	}
	close_l2(td);
}

/*
 * Crestmont (srf-metrics.json): frontend and backend children only,
 * flagged TD_RESULT_L2_FE_BE, against the truth; retiring's and bad
 * speculation's children 0.
 */
static void test_cmt_l2_fe_be(void **state)
{
	struct td *td = open_l2(EMU_CMT, TD_OPT_L2_MULTIPLEX);
	struct td_result r;
	struct truth_frac t;
	static const int zero[] = { TD_HEAVY_OPS, TD_LIGHT_OPS,
				    TD_BR_MISPREDICT, TD_MACHINE_CLEARS };
	static const int measured[] = { TD_FETCH_LAT, TD_FETCH_BW,
					TD_MEM_BOUND, TD_CORE_BOUND };

	(void)state;
	assert_levels(td, 2, TD_INFO_MULTIPLEXED, TD_INFO_L2_NEEDS_MULTIPLEX);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		measure(td, 40 * MUX_INTERVAL, mixes[i], &r, &t);
		assert_true(r.flags & TD_RESULT_L2_FE_BE);
		assert_true(r.flags & TD_RESULT_L2);
		for (int k = 0; k < TD_L1_COUNT; k++)
			assert_float_equal(r.l1[k], t.l1[k], 2e-3);
		for (int k = 0; k < 4; k++) {
			assert_float_equal(r.l2[zero[k]], 0, 0);
			assert_float_equal(r.l2[measured[k]],
					   t.l2[measured[k]], 2e-3);
		}
	}
	close_l2(td);
}

/*
 * Without the option (flags: the open's others, none here): level 1
 * only, and td_info says why.
 */
static void l1_by_default(enum emu_profile p, unsigned flags)
{
	struct td *td = open_l2(p, flags);
	struct td_result r;
	struct truth_frac t;

	assert_levels(td, 1, TD_INFO_L2_NEEDS_MULTIPLEX, TD_INFO_MULTIPLEXED);
	measure(td, 3000000, &MIX_CHAIN, &r, &t);
	assert_false(r.flags & (TD_RESULT_L2 | TD_RESULT_MULTIPLEXED));
	assert_float_equal(r.l1[TD_RETIRING], t.l1[TD_RETIRING], 1e-6);
	close_l2(td);
}

/* SMT on, AnyThread granted: the _ANY clocks, halved, in every group. */
static void test_skl_l2_smt(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td;
	struct td_result r;
	struct truth_frac t;
	struct emu_stats s;

	(void)state;
	emu_setup(EMU_SKL);
	emu_set_smt(true, true);
	emu_set_mux_interval(MUX_INTERVAL);
	o.flags = TD_OPT_L2_MULTIPLEX;
	assert_int_equal(td_open(&td, &o), 0);
	test_td = td;
	assert_levels(td, 2, TD_INFO_MULTIPLEXED, TD_INFO_SMT_PER_THREAD);
	emu_stats(&s);
	/* level 1's two clocks, groups 1 and 2's */
	assert_int_equal(s.anythread_opens, 4);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		measure(td, 40 * MUX_INTERVAL, mixes[i], &r, &t);
		assert_truth(&r, &t, 2e-3);
	}
	close_l2(td);
}

/*
 * Sandy Bridge (6/0x2a), Haswell (6/0x3c) and Broadwell (6/0x3d): their
 * lists, their events.
 */
/*
 * Named totals in these modes: level 1 scaled as regions are, and level
 * 2 from every call's level-2 values summed (the ratios over all the
 * time the groups counted, as perf stat estimates with multiplexed
 * counts), flagged multiplexed, against the truth of all the calls.
 * Short calls (a tenth of the rotation) are the case: most see a group
 * for none or part of their time, and no call alone has level 2.
 */
static void named_totals_l2(enum emu_profile p, unsigned flags)
{
	static struct td_named n = TD_NAMED_INIT("loop");
	struct td *td = open_l2(p, TD_OPT_L2_MULTIPLEX);
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_totals tot;
	struct td_result r;

	memset(n.opaque, 0, sizeof(n.opaque));
	emu_truth(&a);
	for (int i = 0; i < 600; i++) {
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(MUX_INTERVAL / 10, &MIX_BRANCHY);
		assert_int_equal(td_named_end(td, &n, &r), 0);
	}
	emu_truth(&b);
	t = truth_between(&a, &b);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	/* this handle's calls, and no other handle's left open */
	assert_int_equal(tot.calls, 600);
	assert_int_equal(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE |
					    TD_RESULT_MULTIPLEXED),
			 TD_RESULT_L2 | TD_RESULT_MULTIPLEXED | flags);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(tot.total.l1[i], t.l1[i], 2e-3);
	/* Crestmont: retiring's and bad speculation's children 0 */
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_float_equal(tot.total.l2[i],
				   (flags & TD_RESULT_L2_FE_BE) &&
						   i < TD_FETCH_LAT
					   ? 0
					   : t.l2[i],
				   2e-3);
	close_l2(td);
}

/*
 * TOPDOWN_L2=multiplex: the option without the program setting it (on
 * Alder Lake: the Gracemont E-cores' level-2 group, hybrid.c).
 */
static void test_env_multiplex(void **state)
{
	static const enum emu_profile profiles[] = { EMU_SKL, EMU_GRT,
						     EMU_ZEN4, EMU_ADL, EMU_HSW };

	(void)state;
	setenv("TOPDOWN_L2", "multiplex", 1);
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct td *td = open_l2(profiles[i], 0);

		assert_levels(td, 2, TD_INFO_MULTIPLEXED,
			      TD_INFO_L2_NEEDS_MULTIPLEX);
		close_l2(td);
	}
	unsetenv("TOPDOWN_L2");
}

/* Another value is an error, not a silent default. */
static void test_env_bad_value(void **state)
{
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_SKL);
	setenv("TOPDOWN_L2", "yes", 1);
	assert_int_equal(td_open(&td, NULL), -EINVAL);
	assert_null(td);
	/* the message names the setting, its value and the accepted one */
	assert_non_null(strstr(td_strerror(-EINVAL),
			       "TOPDOWN_L2=\"yes\" is not one of multiplex"));
	unsetenv("TOPDOWN_L2");
}

/*
 * Tremont (perf's snowridgex and elkhartlake lists) and Darkmont
 * (clearwaterforest): no TopDown metrics, so no level 2 here, with the
 * option or without, and no claim that multiplexing would give it.
 */
static void test_atoms_without_l2(void **state)
{
	static const enum emu_profile profiles[] = { EMU_TNT, EMU_SKT };

	(void)state;
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		for (int opt = 0; opt < 2; opt++) {
			struct td *td = open_l2(profiles[i],
						opt ? TD_OPT_L2_MULTIPLEX : 0);
			struct td_result r;
			struct truth_frac t;

			assert_levels(td, 1, 0,
				      TD_INFO_MULTIPLEXED |
					      TD_INFO_L2_NEEDS_MULTIPLEX);
			measure(td, 3000000, &MIX_CHAIN, &r, &t);
			assert_false(r.flags & TD_RESULT_L2);
			close_l2(td);
		}
	}
}

/*
 * One profile's end-to-end test: run(p, flags) through cmocka's state,
 * so that each profile's test has its own name (PROFILE_TEST in main)
 * without a wrapper function of its own.
 */
struct profile_case {
	void (*run)(enum emu_profile p, unsigned flags);
	enum emu_profile p;
	unsigned flags;
};

static void test_profile_case(void **state)
{
	const struct profile_case *c = *state;

	c->run(c->p, c->flags);
}

/* The settings this file's tests make, put back after each test. */
TD_TEST_SAVED_ENV({ "TOPDOWN_L2", NULL })

/* teardown_env, after closing the handle a failed check left open. */
static int teardown_l2(void **state)
{
	if (test_td)
		close_l2(test_td);
	return teardown_env(state);
}

int main(void)
{
#define PROFILE_TEST(name, fn, profile, fl)                               \
	{ #name, test_profile_case, NULL, teardown_l2,                    \
	  &(struct profile_case){ .run = fn, .p = profile, .flags = fl } }
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skl_formula_vs_perf),
		cmocka_unit_test(test_snb_bdw_formula_vs_perf),
		cmocka_unit_test(test_snb_bdw_models),
		cmocka_unit_test(test_grt_formula_vs_perf),
		PROFILE_TEST(test_skl_l1_by_default, l1_by_default, EMU_SKL, 0),
		PROFILE_TEST(test_grt_l1_by_default, l1_by_default, EMU_GRT, 0),
		PROFILE_TEST(test_skl_l2_multiplexed, long_regions,
			     EMU_SKL, TD_OPT_L2_MULTIPLEX),
		cmocka_unit_test_teardown(test_skl_l2_smt, teardown_l2),
		PROFILE_TEST(test_hsw_l1_by_default, l1_by_default, EMU_HSW, 0),
		PROFILE_TEST(test_snb_l2_multiplexed, long_regions,
			     EMU_SNB_AS_HSW, TD_OPT_L2_MULTIPLEX),
		PROFILE_TEST(test_hsw_l2_multiplexed, long_regions,
			     EMU_HSW, TD_OPT_L2_MULTIPLEX),
		PROFILE_TEST(test_bdw_l2_multiplexed, long_regions,
			     EMU_BDW_AS_HSW, TD_OPT_L2_MULTIPLEX),
		PROFILE_TEST(test_snb_named_totals_l2, named_totals_l2,
			     EMU_SNB_AS_HSW, 0),
		PROFILE_TEST(test_hsw_named_totals_l2, named_totals_l2,
			     EMU_HSW, 0),
		PROFILE_TEST(test_bdw_named_totals_l2, named_totals_l2,
			     EMU_BDW_AS_HSW, 0),
		PROFILE_TEST(test_grt_l2_multiplexed, long_regions,
			     EMU_GRT, TD_OPT_L2_MULTIPLEX),
		cmocka_unit_test_teardown(test_cmt_l2_fe_be, teardown_l2),
		PROFILE_TEST(test_skl_named_totals_l2, named_totals_l2,
			     EMU_SKL, 0),
		PROFILE_TEST(test_grt_named_totals_l2, named_totals_l2,
			     EMU_GRT, 0),
		PROFILE_TEST(test_cmt_named_totals_l2, named_totals_l2,
			     EMU_CMT, TD_RESULT_L2_FE_BE),
		cmocka_unit_test_teardown(test_env_multiplex, teardown_l2),
		cmocka_unit_test_teardown(test_env_bad_value, teardown_env),
		cmocka_unit_test_teardown(test_atoms_without_l2, teardown_l2),
	};
#undef PROFILE_TEST

	return cmocka_run_group_tests(tests, save_env, free_env);
}
