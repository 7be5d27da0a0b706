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
 *   subtract it:  icelake/icl-metrics.json, icelakex/icx-metrics.json,
 *                 sapphirerapids/spr-metrics.json, alderlake/
 *                 adl-metrics.json and meteorlake/mtl-metrics.json
 *                 (Unit cpu_core): "topdown\-fe\-bound / (...) -
 *                 INT_MISC.UOP_DROPPING / tma_info_thread_slots"
 *                 ("cpu_core@INT_MISC.UOP_DROPPING@" in the hybrids')
 *   do not:       lunarlake/lnl-metrics.json, arrowlake/arl-metrics.json
 *                 (Unit cpu_core): "cpu_core@topdown\-fe\-bound@ /
 *                 (...)" alone.  Lion Cove is also where the kernel
 *                 offers RDPMC metrics-clear mode (format/metrics_clear),
 *                 which this file takes as the mark of those cores (a
 *                 hybrid part names its pmu the same either way).
 * (alderlaken/adln-metrics.json has Gracemont's Atom tree only: no
 * PERF_METRICS core.)
 * The event: INT_MISC.UOP_DROPPING, UMask 0x10, EventCode 0x0d on Ice
 * Lake (icelake/pipeline.json, INT_MISC's code before Golden Cove), 0xad
 * on Sapphire Rapids and Alder Lake's and Meteor Lake's cpu_core
 * (sapphirerapids/, alderlake/, meteorlake/pipeline.json).
 *
 * INT_MISC.CLEARS_COUNT beside it, on Ice Lake's cores only: perf's
 * tma_backend_bound adds 5 x its count as a share of the slots there
 * (icelake/icl-metrics.json, icelakex/icx-metrics.json, tigerlake/
 * tgl-metrics.json, rocketlake/rkl-metrics.json: "topdown\-be\-bound /
 * (...) + 5 * INT_MISC.CLEARS_COUNT / tma_info_thread_slots"; the move
 * and what level 1 sums to then: pm_decode.h td_clears_move), and adds
 * "0 * tma_info_thread_slots" on every later core above.  A second
 * counter, in a group of its own, opened only where the first one is
 * (it is read in the first one's place on the fast paths: one test
 * there); where it cannot be had (no free counter, never scheduled, the
 * first one not on, TD_OPT_BE_UNREFINED) results carry
 * TD_RESULT_BE_UNREFINED.  The event: EventCode 0x0d, UMask 0x01,
 * CounterMask 1, EdgeDetect 1 (icelake/pipeline.json INT_MISC.
 * CLEARS_COUNT).
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "perf_metrics.h"
#include "pm_decode.h"
#include "sources.h"

/* Intel's raw event encoding (arch/x86/events/perf_event.h, format/):
 * event, umask, edge (bit 18), cmask (bits 24-31). */
#define TD_X86_EV(ev, umask, edge, cmask)                              \
	((uint64_t)(ev) | (uint64_t)(umask) << 8 | (uint64_t)(edge) << 18 | \
	 (uint64_t)(cmask) << 24)

/*
 * caps/pmu_name of the cores above (arch/x86/events/intel/core.c
 * intel_pmu_init): "icelake" for Ice Lake client and server, Tiger Lake
 * and Rocket Lake; "sapphire_rapids" for Sapphire, Emerald and Granite
 * Rapids; Alder Lake's and Raptor Lake's, and Meteor Lake's cpu_core;
 * each event's encoding there (0: the core's list does not use it).
 */
static const struct td_refined_pmu {
	const char *pmu;
	uint64_t drop;   /* INT_MISC.UOP_DROPPING */
	uint64_t clears; /* INT_MISC.CLEARS_COUNT */
} refined_pmus[] = {
	{ "icelake", TD_X86_EV(0x0d, 0x10, 0, 0), TD_X86_EV(0x0d, 0x01, 1, 1) },
	{ "sapphire_rapids", TD_X86_EV(0xad, 0x10, 0, 0), 0 },
	{ "alderlake_hybrid", TD_X86_EV(0xad, 0x10, 0, 0), 0 },
	{ "meteorlake_hybrid", TD_X86_EV(0xad, 0x10, 0, 0), 0 },
};

/* The core's entry where it wants the events, else NULL. */
static const struct td_refined_pmu *core_wants(const struct td *td)
{
	char name[32];

	if (td_pm_of(td)->pm.pmu.metrics_clear_config1) /* Lion Cove on */
		return NULL;
	td_pm_pmu_name(td, name, sizeof(name));
	for (size_t i = 0; i < sizeof(refined_pmus) / sizeof(refined_pmus[0]);
	     i++)
		if (strcmp(name, refined_pmus[i].pmu) == 0)
			return &refined_pmus[i];
	return NULL;
}

/*
 * A counter that fits but is not scheduled (held by others' pinned
 * events) while SLOTS' group is: none to have.  Both out (the hybrid
 * source's thread on an E-core, where cpu_core's events do not count):
 * it comes in with SLOTS' group, as the same task context's.
 */
static bool scheduled(const struct td *td,
		      const struct perf_event_mmap_page *pc)
{
	const struct perf_event_mmap_page *slots = td_pm_of(td)->slots_pc;

	return td_load_once(pc->index) != 0 || !slots ||
	       td_load_once(slots->index) == 0;
}

/* One counter in a group of its own, enabled and scheduled: *fd, *pc. */
static bool open_counter(struct td *td, int *fd,
			 struct perf_event_mmap_page **pc, uint64_t config,
			 bool include_kernel)
{
	struct perf_event_attr attr;

	td_fill_attr(&attr, td->pmu.type, config, true, include_kernel);
	*fd = td_sys_perf_open(&attr, -1);
	if (*fd < 0)
		return false;
	*pc = td_sys_map(*fd, td->page_size);
	return *pc && td_sys_ioctl(*fd, PERF_EVENT_IOC_ENABLE, 0) == 0 &&
	       scheduled(td, *pc);
}

static void close_counter(struct td *td, int *fd,
			  struct perf_event_mmap_page **pc)
{
	if (*pc)
		td_sys_unmap(*pc, td->page_size);
	if (*fd >= 0)
		td_sys_close(*fd);
	*pc = NULL;
	*fd = -1;
}

/* INT_MISC.CLEARS_COUNT where the core wants it, beside the drop's. */
static void open_clears(struct td *td, const struct td_open_req *req,
			uint64_t config)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	u->be_wanted = config != 0;
	u->be_flag = u->be_wanted ? TD_RESULT_BE_UNREFINED : 0;
	if (!u->be_wanted || !u->on || !req->int_misc_clears)
		return;
	if (open_counter(td, &u->be_fd, &u->be_pc, config,
			 req->include_kernel)) {
		u->be_on = true;
		u->be_flag = 0;
		return;
	}
	close_counter(td, &u->be_fd, &u->be_pc); /* flagged unrefined */
}

void td_pm_uop_open(struct td *td, const struct td_open_req *req)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	const struct td_refined_pmu *core =
		td_pm_of(td)->pm.clear_mode ? NULL : core_wants(td);

	u->fd = u->be_fd = -1;
	u->pc = u->be_pc = NULL;
	u->on = u->be_on = false;
	u->on_l2 = false;
	u->wanted = core != NULL;
	u->fe_flag = u->wanted ? TD_RESULT_FE_UNREFINED : 0;
	if (u->wanted && req->uop_dropping) {
		if (open_counter(td, &u->fd, &u->pc, core->drop,
				 req->include_kernel)) {
			u->on = true;
			u->fe_flag = 0;
		} else { /* no counter: results flagged unrefined */
			close_counter(td, &u->fd, &u->pc);
		}
	}
	open_clears(td, req, core ? core->clears : 0);
	/* the fast paths' common case: one counter, level 2 decoded */
	u->on_l2 = u->on && !u->be_wanted &&
		   td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;
}

