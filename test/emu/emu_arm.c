/* SPDX-License-Identifier: MIT */
/*
 * The emulated Arm PMUv3: sysfs as
 * drivers/perf/arm_pmuv3.c publishes it (the PMU directory with type,
 * cpus, format/event "config:0-15", format/long "config1:0",
 * format/rdpmc "config1:1", caps/slots, events/), MIDR_EL1 in sysfs and
 * /proc/cpuinfo, the open-time rules (64-bit event counters only with
 * FEAT_PMUv3p5, a group must fit the counters), and the work of a
 * stretch of known true fractions as each core's events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

#define EV_BR_MIS_PRED    0x0010
#define EV_CPU_CYCLES     0x0011
#define EV_STALL_FRONTEND 0x0023
#define EV_STALL_BACKEND  0x0024
#define EV_OP_RETIRED     0x003a
#define EV_OP_SPEC        0x003b
#define EV_STALL_SLOT_BE  0x003d
#define EV_STALL_SLOT_FE  0x003e
#define EV_STALL_SLOT     0x003f
#define EV_FE_FLUSH       0x8162
/* Level 2 (N3, V3): perf's common-and-microarch.json codes */
#define EV_FE_MEMBOUND    0x8158
#define EV_FE_CPUBOUND    0x8160
#define EV_BE_MEMBOUND    0x8164
#define EV_BE_CPUBOUND    0x816a
#define EV_BE_BUSY        0x816b

/*
 * MIDRs: implementer 0x41, variant, 0xf, part, revision.  Six event
 * counters everywhere: the figure for N1/N2/V1/V2 in Arm's TRMs (not
 * verified on hardware), kept for N3/V3 as a test choice, not a claim
 * about their silicon; emu_gp_set_counters() gives more (the library
 * probes, it never assumes a count).
 */
static const struct emu_arm profiles[] = {
	{ EMU_ARM_N1, "armv8_neoverse_n1", 0x413fd0c1, 5, 0, 0, 0, 0,
	  true, false, false, true, 6, 1, 0, false },
	{ EMU_ARM_N2_R0P0, "armv8_pmuv3_0", 0x410fd490, 5, 1, 3, 4,
	  EV_BR_MIS_PRED, false, true, true, true, 6, 1, 5, false },
	{ EMU_ARM_N2_R0P3, "armv8_pmuv3_0", 0x410fd493, 5, 1, 3, 4,
	  EV_BR_MIS_PRED, false, false, true, false, 6, 1, 5, false },
	{ EMU_ARM_V1, "armv8_pmuv3_0", 0x411fd401, 8, 4, 0, 4,
	  EV_BR_MIS_PRED, false, false, false, true, 6, 1, 8, false },
	{ EMU_ARM_V2, "armv8_pmuv3_0", 0x410fd4f1, 8, 1, 3, 4,
	  EV_BR_MIS_PRED, false, false, true, true, 6, 1, 8, false },
	{ EMU_ARM_N3, "armv8_pmuv3_0", 0x410fd8e0, 5, 1, 0, 1,
	  EV_FE_FLUSH, false, false, true, true, 6, 1, 5, true },
	{ EMU_ARM_V3, "armv8_pmuv3_0", 0x410fd841, 10, 1, 0, 1,
	  EV_FE_FLUSH, false, false, true, true, 6, 1, 10, true },
	{ EMU_ARM_SBSA, "armv8_cortex_x3", 0x411fd4e0, 6, 0, 0, 0, 0,
	  false, false, true, true, 6, 1, 6, false },
	{ EMU_ARM_NO_USER, "armv8_pmuv3_0", 0x410fd4f1, 8, 1, 3, 4,
	  EV_BR_MIS_PRED, false, false, true, true, 6, 0, 8, false },
	{ EMU_ARM_VM5, "armv8_pmuv3_0", 0x410fd4f1, 8, 1, 3, 4,
	  EV_BR_MIS_PRED, false, false, true, true, 5, 1, 8, false },
	{ EMU_ARM_VM4, "armv8_pmuv3_0", 0x410fd4f1, 8, 1, 3, 4,
	  EV_BR_MIS_PRED, false, false, true, true, 4, 1, 8, false },
	{ EMU_ARM_HETERO, "armv8_cortex_x3", 0x411fd4e0, 6, 0, 0, 0, 0,
	  false, false, true, true, 6, 1, 6, false },
};

