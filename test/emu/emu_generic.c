/* SPDX-License-Identifier: MIT */
/*
 * Ordinary (general-purpose) counters of the emulated PMU, for the
 * profiles without PERF_METRICS, modelled on the kernel's x86 code
 * (arch/x86/events/core.c; include/uapi/linux/perf_event.h):
 * - x86_perf_event_set_period at start: counter = -left (48 bits),
 *   prev_count = -left (64 bits), so that offset = count - prev_count
 *   plus the sign-extended register is the count;
 * - x86_perf_event_update (read(2), schedule-out, PMI): count += the
 *   48-bit difference, prev_count = register; the page is not rewritten;
 * - the register wraps at 2^48; the overflow PMI comes later (at the next
 *   emu_run), updates, restarts the period and rewrites the page;
 * - schedule-in may assign other counters (gp_rotate): index changes.
 * Workloads: true fractions in, the counts each formula expects out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

#define MASK48 ((UINT64_C(1) << 48) - 1)
#define ARM_CYCLE_COUNTER 31 /* PMCCNTR_EL0: user index 32 */

static uint64_t mask_of(const struct emu_event *e)
{
	return e->width >= 64 ? UINT64_MAX : (UINT64_C(1) << e->width) - 1;
}

struct map {
	uint64_t config;
	int sig;
};

/* Level 1, then PipelineL2's events (perf's amdzen4/5 pipeline.json,
 * cmask in config bits 24-31: 6 on Zen 4, 8 on Zen 5). */
static const struct map zen_map[] = {
	{ 0x76, SIG_CYCLES }, { 0x1000001a0ull, SIG_FE },
	{ 0x100001ea0ull, SIG_BE }, { 0x1000060a0ull, SIG_SMT },
	{ 0x7aa, SIG_DISP }, { 0xc1, SIG_RET },
	{ 0x1060001a0ull, SIG_FE_CMASK }, { 0x1080001a0ull, SIG_FE_CMASK },
	{ 0xc3, SIG_MISP }, { 0x96, SIG_RESTART }, { 0x19f, SIG_RESTART },
	{ 0x2d6, SIG_NC }, { 0xa2d6, SIG_LOAD_NC },
	{ 0x1000000c2ull, SIG_UCODE }, { 0, 0 },
};
/*
 * Skylake: level 1, then skl-metrics.json's TopdownL2 events (cmask in
 * config bits 24-31, edge bit 18): INST_RETIRED.ANY, UOPS_RETIRED.
 * MACRO_FUSED, IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE,
 * BR_MISP_RETIRED.ALL_BRANCHES, MACHINE_CLEARS.COUNT, CYCLE_ACTIVITY.
 * STALLS_MEM_ANY, EXE_ACTIVITY.BOUND_ON_STORES, CYCLE_ACTIVITY.
 * STALLS_TOTAL, EXE_ACTIVITY.1_PORTS_UTIL and 2_PORTS_UTIL.
 */
static const struct map skl_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x10e, SIG_ISSUED },
	{ 0x2c2, SIG_RET }, { 0x100010dull, SIG_RECOVERY },
	{ 0xc0, SIG_INST }, { 0x4c2, SIG_MACRO_FUSED },
	{ 0x400019cull, SIG_FE_CYC0 }, { 0xc5, SIG_MISP },
	{ 0x10401c3ull, SIG_CLEARS }, { 0x140014a3ull, SIG_STALLS_MEM },
	{ 0x20040a6ull, SIG_BOUND_STORES }, { 0x40004a3ull, SIG_STALLS_TOTAL },
	{ 0x2a6, SIG_PORTS_1 }, { 0x4a6, SIG_PORTS_2 }, { 0, 0 },
};
/*
 * Gracemont (perf's alderlaken list): TOPDOWN_BAD_SPECULATION.ALL is
 * umask 0; its umask bits select NUKE (0x1), FASTNUKE (0x2) and
 * MISPREDICT (0x4) slots, so Tremont's 0x6, which the kernel publishes
 * on Alder Lake-N, counts all but the NUKE slots.
 */
static const struct map grt_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x73, SIG_BAD },
	{ 0x173, SIG_BAD_NUKE }, { 0x273, SIG_BAD_FASTNUKE },
	{ 0x373, SIG_BAD_CLEARS }, { 0x473, SIG_BAD_MISP },
	{ 0x673, SIG_BAD_FASTNUKE_MISP },
	{ 0xc2, SIG_RET }, { 0x74, SIG_BE },
	/* TopdownL2 (adln-metrics.json): FRONTEND_LATENCY 0x71/0x72,
	 * ALLOC_RESTRICTIONS 0x74/0x1, UOPS_RETIRED.MS 0xc2/0x1 */
	{ 0x7271, SIG_FE_LAT }, { 0x174, SIG_ALLOC }, { 0x1c2, SIG_MS },
	{ 0, 0 },
};

/* Silvermont V1: cycle counts for FE and bad speculation. */
static const struct map slm_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x50ca, SIG_FE_CYC }, { 0x04ca, SIG_BAD_CYC },
	{ 0x10c2, SIG_RET }, { 0, 0 },
};

/*
 * Haswell: INT_MISC.RECOVERY_CYCLES is umask 3 before Skylake.  Then
 * hsw-metrics.json's TopdownL2 events (perf's haswell pipeline.json,
 * frontend.json, memory.json; cmask in config bits 24-31, edge bit 18):
 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE, IDQ.MS_UOPS,
 * CYCLE_ACTIVITY.STALLS_LDM_PENDING and CYCLES_NO_EXECUTE, RESOURCE_
 * STALLS.SB, RS_EVENTS.EMPTY_CYCLES, INST_RETIRED.ANY, UOPS_EXECUTED.
 * CORE with cmask 1, 2, 3, BR_MISP_RETIRED.ALL_BRANCHES, MACHINE_CLEARS.
 * COUNT.
 */
static const struct map hsw_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x10e, SIG_ISSUED },
	{ 0x2c2, SIG_RET }, { 0x100030dull, SIG_RECOVERY },
	{ 0x400019cull, SIG_FE_CYC0 }, { 0x3079, SIG_IDQ_MS },
	{ 0x60006a3ull, SIG_STALLS_MEM }, { 0x40004a3ull, SIG_STALLS_TOTAL },
	{ 0x8a2, SIG_SB }, { 0x15e, SIG_RS_EMPTY }, { 0xc0, SIG_INST },
	{ 0x10002b1ull, SIG_EXE1 }, { 0x20002b1ull, SIG_EXE2 },
	{ 0x30002b1ull, SIG_EXE3 }, { 0xc5, SIG_MISP },
	{ 0x10401c3ull, SIG_CLEARS }, { 0, 0 },
};
/*
 * Sandy Bridge, Ivy Bridge, Broadwell (snb-metrics.json, ivb-metrics.
 * json, bdw-metrics.json): the same but the execution cycles, the
 * thread's (umask 0x01: UOPS_DISPATCHED.THREAD, UOPS_EXECUTED.
 * CYCLES_GE_n); their lists' other CYCLE_ACTIVITY names (STALLS_L1D_
 * PENDING, CYCLES_NO_DISPATCH; STALLS_MEM_ANY, STALLS_TOTAL) encode as
 * Haswell's.
 */
