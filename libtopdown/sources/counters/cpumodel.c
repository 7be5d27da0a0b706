/* SPDX-License-Identifier: MIT */
/*
 * Which TopDown formula fits this CPU, from what the kernel publishes:
 * vendor, family and model from /proc/cpuinfo (read through libc like
 * every other file, so tests and interposers can present another CPU)
 * and, on Intel Atom cores, the encodings the PMU's sysfs events/ lists.
 * A CPU not in the table gets -ENOSYS, never a guessed formula.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "x86_formulas.h"

#define EV(event, umask, cmask) \
	((uint64_t)(event) | (uint64_t)(umask) << 8 | (uint64_t)(cmask) << 24)
#define EV_EDGE (UINT64_C(1) << 18) /* edge detect (x86 format "edge") */
/* AMD: event bits 11:8 go to config 35:32 (format "config:0-7,32-35"). */
#define AMD_EV(event, umask) \
	(((uint64_t)(event) & 0xff) | ((uint64_t)(event) >> 8) << 32 | \
	 (uint64_t)(umask) << 8)

/* Zen 4/5 PipelineL1 events (perf's amdzen4/amdzen5 pipeline.json). */
static void zen(struct td_gen_model *m, unsigned width, const char *name)
{
	m->formula = TD_F_ZEN;
	m->width = width;
	m->name = name;
	m->nr = TD_ZEN_NR;
	m->config[TD_ZEN_CYC] = AMD_EV(0x076, 0);   /* ls_not_halted_cyc */
	m->config[TD_ZEN_FE] = AMD_EV(0x1a0, 0x01); /* no_ops_from_frontend */
	m->config[TD_ZEN_BE] = AMD_EV(0x1a0, 0x1e); /* backend_stalls */
	m->config[TD_ZEN_SMT] = AMD_EV(0x1a0, 0x60); /* smt_contention */
	m->config[TD_ZEN_DISP] = AMD_EV(0x0aa, 0x07); /* de_src_op_disp.all */
	m->config[TD_ZEN_RET] = AMD_EV(0x0c1, 0);   /* ex_ret_ops */
	m->derivable = TD_ZEN_SMT;
	/* PipelineL2 (same files): 6 more events, + cycles and ex_ret_ops
	 * again so that each of its ratios is counted in one group */
	m->nr2 = TD_ZEN2_NR;
	m->config2[TD_ZEN2_CYC] = m->config[TD_ZEN_CYC];
	m->config2[TD_ZEN2_RET] = m->config[TD_ZEN_RET];
	m->config2[TD_ZEN2_FE_CMASK] = AMD_EV(0x1a0, 0x01) |
				       (uint64_t)width << 24;
	m->config2[TD_ZEN2_MISP] = AMD_EV(0x0c3, 0);   /* ex_ret_brn_misp */
	/* resyncs_or_nc_redirects (Zen 4), bp_redirects.resync (Zen 5) */
	m->config2[TD_ZEN2_RESTART] = width == 6 ? AMD_EV(0x096, 0)
						 : AMD_EV(0x09f, 0x01);
	m->config2[TD_ZEN2_NC] = AMD_EV(0x0d6, 0x02);  /* not_complete */
	m->config2[TD_ZEN2_LOAD_NC] = AMD_EV(0x0d6, 0xa2);
	m->config2[TD_ZEN2_UCODE] = AMD_EV(0x1c2, 0);  /* ex_ret_ucode_ops */
	m->l2_group[0] = TD_ZEN2_GROUP;
	m->l2_group[1] = TD_ZEN2_GROUP;
}

/*
 * Family 19h: Zen 3 is models 0x00-0x0f, 0x20-0x2f and 0x40-0x5f, the
 * rest Zen 4 (perf's x86 mapfile: amdzen3 patterns before the amdzen4
 * catch-all); family 1Ah is Zen 5 (mapfile "AuthenticAMD-26-...").
 * Zen 3 has no de_no_dispatch_per_slot (no PipelineL1 in perf): unknown.
 */
