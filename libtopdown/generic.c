/* SPDX-License-Identifier: MIT */
/*
 * The generic-counter TopDown source: where the PMU has no PERF_METRICS,
 * a perf_event group of the ordinary events a formula needs (formulas.c),
 * every fd mapped, read with the standard seqlock protocol of
 * linux/perf_event.h (intel-kernel-topdown.md section 4):
 *   count = offset + sign_extend(rdpmc(index - 1), pmc_width)
 * and, when any index is 0 (not scheduled, or RDPMC not offered), one
 * read(2) of the group, which for ordinary counters is exact and resets
 * nothing.  Counts are cumulative since the group's first enable, so
 * region deltas are plain differences: no folding, no resets, no 8-bit
 * quantisation (qerr stays 0).  begin/end reach this through
 * td_take_sample: td->fast_pc stays NULL for this source.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "barrier.h"
#include "generic.h"

#define TD_CAP_USER_RDPMC (UINT64_C(1) << 2)

static void close_group(struct td *td, struct td_gen *g)
{
	for (unsigned i = 0; i < TD_GEN_MAX; i++) {
		if (g->pc[i])
			td_sys_unmap(g->pc[i], td->page_size);
		if (g->fd[i] >= 0)
			td_sys_close(g->fd[i]);
		g->pc[i] = NULL;
		g->fd[i] = -1;
	}
	g->nr = 0;
}

/* The model's events, but for the derived one, in model order. */
static void choose_events(struct td_gen *g, unsigned derived)
{
	g->nr = 0;
	g->derived = derived;
	for (unsigned i = 0; i < g->m.nr; i++)
		if (i != derived || !derived)
			g->ev[g->nr++] = (uint8_t)i;
}

static int open_group(struct td_gen *g, uint32_t type,
		      bool include_kernel)
{
	struct perf_event_attr attr;

	for (unsigned k = 0; k < g->nr; k++) {
		int fd;

		td_fill_attr(&attr, type, g->m.config[g->ev[k]], k == 0,
			     include_kernel);
		fd = td_sys_perf_open(&attr, k ? g->fd[0] : -1);
		if (fd < 0)
			return td_open_error(fd);
		g->fd[k] = fd;
	}
	return 0;
}

static int map_pages(struct td *td, struct td_gen *g)
{
	for (unsigned k = 0; k < g->nr; k++) {
		g->pc[k] = td_sys_map(g->fd[k], td->page_size);
		if (!g->pc[k])
			return errno ? -errno : -ENOMEM;
	}
	return 0;
}

bool td_gen_rdpmc_offered(const struct td *td, const struct td_gen *g)
{
	if (!TD_HAVE_USER_READ || td->pmu.rdpmc_knob == 0)
		return false;
	for (unsigned k = 0; k < g->nr; k++)
		if (!g->pc[k]->cap_user_rdpmc)
			return false;
	return true;
}

/* read(2) of the group: {nr, time_enabled, time_running, value[nr]}. */
static int read_group(const struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t buf[3 + TD_GEN_MAX];
	size_t len = (3 + g->nr) * sizeof(uint64_t);
	int n = td_sys_read(g->fd[0], buf, len);

	if (n != (int)len || buf[0] != g->nr)
		return n < 0 ? n : -EIO;
	memcpy(v, buf + 3, g->nr * sizeof(uint64_t));
	times[0] = buf[1];
	times[1] = buf[2];
	return 0;
}

/*
 * Counter budget (issue 7 item 4).  x86 validate_group refuses at open a
 * group larger than the PMU's counters (EINVAL on a member); a group that
 * fits the PMU but not the counters left free (the NMI watchdog pins a
 * cycles event on a GP counter on AMD, arm-amd-topdown.md section 6) is
 * accepted and then never scheduled: right after the enable, with time
 * enabled, time_running is still 0.  Either way the group is too big for
 * this machine now.  Another perf user's group crowding it out at this
 * moment looks the same; the smaller set is exact too, so that costs
 * nothing (the failure message names both causes).
 */