static const struct map thread_exe_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x10e, SIG_ISSUED },
	{ 0x2c2, SIG_RET }, { 0x100030dull, SIG_RECOVERY },
	{ 0x400019cull, SIG_FE_CYC0 }, { 0x3079, SIG_IDQ_MS },
	{ 0x60006a3ull, SIG_STALLS_MEM }, { 0x40004a3ull, SIG_STALLS_TOTAL },
	{ 0x8a2, SIG_SB }, { 0x15e, SIG_RS_EMPTY }, { 0xc0, SIG_INST },
	{ 0x10001b1ull, SIG_EXE1 }, { 0x20001b1ull, SIG_EXE2 },
	{ 0x30001b1ull, SIG_EXE3 }, { 0xc5, SIG_MISP },
	{ 0x10401c3ull, SIG_CLEARS }, { 0, 0 },
};
/*
 * Tremont, Crestmont, Darkmont: each core's TOPDOWN_*.ALL (perf's
 * snowridgex, sierraforest, clearwaterforest lists), which are also the
 * kernel's aliases for them (tnt, cmt, skt_events_attrs).
 */
static const struct map tnt_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x673, SIG_BAD },
	{ 0xc2, SIG_RET }, { 0x74, SIG_BE }, { 0, 0 },
};
/*
 * Crestmont's TopdownL2 (srf-metrics.json): FRONTEND_LATENCY 0x71/0x72,
 * ALLOC_RESTRICTIONS 0x74/0x1; no retiring split there.  Meteor Lake's
 * cpu_atom counts the same (perf's meteorlake pipeline.json, cpu_atom);
 * there the kernel's topdown-retiring alias is the adl string 0xc2,
 * UOPS_RETIRED.ALL on Crestmont, which this map leaves uncounted so
 * that a formula taking the alias for retiring cannot pass.
 */
static const struct map cmt_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x73, SIG_BAD },
	{ 0x72, SIG_RET }, { 0x74, SIG_BE },
	{ 0x7271, SIG_FE_LAT }, { 0x174, SIG_ALLOC }, { 0, 0 },
};
static const struct map skt_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x73, SIG_BAD },
	{ 0x2c2, SIG_RET }, { 0x2a4, SIG_BE }, { 0, 0 },
};

/*
 * Alder Lake's cpu_atom (Gracemont) with the kernel's adl strings, and
 * the TopdownL2 events of perf's alderlake list (cpu_atom, as on
 * Alder Lake-N): FRONTEND_LATENCY 0x71/0x72, MISPREDICT 0x73/0x4,
 * ALLOC_RESTRICTIONS 0x74/0x1, UOPS_RETIRED.MS 0xc2/0x1.
 */
static const struct map adl_atom_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x73, SIG_BAD },
	{ 0xc2, SIG_RET }, { 0x74, SIG_BE },
	{ 0x7271, SIG_FE_LAT }, { 0x473, SIG_BAD_MISP }, { 0x174, SIG_ALLOC },
	{ 0x1c2, SIG_MS }, { 0, 0 },
};
/*
 * Lunar Lake's cpu_atom (Skymont): level 1 as the kernel's lnl strings
 * name it, and perf's lunarlake TopdownL2 events TOPDOWN_FE_BOUND.
 * FRONTEND_LATENCY 0x71/0x72 and TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS
 * 0x74/0x1 (pipeline.json, cpu_atom).  The kernel puts three of the
 * level-1 events on fixed counters 4-6; here they take general
 * counters, of which there are 8.
 */
static const struct map skymont_atom_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x73, SIG_BAD },
	{ 0x2c2, SIG_RET }, { 0x2a4, SIG_BE },
	{ 0x7271, SIG_FE_LAT }, { 0x174, SIG_ALLOC }, { 0, 0 },
};

struct emu_mix emu_mix_amd(double ret, double bad, double fe, double smt)
{
	struct emu_mix m = { { ret, bad, fe, 0, 0, 0, 0, 0, smt } };
	return m;
}

struct emu_mix emu_mix_amd_l2(double ret, double bad, double fe, double smt,
			      double heavy, double br, double fetch_lat,
			      double mem)
{
	struct emu_mix m = { { ret, bad, fe, 0, heavy, br, fetch_lat, mem,
			       smt } };
	return m;
}

void emu_gp_set_period(uint64_t left)
{
	emu.gp_left = left;
}

/*
 * The server parts of the V4.5 cores (arch/x86/include/asm/intel-family.h:
 * SANDYBRIDGE_X, IVYBRIDGE_X, HASWELL_X, BROADWELL_X, BROADWELL_D), whose
 * perf lists are jaketown, ivytown, haswellx, broadwellx and broadwellde.
 */
static const char *v45_server(unsigned model)
{
	switch (model) {
	case 0x2d:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 45\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 0\n";
	case 0x3e:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 62\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v2\n";
	case 0x3f:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 63\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v3\n";
	case 0x4f:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 79\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v4\n";
	case 0x56:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 86\nmodel name\t: Intel(R) Xeon(R) CPU D-1540\n";
	default:
		return NULL;
	}
}

/* Haswell's models count the core's execution cycles (hsw_map). */
static bool haswell(unsigned model)
{
	return model == 0 || model == 0x3c || model == 0x3f || model == 0x45 ||
	       model == 0x46;
}

const char *emu_cpuinfo(void)
{
	if (emu.arm)
		return emu_arm_cpuinfo();
	switch (emu.profile) {
	case EMU_ZEN4:
		return "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC 9654\n";
	case EMU_ZEN5:
		return "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC 9965\n";
	case EMU_SKL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 94\nmodel name\t: Intel(R) Core(TM) i7-6700K\n";
	case EMU_GRT:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 190\nmodel name\t: Intel(R) N100\n";
	case EMU_SLM:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 77\nmodel name\t: Intel(R) Atom(TM) CPU C2750\n";
	case EMU_HSW:
		if (emu.v45_model && v45_server(emu.v45_model))
			return v45_server(emu.v45_model);
		if (emu.v45_model == 0x2a)
			return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 42\nmodel name\t: Intel(R) Core(TM) i7-2600\n";
		if (emu.v45_model == 0x3a)
			return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 58\nmodel name\t: Intel(R) Core(TM) i7-3770\n";
		if (emu.v45_model == 0x3d)
			return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 61\nmodel name\t: Intel(R) Core(TM) i7-5600U\n";
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 60\nmodel name\t: Intel(R) Core(TM) i7-4770\n";
	case EMU_TNT:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 134\nmodel name\t: Intel Atom(R) P5962B\n";
	case EMU_CMT:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 175\nmodel name\t: Intel(R) Xeon(R) 6780E\n";
	case EMU_SKT:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 221\nmodel name\t: Intel(R) Xeon(R) 6 (Clearwater Forest)\n";
	case EMU_NO_TOPDOWN: /* Core 2 (Merom): no TopDown of any kind */
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 15\n";
	case EMU_ICL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 126\n";
	case EMU_ADL: /* emu_hybrid_skymont: Lunar Lake, INTEL_LUNARLAKE_M */
		if (emu.atom_skymont)
			return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 189\n";
		/* emu_hybrid_crestmont: INTEL_METEORLAKE_L */
		if (emu.atom_crestmont)
			return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 170\nmodel name\t: Intel(R) Core(TM) Ultra 7 155H\n";
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\n";
	case EMU_LNL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 189\n";
	default:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n";
	}
}

