/* SPDX-License-Identifier: MIT */
/*
 * td_region_begin / td_region_end, the library's entry points, with the
 * PERF_METRICS source's fast path inlined: its two fixed selectors read
 * with nothing between the caller and the RDPMCs but a few checks.
 * This thread's fast handle of a source with a fast path of its own
 * (counters read one by one, guarded reads: source.h fast_begin,
 * fast_end, fast_end_first) goes there at once, through the pointers
 * its handle keeps (struct td src_begin, end_entry); everything else to
 * the general route (core/region_slow.c).
 * The entry points live here, with the source whose path they inline,
 * so that no generic file knows a register of one source.
 *
 * A region keeps the raw reading (SLOTS, PERF_METRICS) taken at its begin
 * and a copy of the handle's slow-path state as it was then (struct
 * td_snap: folded counters, error scale, reset and untrusted-event
 * counts), so regions nest and interleave freely and survive any number
 * of resets between their ends.  That state changes only on the slow
 * path, so the copy is made only when it changed since the region's
 * previous begin: the region's key, td->epoch_hi | the page lock seen
 * then, still matching says it did not.
 *
 * The fast path runs while nothing needs thought: this thread's fast
 * handle (td_fast.td: not NULL, fast-capable, this thread, this process,
 * one compare), no user page update since the slow path last looked (so
 * no schedule-in to account for, and the index it validated still holds:
 * the kernel writes index only in perf_event_update_userpage, which bumps
 * lock), SLOTS not backwards, no reset due.  It RDPMCs the fixed
 * selectors the kernel publishes for SLOTS (1<<30 | 3) and PERF_METRICS
 * (1<<29), checked at open.  Its layout keeps the library's own
 * instructions out of the caller's measured window: begin makes its
 * checks before its last RDPMC (PERF_METRICS), end reads SLOTS first and
 * checks afterwards.  The few checks between begin's two reads shift its
 * SLOTS and PERF_METRICS readings apart by those instructions' slots,
 * which bench/overhead counts and prints.
 *
 * The slow path (pm_reading.c) does the rest: seqlock with index check,
 * hybrid guard, metrics-clear mode, read(2), foreign resets, the policy.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "begin_state.h"
#include "perf_metrics.h"
#include "pm_decode.h"
#include "source.h"

/*
 * The fixed selectors (arch/x86/include/asm/perf_event.h:
 * INTEL_PMC_FIXED_RDPMC_BASE | 3, SLOTS being fixed counter 3, and
 * INTEL_PMC_FIXED_RDPMC_METRICS), which the kernel publishes + 1 as the
 * user pages' index.
 */
#define TD_RDPMC_SLOTS   ((1u << 30) | 3)
#define TD_RDPMC_METRICS (1u << 29)

/*
 * Out of line, with the arguments its callers pass (so that they reach
 * it by a jump): GCC's noipa also keeps its interprocedural passes
 * (constprop, isra) from giving it others; clang has no such attribute.
 */
#if defined(__clang__)
#define TD_NOIPA __attribute__((noinline))
#else
#define TD_NOIPA __attribute__((noipa))
#endif

/* SLOTS is fixed counter 3, 48 bits wide. */
static inline uint64_t td_join48(uint64_t lo, uint64_t hi)
{
	return (hi << 48 >> 16) | lo; /* bits 32-47 from hi */
}


/*
 * The source's ready operation, once td_open has the whole handle (its
 * policy, its owner): may begin/end take the fixed-selector path?
 */
void td_pm_fast_setup(struct td *td)
{
	/*
	 * Fixed selectors are RDPMCed before any check, which is safe only
	 * where the source says every CPU has them (td->fast_capable).
	 */
	td->fast = td->path == TD_PATH_RDPMC && td->fast_capable &&
		   TD_HAVE_USER_READ &&
		   td->policy.kind != TD_RESET_ALWAYS &&
		   td_pm_of(td)->slots_pc->index == TD_RDPMC_SLOTS + 1 &&
		   td_pm_of(td)->metric_pc->index == TD_RDPMC_METRICS + 1;
	/*
	 * metrics-clear mode: its own fast path (pm_clear_fast.c), which
	 * reads SLOTS and PERF_METRICS alone (TD_OPT_MEMORY's events: the
	 * general route)
	 */
	td->src_fast = td_pm_of(td)->pm.clear_mode && td->path == TD_PATH_RDPMC &&
		       TD_HAVE_USER_READ && !td_pm_of(td)->pm.mem.on;
}