static int amd_lookup(unsigned family, unsigned model, struct td_gen_model *m)
{
	unsigned hi = model >> 4;

	if (family == 0x19 && !(hi == 0 || hi == 2 || hi == 4 || hi == 5)) {
		zen(m, 6, "zen4");
		return 0;
	}
	if (family == 0x1a) {
		zen(m, 8, "zen5");
		return 0;
	}
	return -ENOSYS;
}

/*
 * V4.5 events by their Intel names; encodings from Intel's perfmon event
 * lists (as in perf's pmu-events/arch/x86 JSON).  INT_MISC.RECOVERY_CYCLES
 * is umask 0x03 before Skylake and 0x01 from Skylake on, cmask 1 both.
 */
static void v45(struct td_gen_model *m, bool skylake, const char *name)
{
	m->formula = TD_F_V45;
	m->width = 4;
	m->name = name;
	m->nr = TD_V45_NR;
	m->config[TD_V45_CLK] = EV(0x3c, 0x00, 0);     /* CPU_CLK_UNHALTED.THREAD */
	m->config[TD_V45_IDQ_ND] = EV(0x9c, 0x01, 0);  /* IDQ_UOPS_NOT_DELIVERED.CORE */
	m->config[TD_V45_ISSUED] = EV(0x0e, 0x01, 0);  /* UOPS_ISSUED.ANY */
	m->config[TD_V45_RET_SLOTS] = EV(0xc2, 0x02, 0); /* UOPS_RETIRED.RETIRE_SLOTS */
	m->config[TD_V45_RECOVERY] = EV(0x0d, skylake ? 0x01 : 0x03, 1);
}

/*
 * Skylake's TopdownL2 events (skl-metrics.json's terms; encodings from
 * perf's skylake pipeline.json, frontend.json, memory.json), groups as
 * TD_V452_* says.  INST_RETIRED.ANY is the architectural 0xc0 the kernel
 * gives fixed counter 0 (intel_perfmon_event_map).  The SMT form's
 * clocks are THREAD_ANY (td_model_anythread).
 */
static void v45_skylake_l2(struct td_gen_model *m)
{
	uint64_t *c = m->config2;

	m->nr2 = TD_V452_NR;
	c[TD_V452_CLK1] = m->config[TD_V45_CLK];
	c[TD_V452_INST] = EV(0xc0, 0x00, 0);       /* INST_RETIRED.ANY */
	c[TD_V452_RET] = m->config[TD_V45_RET_SLOTS];
	c[TD_V452_MF] = EV(0xc2, 0x04, 0);         /* UOPS_RETIRED.MACRO_FUSED */
	/* IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE */
	c[TD_V452_CYC0] = EV(0x9c, 0x01, 4);
	c[TD_V452_P2] = EV(0xa6, 0x04, 0);         /* EXE_ACTIVITY.2_PORTS_UTIL */
	c[TD_V452_CLK2] = m->config[TD_V45_CLK];
	c[TD_V452_SMA] = EV(0xa3, 0x14, 20);       /* CYCLE_ACTIVITY.STALLS_MEM_ANY */
	c[TD_V452_BOS] = EV(0xa6, 0x40, 2);        /* EXE_ACTIVITY.BOUND_ON_STORES */
	c[TD_V452_ST] = EV(0xa3, 0x04, 4);         /* CYCLE_ACTIVITY.STALLS_TOTAL */
	c[TD_V452_P1] = EV(0xa6, 0x02, 0);         /* EXE_ACTIVITY.1_PORTS_UTIL */
	/* BR_MISP_RETIRED.ALL_BRANCHES, MACHINE_CLEARS.COUNT (edge, cmask 1) */
	c[TD_V452_MISP] = EV(0xc5, 0x00, 0);
	c[TD_V452_MC] = EV(0xc3, 0x01, 1) | EV_EDGE;
	m->l2_group[0] = TD_V452_CLK2;
	m->l2_group[1] = TD_V452_MISP - TD_V452_CLK2;
	m->l2_group[2] = TD_V452_NR - TD_V452_MISP;
}