int emu_gen_signal(uint64_t config)
{
	const struct map *m = emu.profile == EMU_SKL ? skl_map
			      : emu.profile == EMU_HSW && !haswell(emu.v45_model)
				? thread_exe_map
			      : emu.profile == EMU_HSW ? hsw_map
			      : emu.profile == EMU_TNT ? tnt_map
			      : emu.profile == EMU_CMT ? cmt_map
			      : emu.profile == EMU_ADL && emu.atom_crestmont
				? cmt_map
			      : emu.profile == EMU_SKT ? skt_map
			      : emu.profile == EMU_GRT ? grt_map
			      : emu.profile == EMU_ADL && emu.atom_skymont
				? skymont_atom_map
			      : emu.profile == EMU_ADL ? adl_atom_map
			      : emu.profile == EMU_SLM ? slm_map : zen_map;

	if (emu.arm)
		return emu_arm_signal(config);
	for (; m->sig; m++)
		if (m->config == config)
			return m->sig;
	return SIG_NONE;
}

static bool gp(const struct emu_event *e)
{
	return e->kind == EMU_EV_GP;
}

/*
 * x86_perf_event_set_period / armpmu_event_set_period for a counting
 * event: at most half the counter's range (Arm's max_period >> 1).
 */
static void set_period(struct emu_event *e)
{
	uint64_t left = emu.gp_left < mask_of(e) >> 1 ? emu.gp_left
						      : mask_of(e) >> 1;

	e->prev = (uint64_t)0 - left;
	e->hw = e->prev & mask_of(e);
	e->overflowed = false;
}

void emu_gp_set_counters(unsigned n)
{
	emu.gp_counters = n;
}

void emu_gp_reserve(unsigned n)
{
	emu.gp_reserved = n;
}

void emu_gp_hold_pcore(unsigned n)
{
	emu.gp_core_held = n;
}

/*
 * General-purpose counters of a PMU.  Hybrid parts: each core type its
 * own (arch/x86/events/intel/core.c intel_pmu_init, Alder Lake and
 * Raptor Lake: cpu_core's num_counters = x86_pmu.num_counters + 2,
 * cpu_atom's x86_pmu.num_counters, where CPUID.0AH enumerates the 6 both
 * types have: 8 on a Golden Cove P-core, 6 on a Gracemont E-core; later
 * parts enumerate each type's own in CPUID leaf 0x23, update_pmu_cap:
 * Skymont's 8, emu_hybrid_skymont).  A cpu_atom group's clocks take a
 * general counter here where the kernel puts them on fixed counter 1:
 * either way Gracemont's level-1 and level-2 groups do not fit together.
 */
static unsigned counters_of(bool atom)
{
	return emu.atom_width && !atom ? emu.gp_core_counters
				       : emu.gp_counters;
}

static unsigned gp_counters_of(const struct emu_group *g)
{
	return counters_of(g->atom);
}

/* The CPU the thread is on has counters 0 .. this - 1 (RDPMC of another: #GP). */
unsigned emu_gp_counters_here(void)
{
	return counters_of(emu_is_ecore(emu_cpu.cpu));
}

void emu_set_smt(bool active, bool anythread_ok)
{
	emu.anythread_ok = anythread_ok;
	emu_sysfs_smt(active);
}

/* Silvermont counts clocks on fixed counter 1, not a GP counter. */
static bool on_fixed(const struct emu_event *e)
{
	return emu.profile == EMU_SLM && e->sig == SIG_CYCLES;
}

/*
 * Does another scheduled ordinary group of g's thread hold counter c?
 * Hybrid: a P-core's counters are not an E-core's (a cpu_core group of
 * the memory drill-down and a cpu_atom group never share one).
 */
static bool held_by_other(const struct emu_group *g, int c)
{
	for (int j = 0; j < emu_cpu.gen_nr; j++) {
		const struct emu_group *o = emu_cpu.gen_list[j];

		if (o == g || o->owner != g->owner || !o->scheduled ||
		    o->atom != g->atom)
			continue;
		for (int i = 0; i < o->nr; i++)
			if (o->members[i]->kind == EMU_EV_GP &&
			    o->members[i]->counter == c)
				return true;
	}
	return false;
}

/*
 * Is PMCCNTR_EL0 free for g?  At open, validate_group asks a fake PMU
 * holding g alone: free unless the PMU has none (EMU_PMCCNTR_ABSENT).
 * At schedule-in, also not while someone else holds it, or the thread's
 * other group does.
 */
static bool pmccntr_free(const struct emu_group *g, bool at_open)
{
	if (emu.pmccntr == EMU_PMCCNTR_ABSENT)
		return false;
	if (at_open)
		return true;
	if (emu.pmccntr == EMU_PMCCNTR_TAKEN)
		return false;
	return !held_by_other(g, ARM_CYCLE_COUNTER);
}

/* Arm: g's first cycles event, member i, is e. */
static bool first_cycles(const struct emu_group *g, int i,
			 const struct emu_event *e)
{
	if (!emu.arm || e->sig != SIG_CYCLES)
		return false;
	for (int j = 0; j < i; j++)
		if (g->members[j]->sig == SIG_CYCLES)
			return false;
	return true;
}

/* armv8pmu_get_event_idx: the first cycles event prefers PMCCNTR_EL0. */
static bool takes_cycle_counter(const struct emu_group *g, int i,
				const struct emu_event *e, bool at_open)
{
	return first_cycles(g, i, e) && pmccntr_free(g, at_open);
}

/*
 * ... and without it, a 64-bit user-access cycles event cannot have an
 * event counter either unless they are 64-bit (FEAT_PMUv3p5): EAGAIN.
 */
static bool cycles_stuck(const struct emu_group *g, int i,
			 const struct emu_event *e, bool at_open)
{
	return first_cycles(g, i, e) && !pmccntr_free(g, at_open) &&
	       e->width == 64 && !emu.arm->pmuv3p5;
}

/* Does e, member i of g (i == g->nr: joining), need an event counter? */
static bool needs_gp(const struct emu_group *g, int i,
		     const struct emu_event *e, bool at_open)
{
	return e->kind == EMU_EV_GP && !on_fixed(e) &&
	       !takes_cycle_counter(g, i, e, at_open);
}

static unsigned gp_members(const struct emu_group *g, bool at_open)
{
	unsigned n = 0;

	for (int i = 0; i < g->nr; i++)
		n += needs_gp(g, i, g->members[i], at_open);
	return n;
}

