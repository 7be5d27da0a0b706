/* SPDX-License-Identifier: MIT */
/*
 * INT_MISC.UOP_DROPPING beside the PERF_METRICS group: perf's
 * tma_frontend_bound and tma_fetch_latency subtract it, as a share of
 * the slots, on the cores listed below (the move itself, and why level 1
 * still sums to 1: pm_decode.h td_uop_move).  One ordinary counter in a
 * group of its own, opened after the memory drill-down's (which the
 * caller asked for by name), read at every reading of the source: by
 * RDPMC (the fast paths' too, next to SLOTS and PERF_METRICS), by
 * read(2) where RDPMC cannot.  Where it cannot be had (no free counter,
 * never scheduled, TD_OPT_FE_UNREFINED) the handle's results carry
 * TD_RESULT_FE_UNREFINED with PERF_METRICS' own, perf's unrefined,
 * numbers.
 *
 * perf's lists, MetricName tma_frontend_bound and tma_fetch_latency:
 *   subtract it:  icelake/icl-metrics.json, sapphirerapids/
 *                 spr-metrics.json, alderlake/adl-metrics.json (Unit
 *                 cpu_core): "topdown\-fe\-bound / (...) -
 *                 INT_MISC.UOP_DROPPING / tma_info_thread_slots"
 *   do not:       lunarlake/lnl-metrics.json, arrowlake/arl-metrics.json
 *                 (Unit cpu_core): "cpu_core@topdown\-fe\-bound@ /
 *                 (...)" alone.  Lion Cove is also where the kernel
 *                 offers RDPMC metrics-clear mode (format/metrics_clear),
 *                 which this file takes as the mark of those cores (a
 *                 hybrid part names its pmu the same either way).
 * The event: INT_MISC.UOP_DROPPING, UMask 0x10, EventCode 0x0d on Ice
 * Lake (icelake/pipeline.json, INT_MISC's code before Golden Cove), 0xad
 * on Sapphire Rapids and Alder Lake's cpu_core (sapphirerapids/,
 * alderlake/pipeline.json).
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "perf_metrics.h"
#include "pm_decode.h"
#include "sources.h"

/* caps/pmu_name of the cores above (arch/x86/events/intel/core.c
 * intel_pmu_init): Ice Lake client and server, Sapphire Rapids (and
 * Emerald Rapids), Alder Lake's and Raptor Lake's cpu_core; the event's
 * encoding on each (event | umask << 8). */
static const struct {
	const char *pmu;
	uint64_t config;
} refined_pmus[] = {
	{ "icelake", 0x0d | 0x10 << 8 },
	{ "sapphire_rapids", 0xad | 0x10 << 8 },
	{ "alderlake_hybrid", 0xad | 0x10 << 8 },
};

/* The event's config where the core wants it, else 0. */
static uint64_t core_wants(const struct td *td)
{
	char name[32];

	if (td_pm_of(td)->pm.pmu.metrics_clear_config1) /* Lion Cove on */
		return 0;
	td_pm_pmu_name(td, name, sizeof(name));
	for (size_t i = 0; i < sizeof(refined_pmus) / sizeof(refined_pmus[0]);
	     i++)
		if (strcmp(name, refined_pmus[i].pmu) == 0)
			return refined_pmus[i].config;
	return 0;
}

/*
 * A counter that fits but is not scheduled (held by others' pinned
 * events) while SLOTS' group is: none to have.  Both out (the hybrid
 * source's thread on an E-core, where cpu_core's events do not count):
 * it comes in with SLOTS' group, as the same task context's.
 */
static bool scheduled(const struct td *td, const struct td_pm_uop *u)
{
	const struct perf_event_mmap_page *slots = td_pm_of(td)->slots_pc;

	return td_load_once(u->pc->index) != 0 || !slots ||
	       td_load_once(slots->index) == 0;
}