/* ---- slow path ----------------------------------------------------------- */

/*
 * A fast reading of both registers that passed its checks, with
 * somewhere to go: a result, a record.
 */
__attribute__((noinline)) int td_end_with_reading(struct td *td, struct td_region_priv *p,
			struct td_result *res, uint64_t slots, uint64_t metrics,
			uint64_t aux)
{
	struct td_pm_handle *h = td_pm_of(td);
	struct td_sample s;

	h->last_raw_slots = slots;
	h->last_pair_slots = slots;
	h->last_raw_metrics = metrics;
	s.valid = true;
	s.raw_slots = slots;
	s.raw = metrics;
	s.unsched = td->last_unsched;
	s.qerr_base = td->snap.qerr_base;
	s.aux = aux;
	s.aux2 = h->pm.uop.be_on ? h->pm.uop.be_end : TD_AUX_NONE;
	s.c = td->snap.base;
	td_counts_add(&s.c, slots, metrics);
	td_end_sampled(td, p, &s, res);
	return 0;
}

/* ---- the begin/end pair -------------------------------------------------- */

/*
 * A begin on another handle than this path's: this thread's handle
 * whose source has a fast path of its own (one compare stands for the
 * NULL, thread and fork checks, as td_fast.td's does here) and a closed
 * region go to the source's fast begin at once (struct td src_begin);
 * anything else to the checks.
 */
static inline __attribute__((always_inline)) int
begin_other(struct td *td, struct td_region *r)
{
	if (td == td_fast.src_td && r && !priv(r)->owner)
		return td->src_begin(td, priv(r));
	return td_begin_checked(td, r);
}

int td_region_begin(struct td *td, struct td_region *r)
{
	struct td_region_priv *p = priv(r);
	uint64_t slots, lo, hi;

	if (TD_UNLIKELY(td != td_fast.td))
		return begin_other(td, r);
	if (TD_UNLIKELY(!r || p->owner))
		return td_begin_checked(td, r);
	if (TD_UNLIKELY((td_load_once(td_pm_of(td)->slots_pc->lock) | td->epoch_hi) !=
			p->key))
		return td_slow_begin(td, p);
	td_compiler_barrier();
	td_rdpmc_halves(TD_RDPMC_SLOTS, &lo, &hi);
	slots = td_join48(lo, hi);
	if (TD_UNLIKELY(td_reset_may_be_due(td, p, slots) ||
			slots < td_pm_of(td)->last_raw_slots))
		return td_slow_begin(td, p);
	td_pm_of(td)->last_raw_slots = slots;
	td_store_once(td_pm_of(td)->last_pair_slots, slots); /* one store, unmerged */
	p->slots = slots;
	p->owner = td;
	td_policy_open(&td->policy, slots + p->snap.base.slots);
	/* the drop's count next to PERF_METRICS' read; the common case
	 * (on_l2: no second counter) tested once */
	if (TD_LIKELY(td_pm_of(td)->pm.uop.on_l2)) {
		p->aux = td_pm_uop_now(td);
	} else if (td_pm_of(td)->pm.uop.on) {
		p->aux = td_pm_uop_now(td);
		/* Ice Lake's cores: INT_MISC.CLEARS_COUNT too (be_on implies
		 * on), before PERF_METRICS: outside the window */
		if (TD_UNLIKELY(td_pm_of(td)->pm.uop.be_on))
			p->aux2 = td_pm_clears_now(td);
	}
	td_compiler_barrier();
	td_rdpmc_halves(TD_RDPMC_METRICS, &lo, &hi);
	td_pm_store_halves(&p->raw, (uint32_t)lo, (uint32_t)hi);
	/*
	 * With last_pair_slots, the pair a foreign reset folds (pm_reading.c):
	 * two stores of the halves, as RDPMC gave them (volatile: not joined
	 * by the compiler into more instructions than that).
	 */
	td_store_once(td_pm_of(td)->last_raw_metrics_half[0], (uint32_t)lo);
	td_store_once(td_pm_of(td)->last_raw_metrics_half[1], (uint32_t)hi);
	return 0;
}