static bool any_stuck(const struct emu_group *g, bool at_open)
{
	for (int i = 0; i < g->nr; i++)
		if (cycles_stuck(g, i, g->members[i], at_open))
			return true;
	return false;
}

/* validate_group (x86 core.c, arm_pmuv3's alike): a group must fit the
 * PMU's counters, whoever else holds them; checked when a member joins. */
int emu_gen_validate(const struct emu_group *g, const struct emu_event *e)
{
	if (any_stuck(g, true) || cycles_stuck(g, g->nr, e, true))
		return -EINVAL;
	return gp_members(g, true) + needs_gp(g, g->nr, e, true) >
			       gp_counters_of(g)
		       ? -EINVAL
		       : 0;
}

/*
 * Event counters the thread's other scheduled groups hold, and on a
 * hybrid part's P-cores the lowest ones others' CPU-wide events hold
 * (kernel/events/core.c perf_event_sched_in schedules the CPU context's
 * events before the task's, and x86_schedule_events keeps an event's
 * counter from one schedule to the next: theirs stay the low ones).
 */
static uint64_t used_by_other(const struct emu_group *g)
{
	uint64_t used = 0;

	for (int c = 0; c < (int)gp_counters_of(g) && c < ARM_CYCLE_COUNTER;
	     c++)
		if (held_by_other(g, c))
			used |= UINT64_C(1) << c;
	if (emu.atom_width && !g->atom)
		used |= (UINT64_C(1) << emu.gp_core_held) - 1;
	return used;
}

/* The next of g's PMU's counters from *k on that is not in used. */
static int next_free(const struct emu_group *g, unsigned *k, uint64_t used)
{
	for (;; (*k)++) {
		int c = (int)(*k % gp_counters_of(g));

		if (!(used >> c & 1)) {
			(*k)++;
			return c;
		}
	}
}

/*
 * Schedule-in: every member on a free counter, or the whole group stays
 * out (group_sched_in's all-or-nothing transaction).  False: not
 * scheduled; its pages then show index 0 and time_running stops.
 */
bool emu_gen_start(struct emu_group *g)
{
	uint64_t used = used_by_other(g);
	unsigned k = emu.gp_rotate++;
	unsigned free_ = gp_counters_of(g) - emu.gp_reserved -
			 (unsigned)__builtin_popcountll(used);

	if (any_stuck(g, false) || gp_members(g, false) > free_) {
		g->scheduled = false;
		return false;
	}
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e))
			continue;
		if (takes_cycle_counter(g, i, e, false))
			e->counter = ARM_CYCLE_COUNTER;
		else
			e->counter = next_free(g, &k, used);
		set_period(e);
	}
	return true;
}

void emu_gen_add_group(struct emu_group *g)
{
	if (emu_cpu.gen_nr < EMU_MAX_GEN_GROUPS)
		emu_cpu.gen_list[emu_cpu.gen_nr++] = g;
}

void emu_gen_remove_group(struct emu_group *g)
{
	int j = 0;

	for (int i = 0; i < emu_cpu.gen_nr; i++)
		if (emu_cpu.gen_list[i] != g)
			emu_cpu.gen_list[j++] = emu_cpu.gen_list[i];
	emu_cpu.gen_nr = j;
}

void emu_set_mux_interval(uint64_t slots)
{
	emu.mux_interval = slots;
	emu_cpu.mux_left = slots;
}

/* x86_perf_event_update: the 48-bit difference, page untouched. */
static void update(struct emu_event *e)
{
	if (e->counter < 0)
		return;
	e->count += (e->hw - e->prev) & mask_of(e);
	e->prev = e->hw;
}

void emu_gen_fold(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++)
		if (gp(g->members[i]))
			update(g->members[i]);
}

void emu_gen_stop(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e))
			continue;
		update(e);
		e->last_counter = e->counter;
		e->counter = -1;
	}
}

void emu_gen_page(const struct emu_event *e, struct perf_event_mmap_page *pc)
{
	const struct emu_group *g = e->group;
	bool on = e->rdpmc_flag && g->enabled && g->scheduled &&
		  !e->stopped && e->counter >= 0;

	/* armv8pmu_user_event_idx: 0 while perf_user_access is 0 */
	if (emu.arm && !emu.arm->user_access)
		on = false;
	pc->pmc_width = (uint16_t)e->width;
	pc->index = on ? (uint32_t)e->counter + 1 : 0;
	pc->offset = (int64_t)(on ? e->count - e->prev : e->count);
}

/* The overflow PMI: update, restart the period, rewrite the page. */
static void deliver_pmis(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e) || !e->overflowed)
			continue;
		update(e);
		set_period(e);
		emu_page_update(e);
	}
}

/*
 * PipelineL2's events made of the true level-2 slots, so that its
 * formula gives them back: fetch latency as whole cycles with nothing
 * delivered (x W), each mispredict and resync one bad-speculation slot,
 * not_complete the backend slots with load_not_complete the memory ones,
 * one microcode op per heavy slot.  Truth counts what the events say.
 */
static void zen_l2_parts(uint64_t slots, const struct emu_mix *m, uint64_t w,
			 struct emu_parts *p)
{
	struct emu_truth *t = &emu_cpu.truth;
	uint64_t heavy = (uint64_t)((double)slots * m->f[4]);
	uint64_t br = (uint64_t)((double)slots * m->f[5]);
	uint64_t lat = (uint64_t)((double)slots * m->f[6]);
	uint64_t mem = (uint64_t)((double)slots * m->f[7]);

	p->ucode = heavy < p->ret ? heavy : p->ret;
	p->misp = br < p->bad ? br : p->bad;
	p->restart = p->bad - p->misp;
	p->fe_cmask = (lat < p->fe ? lat : p->fe) / w;
	p->nc = p->be;
	p->load_nc = mem < p->be ? mem : p->be;
	t->cat[4] += p->ucode;
	t->cat[5] += p->misp;
	t->cat[6] += p->fe_cmask * w;
	t->cat[7] += p->load_nc;
}

/*
 * Gracemont's bad speculation by cause: mispredicts as the mix's level-2
 * share says (half of it for a level-1 mix), the machine clears split
 * evenly between nukes and fast nukes.
 */
static void grt_bad_parts(uint64_t slots, const struct emu_mix *m,
			  struct emu_parts *p)
{
	uint64_t misp = (uint64_t)((double)slots * m->f[5]);
	uint64_t clears;

	if (!misp || misp > p->bad)
		misp = p->bad / 2;
	clears = p->bad - misp;
	p->bad_misp = misp;
	p->bad_nuke = clears / 2;
	p->bad_fastnuke = clears - p->bad_nuke;
}

/* Gracemont counts here: Alder Lake-N, or Alder Lake's E-cores. */
static bool gracemont(void)
{
	return emu.profile == EMU_GRT ||
	       (emu.profile == EMU_ADL && !emu.atom_skymont &&
		!emu.atom_crestmont);
}

/* Crestmont: Sierra Forest, or Meteor Lake's E-cores. */
static bool crestmont(void)
{
	return emu.profile == EMU_CMT ||
	       (emu.profile == EMU_ADL && emu.atom_crestmont);
}

