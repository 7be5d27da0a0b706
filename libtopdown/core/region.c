/* SPDX-License-Identifier: MIT */
/*
 * td_region_begin / td_region_end: the hot path.
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
 * handle (td_fast_td: not NULL, fast-capable, this thread, this process,
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

#include "decode.h"
#include "arch.h"
#include "barrier.h"
#include "source.h"

#define TD_RDPMC_SLOTS   ((1u << 30) | 3)
#define TD_RDPMC_METRICS (1u << 29)
/* In a region's copy of snap.resets: the begin could not read. */
#define TD_BEGIN_UNREAD  0x80000000u

/* The private layout of struct td_region (256 bytes, ABI). */
struct td_region_priv {
	const struct td *owner;   /* non-NULL while begun */
	uint64_t key;             /* td->epoch_hi | lock at the copy; 0: none */
	uint64_t slots;           /* raw SLOTS at begin (0 if folded) */
	union {                   /* raw PERF_METRICS at begin */
		uint64_t metrics;
		uint32_t metrics_half[2]; /* x86: little endian */
	};
	uint64_t reset_at;        /* policy threshold for the next begin, or
				     its error side alone after a fast end */
	uint64_t len;             /* slots of its last measured call; 0:
				     unknown */
	struct td_snap snap;      /* td->snap at begin */
};

_Static_assert(sizeof(struct td_region_priv) <= sizeof(struct td_region),
	       "struct td_region too small for its private layout");

static struct td_region_priv *priv(struct td_region *r)
{
	return (struct td_region_priv *)(void *)r;
}

/* SLOTS is fixed counter 3, 48 bits wide. */
static inline uint64_t td_join48(uint64_t lo, uint64_t hi)
{
	return (hi << 48 >> 16) | lo; /* bits 32-47 from hi */
}

/* Called once by td_open: may begin/end take the fast path? */
void td_fast_path_setup(struct td *td)
{
	struct td_snap before = td->snap;

	/*
	 * Fixed selectors are RDPMCed before any check, which is safe only
	 * where the source says every CPU has them (td->fast_capable).
	 */
	td->fast = td->path == TD_PATH_RDPMC && !td->clear_mode &&
		   td->fast_capable && TD_HAVE_USER_READ &&
		   td->policy.kind != TD_RESET_ALWAYS &&
		   td->slots_pc->index == TD_RDPMC_SLOTS + 1 &&
		   td->metric_pc->index == TD_RDPMC_METRICS + 1;
	td_snap_publish(td, &before);
	if (td->fast)
		td_fast_claim(td);
}

/* ---- slow path ----------------------------------------------------------- */

/*
 * The length the region is expected to have, for the budget: its last
 * length, but no more than its error side was last learnt from (fast
 * ends learn only that, in 2^16 slots; a slow end may have joined the
 * budget's threshold to it).  Either bound errs on the short side.
 */
static uint64_t expected_length(const struct td_policy *pol,
				const struct td_region_priv *p)
{
	uint64_t from_err = pol->k_q16 ? p->reset_at / pol->k_q16 << 16
				       : p->len;

	return p->len < from_err ? p->len : from_err;
}

/*
 * Reset before the begin reading when the policy says so.  Enclosing
 * regions keep their snapshots in folded units and are unaffected; the
 * user-mode tail of the ioctl wrapper after the kernel's reset is charged
 * to them, the head before it (a few dozen slots) is lost.
 */
static bool reset_due(struct td *td, const struct td_region_priv *p,
		      uint64_t raw_slots)
{
	const struct td_policy *pol = &td->policy;

	if (pol->kind == TD_RESET_ALWAYS)
		return true;
	if (p->owner || p->key || p->reset_at) /* called before */
		return raw_slots > p->reset_at &&
		       td_policy_budget_allows(&td->policy, raw_slots,
					       expected_length(pol, p));
	return td_policy_reset_due(&td->policy, raw_slots, 0);
}

