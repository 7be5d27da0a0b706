/* SPDX-License-Identifier: MIT */
/*
 * The x86 ordinary-counter source (where the PMU has no PERF_METRICS):
 * a perf_event group of the ordinary events the formula table gives this
 * CPU (cpumodel.c, formulas.c), read by counters_read.c.  Counts are
 * cumulative since the group's first enable, so region deltas are plain
 * differences: no folding, no resets, no 8-bit quantisation (qerr stays
 * 0).  Zen's level 2 multiplexes two more groups (TD_OPT_L2_MULTIPLEX).
 * begin/end read it on counters_fast.c's fast path.  The group
 * code here serves the Arm source and the hybrid E-cores too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "x86_formulas.h"
#include "begin_state.h"
#include "source.h"
#include "sources.h"

int td_generic_open(struct td *td, const struct td_open_req *req,
		    td_model_fn model)
{
	struct td_gen *g = td_gen_new();
	bool include_kernel = req->include_kernel;
	bool want_rdpmc = req->want_rdpmc;
	int err;

	if (!g)
		return -ENOMEM;
	td_gen_of(td)->gen = g;
	err = model(td, req, &g->m);
	if (err < 0)
		return err;
	td->page_size = (size_t)sysconf(_SC_PAGESIZE);
	err = td_gen_open_v45_smt(td, g, include_kernel);
	if (err == 1)
		err = td_gen_group_open(td, g, td->pmu.type, include_kernel,
					true);
	if (err < 0)
		return err;
	td->leader_fd = g->fd[0];
	td->path = want_rdpmc && td_gen_rdpmc_offered(td, g) ? TD_PATH_RDPMC
						      : TD_PATH_READ;
	return 0;
}

void td_generic_close(struct td *td)
{
	struct td_gen *g = td_gen_of(td)->gen;

	if (!g)
		return;
	td_gen_free(td, g);
	td_gen_of(td)->gen = NULL;
	td->leader_fd = -1;
}

/*
 * Where TD_OPT_L2_MULTIPLEX keeps the level-2 values of a reading in
 * struct td_counts: the entries level 1 leaves free (not TD_M_SMT, nor
 * TD_MUX_RUN1/ENA1).  Zen's eight (TD_ZEN2_*) leave the last to group
 * B's time running (TD_MUX_RUNB); Skylake's nine (TD_V45L2_*) need no
 * group's time, each group counting its own clocks or a ratio.  A model
 * with more (Sandy Bridge's to Broadwell's 16, TD_SNBL2_*) keeps the
 * rest in the reading's further words (struct td_sample more,
 * mux_nr_more).
 */
static const uint8_t td_mux_at[TD_L2_IN_COUNTS] = { 4, 5, 6, 7, 9, 10, 11,
						    12, TD_MUX_RUNB };

/* The level-2 values of a model's readings past td_mux_at's. */
static unsigned mux_nr_more(const struct td_gen_model *m)
{
	return m->formula == TD_F_V45 && m->l2_snb
		       ? TD_SNBL2_NR - TD_L2_IN_COUNTS
		       : 0;
}
_Static_assert(TD_SNBL2_NR - TD_L2_IN_COUNTS <= TD_NR_MORE,
	       "struct td_sample more");
_Static_assert(TD_M_SMT == 8 && TD_MUX_RUN1 == 13 && TD_MUX_ENA1 == 14,
	       "td_mux_at: the free entries of struct td_counts");

/*
 * A multiplexed region: level 1 from the part of it the level-1 group
 * counted, its slots scaled by that group's time enabled / running (the
 * scaling perf stat does); level 2 from the parts the level-2 groups
 * counted (each formula's ratios), only if every group counted in it.
 */
/*
 * Level 2 needs each level-2 group to have counted a part of the region
 * worth a TopDown breakdown (TD_SHORT_SLOTS).  Zen: A by its own
 * cycles, B by its time running at level 1's slots per unit of time.
 * Skylake: groups 1 and 2 by their clocks, group 3 (two event counts, a
 * ratio) by having counted either: with neither, perf's ratio has no
 * value either; Sandy Bridge to Broadwell alike, groups 1 to 3 by their
 * clocks.  Atom: its group's clocks.
 */