/*
 * The forms of Sandy Bridge's to Broadwell's level 2 (formulas.c
 * td_formula_snb_l2): which cycle counts its list takes at most the
 * clocks, and whether its execution cycles are the core's.
 */
enum snb_l2_form { SNB_L2_MIN_THREAD_EXE, SNB_L2_MIN_CORE_EXE,
		   SNB_L2_THREAD_EXE };

/*
 * Sandy Bridge's to Broadwell's TopdownL2 events (the terms of
 * snb-metrics.json, ivb-metrics.json, hsw-metrics.json and
 * bdw-metrics.json; encodings from perf's sandybridge, ivybridge,
 * haswell and broadwell pipeline.json, frontend.json, memory.json),
 * groups as TD_SNB2_* says.  The four lists name memory bound's events
 * differently but encode them alike: event 0xa3 umask 0x06 cmask 6
 * (Sandy Bridge's CYCLE_ACTIVITY.STALLS_L1D_PENDING, Ivy Bridge's and
 * Haswell's STALLS_LDM_PENDING, Broadwell's STALLS_MEM_ANY), 0xa3 umask
 * 0x04 cmask 4 (CYCLES_NO_DISPATCH, CYCLES_NO_EXECUTE, STALLS_TOTAL),
 * and 0xb1 with cmask n, umask 0x01 for the thread's execution cycles
 * (UOPS_DISPATCHED.THREAD, UOPS_EXECUTED.CYCLES_GE_n_UOP(S)_EXEC), 0x02
 * for the core's (Haswell's UOPS_EXECUTED.CORE).  The SMT form's clocks
 * are THREAD_ANY (td_model_anythread), but the IPC test's, which are
 * the thread's own (CPU_CLK_UNHALTED.THREAD_P on a general counter,
 * tma_info_thread_ipc).
 */
static void v45_snb_l2(struct td_gen_model *m, enum snb_l2_form form)
{
	uint64_t *c = m->config2;
	unsigned exe_umask = form == SNB_L2_MIN_CORE_EXE ? 0x02 : 0x01;

	m->nr2 = TD_SNB2_NR;
	m->l2_snb = true;
	m->l2_min_clk = form != SNB_L2_THREAD_EXE;
	m->l2_exe_core = form == SNB_L2_MIN_CORE_EXE;
	c[TD_SNB2_CLK1] = m->config[TD_V45_CLK];
	/* IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE */
	c[TD_SNB2_CYC0] = EV(0x9c, 0x01, 4);
	c[TD_SNB2_MS] = EV(0x79, 0x30, 0);          /* IDQ.MS_UOPS */
	c[TD_SNB2_RET] = m->config[TD_V45_RET_SLOTS];
	c[TD_SNB2_ISSUED] = m->config[TD_V45_ISSUED];
	c[TD_SNB2_CLK2] = m->config[TD_V45_CLK];
	c[TD_SNB2_MEM] = EV(0xa3, 0x06, 6);
	c[TD_SNB2_STALLS] = EV(0xa3, 0x04, 4);
	c[TD_SNB2_SB] = EV(0xa2, 0x08, 0);          /* RESOURCE_STALLS.SB */
	c[TD_SNB2_RS_EMPTY] = EV(0x5e, 0x01, 0);    /* RS_EVENTS.EMPTY_CYCLES */
	c[TD_SNB2_CLK3] = m->config[TD_V45_CLK];
	c[TD_SNB2_INST] = EV(0xc0, 0x00, 0);        /* INST_RETIRED.ANY */
	c[TD_SNB2_THREAD] = EV(0x3c, 0x00, 0);      /* CPU_CLK_UNHALTED.THREAD_P */
	c[TD_SNB2_EXE1] = EV(0xb1, exe_umask, 1);
	c[TD_SNB2_EXE2] = EV(0xb1, exe_umask, 2);
	c[TD_SNB2_EXE3] = EV(0xb1, exe_umask, 3);
	/* BR_MISP_RETIRED.ALL_BRANCHES, MACHINE_CLEARS.COUNT (edge, cmask 1) */
	c[TD_SNB2_MISP] = EV(0xc5, 0x00, 0);
	c[TD_SNB2_MC] = EV(0xc3, 0x01, 1) | EV_EDGE;
	m->l2_group[0] = TD_SNB2_CLK2;
	m->l2_group[1] = TD_SNB2_CLK3 - TD_SNB2_CLK2;
	m->l2_group[2] = TD_SNB2_MISP - TD_SNB2_CLK3;
	m->l2_group[3] = TD_SNB2_NR - TD_SNB2_MISP;
}