static bool open_counter(struct td *td, struct td_pm_uop *u, uint64_t config,
			 bool include_kernel)
{
	struct perf_event_attr attr;

	td_fill_attr(&attr, td->pmu.type, config, true, include_kernel);
	u->fd = td_sys_perf_open(&attr, -1);
	if (u->fd < 0)
		return false;
	u->pc = td_sys_map(u->fd, td->page_size);
	return u->pc &&
	       td_sys_ioctl(u->fd, PERF_EVENT_IOC_ENABLE, 0) == 0 &&
	       scheduled(td, u);
}

void td_pm_uop_open(struct td *td, const struct td_open_req *req)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint64_t config = td_pm_of(td)->pm.clear_mode ? 0 : core_wants(td);

	u->fd = -1;
	u->pc = NULL;
	u->on = false;
	u->on_l2 = false;
	u->wanted = config != 0;
	u->fe_flag = u->wanted ? TD_RESULT_FE_UNREFINED : 0;
	if (!u->wanted || !req->uop_dropping)
		return;
	if (open_counter(td, u, config, req->include_kernel)) {
		u->on = true;
		u->on_l2 = td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;
		u->fe_flag = 0;
		return;
	}
	td_pm_uop_close(td); /* no counter: results flagged unrefined */
}

void td_pm_uop_close(struct td *td)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if (!u->wanted) /* never opened (fd not set) */
		return;
	if (u->pc)
		td_sys_unmap(u->pc, td->page_size);
	if (u->fd >= 0)
		td_sys_close(u->fd);
	u->pc = NULL;
	u->fd = -1;
	u->on = false;
	u->on_l2 = false;
	u->fe_flag = TD_RESULT_FE_UNREFINED;
}

/*
 * count = offset + sign_extend(rdpmc(index - 1), pmc_width) (the UAPI
 * comment of struct perf_event_mmap_page; userpage.h), inside the guard
 * where the serving source set one (a hybrid part's E-core may lack the
 * counter a P-core gave the event).  The fast paths add RDPMC's
 * value to base = count - value, as the slow path saw it: exact while the
 * page is as then (offset, index unchanged), for the counter's top bit
 * does not change between two page updates either (a counting event
 * starts at -max_period, max_period = 2^47 - 1 on Intel: top bit set,
 * until it wraps, and the overflow's update writes the page).
 */
static bool rdpmc_count(const struct td *td, struct td_pm_uop *u,
			uint64_t *count)
{
	struct td_user_reading r;

	if (!td_user_read(u->pc, td_pm_guard(td), false, &r))
		return false;
	*count = r.count;
	u->sel = r.counter;
	u->offset = r.count - r.raw;
	return true;
}

/* read(2): { nr, time_enabled, time_running, value } (PERF_FORMAT_GROUP). */
static bool read_count(const struct td_pm_uop *u, uint64_t *count)
{
	uint64_t buf[4];

	if (td_sys_read(u->fd, buf, sizeof(buf)) != (int)sizeof(buf) ||
	    buf[0] != 1 || buf[2] == 0)
		return false;
	*count = buf[3];
	return true;
}

/*
 * RDPMC, or read(2) where it cannot (index 0: the group switched out,
 * the hybrid source's thread on an E-core): the count it stopped at.
 * Neither: none, and the regions spanning the reading are unrefined.
 * The fast paths' selector then is as the last RDPMC found it, and
 * they read it again only once SLOTS' page is back as the slow path
 * saw it, which takes a reading here first.
 */
void td_pm_uop_sample(struct td *td, struct td_sample *s)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint64_t v;

	if (!u->on)
		return;
	if ((td->path == TD_PATH_RDPMC && rdpmc_count(td, u, &v)) ||
	    read_count(u, &v))
		s->aux = v;
}

unsigned td_pm_uop_delta(const struct td *td, struct td_delta *d)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if (!u->wanted)
		return 0;
	if (!u->on || d->aux == TD_AUX_LOST)
		return TD_RESULT_FE_UNREFINED;
	td_uop_move(d, td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS,
		    d->aux);
	return 0;
}
