/* SPDX-License-Identifier: MIT */
/*
 * The memory drill-down of the PERF_METRICS source (TD_OPT_MEMORY): the
 * level-3 nodes under memory bound, from the events perf's TopDown
 * metrics use for them, counted on general-purpose counters in a group
 * of their own beside the SLOTS/PERF_METRICS group and read by RDPMC at
 * every reading of the source (read(2) of the group where RDPMC cannot).
 *
 * perf's nodes are fractions of the thread's clocks
 * (tma_info_thread_clks = CPU_CLK_UNHALTED.THREAD), each from its own
 * stall counter, while memory bound is a fraction of slots from
 * PERF_METRICS: the nodes do not sum to memory bound (stall cycles of
 * loads and of stores overlap, a stall cycle is not width slots of
 * memory bound).  perf itself, where it needs a node's share of the
 * pipeline, scales memory bound by the node's part of the nodes' sum:
 * "tma_memory_bound * (tma_dram_bound / (tma_dram_bound + tma_l1_bound +
 * tma_l2_bound + tma_l3_bound + tma_store_bound) ...)" in
 * tma_info_bottleneck_memory_latency (alderlake/adl-metrics.json, Unit
 * cpu_core).  The library reports the nodes so: memory bound x node / sum
 * of the nodes, shares of the region's slots that sum to memory bound;
 * where the nodes sum to 0 (no memory stall cycle counted) memory bound
 * cannot be split and every node is 0.
 *
 * Error: the events are exact counts, so a node's error is its part of
 * memory bound's, at most memory bound's own, which td_result.err bounds.
 * (The counters are read a few instructions apart from SLOTS and
 * PERF_METRICS: the skew is a few cycles per reading, not bounded here.)
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "perf_metrics.h"
#include "sources.h"

/* cap_user_rdpmc is bit 2 of perf_event_mmap_page.capabilities. */
#define TD_CAP_USER_RDPMC (UINT64_C(1) << 2)

/* Intel's raw event encoding (arch/x86/events/perf_event.h, format/). */
#define TD_X86_EV(ev, umask, cmask) \
	((uint64_t)(ev) | (uint64_t)(umask) << 8 | (uint64_t)(cmask) << 24)

_Static_assert(TD_PM_MEM0 + TD_PMM_NR <= TD_NR_COUNTS - 1,
	       "memory events in struct td_counts, below the hybrid "
	       "source's E-core slots (its last entry)");

/*
 * Golden Cove P-cores: Sapphire Rapids (and Emerald Rapids, which the
 * kernel names the same) and Alder Lake's / Raptor Lake's cpu_core.
 * Encodings from perf's sapphirerapids and alderlake pipeline.json and
 * memory.json; the formulas (pm_mem_nodes) from spr-metrics.json and
 * adl-metrics.json (Unit cpu_core), which agree.
 */
static const uint64_t golden_cove[TD_PMM_NR] = {
	[TD_PMM_CLKS] = TD_X86_EV(0x3c, 0x00, 0),     /* CPU_CLK_UNHALTED.THREAD */
	[TD_PMM_LOADS] = TD_X86_EV(0xa6, 0x21, 5),    /* EXE_ACTIVITY.BOUND_ON_LOADS */
	[TD_PMM_L1D_MISS] = TD_X86_EV(0x47, 0x03, 3), /* MEMORY_ACTIVITY.STALLS_L1D_MISS */
	[TD_PMM_L2_MISS] = TD_X86_EV(0x47, 0x05, 5),  /* MEMORY_ACTIVITY.STALLS_L2_MISS */
	[TD_PMM_L3_MISS] = TD_X86_EV(0x47, 0x09, 9),  /* MEMORY_ACTIVITY.STALLS_L3_MISS */
	[TD_PMM_STORES] = TD_X86_EV(0xa6, 0x40, 2),   /* EXE_ACTIVITY.BOUND_ON_STORES */
};

/* Their caps/pmu_name (arch/x86/events/intel/core.c intel_pmu_init). */
static const char *const golden_cove_pmus[] = {
	"sapphire_rapids", "alderlake_hybrid",
};

/*
 * Why a PERF_METRICS core has no drill-down here, for td_strerror; NULL
 * where it has one.  Ice Lake (icl-metrics.json, icx-metrics.json):
 * tma_l2_bound weighs (CYCLE_ACTIVITY.STALLS_L1D_MISS -
 * CYCLE_ACTIVITY.STALLS_L2_MISS) by MEM_LOAD_RETIRED.L2_HIT, .FB_HIT,
 * .L1_MISS and L1D_PEND_MISS.FB_FULL_PERIODS, and tma_dram_bound takes the
 * rest: with CYCLE_ACTIVITY.STALLS_MEM_ANY, .STALLS_L3_MISS and
 * EXE_ACTIVITY.BOUND_ON_STORES that is 9 events beside the clocks, more
 * than Ice Lake's 8 general-purpose counters, so they could only be
 * multiplexed, which a per-region reading cannot scale.
 */