/*
 * V4.5 with SMT on: CPU_CLK_UNHALTED.THREAD_ANY and INT_MISC.
 * RECOVERY_CYCLES_ANY are the same events with AnyThread (bit 21) set.
 */
void td_model_anythread(struct td_gen_model *m)
{
	m->any = true;
	m->config[TD_V45_CLK] |= TD_EV_ANY;
	m->config[TD_V45_RECOVERY] |= TD_EV_ANY;
	if (m->nr2 && m->l2_snb) { /* every group's clocks, but IPC's */
		m->config2[TD_SNB2_CLK1] |= TD_EV_ANY;
		m->config2[TD_SNB2_CLK2] |= TD_EV_ANY;
		m->config2[TD_SNB2_CLK3] |= TD_EV_ANY;
	} else if (m->nr2) { /* level 2's slots: CORE_CLKS = THREAD_ANY / 2 */
		m->config2[TD_V452_CLK1] |= TD_EV_ANY;
		m->config2[TD_V452_CLK2] |= TD_EV_ANY;
	}
}

/*
 * V1 events (Intel's perfmon lists for Silvermont and Knights Landing,
 * as in perf's silvermont/ and knightslanding/ JSON): CPU_CLK_UNHALTED.CORE
 * 0x3c,
 * NO_ALLOC_CYCLES.MISPREDICTS 0xca/0x04, NO_ALLOC_CYCLES.NOT_DELIVERED
 * 0xca/0x50 (Knights Landing 0xca/0x90), UOPS_RETIRED.ALL 0xc2/0x10.
 * Both cores are 2 wide.  Three of the four need general-purpose
 * counters and these cores have two (clocks go to a fixed counter), so
 * on hardware the group does not fit and td_open reports -ENOSPC
 * (counters.c); the formula is here for when it does (e.g. a kernel that
 * exposes more counters).
 */
static void v1(struct td_gen_model *m, const char *name, unsigned fe_umask)
{
	m->formula = TD_F_V1;
	m->width = 2;
	m->name = name;
	m->nr = TD_V1_NR;
	m->config[TD_V1_CLK] = EV(0x3c, 0x00, 0);
	m->config[TD_V1_FE] = EV(0xca, fe_umask, 0);
	m->config[TD_V1_BAD] = EV(0xca, 0x04, 0);
	m->config[TD_V1_RET] = EV(0xc2, 0x10, 0);
}

/*
 * Atom V2: TOPDOWN_FE_BOUND.ALL, TOPDOWN_BAD_SPECULATION.ALL,
 * TOPDOWN_RETIRING.ALL and TOPDOWN_BE_BOUND.ALL of each core as perf's
 * event lists give them (tools/perf/pmu-events/arch/x86/<dir>/
 * pipeline.json), and the aliases the kernel publishes in events/
 * (arch/x86/events/intel/core.c, intel_pmu_init: td_attr of each case).
 * An alias wins over the table unless it is in `foreign`: the kernel's
 * table of another core, naming another event on this one.
 */
#define ALIAS(ev) (1u << (ev))
static void atom(struct td_gen_model *m, unsigned width, const char *name,
		 uint64_t fe, uint64_t bad, uint64_t ret, uint64_t be,
		 unsigned foreign)
{
	m->formula = TD_F_ATOM_V2;
	m->width = width;
	m->name = name;
	m->nr = TD_V2_NR;
	m->config[TD_V2_CLK] = EV(0x3c, 0x00, 0); /* CPU_CLK_UNHALTED.CORE */
	m->config[TD_V2_FE] = fe;
	m->config[TD_V2_BAD] = bad;
	m->config[TD_V2_RET] = ret;
	m->config[TD_V2_BE] = be;
	m->derivable = TD_V2_BE;
	m->alias_foreign = foreign;
}

