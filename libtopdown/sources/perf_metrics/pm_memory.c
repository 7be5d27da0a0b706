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
 *
 * Ice Lake (client and server; intel_pmu_init names Tiger Lake and
 * Rocket Lake "icelake" too, whose perf lists tgl-metrics.json and
 * rkl-metrics.json are not checked here) has PERF_METRICS' level 1
 * only, so memory bound itself comes from the events, perf's own way
 * (icelake_ratio), and the nodes split it as above.  There too perf's
 * nodes, fractions of clocks, sum to (STALLS_MEM_ANY + BOUND_ON_STORES)
 * / clks, not to memory bound; the library reports memory bound x node
 * / sum of the nodes again.  Two approximations, both in td_result.err
 * (icelake_err): memory bound's formula takes backend bound and
 * retiring from PERF_METRICS (their error), and perf's L2/DRAM split
 * needs four more events that cannot be counted beside the stall events
 * (the model icelake below), so the library splits as Golden Cove does:
 * a true L2 bound between 0 and the reported one, DRAM taking the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "perf_metrics.h"
#include "sources.h"

/* Intel's raw event encoding (arch/x86/events/perf_event.h, format/). */
#define TD_X86_EV(ev, umask, cmask) \
	((uint64_t)(ev) | (uint64_t)(umask) << 8 | (uint64_t)(cmask) << 24)

_Static_assert(TD_PM_MEM0 + TD_PMM_NR <= TD_NR_COUNTS &&
	       TD_PM_MEM0 + TD_PMM_EXE_IDLE == TD_NR_COUNTS - 1,
	       "memory counts in struct td_counts; Golden Cove's below the "
	       "hybrid source's E-core slots (its last entry), which only "
	       "Ice Lake's last count (never hybrid) shares");

/* One model's drill-down: its events, and the count each adds to. */
struct td_pm_mem_model {
	unsigned nr_events;
	unsigned nr_counts;     /* entries of struct td_counts it fills */
	bool memory_bound;      /* memory bound from the events (no L2) */
	uint64_t config[TD_PMM_MAX_EVENTS];
	uint8_t count[TD_PMM_MAX_EVENTS]; /* i where as many counts as events */
	const char *const *pmus; /* caps/pmu_name values, NULL-ended */
};

/*
 * Golden Cove P-cores: Sapphire Rapids (and Emerald Rapids, which the
 * kernel names the same) and Alder Lake's / Raptor Lake's cpu_core; and
 * Redwood Cove, Meteor Lake's cpu_core, whose nodes are the same:
 * meteorlake/mtl-metrics.json (Unit cpu_core) gives tma_l1_bound,
 * tma_l2_bound, tma_l3_bound, tma_dram_bound and tma_store_bound with
 * adl-metrics.json's expressions and events, and meteorlake
 * pipeline.json and memory.json give those events alderlake's
 * encodings.  Encodings from perf's sapphirerapids and alderlake
 * pipeline.json and memory.json; the formulas (perf_nodes) from
 * spr-metrics.json and adl-metrics.json (Unit cpu_core), which agree.
 * Pmu names: caps/pmu_name (arch/x86/events/intel/core.c intel_pmu_init).
 */
static const char *const golden_cove_pmus[] = {
	"sapphire_rapids", "alderlake_hybrid", "meteorlake_hybrid", NULL
};

static const struct td_pm_mem_model golden_cove = {
	.nr_events = 6,
	.nr_counts = 6,
	.config = {
		TD_X86_EV(0x3c, 0x00, 0), /* CPU_CLK_UNHALTED.THREAD */
		TD_X86_EV(0xa6, 0x21, 5), /* EXE_ACTIVITY.BOUND_ON_LOADS */
		TD_X86_EV(0x47, 0x03, 3), /* MEMORY_ACTIVITY.STALLS_L1D_MISS */
		TD_X86_EV(0x47, 0x05, 5), /* MEMORY_ACTIVITY.STALLS_L2_MISS */
		TD_X86_EV(0x47, 0x09, 9), /* MEMORY_ACTIVITY.STALLS_L3_MISS */
		TD_X86_EV(0xa6, 0x40, 2), /* EXE_ACTIVITY.BOUND_ON_STORES */
	},
	.count = { TD_PMM_CLKS, TD_PMM_LOADS, TD_PMM_L1D_MISS, TD_PMM_L2_MISS,
		   TD_PMM_L3_MISS, TD_PMM_STORES },
	.pmus = golden_cove_pmus,
};