static bool mux_l2_counted(const struct td_gen_model *m, const uint64_t *w,
			   uint64_t slots, uint64_t run, uint64_t runb)
{
	double b_slots = (double)slots * (double)runb / (double)run;

	switch (m->formula) {
	case TD_F_ZEN:
		return m->width * w[TD_ZEN2_CYC] >= TD_SHORT_SLOTS &&
		       b_slots >= TD_SHORT_SLOTS;
	case TD_F_V45:
		if (m->l2_snb)
			return m->width * w[TD_SNBL2_CLK1] >= TD_SHORT_SLOTS &&
			       m->width * w[TD_SNBL2_CLK2] >= TD_SHORT_SLOTS &&
			       m->width * w[TD_SNBL2_CLK3] >= TD_SHORT_SLOTS &&
			       w[TD_SNBL2_MISP] + w[TD_SNBL2_MC] > 0;
		return m->width * w[TD_V45L2_CLK1] >= TD_SHORT_SLOTS &&
		       m->width * w[TD_V45L2_CLK2] >= TD_SHORT_SLOTS &&
		       w[TD_V45L2_MISP] + w[TD_V45L2_MC] > 0;
	case TD_F_ATOM_V2:
		return m->width * w[TD_A2_CLK] >= TD_SHORT_SLOTS;
	default:
		return false;
	}
}

/* Level 2 of a multiplexed delta: its result flags. */
static unsigned mux_l2(const struct td_gen_model *m, const uint64_t *w,
		       struct td_delta *d)
{
	if (m->formula == TD_F_ZEN)
		td_formula_zen_l2(w, d->cat);
	else if (m->formula == TD_F_V45 && m->l2_snb)
		td_formula_snb_l2(m->width, m->any, m->l2_min_clk,
				  m->l2_exe_core, w, d->slots, d->cat);
	else if (m->formula == TD_F_V45)
		td_formula_v45_l2(m->width, m->any, w, d->slots, d->cat);
	else
		return td_formula_atom_l2(m->width, m->l2_fe_be, w, d->slots,
					  d->cat);
	return TD_RESULT_L2;
}

/*
 * Named totals sum the level-2 values of every call, and need the
 * formula they are for without the handle: a tag of the model's
 * formula (+1, so that 0 is none), width, SMT form, frontend/backend
 * only level 2, Sandy Bridge's to Broadwell's level 2 and its form, and
 * the model it stands for.
 */
static uint64_t mux_model_tag(const struct td_gen_model *m)
{
	return (uint64_t)(m->formula + 1) | (uint64_t)m->width << 8 |
	       (uint64_t)m->any << 16 | (uint64_t)m->l2_fe_be << 17 |
	       (uint64_t)m->l2_snb << 18 | (uint64_t)m->l2_min_clk << 19 |
	       (uint64_t)m->l2_exe_core << 20;
}

static bool mux_model_of(uint64_t tag, struct td_gen_model *m)
{
	memset(m, 0, sizeof(*m));
	if (!(tag & 0xff))
		return false;
	m->formula = (enum td_formula)((tag & 0xff) - 1);
	m->width = (unsigned)(tag >> 8 & 0xff);
	m->any = tag >> 16 & 1;
	m->l2_fe_be = tag >> 17 & 1;
	m->l2_snb = tag >> 18 & 1;
	m->l2_min_clk = tag >> 19 & 1;
	m->l2_exe_core = tag >> 20 & 1;
	return true;
}

/*
 * Out of line: the plain delta (counters_delta) is the end-with-result
 * path of every ordinary-counter region, and the multiplexed one, if
 * inlined there, changes its code.
 */
