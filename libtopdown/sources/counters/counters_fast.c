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
 * the last accepted reading's, fast or slow, and less than
 * TD_GEN_STEP_MAX above it.  That catches a page naming a counter another
 * context now owns (its value jumps by the kernel's period, ~2^47, or
 * goes backwards); the slow path's full guard follows.
 */

/*
 * The width nearly every counter has, whose value needs no variable
 * shift: x86's are 48 bits wide on every model this path serves (the
 * pages' pmc_width: the Intel SDM's IA32_PMCx and AMD's PERF_CTRx), a
 * width RDPMC's two halves sign-extend with constant shifts; Arm's are
 * 64 bits wide where the event asked for a long counter (config1 bit 0,
 * counters_open.c; arch_perf_update_userpage in the kernel's
 * arch/arm64/kernel/perf_event.c), their value as MRS gives it.
 */
#if defined(__x86_64__)
#define TD_FAST_FIXED_WIDTH 48
#elif defined(__aarch64__)
#define TD_FAST_FIXED_WIDTH 64
#else
#define TD_FAST_FIXED_WIDTH 0
#endif

/*
 * Where the end may read the leader before checking its page's lock:
 * x86, whose RDPMC of a counter the CPU has never faults while the
 * kernel keeps CR4.PCE set for a process with an event mapped
 * (arch/x86/events/core.c x86_pmu_event_mapped, perf_rdpmc_allowed),
 * so that a reading a stale view names is only discarded by the lock
 * checked after it.  Arm's MRS traps where the kernel has not granted
 * EL0 access (PMUSERENR_EL0, armv8pmu_enable_user_access in
 * arch/arm64/kernel/perf_event.c), as it may not while the group is not
 * counting here: the lock first.
 */
#if defined(__x86_64__)
#define TD_FAST_READ_FIRST 1
#else
#define TD_FAST_READ_FIRST 0
#endif

/*
 * Where a read is a call (arm64's MRS stubs: arch_arm64.h, whose call
 * keeps every register but x0 and x30), the view's offset is loaded
 * with the reader, one load pair, before the read, and kept in a
 * register across it (the view is this thread's: nothing rewrites it
 * during the read); x86's RDPMC, which takes ecx and writes eax and
 * edx, has it loaded after, with fewer registers held across the read.
 */
#if defined(TD_HAVE_COUNTER_STUBS)
#define TD_FAST_OFFSET_FIRST 1
#else
#define TD_FAST_OFFSET_FIRST 0
#endif

/* A counter's register as read: x86's RDPMC halves, else lo alone. */
struct fast_reg {
	uint64_t lo, hi;
};

static inline __attribute__((always_inline)) struct fast_reg
fast_read_reg(const struct td_fast_counter *c)
{
	struct fast_reg r = { 0, 0 };

	if (TD_FAST_FIXED_WIDTH == 48)
		td_rdpmc_halves((uint32_t)c->reader, &r.lo, &r.hi);
	else
		r.lo = td_read_counter(c->reader);
	return r;
}

/*
 * A counter's raw value sign-extended from its width (the UAPI
 * comment's pmc <<= 64 - width; pmc >>= 64 - width).  fixed, a constant
 * of each copy of the caller: every counter TD_FAST_FIXED_WIDTH bits
 * wide, which needs no variable shift: on x86 bits 32-47 sign-extended
 * from the high half, or'ed with the low one; on Arm the value itself.
 */
static inline __attribute__((always_inline)) int64_t
fast_extend(const struct td_fast_counter *c, struct fast_reg r, bool fixed)
{
	uint64_t raw = r.lo;

	if (TD_FAST_FIXED_WIDTH == 48 && fixed)
		/* lo < 2^32: RDPMC clears bits 32-63 of RAX (arch_x86.h) */
		return (int64_t)(r.hi << 48) >> 16 | (int64_t)r.lo;
	if (TD_FAST_FIXED_WIDTH == 48)
		raw = r.hi << 32 | r.lo;
	if (TD_FAST_FIXED_WIDTH == 64 && fixed)
		return (int64_t)raw;
	return (int64_t)(raw << c->shift) >> c->shift;
}

/*
 * Whether sel picks the copies for counters all TD_FAST_FIXED_WIDTH bits
 * wide, whose cases are nr (the others' nr + TD_FAST_ANY_WIDTH).  The
 * end tests it on the leader's width with one compare with a constant
 * (fast_read_end), and the selector is made by the same test
 * (fast_sel): a group of TD_GEN_MAX such counters, which no model opens,
 * takes the other copies.  The assertion below checks every count's
 * selector against the cases of the copy the end's test picks for it.
 */