void td_pm_uop_close(struct td *td)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if (!u->wanted) /* never opened (fd not set) */
		return;
	close_counter(td, &u->be_fd, &u->be_pc);
	close_counter(td, &u->fd, &u->pc);
	u->on = u->be_on = false;
	u->on_l2 = false;
	u->fe_flag = TD_RESULT_FE_UNREFINED;
	u->be_flag = u->be_wanted ? TD_RESULT_BE_UNREFINED : 0;
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
static inline __attribute__((always_inline)) bool rdpmc_count(
	const struct td *td, const struct perf_event_mmap_page *pc,
	uint32_t *sel, uint64_t *offset, uint64_t *count)
{
	struct td_user_reading r;

	if (!td_user_read(pc, td_pm_guard(td), false, &r))
		return false;
	*count = r.count;
	*sel = r.counter;
	*offset = r.count - r.raw;
	return true;
}

/* read(2): { nr, time_enabled, time_running, value } (PERF_FORMAT_GROUP). */
static bool read_count(int fd, uint64_t *count)
{
	uint64_t buf[4];

	if (td_sys_read(fd, buf, sizeof(buf)) != (int)sizeof(buf) ||
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
 * saw it, which takes a reading here first.  INT_MISC.CLEARS_COUNT
 * next, the same way (rdpmc_count inlined in both: the first read stays
 * as close to the source's own reads as before).
 */
void td_pm_uop_sample(struct td *td, struct td_sample *s)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint64_t v;

	if (!u->on)
		return;
	if ((td->path == TD_PATH_RDPMC &&
	     rdpmc_count(td, u->pc, &u->sel, &u->offset, &v)) ||
	    read_count(u->fd, &v))
		s->aux = v;
	if (!u->be_on)
		return;
	if ((td->path == TD_PATH_RDPMC &&
	     rdpmc_count(td, u->be_pc, &u->be_sel, &u->be_offset, &v)) ||
	    read_count(u->be_fd, &v))
		s->aux2 = v;
}

/*
 * The drop's move first, then the clears' (pm_decode.h): perf's bad
 * speculation is what the other three leave, so it takes both terms;
 * neither move without its count (the flags say which is missing).
 */
unsigned td_pm_uop_delta(const struct td *td, struct td_delta *d)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	unsigned flags = 0;

	if (!u->wanted)
		return 0;
	if (!u->on || d->aux == TD_AUX_LOST)
		flags |= TD_RESULT_FE_UNREFINED;
	else
		td_uop_move(d,
			    td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS,
			    d->aux);
	if (!u->be_wanted)
		return flags;
	if (!u->be_on || d->aux2 == TD_AUX_LOST)
		return flags | TD_RESULT_BE_UNREFINED;
	td_clears_move(d, d->aux2);
	return flags;
}