/* Nothing changed the handle's state since the region's begin. */
static inline bool same_epoch(const struct td *td,
			      const struct td_region_priv *p)
{
	return (uint32_t)(p->key >> 32) == (uint32_t)(td->epoch_hi >> 32);
}

/* Do the fast path's checks hold for a reading of SLOTS taken at end? */
static bool fast_end_ok(const struct td *td, struct td_region *r,
			uint64_t slots)
{
	return r && priv(r)->owner == td &&
	       td_load_once(td_pm_of(td)->slots_pc->lock) == td->last_lock &&
	       slots >= td_pm_of(td)->last_raw_slots;
}

/* The rare end of end_same_snap: its own frame, a tail call there. */
static __attribute__((noinline)) int end_inconsistent(struct td_result *res)
{
	td_record_mark_unreliable(res);
	return 0;
}

/*
 * Readings too large for the exact doubles of decode.h: integers.  Six
 * arguments, so that its callers reach it by a jump (no frame, none of
 * theirs pushed on the stack; TD_NOIPA: not given other arguments by
 * GCC's interprocedural passes either): level 2, the drop's move and the flags
 * found again from the handle, as end_same_snap chose them (an unrefined
 * core's flags, 0 where the counters count: the copy of Ice Lake's cores
 * that counts the clears is end_same_snap_refined's, not this one).
 */
static TD_NOIPA int end_decode_wide(
	const struct td *td, const struct td_region_priv *p,
	struct td_result *res, uint64_t s1, uint64_t m1, int64_t drop)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	bool ok = td_decode_readings_uop(
		p->slots, p->raw, s1, m1,
		td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS, u->on, drop,
		res);

	res->resets = 0;
	res->flags |= u->fe_flag | u->be_flag;
	if (!ok)
		td_record_mark_unreliable(res);
	return 0;
}

/*
 * The refinement counters at an end (pm_uop.c): INT_MISC.UOP_DROPPING's
 * count (none where it is not on), INT_MISC.CLEARS_COUNT's into be_end
 * where it is on too (Ice Lake's cores), where td_end_with_reading takes
 * it (end_with_result_clears reads it so too; a record's end, in
 * record_clears).
 */
static inline __attribute__((always_inline)) uint64_t refiners_now(
	struct td *td, uint64_t none)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if (!u->on)
		return none;
	if (TD_UNLIKELY(u->be_on))
		u->be_end = td_pm_clears_now(td);
	return td_pm_uop_now(td);
}

/*
 * end_same_snap's route where the core wants INT_MISC.CLEARS_COUNT too
 * (Ice Lake's cores): both moves in integers (pm_decode.h
 * td_decode_readings_refined), or the drop's alone and the result
 * flagged where the second counter is not on; out of line, for no core
 * with level 2 in PERF_METRICS takes it.  A begin that could not read
 * the second counter: the general route flags it.
 */
static __attribute__((noinline)) int end_same_snap_refined(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	bool l2 = td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;
	int64_t drop = (int64_t)(aux - p->aux);
	bool ok;

	if (u->be_on && p->aux2 == TD_AUX_NONE)
		return td_end_with_reading(td, p, res, slots, metrics, aux);
	td_pm_of(td)->last_raw_slots = slots;
	td_pm_of(td)->last_pair_slots = slots;
	td_pm_of(td)->last_raw_metrics = metrics;
	td_learn_length(td, p, slots - p->slots);
	td_policy_close(&td->policy, slots + td->snap.base.slots);
	p->owner = NULL;
	ok = u->be_on ? td_decode_readings_refined(
				p->slots, p->raw, slots, metrics, l2, drop,
				(int64_t)(u->be_end - p->aux2), res)
		      : td_decode_readings_uop(p->slots, p->raw, slots, metrics,
					       l2, true, drop, res);
	res->resets = 0;
	res->flags |= u->be_flag;
	if (!ok)
		td_record_mark_unreliable(res);
	return 0;
}