static bool too_big(int err, unsigned opened)
{
	return err == -EINVAL && opened > 0;
}

static int group_scheduled(const struct td_gen *g)
{
	uint64_t v[TD_GEN_MAX], t[2];
	int err = read_group(g, v, t);

	if (err < 0)
		return err;
	return t[0] > 0 && t[1] == 0 ? -ENOSPC : 0;
}

/* Open, enable, map and check one set of events; -ENOSPC: too big. */
static int try_set(struct td *td, struct td_gen *g, uint32_t type,
		   bool include_kernel, bool check)
{
	int err = open_group(g, type, include_kernel);

	if (err < 0) {
		unsigned opened = 0;

		while (opened < g->nr && g->fd[opened] >= 0)
			opened++;
		return too_big(err, opened) ? -ENOSPC : err;
	}
	err = td_sys_ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE,
			   PERF_IOC_FLAG_GROUP);
	if (err == 0)
		err = map_pages(td, g);
	if (err == 0 && check)
		err = group_scheduled(g);
	return err;
}

/*
 * The full set, else the smallest exact set (one term derived, see
 * td_formula_derive), else -ENOSPC.  check: the thread runs on a CPU of
 * this PMU now, so that not being scheduled means no counters.
 */
int td_gen_group_open(struct td *td, struct td_gen *g, uint32_t type,
		      bool include_kernel, bool check)
{
	int err;

	choose_events(g, 0);
	err = try_set(td, g, type, include_kernel, check);
	if (err != -ENOSPC || !g->m.derivable)
		return err;
	close_group(td, g);
	choose_events(g, g->m.derivable);
	err = try_set(td, g, type, include_kernel, check);
	return err;
}

/* /sys/devices/system/cpu/smt/active: "1" with SMT on; absent: off. */
static bool smt_active(void)
{
	char buf[8];

	return td_sys_read_file("/sys/devices/system/cpu/smt/active", buf,
				sizeof(buf)) > 0 && buf[0] == '1';
}

/*
 * V4.5 with SMT on: the _ANY form (exact per core, halved per thread as
 * the reference does).  The kernel lets AnyThread only through
 * perf_allow_cpu (EACCES otherwise; inference from x86 hw_config, not in
 * the notes) and older PMUs refuse it (EINVAL): then the per-thread form,
 * flagged approximate (TD_INFO_SMT_PER_THREAD).  1: not this case.
 */
static int open_v45_smt(struct td *td, struct td_gen *g, bool include_kernel)
{
	struct td_gen_model per_thread = g->m;
	int err;

	if (g->m.formula != TD_F_V45 || !smt_active())
		return 1;
	td_model_anythread(&g->m);
	err = td_gen_group_open(td, g, td->pmu.type, include_kernel, true);
	if (err != -EACCES && err != -EINVAL)
		return err;
	close_group(td, g);
	g->m = per_thread;
	g->smt_per_thread = true;
	return td_gen_group_open(td, g, td->pmu.type, include_kernel, true);
}

struct td_gen *td_gen_new(void)
{
	struct td_gen *g = calloc(1, sizeof(*g));

	for (unsigned i = 0; g && i < TD_GEN_MAX; i++)
		g->fd[i] = -1;
	return g;
}

void td_gen_free(struct td *td, struct td_gen *g)
{
	if (!g)
		return;
	close_group(td, g);
	free(g);
}