static void maybe_reset(struct td *td, const struct td_region_priv *p,
			struct td_sample *s)
{
	if (!td->src->reset || td->path != TD_PATH_RDPMC || td->clear_mode ||
	    !s->valid || !reset_due(td, p, s->raw_slots))
		return;
	struct td_snap saved = td->snap;
	uint64_t fold_slots = s->raw_slots, fold_metrics = s->raw_metrics;

	if (td->src->reset(td, s) < 0)
		return;
	td_policy_charge(&td->policy);
	struct td_counts folded_base = td->snap.base;

	td_take_sample(td, s);
	/*
	 * _perf_event_reset zeroes the hardware only through pmu->read of an
	 * active event: if the group was switched out between our reading
	 * and the ioctl, nothing was zeroed and the schedule-in restored the
	 * old values.  SLOTS not below the fold reading says so: undo the
	 * fold, or those slots would be counted twice.  What the second
	 * reading itself added to the base stays: on hybrid parts, the
	 * E-cores' counts of the stint that kept the group switched out.
	 */
	if (s->valid && s->raw_slots >= fold_slots) {
		struct td_snap folded = td->snap;

		td->snap.base = saved.base;
		td->snap.base.slots += folded.base.slots - folded_base.slots;
		for (unsigned i = 0; i < TD_NR_COUNTS; i++)
			td->snap.base.cat[i] +=
				folded.base.cat[i] - folded_base.cat[i];
		td->snap.qerr_base = saved.qerr_base;
		/* but the kernel's counts were zeroed: they pair no more */
		td->kcount_ok = false;
		td->last_raw_slots = fold_slots;
		td->last_raw_metrics = fold_metrics;
		td->resets--;
		td_policy_refund(&td->policy);
		td_snap_publish(td, &folded);
		td_take_sample(td, s);
	}
}

static void store_begin(struct td *td, struct td_region_priv *p,
			const struct td_sample *s)
{
	p->snap = td->snap;
	p->snap.qerr_base -= s->qself; /* its own error is the region's */
	p->slots = s->raw_slots; /* the raw reading: the error scale */
	p->metrics = s->raw_slots ? s->raw_metrics : 0;
	/* Only the fast path reads what the key vouches for. */
	p->key = td->fast && s->valid ? td->epoch_hi | td->last_lock : 0;
	if (!s->raw_slots) /* a folded reading: read(2), metrics-clear, ... */
		p->snap.base = s->c;
	if (!s->valid) {
		p->snap.resets |= TD_BEGIN_UNREAD;
	}
	p->owner = td;
}

static int slow_begin(struct td *td, struct td_region_priv *p)
{
	struct td_sample s;
	int err = td_take_sample(td, &s);

	if (TD_UNLIKELY(err < 0)) {
		p->owner = NULL;
		return err;
	}
	if (td->policy.kind != TD_RESET_NEVER)
		maybe_reset(td, p, &s);
	store_begin(td, p, &s);
	return 0;
}

/* Anything but this thread's fast handle and a closed region. */
static __attribute__((noinline)) int begin_checked(struct td *td,
						   struct td_region *r)
{
	if (!td || !r)
		return -EINVAL;
	if (!td_owner_ok(td))
		return td_owner_error(td);
	if (priv(r)->owner)
		return -EALREADY;
	return slow_begin(td, priv(r));
}

/* ---- the begin/end pair -------------------------------------------------- */

int td_region_begin(struct td *td, struct td_region *r)
{
	struct td_region_priv *p = priv(r);
	uint64_t slots, lo, hi;

	if (TD_UNLIKELY(td != td_fast_td || !r || p->owner))
		return begin_checked(td, r);
	if (TD_UNLIKELY((td_load_once(td->slots_pc->lock) | td->epoch_hi) !=
			p->key))
		return slow_begin(td, p);
	td_compiler_barrier();
	td_rdpmc_halves(TD_RDPMC_SLOTS, &lo, &hi);
	slots = td_join48(lo, hi);
	if (TD_UNLIKELY((slots > p->reset_at && slots > td->policy.budget_at) ||
			slots < td->last_raw_slots))
		return slow_begin(td, p);
	td->last_raw_slots = slots;
	p->slots = slots;
	p->owner = td;
	td_compiler_barrier();
	td_rdpmc_halves(TD_RDPMC_METRICS, &lo, &hi);
	p->metrics_half[0] = (uint32_t)lo;
	p->metrics_half[1] = (uint32_t)hi;
	return 0;
}

