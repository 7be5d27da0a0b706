/* SPDX-License-Identifier: MIT */
/*
 * The Intel PERF_METRICS source (its operations; the readings are
 * pm_reading.c's, the group pm_group.c's).
 *
 * Counts are PERF_METRICS' eight 8-bit fields times SLOTS (x255 units,
 * struct td_counts), in the kernel's byte order (INTEL_TD_METRIC_* of
 * arch/x86/include/asm/perf_event.h); readings are taken by pm_reading.c's
 * RDPMC, metrics-clear and read(2) paths.
 */
#include <stdio.h>
#include <string.h>

#include "sources.h"

/*
 * The group of the events td_open found (pm_pmu.c); RDPMC metrics-clear
 * mode where the PMU offers it (format/metrics_clear).
 */
int td_pm_group_open(struct td *td, const struct td_open_req *req)
{
	td_pm_of(td)->pm.pmu = req->found->pm;
	td_pm_of(td)->pm.clear_mode = td_pm_of(td)->pm.pmu.metrics_clear_config1 &&
			    req->metrics_clear;
	return td_group_open(td, req->include_kernel, req->want_rdpmc);
}

static int pm_open(struct td *td, const struct td_open_req *req)
{
	int err = td_pm_group_open(td, req);

	/*
	 * Every CPU of a PMU that covers them all has fixed counter 3 and
	 * PERF_METRICS: begin/end may RDPMC their fixed selectors before
	 * any check (pm_fast.c), but for metrics-clear mode, where every
	 * reading is folded at once (pm_reading.c).
	 */
	if (err == 0)
		td->fast_capable = !td_pm_of(td)->pm.clear_mode;
	if (err == 0)
		err = td_pm_mem_open(td, req);
	if (err == 0 && req->memory)
		td->src = &td_source_perf_metrics_memory;
	if (err == 0)
		td_pm_uop_open(td, req);
	return err;
}

void td_pm_close(struct td *td)
{
	td_pm_uop_close(td);
	td_pm_mem_close(td);
	if (td->leader_fd >= 0)
		td_group_close(td);
}

static bool pm_level2(const struct td *td)
{
	return td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;
}

/*
 * Counts of PERF_METRICS subtract: b - a per category, a with the
 * begin's raw reading of SLOTS and PERF_METRICS added (0, 0 where the
 * begin folded it).
 */
unsigned td_pm_delta(const struct td *td, const struct td_counts *a,
		     uint64_t raw_slots, uint64_t raw,
		     const struct td_counts *b, struct td_delta *d)
{
	struct td_counts begin = *a;

	td_counts_add(&begin, raw_slots, raw);
	d->slots = (int64_t)(b->slots - begin.slots);
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d->cat[i] = (int64_t)(b->cat[i] - begin.cat[i]);
	d->cat[TD_M_SMT] = 0;
	return (pm_level2(td) ? TD_RESULT_L2 : 0) | td_pm_uop_delta(td, d);
}

bool td_pm_consistent(const struct td *td, const struct td_delta *d)
{
	return td_delta_consistent(d, pm_level2(td));
}

/* The kernel's caps/pmu_name of the core PMU, "" when it does not say. */
void td_pm_pmu_name(const struct td *td, char *out, size_t len)
{
	char path[96];
	int n;

	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/caps/pmu_name",
		 td->pmu.name);
	n = td_sys_read_file(path, out, len);
	out[n > 0 ? strcspn(out, "\n") : 0] = '\0';
}

void td_pm_info(const struct td *td, struct td_info *i)
{
	i->levels = pm_level2(td) ? 2 : 1;
	if (td_pm_of(td)->pm.clear_mode)
		i->flags |= TD_INFO_METRICS_CLEAR;
	td_pm_pmu_name(td, i->uarch, sizeof(i->uarch));
}

/*
 * What both tables share: the handle, its open and close, the reset, the
 * consistency check, the info and the fast path.  The memory drill-down's
 * table takes its readings and decodes them with its events too.
 */
#define PM_OPS                                                            \
	.name = "perf_metrics", .handle_size = sizeof(struct td_pm_handle), \
	.open = pm_open, .close = td_pm_close, .reset = td_pm_reset,        \
	.consistent = td_pm_consistent, .info = td_pm_info,                 \
	.ready = td_pm_fast_setup, .fast_begin = td_pm_clear_fast_begin,     \
	.fast_end = td_pm_clear_fast_end

const struct td_source_ops td_source_perf_metrics = {
	PM_OPS,
	.sample = td_pm_sample,
	.delta = td_pm_delta,
};

/*
 * TD_OPT_MEMORY: the same source reading and decoding the memory events
 * too (pm_memory.c), a table of its own so that a handle without them
 * runs not one instruction more.
 */
static int pm_mem_sample(struct td *td, struct td_sample *s)
{
	int err = td_pm_sample(td, s);

	if (err == 0)
		td_pm_mem_sample(td, s);
	return err;
}

static unsigned pm_mem_delta(const struct td *td, const struct td_counts *a,
			     uint64_t raw_slots, uint64_t raw,
			     const struct td_counts *b, struct td_delta *d)
{
	td_pm_mem_delta(a, b, d);
	return td_pm_delta(td, a, raw_slots, raw, b, d);
}

const struct td_source_ops td_source_perf_metrics_memory = {
	PM_OPS,
	.sample = pm_mem_sample,
	.delta = pm_mem_delta,
	.decode_more = td_pm_mem_decode,
	.record_more = td_pm_mem_record,
};