int td_generic_open(struct td *td, bool include_kernel, bool want_rdpmc)
{
	struct td_gen *g = td_gen_new();
	int err;

	if (!g)
		return -ENOMEM;
	td->gen = g;
	err = td_cpu_model(td->pmu.name, &g->m);
	if (err < 0)
		return err;
	td->page_size = (size_t)sysconf(_SC_PAGESIZE);
	td->pmu.nr_metrics = TD_NR_L1;
	err = open_v45_smt(td, g, include_kernel);
	if (err == 1)
		err = td_gen_group_open(td, g, td->pmu.type, include_kernel,
					true);
	if (err < 0)
		return err;
	td->leader_fd = g->fd[0];
	/* region.c reads these pages: any valid page will do (no fast path). */
	td->slots_pc = g->pc[0];
	td->metric_pc = g->pc[1];
	td->path = want_rdpmc && td_gen_rdpmc_offered(td, g) ? TD_PATH_RDPMC
						      : TD_PATH_READ;
	return 0;
}

void td_generic_close(struct td *td)
{
	struct td_gen *g = td->gen;

	if (!g)
		return;
	td_gen_free(td, g);
	td->gen = NULL;
	td->slots_pc = td->metric_pc = NULL;
	td->leader_fd = -1;
}

/*
 * One event by RDPMC under its page's seqlock; false when its index is 0
 * (not counting on this CPU now) or RDPMC is not offered.  With frozen
 * (the hybrid E-core group), index 0 with cap_user_rdpmc set means "not
 * running": the kernel wrote that page after taking the counter away,
 * with offset = the whole count (perf_event_update_userpage subtracts
 * prev_count only for an active event), so offset is the count, which
 * cannot move until the next schedule-in bumps lock (inference: the note
 * says index reads 0 off the PMU's cores; that the same update publishes
 * the final count is our reading of perf_event_update_userpage).
 */
static inline bool read_one(const struct perf_event_mmap_page *pc,
			    bool frozen, uint64_t *v, uint64_t *times)
{
	uint32_t seq, idx;

	do {
		seq = td_load_once(pc->lock);
		td_compiler_barrier();
		idx = td_load_once(pc->index);
		if (!(td_load_once(pc->capabilities) & TD_CAP_USER_RDPMC) ||
		    (!idx && !frozen))
			return false;
		times[0] = td_load_once(pc->time_enabled);
		times[1] = td_load_once(pc->time_running);
		if (idx)
			*v = td_gen_value(td_load_once(pc->offset),
					  td_rdpmc(idx - 1),
					  td_load_once(pc->pmc_width));
		else
			*v = (uint64_t)td_load_once(pc->offset);
		td_compiler_barrier();
	} while (td_load_once(pc->lock) != seq);
	return true;
}

static bool read_rdpmc(const struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t t[2];

	if (!read_one(g->pc[0], g->frozen_ok, &v[0], times))
		return false;
	for (unsigned k = 1; k < g->nr; k++)
		if (!read_one(g->pc[k], g->frozen_ok, &v[k], t))
			return false;
	return true;
}

/*
 * Cumulative values of the model's events, v[] in model order: the open
 * ones by RDPMC (rdpmc) or read(2), the derived one computed.
 */
int td_gen_values(const struct td_gen *g, bool rdpmc, uint64_t *v,
		  uint64_t *times)
{
	uint64_t open[TD_GEN_MAX];

	if (!rdpmc || !read_rdpmc(g, open, times)) {
		int err = read_group(g, open, times);

		if (err < 0)
			return err;
	}
	memset(v, 0, TD_GEN_MAX * sizeof(*v));
	for (unsigned k = 0; k < g->nr; k++)
		v[g->ev[k]] = open[k];
	if (g->derived)
		td_formula_derive(&g->m, g->derived, v);
	return 0;
}

int td_generic_sample(struct td *td, struct td_sample *s)
{
	const struct td_gen *g = td->gen;
	uint64_t v[TD_GEN_MAX];
	uint64_t t[2];
	int err = td_gen_values(g, td->path == TD_PATH_RDPMC, v, t);

	if (err < 0)
		return err;
	td_formula_counts(&g->m, v, &s->c);
	s->raw_slots = 0;    /* nothing to reset: never triggers a reset */
	s->raw_metrics = 0;
	s->unsched = t[0] - t[1];
	s->valid = true;
	return 0;
}
