/* SPDX-License-Identifier: MIT */
/*
 * The Arm core PMU, from sysfs (drivers/perf/arm_pmuv3.c; perf.rst): the
 * armv8_* / armv9_* / arm_* directory with a cpus file (core PMUs of
 * drivers/perf/arm_pmu.c have one, uncore PMUs a cpumask) that lists the
 * current CPU; its type (user access needs the PMU opened by its own
 * type), caps/slots (PMMIR_EL1.SLOTS, 0 where absent), and
 * /proc/sys/kernel/perf_user_access (0: no EL0 counter access).
 *
 * Heterogeneous systems (more than one core PMU): the kernel gives EL0
 * access only to tasks pinned to one core type (perf.rst), so td_open
 * requires the thread's affinity to be within this PMU's CPUs: -ENXIO
 * otherwise, whose message names taskset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"

#define TD_SYSFS_PMUS "/sys/bus/event_source/devices"
#define NR_BITS 1024u
#define WORDS (NR_BITS / 64)

struct scan {
	int cpu;
	unsigned nr_core;       /* core PMUs seen */
	bool found;
	char name[32];
	uint64_t cpus[WORDS];   /* the chosen PMU's CPUs */
};

static int read_pmu_file(const char *pmu, const char *file, char *buf,
			 size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), TD_SYSFS_PMUS "/%s/%s", pmu, file);
	return td_sys_read_file(path, buf, len);
}

static bool has_bit(const uint64_t *map, int cpu)
{
	return cpu >= 0 && (unsigned)cpu < NR_BITS &&
	       (map[cpu / 64] >> (cpu % 64)) & 1;
}

static int visit(void *ctx, const char *name)
{
	struct scan *s = ctx;
	uint64_t map[WORDS] = { 0 };
	char list[1024];
	uint32_t top;

	if (strncmp(name, "arm", 3) != 0 || strlen(name) >= sizeof(s->name) ||
	    read_pmu_file(name, "cpus", list, sizeof(list)) <= 0 ||
	    td_cpulist_parse(list, map, NR_BITS, &top) < 0)
		return 0;
	s->nr_core++;
	if (!s->found && has_bit(map, s->cpu)) {
		s->found = true;
		snprintf(s->name, sizeof(s->name), "%s", name);
		memcpy(s->cpus, map, sizeof(map));
	}
	return 0;
}

/* Pinned within the PMU's CPUs: every allowed CPU is one of them. */
static bool pinned_within(const uint64_t *cpus)
{
	uint64_t allowed[WORDS] = { 0 };

	if (td_sys_affinity(allowed, NR_BITS) < 0)
		return false;
	for (unsigned i = 0; i < WORDS; i++)
		if (allowed[i] & ~cpus[i])
			return false;
	return true;
}

static unsigned read_number(const char *pmu, const char *file, int *value)
{
	char buf[32];

	if (read_pmu_file(pmu, file, buf, sizeof(buf)) <= 0)
		return 0;
	*value = atoi(buf);
	return 1;
}

int td_arm_pmu_find(struct td_pmu *pmu, struct td_arm_pmu *arm)
{
	struct scan s = { .cpu = td_sys_current_cpu() };
	char buf[16];
	int type = 0, slots = 0, err;

	err = td_sys_list_dir(TD_SYSFS_PMUS, visit, &s);
	if (err < 0 && err != -ENOENT)
		return err;
	if (!s.found || !read_number(s.name, "type", &type))
		return -ENODEV;
	if (s.nr_core > 1 && !pinned_within(s.cpus))
		return -ENXIO;
	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->name, sizeof(pmu->name), "%s", s.name);
	pmu->type = (uint32_t)type;
	memset(arm, 0, sizeof(*arm));
	arm->cpu = (unsigned)s.cpu;
	if (read_number(s.name, "caps/slots", &slots) && slots > 0)
		arm->slots = (unsigned)slots;
	/* Linux 5.17+; absent: no user access either (cap_user_rdpmc 0). */
	pmu->rdpmc_knob = -1;
	if (td_sys_read_file("/proc/sys/kernel/perf_user_access", buf,
			     sizeof(buf)) > 0)
		pmu->rdpmc_knob = atoi(buf);
	return 0;
}