/*
 * The common end with a result: nothing changed the handle's state since
 * the begin (same epoch: no fold, no schedule-in, no untrusted event, no
 * reset, so the region is reliable unless its own delta says otherwise)
 * and no record is wanted.  Level 2 is a constant of each copy
 * (end_same_snap makes one of each), so that its decode tests it once.
 */
static inline __attribute__((always_inline)) int end_same_snap_l2(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, bool l2, bool uop, int64_t drop,
	unsigned fe_flag)
{
	td_pm_of(td)->last_raw_slots = slots;
	td_store_once(td_pm_of(td)->last_pair_slots, slots); /* unmerged */
	td_pm_of(td)->last_raw_metrics = metrics;
	td_learn_length(td, p, slots - p->slots);
	td_policy_close(&td->policy, slots + td->snap.base.slots);
	p->owner = NULL;
	/*
	 * Both readings taken under the same version of the handle's state:
	 * the folded bases cancel, and so do the error scales at folds.
	 * The same version also says that SLOTS did not go back since the
	 * begin (a fold or a foreign reset publishes a new one): p->slots
	 * <= slots, so slots alone tells td_decode_readings_exact.  Were it
	 * not so, the delta would be negative (the doubles hold 48-bit
	 * readings and their difference exactly), so inconsistent, and
	 * td_record_mark_unreliable would rewrite every fraction anyway.
	 * Last, so that marking a rare inconsistent delta is a tail call.
	 */
	if (TD_UNLIKELY(!td_decode_readings_exact(UINT64_C(0), slots)))
		return end_decode_wide(td, p, res, slots, metrics, drop);
	if (TD_UNLIKELY(!td_decode_readings_end(p->slots, &p->raw, slots,
						metrics, l2, uop, drop,
						fe_flag, res)))
		return end_inconsistent(res);
	return 0;
}

/*
 * The same, with INT_MISC.UOP_DROPPING's count at end (aux) where the
 * handle counts it (pm_uop.c): a copy of each that moves the dropped
 * share (pm_decode.h td_uop_move), and, where the core wants it but the
 * counter could not be had, the plain one flagged.  A begin that could
 * not read the counter (aux TD_AUX_NONE): the general route flags it.
 * on_l2, a constant of each copy: the caller knows the counter counted
 * and level 2 decoded (struct td_pm_uop on_l2), so that this copy tests
 * neither; clears, another: the caller's copy for the cores that count
 * INT_MISC.CLEARS_COUNT too (Ice Lake's, end_same_snap_refined).
 */
static inline __attribute__((always_inline)) int end_same_snap(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux, bool on_l2,
	bool clears)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	bool l2 = on_l2 || td_pm_of(td)->pm.pmu.nr_metrics == TD_NR_METRICS;

	if (on_l2 || u->on) {
		int64_t drop = (int64_t)(aux - p->aux);

		if (TD_UNLIKELY(p->aux == TD_AUX_NONE))
			return td_end_with_reading(td, p, res, slots, metrics,
						   aux);
		if (clears) /* the caller's copy for Ice Lake's cores */
			return end_same_snap_refined(td, p, res, slots,
						     metrics, aux);
		if (TD_LIKELY(l2))
			return end_same_snap_l2(td, p, res, slots, metrics,
						true, true, drop, 0);
		return end_same_snap_l2(td, p, res, slots, metrics, false,
					true, drop, 0);
	}
	if (TD_LIKELY(l2))
		return end_same_snap_l2(td, p, res, slots, metrics, true,
					false, 0, u->fe_flag);
	return end_same_snap_l2(td, p, res, slots, metrics, false, false, 0,
				u->fe_flag | u->be_flag);
}

/*
 * A fast end with a result that end_same_snap cannot take: records to
 * write (end_key poisoned, lock as last seen: the reading stands), the
 * handle's state changed since the begin (the same), or a page update
 * (the slow path reads again).  The rest of the fast path's checks held
 * already.  Six arguments, so that end_result reaches it by a jump: the
 * page's lock loaded again, later still than the one end_result
 * compared, so that what it says of the reads holds all the more (a
 * write since then sends the end to the slow path, which reads again).
 */