/* The mix's level-2 share i of slots, at most parent. */
static uint64_t l2_share(uint64_t slots, const struct emu_mix *m, int i,
			 uint64_t parent)
{
	uint64_t v = (uint64_t)((double)slots * m->f[i]);

	return v < parent ? v : parent;
}

/*
 * Skylake's level-2 events made of the true level-2 slots, so that
 * skl-metrics.json's formulas give them back: heavy slots as retire
 * slots + macro-fused uops - instructions (an eighth of the uops
 * macro-fused), fetch latency as whole cycles with nothing delivered
 * (x 4), mispredicts and clears as bad speculation's slots (their ratio
 * is its split), and memory bound's cycle counts chosen so that its
 * ratio of the backend is the mix's (every term non-zero: the
 * 1_PORTS_UTIL, 2_PORTS_UTIL and store terms matter).  Truth counts
 * what the events say.
 */
static void skl_l2_parts(uint64_t slots, const struct emu_mix *m, uint64_t w,
			 struct emu_parts *p)
{
	struct emu_truth *t = &emu_cpu.truth;
	uint64_t heavy = l2_share(slots, m, 4, p->ret);
	uint64_t be_cyc = p->be / w, mem = l2_share(slots, m, 7, p->be);
	double ret = slots ? (double)p->ret / (double)slots : 0, den, num;

	p->macro_fused = p->ret / 8;
	p->inst = p->ret + p->macro_fused - heavy;
	p->fe_cyc0 = l2_share(slots, m, 6, p->fe) / w;
	p->misp = l2_share(slots, m, 5, p->bad);
	p->clears = p->bad - p->misp;
	p->stalls_total = be_cyc;
	p->ports_1 = be_cyc / 2;
	p->ports_2 = be_cyc / 3;
	p->bound_stores = p->be ? be_cyc * mem / p->be / 8 : 0;
	den = (double)(p->stalls_total + p->ports_1 + p->bound_stores) +
	      ret * (double)p->ports_2;
	num = p->be ? den * (double)mem / (double)p->be : 0;
	p->stalls_mem = num > (double)p->bound_stores
				? (uint64_t)num - p->bound_stores : 0;
	t->cat[4] += heavy;
	t->cat[5] += p->misp;
	t->cat[6] += p->fe_cyc0 * w;
	if (den > 0)
		t->cat[7] += (uint64_t)((double)p->be *
					(double)(p->stalls_mem +
						 p->bound_stores) / den);
}

/*
 * Sandy Bridge's to Broadwell's level-2 events made of the true level-2
 * slots, so that snb-, ivb-, hsw- and bdw-metrics.json's formulas give
 * them back (the cycle counts within the clocks, so that the lists'
 * min(CPU_CLK_UNHALTED.THREAD, x) keep x): MS uops as heavy slots x issued / retired uops, 4
 * instructions per 5 uops retired, fetch latency as whole cycles with
 * nothing delivered (x 4), mispredicts and clears as bad speculation's
 * slots, RS-empty cycles half those (or half the backend's cycles), the
 * execution cycles a base of an eighth of the cycles plus parts of the
 * backend's cycles, and memory bound's stall cycles chosen so that its
 * ratio of the backend is the mix's, with perf's two tests (IPC > 1.8,
 * fetch latency > 0.1) as this stretch of work gives them.  Truth
 * counts what the events say.
 */
static void hsw_l2_parts(uint64_t slots, const struct emu_mix *m,
			 uint64_t w, struct emu_parts *p)
{
	struct emu_truth *t = &emu_cpu.truth;
	uint64_t heavy = l2_share(slots, m, 4, p->ret);
	uint64_t be_cyc = p->be / w, mem = l2_share(slots, m, 7, p->be);
	uint64_t exe_1_2, exe_1_3;
	double den, num;

	p->idq_ms = p->ret ? heavy * p->issued / p->ret : 0;
	p->inst = p->ret - p->ret / 5;
	p->fe_cyc0 = l2_share(slots, m, 6, p->fe) / w;
	p->misp = l2_share(slots, m, 5, p->bad);
	p->clears = p->bad - p->misp;
	p->stalls_total = be_cyc;
	p->rs_empty = p->fe_cyc0 < be_cyc ? p->fe_cyc0 / 2 : be_cyc / 2;
	exe_1_2 = be_cyc / 6;
	exe_1_3 = be_cyc / 3;
	p->exe[2] = p->cycles / 8;
	p->exe[1] = p->exe[2] + exe_1_3 - exe_1_2;
	p->exe[0] = p->exe[2] + exe_1_3;
	p->sb = p->be ? be_cyc * mem / p->be / 8 : 0;
	den = (double)(p->stalls_total + p->sb);
	den += (double)(5 * p->inst > 9 * p->cycles ? exe_1_3 : exe_1_2);
	if (10 * p->fe_cyc0 > p->cycles)
		den -= (double)p->rs_empty;
	num = p->be ? den * (double)mem / (double)p->be : 0;
	p->stalls_mem = num > (double)p->sb ? (uint64_t)num - p->sb : 0;
	if (p->issued)
		t->cat[4] += p->ret * p->idq_ms / p->issued;
	t->cat[5] += p->misp;
	t->cat[6] += p->fe_cyc0 * w;
	if (den > 0)
		t->cat[7] += (uint64_t)((double)p->be *
					(double)(p->stalls_mem + p->sb) / den);
}

/*
 * Atom level-2 events (adln-metrics.json, srf-metrics.json, lnl-metrics.json
 * cpu_atom: each node
 * its event over the slots): frontend latency slots, alloc restrictions
 * the backend's slots that are not the mix's memory-bound entry
 * (resource bound); Gracemont's also MS uops the heavy slots and
 * mispredict slots (grt_bad_parts).  Truth counts what the events say.
 */
static void atom_l2_parts(uint64_t slots, const struct emu_mix *m,
			  struct emu_parts *p)
{
	struct emu_truth *t = &emu_cpu.truth;

	p->fe_lat = l2_share(slots, m, 6, p->fe);
	p->alloc = p->be - l2_share(slots, m, 7, p->be);
	t->cat[7] += p->be - p->alloc;
	if (!gracemont())
		return;
	p->ms = l2_share(slots, m, 4, p->ret);
	t->cat[4] += p->ms;
	t->cat[5] += p->bad_misp;
}

static void split(uint64_t slots, const struct emu_mix *m,
		  struct emu_parts *p)
{
	struct emu_cpu *c = &emu_cpu;
	bool amd = emu.profile == EMU_ZEN4 || emu.profile == EMU_ZEN5;
	uint64_t w = emu.gen_width ? emu.gen_width : emu.atom_width, rb;

