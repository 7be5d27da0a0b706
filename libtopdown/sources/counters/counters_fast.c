/* SPDX-License-Identifier: MIT */
/*
 * The fast path of sources that read a group of ordinary counters (the
 * x86 formula table, Arm level 1): a begin reads each counter once, by
 * RDPMC (MRS), checks its page's lock against the one the slow path last
 * saw, and keeps the value (offset + sign-extended count, the formula of
 * linux/perf_event.h's UAPI comment and libperf's perf_mmap__read_self)
 * in the region: no seqlock retry loop, no times, no formula.  An end
 * that returns nothing reads nothing; one with a result or a record reads
 * every counter the same way.  A result alone takes the formula once, on
 * the values' differences (end_result); anything else turns the two sets
 * of values into counts through the source's formula and delta, the slow
 * path's route (region_slow.c td_end_sampled).  Whatever a check refuses
 * goes to the slow path, which reads under the seqlock, guards, falls
 * back to read(2) and refreshes the view (td_gen_fast_refresh).
 */
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "begin_state.h"
#include "counter_group.h"
#include "decode.h"
#include "source.h"

/*
 * The guard (counters_read.c) in brief: a value must lie at or above
 * the last one the slow path accepted and less than TD_GEN_STEP_MAX above
 * it.  That catches a page naming a counter another context now owns
 * (its value jumps by the kernel's period, ~2^47, or goes backwards)
 * without a store per read; the slow path's full guard follows.
 */

/*
 * One counter's value, or false when the view no longer holds: the lock
 * checked after the read says that nothing rewrote the page since the
 * view was taken, so the value is this event's.
 */
static inline __attribute__((always_inline)) bool
fast_read(const struct td_fast_counter *c, uint64_t *v)
{
	uint64_t raw = td_read_counter(c->reader);
	uint64_t val;

	td_compiler_barrier();
	if (TD_UNLIKELY(td_load_once(c->pc->lock) != c->lock))
		return false;
	val = c->offset + (uint64_t)((int64_t)(raw << c->shift) >> c->shift);
	if (TD_UNLIKELY(val - c->last >= TD_GEN_STEP_MAX))
		return false;
	*v = val;
	return true;
}

/*
 * Every counter, in open order, into v[].  First the leader's lock, as
 * the seqlock reader checks index before reading: a schedule-out rewrites
 * every member's page (the group leaves together), and a view with any
 * stale counter keeps the leader's stale too (td_gen_fast_refresh), so
 * nothing is read while the view says the group is not counting here.
 */
/* Counter k's read, then on to counter k - 1 (fast_read_all's switch). */
#define TD_FAST_READ(k)                                                   \
	if (!fast_read(&f->c[k], &v[k]))                                  \
		return false;                                             \
	__attribute__((fallthrough))

static inline __attribute__((always_inline)) bool
fast_read_all(const struct td_gen *g, uint64_t *v)
{
	const struct td_gen_fast *f = &g->fast;

	_Static_assert(TD_GEN_MAX == 8, "one case per counter");
	if (TD_UNLIKELY(td_load_once(f->c[0].pc->lock) != f->c[0].lock))
		return false;
	/* unrolled, last counter first: no loop counter, fixed offsets */
	switch (g->nr) {
	case 8: TD_FAST_READ(7);
	case 7: TD_FAST_READ(6);
	case 6: TD_FAST_READ(5);
	case 5: TD_FAST_READ(4);
	case 4: TD_FAST_READ(3);
	case 3: TD_FAST_READ(2);
	case 2: TD_FAST_READ(1);
	case 1: return fast_read(&f->c[0], &v[0]);
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */
	}
}

#undef TD_FAST_READ

int td_gen_fast_begin(struct td *td, struct td_region_priv *p)
{
	/* the key: epoch | last_lock, which ordinary counters leave 0 */
	if (TD_UNLIKELY(p->key != td->epoch_hi) ||
	    !fast_read_all(td_gen_of(td)->gen, td_begin_values(p)))
		return td_slow_begin(td, p);
	p->owner = td;
	return 0;
}

/* The end's reading as the slow path would have sampled it. */
static void fast_sample(const struct td *td, const uint64_t *values,
			struct td_sample *s)
{
	const struct td_gen *g = td_gen_of(td)->gen;