#define HETERO_LITTLE_MIDR 0x410fd461 /* Cortex-A510 r0p1, CPUs 0-3 */

const struct emu_arm *emu_arm_profile(enum emu_profile p)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (profiles[i].profile == p)
			return &profiles[i];
	return NULL;
}

static uint32_t midr_of(int cpu)
{
	if (emu.arm->profile == EMU_ARM_HETERO && cpu < 4)
		return HETERO_LITTLE_MIDR;
	return emu.arm->midr;
}

/* Eight CPUs, each its own block, the kernel's c_show() layout. */
const char *emu_arm_cpuinfo(void)
{
	static char text[4096];
	size_t n = 0;

	for (int cpu = 0; cpu < 8; cpu++) {
		uint32_t m = midr_of(cpu);

		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n"
			"CPU implementer\t: 0x%02x\nCPU architecture: 8\n"
			"CPU variant\t: 0x%x\nCPU part\t: 0x%03x\n"
			"CPU revision\t: %u\n\n",
			cpu, m >> 24, (m >> 20) & 0xf, (m >> 4) & 0xfff,
			m & 0xf);
	}
	return text;
}

static void core_pmu(void (*put)(const char *, const char *),
		     const char *name, const char *cpus, bool slots_events,
		     bool n1, unsigned caps_slots)
{
	static const struct { const char *name; unsigned ev; } ev[] = {
		{ "cpu_cycles", EV_CPU_CYCLES }, { "br_mis_pred", EV_BR_MIS_PRED },
		{ "stall_frontend", EV_STALL_FRONTEND },
		{ "stall_backend", EV_STALL_BACKEND },
		{ "op_retired", EV_OP_RETIRED }, { "op_spec", EV_OP_SPEC },
		{ "stall_slot_backend", EV_STALL_SLOT_BE },
		{ "stall_slot_frontend", EV_STALL_SLOT_FE },
		{ "stall_slot", EV_STALL_SLOT },
	};
	char rel[128], val[64];

	snprintf(rel, sizeof(rel), "%s/type", name);
	put(rel, "8");
	snprintf(rel, sizeof(rel), "%s/cpus", name);
	put(rel, cpus);
	snprintf(rel, sizeof(rel), "%s/format/event", name);
	put(rel, "config:0-15");
	snprintf(rel, sizeof(rel), "%s/format/long", name);
	put(rel, "config1:0");
	snprintf(rel, sizeof(rel), "%s/format/rdpmc", name);
	put(rel, "config1:1");
	if (caps_slots) {
		snprintf(rel, sizeof(rel), "%s/caps/slots", name);
		snprintf(val, sizeof(val), "%u", caps_slots);
		put(rel, val);
	}
	/* armv8pmu_event_attr_is_visible: only what PMCEID lists */
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		if (ev[i].ev >= EV_OP_RETIRED && (n1 || !slots_events))
			continue;
		snprintf(rel, sizeof(rel), "%s/events/%s", name, ev[i].name);
		snprintf(val, sizeof(val), "event=0x%04x", ev[i].ev);
		put(rel, val);
	}
}

void emu_arm_sysfs(void (*put)(const char *rel, const char *text))
{
	const struct emu_arm *a = emu.arm;
	char rel[128], val[32];
	bool hetero = a->profile == EMU_ARM_HETERO;

	put("perf_user_access", a->user_access ? "1" : "0");
	for (int cpu = 0; cpu < 8 && a->sysfs_midr; cpu++) {
		snprintf(rel, sizeof(rel),
			 "sys_cpu/cpu%d/regs/identification/midr_el1", cpu);
		snprintf(val, sizeof(val), "0x%016x", midr_of(cpu));
		put(rel, val);
	}
	/* arm_spe and uncore PMUs have no cpus file: not core PMUs. */
	put("arm_spe_0/type", "9");
	put("arm_spe_0/cpumask", "0-7");
	if (hetero) {
		core_pmu(put, "armv8_cortex_a510", "0-3", false, false, 0);
		core_pmu(put, a->pmu, "4-7", true, false, a->caps_slots);
		return;
	}
	core_pmu(put, a->pmu, "0-7", true, a->n1, a->caps_slots);
}

