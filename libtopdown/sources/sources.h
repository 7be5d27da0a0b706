/* SPDX-License-Identifier: MIT */
/*
 * What td_open finds of the machine before it chooses the source
 * (sources.c): the core PMU every source uses, and what a source's own
 * discovery found, which that source's open takes (struct td_open_req
 * found).  Not installed.
 */
#ifndef TD_SOURCES_H
#define TD_SOURCES_H

#include "arm.h"
#include "perf_metrics.h"

struct td_found {
	struct td_pmu pmu;
	struct td_pm_pmu pm;    /* PERF_METRICS' events, where listed */
	struct td_arm_pmu arm;  /* the Arm core PMU's CPU */
};

/*
 * The sources (source.h), one of which td_open chooses (sources.c):
 *   td_source_perf_metrics  Intel SLOTS + PERF_METRICS (metrics-clear mode
 *                           and the read(2) path are its own modes);
 *   td_source_hybrid        Intel hybrid: PERF_METRICS on the P-cores
 *                           composed with an ordinary-counter group on the
 *                           E-cores' PMU;
 *   td_source_counters      x86 ordinary counters: the formula table
 *                           (V4.5, Atom V1/V2, AMD Zen level 1, Zen
 *                           multiplexed level 2);
 *   td_source_arm           Arm PMUv3: Arm's formulas, N3/V3 level 2.
 */
extern TD_HIDDEN const struct td_source_ops td_source_perf_metrics;
extern TD_HIDDEN const struct td_source_ops td_source_hybrid;
extern TD_HIDDEN const struct td_source_ops td_source_counters;
extern TD_HIDDEN const struct td_source_ops td_source_arm;

/* pm_group.c: a perf_event's attributes; td_open's errno of a failed open. */
TD_HIDDEN void td_fill_attr(struct perf_event_attr *a, uint32_t type,
			    uint64_t config, bool leader, bool include_kernel);
TD_HIDDEN int td_open_error(int err);

#endif