/*
 * Gracemont (perf's alderlaken and alderlake cpu_atom lists): retiring
 * 0xc2, bad speculation 0x73 umask 0 (.ALL; umasks 0x1 NUKE, 0x2
 * FASTNUKE, 0x4 MISPREDICT select parts of it), frontend 0x71, backend
 * 0x74; 5 wide (adln-metrics.json: 5 * CPU_CLK_UNHALTED.CORE).
 */
static void gracemont(struct td_gen_model *m, unsigned foreign)
{
	atom(m, 5, "gracemont", EV(0x71, 0, 0), EV(0x73, 0, 0),
	     EV(0xc2, 0, 0), EV(0x74, 0, 0), foreign);
}

/*
 * Gracemont's TopdownL2 events (adln-metrics.json's terms; encodings
 * from perf's alderlaken frontend.json and pipeline.json):
 * TOPDOWN_FE_BOUND.FRONTEND_LATENCY 0x71/0x72, TOPDOWN_BAD_SPECULATION.
 * MISPREDICT 0x73/0x04, TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS 0x74/0x01,
 * UOPS_RETIRED.MS 0xc2/0x01; with the clocks, one group.
 */
static void gracemont_l2(struct td_gen_model *m)
{
	m->nr2 = TD_A2_NR;
	m->config2[TD_A2_CLK] = m->config[TD_V2_CLK];
	m->config2[TD_A2_FE_LAT] = EV(0x71, 0x72, 0);
	m->config2[TD_A2_MISP] = EV(0x73, 0x04, 0);
	m->config2[TD_A2_ALLOC] = EV(0x74, 0x01, 0);
	m->config2[TD_A2_MS] = EV(0xc2, 0x01, 0);
	m->l2_group[0] = TD_A2_NR;
}

/*
 * Crestmont's, standalone (srf-metrics.json's TopdownL2 terms; the
 * events' encodings as on Gracemont, perf's Atom lists): ifetch latency
 * and core bound only, the frontend and backend children
 * (td_formula_atom_l2: the list splits no retiring).
 */
static void crestmont_l2(struct td_gen_model *m)
{
	m->nr2 = TD_A2_FE_BE_NR;
	m->config2[TD_A2_CLK] = m->config[TD_V2_CLK];
	m->config2[TD_A2_FE_LAT] = EV(0x71, 0x72, 0);
	m->config2[TD_A2_ALLOC] = EV(0x74, 0x01, 0);
	m->l2_group[0] = TD_A2_FE_BE_NR;
	m->l2_fe_be = true;
}

/*
 * Crestmont (sierraforest, grandridge, meteorlake cpu_atom lists):
 * retiring is 0x72 (0xc2 is UOPS_RETIRED.ALL there); 6 wide
 * (srf-metrics.json, mtl-metrics.json: 6 * CPU_CLK_UNHALTED.CORE).
 */
static void crestmont(struct td_gen_model *m, unsigned foreign)
{
	atom(m, 6, "crestmont", EV(0x71, 0, 0), EV(0x73, 0, 0),
	     EV(0x72, 0, 0), EV(0x74, 0, 0), foreign);
}

/*
 * Skymont and Darkmont (lunarlake/arrowlake cpu_atom, clearwaterforest
 * lists): the architectural encodings, which the kernel schedules on
 * fixed counters 4-6 (intel_skt_event_constraints); 8 wide
 * (lnl-metrics.json: 8 * CPU_CLK_UNHALTED.CORE; Darkmont's width is an
 * inference: its metrics list has no TopDown metrics).
 */
static void skymont(struct td_gen_model *m, const char *name)
{
	atom(m, 8, name, EV(0x9c, 0x01, 0), EV(0x73, 0, 0),
	     EV(0xc2, 0x02, 0), EV(0xa4, 0x02, 0), 0);
}

