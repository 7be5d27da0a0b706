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
static inline __attribute__((always_inline)) void
zen_l1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	c->slots = width * v[TD_ZEN_CYC];
	c->cat[TD_M_RETIRING] = 255 * v[TD_ZEN_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * (v[TD_ZEN_DISP] - v[TD_ZEN_RET]);
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_ZEN_FE];
	c->cat[TD_M_BE_BOUND] = 255 * v[TD_ZEN_BE];
	c->cat[TD_M_SMT] = 255 * v[TD_ZEN_SMT];
}

void td_formula_zen(unsigned width, const uint64_t *v, struct td_counts *c)
{
	td_counts_zero_cats(c);
	zen_l1(width, v, c);
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
 * 255 x slots x part / whole: a node perf defines as part / whole of
 * the slots, in the units of a delta's categories (the region's slots,
 * so that td_decode normalises it as it does level 1); 0 when whole is
 * not positive (perf's division by zero gives no value either).
 */
static int64_t of_slots(int64_t slots, double part, double whole)
{
	if (!(whole > 0))
		return 0;
	return (int64_t)(255.0 * (double)slots * part / whole);
}

/*
 * Intel Skylake, Skylake-X, Cascade Lake TopdownL2 (perf's
 * skylake/skl-metrics.json, MetricGroup TopdownL2; models 0x4e, 0x5e,
 * 0x8e, 0x9e, 0xa5, 0xa6, 0x55) over a multiplexed region: cat[] holds
 * its level-1 deltas (slots x 255, scaled), slots its scaled slots,
 * w[] its level-2 deltas (TD_V45L2_*), each group's for the part of the
 * region that group counted.  Fills the measured children of cat[]:
 *   tma_heavy_operations = (UOPS_RETIRED.RETIRE_SLOTS +
 *       UOPS_RETIRED.MACRO_FUSED - INST_RETIRED.ANY) / tma_info_thread_slots
 *   tma_fetch_latency = 4 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE
 *       / tma_info_thread_slots
 *   tma_branch_mispredicts = BR_MISP_RETIRED.ALL_BRANCHES /
 *       (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT) *
 *       tma_bad_speculation
 *   tma_memory_bound = (CYCLE_ACTIVITY.STALLS_MEM_ANY +
 *       EXE_ACTIVITY.BOUND_ON_STORES) / (CYCLE_ACTIVITY.STALLS_TOTAL +
 *       (EXE_ACTIVITY.1_PORTS_UTIL + tma_retiring *
 *       EXE_ACTIVITY.2_PORTS_UTIL) + EXE_ACTIVITY.BOUND_ON_STORES) *
 *       tma_backend_bound
 * with tma_info_thread_slots = 4 * CORE_CLKS (CPU_CLK_UNHALTED.THREAD,
 * or THREAD_ANY / 2 with SMT on: any; perf's newer lists estimate a
 * thread's CORE_CLKS as THREAD / 2 * (1 + ONE_THREAD_ACTIVE / REF_XCLK)
 * when not counting core-wide: the library keeps level 1's SMT form, and
 * level 2 takes level 1's slots).  skylakex/skx-metrics.json has the same
 * four expressions (Skylake-X; Cascade Lake shares model 0x55 and the
 * core; its clx-metrics.json was not compared).  perf's other four nodes are
 * parent minus child (tma_light_operations, tma_machine_clears,
 * tma_fetch_bandwidth, tma_core_bound), as td_decode computes them, so
 * the nodes sum to their parents; perf clamps nothing, td_decode keeps
 * every node within [0, 1].  Heavy operations and fetch latency are
 * group 1's events per its slots; memory bound's 2_PORTS_UTIL is group
 * 1's, per clock, against group 2's terms per clock (the only ratio
 * across groups: exact when the mix does not follow the rotation).
 */
void td_formula_v45_l2(unsigned width, bool any, const uint64_t *w,
		       int64_t slots, int64_t *cat)
{
	double s1 = (double)width * (double)w[TD_V45L2_CLK1] / (any ? 2 : 1);
	int64_t all = cat[TD_M_RETIRING] + cat[TD_M_BAD_SPEC] +
		      cat[TD_M_FE_BOUND] + cat[TD_M_BE_BOUND];
	double ret = all > 0 ? (double)cat[TD_M_RETIRING] / (double)all : 0;
	double misp = (double)w[TD_V45L2_MISP], den;

	cat[TD_M_HEAVY_OPS] = of_slots(slots,
				       (double)(int64_t)w[TD_V45L2_HEAVY], s1);
	cat[TD_M_FETCH_LAT] = of_slots(slots,
				       width * (double)w[TD_V45L2_CYC0], s1);
	den = misp + (double)w[TD_V45L2_MC];
	cat[TD_M_BR_MISPREDICT] =
		den > 0 ? (int64_t)((double)cat[TD_M_BAD_SPEC] * misp / den)
			: 0;
	den = w[TD_V45L2_CLK1] ? (double)w[TD_V45L2_MEM_DEN] +
					 ret * (double)w[TD_V45L2_P2] *
						 (double)w[TD_V45L2_CLK2] /
						 (double)w[TD_V45L2_CLK1]
			       : 0;
	cat[TD_M_MEM_BOUND] =
		den > 0 ? (int64_t)((double)cat[TD_M_BE_BOUND] *
				    (double)w[TD_V45L2_MEM_NUM] / den)
			: 0;
}

/* min(clocks, x) where the model's list takes it (min_clk). */
static double snb_min(bool apply, uint64_t clk, uint64_t x)
{
	return (double)(apply && clk < x ? clk : x);
}

/*
 * Intel Sandy Bridge, Ivy Bridge, Haswell and Broadwell TopdownL2, each
 * model its list's (MetricGroup TopdownL2): sandybridge/snb-metrics.json
 * (models 0x2a, 0x2d), ivybridge/ivb-metrics.json (0x3a, 0x3e),
 * haswell/hsw-metrics.json (0x3c, 0x3f, 0x45, 0x46),
 * broadwell/bdw-metrics.json (0x3d, 0x47, 0x4f, 0x56), over a
 * multiplexed region as td_formula_v45_l2 takes Skylake's (cat[] level
 * 1, slots scaled, w[] the level-2 values TD_SNBL2_*):
 *   tma_heavy_operations = tma_microcode_sequencer =
 *       UOPS_RETIRED.RETIRE_SLOTS / UOPS_ISSUED.ANY * IDQ.MS_UOPS /
 *       tma_info_thread_slots
 *   tma_fetch_latency = 4 * min(CPU_CLK_UNHALTED.THREAD, IDQ_UOPS_NOT_
 *       DELIVERED.CYCLES_0_UOPS_DELIV.CORE) / tma_info_thread_slots
 *       (Broadwell: no min)
 *   tma_branch_mispredicts = BR_MISP_RETIRED.ALL_BRANCHES /
 *       (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT) *
 *       tma_bad_speculation
 *   tma_memory_bound = (min(CPU_CLK_UNHALTED.THREAD, MEM) +
 *       RESOURCE_STALLS.SB) / (min(CPU_CLK_UNHALTED.THREAD, STALLS) +
 *       EXE1 - (EXE3 if tma_info_thread_ipc > 1.8 else EXE2) -
 *       (RS_EVENTS.EMPTY_CYCLES if tma_fetch_latency > 0.1 else 0) +
 *       RESOURCE_STALLS.SB) * tma_backend_bound
 * where MEM, STALLS and EXE<n> are: Sandy Bridge, CYCLE_ACTIVITY.
 * STALLS_L1D_PENDING, CYCLE_ACTIVITY.CYCLES_NO_DISPATCH and
 * UOPS_DISPATCHED.THREAD cmask n; Ivy Bridge, CYCLE_ACTIVITY.
 * STALLS_LDM_PENDING, CYCLE_ACTIVITY.CYCLES_NO_EXECUTE and
 * UOPS_EXECUTED.CYCLES_GE_n_UOP(S)_EXEC; Haswell, the same
 * CYCLE_ACTIVITY events and UOPS_EXECUTED.CORE cmask n, whose
 * EXE1 - EXE<n> its list halves if #SMT_on (exe_core); Broadwell,
 * CYCLE_ACTIVITY.STALLS_MEM_ANY, STALLS_TOTAL and UOPS_EXECUTED.
 * CYCLES_GE_n_UOP(S)_EXEC, and no min (min_clk false).
 * tma_info_thread_slots is 4 x CORE_CLKS as level 1 takes it
 * (td_formula_v45_l2), tma_info_thread_ipc = INST_RETIRED.ANY /
 * CPU_CLK_UNHALTED.THREAD, the thread's own clocks also with SMT on.
 * min(CPU_CLK_UNHALTED.THREAD, x) is applied with SMT off, where each
 * group's clocks are THREAD; with SMT on they are THREAD_ANY and x is
 * taken as it is (inference: a thread's stall or delivery cycles,
 * counted in the group that counts its clocks, never exceed them;
 * perf's min guards against multiplexing's scaling).  The other four
 * nodes are parent minus child (tma_light_operations,
 * tma_machine_clears, tma_fetch_bandwidth, tma_core_bound), as
 * td_decode computes them.  Heavy operations' and fetch latency's terms
 * are group 1's, the IPC test's and the execution cycles group 3's,
 * memory bound's other terms group 2's: the denominator adds group 2's
 * and group 3's terms per clock of each (as Skylake's does).  The
 * server lists (jaketown, ivytown, haswellx, broadwellx, broadwellde)
 * were not compared: their models take their client's formula.
 */
void td_formula_snb_l2(unsigned width, bool any, bool min_clk, bool exe_core,
		       const uint64_t *w, int64_t slots, int64_t *cat)
{
	bool apply_min = min_clk && !any;
	double s1 = (double)width * (double)w[TD_SNBL2_CLK1] / (any ? 2 : 1);
	double cyc0 = snb_min(apply_min, w[TD_SNBL2_CLK1], w[TD_SNBL2_CYC0]);
	double iss = (double)w[TD_SNBL2_ISSUED];
	double misp = (double)w[TD_SNBL2_MISP], den, num, exe;
	double clk2 = (double)w[TD_SNBL2_CLK2], clk3 = (double)w[TD_SNBL2_CLK3];

	cat[TD_M_HEAVY_OPS] =
		iss > 0 ? of_slots(slots, (double)w[TD_SNBL2_RET] / iss *
						  (double)w[TD_SNBL2_MS], s1)
			: 0;
	cat[TD_M_FETCH_LAT] = of_slots(slots, width * cyc0, s1);
	den = misp + (double)w[TD_SNBL2_MC];
	cat[TD_M_BR_MISPREDICT] =
		den > 0 ? (int64_t)((double)cat[TD_M_BAD_SPEC] * misp / den)
			: 0;
	cat[TD_M_MEM_BOUND] = 0;
	if (!(clk2 > 0) || !(clk3 > 0))
		return;
	exe = (double)(int64_t)((int64_t)w[TD_SNBL2_IPC18] > 0
					? w[TD_SNBL2_EXE_1_3]
					: w[TD_SNBL2_EXE_1_2]);
	if (exe_core && any)
		exe /= 2;
	num = snb_min(apply_min, w[TD_SNBL2_CLK2], w[TD_SNBL2_MEM]) +
	      (double)w[TD_SNBL2_SB];
	den = snb_min(apply_min, w[TD_SNBL2_CLK2], w[TD_SNBL2_STALLS]) +
	      (double)w[TD_SNBL2_SB];
	if (s1 > 0 && width * cyc0 / s1 > 0.1)
		den -= (double)w[TD_SNBL2_RS_EMPTY];
	den = den / clk2 + exe / clk3;
	if (den > 0)
		cat[TD_M_MEM_BOUND] = (int64_t)((double)cat[TD_M_BE_BOUND] *
						(num / clk2) / den);
}

/*
 * Intel Atom TopdownL2 (perf's alderlaken/adln-metrics.json and
 * alderlake/adl-metrics.json cpu_atom for Gracemont, models 0xbe and
 * the E-cores of 0x97, 0x9a, 0xb7, 0xba, 0xbf; W = 5), each node an
 * event over W x CPU_CLK_UNHALTED.CORE:
 *   tma_ifetch_latency = TOPDOWN_FE_BOUND.FRONTEND_LATENCY / slots
 *   tma_branch_mispredicts = TOPDOWN_BAD_SPECULATION.MISPREDICT / slots
 *   tma_core_bound = TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS / slots
 *   tma_ms_uops = UOPS_RETIRED.MS / slots
 *   tma_resource_bound = tma_backend_bound - tma_core_bound
 *   tma_base = (TOPDOWN_RETIRING.ALL - UOPS_RETIRED.MS) / slots
 * Mapping onto struct td_result.l2: ms_uops is heavy operations, base
 * light operations, ifetch latency/bandwidth fetch latency/bandwidth,
 * core bound core bound, resource bound the memory-bound entry (the
 * backend's part that is not core bound).  Base and resource bound are
 * parent minus child in perf too.  perf's tma_ifetch_bandwidth
 * (TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH) and tma_machine_clears
 * (TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS) are events of their own; the
 * library reports frontend bound - ifetch latency and bad speculation
 * - mispredicts for them (td_decode), so that the nodes sum to their
 * parents: equal to perf's where those umasks partition their .ALL
 * event (inference: 0x72 | 0x8d = 0xff for the frontend, 0x3 | 0x4 for
 * bad speculation).  Children are events per the level-2 group's own
 * slots, applied to the region's slots as level 1 is.
 *
 * Crestmont, standalone (sierraforest/srf-metrics.json, models 0xaf,
 * 0xb6; W = 6): tma_ifetch_latency, tma_core_bound and
 * tma_resource_bound as above; the list splits bad speculation too
 * (tma_branch_mispredicts, tma_machine_clears) but not retiring (no
 * tma_ms_uops or tma_base).  A result can say "frontend and backend
 * children only" (TD_RESULT_L2_FE_BE, as Arm's level 2), not "all but
 * retiring's": fe_be reports those two splits and leaves heavy
 * operations and mispredicts 0 here, light operations and machine
 * clears 0 in td_decode_src.  Returns the result flags.
 */
unsigned td_formula_atom_l2(unsigned width, bool fe_be, const uint64_t *w,
			    int64_t slots, int64_t *cat)
{
	double s = (double)width * (double)w[TD_A2_CLK];

	cat[TD_M_FETCH_LAT] = of_slots(slots, (double)w[TD_A2_FE_LAT], s);
	cat[TD_M_MEM_BOUND] = cat[TD_M_BE_BOUND] -
			      of_slots(slots, (double)w[TD_A2_ALLOC], s);
	if (fe_be) {
		cat[TD_M_HEAVY_OPS] = 0;
		cat[TD_M_BR_MISPREDICT] = 0;
		return TD_RESULT_L2 | TD_RESULT_L2_FE_BE;
	}
	cat[TD_M_HEAVY_OPS] = of_slots(slots, (double)w[TD_A2_MS], s);
	cat[TD_M_BR_MISPREDICT] = of_slots(slots, (double)w[TD_A2_MISP], s);
	return TD_RESULT_L2;
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
static inline __attribute__((always_inline)) void
v45_l1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	uint64_t slots = width * v[TD_V45_CLK];
	uint64_t bad = v[TD_V45_ISSUED] - v[TD_V45_RET_SLOTS] +
		       width * v[TD_V45_RECOVERY];

	c->slots = slots;
	c->cat[TD_M_RETIRING] = 255 * v[TD_V45_RET_SLOTS];
	c->cat[TD_M_BAD_SPEC] = 255 * bad;
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_V45_IDQ_ND];
	c->cat[TD_M_BE_BOUND] = 255 * (slots - v[TD_V45_IDQ_ND] - bad -
				       v[TD_V45_RET_SLOTS]);
}

