/* SPDX-License-Identifier: MIT */
/*
 * Core PMU discovery, all from sysfs, no CPU model table: which PMU
 * directory exists (cpu_core on hybrid parts, cpu otherwise), its type, the
 * slots and topdown-* events it lists, their encodings through its format/
 * files, and the rdpmc knob.  The kernel opens an unlisted metric config
 * without complaint as a meaningless raw event (arch/x86/events/intel/
 * core.c is_available_metric_event; kernel commit 1ab5f235c176), so the
 * listing is the only safe test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

#define TD_SYSFS_PMUS "/sys/bus/event_source/devices"

static const char *const metric_event[TD_NR_METRICS] = {
	"topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
	"topdown-be-bound", "topdown-heavy-ops", "topdown-br-mispredict",
	"topdown-fetch-lat", "topdown-mem-bound",
};

static int read_pmu_file(const char *pmu, const char *file, char *buf,
			 size_t len)
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
	return read_pmu_file(pmu, file, buf, len);
}

/* Turn an events/ string such as "event=0x00,umask=0x80" into a config. */
int td_pmu_parse_event(const char *pmu, const char *spec, uint64_t *config)
{
	return td_event_parse(spec, sysfs_format, (void *)pmu, config);
}

/* Config of events/<name>, or a negative errno (-ENOENT if unlisted). */
static int event_config(const char *pmu, const char *name, uint64_t *config)
{
	char file[64], spec[128];
	int err;

	snprintf(file, sizeof(file), "events/%s", name);
	err = read_pmu_file(pmu, file, spec, sizeof(spec));
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
		int err = read_pmu_file(names[i], "type", buf, sizeof(buf));

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

static int find_metrics(struct td_pmu *pmu)
{
	int err = event_config(pmu->name, "slots", &pmu->slots_config);

	if (err < 0)
		return err == -ENOENT ? -EOPNOTSUPP : err;
	pmu->nr_metrics = 0;
	for (unsigned i = 0; i < TD_NR_METRICS; i++) {
		err = event_config(pmu->name, metric_event[i],
				   &pmu->metric_config[i]);
		if (err == -ENOENT)
			break;
		if (err < 0)
			return err;
		pmu->nr_metrics = i + 1;
	}
	/* Level 2 needs all eight; level 1 the first four. */
	if (pmu->nr_metrics < TD_NR_L1)
		return -EOPNOTSUPP;
	if (pmu->nr_metrics < TD_NR_METRICS)
		pmu->nr_metrics = TD_NR_L1;
	return 0;
}

/*
 * format/metrics_clear ("config1:0", kernel commit 0e45818ec189) is listed
 * only where the hardware has RDPMC metrics-clear mode.
 */
static void find_metrics_clear(struct td_pmu *pmu)
{
	char buf[32];
	unsigned bit;

	if (read_pmu_file(pmu->name, "format/metrics_clear", buf,
			  sizeof(buf)) <= 0)
		return;
	if (sscanf(buf, "config1:%u", &bit) == 1 && bit < 64)
		pmu->metrics_clear_config1 = UINT64_C(1) << bit;
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
	if (read_pmu_file(pmu->name, "rdpmc", buf, sizeof(buf)) > 0)
		pmu->rdpmc_knob = atoi(buf);
	/* -EOPNOTSUPP: no PERF_METRICS; the caller tries ordinary counters. */
	err = find_metrics(pmu);
	if (err < 0)
		return err;
	find_metrics_clear(pmu);
	return 0;
}
