/* SPDX-License-Identifier: MIT */
/*
 * Which TopDown source serves this machine, from what the kernel
 * publishes: a core PMU with PERF_METRICS (sysfs events/slots) is the
 * PERF_METRICS source, or the hybrid one when that PMU covers only some
 * CPUs (the kernel gives hybrid PMUs a cpus list: arch/x86/events/
 * core.c, intel_hybrid_get_attr_cpus); without it, ordinary counters:
 * Arm's formulas on an Arm core PMU, else the x86 formula table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sources.h"

static bool pmu_covers_some_cpus(const struct td_pmu *pmu)
{
	char path[96], buf[8];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpus",
		 pmu->name);
	return td_sys_read_file(path, buf, sizeof(buf)) > 0;
}

/*
 * The core PMU and what the sources' own discovery finds there; -EOPNOTSUPP
 * where it has no PERF_METRICS, *arm where it is an Arm core PMU.
 */
static int discover(struct td_found *f, bool *arm)
{
	int err = td_pmu_discover(&f->pmu);

	*arm = false;
	if (err == -ENODEV) { /* no x86 core PMU: an Arm core PMU? */
		err = td_arm_pmu_find(&f->pmu, &f->arm);
		*arm = err == 0;
		return err < 0 ? err : -EOPNOTSUPP;
	}
	if (err < 0)
		return err;
	return td_pm_pmu_find(&f->pmu, &f->pm);
}

static const struct td_source_ops *choose(const struct td_found *f,
					  int discovered, bool arm)
{
	if (discovered == -EOPNOTSUPP) /* no PERF_METRICS */
		return arm ? &td_source_arm : &td_source_counters;
	return pmu_covers_some_cpus(&f->pmu) ? &td_source_hybrid
					     : &td_source_perf_metrics;
}

int td_source_open(const struct td_options *o,
		   int (*prepare)(struct td *td, const struct td_options *o,
				  void *ctx),
		   void *ctx, struct td **out)
{
	const struct td_source_ops *src = NULL;
	struct td_found found;
	struct td_open_req req = {
		.found = &found,
		.include_kernel = o->flags & TD_OPT_INCLUDE_KERNEL,
		.want_rdpmc = !(o->flags & TD_OPT_NO_RDPMC),
		.l2_multiplex = o->flags & TD_OPT_L2_MULTIPLEX,
		.metrics_clear = !(o->flags & (TD_OPT_NO_METRICS_CLEAR |
					       TD_OPT_NO_RDPMC)),
	};
	bool arm;
	int found_err = discover(&found, &arm);
	struct td *td;
	int err;

	if (found_err >= 0 || found_err == -EOPNOTSUPP) {
		src = choose(&found, found_err, arm);
		found_err = 0;
	}
	*out = td = calloc(1, src ? src->handle_size : sizeof(*td));
	if (!td)
		return -ENOMEM;
	err = prepare(td, o, ctx);
	if (err < 0)
		return err;
	if (found_err < 0)
		return found_err;
	td->pmu = found.pmu;
	td->src = src;
	return src->open(td, &req);
}
