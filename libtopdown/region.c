/* SPDX-License-Identifier: MIT */
/*
 * td_region_begin / td_region_end: the hot path.
 *
 * A region keeps the handle's folded counters as they were at its begin
 * plus the raw reading (SLOTS, PERF_METRICS) taken there, so regions nest
 * and interleave freely and survive any number of resets between their
 * ends (struct td_counts).  Each end has two paths:
 *
 * - the fast path, taken while nothing happened that needs thought: no
 *   user page update since the handle's previous reading (so no schedule-
 *   in to account for, and the index the slow path validated still holds:
 *   the kernel writes index only in perf_event_update_userpage, which
 *   bumps lock), SLOTS not backwards, no reset due.  It RDPMCs the fixed
 *   selectors the kernel publishes for SLOTS (1<<30 | 3) and PERF_METRICS
 *   (1<<29), checked at open, and validates after the reads, so that as
 *   little as possible of the library runs between begin's last RDPMC and
 *   end's first, inside the caller's measured window;
 * - the slow path (reading.c): seqlock with index check, hybrid guard,
 *   metrics-clear mode, read(2), foreign resets, the reset policy.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "internal.h"

#define TD_RDPMC_SLOTS   ((1u << 30) | 3)
#define TD_RDPMC_METRICS (1u << 29)
#define TD_UNSCHED_UNKNOWN UINT64_MAX /* begin could not read */

/* The private layout of struct td_region (128 bytes, ABI). */
struct td_region_priv {
	const struct td *owner;   /* non-NULL while begun */
	uint32_t foreign_resets;  /* td->foreign_resets at begin (mod 2^32) */
	uint32_t resets;          /* td->resets at begin (mod 2^32) */
	uint64_t slots, metrics;  /* raw reading at begin (0, 0 if folded) */
	uint64_t qbase;           /* td->qerr_base at begin */
	uint64_t unsched;         /* time_enabled - time_running at begin */
	uint64_t reset_at;        /* policy threshold for the next begin */
	struct td_counts start;   /* folded counters at begin */
};

_Static_assert(sizeof(struct td_region_priv) <= sizeof(struct td_region),
	       "struct td_region too small for its private layout");

static struct td_region_priv *priv(struct td_region *r)
{
	return (struct td_region_priv *)(void *)r;
}

/*
 * Fixed selectors are RDPMCed before any check, which is safe only where
 * every CPU has fixed counter 3 and PERF_METRICS: not on hybrid parts
 * (cpu_core), whose E-cores fault on them.
 */
static bool td_fast_path_allowed(const struct td *td)
{
	return !td->pcores && strcmp(td->pmu.name, "cpu") == 0;
}

/* Called once by td_open: may begin/end take the fast path? */
void td_fast_path_setup(struct td *td)
{
	bool ok = td->path == TD_PATH_RDPMC && !td->clear_mode &&
		  TD_HAVE_USER_READ && td->policy.kind != TD_RESET_ALWAYS &&
		  td_fast_path_allowed(td) &&
		  td->slots_pc->index == TD_RDPMC_SLOTS + 1 &&
		  td->metric_pc->index == TD_RDPMC_METRICS + 1;

	td->fast_pc = ok ? td->slots_pc : NULL;
}

/* ---- slow path ----------------------------------------------------------- */

/*
 * Reset before the begin reading when the policy says so.  Enclosing
 * regions keep their snapshots in folded units and are unaffected; the
 * user-mode tail of the ioctl wrapper after the kernel's reset is charged
 * to them, the head before it (a few dozen slots) is lost.
 */
static uint64_t reset_threshold(const struct td *td,
				const struct td_region_priv *p)
{
	if (td->policy.kind == TD_RESET_ALWAYS)
		return 0;
	if (p->reset_at) /* this region's own previous length */
		return p->reset_at;
	if (td->policy.recent_reset_at) /* the handle's last region */
		return td->policy.recent_reset_at;
	return td_policy_threshold(&td->policy, 0);
}

static void maybe_reset(struct td *td, const struct td_region_priv *p,
			struct td_sample *s)
{
	uint64_t at = reset_threshold(td, p);