/*
 * Skymont's TopdownL2 on the E-cores of Lunar Lake and Arrow Lake
 * (perf's lunarlake/lnl-metrics.json, Unit cpu_atom): tma_ifetch_latency
 * = TOPDOWN_FE_BOUND.FRONTEND_LATENCY / (8 x CPU_CLK_UNHALTED.CORE),
 * tma_core_bound = TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS / (8 x clocks),
 * tma_resource_bound = tma_backend_bound - tma_core_bound; encodings
 * 0x71/0x72 and 0x74/0x01 (lunarlake pipeline.json).  The list splits
 * bad speculation too (tma_branch_mispredicts, tma_machine_clears) but
 * not retiring (no tma_ms_uops or tma_base): as on Crestmont, the
 * frontend and backend children only (TD_RESULT_L2_FE_BE).  In the
 * E-core group itself: level 1 takes fixed counters 4-6 and one general
 * counter there, and the list gives its cpu_atom events general
 * counters 0-7, so two more fit beside level 1 with no multiplexing.
 *
 * Meteor Lake's and Arrow Lake-U's Crestmont E-cores the same way
 * (meteorlake/mtl-metrics.json, Unit cpu_atom: the same two events over
 * 6 x clocks; encodings from meteorlake pipeline.json): Crestmont has 8
 * general counters (perf's grandridge counter.json; the kernel takes
 * each hybrid PMU's own from CPUID leaf 0x23, update_pmu_cap), and its
 * 7 events fit them, the clocks on fixed counter 1 or a general counter
 * (arch/x86/events/intel/core.c intel_pmu_check_event_constraints
 * extends 0x003c's constraint to the general counters).  So a separate
 * level-2 group would not take turns with level 1's but count beside
 * it, where the multiplexed mode (hybrid.c ecore_mux_fold) assumes the
 * two never count together.
 */
static void hybrid_l2_in_group(struct td_gen_model *m)
{
	m->config[TD_V2_FE_LAT] = EV(0x71, 0x72, 0);
	m->config[TD_V2_ALLOC] = EV(0x74, 0x01, 0);
	m->nr = TD_V2_L2_NR;
	m->l2_fe_be = true;
	m->l2_in_group = true;
}

/*
 * Family 6 model numbers: the kernel's arch/x86/include/asm/intel-family.h.
 * The V4.5 servers (0x2d, 0x3e, 0x3f, 0x4f, 0x56) take their client's
 * level 2: perf's jaketown/jkt-, ivytown/ivt-, haswellx/hsx-, broadwellx/
 * bdx- and broadwellde/bdwde-metrics.json give the same TopdownL2
 * expressions, with the same events, as snb-, ivb-, hsw- and bdw-.
 */