int emu_arm_signal(uint64_t config)
{
	const struct emu_arm *a = emu.arm;

	switch (config) {
	case EV_CPU_CYCLES: return SIG_CYCLES;
	case EV_STALL_FRONTEND: return SIG_FE_CYC;
	case EV_STALL_BACKEND: return SIG_BE_CYC;
	default: break;
	}
	if (a->n1) /* no slot events: an unlisted number counts nothing */
		return SIG_NONE;
	switch (config) {
	case EV_STALL_SLOT_FE: return SIG_FE_SLOT;
	case EV_STALL_SLOT_BE: return SIG_BE_SLOT;
	case EV_STALL_SLOT: return SIG_STALL_SLOT;
	case EV_OP_RETIRED: return SIG_RET;
	case EV_OP_SPEC: return SIG_OP_SPEC;
	default: break;
	}
	if (a->x_event && config == a->x_event)
		return SIG_X;
	if (!a->l2)
		return SIG_NONE;
	switch (config) {
	case EV_FE_MEMBOUND: return SIG_FE_MEM_CYC;
	case EV_FE_CPUBOUND: return SIG_FE_CPU_CYC;
	case EV_BE_MEMBOUND: return SIG_BE_MEM_CYC;
	case EV_BE_CPUBOUND: return SIG_BE_CPU_CYC;
	case EV_BE_BUSY: return SIG_BE_BUSY_CYC;
	default: return SIG_NONE;
	}
}

/*
 * The events of p's true slots (fe, be, ret, bad; cycles = slots / S)
 * chosen so that the core's formula recovers them: X stands for half
 * the bad-speculation slots (kbs x S slots each), its kf and kb shares
 * are added to the stall events the formula subtracts them from,
 * STALL_SLOT is their sum (plus cycles with the N2 erratum, which also
 * inflates STALL_SLOT_FRONTEND), and one op per non-stalled slot is
 * speculated (OP_SPEC), the retiring ones retired.
 */
void emu_arm_parts(struct emu_parts *p)
{
	const struct emu_arm *a = emu.arm;
	uint64_t s = a->slots, per_x = a->kbs * s;

	p->x = per_x ? p->bad / 2 / per_x : 0;
	p->fe_slot = p->fe + a->kf * s * p->x;
	p->be_slot = p->be + a->kb * s * p->x;
	p->stall_slot = p->fe_slot + p->be_slot;
	p->op_spec = p->ret + p->bad - per_x * p->x;
	if (a->erratum) {
		p->fe_slot += p->cycles;
		p->stall_slot += p->cycles;
	}
	/*
	 * fe_cyc, be_cyc: split's whole cycles of fe and be (s = width);
	 * level 2 makes the memory-bound share of those cycles the true
	 * fetch-latency and memory-bound share of the slots, which is what
	 * the library's scaling assumes (an inference about real cores).
	 */
	p->fe_mem_cyc = p->fe_lat / s;
	p->be_mem_cyc = p->be_mem / s;
}

/*
 * __armv8_pmuv3_map_event, and validate_group of a leader (members are
 * validated as they join: emu_gen_validate, which also counts them
 * against the counters).
 */
int emu_arm_check_open(const struct perf_event_attr *a,
		       const struct emu_event *leader)
{
	bool long64 = a->config1 & 1, cycles = a->config == EV_CPU_CYCLES;

	if (long64 && !cycles && !emu.arm->pmuv3p5)
		return -EOPNOTSUPP;
	/* get_event_idx's EAGAIN on the fake PMU: validate_group EINVAL */
	if (!leader && cycles && long64 && !emu.arm->pmuv3p5 &&
	    emu.pmccntr == EMU_PMCCNTR_ABSENT)
		return -EINVAL;
	return 0;
}

void emu_arm_set_pmccntr(enum emu_pmccntr state)
{
	emu.pmccntr = state;
}

/* pmc_width: 64 for a long (config1 bit 0) event, else 32. */
unsigned emu_arm_width(const struct perf_event_attr *a)
{
	return a->config1 & 1 ? 64 : 32;
}

void emu_arm_pin(int lo, int hi)
{
	emu.allowed_cpus = 0;
	for (int c = lo; c <= hi && c < 64; c++)
		emu.allowed_cpus |= UINT64_C(1) << c;
}