/*
 * A region that cannot be trusted: the begin could not read, the end
 * could not read, or an untrusted event (foreign reset, descheduling,
 * unreadable reading) happened in between.
 */
static bool region_reliable(const struct td *td,
			    const struct td_region_priv *p,
			    const struct td_sample *s)
{
	return s->valid && !(p->snap.resets & TD_BEGIN_UNREAD) &&
	       td->snap.untrusted == p->snap.untrusted;
}

static uint32_t region_resets(const struct td *td,
			      const struct td_region_priv *p)
{
	return (td->snap.resets - p->snap.resets) & TD_SNAP_RESETS_MASK;
}

/*
 * What the policy learns from a region that ended with a reading: its
 * length (the next begin's error side) and its slots, measured (what the
 * reset budget is a share of).
 */
static void learn_length(struct td *td, struct td_region_priv *p,
			 uint64_t len)
{
	uint64_t by_err = td_policy_by_err(&td->policy, len);

	p->len = len;
	/* with the budget's threshold joined: one compare at the next begin */
	p->reset_at = by_err > td->policy.budget_at ? by_err
						     : td->policy.budget_at;
	td->policy.recent_len = len;
	td->policy.measured += len;
}

/* Returns the result flags the source adds (its delta operation). */
static unsigned region_delta(const struct td *td,
			     const struct td_region_priv *p,
			     const struct td_sample *s, struct td_delta *d)
{
	struct td_counts begin = p->snap.base;
	unsigned flags;

	td_counts_add(&begin, p->slots, p->metrics);
	flags = td->src->delta(td, &begin, &s->c, d);
	d->qerr = s->qerr_base + s->raw_slots - p->snap.qerr_base + p->slots;
	return flags;
}

static void fill_result(const struct td *td, const struct td_region_priv *p,
			const struct td_sample *s, struct td_result *res)
{
	struct td_delta d;
	unsigned flags = region_delta(td, p, s, &d);

	td_decode_src(&d, flags & TD_RESULT_L2, flags, res);
	res->flags |= flags & ~TD_RESULT_L2;
	res->resets = region_resets(td, p);
	if (td->path == TD_PATH_READ)
		res->flags |= TD_RESULT_READ_PATH;
	if (!region_reliable(td, p, s) ||
	    !td->src->consistent(td, &d) || (flags & TD_RESULT_UNRELIABLE))
		td_record_mark_unreliable(res);
}

static void emit_record(struct td *td, const struct td_region_priv *p,
			const struct td_sample *s)
{
	struct td_record rec;
	struct td_delta d;
	unsigned flags = region_delta(td, p, s, &d);

	rec.slots = d.slots > 0 ? (uint64_t)d.slots : 0;
	memcpy(rec.cat, d.cat, sizeof(rec.cat));
	rec.qerr = d.qerr;
	rec.flags = flags; /* _L2 where this region measured it */
	if (td->path == TD_PATH_READ)
		rec.flags |= TD_RESULT_READ_PATH;
	if (!region_reliable(td, p, s) || !td->src->consistent(td, &d))
		rec.flags |= TD_RESULT_UNRELIABLE;
	rec.resets = region_resets(td, p);
	rec.name = NULL;
	memset(rec.reserved, 0, sizeof(rec.reserved));
	td_sink_put(td, &rec, flags & TD_RESULT_MULTIPLEXED ? d.l2raw : NULL);
}

