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
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
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
 * x86's counters are 48 bits wide on every model this path serves (the
 * pages' pmc_width: the Intel SDM's IA32_PMCx and AMD's PERF_CTRx), a
 * width RDPMC's two halves sign-extend with constant shifts.
 */
#if defined(__x86_64__)
#define TD_FAST_W48 1
#else
#define TD_FAST_W48 0
#endif

/*
 * A counter's raw value sign-extended from its width (the UAPI
 * comment's pmc <<= 64 - width; pmc >>= 64 - width).  w48, a constant of
 * each copy of the caller: every counter 48 bits wide (f->w48), whose
 * halves need no variable shift: bits 32-47 sign-extended from the high
 * half, or'ed with the low one.
 */
static inline __attribute__((always_inline)) int64_t
fast_read_raw(const struct td_fast_counter *c, bool w48)
{
	uint64_t raw, lo, hi;

	if (TD_FAST_W48 && w48) {
		td_rdpmc_halves((uint32_t)c->reader, &lo, &hi);
		/* lo < 2^32: RDPMC clears bits 32-63 of RAX (arch_x86.h) */
		return (int64_t)(hi << 48) >> 16 | (int64_t)lo;
	}
	raw = td_read_counter(c->reader);
	return (int64_t)(raw << c->shift) >> c->shift;
}

/*
 * One counter's value, or false when the view no longer holds: the lock
 * checked after the read says that nothing rewrote the page since the
 * view was taken, so the value is this event's.
 */
static inline __attribute__((always_inline)) bool
fast_read(const struct td_fast_counter *c, uint64_t *v, bool w48)
{
	int64_t raw = fast_read_raw(c, w48);
	uint64_t val;

	td_compiler_barrier();
	if (TD_UNLIKELY(td_load_once(c->pc->lock) != c->lock))
		return false;
	val = c->offset + (uint64_t)raw;
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
#define TD_FAST_READ(k, w48)                                              \
	if (!fast_read(&f->c[k], &v[k], w48))                             \
		return false;                                             \
	__attribute__((fallthrough))

/* Every counter's read, in the copy for w48, its cases base + nr. */
#define TD_FAST_READS(base, w48)                                          \
	case (base) + 8: TD_FAST_READ(7, w48);                            \
	case (base) + 7: TD_FAST_READ(6, w48);                            \
	case (base) + 6: TD_FAST_READ(5, w48);                            \
	case (base) + 5: TD_FAST_READ(4, w48);                            \
	case (base) + 4: TD_FAST_READ(3, w48);                            \
	case (base) + 3: TD_FAST_READ(2, w48);                            \
	case (base) + 2: TD_FAST_READ(1, w48);                            \
	case (base) + 1: return fast_read(&f->c[0], &v[0], w48)

/*
 * x86: f->sel picks the copy for the counters' widths with the count,
 * in one switch: nr, plus TD_FAST_ANY_WIDTH unless every counter is 48
 * bits wide (td_gen_fast_refresh).  Elsewhere one copy, by nr.
 */
static inline __attribute__((always_inline)) bool
fast_read_all(const struct td_gen *g, uint64_t *v)
{
	const struct td_gen_fast *f = &g->fast;

	_Static_assert(TD_GEN_MAX == 8, "one case per counter");
	if (TD_UNLIKELY(td_load_once(f->c[0].pc->lock) != f->c[0].lock))
		return false;
	/* unrolled, last counter first: no loop counter, fixed offsets */
#if TD_FAST_W48
	switch (f->sel) {
	TD_FAST_READS(0, true);
	TD_FAST_READS(TD_FAST_ANY_WIDTH, false);
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */
	}
#else
	switch (g->nr) {
	TD_FAST_READS(0, false);
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */
	}
#endif
}

#undef TD_FAST_READS
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
	s->aux2 = TD_AUX_NONE;
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
	/* the source's consistent is td_generic_consistent: td_gen_fast_setup */
	if (td->snap.untrusted != p->snap.untrusted ||
	    (flags & TD_RESULT_UNRELIABLE))
		td_record_mark_unreliable(res);
}

/*
 * Counter k's difference since the begin (values at begin b, at end e),
 * into out[to], its sign into back, then on to counter k - 1: the
 * switches of end_result and end_to_record, unrolled as fast_read_all's.
 */
#define TD_FAST_DIFF(k, to)                                               \
	back |= out[to] = e[k] - b[k];                                    \
	__attribute__((fallthrough))

/*
 * Every counter's difference, out[to(k)] for k < nr; their sign bits
 * or'ed together (negative: some counter went back).
 */