	memset(p, 0, sizeof(*p));
	c->gen_slot_rem += slots;
	p->cycles = c->gen_slot_rem / w;
	c->gen_slot_rem %= w;
	p->ret = (uint64_t)((double)slots * m->f[0]);
	p->bad = (uint64_t)((double)slots * m->f[1]);
	p->fe = (uint64_t)((double)slots * m->f[2]);
	p->smt = amd ? (uint64_t)((double)slots * m->f[8]) : 0;
	if (emu.profile == EMU_SLM) { /* V1 counts cycles: whole ones */
		p->fe -= p->fe % w;
		p->bad -= p->bad % w;
	}
	p->be = slots - p->ret - p->bad - p->fe - p->smt;
	if (gracemont())
		grt_bad_parts(slots, m, p);
	if (gracemont() || crestmont() || emu.atom_skymont)
		atom_l2_parts(slots, m, p);
	if (emu.arm) { /* level 2: within their parents */
		p->fe_lat = (uint64_t)((double)slots * m->f[6]);
		p->be_mem = (uint64_t)((double)slots * m->f[7]);
		p->fe_lat = p->fe_lat < p->fe ? p->fe_lat : p->fe;
		p->be_mem = p->be_mem < p->be ? p->be_mem : p->be;
	}
	/* V4.5: half the bad slots as recovery cycles, the rest as uops. */
	p->recovery_cycles = p->bad / 2 / w;
	rb = p->recovery_cycles * w;
	p->issued = p->ret + p->bad - rb;
	/* cycle-counted stalls (V1, Arm N1): whole cycles of their slots */
	p->fe_cyc = p->fe / w;
	p->be_cyc = p->be / w;
	p->bad_cyc = p->bad / w;
	if (emu.arm)
		emu_arm_parts(p);
	if (amd)
		zen_l2_parts(slots, m, w, p);
	if (emu.profile == EMU_SKL)
		skl_l2_parts(slots, m, w, p);
	if (emu.profile == EMU_HSW)
		hsw_l2_parts(slots, m, w, p);
	c->truth.slots += slots;
	c->truth.cat[0] += p->ret;
	c->truth.cat[1] += p->bad;
	c->truth.cat[2] += p->fe;
	c->truth.cat[3] += p->be;
	c->truth.cat[8] += p->smt;
	c->truth.cat[6] += p->fe_lat;
	c->truth.cat[7] += p->be_mem;
}

static uint64_t increment(int sig, const struct emu_parts *p)
{
	switch (sig) {
	case SIG_CYCLES: return p->cycles;
	case SIG_FE: return p->fe;
	case SIG_BE: return p->be;
	case SIG_SMT: return p->smt;
	case SIG_DISP: return p->ret + p->bad;
	case SIG_RET: return p->ret;
	case SIG_BAD: return p->bad;
	case SIG_BAD_NUKE: return p->bad_nuke;
	case SIG_BAD_FASTNUKE: return p->bad_fastnuke;
	case SIG_BAD_CLEARS: return p->bad_nuke + p->bad_fastnuke;
	case SIG_BAD_MISP: return p->bad_misp;
	case SIG_BAD_FASTNUKE_MISP: return p->bad_fastnuke + p->bad_misp;
	case SIG_ISSUED: return p->issued;
	case SIG_RECOVERY: return p->recovery_cycles;
	case SIG_FE_SLOT: return p->fe_slot;
	case SIG_BE_SLOT: return p->be_slot;
	case SIG_STALL_SLOT: return p->stall_slot;
	case SIG_OP_SPEC: return p->op_spec;
	case SIG_X: return p->x;
	case SIG_FE_CYC: return p->fe_cyc;
	case SIG_BE_CYC: return p->be_cyc;
	case SIG_BAD_CYC: return p->bad_cyc;
	case SIG_FE_CMASK: return p->fe_cmask;
	case SIG_MISP: return p->misp;
	case SIG_RESTART: return p->restart;
	case SIG_NC: return p->nc;
	case SIG_LOAD_NC: return p->load_nc;
	case SIG_UCODE: return p->ucode;
	case SIG_FE_MEM_CYC: return p->fe_mem_cyc;
	case SIG_FE_CPU_CYC: return p->fe_cyc - p->fe_mem_cyc;
	case SIG_BE_MEM_CYC: return p->be_mem_cyc;
	/* the backend's other stall cycles: half core bound, half busy */
	case SIG_BE_CPU_CYC: return (p->be_cyc - p->be_mem_cyc) / 2;
	case SIG_BE_BUSY_CYC:
		return p->be_cyc - p->be_mem_cyc - (p->be_cyc - p->be_mem_cyc) / 2;
	case SIG_INST: return p->inst;
	case SIG_MACRO_FUSED: return p->macro_fused;
	case SIG_FE_CYC0: return p->fe_cyc0;
	case SIG_CLEARS: return p->clears;
	case SIG_STALLS_MEM: return p->stalls_mem;
	case SIG_BOUND_STORES: return p->bound_stores;
	case SIG_STALLS_TOTAL: return p->stalls_total;
	case SIG_PORTS_1: return p->ports_1;
	case SIG_PORTS_2: return p->ports_2;
	case SIG_FE_LAT: return p->fe_lat;
	case SIG_ALLOC: return p->alloc;
	case SIG_MS: return p->ms;
	case SIG_IDQ_MS: return p->idq_ms;
	case SIG_SB: return p->sb;
	case SIG_RS_EMPTY: return p->rs_empty;
	case SIG_EXE1: return p->exe[0];
	case SIG_EXE2: return p->exe[1];
	case SIG_EXE3: return p->exe[2];
	case SIG_MEM_LOADS:
		return p->mem_cyc[0] + p->mem_cyc[1] + p->mem_cyc[2] +
		       p->mem_cyc[3];
	case SIG_MEM_L1D_MISS:
		return p->mem_cyc[1] + p->mem_cyc[2] + p->mem_cyc[3];
	case SIG_MEM_L2_MISS: return p->mem_cyc[2] + p->mem_cyc[3];
	case SIG_MEM_L3_MISS: return p->mem_cyc[3];
	case SIG_MEM_STORES: return p->mem_cyc[4];
	case SIG_UOP_DROP: return p->uop_drop;
	default: return 0;
	}
}

/* One group's share of a stretch of work: its events and times. */
static void run_group(struct emu_group *g, uint64_t slots,
		      const struct emu_parts *p)
{
	if (!g || !g->enabled)
		return;
	g->time_enabled += slots / 4;
	if (!g->scheduled)
		return;
	g->time_running += slots / 4;
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];
		uint64_t inc;

		if (!gp(e) || e->counter < 0)
			continue;
		/* AnyThread: the sibling ran the same (clocks, recovery) */
		inc = increment(e->sig, p) * (e->any ? 2 : 1);
		if (inc > mask_of(e) - e->hw)
			e->overflowed = true;
		e->hw = (e->hw + inc) & mask_of(e);
	}
}

static void run_chunk(uint64_t slots, const struct emu_mix *m)
{
	struct emu_parts p;

	for (int j = 0; j < emu_cpu.gen_nr; j++) {
		struct emu_group *g = emu_cpu.gen_list[j];

		if (g->enabled && g->scheduled)
			deliver_pmis(g);
	}
	split(slots, m, &p);
	for (int j = 0; j < emu_cpu.gen_nr; j++)
		run_group(emu_cpu.gen_list[j], slots, &p);
}