/*
 * Ice Lake: the events of perf's icl-metrics.json and icx-metrics.json
 * tma_l1_bound, tma_l3_bound, tma_dram_bound (its Golden Cove form, see
 * the file comment), tma_store_bound and tma_memory_bound; encodings
 * from perf's icelake pipeline.json and memory.json.
 *
 * Counter budget: the kernel takes the number of general-purpose
 * counters from CPUID leaf 0xA (intel_pmu_init), which on Ice Lake says
 * 8 per logical processor, SMT or not; arch/x86/events/intel/core.c
 * intel_icl_event_constraints
 * keep CYCLE_ACTIVITY.* (0xa3) but STALLS_TOTAL, CYCLES_MEM_ANY and
 * STALLS_MEM_ANY, MEM_LOAD_RETIRED.* (0xd1) and L1D_PEND_MISS.* (0x48)
 * on counters 0-3.  perf's tma_l2_bound weighs STALLS_L1D_MISS -
 * STALLS_L2_MISS by MEM_LOAD_RETIRED.L2_HIT, .FB_HIT, .L1_MISS and
 * L1D_PEND_MISS.FB_FULL_PERIODS: with the three stall events that is
 * seven events for four counters, so no group can hold them and the
 * split is approximated (file comment).  What is counted takes all 8
 * counters (none is left for the NMI watchdog, whose cycles event the
 * kernel puts on fixed counter 1); the clocks are not counted, they
 * divide out of every share.  STALLS_TOTAL and 1_PORTS_UTIL only ever
 * appear summed, so they add to one count.
 */
static const char *const icelake_pmus[] = { "icelake", NULL };

static const struct td_pm_mem_model icelake = {
	.nr_events = 8,
	.nr_counts = TD_PMM_NR,
	.memory_bound = true,
	.config = {
		TD_X86_EV(0xa3, 0x14, 20), /* CYCLE_ACTIVITY.STALLS_MEM_ANY */
		TD_X86_EV(0xa3, 0x0c, 12), /* CYCLE_ACTIVITY.STALLS_L1D_MISS */
		TD_X86_EV(0xa3, 0x05, 5),  /* CYCLE_ACTIVITY.STALLS_L2_MISS */
		TD_X86_EV(0xa3, 0x06, 6),  /* CYCLE_ACTIVITY.STALLS_L3_MISS */
		TD_X86_EV(0xa6, 0x40, 2),  /* EXE_ACTIVITY.BOUND_ON_STORES */
		TD_X86_EV(0xa3, 0x04, 4),  /* CYCLE_ACTIVITY.STALLS_TOTAL */
		TD_X86_EV(0xa6, 0x02, 0),  /* EXE_ACTIVITY.1_PORTS_UTIL */
		TD_X86_EV(0xa6, 0x04, 0),  /* EXE_ACTIVITY.2_PORTS_UTIL */
	},
	.count = { TD_PMM_LOADS, TD_PMM_L1D_MISS, TD_PMM_L2_MISS,
		   TD_PMM_L3_MISS, TD_PMM_STORES, TD_PMM_EXE_IDLE,
		   TD_PMM_EXE_IDLE, TD_PMM_PORTS_2 },
	.pmus = icelake_pmus,
};

/*
 * Lion Cove P-cores (Lunar Lake, Arrow Lake): perf's lunarlake/
 * lnl-metrics.json (Unit cpu_core) counts each node on a stall event of
 * its own, tma_l1_bound = MEMORY_STALLS.L1 / clks .. tma_dram_bound =
 * MEMORY_STALLS.MEM / clks, not Golden Cove's differences of
 * MEMORY_ACTIVITY stalls: none of the models here.  The kernel names
 * those PMUs "lunarlake_hybrid" and "arrowlake_h_hybrid" and offers
 * RDPMC metrics-clear mode (format/metrics_clear) on them only, which
 * marks them whatever their name (as pm_uop.c takes it).
 */
static bool lion_cove(const struct td *td, const char *pmu_name)
{
	return td_pm_of(td)->pm.pmu.metrics_clear_config1 ||
	       strcmp(pmu_name, "lunarlake_hybrid") == 0 ||
	       strcmp(pmu_name, "arrowlake_h_hybrid") == 0;
}

