/* SPDX-License-Identifier: MIT */
/*
 * The perf_event group: SLOTS as leader, then the TopDown metric events,
 * for this thread, with identical exclude bits on every member.
 *
 * Kernel rules relied on (arch/x86/events/intel/core.c intel_pmu_hw_config,
 * icl_set_topdown_event_period; arch/x86/events/core.c
 * x86_pmu_event_mapped):
 * - metric events need a non-sampling SLOTS leader, and at least one metric
 *   event must exist for the kernel to give SLOTS the TopDown treatment
 *   (start from zero, save/restore on context switch);
 * - fixed counter 3 takes its ring filter from the first TopDown event
 *   enabled (inference from intel_pmu_enable_fixed), hence identical
 *   exclude_* bits;
 * - the first enable of a fresh group zeroes SLOTS and PERF_METRICS, which
 *   is why the leader is opened disabled and enabled once, as a group;
 * - RDPMC needs the fd mmapped (sysfs rdpmc=1 sets CR4.PCE per mm only for
 *   an mm with a mapped, RDPMC-capable event).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "perf_metrics.h"
#include "sources.h"

/* One member of a counting group (both sources): identical exclude bits. */
void td_fill_attr(struct perf_event_attr *a, uint32_t type, uint64_t config,
		  bool leader, bool include_kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->disabled = leader;
	a->exclude_kernel = !include_kernel;
	a->exclude_hv = 1;
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* Errors of perf_event_open(2) as the API documents them. */
int td_open_error(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return -EACCES;
	case -ENOENT:
	case -ENODEV:
		/* sysfs listed the events, the kernel refuses them. */
		return -EOPNOTSUPP;
	default:
		return err;
	}
}

static int open_members(struct td *td, bool include_kernel)
{
	const struct td_pm_pmu *pm = &td_pm_of(td)->pm.pmu;
	struct perf_event_attr attr;
	int fd;

	td_fill_attr(&attr, td->pmu.type, pm->slots_config, true,
		     include_kernel);
	/* metrics-clear mode: config1 of the slots event (K-new) */
	if (td_pm_of(td)->pm.clear_mode)
		attr.config1 = pm->metrics_clear_config1;
	fd = td_sys_perf_open(&attr, -1);
	if (fd < 0)
		return td_open_error(fd);
	td->leader_fd = fd;
	for (unsigned i = 0; i < pm->nr_metrics; i++) {
		td_fill_attr(&attr, td->pmu.type, pm->metric_config[i], false,
			     include_kernel);
		fd = td_sys_perf_open(&attr, td->leader_fd);
		if (fd < 0)
			return td_open_error(fd);
		td_pm_of(td)->pm.metric_fd[i] = fd;
	}
	return 0;
}

static bool page_allows_rdpmc(const struct perf_event_mmap_page *pc)
{
	return pc->cap_user_rdpmc;
}

/*
 * Map the leader and one metric event: the slots page carries the SLOTS
 * index, any metric page the PERF_METRICS index (all metric events map to
 * the same register).  Falls back to read(2) when RDPMC is not offered.
 */
static int map_pages(struct td *td)
{
	td_pm_of(td)->slots_pc = td_sys_map(td->leader_fd, td->page_size);
	if (!td_pm_of(td)->slots_pc)
		return errno ? -errno : -ENOMEM;
	td_pm_of(td)->metric_pc = td_sys_map(td_pm_of(td)->pm.metric_fd[0], td->page_size);
	if (!td_pm_of(td)->metric_pc)
		return errno ? -errno : -ENOMEM;
	return 0;
}

static void choose_path(struct td *td, bool want_rdpmc)
{
	bool ok = want_rdpmc && TD_HAVE_USER_READ && td->pmu.rdpmc_knob != 0 &&
		  page_allows_rdpmc(td_pm_of(td)->slots_pc) &&
		  page_allows_rdpmc(td_pm_of(td)->metric_pc);

	td->path = ok ? TD_PATH_RDPMC : TD_PATH_READ;
	/* The clear happens on user RDPMC only: no effect on read(2). */
	if (td->path != TD_PATH_RDPMC)
		td_pm_of(td)->pm.clear_mode = false;
}

int td_group_open(struct td *td, bool include_kernel, bool want_rdpmc)
{
	int err;

	td->page_size = (size_t)sysconf(_SC_PAGESIZE);
	td->leader_fd = -1;
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		td_pm_of(td)->pm.metric_fd[i] = -1;
	err = open_members(td, include_kernel);
	if (err < 0)
		return err;
	err = td_sys_ioctl(td->leader_fd, PERF_EVENT_IOC_ENABLE,
			   PERF_IOC_FLAG_GROUP);
	if (err < 0)
		return err;
	err = map_pages(td);
	if (err < 0)
		return err;
	choose_path(td, want_rdpmc);
	td->last_lock = td_pm_of(td)->slots_pc->lock;
	return 0;
}

void td_group_close(struct td *td)
{
	td_sys_unmap(td_pm_of(td)->metric_pc, td->page_size);
	td_sys_unmap(td_pm_of(td)->slots_pc, td->page_size);
	td_pm_of(td)->metric_pc = td_pm_of(td)->slots_pc = NULL;
	for (unsigned i = 0; i < TD_NR_METRICS; i++) {
		td_sys_close(td_pm_of(td)->pm.metric_fd[i]);
		td_pm_of(td)->pm.metric_fd[i] = -1;
	}
	td_sys_close(td->leader_fd);
	td->leader_fd = -1;
}

/* Zero SLOTS, PERF_METRICS and every member's kernel count. */
int td_group_reset(struct td *td)
{
	return td_sys_ioctl(td->leader_fd, PERF_EVENT_IOC_RESET,
			    PERF_IOC_FLAG_GROUP);
}