#define TD_FAST_SEL_FIXED(sel) ((sel) < TD_FAST_ANY_WIDTH)
#define TD_FAST_SEL(nr, fixed)                                            \
	(TD_FAST_FIXED_WIDTH && (fixed) && TD_FAST_SEL_FIXED(nr)           \
		 ? (nr)                                                    \
		 : (nr) + TD_FAST_ANY_WIDTH)

/* The copy TD_FAST_SEL_FIXED picks for sel has a case for it. */
#define TD_FAST_SEL_CASE(sel)                                             \
	(TD_FAST_SEL_FIXED(sel)                                           \
		 ? (sel) >= 1 && (sel) <= TD_GEN_MAX                       \
		 : (sel) > TD_FAST_ANY_WIDTH &&                            \
			   (sel) <= TD_FAST_ANY_WIDTH + TD_GEN_MAX)
#define TD_FAST_SEL_CASES(nr)                                             \
	(TD_FAST_SEL_CASE(TD_FAST_SEL(nr, true)) &&                        \
	 TD_FAST_SEL_CASE(TD_FAST_SEL(nr, false)))
_Static_assert(TD_GEN_MAX == 8 && TD_FAST_SEL_CASES(1) &&
		       TD_FAST_SEL_CASES(2) && TD_FAST_SEL_CASES(3) &&
		       TD_FAST_SEL_CASES(4) && TD_FAST_SEL_CASES(5) &&
		       TD_FAST_SEL_CASES(6) && TD_FAST_SEL_CASES(7) &&
		       TD_FAST_SEL_CASES(8),
	       "every count's selector is a case of the copy it picks");

/* The copies' selector for nr counters; fixed: all of the fixed width. */
static inline uint8_t fast_sel(unsigned nr, bool fixed)
{
	return (uint8_t)TD_FAST_SEL(nr, fixed);
}

/* The seen that is not f->last: the reading under way's. */
static inline __attribute__((always_inline)) uint64_t *
fast_next(const struct td_gen_fast *f)
{
	return (uint64_t *)((uintptr_t)f->last ^ f->flip);
}

/*
 * Each read stores its value in the seen not in use (next, one store
 * beside the one it makes for its region), and the guard compares with
 * the other (last), so that a whole reading is committed by one store
 * of a pointer (the begin's by its last read, in the region's window:
 * fast_read_all; the end's after its reads, fast_read_end, or once its
 * steps are checked apart, fast_end_recheck) rather than a pass over the
 * counters; the other seen is last's address xor'ed with flip, no index
 * to turn into addresses before the reads.
 *
 * A whole reading accepted: the seen its reads filled becomes the guard's
 * base, every counter's, and the slow path's (td_gen_fast_last).  Only
 * whole readings: one a counter of was refused leaves *last as it
 * was, so that the bases stay one reading's values, the one the build
 * without fast paths last took (its guard compares counters with each
 * other: categories_plausible).
 */
static inline __attribute__((always_inline)) void
fast_commit(struct td_gen_fast *f, uint64_t *next)
{
	f->last = next;
}

/*
 * One counter's value from its register as read, or false when the view
 * no longer holds: the lock checked after the read says that nothing
 * rewrote the page since the view was taken, so the value is this
 * event's.  offset: the view's, loaded by the caller where
 * TD_FAST_OFFSET_FIRST, else here.
 */
static inline __attribute__((always_inline)) bool
fast_accept(const struct td_fast_counter *c, struct fast_reg r,
	    uint64_t offset, uint64_t *v, bool fixed, const uint64_t *last,
	    uint64_t *sum)
{
	uint64_t val;

	td_compiler_barrier();
	if (TD_UNLIKELY(td_load_once(c->pc->lock) != c->lock))
		return false;
	if (!TD_FAST_OFFSET_FIRST)
		offset = c->offset;
	val = offset + (uint64_t)fast_extend(c, r, fixed);
	/*
	 * The guard's step, or'ed with the reading's others (fast_step_ok):
	 * last loaded after the barrier, an operand of the subtraction.
	 */
	*sum |= val - *last;
	*v = val;
	return true;
}