static __attribute__((noinline)) unsigned
mux_delta(const struct td_gen *g, const struct td_counts *a,
	  const struct td_counts *b, struct td_delta *d)
{
	static const uint8_t l1[] = { TD_M_RETIRING, TD_M_BAD_SPEC,
				      TD_M_FE_BOUND, TD_M_BE_BOUND, TD_M_SMT };
	bool zen = g->m.formula == TD_F_ZEN;
	uint64_t run = b->cat[TD_MUX_RUN1] - a->cat[TD_MUX_RUN1];
	uint64_t ena = b->cat[TD_MUX_ENA1] - a->cat[TD_MUX_ENA1];
	uint64_t counted = b->slots - a->slots, runb = 0;
	uint64_t w[TD_L2_VALUES] = { 0 };
	unsigned flags = TD_RESULT_MULTIPLEXED;
	double scale;

	for (int e = 0; e < TD_L2_IN_COUNTS; e++)
		w[e] = b->cat[td_mux_at[e]] - a->cat[td_mux_at[e]];
	/* the rest: the readings' further words (begin_state.h) */
	for (unsigned e = 0; e < mux_nr_more(&g->m); e++)
		w[TD_L2_IN_COUNTS + e] = td_sample_more(b)[e] -
					 td_begin_more(a)[e];
	memset(d, 0, sizeof(*d));
	/* named totals' raw terms: the level-2 values (counters_fold_named) */
	memcpy(d->l2raw, w, TD_L2_VALUES * sizeof(w[0]));
	if (zen) {
		runb = w[TD_ZEN2_NR];
		d->l2raw[TD_MUXRAW_RUNB] = runb;
	}
	d->l2raw[TD_MUXRAW_SLOTS] = counted;
	d->l2raw[TD_MUXRAW_RUN] = run;
	d->l2raw[TD_MUXRAW_ENA] = ena;
	d->l2raw[TD_MUXRAW_MODEL] = mux_model_tag(&g->m);
	if (run == 0) /* level 1 did not count at all in the region */
		return flags | TD_RESULT_UNRELIABLE;
	/* a breakdown of a short counted part is no better when scaled */
	if (counted < TD_SHORT_SLOTS)
		flags |= TD_RESULT_SHORT;
	scale = (double)ena / (double)run;
	d->slots = (int64_t)((double)counted * scale);
	for (unsigned i = 0; i < sizeof(l1); i++)
		d->cat[l1[i]] = (int64_t)((double)(int64_t)(b->cat[l1[i]] -
							    a->cat[l1[i]]) *
					  scale);
	if (!mux_l2_counted(&g->m, w, counted, run, runb))
		return flags;
	return flags | mux_l2(&g->m, w, d);
}

/*
 * The formula table's counts are linear: b - a, or multiplexed.  Its
 * readings are counts at once (raw_slots and raw 0: nothing to add).
 */
static unsigned counters_delta(const struct td *td, const struct td_counts *a,
			       uint64_t raw_slots, uint64_t raw,
			       const struct td_counts *b, struct td_delta *d)
{
	(void)raw_slots, (void)raw;
	if (td_gen_of(td)->gen->mux[0])
		return mux_delta(td_gen_of(td)->gen, a, b, d);
	d->slots = (int64_t)(b->slots - a->slots);
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		d->cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
	return 0;
}

/*
 * Sandy Bridge's to Broadwell's (TD_SNBL2_*): the events as they are but
 * the execution cycles' differences and the IPC test's 5 x instructions
 * - 9 x the thread's clocks (x86_formulas.h).
 */
static void mux_values_snb(const uint64_t *r, uint64_t *v)
{
	v[TD_SNBL2_CLK1] = r[TD_SNB2_CLK1];
	v[TD_SNBL2_CYC0] = r[TD_SNB2_CYC0];
	v[TD_SNBL2_MS] = r[TD_SNB2_MS];
	v[TD_SNBL2_RET] = r[TD_SNB2_RET];
	v[TD_SNBL2_ISSUED] = r[TD_SNB2_ISSUED];
	v[TD_SNBL2_CLK2] = r[TD_SNB2_CLK2];
	v[TD_SNBL2_MEM] = r[TD_SNB2_MEM];
	v[TD_SNBL2_STALLS] = r[TD_SNB2_STALLS];
	v[TD_SNBL2_SB] = r[TD_SNB2_SB];
	v[TD_SNBL2_RS_EMPTY] = r[TD_SNB2_RS_EMPTY];
	v[TD_SNBL2_CLK3] = r[TD_SNB2_CLK3];
	v[TD_SNBL2_IPC18] = 5 * r[TD_SNB2_INST] - 9 * r[TD_SNB2_THREAD];
	v[TD_SNBL2_EXE_1_2] = r[TD_SNB2_EXE1] - r[TD_SNB2_EXE2];
	v[TD_SNBL2_EXE_1_3] = r[TD_SNB2_EXE1] - r[TD_SNB2_EXE3];
	v[TD_SNBL2_MISP] = r[TD_SNB2_MISP];
	v[TD_SNBL2_MC] = r[TD_SNB2_MC];
}

