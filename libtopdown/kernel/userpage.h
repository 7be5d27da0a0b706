/* SPDX-License-Identifier: MIT */
/*
 * One counter's value from its perf_event user page: the seqlock read of
 * linux/perf_event.h's UAPI comment (struct perf_event_mmap_page) and
 * libperf's perf_mmap__read_self,
 *   count = offset + sign_extend(rdpmc(index - 1), pmc_width),
 * optionally with the RDPMC kept off the CPUs that lack the counter.
 * Knows nothing of handles or sources.
 */
#ifndef TD_USERPAGE_H
#define TD_USERPAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "barrier.h"
#include "kernel.h"

/* cap_user_rdpmc is bit 2 of perf_event_mmap_page.capabilities. */
#define TD_CAP_USER_RDPMC (UINT64_C(1) << 2)

/* Pure: a counter value from a user page reading (width 0: 64). */
static inline uint64_t td_user_count(int64_t offset, uint64_t raw,
				     unsigned width)
{
	unsigned shift = 64 - (width ? width : 64);
	/* Cast before shifting right: the shift must be arithmetic. */
	int64_t ext = (int64_t)(raw << shift) >> shift;

	return (uint64_t)offset + (uint64_t)ext;
}

/*
 * Where a counter a page names exists on some CPUs only: the CPUs having
 * it (a bitmap of nr_cpus bits) and the thread's rseq area, for an RDPMC
 * inside an rseq critical section that checks the CPU first (arch_x86.h
 * td_rdpmc_guarded).  A hybrid part's E-core may have fewer
 * general-purpose counters than the P-core that assigned the page's
 * index (arch/x86/events/intel/core.c intel_pmu_init: Alder Lake's
 * cpu_core has x86_pmu.num_counters + 2, cpu_atom x86_pmu.num_counters),
 * and RDPMC of a counter that does not exist raises #GP (Intel SDM,
 * RDPMC), so a migration between the page's index load and the RDPMC
 * must not let it run there.
 */
struct rseq;
struct td_cpu_guard {
	struct rseq *rseq;
	const uint64_t *cpus;
	uint32_t nr_cpus;
};

/*
 * RDPMC of counter, inside guard where there is one (NULL: plain).  An
 * abort (preempted, migrated or signalled in the section) retries; false:
 * the thread is on a CPU outside the guard's (nothing read), or there is
 * no guard on this architecture.
 */
static inline bool td_rdpmc_on(const struct td_cpu_guard *guard,
			       uint32_t counter, uint64_t *v)
{
	if (TD_LIKELY(!guard)) {
		*v = td_rdpmc(counter);
		return true;
	}
#if TD_HAVE_RSEQ_GUARD
	enum td_guard g;

	do
		g = td_rdpmc_guarded1(guard->rseq, guard->cpus,
				      guard->nr_cpus, counter, v);
	while (g == TD_GUARD_ABORTED);
	return g == TD_GUARD_OK;
#else
	return false;
#endif
}

/* One reading of a counter's page (td_user_read). */
struct td_user_reading {
	uint64_t count;   /* offset + sign-extended raw */
	uint64_t raw;     /* what RDPMC returned */
	uint32_t counter; /* the page's index - 1: the selector read */
	uint32_t lock;    /* the page's lock the reading stands under */
	uint64_t time_enabled, time_running; /* the page's, then (times) */
};

/*
 * The counter of page pc by RDPMC (MRS on arm64) under the page's
 * seqlock, inside guard where there is one, with the page's times where
 * asked (a constant: inlined away where not); false when its index is 0
 * (not counting on this CPU now), RDPMC is not offered, or the guard
 * finds the thread on a CPU lacking the counter: the caller then reads
 * with read(2).  A retry after an aborted guard may read the old
 * selector on another CPU having it: the page's lock, which the kernel
 * moves at every schedule-out and -in (perf_event_update_userpage), then
 * refuses the value and the loop reads the page again.
 */
static inline __attribute__((always_inline)) bool
td_user_read(const struct perf_event_mmap_page *pc,
	     const struct td_cpu_guard *guard, bool times,
	     struct td_user_reading *r)
{
	uint32_t seq, idx;

	do {
		seq = td_load_once(pc->lock);
		td_compiler_barrier();
		idx = td_load_once(pc->index);
		if (!(td_load_once(pc->capabilities) & TD_CAP_USER_RDPMC) ||
		    !idx)
			return false;
		if (times) {
			r->time_enabled = td_load_once(pc->time_enabled);
			r->time_running = td_load_once(pc->time_running);
		}
		if (!td_rdpmc_on(guard, idx - 1, &r->raw))
			return false;
		r->count = td_user_count(td_load_once(pc->offset), r->raw,
					 td_load_once(pc->pmc_width));
		r->counter = idx - 1;
		td_compiler_barrier();
	} while (td_load_once(pc->lock) != seq);
	r->lock = seq;
	return true;
}

#endif /* TD_USERPAGE_H */