/* Why a PERF_METRICS core has no drill-down here, for td_strerror. */
static const char *refusal(const struct td *td, const char *pmu_name)
{
	if (lion_cove(td, pmu_name))
		return "Lion Cove P-cores (Lunar Lake, Arrow Lake) count "
		       "the nodes on MEMORY_STALLS.L1 .. .MEM (perf's "
		       "lnl-metrics.json), which the library does not "
		       "implement";
	return "this PERF_METRICS core's nodes are not in the library's "
	       "table (Ice Lake, Sapphire Rapids, Alder/Raptor/Meteor Lake "
	       "P-cores)";
}

static const struct td_pm_mem_model *model_of(const struct td *td,
					      const char *pmu_name)
{
	static const struct td_pm_mem_model *const models[] = {
		&golden_cove, &icelake,
	};

	if (lion_cove(td, pmu_name))
		return NULL;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		for (const char *const *n = models[i]->pmus; *n; n++)
			if (strcmp(pmu_name, *n) == 0)
				return models[i];
	return NULL;
}

static void mem_fds_init(struct td_pm_mem *m)
{
	for (unsigned i = 0; i < TD_PMM_MAX_EVENTS; i++) {
		m->fd[i] = -1;
		m->pc[i] = NULL;
	}
}

static int open_events(struct td *td, struct td_pm_mem *m,
		       bool include_kernel)
{
	struct perf_event_attr attr;

	for (unsigned i = 0; i < m->model->nr_events; i++) {
		int fd;

		td_fill_attr(&attr, td->pmu.type, m->model->config[i], i == 0,
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
	uint64_t buf[3 + TD_PMM_MAX_EVENTS];
	size_t len = sizeof(uint64_t) * (3 + m->model->nr_events);

	return td_sys_read(m->fd[0], buf, len) == (int)len && buf[2] != 0;
}

/* Its -ENOSPC: the group did not fit, or others hold counters it needs. */
static void no_room(const struct td_pm_mem_model *md)
{
	char why[120];

	snprintf(why, sizeof(why),
		 "its group of %u events did not fit the free counters "
		 "(others hold some)", md->nr_events);
	td_set_mem_refusal(why);
}

int td_pm_mem_open(struct td *td, const struct td_open_req *req)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;
	char pmu_name[32];
	int err;

	mem_fds_init(m);
	if (!req->memory)
		return 0;
	td_pm_pmu_name(td, pmu_name, sizeof(pmu_name));
	m->model = model_of(td, pmu_name);
	if (!m->model) {
		td_set_mem_refusal(refusal(td, pmu_name));
		return -EOPNOTSUPP;
	}
	m->on = true;
	err = open_events(td, m, req->include_kernel);
	if (err == 0 && !scheduled(m))
		err = -ENOSPC;
	if (err == -ENOSPC)
		no_room(m->model);
	/* every reading goes by the general route (source.h decode_more) */
	td->fast_capable = false;
	return err;
}

void td_pm_mem_close(struct td *td)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;

	if (!m->on)
		return;
	for (unsigned i = TD_PMM_MAX_EVENTS; i-- > 0;) {
		if (m->pc[i])
			td_sys_unmap(m->pc[i], td->page_size);
		if (m->fd[i] >= 0)
			td_sys_close(m->fd[i]);
	}
	mem_fds_init(m);
	m->on = false;
}

/*
 * An event's count by RDPMC under its page's seqlock (userpage.h), inside
 * guard where the serving source set one (td_pm_guard: a hybrid part's
 * E-core may lack the counter a P-core gave the event); false: read(2).
 */
static inline bool rdpmc_count(const struct perf_event_mmap_page *pc,
			       const struct td_cpu_guard *guard, uint64_t *v)
{
	struct td_user_reading r;

	if (!td_user_read(pc, guard, false, &r))
		return false;
	*v = r.count;
	return true;
}

/*
 * Every event's count by RDPMC; the guard's test out of the loop (a
 * constant NULL where there is none: the loop of plain RDPMCs).
 */
static inline __attribute__((always_inline)) bool
rdpmc_counts(const struct td_pm_mem *m, const struct td_cpu_guard *guard,
	     uint64_t *v)
{
	unsigned n = m->model->nr_events;

	for (unsigned i = 0; i < n; i++)
		if (!rdpmc_count(m->pc[i], guard, &v[i]))
			return false;
	return true;
}