/*
 * Every step of a reading below TD_GEN_STEP_MAX (a power of two), at
 * or above its last accepted value: an OR of steps has a bit at or above
 * TD_GEN_STEP_SHIFT exactly when one of them does, and a step, modulo
 * 2^64, has one when it reaches TD_GEN_STEP_MAX or when the value is
 * below the last (within 2^64 - TD_GEN_STEP_MAX of it, as every value a
 * counter can give is).  One shift and one branch per reading, not per
 * counter: a step out of bounds still refuses the whole reading before
 * it is committed (fast_commit), so a refused reading is what a refusal
 * at its counter would have made it: the values a reading past that
 * counter wrote are the uncommitted seen's, which the next reading
 * rewrites, and the region's begin values or the handle's end values
 * and differences, which only an accepted reading is read from (the
 * slow path's begin writes the region's anew).  The one reader of a
 * refused reading's values, fast_end_recheck, reads them only where the
 * sum refused it, not a counter's view: every counter was then read.
 */
static inline __attribute__((always_inline)) bool fast_step_ok(uint64_t step)
{
	return TD_LIKELY(!(step >> TD_GEN_STEP_SHIFT));
}

static inline __attribute__((always_inline)) bool
fast_read(const struct td_fast_counter *c, uint64_t *v, bool fixed,
	  const uint64_t *last, uint64_t *sum)
{
	uint64_t offset = TD_FAST_OFFSET_FIRST ? c->offset : 0;

	return fast_accept(c, fast_read_reg(c), offset, v, fixed, last, sum);
}

/*
 * The same for the begin's last read, the leader's: its view's words
 * loaded before the read (the barrier keeps them there), so that what
 * follows the read, in the region's window, compares and adds registers:
 * the lock with the page's, the guard's bound (offset less the last
 * accepted value) with the value.
 */
static inline __attribute__((always_inline)) bool
fast_read_last(const struct td_fast_counter *c, uint64_t *v, bool fixed,
	       const uint64_t *last, uint64_t *next)
{
	const struct perf_event_mmap_page *pc = c->pc;
	uint32_t lock = (uint32_t)c->lock; /* TD_FAST_STALE too: odd */
	uint64_t offset = c->offset, bound = c->offset - last[0];
	struct fast_reg r;
	uint64_t raw;

	td_compiler_barrier();
	r = fast_read_reg(c);
	/*
	 * The barrier makes this a load of the page's lock after the read
	 * (one aligned 32-bit load, which the compiler may fold into the
	 * compare: not volatile)
	 */
	td_compiler_barrier();
	if (TD_UNLIKELY(pc->lock != lock))
		return false;
	raw = (uint64_t)fast_extend(c, r, fixed);
	if (TD_UNLIKELY((raw + bound) >> TD_GEN_STEP_SHIFT)) /* val - last */
		return false;
	*v = raw + offset;
	next[0] = *v;
	return true;
}

/*
 * Counter k's value kept (fast_take), from r where the caller read it
 * already (the end's leader), else read here.
 */
static inline __attribute__((always_inline)) bool
fast_keep(const struct td_gen *g, unsigned k, uint64_t val, uint64_t *v,
	  const uint64_t *b, uint64_t *next, uint64_t *sum, bool by_open)
{
	uint64_t d;

	next[k] = val; /* the guard's next base, once the reading is whole */
	if (!b) {
		v[k] = val;
		return true;
	}
	d = val - b[k];
	*sum |= d;
	v[by_open ? k : g->ev[k]] = d;
	return true;
}

/*
 * Counter k's value, kept: a begin's (b NULL) in v[k], the region's
 * begin value; an end's as its difference from the begin's b[k], or'ed
 * into *sum with the steps (fast_read_end), in v[ev[k]], where
 * td_gen_model_values puts the counter's value (a result's: the handle's
 * fast.diff), or where by_open, a constant of each copy, in v[k] (a
 * record's: fast.end, its recipe puts them in the model's order when
 * it is decoded).  An end thus keeps what its result or record is made
 * of, with no pass over the values after the reads, and a record's no
 * load of each counter's model index.
 */
static inline __attribute__((always_inline)) bool
fast_take(const struct td_gen *g, unsigned k, bool fixed, uint64_t *v,
	  const uint64_t *b, const uint64_t *last, uint64_t *next,
	  uint64_t *sum, bool by_open)
{
	uint64_t val;

	if (!fast_read(&g->fast.c[k], &val, fixed, &last[k], sum))
		return false;
	return fast_keep(g, k, val, v, b, next, sum, by_open);
}