/*
 * A reading's level-2 values from the groups' counts r[] (config2
 * order): Zen's as they are; Skylake's as the sums its formula takes
 * (TD_V45L2_*); Sandy Bridge's to Broadwell's as mux_values_snb;
 * Atom's as they are.
 */
static void mux_values(const struct td_gen_model *m, const uint64_t *r,
		       uint64_t *v)
{
	memset(v, 0, TD_L2_VALUES * sizeof(*v));
	if (m->formula == TD_F_V45 && m->l2_snb) {
		mux_values_snb(r, v);
		return;
	}
	if (m->formula != TD_F_V45) {
		memcpy(v, r, m->nr2 * sizeof(*v));
		return;
	}
	v[TD_V45L2_CLK1] = r[TD_V452_CLK1];
	v[TD_V45L2_HEAVY] = r[TD_V452_RET] + r[TD_V452_MF] - r[TD_V452_INST];
	v[TD_V45L2_CYC0] = r[TD_V452_CYC0];
	v[TD_V45L2_P2] = r[TD_V452_P2];
	v[TD_V45L2_CLK2] = r[TD_V452_CLK2];
	v[TD_V45L2_MEM_NUM] = r[TD_V452_SMA] + r[TD_V452_BOS];
	v[TD_V45L2_MEM_DEN] = r[TD_V452_ST] + r[TD_V452_P1] + r[TD_V452_BOS];
	v[TD_V45L2_MISP] = r[TD_V452_MISP];
	v[TD_V45L2_MC] = r[TD_V452_MC];
}

/* The level-2 groups' counts and the times mux_delta needs. */
static int mux_sample(const struct td_gen *g, const uint64_t *t1,
		      struct td_sample *s)
{
	struct td_counts *c = &s->c;
	uint64_t r[TD_GEN_L2_MAX], v[TD_L2_VALUES];
	unsigned at = 0;

	for (int k = 0; k < TD_GEN_L2_GROUPS && g->mux[k]; k++) {
		uint64_t t[2];
		int err = td_gen_read_group(g->mux[k], r + at, t);

		if (err < 0)
			return err;
		at += g->mux[k]->nr;
		if (g->m.formula == TD_F_ZEN && k == 1)
			c->cat[TD_MUX_RUNB] = t[1];
	}
	mux_values(&g->m, r, v);
	for (int i = 0; i < TD_L2_IN_COUNTS; i++)
		if (i < TD_ZEN2_NR || g->m.formula != TD_F_ZEN)
			c->cat[td_mux_at[i]] = v[i];
	memcpy(s->more, v + TD_L2_IN_COUNTS,
	       mux_nr_more(&g->m) * sizeof(v[0]));
	c->cat[TD_MUX_RUN1] = t1[1];
	c->cat[TD_MUX_ENA1] = t1[0];
	return 0;
}

int td_generic_sample(struct td *td, struct td_sample *s)
{
	struct td_gen *g = td_gen_of(td)->gen;
	uint64_t v[TD_GEN_MAX];
	uint64_t t[2];
	int err;

	if (td->src_fast) /* the fast path's readings: the guard's base */
		td_gen_fast_last(g);
	err = td_gen_values(g, td->path == TD_PATH_RDPMC, v, t);
	if (err < 0)
		return err;
	if (err & TD_GEN_SUSPECT)
		td->untrusted++; /* regions spanning the bad reading */
	td_formula_counts(&g->m, v, &s->c);
	if (td->src_fast) { /* what the fast path's regions keep: open order */
		for (unsigned k = 0; k < g->nr; k++)
			s->values[k] = v[g->ev[k]];
		td_gen_fast_refresh(g, s->values);
	}
	s->raw_slots = 0;    /* nothing to reset: never triggers a reset */
	s->raw = 0;
	s->unsched = t[0] - t[1];
	if (g->mux[0]) {
		err = mux_sample(g, t, s);
		if (err < 0)
			return err;
		s->unsched = 0; /* multiplexing is expected: scaled, flagged */
	}
	s->valid = true;
	return 0;
}

/* Ordinary counters are exact: a small negative category is skew. */
bool td_generic_consistent(const struct td *td, const struct td_delta *d)
{
	(void)td, (void)d;
	return true;
}

void td_generic_info(const struct td *td, struct td_info *i)
{
	const struct td_gen *g = td_gen_of(td)->gen;

	if (g->derived)
		i->flags |= TD_INFO_DERIVED;
	snprintf(i->uarch, sizeof(i->uarch), "%s", g->m.name);
}

