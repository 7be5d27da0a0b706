/* SPDX-License-Identifier: MIT */
/*
 * Which Arm core this is, from MIDR_EL1 as the kernel publishes it
 * (sysfs regs/identification/midr_el1 of the current CPU, else the "CPU
 * implementer/variant/part/revision" lines of /proc/cpuinfo, as Arm's
 * topdown_tool's cpu_detector.py does), and the formula and
 * events that fit it.  Revision matters: Neoverse N2 before r0p3 needs
 * the STALL_SLOT erratum correction.  Cores outside the table that list
 * the slot events get the generic SBSA formula with caps/slots (an
 * inference: perf has no per-core metrics for them, Arm no data); others
 * get -ENOSYS, never a guessed formula.  The table's width
 * wins over caps/slots (drivers/perf/arm_pmuv3.c publishes caps/slots
 * only from PMUv3p4, so N1 has none).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources.h"

/* PMUv3 common event numbers (perf's arm64 common-and-microarch.json). */
#define EV_BR_MIS_PRED          0x0010
#define EV_CPU_CYCLES           0x0011
#define EV_STALL_FRONTEND       0x0023
#define EV_STALL_BACKEND        0x0024
#define EV_OP_RETIRED           0x003a
#define EV_OP_SPEC              0x003b
#define EV_STALL_SLOT_BACKEND   0x003d
#define EV_STALL_SLOT_FRONTEND  0x003e
#define EV_STALL_SLOT           0x003f
#define EV_STALL_FRONTEND_FLUSH 0x8162
/*
 * Level 2 of N3 and V3 (Topdown_Frontend/Backend): codes from Arm's
 * telemetry-solution neoverse-n3/v3.json, the same in perf's
 * common-and-microarch.json.
 */
#define EV_STALL_FRONTEND_MEMBOUND 0x8158
#define EV_STALL_BACKEND_MEMBOUND  0x8164

#define MIDR_IMPL(m)  (((m) >> 24) & 0xff)
#define MIDR_VAR(m)   (((m) >> 20) & 0xf)
#define MIDR_PART(m)  (((m) >> 4) & 0xfff)
#define MIDR_REV(m)   ((m) & 0xf)

/* Arm's formulas, reached by the group code through the model. */
static const struct td_gen_family arm_family = {
	td_arm_counts, td_arm_derive, td_arm_delta, td_arm_values_delta,
	td_arm_values_result
};

static void add(struct td_gen_model *m, int role, uint64_t event)
{
	m->arm.at[role] = (int8_t)m->nr;
	m->arm.in[role] = (uint8_t)m->nr;
	if (role == TD_ARM_CYC)
		m->cycles_at = m->arm.at[role];
	m->config[m->nr++] = event;
}

/*
 * Slot-based level 1: cycles, both stall-slot events, retired and
 * speculated ops, the core's X event if any, and STALL_SLOT last, so
 * that it can be dropped (derived) when counters are short.
 */
static void slot_model(struct td_gen_model *m, const char *name,
		       unsigned slots, unsigned kf, unsigned kb, unsigned kbs,
		       uint64_t x_event)
{
	m->formula = TD_F_ARM;
	m->family = &arm_family;
	m->name = name;
	m->width = slots;
	m->arm.slots = slots;
	m->arm.kf = kf;
	m->arm.kb = kb;
	m->arm.kbs = kbs;
	add(m, TD_ARM_CYC, EV_CPU_CYCLES);
	add(m, TD_ARM_FE, EV_STALL_SLOT_FRONTEND);
	add(m, TD_ARM_BE, EV_STALL_SLOT_BACKEND);
	add(m, TD_ARM_RET, EV_OP_RETIRED);
	add(m, TD_ARM_SPEC, EV_OP_SPEC);
	if (x_event)
		add(m, TD_ARM_X, x_event);
	add(m, TD_ARM_STALL, EV_STALL_SLOT);
	/* counter budget (counters_open.c): FE + BE (td_arm_derive) */
	m->derivable = (unsigned)m->arm.at[TD_ARM_STALL];
}