	/* every field the general route reads: values past nr are not */
	memcpy(s->values, values, g->nr * sizeof(*values));
	td_gen_counts_of(g, values, &s->c); /* every count written */
	s->raw_slots = 0; /* as td_generic_sample: counts at once */
	s->raw = 0;
	s->raw_at_last = 0;
	s->qself = 0;
	s->aux = TD_AUX_NONE;
	s->valid = true;
	s->unsched = td->last_unsched; /* a page unchanged: not descheduled */
	s->qerr_base = td->snap.qerr_base;
}

/* The numbers of an end whose values fast_read_all put in f->end. */
static __attribute__((noinline)) int end_values(struct td *td,
						struct td_region_priv *p,
						struct td_result *res)
{
	struct td_sample s;

	fast_sample(td, td_gen_of(td)->gen->fast.end, &s);
	td_end_sampled(td, p, &s, res);
	return 0;
}

/*
 * A formula's counts, as a delta: the same integers, signed (what the
 * formula table's delta makes of b - a where a is zero: counters.c).
 */
union counts_delta {
	struct td_counts c;
	struct td_delta d;
};

static void counts_as_delta(const struct td_counts *c, struct td_delta *d)
{
	_Static_assert(offsetof(struct td_delta, slots) ==
			       offsetof(struct td_counts, slots) &&
		       offsetof(struct td_delta, cat) ==
			       offsetof(struct td_counts, cat) &&
		       sizeof(d->cat) == sizeof(c->cat),
		       "a delta begins as counts do");
	memcpy(d, c, sizeof(*c));
}

/*
 * td_delta_result for a delta without level 2 (flags: neither
 * TD_RESULT_L2 nor _L2_FE_BE): its decode (td_decode_src) is then
 * td_decode_inline, here inline as on PERF_METRICS' fast end, with the
 * same tests after it.
 */
static inline __attribute__((always_inline)) void
result_inline(const struct td *td, const struct td_region_priv *p,
	      const struct td_delta *d, unsigned flags, struct td_result *res)
{
	td_decode_inline(d, false, res);
	res->flags |= flags;
	res->resets = (td->snap.resets - p->snap.resets) & TD_SNAP_RESETS_MASK;
	if (td->path == TD_PATH_READ)
		res->flags |= TD_RESULT_READ_PATH;
	if (td->snap.untrusted != p->snap.untrusted ||
	    !td->src->consistent(td, d) || (flags & TD_RESULT_UNRELIABLE))
		td_record_mark_unreliable(res);
}

/*
 * An end with a result and nothing else to do (no record, no policy
 * tracking open regions), counters all forward since a begin that read:
 * the formula applied once, to the values' differences.  Every formula
 * whose fast.linear holds is made of sums and products by constants in
 * 64-bit unsigned arithmetic (formulas.c; Arm's counts copy the events:
 * arm_formulas.c), so that the counts of end - begin are, bit for bit,
 * the counts of end less those of begin, the general route's delta
 * (td_end_sampled), and the region's length their slots.  The formula's
 * delta from zero counts is its delta of the two readings for the same
 * reason.  Anything else takes the general route.
 */
static __attribute__((noinline)) int end_result(struct td *td,
						struct td_region_priv *p,
						struct td_result *res)
{
	static const struct td_counts zero;
	const struct td_gen *g = td_gen_of(td)->gen;
	const uint64_t *begin = td_begin_values(p);
	uint64_t v[TD_GEN_MAX] = { 0 };
	uint64_t back = 0; /* its sign: some counter went back */
	union counts_delta u;
	struct td_delta d;
	unsigned flags;