/* read(2) of the group, exact for ordinary counters and resetting none. */
static bool read_group(const struct td_pm_mem *m, uint64_t *v)
{
	uint64_t buf[3 + TD_PMM_MAX_EVENTS];
	unsigned n = m->model->nr_events;
	size_t len = sizeof(uint64_t) * (3 + n);

	if (td_sys_read(m->fd[0], buf, len) != (int)len || buf[0] != n)
		return false;
	memcpy(v, buf + 3, sizeof(uint64_t) * n);
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
 * spanning it).  The model's counts are sums of its events (most of one
 * each); only its own entries are written.
 */
void td_pm_mem_sample(struct td *td, struct td_sample *s)
{
	struct td_pm_mem *m = &td_pm_of(td)->pm.mem;
	const struct td_pm_mem_model *md = m->model;
	uint64_t v[TD_PMM_MAX_EVENTS], c[TD_PMM_NR];
	const uint64_t *counts = v; /* one event a count (Golden Cove) */
	const struct td_cpu_guard *guard = td_pm_guard(td);
	bool ok = td->path == TD_PATH_RDPMC &&
		  (TD_LIKELY(!guard) ? rdpmc_counts(m, NULL, v)
				     : rdpmc_counts(m, guard, v));

	if (!ok && !read_group(m, v)) {
		td->untrusted++;
		s->valid = false;
		return;
	}
	if (md->nr_events != md->nr_counts) {
		memset(c, 0, sizeof(c));
		for (unsigned i = 0; i < md->nr_events; i++)
			c[md->count[i]] += v[i];
		counts = c;
	}
	for (unsigned i = 0; i < md->nr_counts; i++) {
		s->c.cat[TD_PM_MEM0 + i] = counts[i];
		td->snap.base.cat[TD_PM_MEM0 + i] = counts[i];
	}
}

/*
 * Every entry: those a model does not fill hold what else is there
 * (the hybrid source's E-core slots), whose difference no node reads.
 */
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
 * perf's nodes, fractions of clocks, Golden Cove and Redwood Cove
 * (spr-metrics.json, adl-metrics.json and mtl-metrics.json, the same
 * expressions; models: sapphire_rapids, alderlake_hybrid's and
 * meteorlake_hybrid's cpu_core):
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
 * The nodes' parts of memory bound: perf's nodes over their sum, as
 * perf's bottleneck metrics split memory bound (file comment).
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

/*
 * Ice Lake's memory bound as a share of backend bound, given the
 * retiring fraction: perf's icl-metrics.json and icx-metrics.json
 * tma_memory_bound,
 *   (CYCLE_ACTIVITY.STALLS_MEM_ANY + EXE_ACTIVITY.BOUND_ON_STORES) /
 *   (CYCLE_ACTIVITY.STALLS_TOTAL + (EXE_ACTIVITY.1_PORTS_UTIL +
 *    tma_retiring * EXE_ACTIVITY.2_PORTS_UTIL) +
 *    EXE_ACTIVITY.BOUND_ON_STORES) * tma_backend_bound
 * (the first count holds STALLS_TOTAL + 1_PORTS_UTIL).  It falls as
 * retiring grows.
 */
static double icelake_ratio(const int64_t *e, double retiring)
{
	double num = pos((double)e[TD_PMM_LOADS]) +
		     pos((double)e[TD_PMM_STORES]);
	double den = pos((double)e[TD_PMM_EXE_IDLE]) +
		     retiring * pos((double)e[TD_PMM_PORTS_2]) +
		     pos((double)e[TD_PMM_STORES]);

	return den > 0 ? num / den : 0;
}

/*
 * The nodes' error bound on Ice Lake, given res's level 1 (within
 * res->err each, e) and the nodes' parts of memory bound mb.  Memory
 * bound: backend bound off by e moves it by e x ratio, retiring off by
 * e moves the ratio within [ratio(rho + e), ratio(rho - e)]; so
 * |mb - true| <= m = e x hi + be x (hi - lo).  A node is mb x its part
 * (off by m x part), L2 and DRAM besides by perf's split: the true L2
 * is between 0 and the reported one, at most (mb + m) x part[L2], DRAM
 * takes what L2 does not.  The largest of them (or e) is the result's
 * err.
 */
static double icelake_err(const int64_t *e, const struct td_result *res,
			  const double *part, double mb)
{
	double err = res->err, rho = res->l1[TD_RETIRING];
	double hi = icelake_ratio(e, rho - err > 0 ? rho - err : 0);
	double lo = icelake_ratio(e, rho + err < 1 ? rho + err : 1);
	double m = err * hi + res->l1[TD_BE_BOUND] * (hi - lo);
	double split = (mb + m) * part[TD_L2_BOUND];
	double worst = err;

	for (unsigned i = 0; i < TD_MEM_COUNT; i++) {
		double node = m * part[i];

		if (i == TD_L2_BOUND || i == TD_DRAM_BOUND)
			node += split;
		worst = node > worst ? node : worst;
	}
	return worst < 1 ? worst : 1;
}

/*
 * A region whose level 2 is the P-cores' (PERF_METRICS'), over which
 * cpu_core's memory events counted.  Not one all of whose slots came
 * from Crestmont or Skymont E-cores (the hybrid source's
 * TD_RESULT_L2_FE_BE): its level 2 is the E-cores' tree, whose
 * memory-bound entry holds their resource bound, and the events did not
 * count there (perf's meteorlake list has no tma_l1_bound .. for
 * cpu_atom).
 */
static bool pcore_level2(unsigned flags)
{
	return (flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE)) == TD_RESULT_L2;
}