static TD_NOIPA int end_result_keyed(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux)
{
	if (td_load_once(td_pm_of(td)->slots_pc->lock) != td->last_lock)
		return td_end_checked(td, (struct td_region *)(void *)p, res);
	return td_end_with_reading(td, p, res, slots, metrics, aux);
}

/*
 * End with a result: both registers read at once, then checked.  The
 * lock compared with end_key says at once that the page is as last seen
 * and that no record is wanted (end_key is the last lock with the sink's
 * bits: internal.h, td_end_key_refresh).
 */
static inline __attribute__((always_inline)) int end_result(
	struct td *td, struct td_region *r, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux, bool on_l2,
	bool clears)
{
	struct td_region_priv *p = priv(r);
	uint64_t lock;

	if (!r || p->owner != td || slots < td_pm_of(td)->last_raw_slots)
		return td_end_checked(td, r, res);
	lock = td_load_once(td_pm_of(td)->slots_pc->lock);
	if (TD_LIKELY(lock == td->end_key && same_epoch(td, p)))
		return end_same_snap(td, p, res, slots, metrics, aux, on_l2,
				     clears);
	return end_result_keyed(td, p, res, slots, metrics, aux);
}

/*
 * A record of readings' INT_MISC.CLEARS_COUNT (end_to_record): read here
 * where the end's reading did not (a record's end reads SLOTS and
 * PERF_METRICS alone, and the drop's counter, on the other cores: no
 * test more there), a few stores after them.
 */
static void record_clears(struct td *td, const struct td_region_priv *p,
			  struct td_record *rec)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	rec->flags |= u->be_flag;
	if (u->be_on && p->aux2 != TD_AUX_NONE) { /* for the move */
		rec->cat[3] = (int64_t)(td_pm_clears_now(td) - p->aux2);
		rec->flags |= TD_RECORD_CLEARS;
	} else if (u->be_on) {
		rec->flags |= TD_RESULT_BE_UNREFINED;
	}
}

/*
 * td_pm_store_halves, each half by a store of its own: x86's two 32-bit
 * stores in asm, or the compiler joins them first through vector
 * registers (two moves, an unpack and a store).  Each half its own
 * memory operand ("4+%0" would read "4+(%rax)" where the compiler
 * addresses *w by a register alone, at -O0: an assembler warning), *w
 * an output too, so that the word is known written.
 */
static inline __attribute__((always_inline)) void store_halves_apart(
	int64_t *w, uint32_t lo, uint32_t hi)
{
#if defined(__x86_64__)
	uint32_t *half = (uint32_t *)(void *)w;

	__asm__("movl %k3, %1\n\tmovl %k4, %2"
		: "=m"(*w), "=m"(half[0]), "=m"(half[1])
		: "r"(lo), "r"(hi));
#else
	td_pm_store_halves((uint64_t *)w, lo, hi);
#endif
}

/*
 * Records attached, nothing folded since the begin: the record keeps the
 * two boundary readings and decodes nothing (pm_record.c does, later,
 * as end_same_snap does); the policy learns the length as a fast end
 * without output does.  A full buffer counts the record dropped.  uop, a
 * constant of each copy: INT_MISC.UOP_DROPPING counted (aux its count at
 * end), so that the copy tests it once.
 */
static inline __attribute__((always_inline)) void end_to_record(
	struct td *td, struct td_region_priv *p, uint64_t slots,
	uint32_t metrics_lo, uint32_t metrics_hi, bool uop, uint64_t aux,
	bool clears)
{
	struct td_sink *k = &td->sink;
	struct td_record *rec;
	unsigned flags;

	td_pm_of(td)->last_raw_slots = slots;
	td_store_once(td_pm_of(td)->last_pair_slots, slots); /* unmerged */
	td_pm_of(td)->last_raw_metrics_half[0] = metrics_lo;
	td_store_once(td_pm_of(td)->last_raw_metrics_half[1], metrics_hi);
	td_learn_length(td, p, slots - p->slots);
	td_policy_close(&td->policy, slots + td->snap.base.slots);
	p->owner = NULL;
	rec = k->next;
	if (TD_UNLIKELY(rec == k->end)) {
		k->dropped++;
		return;
	}
	k->next = rec + 1;
	rec->slots = slots;
	rec->qerr = p->slots;
	rec->cat[0] = (int64_t)p->raw;
	/* PERF_METRICS at end as RDPMC gave it: two halves, little endian */
	store_halves_apart(&rec->cat[1], metrics_lo, metrics_hi);
	/* resets 0, name NULL: pm_record.c finish_readings */
	flags = k->readings_flags;
	if (!uop) {
		flags |= td_pm_of(td)->pm.uop.fe_flag;
	} else if (TD_LIKELY(p->aux != TD_AUX_NONE)) { /* the drop, moved */
		rec->cat[2] = (int64_t)(aux - p->aux);
		flags |= TD_RECORD_UOP;
	} else { /* a begin that could not read it */
		flags |= TD_RESULT_FE_UNREFINED;
	}
	rec->flags = flags;
	if (clears && TD_UNLIKELY(td_pm_of(td)->pm.uop.be_wanted))
		record_clears(td, p, rec); /* Ice Lake's cores */
	rec->reserved[0] = (uintptr_t)&td_pm_readings_finisher;
}