/*
 * Every counter, last first (see fast_take for where each goes).  First
 * the leader's lock, as the seqlock reader checks index before reading:
 * a schedule-out rewrites every member's page (the group leaves
 * together), and a view with any stale counter keeps the leader's stale
 * too (td_gen_fast_refresh), so nothing is read while the view says the
 * group is not counting here.
 */
/* Counter k's read, then on to counter k - 1 (the switches below). */
#define TD_FAST_READ(k, fixed)                                            \
	if (!fast_take(g, k, fixed, v, b, last, next, &sum, by_open))     \
		return false;                                             \
	__attribute__((fallthrough))

/*
 * Counters 7 down to 2 in the copy for fixed, its cases base + nr, on to
 * case base + 2, where the callers part: the begin reads counter 1 and
 * the leader, the end (which read the leader first) counter 1 alone.
 */
#define TD_FAST_READS_TO_2(base, fixed)                                   \
	case (base) + 8: TD_FAST_READ(7, fixed);                          \
	case (base) + 7: TD_FAST_READ(6, fixed);                          \
	case (base) + 6: TD_FAST_READ(5, fixed);                          \
	case (base) + 5: TD_FAST_READ(4, fixed);                          \
	case (base) + 4: TD_FAST_READ(3, fixed);                          \
	case (base) + 3: TD_FAST_READ(2, fixed)

/* Every counter's read, in the copy for fixed, its cases base + nr. */
#define TD_FAST_READS(base, fixed)                                        \
	TD_FAST_READS_TO_2(base, fixed);                                  \
	case (base) + 2: TD_FAST_READ(1, fixed);                          \
	case (base) + 1:                                                  \
		if (!fast_step_ok(sum) ||                                 \
		    !fast_read_last(&g->fast.c[0], v, fixed, last, next)) \
			return false;                                     \
		fast_commit(f, next); /* whole */                         \
		return true

/*
 * f->sel picks the copy for the counters' widths with the count, in one
 * switch: nr, plus TD_FAST_ANY_WIDTH unless every counter is
 * TD_FAST_FIXED_WIDTH bits wide (fast_sel).  Where no width
 * is fixed, one copy, by nr.
 */