/*
 * Golden Cove's encodings (perf's sapphirerapids and alderlake
 * pipeline.json, memory.json: event | umask << 8 | cmask << 24) of the
 * events the memory drill-down reads, and CPU_CLK_UNHALTED.THREAD as
 * the raw 0x3c; what the kernel takes them for on the core PMU.
 */
static const struct map gc_mem_map[] = {
	{ 0x3c, SIG_CYCLES },
	{ 0x050021a6, SIG_MEM_LOADS },    /* EXE_ACTIVITY.BOUND_ON_LOADS */
	{ 0x03000347, SIG_MEM_L1D_MISS }, /* MEMORY_ACTIVITY.STALLS_L1D_MISS */
	{ 0x05000547, SIG_MEM_L2_MISS },  /* MEMORY_ACTIVITY.STALLS_L2_MISS */
	{ 0x09000947, SIG_MEM_L3_MISS },  /* MEMORY_ACTIVITY.STALLS_L3_MISS */
	{ 0x020040a6, SIG_MEM_STORES },   /* EXE_ACTIVITY.BOUND_ON_STORES */
	{ 0, SIG_NONE }
};

/*
 * Ice Lake's (perf's icelake pipeline.json and memory.json) of the
 * drill-down's events: CYCLE_ACTIVITY's stall counts by level,
 * EXE_ACTIVITY.BOUND_ON_STORES, and what tma_memory_bound divides by.
 */
static const struct map icl_mem_map[] = {
	{ 0x140014a3, SIG_MEM_LOADS },    /* CYCLE_ACTIVITY.STALLS_MEM_ANY */
	{ 0x0c000ca3, SIG_MEM_L1D_MISS }, /* CYCLE_ACTIVITY.STALLS_L1D_MISS */
	{ 0x050005a3, SIG_MEM_L2_MISS },  /* CYCLE_ACTIVITY.STALLS_L2_MISS */
	{ 0x060006a3, SIG_MEM_L3_MISS },  /* CYCLE_ACTIVITY.STALLS_L3_MISS */
	{ 0x020040a6, SIG_MEM_STORES },   /* EXE_ACTIVITY.BOUND_ON_STORES */
	{ 0x040004a3, SIG_STALLS_TOTAL }, /* CYCLE_ACTIVITY.STALLS_TOTAL */
	{ 0x2a6, SIG_PORTS_1 },           /* EXE_ACTIVITY.1_PORTS_UTIL */
	{ 0x4a6, SIG_PORTS_2 },           /* EXE_ACTIVITY.2_PORTS_UTIL */
	{ 0, SIG_NONE }
};

#define EMU_GC_WIDTH 6  /* Golden Cove's slots per cycle */
#define EMU_ICL_WIDTH 5 /* Sunny Cove's */

/*
 * INT_MISC.UOP_DROPPING, UMask 0x10: EventCode 0x0d on Ice Lake (perf's
 * icelake pipeline.json), 0xad from Golden Cove on (sapphirerapids,
 * alderlake pipeline.json).
 */
#define EMU_UOP_DROPPING_ICL 0x100d
#define EMU_UOP_DROPPING 0x10ad

/*
 * Which P-cores' PERF_METRICS count dropped uops' slots as frontend
 * bound (and fetch latency): those whose perf lists subtract
 * INT_MISC.UOP_DROPPING from tma_frontend_bound (Sunny Cove: icelake;
 * Golden Cove: sapphirerapids, alderlake's cpu_core, and Redwood Cove:
 * meteorlake's, emu_name_meteor_lake); not Lion Cove's
 * (lunarlake, arrowlake), whose lists take PERF_METRICS as it is: the
 * Lunar Lake profile, the Alder Lake one offering metrics-clear (the
 * emulator's Arrow Lake) and its Lunar Lake variant (emu_hybrid_skymont).
 */
bool emu_drop_in_frontend(void)
{
	return emu.profile == EMU_ICL || emu.profile == EMU_SPR ||
	       (emu.profile == EMU_ADL && !emu.has_metrics_clear &&
		!emu.atom_skymont);
}

/*
 * The mix's share of the slots (emu_set_uop_dropping), out of its machine
 * clears (bad speculation but its branch mispredicts, part[5]): what a
 * clear dropped.  Counted by INT_MISC.UOP_DROPPING on every PERF_METRICS
 * profile; moved into PERF_METRICS' frontend bound only where the core
 * does that.
 */
uint64_t emu_uop_drop(uint64_t slots, const uint64_t part[8])
{
	uint64_t want = (uint64_t)((double)slots * emu.uop_share);
	uint64_t clears = part[1] - part[5];

	return want < clears ? want : clears;
}

void emu_set_uop_dropping(double share)
{
	emu.uop_share = share;
}

/*
 * INT_MISC.CLEARS_COUNT (INT_MISC.RECOVERY_CYCLES, cmask 1, edge: EventCode
 * 0x0d, UMask 0x01 on Ice Lake, perf's icelake pipeline.json): counted on
 * Ice Lake's profile only, whose PERF_METRICS the clears' term corrects.
 */
#define EMU_CLEARS_COUNT_ICL 0x0104010dull

bool emu_clears_in_bad_spec(void)
{
	return emu.profile == EMU_ICL;
}

uint64_t emu_int_misc_clears(uint64_t slots, const uint64_t part[8])
{
	uint64_t want = (uint64_t)((double)slots * emu.clear_rate);

	if (!emu_clears_in_bad_spec())
		return 0;
	return want < part[3] / 5 ? want : part[3] / 5;
}

void emu_set_int_misc_clears(double per_slot)
{
	emu.clear_rate = per_slot;
}

/*
 * The P-cores that count the Golden Cove events: Sapphire Rapids, Alder
 * Lake's and Meteor Lake's (Redwood Cove: perf's meteorlake memory.json
 * and pipeline.json give them the same encodings).  Not Lion Cove's (the
 * Alder Lake profile offering metrics-clear or with Skymont E-cores, the
 * emulator's Arrow and Lunar Lake), whose lunarlake memory.json has
 * MEMORY_STALLS.* instead, not modelled here.
 */
static bool counts_gc_memory(void)
{
	return emu.profile == EMU_SPR ||
	       (emu.profile == EMU_ADL && !emu.has_metrics_clear &&
		!emu.atom_skymont);
}

int emu_mem_signal(uint64_t config)
{
	const struct map *m = emu.profile == EMU_ICL ? icl_mem_map
			      : counts_gc_memory() ? gc_mem_map
						   : NULL;

	if (config == (emu.profile == EMU_ICL ? EMU_UOP_DROPPING_ICL
					      : EMU_UOP_DROPPING) &&
	    (emu.profile == EMU_ICL || emu.profile == EMU_SPR ||
	     emu.profile == EMU_ADL || emu.profile == EMU_LNL))
		return SIG_UOP_DROP;
	if (config == EMU_CLEARS_COUNT_ICL && emu.profile == EMU_ICL)
		return SIG_CLEARS;
	for (; m && m->sig; m++)
		if (m->config == config)
			return m->sig;
	return SIG_NONE;
}

