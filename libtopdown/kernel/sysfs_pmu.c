/* SPDX-License-Identifier: MIT */
/*
 * Core PMU discovery, all from sysfs, no CPU model table: which PMU
 * directory exists (cpu_core on hybrid parts, cpu otherwise), its type and
 * the rdpmc knob; and the sysfs event grammar's access to a PMU's events/
 * and format/ files, through which each source finds its own events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

#define TD_SYSFS_PMUS "/sys/bus/event_source/devices"

int td_pmu_read_file(const char *pmu, const char *file, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), TD_SYSFS_PMUS "/%s/%s", pmu, file);
	return td_sys_read_file(path, buf, len);
}

/* The format of one term, from the PMU's sysfs format/ directory. */
static int sysfs_format(void *pmu, const char *term, char *buf, size_t len)
{
	char file[64];

	if (snprintf(file, sizeof(file), "format/%s", term) >= (int)sizeof(file))
		return -EINVAL;
	return td_pmu_read_file(pmu, file, buf, len);
}

/* Turn an events/ string such as "event=0x00,umask=0x80" into a config. */
int td_pmu_parse_event(const char *pmu, const char *spec, uint64_t *config)
{
	return td_event_parse(spec, sysfs_format, (void *)pmu, config);
}

int td_pmu_event_config(const char *pmu, const char *name, uint64_t *config)
{
	char file[64], spec[128];
	int err;

	snprintf(file, sizeof(file), "events/%s", name);
	err = td_pmu_read_file(pmu, file, spec, sizeof(spec));
	if (err < 0)
		return err;
	return td_pmu_parse_event(pmu, spec, config);
}

/* The core PMU: cpu_core on hybrid parts (its type is PERF_TYPE_RAW), cpu. */
static int find_core_pmu(struct td_pmu *pmu)
{
	static const char *const names[] = { "cpu_core", "cpu" };
	char buf[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int err = td_pmu_read_file(names[i], "type", buf, sizeof(buf));

		if (err < 0 && err != -ENOENT)
			return err; /* e.g. -EMFILE: not "no PMU" */
		if (err <= 0)
			continue;
		snprintf(pmu->name, sizeof(pmu->name), "%s", names[i]);
		pmu->type = (uint32_t)strtoul(buf, NULL, 10);
		return 0;
	}
	return -ENODEV;
}

int td_pmu_discover(struct td_pmu *pmu)
{
	char buf[16];
	int err;

	memset(pmu, 0, sizeof(*pmu));
	err = find_core_pmu(pmu);
	if (err < 0) /* -ENODEV: no x86 core PMU (Arm: sources.c looks) */
		return err;
	pmu->rdpmc_knob = -1;
	if (td_pmu_read_file(pmu->name, "rdpmc", buf, sizeof(buf)) > 0)
		pmu->rdpmc_knob = atoi(buf);
	return 0;
}
