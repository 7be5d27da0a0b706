/* SPDX-License-Identifier: MIT */
/*
 * The PERF_METRICS source's operations, for the hybrid source that
 * composes it with the E-cores' group.  Not installed.
 */
#ifndef TD_PERF_METRICS_H
#define TD_PERF_METRICS_H

#include "source.h"

/* pm_pmu.c: PERF_METRICS' events on the core PMU; -EOPNOTSUPP: none. */
TD_HIDDEN int td_pm_pmu_find(const struct td_pmu *pmu, struct td_pm_pmu *pm);
/* perf_metrics.c */
TD_HIDDEN int td_pm_group_open(struct td *td, const struct td_open_req *req);
TD_HIDDEN void td_pm_close(struct td *td);
TD_HIDDEN unsigned td_pm_delta(const struct td *td, const struct td_counts *a,
			       const struct td_counts *b, struct td_delta *d);
TD_HIDDEN bool td_pm_consistent(const struct td *td, const struct td_delta *d);
TD_HIDDEN void td_pm_info(const struct td *td, struct td_info *i);
/* pm_fast.c: the source's ready operation (source.h). */
TD_HIDDEN void td_pm_fast_setup(struct td *td);
/* pm_clear_fast.c: metrics-clear mode's fast path (source.h). */
struct td_region_priv;
TD_HIDDEN int td_pm_clear_fast_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_pm_clear_fast_end(struct td *td, struct td_region_priv *p,
				   struct td_result *res);
/* pm_fast.c: the end of two readings another fast path took (hybrid). */
TD_HIDDEN int td_pm_end_reading(struct td *td, struct td_region_priv *p,
				struct td_result *res, uint64_t slots,
				uint64_t metrics);
/* The kernel's caps/pmu_name of the core PMU, "" when it does not say. */
TD_HIDDEN void td_pm_pmu_name(const struct td *td, char *out, size_t len);

#endif