static const char *refusal(const char *pmu_name)
{
	if (strcmp(pmu_name, "icelake") == 0)
		return "Ice Lake: perf's L2/DRAM split needs 9 general-purpose "
		       "counters beside the clocks, the core has 8";
	return "this PERF_METRICS core's nodes are not in the library's "
	       "table (Sapphire Rapids, Alder/Raptor Lake P-cores)";
}

static const uint64_t *model_events(const char *pmu_name)
{
	for (size_t i = 0; i < sizeof(golden_cove_pmus) /
				       sizeof(golden_cove_pmus[0]); i++)
		if (strcmp(pmu_name, golden_cove_pmus[i]) == 0)
			return golden_cove;
	return NULL;
}

static void mem_fds_init(struct td_pm_mem *m)
{
	for (unsigned i = 0; i < TD_PMM_NR; i++) {
		m->fd[i] = -1;
		m->pc[i] = NULL;
	}
}

static int open_events(struct td *td, struct td_pm_mem *m,
		       const uint64_t *config, bool include_kernel)
{
	struct perf_event_attr attr;

	for (unsigned i = 0; i < TD_PMM_NR; i++) {
		int fd;

		td_fill_attr(&attr, td->pmu.type, config[i], i == 0,
			     include_kernel);
		fd = td_sys_perf_open(&attr, i ? m->fd[0] : -1);
		if (fd < 0) /* validate_group: the group does not fit */
			return fd == -EINVAL ? -ENOSPC : td_open_error(fd);
		m->fd[i] = fd;
		m->pc[i] = td_sys_map(fd, td->page_size);
		if (!m->pc[i])
			return errno ? -errno : -ENOMEM;
	}
	return td_sys_ioctl(m->fd[0], PERF_EVENT_IOC_ENABLE,
			    PERF_IOC_FLAG_GROUP);
}

/* A group that fits but never got scheduled (counters held by others). */
static bool scheduled(const struct td_pm_mem *m)
{
	uint64_t buf[3 + TD_PMM_NR];
	size_t len = sizeof(buf);

	return td_sys_read(m->fd[0], buf, len) == (int)len && buf[2] != 0;
}

int td_pm_mem_open(struct td *td, const struct td_open_req *req)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;
	char pmu_name[32];
	const uint64_t *config;
	int err;

	mem_fds_init(m);
	if (!req->memory)
		return 0;
	td_pm_pmu_name(td, pmu_name, sizeof(pmu_name));
	config = model_events(pmu_name);
	if (!config) {
		td_set_mem_refusal(refusal(pmu_name));
		return strcmp(pmu_name, "icelake") == 0 ? -ENOSPC : -EOPNOTSUPP;
	}
	m->on = true;
	err = open_events(td, m, config, req->include_kernel);
	if (err == 0 && !scheduled(m))
		err = -ENOSPC;
	/* every reading goes by the general route (source.h decode_more) */
	td->fast_capable = false;
	return err;
}

void td_pm_mem_close(struct td *td)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;

	if (!m->on)
		return;
	for (unsigned i = TD_PMM_NR; i-- > 0;) {
		if (m->pc[i])
			td_sys_unmap(m->pc[i], td->page_size);
		if (m->fd[i] >= 0)
			td_sys_close(m->fd[i]);
	}
	mem_fds_init(m);
	m->on = false;
}

/*
 * count = offset + sign_extend(rdpmc(index - 1), pmc_width): the UAPI
 * comment of linux/perf_event.h (struct perf_event_mmap_page).
 */
static inline bool read_one(const struct perf_event_mmap_page *pc,
			    uint64_t *v)
{
	uint32_t seq, idx;
	uint16_t width;
	uint64_t raw;

	do {
		seq = td_load_once(pc->lock);
		td_compiler_barrier();
		idx = td_load_once(pc->index);
		if (!(td_load_once(pc->capabilities) & TD_CAP_USER_RDPMC) ||
		    !idx)
			return false;
		width = td_load_once(pc->pmc_width);
		raw = td_rdpmc(idx - 1);
		raw = width && width < 64 ? raw << (64 - width) : raw;
		raw = width && width < 64
			      ? (uint64_t)((int64_t)raw >> (64 - width)) : raw;
		*v = (uint64_t)td_load_once(pc->offset) + raw;
		td_compiler_barrier();
	} while (td_load_once(pc->lock) != seq);
	return true;
}

/* read(2) of the group, exact for ordinary counters and resetting none. */
static bool read_group(const struct td_pm_mem *m, uint64_t *v)
{
	uint64_t buf[3 + TD_PMM_NR];
	size_t len = sizeof(buf);

	if (td_sys_read(m->fd[0], buf, len) != (int)len ||
	    buf[0] != TD_PMM_NR)
		return false;
	memcpy(v, buf + 3, sizeof(uint64_t) * TD_PMM_NR);
	return true;
}