/* end_to_record_now's other cores, out of line (their registers). */
static __attribute__((noinline)) void end_to_record_other(
	struct td *td, struct td_region_priv *p, uint64_t slots,
	uint32_t metrics_lo, uint32_t metrics_hi)
{
	if (td_pm_of(td)->pm.uop.on)
		end_to_record(td, p, slots, metrics_lo, metrics_hi, true,
			      td_pm_uop_now(td), true);
	else
		end_to_record(td, p, slots, metrics_lo, metrics_hi, false, 0,
			      true);
}

/*
 * The same, INT_MISC.UOP_DROPPING read here where it is counted: the
 * common case (on_l2: no second counter) tested once, its base loaded
 * after the read (one register fewer across it).
 */
static inline __attribute__((always_inline)) void end_to_record_now(
	struct td *td, struct td_region_priv *p, uint64_t slots,
	uint32_t metrics_lo, uint32_t metrics_hi)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint64_t aux;

	if (TD_UNLIKELY(!u->on_l2)) {
		end_to_record_other(td, p, slots, metrics_lo, metrics_hi);
		return;
	}
	aux = td_rdpmc(u->sel);
	td_compiler_barrier();
	end_to_record(td, p, slots, metrics_lo, metrics_hi, true,
		      aux + u->offset, false);
}

static int end_unusual(struct td *td, struct td_region *r, uint64_t slots);

/*
 * A fast end whose lock did not match end_key: records to write (end_key
 * poisoned, lock as last seen) or a page update.  The rest of the fast
 * path's checks held already.
 */
static __attribute__((noinline)) int end_keyed(struct td *td,
					       struct td_region *r,
					       uint64_t slots, uint64_t lock)
{
	struct td_region_priv *p = priv(r);
	uint64_t lo, hi;

	/* lock as last seen, a buffer and no named region: a record */
	if (TD_LIKELY((lock | TD_END_KEY_SINK) == td->end_key &&
		      same_epoch(td, p))) {
		td_rdpmc_halves(TD_RDPMC_METRICS, &lo, &hi);
		end_to_record_now(td, p, slots, (uint32_t)lo, (uint32_t)hi);
		return 0;
	}
	return end_unusual(td, r, slots);
}

/*
 * A fast end whose checks failed: misuse, a page update, SLOTS backwards,
 * or records to write (end_key poisoned).  A record of readings takes
 * PERF_METRICS right after the SLOTS reading the checks passed, as begin
 * does (the bench counts those instructions); a named region's record
 * needs counts: both registers are read again, back to back, so that the
 * reading is one instant's (at the cost of these few instructions
 * counted in the region).
 */
static __attribute__((noinline)) int end_unusual(struct td *td,
						 struct td_region *r,
						 uint64_t slots)
{
	uint64_t lo, hi, mlo, mhi, aux;

	if (!fast_end_ok(td, r, slots) || !(td->sink.buf || td->sink.pending))
		return td_end_checked(td, r, NULL);
	td_rdpmc_pair(TD_RDPMC_SLOTS, TD_RDPMC_METRICS, &lo, &hi, &mlo, &mhi);
	aux = refiners_now(td, TD_AUX_NONE);
	td_compiler_barrier();
	slots = td_join48(lo, hi);
	if (slots < td_pm_of(td)->last_raw_slots) /* a reset since the first read */
		return td_end_checked(td, r, NULL);
	td_end_with_reading(td, priv(r), NULL, slots, (mhi << 32) | mlo, aux);
	return 0;
}

