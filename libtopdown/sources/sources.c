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

/*
 * TOPDOWN_MEMORY: "1" asks for the memory drill-down as TD_OPT_MEMORY
 * does, "0" leaves it to the options; anything else is -EINVAL (a typo
 * must not measure without what was asked for).
 */
static int memory_wanted(const struct td_options *o, bool *on)
{
	static const char *const words[] = { "0", "1" };
	int choice = 0, err;

	err = td_env_choice("TOPDOWN_MEMORY", words, 2, &choice);
	if (err < 0)
		td_set_bad_setting("TOPDOWN_MEMORY", getenv("TOPDOWN_MEMORY"),
				   words, 2);
	*on = (o->flags & TD_OPT_MEMORY) || choice == 1;
	return err;
}

/*
 * The sources on ordinary counters have no memory drill-down.  AMD Zen
 * 4/5: perf's amdzen4/amdzen5 pipeline metrics stop at
 * backend_bound_memory (PipelineL2), with no node per cache level under
 * it.  Arm: the Neoverse N3/V3 Topdown_Backend groups (perf's arm64
 * neoverse-n3/-v3 metrics.json, Arm's telemetry-solution) split memory
 * bound stall cycles into cache, TLB and store bound, and cache bound
 * into L1D and the rest: no L2/L3/DRAM nodes, and not implemented here;
 * the other Neoverse cores have no level 2 at all.  Intel V4.5 and Atom
 * cores: perf defines the nodes, not implemented here.
 */
static int refuse_memory(const struct td_source_ops *src, bool arm)
{
	if (src == &td_source_perf_metrics || src == &td_source_hybrid)
		return 0;
	td_set_mem_refusal(
		arm ? "Arm: the Neoverse N3/V3 memory-bound split (cache, "
		      "TLB, store; L1D) is not L1/L2/L3/DRAM and is not "
		      "implemented, other cores have none"
		    : "x86 without PERF_METRICS: AMD Zen's methodology stops "
		      "at backend_bound_memory; Intel V4.5 and Atom nodes "
		      "are not implemented");
	return -EOPNOTSUPP;
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
		.uop_dropping = !(o->flags & TD_OPT_FE_UNREFINED),
		.int_misc_clears = !(o->flags & (TD_OPT_FE_UNREFINED |
						 TD_OPT_BE_UNREFINED)),
	};
	bool arm;
	int found_err = discover(&found, &arm);
	int mem_err = memory_wanted(o, &req.memory);
	struct td *td;
	int err;

	td_set_mem_refusal(NULL);
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
	if (mem_err < 0)
		return mem_err;
	err = req.memory ? refuse_memory(src, arm) : 0;
	if (err < 0)
		return err;
	td->pmu = found.pmu;
	td->src = src;
	return src->open(td, &req);
}
