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
 * td_take_sample: td->fast stays false for this source.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "barrier.h"
#include "generic.h"

#define TD_CAP_USER_RDPMC (UINT64_C(1) << 2)

int td_generic_open(struct td *td, bool include_kernel, bool want_rdpmc)
{
	struct td_gen *g = td_gen_new();
	int err;

	if (!g)
		return -ENOMEM;
	td->gen = g;
	err = td->pmu.arm ? td_arm_model(&td->pmu, &g->m)
			  : td_cpu_model(td->pmu.name, &g->m);
	if (err < 0)
		return err;
	td->page_size = (size_t)sysconf(_SC_PAGESIZE);
	td->pmu.nr_metrics = TD_NR_L1;
	err = td_gen_open_v45_smt(td, g, include_kernel);
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
	td_arm_l2_open(td, g, include_kernel);
	g->m.arm.l2 = g->l2 != NULL;
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

unsigned td_generic_delta(const struct td *td, const struct td_counts *a,
			  const struct td_counts *b, struct td_delta *d)
{
	if (td->gen && (td->gen->m.formula == TD_F_ARM ||
			td->gen->m.formula == TD_F_ARM_CYCLES))
		return td_arm_delta(&td->gen->m, a, b, d);
	d->slots = (int64_t)(b->slots - a->slots);
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		d->cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
	return 0;
}

/*
 * One event by RDPMC (MRS on arm64) under its page's seqlock; false when
 * its index is 0 (not counting on this CPU now) or RDPMC is not offered.
 */
static inline bool read_one(const struct perf_event_mmap_page *pc,
			    uint64_t *v, uint64_t *times)
{
	uint32_t seq, idx;

	do {
		seq = td_load_once(pc->lock);
		td_compiler_barrier();
		idx = td_load_once(pc->index);
		if (!(td_load_once(pc->capabilities) & TD_CAP_USER_RDPMC) ||
		    !idx)
			return false;
		times[0] = td_load_once(pc->time_enabled);
		times[1] = td_load_once(pc->time_running);
		*v = td_gen_value(td_load_once(pc->offset), td_rdpmc(idx - 1),
				  td_load_once(pc->pmc_width));
		td_compiler_barrier();
	} while (td_load_once(pc->lock) != seq);
	return true;
}

static bool read_rdpmc(const struct td_gen *g, uint64_t *v, uint64_t *times)
{
	uint64_t t[2];

	if (!read_one(g->pc[0], &v[0], times))
		return false;
	for (unsigned k = 1; k < g->nr; k++)
		if (!read_one(g->pc[k], &v[k], t))
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
		int err = td_gen_read_group(g, open, times);

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
	struct td_gen *g = td->gen;
	uint64_t v[TD_GEN_MAX];
	uint64_t t[2];
	int err = td_gen_values(g, td->path == TD_PATH_RDPMC, v, t);

	if (err < 0)
		return err;
	td_formula_counts(&g->m, v, &s->c);
	td_arm_l2_sample(g, td->path == TD_PATH_RDPMC, &s->c);
	s->raw_slots = 0;    /* nothing to reset: never triggers a reset */
	s->raw_metrics = 0;
	s->unsched = t[0] - t[1];
	s->valid = true;
	return 0;
}