/* Neoverse N1: no slot events (its list skips 0x3a-0x3f). */
static void n1_model(struct td_gen_model *m)
{
	m->formula = TD_F_ARM_CYCLES;
	m->family = &arm_family;
	m->name = "neoverse-n1";
	m->width = 1; /* slots count cycles here */
	m->arm.slots = 1;
	add(m, TD_ARM_CYC, EV_CPU_CYCLES);
	add(m, TD_ARM_FE, EV_STALL_FRONTEND);
	add(m, TD_ARM_BE, EV_STALL_BACKEND);
}

/*
 * Level 2 of N3 and V3 (arm_level2.c, a second group): the memory-bound share
 * of frontend and backend stall cycles, each with its parent.  Arm's
 * CPUBOUND and BUSY events are not counted: level 2 reports memory
 * bound and fetch latency measured and their siblings as the rest of
 * the parent, as for every other CPU (enum td_l2), so four counters do
 * instead of seven.
 */
static void l2_events(struct td_gen_model *m)
{
	m->nr2 = TD_ARM2_NR;
	m->config2[TD_ARM2_FE] = EV_STALL_FRONTEND;
	m->config2[TD_ARM2_FE_MEM] = EV_STALL_FRONTEND_MEMBOUND;
	m->config2[TD_ARM2_BE] = EV_STALL_BACKEND;
	m->config2[TD_ARM2_BE_MEM] = EV_STALL_BACKEND_MEMBOUND;
}

/*
 * Part numbers (arch/arm64/include/asm/cputype.h) and widths
 * (telemetry-solution product_configuration num_slots).
 */
int td_arm_lookup(uint32_t midr, unsigned caps_slots, struct td_gen_model *m)
{
	unsigned part = MIDR_PART(midr);

	memset(m, 0, sizeof(*m));
	memset(m->arm.at, -1, sizeof(m->arm.at));
	memset(m->arm.in, TD_ARM_ABSENT, sizeof(m->arm.in));
	m->cycles_at = -1;
	if (MIDR_IMPL(midr) == 0x41) {
		switch (part) {
		case 0xd0c:
			n1_model(m);
			return 0;
		case 0xd49:
			slot_model(m, "neoverse-n2", 5, 1, 3, 4, EV_BR_MIS_PRED);
			/* r0p0..r0p2: Arm's N2 erratum notice, D117 */
			m->arm.erratum = MIDR_VAR(midr) == 0 &&
					 MIDR_REV(midr) < 3;
			return 0;
		case 0xd40:
			slot_model(m, "neoverse-v1", 8, 4, 0, 4, EV_BR_MIS_PRED);
			return 0;
		case 0xd4f:
			slot_model(m, "neoverse-v2", 8, 1, 3, 4, EV_BR_MIS_PRED);
			return 0;
		case 0xd8e:
			slot_model(m, "neoverse-n3", 5, 1, 0, 1,
				   EV_STALL_FRONTEND_FLUSH);
			l2_events(m);
			return 0;
		case 0xd83: /* V3AE */
		case 0xd84:
			slot_model(m, "neoverse-v3", 10, 1, 0, 1,
				   EV_STALL_FRONTEND_FLUSH);
			l2_events(m);
			return 0;
		default:
			break;
		}
	}
	if (!caps_slots)
		return -ENOSYS;
	/* sbsa.json: the generic level 1, #slots from caps/slots. */
	slot_model(m, "sbsa", caps_slots, 0, 0, 0, 0);
	return 0;
}

/* MIDR from /proc/cpuinfo's fields, architecture 0xf as the kernel has. */
int td_arm_midr_parse(const char *cpuinfo, uint32_t *midr)
{
	static const char *const key[] = { "CPU implementer", "CPU variant",
					   "CPU part", "CPU revision" };
	unsigned long v[4];

	for (int i = 0; i < 4; i++) {
		const char *s = td_cpuinfo_field(cpuinfo, key[i]);
		char *end;

		if (!s)
			return -ENOSYS;
		v[i] = strtoul(s, &end, 0);
		if (end == s)
			return -ENOSYS;
	}
	*midr = (uint32_t)((v[0] & 0xff) << 24 | (v[1] & 0xf) << 20 |
			   0xfu << 16 | (v[2] & 0xfff) << 4 | (v[3] & 0xf));
	return 0;
}