	/* the differences where td_gen_model_values puts values */
	for (unsigned k = 0; k < g->nr; k++) {
		uint64_t dk = g->fast.end[k] - begin[k];

		back |= dk;
		v[g->ev[k]] = dk;
	}
	if (TD_UNLIKELY((int64_t)back < 0 || !g->fast.linear ||
			td->policy.track || (p->snap.resets & TD_BEGIN_UNREAD)))
		return end_values(td, p, res);
	if (g->derived)
		td_formula_derive(&g->m, g->derived, v);
	td_formula_counts(&g->m, v, &u.c); /* x86: the delta itself */
	td_learn_length(td, p, u.c.slots - p->slots);
	p->owner = NULL;
	if (!g->m.family) { /* the formula table's delta adds no flag */
		u.d.qerr = td->snap.qerr_base - p->snap.qerr_base + p->slots;
		result_inline(td, p, &u.d, 0, res);
		return 0;
	}
	flags = td->src->delta(td, &zero, 0, 0, &u.c, &d);
	d.qerr = td->snap.qerr_base - p->snap.qerr_base + p->slots;
	if (TD_UNLIKELY(flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE)))
		td_delta_result(td, p, td->snap.untrusted == p->snap.untrusted,
				&d, flags, res);
	else
		result_inline(td, p, &d, flags, res);
	return 0;
}

/*
 * Records attached, no result, counters all forward since a begin that
 * read: the record keeps the values' differences and decodes nothing
 * (td_gen_finish_record does, when the records are detached or decoded,
 * as end_result does); the region's length is learnt from the slots
 * each event adds (linear: fast.slots_per), as on the general route.
 * A full buffer counts the record dropped.
 */
static __attribute__((noinline)) int end_to_record(struct td *td,
						   struct td_region_priv *p)
{
	const struct td_gen *g = td_gen_of(td)->gen;
	const uint64_t *begin = td_begin_values(p);
	struct td_sink *k = &td->sink;
	uint64_t dv[TD_GEN_MAX] = { 0 }, slots = 0, back = 0;
	struct td_record *rec;

	_Static_assert(sizeof(dv) <= sizeof(rec->cat), "a record holds them");
	for (unsigned i = 0; i < g->nr; i++) {
		dv[i] = g->fast.end[i] - begin[i];
		back |= dv[i]; /* its sign: some counter went back */
		slots += g->fast.slots_per[i] * dv[i];
	}
	if (TD_UNLIKELY((int64_t)back < 0 || !g->fast.linear || td->policy.track ||
			(p->snap.resets & TD_BEGIN_UNREAD)))
		return end_values(td, p, NULL);
	td_learn_length(td, p, slots - p->slots);
	p->owner = NULL;
	rec = k->next;
	if (TD_UNLIKELY(rec == k->end)) {
		k->dropped++;
		return 0;
	}
	k->next = rec + 1;
	memcpy(rec->cat, dv, sizeof(dv)); /* a fixed size: a few moves */
	rec->qerr = td->snap.qerr_base - p->snap.qerr_base + p->slots;
	rec->flags = TD_RECORD_READINGS | TD_RECORD_VALUES |
		     (td->snap.untrusted == p->snap.untrusted
			      ? 0
			      : TD_RESULT_UNRELIABLE);
	rec->resets = (td->snap.resets - p->snap.resets) & TD_SNAP_RESETS_MASK;
	rec->reserved[0] = (uintptr_t)td;
	return 0;
}

/*
 * A record end_to_record wrote, as the general route writes it
 * (region_slow.c emit_record): the counts of the differences, the
 * source's delta from zero counts (end_result's), the region's
 * reliability as its end saw it.
 */
void td_gen_finish_record(const struct td *td, struct td_record *rec)
{
	static const struct td_counts zero;
	const struct td_gen *g = td_gen_of(td)->gen;
	uint64_t dv[TD_GEN_MAX];
	struct td_counts c;
	struct td_delta d;
	unsigned flags = 0;

	memcpy(dv, rec->cat, sizeof(dv));
	td_gen_counts_of(g, dv, &c);
	if (g->m.family)
		flags = td->src->delta(td, &zero, 0, 0, &c, &d);
	else
		counts_as_delta(&c, &d);
	d.qerr = rec->qerr;
	if (td->path == TD_PATH_READ)
		flags |= TD_RESULT_READ_PATH;
	if ((rec->flags & TD_RESULT_UNRELIABLE) || !td->src->consistent(td, &d))
		flags |= TD_RESULT_UNRELIABLE;
	rec->slots = d.slots > 0 ? (uint64_t)d.slots : 0;
	memcpy(rec->cat, d.cat, sizeof(rec->cat));
	rec->qerr = d.qerr;
	rec->flags = flags;
	rec->name = NULL;
	memset(rec->reserved, 0, sizeof(rec->reserved));
}

