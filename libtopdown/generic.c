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

/*
 * Arm asks for EL0 access with config1 bit 1 and a 64-bit counter with
 * bit 0; without FEAT_PMUv3p5 the kernel refuses 64-bit event counters
 * (EOPNOTSUPP; EAGAIN for a second 64-bit cycle counter): then 32 bits,
 * pmc_width says which (arm-amd-topdown.md section 1.2; retrying with 2
 * is the note's inference from perf.rst, not a documented recipe).
 */
static int open_event(struct td *td, struct perf_event_attr *attr, int group)
{
	int fd;

	if (!td->pmu.arm)
		return td_sys_perf_open(attr, group);
	attr->config1 = 3;
	fd = td_sys_perf_open(attr, group);
	if (fd == -EOPNOTSUPP || fd == -EAGAIN) {
		attr->config1 = 2;
		fd = td_sys_perf_open(attr, group);
	}
	return fd;
}

/* Opens the model's events; *failed: index of the one refused. */
static int open_group(struct td *td, struct td_gen *g, bool include_kernel,
		      unsigned *failed)
{
	struct perf_event_attr attr;

	for (unsigned i = 0; i < g->m.nr; i++) {
		int fd;

		td_fill_attr(&attr, td->pmu.type, g->m.config[i], i == 0,
			  include_kernel);
		fd = open_event(td, &attr, i ? g->fd[0] : -1);
		if (fd < 0) {
			*failed = i;
			return td_open_error(fd);
		}
		g->fd[i] = fd;
	}
	return 0;
}

static void close_fds(struct td_gen *g)
{
	for (unsigned i = 0; i < TD_GEN_MAX; i++) {
		td_sys_close(g->fd[i]);
		g->fd[i] = -1;
	}
}

/*
 * The Arm PMU driver refuses a group member that no free counter can
 * take (validate_group: EINVAL); VMs often expose fewer counters than
 * the hardware's six (arm-amd-topdown.md sections 2.6, 7).  Then the
 * group is opened again without STALL_SLOT, derived as frontend +
 * backend (an inference in the note from the event's description, "the
 * sum of STALL_SLOT_FRONTEND and STALL_SLOT_BACKEND"); if that does not
 * fit either: -ENOSPC.
 */
static int open_counters(struct td *td, struct td_gen *g, bool include_kernel)
{
	unsigned failed = 0;
	int err = open_group(td, g, include_kernel, &failed);

	if (!td->pmu.arm || err != -EINVAL || failed == 0)
		return err;
	if (g->m.formula == TD_F_ARM && !g->m.arm.derived_stall) {
		close_fds(g);
		g->m.nr--; /* STALL_SLOT is the last event */
		g->m.arm.at[TD_ARM_STALL] = -1;
		g->m.arm.derived_stall = true;
		err = open_group(td, g, include_kernel, &failed);
	}
	return err == -EINVAL && failed > 0 ? -ENOSPC : err;
}

static int map_pages(struct td *td, struct td_gen *g)
{
	for (unsigned i = 0; i < g->m.nr; i++) {
		g->pc[i] = td_sys_map(g->fd[i], td->page_size);
		if (!g->pc[i])
			return errno ? -errno : -ENOMEM;
	}
	return 0;
}

static bool rdpmc_offered(const struct td *td, const struct td_gen *g)
{
	if (!TD_HAVE_USER_READ || td->pmu.rdpmc_knob == 0)
		return false;
	for (unsigned i = 0; i < g->m.nr; i++)
		if (!g->pc[i]->cap_user_rdpmc)
			return false;
	return true;
}