/*
 * The current CPU's block of /proc/cpuinfo, or NULL: never another CPU's
 * (on a heterogeneous part that would pick the wrong core's formula).
 * A single-block text (some kernels print one block without "processor")
 * is taken as is.
 */
static const char *cpu_block(const char *text, unsigned cpu)
{
	char head[32];
	const char *p;

	snprintf(head, sizeof(head), "processor\t: %u\n", cpu);
	p = strstr(text, head);
	if (p)
		return p;
	return strstr(text, "processor\t:") ? NULL : text;
}

#define TD_CPUINFO_MAX (512 * 1024)

static int read_midr(unsigned cpu, uint32_t *midr)
{
	char path[96], text[64], *info;
	const char *block;
	int n;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%u/regs/identification/midr_el1",
		 cpu);
	if (td_sys_read_file(path, text, sizeof(text)) > 0) {
		char *end;
		unsigned long long v = strtoull(text, &end, 0);

		if (end != text) {
			*midr = (uint32_t)v;
			return 0;
		}
	}
	/* a block of ~1 KiB per CPU: room for a few hundred CPUs */
	info = malloc(TD_CPUINFO_MAX);
	if (!info)
		return -ENOMEM;
	n = td_sys_read_file("/proc/cpuinfo", info, TD_CPUINFO_MAX);
	block = n < 0 ? NULL : cpu_block(info, cpu);
	n = n < 0 ? n : block ? td_arm_midr_parse(block, midr) : -ENOSYS;
	free(info);
	return n;
}

/* Generic cores: only where the PMU lists the slot events (PMCEID). */
static bool lists_slot_events(const char *pmu)
{
	char path[128], spec[64];

	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/events/stall_slot", pmu);
	return td_sys_read_file(path, spec, sizeof(spec)) > 0;
}

/*
 * Level-2 encodings as the PMU's events/ lists them, where it does, over
 * the table's.  Evidence of this core, not another's: the driver's
 * aliases are Arm's architectural common event numbers, shown only when
 * the core's PMCEID registers say it implements them
 * (drivers/perf/arm_pmuv3.c, armv8pmu_event_attr_is_visible).  STALL_
 * FRONTEND and STALL_BACKEND are listed that way; the _MEMBOUND events
 * (0x8158, 0x8164 in perf's arm64 lists) lie outside the PMCEID ranges
 * and are not listed by that driver, so the table's encodings stand.
 */
static void sysfs_l2_events(const char *pmu, struct td_gen_model *m)
{
	static const char *const name[TD_ARM2_NR] = {
		"stall_frontend", "stall_frontend_membound",
		"stall_backend", "stall_backend_membound",
	};
	char path[160], spec[64];

	for (unsigned k = 0; k < m->nr2 && k < TD_ARM2_NR; k++) {
		uint64_t config;

		snprintf(path, sizeof(path),
			 "/sys/bus/event_source/devices/%s/events/%s", pmu,
			 name[k]);
		if (td_sys_read_file(path, spec, sizeof(spec)) > 0 &&
		    td_pmu_parse_event(pmu, spec, &config) == 0)
			m->config2[k] = config;
	}
}

int td_arm_model(const struct td *td, const struct td_open_req *req,
		 struct td_gen_model *m)
{
	const struct td_arm_pmu *arm = &req->found->arm;
	uint32_t midr = 0;
	char desc[96];
	int err = read_midr(arm->cpu, &midr);

	if (err == 0)
		err = td_arm_lookup(midr, arm->slots, m);
	if (err == 0 && !strcmp(m->name, "sbsa") &&
	    !lists_slot_events(td->pmu.name))
		err = -ENOSYS;
	if (err == 0)
		sysfs_l2_events(td->pmu.name, m);
	if (err < 0) {
		snprintf(desc, sizeof(desc),
			 "Arm MIDR %#010x: implementer %#x part %#x r%up%u",
			 (unsigned)midr, MIDR_IMPL(midr), MIDR_PART(midr),
			 MIDR_VAR(midr), MIDR_REV(midr));
		td_set_unknown_cpu(desc);
		return err == -ENOSYS || err == -ENOENT ? -ENOSYS : err;
	}
	return 0;
}