static void counters_info(const struct td *td, struct td_info *i)
{
	const struct td_gen *g = td_gen_of(td)->gen;

	td_generic_info(td, i);
	i->levels = g->mux[0] ? 2 : 1;
	if (g->smt_per_thread)
		i->flags |= TD_INFO_SMT_PER_THREAD;
	if (g->m.nr2) /* level 2 defined, its events beside level 1's */
		i->flags |= g->mux[0] ? TD_INFO_MULTIPLEXED
				      : TD_INFO_L2_NEEDS_MULTIPLEX;
}

static int cpu_model(const struct td *td, const struct td_open_req *req,
		     struct td_gen_model *m)
{
	(void)req;
	return td_cpu_model(td->pmu.name, m);
}

/*
 * TD_OPT_L2_MULTIPLEX where level 2 does not fit beside level 1 (Zen):
 * its groups open beside level 1's and the kernel rotates them; three
 * groups' times are read with read(2).
 */
static int counters_open(struct td *td, const struct td_open_req *req)
{
	int err = td_generic_open(td, req, cpu_model);

	if (err == 0 && req->l2_multiplex && td_gen_of(td)->gen->m.nr2) {
		err = td_gen_open_l2_mux(td, req->include_kernel);
		td->path = TD_PATH_READ;
		td->nr_more = mux_nr_more(&td_gen_of(td)->gen->m);
	}
	if (err == 0)
		td_gen_fast_setup(td);
	return err;
}

/*
 * Named totals of multiplexed level 2 (TD_OPT_L2_MULTIPLEX): every call
 * sees the level-2 groups for part of its time, if at all.  raw holds
 * the sums over every call of what mux_delta kept (struct td_delta
 * l2raw).  Slots: every call's counted slots scaled by level 1's time
 * enabled / running summed over every call, the reliable calls'
 * categories scaled alike.  Level 2: the level-2 values summed over
 * every call give the model's ratios (Zen's PipelineL2, Skylake's and
 * the Atom cores' TopdownL2: mux_l2) over all the time they counted,
 * applied to the total level 1 (the estimate perf stat makes with
 * multiplexed counts; it assumes the mix did not follow the rotation);
 * none when a group never counted (Zen) or counted too little for a
 * region's level 2 (mux_l2_counted).  The result is flagged
 * multiplexed by named.c.
 */
static unsigned counters_fold_named(const uint64_t *raw, struct td_delta *d)
{
	struct td_gen_model m;
	double total, f;

	memset(d->cat + TD_NR_L1, 0, TD_NR_L1 * sizeof(d->cat[0]));
	if (raw[TD_MUXRAW_RUN] && d->slots > 0) {
		total = (double)raw[TD_MUXRAW_SLOTS] *
			(double)raw[TD_MUXRAW_ENA] / (double)raw[TD_MUXRAW_RUN];
		f = total / (double)d->slots;
		d->slots = (int64_t)total;
		for (int i = 0; i < TD_NR_CATS; i++)
			d->cat[i] = (int64_t)((double)d->cat[i] * f);
	}
	if (!mux_model_of(raw[TD_MUXRAW_MODEL], &m))
		return 0;
	if (m.formula == TD_F_ZEN) {
		if (!raw[TD_ZEN2_CYC] || !raw[TD_MUXRAW_RUNB])
			return 0;
	} else if (!raw[TD_MUXRAW_RUN] ||
		   !mux_l2_counted(&m, raw, raw[TD_MUXRAW_SLOTS],
				   raw[TD_MUXRAW_RUN], 0)) {
		return 0;
	}
	return mux_l2(&m, raw, d);
}

const struct td_source_ops td_source_counters = {
	.name = "counters",
	.handle_size = sizeof(struct td_gen_handle),
	.open = counters_open,
	.close = td_generic_close,
	.sample = td_generic_sample,
	.delta = counters_delta,
	.consistent = td_generic_consistent,
	.info = counters_info,
	.fold_named = counters_fold_named,
	.named_counted_word = TD_MUXRAW_RUN, /* level 1's time running */
	.fast_begin = td_gen_fast_begin,
	.fast_end = td_gen_fast_end,
	.fast_end_first = td_gen_fast_end_first,
	.begin_counts = td_gen_begin_counts,
};