#define TD_FAST_DIFFS(nr, to)                                             \
	switch (nr) {                                                     \
	case 8: TD_FAST_DIFF(7, to(7));                                   \
	case 7: TD_FAST_DIFF(6, to(6));                                   \
	case 6: TD_FAST_DIFF(5, to(5));                                   \
	case 5: TD_FAST_DIFF(4, to(4));                                   \
	case 4: TD_FAST_DIFF(3, to(3));                                   \
	case 3: TD_FAST_DIFF(2, to(2));                                   \
	case 2: TD_FAST_DIFF(1, to(1));                                   \
	case 1: back |= out[to(0)] = e[0] - b[0]; break;                  \
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */     \
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
	const uint64_t *b = td_begin_values(p), *e = g->fast.end;
	uint64_t out[TD_GEN_MAX] = { 0 };
	uint64_t back = 0; /* its sign: some counter went back */
	union counts_delta u;
	struct td_delta d;
	unsigned flags;

	/* the differences where td_gen_model_values puts values */
#define TO_MODEL(k) g->ev[k]
	TD_FAST_DIFFS(g->nr, TO_MODEL)
#undef TO_MODEL
	/* no policy tracks open regions: td_gen_fast_setup */
	if (TD_UNLIKELY((int64_t)back < 0 || !g->fast.linear ||
			(p->snap.resets & TD_BEGIN_UNREAD)))
		return end_values(td, p, res);
	if (g->derived)
		td_formula_derive(&g->m, g->derived, out);
	td_formula_counts(&g->m, out, &u.c); /* x86: the delta itself */
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
 * (its recipe's finish_values does, when the records are detached or
 * decoded, as end_result does); the region's length is learnt from the slots
 * each event adds (linear: fast.slots_per), as on the general route.
 * The differences go straight into the next free record (the buffer's
 * until k->next moves past it), or nowhere when the buffer is full: the
 * record is then dropped and counted.
 */
static __attribute__((noinline)) int end_to_record(struct td *td,
						   struct td_region_priv *p)
{
	const struct td_gen *g = td_gen_of(td)->gen;
	const uint64_t *b = td_begin_values(p), *e = g->fast.end;
	struct td_sink *k = &td->sink;
	struct td_record *rec = k->next;
	uint64_t full[TD_GEN_MAX], *out, slots = 0, back = 0;

	_Static_assert(TD_GEN_MAX <= TD_CAT_COUNT, "a record holds them");
	out = TD_LIKELY(rec != k->end) ? (uint64_t *)(void *)rec->cat : full;
#define TO_SAME(k) k
	TD_FAST_DIFFS(g->nr, TO_SAME)
#undef TO_SAME
	/* no policy tracks open regions: td_gen_fast_setup */
	if (TD_UNLIKELY((int64_t)back < 0 || !g->fast.linear ||
			(p->snap.resets & TD_BEGIN_UNREAD)))
		return end_values(td, p, NULL);
	if (TD_LIKELY(g->fast.slots_k < TD_GEN_MAX)) /* one event gives slots */
		slots = g->fast.slots_per[g->fast.slots_k] * out[g->fast.slots_k];
	else
		for (unsigned i = 0; i < g->nr; i++)
			slots += g->fast.slots_per[i] * out[i];
	td_learn_length(td, p, slots - p->slots);
	p->owner = NULL;
	if (TD_UNLIKELY(out == full)) {
		k->dropped++;
		return 0;
	}
	k->next = rec + 1;
	rec->qerr = td->snap.qerr_base - p->snap.qerr_base + p->slots;
	rec->flags = TD_RECORD_READINGS | TD_RECORD_VALUES |
		     (td->snap.untrusted == p->snap.untrusted
			      ? 0
			      : TD_RESULT_UNRELIABLE);
	rec->resets = (td->snap.resets - p->snap.resets) & TD_SNAP_RESETS_MASK;
	rec->reserved[0] = (uintptr_t)g->fast.recipe;
	return 0;
}

/*
 * What turns a record end_to_record wrote into counts: the group's open
 * events (their model indices, the derived one) and the model, as they
 * were at open, which is all the general route's decode of the same
 * differences reads of the handle.  A record may be decoded after its
 * handle is closed (a copy taken while attached: td_record_decode is
 * pure), so a recipe is never freed; handles with the same recipe share
 * it, and a process keeps at most TD_GEN_RECIPES of them (a handle past
 * that takes no fast path: its records are finished at its ends), which
 * bounds what one that opens handles over and over keeps.
 */
struct td_gen_recipe {
	struct td_record_finisher fin; /* first: what record.c calls */
	struct td_gen_model m;
	unsigned nr, derived;
	uint8_t ev[TD_GEN_MAX];
	const struct td_gen_recipe *next; /* the process's, newest first */
};

#define TD_GEN_RECIPES 64

/*
 * A record end_to_record wrote, as the general route writes it
 * (region_slow.c emit_record): the counts of the differences
 * (td_gen_counts_of's steps), the source's delta from zero counts
 * (end_result's), the region's reliability as its end saw it.  Both
 * sources with this fast path take td_generic_consistent (always true),
 * and only a handle on the RDPMC path has it (td_gen_fast_setup; the
 * path is fixed at open): no TD_RESULT_READ_PATH.
 */
static void finish_values(const struct td_record_finisher *f,
			  struct td_record *rec)
{
	static const struct td_counts zero;
	const struct td_gen_recipe *r =
		td_container_of(f, struct td_gen_recipe, fin);
	uint64_t v[TD_GEN_MAX] = { 0 };
	struct td_counts c;
	struct td_delta d;
	unsigned flags = 0;

	for (unsigned k = 0; k < r->nr; k++)
		v[r->ev[k]] = (uint64_t)rec->cat[k];
	if (r->derived)
		td_formula_derive(&r->m, r->derived, v);
	td_formula_counts(&r->m, v, &c);
	if (r->m.family)
		flags = r->m.family->delta(&r->m, &zero, &c, &d);
	else
		counts_as_delta(&c, &d);
	d.qerr = rec->qerr;
	if (rec->flags & TD_RESULT_UNRELIABLE)
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
	bool stale = false, w48 = true;

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
		w48 = w48 && width == 48;
	}
	if (stale)
		f->c[0].lock = TD_FAST_STALE;
	f->sel = g->nr + (TD_FAST_W48 && w48 ? 0 : TD_FAST_ANY_WIDTH);
}