void emu_set_mem_shares(const double share[5])
{
	for (int i = 0; i < 5; i++)
		emu_cpu.mem_share[i] = share[i];
}

/*
 * Ice Lake's events made of the true levels lvl[] (slots), so that perf's
 * icl-metrics.json tma_memory_bound gives their sum back from backend
 * bound's be slots and the retiring fraction rho, and its nodes (the
 * Golden Cove split: no fill-buffer-full periods, tma_l2_bound's weight
 * 1) each level: STALLS_TOTAL the backend's stall cycles, 1_PORTS_UTIL
 * and 2_PORTS_UTIL a half and a third of them, and the level counts
 * w[i] = lvl[i] x den / be with den = STALLS_TOTAL + 1_PORTS_UTIL + rho
 * x 2_PORTS_UTIL + w[store], the formula's denominator.
 */
static void icl_mem_parts(const uint64_t *lvl, uint64_t be, double rho,
			  struct emu_parts *p)
{
	double x, den;

	p->stalls_total = be / EMU_ICL_WIDTH;
	p->ports_1 = p->stalls_total / 2;
	p->ports_2 = p->stalls_total / 3;
	if (be == 0 || lvl[4] >= be)
		return;
	x = (double)(p->stalls_total + p->ports_1) + rho * (double)p->ports_2;
	den = x / (1 - (double)lvl[4] / (double)be);
	for (int i = 0; i < 5; i++)
		p->mem_cyc[i] = (uint64_t)((double)lvl[i] * den / (double)be +
					   0.5);
}

/*
 * A P-core's run: memory stall counts to the core PMU's ordinary groups
 * (those scheduled here), truth by level.  The last level takes what
 * rounding left, so the levels sum to memory bound's slots (part[7]).
 */
void emu_mem_run(uint64_t slots, const uint64_t part[8], uint64_t drop,
		 uint64_t clears)
{
	struct emu_cpu *c = &emu_cpu;
	struct emu_parts p;
	uint64_t used = 0, lvl[5], mem_slots = part[7];
	double sum = 0;
	int big = 0;

	memset(&p, 0, sizeof(p));
	p.uop_drop = drop;
	p.clears = clears;
	for (int i = 0; i < 5; i++)
		sum += c->mem_share[i];
	for (int i = 0; i < 5; i++) {
		double s = sum > 0 ? c->mem_share[i] / sum : i == 0;

		lvl[i] = (uint64_t)((double)mem_slots * s);
		used += lvl[i];
		if (s > 0)
			big = i;
	}
	lvl[big] += mem_slots - used; /* rounding, to the last level with a share */
	for (int i = 0; i < 5; i++) {
		c->truth.mem[i] += lvl[i];
		p.mem_cyc[i] = lvl[i] / EMU_GC_WIDTH;
	}
	if (emu.profile == EMU_ICL)
		icl_mem_parts(lvl, part[3],
			      slots ? (double)part[0] / (double)slots : 0, &p);
	if (emu.faults & EMU_FAULT_MEM_SWAP) { /* L1's stalls as DRAM's */
		uint64_t t = p.mem_cyc[0];

		p.mem_cyc[0] = p.mem_cyc[3];
		p.mem_cyc[3] = t;
	}
	c->mem_slot_rem += slots;
	p.cycles = c->mem_slot_rem / EMU_GC_WIDTH;
	c->mem_slot_rem %= EMU_GC_WIDTH;
	for (int j = 0; j < emu_cpu.gen_nr; j++)
		if (!emu_cpu.gen_list[j]->atom)
			run_group(emu_cpu.gen_list[j], slots, &p);
}

/* Work in pieces between the multiplexing timer's ticks. */
void emu_gen_run(uint64_t slots, const struct emu_mix *m)
{
	while (emu.mux_interval && slots >= emu_cpu.mux_left) {
		uint64_t chunk = emu_cpu.mux_left;

		run_chunk(chunk, m);
		slots -= chunk;
		emu_cpu.mux_left = emu.mux_interval;
		emu_gen_rotate();
	}
	if (emu.mux_interval)
		emu_cpu.mux_left -= slots;
	run_chunk(slots, m);
}

/*
 * EMU_FAULT_FE_RET_SWAP: e's register as if it had counted, since the
 * kernel last updated it, what g's other member of the pair counted
 * since its update (a register-for-register swap would make readings
 * jump backwards, which the library's plausibility guard catches and
 * replaces with read(2): this one reads as plausible counting).
 */
static uint64_t swapped(const struct emu_group *g, const struct emu_event *e)
{
	int want = e->sig == SIG_FE ? SIG_RET : e->sig == SIG_RET ? SIG_FE : 0;

	for (int i = 0; want && i < g->nr; i++) {
		const struct emu_event *o = g->members[i];

		if (o->sig == want && o->counter >= 0)
			return (e->prev + ((o->hw - o->prev) & mask_of(o))) &
			       mask_of(e);
	}
	return e->hw;
}

/*
 * emu_stale_counting: the switched-out event whose stale page still
 * names counter ecx reads as its value at schedule-out plus that
 * counter's step (0: ecx names none).
 */
static uint64_t stale_counted(uint32_t ecx)
{
	for (int j = 0; j < emu_cpu.gen_nr; j++) {
		struct emu_group *g = emu_cpu.gen_list[j];

		for (int i = 0; g && !g->scheduled && i < g->nr; i++) {
			struct emu_event *e = g->members[i];

			if (gp(e) && e->last_counter == (int)ecx)
				return (e->hw + emu.stale_steps[ecx %
						EMU_MAX_MEMBERS]) &
				       mask_of(e);
		}
	}
	return 0;
}

/* The scheduled event counter ecx counts, its group in *group. */
static struct emu_event *event_on(uint32_t ecx, struct emu_group **group)
{
	for (int j = 0; j < emu_cpu.gen_nr; j++) {
		struct emu_group *g = emu_cpu.gen_list[j];

		if (!g->scheduled)
			continue;
		for (int i = 0; i < g->nr; i++)
			if (g->members[i]->counter == (int)ecx) {
				*group = g;
				return g->members[i];
			}
	}
	return NULL;
}

const struct emu_group *emu_gen_group_of(uint32_t ecx)
{
	struct emu_group *g = NULL;

	event_on(ecx, &g);
	return g;
}

uint64_t emu_gen_rdpmc(uint32_t ecx)
{
	struct emu_group *g = NULL;
	struct emu_event *e = event_on(ecx, &g);

	if (e)
		return emu.faults & EMU_FAULT_FE_RET_SWAP ? swapped(g, e)
							   : e->hw;
	/* Another context's value (Arm zeroes unused counters instead). */
	if (emu.stale_pages && emu.stale_counting)
		return stale_counted(ecx);
	if (emu.stale_pages)
		return emu.foreign & MASK48;
	return emu.arm ? 0 : 0x5a5a5a5a5aull & MASK48;
}