int td_generic_open(struct td *td, bool include_kernel, bool want_rdpmc)
{
	struct td_gen *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	for (unsigned i = 0; i < TD_GEN_MAX; i++)
		g->fd[i] = -1;
	td->gen = g;
	err = td->pmu.arm ? td_arm_model(&td->pmu, &g->m)
			  : td_cpu_model(td->pmu.name, &g->m);
	if (err < 0)
		return err;
	td->page_size = (size_t)sysconf(_SC_PAGESIZE);
	td->pmu.nr_metrics = TD_NR_L1;
	err = open_counters(td, g, include_kernel);
	if (err == 0)
		err = td_sys_ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE,
				   PERF_IOC_FLAG_GROUP);
	if (err == 0)
		err = map_pages(td, g);
	if (err < 0)
		return err;
	td->leader_fd = g->fd[0];
	/* region.c reads these pages: any valid page will do (no fast path). */
	td->slots_pc = g->pc[0];
	td->metric_pc = g->pc[1];
	td->path = want_rdpmc && rdpmc_offered(td, g) ? TD_PATH_RDPMC
						      : TD_PATH_READ;
	return 0;
}

void td_generic_close(struct td *td)
{
	struct td_gen *g = td->gen;

	if (!g)
		return;
	for (unsigned i = 0; i < TD_GEN_MAX; i++) {
		if (g->pc[i])
			td_sys_unmap(g->pc[i], td->page_size);
		if (g->fd[i] >= 0)
			td_sys_close(g->fd[i]);
	}
	free(g);
	td->gen = NULL;
	td->slots_pc = td->metric_pc = NULL;
	td->leader_fd = -1;
}

unsigned td_generic_delta(const struct td *td, const struct td_counts *a,
			  const struct td_counts *b, struct td_delta *d)
{
	if (td->gen && (td->gen->m.formula == TD_F_ARM ||
			td->gen->m.formula == TD_F_ARM_CYCLES))
		return td_arm_delta(&td->gen->m, a, b, d);
	d->slots = (int64_t)(b->slots - a->slots);
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d->cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
	return 0;
}

/*
 * One event by RDPMC (MRS on arm64) under its page's seqlock; false when its index is 0
 * (not counting on this CPU now) or RDPMC is not offered.
 */
static inline bool read_one(const struct perf_event_mmap_page *pc,
			    uint64_t *v, uint64_t *unsched)
{
	uint32_t seq, idx;

	do {
		seq = td_load_once(pc->lock);
		td_compiler_barrier();
		idx = td_load_once(pc->index);
		if (!(td_load_once(pc->capabilities) & TD_CAP_USER_RDPMC) ||
		    !idx)
			return false;
		*unsched = td_load_once(pc->time_enabled) -
			   td_load_once(pc->time_running);
		*v = td_gen_value(td_load_once(pc->offset), td_rdpmc(idx - 1),
				  td_load_once(pc->pmc_width));
		td_compiler_barrier();
	} while (td_load_once(pc->lock) != seq);
	return true;
}

static bool read_rdpmc(const struct td_gen *g, uint64_t *v,
		       uint64_t *unsched)
{
	uint64_t u;

	if (!read_one(g->pc[0], &v[0], unsched))
		return false;
	for (unsigned i = 1; i < g->m.nr; i++)
		if (!read_one(g->pc[i], &v[i], &u))
			return false;
	return true;
}

/* read(2) of the group: {nr, time_enabled, time_running, value[nr]}. */
static int read_group(const struct td_gen *g, uint64_t *v, uint64_t *unsched)
{
	uint64_t buf[3 + TD_GEN_MAX];
	size_t len = (3 + g->m.nr) * sizeof(uint64_t);
	int n = td_sys_read(g->fd[0], buf, len);

	if (n != (int)len || buf[0] != g->m.nr)
		return n < 0 ? n : -EIO;
	memcpy(v, buf + 3, g->m.nr * sizeof(uint64_t));
	*unsched = buf[1] - buf[2];
	return 0;
}

int td_generic_sample(struct td *td, struct td_sample *s)
{
	const struct td_gen *g = td->gen;
	uint64_t v[TD_GEN_MAX];
	uint64_t unsched;

	if (td->path != TD_PATH_RDPMC || !read_rdpmc(g, v, &unsched)) {
		int err = read_group(g, v, &unsched);

		if (err < 0)
			return err;
	}
	td_formula_counts(&g->m, v, &s->c);
	s->raw_slots = 0;    /* nothing to reset: never triggers a reset */
	s->raw_metrics = 0;
	s->unsched = unsched;
	s->valid = true;
	return 0;
}