static int intel_lookup(unsigned family, unsigned model,
			struct td_gen_model *m)
{
	if (family != 6)
		return -ENOSYS;
	switch (model) {
	case 0x2a: case 0x2d:
		v45(m, false, "sandybridge");
		v45_snb_l2(m, SNB_L2_MIN_THREAD_EXE);
		return 0;
	case 0x3a: case 0x3e:
		v45(m, false, "ivybridge");
		v45_snb_l2(m, SNB_L2_MIN_THREAD_EXE);
		return 0;
	case 0x3c: case 0x3f: case 0x45: case 0x46:
		v45(m, false, "haswell");
		v45_snb_l2(m, SNB_L2_MIN_CORE_EXE);
		return 0;
	case 0x3d: case 0x47: case 0x4f: case 0x56:
		v45(m, false, "broadwell");
		v45_snb_l2(m, SNB_L2_THREAD_EXE);
		return 0;
	case 0x4e: case 0x5e: case 0x55: case 0x8e: case 0x9e: case 0xa5:
	case 0xa6:
		v45(m, true, "skylake");
		v45_skylake_l2(m);
		return 0;
	case 0x37: case 0x4a: case 0x4d: case 0x5a: case 0x5d:
		v1(m, "silvermont", 0x50);
		return 0;
	case 0x4c: /* Airmont: Silvermont's core */
		v1(m, "airmont", 0x50);
		return 0;
	case 0x57: case 0x85: /* Knights Landing, Knights Mill */
		v1(m, "knightslanding", 0x90);
		return 0;
	/*
	 * Tremont: the kernel's tnt_events_attrs are its own (snowridgex,
	 * elkhartlake lists: bad speculation .ALL is umask 0x6 on Tremont,
	 * which has no NUKE umask).  Width 4: inference.
	 */
	case 0x86: case 0x96: case 0x9c:
		atom(m, 4, "tremont", EV(0x71, 0, 0), EV(0x73, 0x06, 0),
		     EV(0xc2, 0, 0), EV(0x74, 0, 0), 0);
		return 0;
	/*
	 * Alder Lake-N: case INTEL_ATOM_GRACEMONT publishes Tremont's
	 * tnt_events_attrs, whose topdown-bad-spec (umask 0x6: FASTNUKE |
	 * MISPREDICT on Gracemont) leaves out the NUKE slots: foreign.
	 */
	case 0xbe:
		gracemont(m, ALIAS(TD_V2_BAD));
		gracemont_l2(m);
		return 0;
	/* Sierra Forest, Grand Ridge: cmt_events_attrs, Crestmont's own. */
	case 0xaf: case 0xb6:
		crestmont(m, 0);
		crestmont_l2(m);
		return 0;
	/* Clearwater Forest: INTEL_ATOM_DARKMONT_X, skt_events_attrs. */
	case 0xdd:
		skymont(m, "darkmont");
		return 0;
	default:
		return -ENOSYS;
	}
}

/*
 * The E-core of each hybrid part (family 6 models: intel-family.h) and
 * cpu_atom's aliases, the first string of each EVENT_ATTR_STR_HYBRID in
 * arch/x86/events/intel/core.c.  Alder Lake and Raptor Lake: Gracemont,
 * adl strings, its own.  Meteor Lake and Arrow Lake-U: Crestmont with
 * the same adl strings, so topdown-retiring is 0xc2 (UOPS_RETIRED.ALL on
 * Crestmont; meteorlake lists TOPDOWN_RETIRING.ALL as 0x72): foreign.
 * Lunar Lake, Arrow Lake, Arrow Lake-H: Skymont, lnl/arl_h strings, its
 * own.  (Arrow Lake-H's low-power E-cores are a third PMU, cpu_lowpower,
 * whose retiring alias is 0xc2 too; the library opens cpu_atom only.)
 *
 * Level 2 of the Gracemont E-cores (TD_OPT_L2_MULTIPLEX, hybrid.c): the
 * standalone core's events and formula.  perf's
 * alderlake/adl-metrics.json, Unit cpu_atom, has Gracemont's tree
 * (tma_ms_uops, tma_base, tma_branch_mispredicts, tma_core_bound =
 * TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS / (5 x CPU_CLK_UNHALTED.CORE),
 * tma_resource_bound, and the frontend's latency/bandwidth split:
 * TOPDOWN_FE_BOUND.FRONTEND_LATENCY over the slots).  Crestmont's
 * (meteorlake/mtl-metrics.json, Unit cpu_atom, over 6 x clocks:
 * tma_ifetch_latency, tma_core_bound, tma_resource_bound,
 * tma_branch_mispredicts, tma_machine_clears; no tma_ms_uops or tma_base)
 * and Skymont's: the frontend and backend children, in the E group
 * (hybrid_l2_in_group).
 */
int td_hybrid_atom_lookup(unsigned family, unsigned model,
			  struct td_gen_model *m)
{
	memset(m, 0, sizeof(*m));
	if (family != 6)
		return -ENOSYS;
	switch (model) {
	case 0x97: case 0x9a: case 0xb7: case 0xba: case 0xbf:
		gracemont(m, 0);
		gracemont_l2(m);
		return 0;
	case 0xaa: case 0xac: case 0xb5:
		crestmont(m, ALIAS(TD_V2_RET));
		hybrid_l2_in_group(m);
		return 0;
	case 0xbd: case 0xc5: case 0xc6:
		skymont(m, "skymont");
		hybrid_l2_in_group(m);
		return 0;
	default:
		return -ENOSYS;
	}
}

