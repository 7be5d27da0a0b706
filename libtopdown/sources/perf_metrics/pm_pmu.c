/* SPDX-License-Identifier: MIT */
/*
 * PERF_METRICS' part of the core PMU's discovery, from sysfs: the slots
 * and topdown-* events it lists, their encodings through its format/
 * files, and metrics-clear mode.  The kernel opens an unlisted metric
 * config without complaint as a meaningless raw event (arch/x86/events/
 * intel/core.c is_available_metric_event; kernel commit 1ab5f235c176), so
 * the listing is the only safe test.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perf_metrics.h"

static const char *const metric_event[TD_NR_METRICS] = {
	"topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
	"topdown-be-bound", "topdown-heavy-ops", "topdown-br-mispredict",
	"topdown-fetch-lat", "topdown-mem-bound",
};

static int find_metrics(const struct td_pmu *pmu, struct td_pm_pmu *pm)
{
	int err = td_pmu_event_config(pmu->name, "slots", &pm->slots_config);

	if (err < 0)
		return err == -ENOENT ? -EOPNOTSUPP : err;
	pm->nr_metrics = 0;
	for (unsigned i = 0; i < TD_NR_METRICS; i++) {
		err = td_pmu_event_config(pmu->name, metric_event[i],
					  &pm->metric_config[i]);
		if (err == -ENOENT)
			break;
		if (err < 0)
			return err;
		pm->nr_metrics = i + 1;
	}
	/* Level 2 needs all eight; level 1 the first four. */
	if (pm->nr_metrics < TD_NR_L1)
		return -EOPNOTSUPP;
	if (pm->nr_metrics < TD_NR_METRICS)
		pm->nr_metrics = TD_NR_L1;
	return 0;
}

/*
 * format/metrics_clear ("config1:0", kernel commit 0e45818ec189) is listed
 * only where the hardware has RDPMC metrics-clear mode.
 */
static void find_metrics_clear(const struct td_pmu *pmu, struct td_pm_pmu *pm)
{
	char buf[32];
	unsigned bit;

	if (td_pmu_read_file(pmu->name, "format/metrics_clear", buf,
			     sizeof(buf)) <= 0)
		return;
	if (sscanf(buf, "config1:%u", &bit) == 1 && bit < 64)
		pm->metrics_clear_config1 = UINT64_C(1) << bit;
}

int td_pm_pmu_find(const struct td_pmu *pmu, struct td_pm_pmu *pm)
{
	int err;

	memset(pm, 0, sizeof(*pm));
	/* -EOPNOTSUPP: no PERF_METRICS; the caller tries ordinary counters. */
	err = find_metrics(pmu, pm);
	if (err < 0)
		return err;
	find_metrics_clear(pmu, pm);
	return 0;
}