static inline __attribute__((always_inline)) bool
fast_read_all(struct td_gen *g, uint64_t *v)
{
	struct td_gen_fast *f = &g->fast;
	const uint64_t *last = f->last;
	uint64_t *next = fast_next(f);
	const uint64_t *b = NULL; /* a begin's: the values themselves */
	const bool by_open = true; /* unread: fast_keep's b NULL */
	uint64_t sum = 0; /* counters 7 to 1's steps: fast_step_ok */

	_Static_assert(TD_GEN_MAX == 8, "one case per counter");
	if (TD_UNLIKELY(td_load_once(f->c[0].pc->lock) != f->c[0].lock))
		return false;
	/* unrolled, last counter first: no loop counter, fixed offsets */
#if TD_FAST_FIXED_WIDTH
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

/*
 * An end whose steps and differences or'ed reach TD_GEN_STEP_MAX
 * (fast_read_end): each step again, apart, from the values its reads
 * stored in the seen under way, since a difference may reach it and the
 * reading still be whole (a region that counted for longer than the
 * step, or a counter below the region's begin: end_unsure); the reading
 * committed where every step is within the guard's bound.  Called once
 * a reading is refused (end_unsure): its callers' fast routes stay calls
 * in tail position.
 */
static bool fast_end_recheck(struct td_gen *g)
{
	struct td_gen_fast *f = &g->fast;
	uint64_t *next = fast_next(f);
	uint64_t step = 0;

	for (unsigned k = 0; k < g->nr; k++)
		step |= next[k] - f->last[k];
	if (!fast_step_ok(step))
		return false;
	fast_commit(f, next);
	return true;
}

/*
 * An end's: the leader first (read by the caller, r: its register),
 * then the others last first.  The region's window (from the begin's
 * last read, the leader's, to the end's first) then holds no dispatch
 * over the counters, nor the leader's width: both follow its read.  The
 * steps and the differences are or'ed together, one register and one
 * check: below TD_GEN_STEP_MAX, every step is and no difference is
 * negative; else fast_end_recheck tells which.
 */
#define TD_FAST_REST(base, fixed)                                         \
	TD_FAST_READS_TO_2(base, fixed);                                  \
	case (base) + 2:                                                  \
		if (!fast_take(g, 1, fixed, v, b, last, next, &sum,       \
			       by_open))                                  \
			return false;                                     \
		__attribute__((fallthrough));                             \
	case (base) + 1:                                                  \
		if (!fast_step_ok(sum)) {                                 \
			*refused_sum = sum; /* not 0: end_unsure */       \
			return false;                                     \
		}                                                         \
		fast_commit(f, next); /* whole, no difference negative */ \
		return true

/*
 * *refused_sum: the steps and differences or'ed of a reading they
 * refused; left as it was (0) where a counter's view refused it.
 * by_open: where the differences go (fast_take).
 */
static inline __attribute__((always_inline)) bool
fast_read_end(struct td_gen *g, struct fast_reg r, uint64_t *v,
	      const uint64_t *b, bool by_open, uint64_t *refused_sum)
{
	struct td_gen_fast *f = &g->fast;
	const uint64_t *last = f->last;
	uint64_t *next = fast_next(f);
	uint64_t val, sum = 0; /* the steps, and differences: fast_keep */

#if TD_FAST_FIXED_WIDTH
	/* sel in a register: the reads' barriers would reload f->sel */
	uint8_t sel = f->sel;

	if (TD_LIKELY(TD_FAST_SEL_FIXED(sel))) {
		if (!fast_accept(&f->c[0], r, f->c[0].offset, &val, true,
				 last, &sum))
			return false;
		fast_keep(g, 0, val, v, b, next, &sum, by_open);
		switch (sel) {
		TD_FAST_REST(0, true);
		default: __builtin_unreachable(); /* fast_sel */
		}
	}
	if (!fast_accept(&f->c[0], r, f->c[0].offset, &val, false, last,
			 &sum))
		return false;
	fast_keep(g, 0, val, v, b, next, &sum, by_open);
	switch (sel) {
	TD_FAST_REST(TD_FAST_ANY_WIDTH, false);
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */
	}
#else
	if (!fast_accept(&f->c[0], r, f->c[0].offset, &val, false, last,
			 &sum))
		return false;
	fast_keep(g, 0, val, v, b, next, &sum, by_open);
	switch (g->nr) {
	TD_FAST_REST(0, false);
	default: __builtin_unreachable(); /* 1 <= nr <= TD_GEN_MAX */
	}
#endif
}

#undef TD_FAST_REST
#undef TD_FAST_READS
#undef TD_FAST_READS_TO_2
#undef TD_FAST_READ

/*
 * The region is marked begun before the reads, so that the last one is
 * followed by its checks, its store and the return alone; a begin that
 * does not read here marks it again (td_slow_begin).
 */
int td_gen_fast_begin(struct td *td, struct td_region_priv *p)
{
	struct td_gen *g;

	/* the key: epoch | last_lock, which ordinary counters leave 0 */
	if (TD_UNLIKELY(p->key != td->epoch_hi))
		return td_slow_begin(td, p);
	p->owner = td;
	g = td_gen_of(td)->gen;
	/* committed by its last read (fast_read_all) */
	if (!fast_read_all(g, td_begin_values(p)))
		/* td from the region: one register less across the reads */
		return td_slow_begin((struct td *)(uintptr_t)p->owner, p);
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
 * The same for an end whose differences fast_read_end put in f->diff,
 * or by_open in f->end (a record's, fast_take): its values, the begin's
 * plus those (modulo 2^64, whatever the begin holds), taken the general
 * route.
 */
static __attribute__((noinline)) int end_diffs(struct td *td,
					       struct td_region_priv *p,
					       struct td_result *res,
					       bool by_open)
{
	struct td_gen *g = td_gen_of(td)->gen;
	const uint64_t *b = td_begin_values(p);

	for (unsigned k = 0; k < g->nr; k++)
		g->fast.end[k] = b[k] + (by_open ? g->fast.end[k]
						 : g->fast.diff[g->ev[k]]);
	return end_values(td, p, res);
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
 * What td_delta_result adds to a decoded delta without level 2 whose
 * source's flags are or'ed into res->flags: the region's resets and
 * reliability, the flags' TD_RESULT_UNRELIABLE among them.
 */
static inline __attribute__((always_inline)) void
result_region(const struct td *td, const struct td_region_priv *p,
	      unsigned flags, struct td_result *res)
{
	res->resets = (td->snap.resets - p->snap.resets) & TD_SNAP_RESETS_MASK;
	/*
	 * No TD_RESULT_READ_PATH: only a handle on the RDPMC path has this
	 * fast path (td_gen_fast_setup; the path is fixed at open).  The
	 * source's consistent is td_generic_consistent (ibid.).
	 */
	if (td->snap.untrusted != p->snap.untrusted ||
	    (flags & TD_RESULT_UNRELIABLE))
		td_record_mark_unreliable(res);
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
	result_region(td, p, flags, res);
}

/*
 * An end with a result and nothing else to do (no record, no policy
 * tracking open regions), counters all forward (fast_read_end, else
 * end_unsure) since a begin that read: the formula applied
 * once, to the values' differences.  Every formula
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
	struct td_gen *g = td_gen_of(td)->gen;
	uint64_t *out = g->fast.diff; /* model order: fast_take */
	union counts_delta u;
	int64_t slots;

	/* no policy tracks open regions: td_gen_fast_setup */
	if (TD_UNLIKELY(!g->fast.linear ||
			(p->snap.resets & TD_BEGIN_UNREAD)))
		return end_diffs(td, p, res, false);
	if (g->derived)
		td_formula_derive(&g->m, g->derived, out);
	if (!g->m.family) { /* the formula table's delta adds no flag */
		/* x86: the delta itself, as far as result_inline reads */
		td_formula_l1(&g->m, out, &u.c);
		td_learn_length(td, p, u.c.slots - p->slots);
		p->owner = NULL;
		u.d.qerr = td->snap.qerr_base - p->snap.qerr_base + p->slots;
		result_inline(td, p, &u.d, 0, res);
		return 0;
	}
	/*
	 * The source's delta from zero counts, decoded: its family's
	 * (arm_formulas.c td_arm_values_result), out as it asks (the
	 * positions no counter fills 0), without level 2 (no level-2
	 * group: td_gen_fast_setup).
	 */
	slots = g->m.family->values_result(
		&g->m, out, td->snap.qerr_base - p->snap.qerr_base + p->slots,
		res);
	td_learn_length(td, p, (uint64_t)slots - p->slots);
	p->owner = NULL;
	/* the decode's own flags hold no TD_RESULT_UNRELIABLE */
	result_region(td, p, res->flags, res);
	return 0;
}

/*
 * Records attached, no result, counters all forward (as for end_result)
 * since a begin that read: the record keeps the values' differences, in
 * the group's open order, and decodes nothing
 * (its recipe's finish_values does, when the records are detached or
 * decoded, as end_result does); the region's length is learnt from the slots
 * each event adds (linear: fast.slots_per), as on the general route.
 * The differences go into the next free record, or nowhere when the
 * buffer is full: the record is then dropped and counted.
 */
static __attribute__((noinline)) int end_to_record(struct td *td,
						   struct td_region_priv *p)
{
	const struct td_gen *g = td_gen_of(td)->gen;
	const uint64_t *out = g->fast.end; /* open order: fast_take */
	struct td_sink *k = &td->sink;
	struct td_record *rec = k->next;
	uint64_t slots = 0;

	_Static_assert(TD_GEN_MAX <= TD_CAT_COUNT, "a record holds them");
	/* no policy tracks open regions: td_gen_fast_setup */
	if (TD_UNLIKELY(p->snap.resets & TD_BEGIN_UNREAD))
		return end_diffs(td, p, NULL, true);
	if (TD_LIKELY(g->fast.slots_k < TD_GEN_MAX)) /* one event gives slots */
		slots = g->fast.slots_per[g->fast.slots_k] *
			out[g->fast.slots_k];
	else if (g->fast.slots_k == TD_GEN_MAX)
		for (unsigned i = 0; i < g->nr; i++)
			slots += g->fast.slots_per[i] * out[i];
	else /* TD_FAST_NOT_LINEAR: no counts of the differences */
		return end_diffs(td, p, NULL, true);
	td_learn_length(td, p, slots - p->slots);
	p->owner = NULL;
	if (TD_UNLIKELY(rec == k->end)) {
		k->dropped++;
		return 0;
	}
	/* the open events' (finish_values reads no more) */
	memcpy(rec->cat, out, TD_GEN_MAX * sizeof(*out));
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
	const struct td_gen_recipe *r =
		td_container_of(f, struct td_gen_recipe, fin);
	uint64_t v[TD_GEN_MAX] = { 0 };
	struct td_counts c;
	struct td_delta d;
	unsigned flags = 0;

	for (unsigned k = 0; k < r->nr; k++) /* open order: end_to_record */
		v[r->ev[k]] = rec->cat[k];
	if (r->derived)
		td_formula_derive(&r->m, r->derived, v);
	if (r->m.family) {
		flags = r->m.family->values_delta(&r->m, v, &d);
	} else {
		td_formula_counts(&r->m, v, &c);
		counts_as_delta(&c, &d);
	}
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
 * end_key's TD_END_KEY_SINK or _NAMED (bits 32 and 33): its byte that
 * holds them, one load and a test before the reads (a 64-bit mask would
 * take a register of its own, and a move besides).
 */
static inline bool end_is_keyed(const struct td *td)
{
	uint8_t flags;

	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		       "bits 32-39 are the fifth byte");
	_Static_assert(((TD_END_KEY_SINK | TD_END_KEY_NAMED) >> 32) < 256,
		       "one byte holds them");
	memcpy(&flags, (const char *)&td->end_key + 4, 1);
	return flags & ((TD_END_KEY_SINK | TD_END_KEY_NAMED) >> 32);
}

/* What an end's reading makes (end_after_lead). */
enum end_route { END_VALUES, END_RECORD, END_RESULT };

/*
 * An end whose reading fast_read_end refused: at a counter (sum 0: the
 * view no longer holds), the slow path's; by its steps alone (the
 * values, no differences or'ed in), the slow path's too; else by its
 * steps and differences or'ed (sum), the route the reading takes once
 * each step is checked apart (fast_end_recheck).
 */
static __attribute__((noinline, cold)) int
end_unsure(struct td *td, struct td_region_priv *p, struct td_result *res,
	   uint64_t sum, enum end_route route)
{
	struct td_gen *g = td_gen_of(td)->gen;
	uint64_t signs = 0;

	if (!sum || route == END_VALUES || !fast_end_recheck(g))
		return td_slow_end_read(td, p, res);
	for (unsigned k = 0; k < g->nr; k++) /* fast_take's places */
		signs |= route == END_RECORD ? g->fast.end[k]
					     : g->fast.diff[g->ev[k]];
	/*
	 * A counter below the region's begin, every step within the
	 * guard's: the begin took a reading above the counter's own count
	 * (a stale page naming another context's register, forward of the
	 * last reading by less than the step), which only read(2)'s values,
	 * below it, can have shown wrong and moved the guard's base down
	 * (counters_read.c: TD_GEN_SUSPECT, the regions spanning it
	 * flagged).  The differences, modulo 2^64, are then no counts: the
	 * general route (end_diffs, td_end_sampled) finds the begin's values
	 * past the end's and treats the begin as unread (region_slow.c
	 * begin_values_to_counts), learning no length from the region, as
	 * the build without fast paths does; end_result and end_to_record
	 * would learn one of nearly 2^64 slots.
	 */
	if ((int64_t)signs < 0)
		return end_diffs(td, p, res, route == END_RECORD);
	if (route == END_RECORD)
		return end_to_record(td, p);
	return end_result(td, p, res);
}

/*
 * The end once its leader is read (lo, hi: its register, fast_reg):
 * the region checked, the rest read into the handle's f->diff (this
 * thread's alone) and the numbers made.  Out of line, so that its frame
 * is built after that read, outside the region's window.
 */
static inline __attribute__((always_inline)) int end_after_lead(struct td *td,
						    struct td_region *r,
						    struct td_result *res,
						    uint64_t lo, uint64_t hi)
{
	struct td_region_priv *p = priv(r);
	struct td_gen *g = td_gen_of(td)->gen;
	struct fast_reg lead = { lo, hi };
	uint64_t sum = 0; /* what fast_read_end refused by: end_unsure */

	if (TD_UNLIKELY(!r || p->owner != td)) /* the reading is discarded */
		return td_end_checked(td, r, res);
	if (TD_UNLIKELY(end_is_keyed(td))) {
		if ((td->end_key & TD_END_KEY_NAMED) || res) {
			/* named, or a result and records: the values */
			if (!fast_read_end(g, lead, g->fast.end, NULL, true,
					   &sum))
				return end_unsure(td, p, res, sum, END_VALUES);
			return end_values(td, p, res);
		}
		/* a record alone: the differences, in open order */
		if (!fast_read_end(g, lead, g->fast.end,
				   td_begin_values(p), true, &sum))
			return end_unsure(td, p, NULL, sum, END_RECORD);
		return end_to_record(td, p);
	}
	if (!fast_read_end(g, lead, g->fast.diff, td_begin_values(p), false,
			   &sum))
		return end_unsure(td, p, res, sum, END_RESULT);
	return end_result(td, p, res); /* a result alone */
}

/* Where the leader's page says the group is not counting here. */
static __attribute__((noinline)) int end_unread(struct td *td,
						struct td_region *r,
						struct td_result *res)
{
	if (TD_UNLIKELY(!r || priv(r)->owner != td))
		return td_end_checked(td, r, res);
	return td_slow_end_read(td, priv(r), res);
}

/*
 * The end of this thread's fast handle, straight from the entry (its
 * region unchecked: source.h fast_end_first): the leader read before
 * the region is checked, so that the region is charged for as few of
 * the library's instructions as may be; a reading for a region that is
 * not this handle's is discarded (end_after_lead).  An end that returns
 * nothing and writes no record reads nothing.  read_first, a constant of
 * each copy: the leader read before its page's lock is checked
 * (TD_FAST_READ_FIRST), on x86's core PMU only (the formula table's
 * source); the Arm source checks it first wherever it runs.
 */
static inline __attribute__((always_inline)) int
gen_fast_end_first(struct td *td, struct td_region *r, struct td_result *res,
		   bool read_first)
{
	struct td_region_priv *p = priv(r);
	const struct td_gen *g;
	struct fast_reg lead;

	/* records attached or a named region ending: end_key says so */
	if (!res && TD_LIKELY(!end_is_keyed(td))) {
		if (TD_UNLIKELY(!r || p->owner != td))
			return td_end_checked(td, r, res);
		p->owner = NULL; /* nothing to return: nothing to read */
		return 0;
	}
	g = td_gen_of(td)->gen;
	if (!read_first &&
	    TD_UNLIKELY(td_load_once(g->fast.c[0].pc->lock) !=
			g->fast.c[0].lock))
		return end_unread(td, r, res);
	lead = fast_read_reg(&g->fast.c[0]);
	return end_after_lead(td, r, res, lead.lo, lead.hi);
}

int td_gen_fast_end_first(struct td *td, struct td_region *r,
			  struct td_result *res)
{
	return gen_fast_end_first(td, r, res, TD_FAST_READ_FIRST);
}

int td_gen_fast_end_first_locked(struct td *td, struct td_region *r,
				 struct td_result *res)
{
	return gen_fast_end_first(td, r, res, false);
}

/* The same where the region is checked (td_end_checked). */
int td_gen_fast_end(struct td *td, struct td_region_priv *p,
		    struct td_result *res)
{
	return td->end_entry(td, (struct td_region *)(void *)p, res);
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
	bool stale = false, fixed = true;

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
		f->last[k] = open[k]; /* stale or not: accepted */
		if (!pc->cap_user_rdpmc || !idx || !width || width > 64 ||
		    !td_reader_exists(idx - 1)) {
			c->lock = TD_FAST_STALE;
			stale = true;
			continue;
		}
		c->lock = seq;
		c->reader = td_reader_of(idx - 1);
		c->shift = 64 - width;
		fixed = fixed && width == TD_FAST_FIXED_WIDTH;
	}
	f->refreshed = true;
	if (stale)
		f->c[0].lock = TD_FAST_STALE;
	f->sel = fast_sel(g->nr, fixed);
}

/*
 * The slow path's guard (counters_read.c) compares a reading with the
 * last one accepted, g->last, which the fast path's readings do not
 * write: the last whole reading's values are the view's (*last,
 * set by every whole fast reading, fast_commit, and every refresh), so
 * the slow path takes them from there, as the build without fast paths
 * compares with its last reading, and a counter below a fast reading is
 * refused as it would be below a slow one (a stale page naming a counter
 * another context owns, read after the fast path's reading of it).
 */
void td_gen_fast_last(struct td_gen *g)
{
	uint64_t open[TD_GEN_MAX];

	if (!g->fast.refreshed) /* no view yet: g->last is the last */
		return;
	for (unsigned k = 0; k < g->nr; k++)
		open[k] = g->fast.last[k];
	td_gen_model_values(g, open, g->last);
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
	g->fast.sel = fast_sel(g->nr, false); /* until a refresh */
	g->fast.refreshed = false;
	g->fast.last = g->fast.seen[0];
	g->fast.flip = (uintptr_t)g->fast.seen[0] ^ (uintptr_t)g->fast.seen[1];
	/* the positions no counter fills stay 0 (fast_take) */
	memset(g->fast.diff, 0, sizeof(g->fast.diff));
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
	if (!g->fast.linear) /* end_to_record tests it with slots_k */
		g->fast.slots_k = TD_FAST_NOT_LINEAR;
}