/*
 * The region's memory bound and its nodes' parts; false where it has
 * none.  Golden Cove: level 2's memory bound, only where the region
 * measured the P-cores' (pcore_level2: not on a hybrid region that ran
 * on E-cores, whose cpu_core events did not count there).  Ice Lake: from the events and
 * level 1 (icelake_ratio), err raised to cover the nodes (icelake_err).
 */
static bool mem_bound(const struct td *td, const struct td_delta *d,
		      struct td_result *res, double *part, double *mb)
{
	const int64_t *e = &d->cat[TD_PM_MEM0];

	if (!td_pm_of(td)->pm.mem.model->memory_bound) {
		if (!pcore_level2(res->flags))
			return false;
		mem_parts(d, part);
		*mb = res->l2[TD_MEM_BOUND];
		return true;
	}
	mem_parts(d, part);
	*mb = res->l1[TD_BE_BOUND] * icelake_ratio(e, res->l1[TD_RETIRING]);
	*mb = *mb < 1 ? *mb : 1;
	res->err = icelake_err(e, res, part, *mb);
	return true;
}

/* The source's decode_more: the nodes, memory bound split by the parts. */
void td_pm_mem_decode(const struct td *td, const struct td_delta *d,
		      struct td_result *res)
{
	double part[TD_MEM_COUNT], mb;

	if (!mem_bound(td, d, res, part, &mb))
		return;
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		res->mem[i] = mb * part[i];
	res->flags |= TD_RESULT_MEMORY;
}

/*
 * The source's record_more: the parts, in the record's reserved words.
 * Ice Lake's record has no level 2: its memory bound goes where level
 * 2's would (cat[TD_M_MEM_BOUND], slots x 255 as the others), and what
 * icelake_err added to err goes into qerr, so that td_record_decode and
 * named totals give back what td_region_end gave.
 */
void td_pm_mem_record(const struct td *td, const struct td_delta *d,
		      struct td_record *rec)
{
	double part[TD_MEM_COUNT], mb, sum, before;
	struct td_result res;

	if (!td_pm_of(td)->pm.mem.model->memory_bound) {
		if (!pcore_level2(rec->flags))
			return;
		mem_parts(d, part);
		td_mem_parts_pack(part, rec->reserved);
		rec->flags |= TD_RESULT_MEMORY;
		return;
	}
	sum = (double)(d->cat[TD_M_RETIRING] + d->cat[TD_M_BAD_SPEC] +
		       d->cat[TD_M_FE_BOUND] + d->cat[TD_M_BE_BOUND] +
		       d->cat[TD_M_SMT]);
	if (sum <= 0)
		return;
	td_decode(d, false, &res);
	before = res.err;
	mem_bound(td, d, &res, part, &mb);
	td_mem_parts_pack(part, rec->reserved);
	rec->flags |= TD_RESULT_MEMORY;
	rec->cat[TD_M_MEM_BOUND] = (int64_t)(mb * sum + 0.5);
	rec->qerr += (uint64_t)ceil((res.err - before) * sum);
}