/* Everything an end does once it has its reading. */
static void finish_end(struct td *td, struct td_region_priv *p,
		       const struct td_sample *s, struct td_result *res)
{
	if (s->valid && !(p->snap.resets & TD_BEGIN_UNREAD))
		learn_length(td, p, s->c.slots - (p->snap.base.slots + p->slots));
	if (res)
		fill_result(td, p, s, res);
	if (td->sink.buf || td->sink.pending)
		emit_record(td, p, s);
	p->owner = NULL;
}

/* Anything but the plain fast end: own frame, out of the hot path. */
static __attribute__((noinline)) int slow_end(struct td *td,
					      struct td_region *r,
					      struct td_result *res)
{
	struct td_region_priv *p = priv(r);
	struct td_sample s;
	int err;

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	if (TD_UNLIKELY(!p->owner))
		return -ESRCH;
	if (TD_UNLIKELY(p->owner != td))
		return -EXDEV;
	err = td_take_sample(td, &s);
	if (TD_UNLIKELY(err < 0))
		return err;
	finish_end(td, p, &s, res);
	return 0;
}

/*
 * A fast reading of both registers that passed its checks, with
 * somewhere to go: a result, a record.
 */
static __attribute__((noinline)) int end_with_reading(
	struct td *td, struct td_region_priv *p, struct td_result *res,
	uint64_t slots, uint64_t metrics)
{
	struct td_sample s;

	td->last_raw_slots = slots;
	td->last_raw_metrics = metrics;
	s.valid = true;
	s.raw_slots = slots;
	s.raw_metrics = metrics;
	s.unsched = td->last_unsched;
	s.qerr_base = td->snap.qerr_base;
	s.c = td->snap.base;
	td_counts_add(&s.c, slots, metrics);
	finish_end(td, p, &s, res);
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
	       td_load_once(td->slots_pc->lock) == td->last_lock &&
	       slots >= td->last_raw_slots;
}

/*
 * The common end with a result: nothing changed the handle's state since
 * the begin (same epoch: no fold, no schedule-in, no untrusted event, no
 * reset, so the region is reliable unless its own delta says otherwise)
 * and no record is wanted.
 */
/* The rare end of end_same_snap: its own frame, a tail call there. */
static __attribute__((noinline)) int end_inconsistent(struct td_result *res)
{
	td_record_mark_unreliable(res);
	return 0;
}

/* Readings too large for the exact doubles of decode.h: integers. */
static __attribute__((noinline)) int end_decode_wide(uint64_t s0, uint64_t m0,
						     uint64_t s1, uint64_t m1,
						     bool l2,
						     struct td_result *res)
{
	if (!td_decode_readings_scalar(s0, m0, s1, m1, l2, res))
		td_record_mark_unreliable(res);
	return 0;
}

static int end_same_snap(struct td *td, struct td_region_priv *p,
			 struct td_result *res, uint64_t slots,
			 uint64_t metrics)
{
	bool l2 = td->pmu.nr_metrics == TD_NR_METRICS;

	td->last_raw_slots = slots;
	td->last_raw_metrics = metrics;
	learn_length(td, p, slots - p->slots);
	p->owner = NULL;
	res->resets = 0;
	/*
	 * Both readings taken under the same version of the handle's state:
	 * the folded bases cancel, and so do the error scales at folds.
	 * Last, so that marking a rare inconsistent delta is a tail call.
	 */
	if (TD_UNLIKELY(!td_decode_readings_exact(p->slots, slots)))
		return end_decode_wide(p->slots, p->metrics, slots, metrics, l2,
				       res);
	if (TD_UNLIKELY(!td_decode_readings_sse2(p->slots, p->metrics, slots,
						 metrics, l2, res)))
		return end_inconsistent(res);
	return 0;
}

/* End with a result: both registers read at once, then checked. */
static inline __attribute__((always_inline)) int end_result(
	struct td *td, struct td_region *r, struct td_result *res,
	uint64_t slots, uint64_t metrics)
{
	struct td_region_priv *p = priv(r);

	if (!fast_end_ok(td, r, slots))
		return slow_end(td, r, res);
	if (TD_LIKELY(same_epoch(td, p) && !td->sink.buf && !td->sink.pending))
		return end_same_snap(td, p, res, slots, metrics);
	return end_with_reading(td, p, res, slots, metrics);
}