void td_formula_v45(unsigned width, const uint64_t *v, struct td_counts *c)
{
	td_counts_zero_cats(c);
	v45_l1(width, v, c);
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
static inline __attribute__((always_inline)) void
v1_l1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	uint64_t slots = width * v[TD_V1_CLK];
	uint64_t fe = width * v[TD_V1_FE], bad = width * v[TD_V1_BAD];

	c->slots = slots;
	c->cat[TD_M_RETIRING] = 255 * v[TD_V1_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * bad;
	c->cat[TD_M_FE_BOUND] = 255 * fe;
	c->cat[TD_M_BE_BOUND] = 255 * (slots - fe - bad - v[TD_V1_RET]);
}

void td_formula_v1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	td_counts_zero_cats(c);
	v1_l1(width, v, c);
}

/*
 * Intel Atom V2, Tremont .. Skymont (perf's JSON for cpu_atom, e.g.
 * alderlake/adl-metrics.json; arch/x86/events/intel/core.c topdown-*
 * aliases): slots = W x
 * CPU_CLK_UNHALTED.CORE, each category its TOPDOWN_*.ALL event.  The four
 * are counted independently; td_decode normalises by their sum and
 * reports how far it is from slots in err.
 */
static inline __attribute__((always_inline)) void
atom_v2_l1(unsigned width, const uint64_t *v, struct td_counts *c)
{
	c->slots = width * v[TD_V2_CLK];
	c->cat[TD_M_RETIRING] = 255 * v[TD_V2_RET];
	c->cat[TD_M_BAD_SPEC] = 255 * v[TD_V2_BAD];
	c->cat[TD_M_FE_BOUND] = 255 * v[TD_V2_FE];
	c->cat[TD_M_BE_BOUND] = 255 * v[TD_V2_BE];
}

void td_formula_atom_v2(unsigned width, const uint64_t *v,
			struct td_counts *c)
{
	td_counts_zero_cats(c);
	atom_v2_l1(width, v, c);
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

/*
 * td_formula_counts' slots, level-1 categories and TD_M_SMT, the same
 * bit for bit, the other categories left as they were: all that
 * td_decode_inline reads without level 2 (a fast end's result,
 * counters_fast.c), without the stores that zero the rest.
 */
void td_formula_l1(const struct td_gen_model *m, const uint64_t *v,
		   struct td_counts *c)
{
	switch (m->formula) {
	case TD_F_ZEN:
		zen_l1(m->width, v, c);
		return;
	case TD_F_V45:
		if (m->any)
			break;
		v45_l1(m->width, v, c);
		c->cat[TD_M_SMT] = 0;
		return;
	case TD_F_V1:
		v1_l1(m->width, v, c);
		c->cat[TD_M_SMT] = 0;
		return;
	case TD_F_ATOM_V2:
		atom_v2_l1(m->width, v, c);
		c->cat[TD_M_SMT] = 0;
		return;
	case TD_F_ARM:
	case TD_F_ARM_CYCLES:
		break;
	}
	td_formula_counts(m, v, c);
}