	if (td->path != TD_PATH_RDPMC || td->clear_mode || !s->valid ||
	    s->raw_slots <= at)
		return;
	struct td_counts base = td->base;
	uint64_t qerr_base = td->qerr_base, fold_slots = s->raw_slots;
	uint64_t fold_metrics = s->raw_metrics;

	if (td_fold_and_reset(td, s) < 0)
		return;
	td_take_sample(td, s);
	/*
	 * _perf_event_reset zeroes the hardware only through pmu->read of an
	 * active event: if the group was switched out between our reading
	 * and the ioctl, nothing was zeroed and the schedule-in restored the
	 * old values.  SLOTS not below the fold reading says so: undo the
	 * fold, or those slots would be counted twice.
	 */
	if (s->valid && s->raw_slots >= fold_slots) {
		td->base = base;
		td->qerr_base = qerr_base;
		td->last_raw_slots = fold_slots;
		td->last_raw_metrics = fold_metrics;
		td->resets--;
		td_take_sample(td, s);
	}
}

static void store_begin(struct td *td, struct td_region_priv *p,
			const struct td_sample *s)
{
	p->start = s->c;
	p->slots = 0;
	p->metrics = 0;
	if (s->raw_slots) { /* keep the raw reading: the error scale */
		p->slots = s->raw_slots;
		p->metrics = s->raw_metrics;
		p->start = td->base;
	}
	p->qbase = s->qerr_base;
	p->unsched = s->valid ? s->unsched : TD_UNSCHED_UNKNOWN;
	p->foreign_resets = (uint32_t)td->foreign_resets;
	p->resets = (uint32_t)td->resets;
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

/* ---- the begin/end pair -------------------------------------------------- */

int td_region_begin(struct td *td, struct td_region *r)
{
	const struct perf_event_mmap_page *pc;
	struct td_region_priv *p = priv(r);
	uint64_t slots, metrics;

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	if (TD_UNLIKELY(p->owner))
		return -EALREADY;
	pc = td->fast_pc;
	if (TD_UNLIKELY(!pc))
		return slow_begin(td, p);
	/* Everything that does not need the reading, before it. */
	p->owner = td;
	p->start = td->base;
	p->qbase = td->qerr_base;
	p->unsched = td_load_once(pc->time_enabled) -
		     td_load_once(pc->time_running);
	p->foreign_resets = (uint32_t)td->foreign_resets;
	p->resets = (uint32_t)td->resets;
	slots = td_rdpmc(TD_RDPMC_SLOTS);
	metrics = td_rdpmc(TD_RDPMC_METRICS);
	td_compiler_barrier();
	slots &= TD_SLOTS_MASK;
	if (TD_UNLIKELY(td_load_once(pc->lock) != td->last_lock ||
			slots < td->last_raw_slots || slots > p->reset_at))
		return slow_begin(td, p);
	td->last_raw_slots = slots;
	td->last_raw_metrics = metrics;
	p->slots = slots;
	p->metrics = metrics;
	return 0;
}

static bool region_reliable(const struct td *td,
			    const struct td_region_priv *p,
			    const struct td_sample *s)
{
	return s->valid && p->unsched != TD_UNSCHED_UNKNOWN &&
	       (uint32_t)td->foreign_resets == p->foreign_resets &&
	       s->unsched == p->unsched;
}

/* Returns the result flags the source adds (td_source_delta). */
static unsigned region_delta(const struct td *td,
			     const struct td_region_priv *p,
			     const struct td_sample *s, struct td_delta *d)
{
	struct td_counts begin = p->start;
	unsigned flags;

	td_counts_add(&begin, p->slots, p->metrics);
	flags = td_source_delta(td, &begin, &s->c, d);
	d->qerr = s->qerr_base + s->raw_slots - p->qbase + p->slots;
	return flags;
}

/*
 * The consistency test is about PERF_METRICS quantisation; ordinary
 * counters (td->gen) are exact, and their formulas may legitimately give
 * a small negative category over a short region (in-flight skew).
 */
static bool delta_consistent(const struct td *td, const struct td_delta *d)
{
	return td->gen ||
	       td_delta_consistent(d, td->pmu.nr_metrics == TD_NR_METRICS);
}

static void fill_result(const struct td *td, const struct td_region_priv *p,
			const struct td_sample *s, struct td_result *res)
{
	struct td_delta d;
	unsigned flags = region_delta(td, p, s, &d);

	td_decode(&d, td->pmu.nr_metrics == TD_NR_METRICS, res);
	res->flags |= flags;
	res->resets = (uint32_t)td->resets - p->resets;
	if (td->path == TD_PATH_READ)
		res->flags |= TD_RESULT_READ_PATH;
	if (!region_reliable(td, p, s) ||
	    !delta_consistent(td, &d))
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
	rec.flags = td->pmu.nr_metrics == TD_NR_METRICS ? TD_RESULT_L2 : 0;
	rec.flags |= flags;
	if (td->path == TD_PATH_READ)
		rec.flags |= TD_RESULT_READ_PATH;
	if (!region_reliable(td, p, s) ||
	    !delta_consistent(td, &d))
		rec.flags |= TD_RESULT_UNRELIABLE;
	rec.resets = (uint32_t)td->resets - p->resets;
	rec.name = NULL;
	td_sink_put(td, &rec);
}

/* Everything an end does once it has its reading. */
static void finish_end(struct td *td, struct td_region_priv *p,
		       const struct td_sample *s, struct td_result *res)
{
	if (s->valid && p->unsched != TD_UNSCHED_UNKNOWN) {
		uint64_t len = s->c.slots - (p->start.slots + p->slots);
		p->reset_at = td_policy_threshold(&td->policy, len);
		td->policy.recent_reset_at = p->reset_at;
	}
	if (res)
		fill_result(td, p, s, res);
	if (td->sink.buf || td->sink.pending)
		emit_record(td, p, s);
	p->owner = NULL;
}

/* Anything but the plain fast end: own frame, out of the hot path. */
static __attribute__((noinline)) int slow_end(struct td *td,
					      struct td_region_priv *p,
					      struct td_result *res)
{
	struct td_sample s;
	int err;

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

/* A fast reading that has somewhere to go: result, record. */
static __attribute__((noinline)) int end_with_output(struct td *td,
						     struct td_region_priv *p,
						     struct td_result *res,
						     uint64_t slots,
						     uint64_t metrics)
{
	const struct perf_event_mmap_page *pc = td->fast_pc;
	struct td_sample s;

	s.valid = true;
	s.raw_slots = slots;
	s.raw_metrics = metrics;
	s.unsched = td_load_once(pc->time_enabled) -
		    td_load_once(pc->time_running);
	s.qerr_base = td->qerr_base;
	s.c = td->base;
	td_counts_add(&s.c, slots, metrics);
	finish_end(td, p, &s, res);
	return 0;
}

int td_region_end(struct td *td, struct td_region *r, struct td_result *res)
{
	const struct perf_event_mmap_page *pc;
	struct td_region_priv *p = priv(r);
	uint64_t slots, metrics, len;

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	pc = td->fast_pc;
	if (TD_UNLIKELY(!pc || p->owner != td))
		return slow_end(td, p, res);
	slots = td_rdpmc(TD_RDPMC_SLOTS);
	metrics = td_rdpmc(TD_RDPMC_METRICS);
	td_compiler_barrier();
	slots &= TD_SLOTS_MASK;
	if (TD_UNLIKELY(td_load_once(pc->lock) != td->last_lock ||
			slots < td->last_raw_slots))
		return slow_end(td, p, res);
	td->last_raw_slots = slots;
	td->last_raw_metrics = metrics;
	if (res || td->sink.buf || td->sink.pending)
		return end_with_output(td, p, res, slots, metrics);
	/* No output wanted: learn the length for the policy, close. */
	len = td->base.slots + slots - (p->start.slots + p->slots);
	p->reset_at = td_policy_threshold_auto(&td->policy, len);
	td->policy.recent_reset_at = p->reset_at;
	p->owner = NULL;
	return 0;
}