/*
 * The reads come first, into the handle's f->end (this thread's alone):
 * no stack frame is built before them, so that the region is charged
 * for as few of the library's instructions as may be.
 */
int td_gen_fast_end(struct td *td, struct td_region_priv *p,
		    struct td_result *res)
{
	struct td_gen *g;

	/* records attached or a named region ending: end_key says so */
	if (!res && !(td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED))) {
		p->owner = NULL; /* nothing to return: nothing to read */
		return 0;
	}
	g = td_gen_of(td)->gen;
	if (!fast_read_all(g, g->fast.end))
		return td_slow_end_read(td, p, res);
	if (res && !(td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED)))
		return end_result(td, p, res); /* a result alone */
	if (!res && !(td->end_key & TD_END_KEY_NAMED))
		return end_to_record(td, p); /* a record alone */
	return end_values(td, p, res);
}

/*
 * The begin's counts; its values must not exceed the end's (each counter
 * forward), else a foreign value slipped into the begin and the region
 * is flagged.  No upper bound: the begin's read already lay within the
 * guard's step of an accepted value, and a region may count for longer
 * than that step (2^44 of Zen's per-slot events or Arm's STALL_SLOT is a
 * few minutes); the slow path's regions have no such limit either.
 */
bool td_gen_begin_counts(const struct td *td, const uint64_t *values,
			 const struct td_sample *end, struct td_counts *c)
{
	const struct td_gen *g = td_gen_of(td)->gen;
	bool ok = true;

	for (unsigned k = 0; k < g->nr; k++)
		ok = ok && (int64_t)(end->values[k] - values[k]) >= 0;
	td_gen_counts_of(g, values, c);
	return ok;
}

/*
 * The view of every page after a reading the slow path accepted (open:
 * its values, open order).  A page not offering RDPMC now (index 0: not
 * counting on this CPU) makes its counter stale until the next refresh.
 */
void td_gen_fast_refresh(struct td_gen *g, const uint64_t *open)
{
	struct td_gen_fast *f = &g->fast;
	bool stale = false;

	for (unsigned k = 0; k < g->nr; k++) {
		struct td_fast_counter *c = &f->c[k];
		const struct perf_event_mmap_page *pc = c->pc;
		uint32_t seq, idx, width;

		do {
			seq = td_load_once(pc->lock);
			td_compiler_barrier();
			idx = td_load_once(pc->index);
			width = td_load_once(pc->pmc_width);
			c->offset = (uint64_t)td_load_once(pc->offset);
			td_compiler_barrier();
		} while (td_load_once(pc->lock) != seq);
		if (!pc->cap_user_rdpmc || !idx || !width || width > 64 ||
		    !td_reader_exists(idx - 1)) {
			c->lock = TD_FAST_STALE;
			stale = true;
			continue;
		}
		c->lock = seq;
		c->reader = td_reader_of(idx - 1);
		c->shift = 64 - width;
		c->last = open[k];
	}
	if (stale)
		f->c[0].lock = TD_FAST_STALE;
}

/*
 * Called by the source's open: the fast path serves a group read by
 * RDPMC (MRS) with nothing beside it (no multiplexed or second level-2
 * group, whose readings need their times), every counter then read here.
 */
void td_gen_fast_setup(struct td *td)
{
	struct td_gen *g = td_gen_of(td)->gen;

	td->src_fast = td->path == TD_PATH_RDPMC && TD_HAVE_USER_READ &&
		       !g->mux[0] && !g->l2 && g->nr <= TD_NR_VALUES;
	/* every formula is linear but V4.5's SMT form, which halves */
	g->fast.linear = !(g->m.formula == TD_F_V45 && g->m.any);
	for (unsigned k = 0; k < g->nr; k++) {
		uint64_t one[TD_GEN_MAX] = { 0 };
		struct td_counts c;

		g->fast.c[k].pc = g->pc[k];
		g->fast.c[k].lock = TD_FAST_STALE; /* until a reading */
		g->fast.c[k].reader = td_reader_of(0); /* every PMU has it */
		one[k] = 1; /* a linear formula's slots: the sum of these */
		td_gen_counts_of(g, one, &c);
		g->fast.slots_per[k] = c.slots;
	}
}