int td_cpu_lookup(const char *vendor, unsigned family, unsigned model,
		  struct td_gen_model *m)
{
	memset(m, 0, sizeof(*m));
	if (strcmp(vendor, "AuthenticAMD") == 0)
		return amd_lookup(family, model, m);
	if (strcmp(vendor, "GenuineIntel") == 0)
		return intel_lookup(family, model, m);
	return -ENOSYS;
}

/* The value after "key<spaces>: " on the line starting with key. */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *q = p + n;

		if (strncmp(p, key, n) != 0)
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == ':')
			return q + 1 + (q[1] == ' ');
	}
	return NULL;
}

const char *td_cpuinfo_field(const char *text, const char *key)
{
	return field(text, key);
}

/* The first processor's vendor_id, cpu family and model. */
int td_cpuinfo_parse(const char *text, char *vendor, size_t len,
		     unsigned *family, unsigned *model)
{
	const char *v = field(text, "vendor_id");
	const char *f = field(text, "cpu family");
	const char *m = field(text, "model");
	size_t n;

	if (!v || !f || !m)
		return -ENOSYS;
	n = strcspn(v, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(vendor, v, n);
	vendor[n] = '\0';
	*family = (unsigned)strtoul(f, NULL, 10);
	*model = (unsigned)strtoul(m, NULL, 10);
	return 0;
}

/*
 * Atom cores: the PMU's topdown-* strings win over the table, but for
 * those the table marks foreign (another core's kernel table).
 */
static void sysfs_overrides(const char *pmu, struct td_gen_model *m)
{
	static const struct { const char *name; int idx; } ev[] = {
		{ "topdown-fe-bound", TD_V2_FE },
		{ "topdown-bad-spec", TD_V2_BAD },
		{ "topdown-retiring", TD_V2_RET },
		{ "topdown-be-bound", TD_V2_BE },
	};
	char path[128], spec[128];

	if (m->formula != TD_F_ATOM_V2)
		return;
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		uint64_t config;

		if (m->alias_foreign & ALIAS(ev[i].idx))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/bus/event_source/devices/%s/events/%s", pmu,
			 ev[i].name);
		if (td_sys_read_file(path, spec, sizeof(spec)) > 0 &&
		    td_pmu_parse_event(pmu, spec, &config) == 0)
			m->config[ev[i].idx] = config;
	}
}

static int model_from_cpuinfo(const char *pmu, bool hybrid,
			      struct td_gen_model *m)
{
	char text[4096], vendor[32] = "", desc[96];
	unsigned family = 0, model = 0;
	int n = td_sys_read_file("/proc/cpuinfo", text, sizeof(text));
	int err;

	if (n < 0)
		return n;
	err = td_cpuinfo_parse(text, vendor, sizeof(vendor), &family, &model);
	if (err == 0 && hybrid)
		err = strcmp(vendor, "GenuineIntel") == 0
			      ? td_hybrid_atom_lookup(family, model, m)
			      : -ENOSYS;
	else if (err == 0)
		err = td_cpu_lookup(vendor, family, model, m);
	if (err < 0) {
		snprintf(desc, sizeof(desc), "%s family %#x model %#x",
			 vendor[0] && err == -ENOSYS && n > 0 ? vendor : "unknown",
			 family, model);
		td_set_unknown_cpu(desc);
		return err;
	}
	sysfs_overrides(pmu, m);
	return 0;
}

int td_cpu_model(const char *pmu, struct td_gen_model *m)
{
	return model_from_cpuinfo(pmu, false, m);
}

int td_cpu_model_atom(const char *pmu, struct td_gen_model *m)
{
	return model_from_cpuinfo(pmu, true, m);
}
