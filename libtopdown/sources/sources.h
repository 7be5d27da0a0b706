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

#endif