/*
 * Records attached, nothing folded since the begin: the record keeps the
 * two boundary readings and decodes nothing (record.c does, later, as
 * end_same_snap does); the policy learns the length as a fast end
 * without output does.  A full buffer counts the record dropped.
 */
static void end_to_record(struct td *td, struct td_region_priv *p,
			  uint64_t slots, uint32_t metrics_lo,
			  uint32_t metrics_hi)
{
	struct td_sink *k = &td->sink;
	uint64_t len = (slots - p->slots) >> 16;
	struct td_record *rec;

	td->last_raw_slots = slots;
	td->policy.measured_q16 += len;
	p->reset_at = len * td->policy.k_q16;
	p->owner = NULL;
	rec = k->next;
	if (TD_UNLIKELY(rec == k->end)) {
		k->dropped++;
		return;
	}
	k->next = rec + 1;
	rec->slots = slots;
	rec->qerr = p->slots;
	rec->cat[0] = (int64_t)p->metrics;
	/* PERF_METRICS at end as RDPMC gave it: two halves, little endian */
	memcpy((char *)&rec->cat[1], &metrics_lo, 4);
	memcpy((char *)&rec->cat[1] + 4, &metrics_hi, 4);
	rec->flags = k->readings_flags; /* resets 0, name NULL: finish_readings */
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
		end_to_record(td, p, slots, (uint32_t)lo, (uint32_t)hi);
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
	uint64_t lo, hi, mlo, mhi;

	if (!fast_end_ok(td, r, slots) || !(td->sink.buf || td->sink.pending))
		return slow_end(td, r, NULL);
	td_rdpmc_pair(TD_RDPMC_SLOTS, TD_RDPMC_METRICS, &lo, &hi, &mlo, &mhi);
	td_compiler_barrier();
	slots = td_join48(lo, hi);
	if (slots < td->last_raw_slots) /* a reset since the first read */
		return slow_end(td, r, NULL);
	end_with_reading(td, priv(r), NULL, slots, (mhi << 32) | mlo);
	return 0;
}

/* End with a result on the fast handle: both registers, then the checks. */
static __attribute__((noinline)) int end_with_result(struct td *td,
						     struct td_region *r,
						     struct td_result *res)
{
	uint64_t lo, hi, mlo, mhi;

	td_rdpmc_pair(TD_RDPMC_SLOTS, TD_RDPMC_METRICS, &lo, &hi, &mlo, &mhi);
	td_compiler_barrier();
	return end_result(td, r, res, td_join48(lo, hi), (mhi << 32) | mlo);
}

int td_region_end(struct td *td, struct td_region *r, struct td_result *res)
{
	struct td_region_priv *p = priv(r);
	uint64_t slots, lo, hi, len, key;

	if (TD_UNLIKELY(td != td_fast_td))
		return slow_end(td, r, res);
	if (res)
		return end_with_result(td, r, res);
	td_rdpmc_halves(TD_RDPMC_SLOTS, &lo, &hi);
	td_compiler_barrier();
	slots = td_join48(lo, hi);
	if (TD_UNLIKELY(!r || p->owner != td || slots < td->last_raw_slots))
		return end_unusual(td, r, slots);
	key = td_load_once(td->slots_pc->lock);
	if (TD_UNLIKELY(key != td->end_key))
		return end_keyed(td, r, slots, key);
	/*
	 * No output wanted: learn the length for the policy's error side
	 * and count it measured, in whole 2^16 slots (the shift the error
	 * side makes anyway), close.
	 */
	td->last_raw_slots = slots;
	len = td->snap.base.slots + slots - (p->snap.base.slots + p->slots);
	len >>= 16;
	td->policy.measured_q16 += len;
	p->reset_at = len * td->policy.k_q16;
	p->owner = NULL;
	return 0;
}