/*
 * end_with_result's copy for Ice Lake's cores: INT_MISC.CLEARS_COUNT
 * read next to the others, then the route with both moves (the other
 * cores' copy tests nothing more).
 */
static __attribute__((noinline)) int end_with_result_clears(
	struct td *td, struct td_region *r, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux)
{
	struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if (u->be_on)
		u->be_end = td_pm_clears_now(td);
	td_compiler_barrier();
	return end_result(td, r, res, slots, metrics, aux, false, true);
}

/*
 * end_with_result's other cores: the drop's counter not counting, or
 * level 2 not decoded (Ice Lake's cores, their copy reading
 * INT_MISC.CLEARS_COUNT too), out of line so that the common copy keeps
 * its registers to itself.  The drop's count next to the reads.
 */
static __attribute__((noinline)) int end_with_result_other(
	struct td *td, struct td_region *r, struct td_result *res,
	uint64_t slots, uint64_t metrics)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;
	uint64_t aux = 0;

	if (u->on) {
		aux = td_pm_uop_now(td);
		if (TD_UNLIKELY(u->be_wanted))
			return end_with_result_clears(td, r, res, slots,
						      metrics, aux);
	}
	td_compiler_barrier();
	return end_result(td, r, res, slots, metrics, aux, false, false);
}

/*
 * End with a result on the fast handle: both registers (and
 * INT_MISC.UOP_DROPPING next to them where it counts), then the checks.
 * The common case, the counter counting and level 2 decoded, tested once
 * for the read and the decode.
 */
static __attribute__((noinline)) int end_with_result(struct td *td,
						     struct td_region *r,
						     struct td_result *res)
{
	uint64_t lo, hi, mlo, mhi, slots, metrics, aux;
#if defined(__x86_64__)
	/* res out of RDX, which RDPMC writes, into a register it does not:
	 * R9, not a callee-saved one (a push and a pop) */
	register struct td_result *kept __asm__("r9") = res;
#else
	struct td_result *kept = res;
#endif

	__asm__("" : "+r"(kept));
	td_rdpmc_pair(TD_RDPMC_SLOTS, TD_RDPMC_METRICS, &lo, &hi, &mlo, &mhi);
	/*
	 * Both joined before the third read (volatile: not moved past it),
	 * so that two registers, not four, hold them across it
	 */
	slots = td_join48(lo, hi);
	metrics = (mhi << 32) | mlo;
	__asm__ __volatile__("" : "+r"(slots), "+r"(metrics), "+r"(kept));
	res = kept;
	if (TD_UNLIKELY(!td_pm_of(td)->pm.uop.on_l2))
		return end_with_result_other(td, r, res, slots, metrics);
	/*
	 * td_pm_uop_now, its base loaded after the read (the barrier): one
	 * register fewer across the read, no callee-saved one to push
	 */
	aux = td_rdpmc(td_pm_of(td)->pm.uop.sel);
	td_compiler_barrier();
	aux += td_pm_of(td)->pm.uop.offset;
	return end_result(td, r, res, slots, metrics, aux, true, false);
}

/* td_pm_end_reading with a result: its caller knows it has one. */
__attribute__((noinline)) int td_pm_end_reading_result(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux)
{
	if ((td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED)) ||
	    !same_epoch(td, p))
		return td_end_with_reading(td, p, res, slots, metrics, aux);
	if (TD_LIKELY(td_pm_of(td)->pm.uop.on_l2))
		return end_same_snap(td, p, res, slots, metrics, aux, true,
				     false);
	return end_same_snap(td, p, res, slots, metrics, aux, false,
			     false); /* the hybrids': no clears counter */
}

/*
 * td_pm_end_reading without a result (res NULL): a record, a named
 * region's end.  Its caller's arguments, so that it is entered by a jump
 * (TD_NOIPA: GCC's interprocedural passes would drop res, a constant
 * there, and move every other argument to a new register).
 */