/*
 * g's recipe: the process's one equal to it, else a new one (NULL when
 * out of memory or past TD_GEN_RECIPES).  Under a lock: handles open in
 * any thread; a recipe is immutable once on the list.
 */
static const struct td_gen_recipe *recipe_of(const struct td_gen *g)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const struct td_gen_recipe *recipes;
	static unsigned nr_recipes;
	const struct td_gen_recipe *r;
	struct td_gen_recipe want, *add = NULL;

	memset(&want, 0, sizeof(want)); /* padding too: compared whole */
	want.fin.finish = finish_values;
	memcpy(&want.m, &g->m, sizeof(want.m));
	want.nr = g->nr;
	want.derived = g->derived;
	memcpy(want.ev, g->ev, sizeof(want.ev));
	pthread_mutex_lock(&lock);
	for (r = recipes; r; r = r->next) {
		want.next = r->next;
		if (memcmp(r, &want, sizeof(want)) == 0)
			break;
	}
	if (!r && nr_recipes < TD_GEN_RECIPES && (add = malloc(sizeof(*add)))) {
		memcpy(add, &want, sizeof(want)); /* padding as compared */
		add->next = recipes;
		recipes = r = add;
		nr_recipes++;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/*
 * Called by the source's open: the fast path serves a group read by
 * RDPMC (MRS) with nothing beside it (no multiplexed or second level-2
 * group, whose readings need their times), every counter then read here,
 * and whose records can be finished after the handle is gone (a recipe).
 */
void td_gen_fast_setup(struct td *td)
{
	struct td_gen *g = td_gen_of(td)->gen;

	/*
	 * Its ends take what the general route asks of the source as
	 * known: every delta consistent (td_generic_consistent) and no
	 * reset, so no policy tracking open regions (td_policy_setup).
	 */
	td->src_fast = td->path == TD_PATH_RDPMC && TD_HAVE_USER_READ &&
		       !g->mux[0] && !g->l2 && g->nr <= TD_NR_VALUES &&
		       td->src->consistent == td_generic_consistent &&
		       !td->src->reset;
	if (td->src_fast) {
		g->fast.recipe = recipe_of(g);
		td->src_fast = g->fast.recipe != NULL;
	}
	g->fast.sel = g->nr + TD_FAST_ANY_WIDTH; /* until a refresh */
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
	/* where one event alone gives slots (cycles x width), that one */
	g->fast.slots_k = TD_GEN_MAX;
	for (unsigned k = 0, n = 0; k < g->nr; k++)
		if (g->fast.slots_per[k])
			g->fast.slots_k = n++ ? TD_GEN_MAX : (uint8_t)k;
}