/*
 * The events' counts with the source's reading s: into s's counts and
 * into the handle's base, so that a region's begin (which copies the
 * base) carries them.  Ordinary counters are never reset by the
 * library, so the counts are cumulative.  A hybrid part's thread on an
 * E-core: the group is switched out, RDPMC finds index 0 and read(2)
 * returns the counts saved at schedule-out.  Neither readable: the
 * reading is not trusted (counted as untrusted, which flags the regions
 * spanning it).
 */
void td_pm_mem_sample(struct td *td, struct td_sample *s)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;
	uint64_t v[TD_PMM_NR];
	bool ok = td->path == TD_PATH_RDPMC;

	for (unsigned i = 0; ok && i < TD_PMM_NR; i++)
		ok = read_one(m->pc[i], &v[i]);
	if (!ok && !read_group(m, v)) {
		td->untrusted++;
		s->valid = false;
		return;
	}
	for (unsigned i = 0; i < TD_PMM_NR; i++) {
		s->c.cat[TD_PM_MEM0 + i] = v[i];
		td->snap.base.cat[TD_PM_MEM0 + i] = v[i];
	}
}

void td_pm_mem_delta(const struct td_counts *a, const struct td_counts *b,
		     struct td_delta *d)
{
	for (unsigned i = TD_PM_MEM0; i < TD_PM_MEM0 + TD_PMM_NR; i++)
		d->cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
}

static double pos(double x)
{
	return x > 0 ? x : 0;
}

/*
 * perf's nodes, fractions of clocks, Golden Cove (spr-metrics.json and
 * adl-metrics.json, the same expressions; models: sapphire_rapids,
 * alderlake_hybrid's cpu_core):
 *   tma_l1_bound    max((EXE_ACTIVITY.BOUND_ON_LOADS -
 *                        MEMORY_ACTIVITY.STALLS_L1D_MISS) / clks, 0)
 *   tma_l2_bound    (MEMORY_ACTIVITY.STALLS_L1D_MISS -
 *                    MEMORY_ACTIVITY.STALLS_L2_MISS) / clks
 *   tma_l3_bound    (MEMORY_ACTIVITY.STALLS_L2_MISS -
 *                    MEMORY_ACTIVITY.STALLS_L3_MISS) / clks
 *   tma_dram_bound  MEMORY_ACTIVITY.STALLS_L3_MISS / clks
 *                   (spr-metrics.json without #has_pmem; with persistent
 *                   memory it subtracts tma_cxl_mem_bound, not measured
 *                   here: DRAM then includes it)
 *   tma_store_bound EXE_ACTIVITY.BOUND_ON_STORES / clks
 * The clocks divide out of the shares; a negative difference (counts
 * skewed by a few cycles) is clamped at 0 as perf's max(.., 0) does
 * for L1.
 */
static void perf_nodes(const int64_t *e, double *w)
{
	double loads = (double)e[TD_PMM_LOADS];
	double l1d = (double)e[TD_PMM_L1D_MISS];
	double l2 = (double)e[TD_PMM_L2_MISS];
	double l3 = (double)e[TD_PMM_L3_MISS];

	w[TD_L1_BOUND] = pos(loads - l1d);
	w[TD_L2_BOUND] = pos(l1d - l2);
	w[TD_L3_BOUND] = pos(l2 - l3);
	w[TD_DRAM_BOUND] = pos(l3);
	w[TD_STORE_BOUND] = pos((double)e[TD_PMM_STORES]);
}

/*
 * The source's decode_more: the nodes, memory bound split as perf's
 * bottleneck metrics split it (file comment).  Only where the region
 * measured memory bound (level 2: not on a hybrid region that ran on
 * E-cores, whose cpu_core events did not count there).
 */
static void mem_parts(const struct td_delta *d, double *part)
{
	double w[TD_MEM_COUNT], sum = 0;

	perf_nodes(&d->cat[TD_PM_MEM0], w);
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		sum += w[i];
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		part[i] = sum > 0 ? w[i] / sum : 0;
}

void td_pm_mem_decode(const struct td *td, const struct td_delta *d,
		      struct td_result *res)
{
	double part[TD_MEM_COUNT];

	(void)td;
	if (!(res->flags & TD_RESULT_L2))
		return;
	mem_parts(d, part);
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		res->mem[i] = res->l2[TD_MEM_BOUND] * part[i];
	res->flags |= TD_RESULT_MEMORY;
}

/* The source's record_more: the parts, in the record's reserved words. */
void td_pm_mem_record(const struct td *td, const struct td_delta *d,
		      struct td_record *rec)
{
	double part[TD_MEM_COUNT];

	(void)td;
	if (!(rec->flags & TD_RESULT_L2))
		return;
	mem_parts(d, part);
	td_mem_parts_pack(part, rec->reserved);
	rec->flags |= TD_RESULT_MEMORY;
}