static TD_NOIPA int end_reading_sink(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics, uint64_t aux)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	if ((td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED)) ==
		    TD_END_KEY_SINK &&
	    same_epoch(td, p)) {
		/* the common case (on_l2: no second counter) tested once */
		if (TD_LIKELY(u->on_l2))
			end_to_record(td, p, slots, (uint32_t)metrics,
				      (uint32_t)(metrics >> 32), true, aux,
				      false);
		else
			end_to_record(td, p, slots, (uint32_t)metrics,
				      (uint32_t)(metrics >> 32), u->on, aux,
				      true);
		return 0;
	}
	return td_end_with_reading(td, p, res, slots, metrics, aux);
}

/*
 * The end of a region whose two readings another fast path took and
 * checked as this one checks its own (the hybrid source's guarded reads:
 * its page as last seen, the E-cores quiet): with nothing changed since
 * the begin, this path's routes (the exact decode, a record of readings,
 * the length learnt); else the general one.  No output here, with no
 * frame of its own; the rest in td_pm_end_reading_result and
 * end_reading_sink.
 */
int td_pm_end_reading(struct td *td, struct td_region_priv *p,
		      struct td_result *res, uint64_t slots, uint64_t metrics,
		      uint64_t aux)
{
	uint64_t at;

	if (res)
		return td_pm_end_reading_result(td, p, res, slots, metrics,
						aux);
	if ((td->end_key & (TD_END_KEY_SINK | TD_END_KEY_NAMED)) ||
	    !same_epoch(td, p))
		return end_reading_sink(td, p, res, slots, metrics, aux);
	td_pm_of(td)->last_raw_slots = slots; /* the length, the pair */
	td_store_once(td_pm_of(td)->last_pair_slots, slots); /* unmerged */
	td_pm_of(td)->last_raw_metrics = metrics;
	at = slots + td->snap.base.slots;
	td_policy_close(&td->policy, at);
	td_learn_length(td, p, at - p->snap.base.slots - p->slots);
	p->owner = NULL;
	return 0;
}

/*
 * An end on another handle than this path's: this thread's handle whose
 * source has a fast path of its own goes to its end entry at once
 * (struct td end_entry: the region checked there, before or after the
 * source's first read); anything else to the checks.
 */
static inline __attribute__((always_inline)) int
end_other(struct td *td, struct td_region *r, struct td_result *res)
{
	if (TD_LIKELY(td == td_fast.src_td))
		return td->end_entry(td, r, res);
	return td_end_checked(td, r, res);
}

int td_region_end(struct td *td, struct td_region *r, struct td_result *res)
{
	struct td_region_priv *p = priv(r);
	uint64_t slots, lo, hi, key, at;

	if (TD_UNLIKELY(td != td_fast.td))
		return end_other(td, r, res);
	if (res)
		return end_with_result(td, r, res);
	td_rdpmc_halves(TD_RDPMC_SLOTS, &lo, &hi);
	td_compiler_barrier();
	slots = td_join48(lo, hi);
	if (TD_UNLIKELY(!r || p->owner != td || slots < td_pm_of(td)->last_raw_slots))
		return end_unusual(td, r, slots);
	key = td_load_once(td_pm_of(td)->slots_pc->lock);
	if (TD_UNLIKELY(key != td->end_key))
		return end_keyed(td, r, slots, key);
	/*
	 * No output wanted: learn the length, close.  The length is the
	 * folded reading less the begin's: each of the begin's terms taken
	 * from memory by one subtract (the empty asm keeps the compiler from
	 * grouping them first, a load and an add more).  SLOTS alone was
	 * read: the pair a foreign reset folds stays the last reading of
	 * both (a PERF_METRICS read here would be a fourth RDPMC per pair).
	 * A begin that could not read has no length: its owner is not td
	 * (td_owner_unread), so its end did not come here.
	 */
	td_pm_of(td)->last_raw_slots = slots;
	at = slots + td->snap.base.slots;
	td_policy_close(&td->policy, at);
	__asm__("" : "+r"(at));
	td_learn_length(td, p, at - p->snap.base.slots - p->slots);
	p->owner = NULL;
	return 0;
}
