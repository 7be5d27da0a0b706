/* SPDX-License-Identifier: MIT */
/*
 * The slow path of td_region_begin / td_region_end: a reading through
 * the handle's source, the reset the policy asks for, the region's copy
 * of the handle's state, and the end's result and record through the
 * source's delta (the sources keep the fast paths).
 */
#include <errno.h>
#include <string.h>

#include "begin_state.h"
#include "source.h"

/*
 * Reset before the begin reading when the policy says so.  Enclosing
 * regions keep their snapshots in folded units and are unaffected; the
 * user-mode tail of the ioctl wrapper after the kernel's reset is charged
 * to them, the head before it (a few dozen slots) is lost.
 */
static bool reset_due(struct td *td, const struct td_region_priv *p,
		      const struct td_sample *s)
{
	const struct td_policy *pol = &td->policy;

	if (pol->kind == TD_RESET_ALWAYS)
		return true;
	if (!p->len) /* never ended with a reading: its length unknown */
		return td_policy_reset_due(&td->policy, s->raw_slots,
					   s->c.slots);
	return s->raw_slots > td_policy_by_err(pol, p->len) &&
	       td_policy_budget_allows(&td->policy, s->c.slots, s->raw_slots,
				       p->len);
}

static void maybe_reset(struct td *td, const struct td_region_priv *p,
			struct td_sample *s)
{
	if (!td->src->reset || td->path != TD_PATH_RDPMC || !s->valid ||
	    !reset_due(td, p, s))
		return;
	td_policy_charge(&td->policy);
	if (td->src->reset(td, s) <= 0) /* none made, or undone */
		td_policy_refund(&td->policy);
}

/*
 * Folded SLOTS at the sample, or at the handle's last reading where the
 * sample could not read: where a stretch of open regions starts or ends.
 */
static uint64_t sample_at(const struct td *td, const struct td_sample *s)
{
	return s->valid ? s->c.slots : td->snap.base.slots + s->raw_at_last;
}

/*
 * A source with its own fast path that keeps a region's begin as counter
 * values (begin_counts); without begin_counts the begin is the source's
 * raw reading (raw SLOTS and raw), as on the fast path the entry points
 * inline.
 */
static inline bool begins_as_values(const struct td *td)
{
	return td->src_fast && td->src->begin_counts;
}

static void store_begin(struct td *td, struct td_region_priv *p,
			const struct td_sample *s)
{
	p->snap = td->snap;
	p->snap.qerr_base -= s->qself; /* its own error is the region's */
	p->slots = s->raw_slots; /* the raw reading: the error scale */
	p->raw = s->raw_slots ? s->raw : 0;
	p->aux = s->aux;
	p->aux2 = s->aux2;
	/*
	 * Only the fast path reads what the key vouches for; where the
	 * policy resets, a region whose length is unknown begins on the slow
	 * path until it has one (its budget: td_policy_reset_due).
	 */
	p->key = (td->fast || td->src_fast) && s->valid &&
			 (p->len || !td->policy.track)
			 ? td->epoch_hi | td->last_lock : 0;
	if (begins_as_values(td)) /* as the source's fast begin keeps them */
		memcpy(td_begin_values(p), s->values, sizeof(s->values));
	else if (!s->raw_slots) { /* a reading the source folded at once */
		p->snap.base = s->c;
		if (td->nr_more) /* its further words (internal.h) */
			memcpy(p->more, s->more,
			       td->nr_more * sizeof(s->more[0]));
	}
	if (td->policy.track)
		td_policy_open(&td->policy, sample_at(td, s));
	p->owner = td;
	if (!s->valid) { /* its end: the general route (td_owner_unread) */
		p->snap.resets |= TD_BEGIN_UNREAD;
		p->owner = td_owner_unread(td);
	}
}

int td_slow_begin(struct td *td, struct td_region_priv *p)
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

/*
 * Anything the entry point's fast ways did not take (this thread's fast
 * handle and a closed region: the inlined fast path, or the source's
 * own fast begin, struct td src_begin): the checks.
 */
int td_begin_checked(struct td *td, struct td_region *r)
{
	if (!td || !r)
		return -EINVAL;
	if (!td_owner_ok(td))
		return td_owner_error(td);
	if (priv(r)->owner)
		return -EALREADY;
	if (td->src_fast)
		return td->src->fast_begin(td, priv(r));
	return td_slow_begin(td, priv(r));
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

/* Returns the result flags the source adds (its delta operation). */
static unsigned region_delta(const struct td *td,
			     const struct td_region_priv *p,
			     const struct td_sample *s, struct td_delta *d)
{
	unsigned flags;

	d->aux = p->aux == TD_AUX_NONE || s->aux == TD_AUX_NONE
			 ? TD_AUX_LOST
			 : (int64_t)(s->aux - p->aux);
	d->aux2 = TD_AUX_LOST; /* a count few sources have: one test */
	if (TD_UNLIKELY(s->aux2 != TD_AUX_NONE) && p->aux2 != TD_AUX_NONE)
		d->aux2 = (int64_t)(s->aux2 - p->aux2);
	d->qerr = 0; /* the source's own error, if any (source.h delta) */
	flags = td->src->delta(td, &p->snap.base, p->slots, p->raw, &s->c, d);
	d->qerr += s->qerr_base + s->raw_slots - p->snap.qerr_base + p->slots;
	return flags;
}

/*
 * The result of a region's delta, but whether it is to be trusted;
 * inlined, so that the general route's end keeps the code it had.
 */
static inline __attribute__((always_inline)) void
decode_delta(const struct td *td, const struct td_region_priv *p,
	     const struct td_delta *d, unsigned flags, struct td_result *res)
{
	td_decode_src(d, flags & TD_RESULT_L2, flags, res);
	res->flags |= flags & ~TD_RESULT_L2;
	res->resets = region_resets(td, p);
	if (td->path == TD_PATH_READ)
		res->flags |= TD_RESULT_READ_PATH;
}

/* Could the source's delta, with its flags, have come from counting? */
static inline bool delta_trusted(const struct td *td, const struct td_delta *d,
				 unsigned flags)
{
	return td->src->consistent(td, d) && !(flags & TD_RESULT_UNRELIABLE);
}

static void fill_result(const struct td *td, const struct td_region_priv *p,
			const struct td_sample *s, struct td_result *res)
{
	struct td_delta d;
	unsigned flags = region_delta(td, p, s, &d);

	decode_delta(td, p, &d, flags, res);
	/* more than levels 1 and 2: general route only (source.h) */
	if (td->src->decode_more)
		td->src->decode_more(td, &d, res);
	if (!region_reliable(td, p, s) || !delta_trusted(td, &d, flags))
		td_record_mark_unreliable(res);
}

void td_delta_result(const struct td *td, const struct td_region_priv *p,
		     bool reliable, const struct td_delta *d, unsigned flags,
		     struct td_result *res)
{
	decode_delta(td, p, d, flags, res);
	if (!reliable || !delta_trusted(td, d, flags))
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
	if (td->src->record_more)
		td->src->record_more(td, &d, &rec);
	td_sink_put(td, &rec, flags & TD_RESULT_MULTIPLEXED ? d.l2raw : NULL);
}

/*
 * A begin kept as counter values (begins_as_values): its counts, through
 * the source; values that cannot have preceded the end's flag it.
 */
static void begin_values_to_counts(const struct td *td,
				   struct td_region_priv *p,
				   const struct td_sample *s)
{
	struct td_counts c;

	if (!td->src->begin_counts(td, td_begin_values(p), s, &c)) {
		p->snap.resets |= TD_BEGIN_UNREAD;
		p->key = 0; /* the next begin copies the state afresh */
	}
	p->snap.base = c;
}

/* Everything an end does once it has its reading. */
void td_end_sampled(struct td *td, struct td_region_priv *p,
		    const struct td_sample *s, struct td_result *res)
{
	if (begins_as_values(td) && s->valid)
		begin_values_to_counts(td, p, s);
	if (s->valid && !(p->snap.resets & TD_BEGIN_UNREAD))
		td_learn_length(td, p, s->c.slots - (p->snap.base.slots + p->slots));
	if (res)
		fill_result(td, p, s, res);
	if (td->sink.buf || td->sink.pending)
		emit_record(td, p, s);
	if (td->policy.track)
		td_policy_close(&td->policy, sample_at(td, s));
	p->owner = NULL;
}

/* The checks of an end and its way on (td_end_checked). */
static inline __attribute__((always_inline)) int
end_checked(struct td *td, struct td_region *r, struct td_result *res)
{
	struct td_region_priv *p = priv(r);

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	if (TD_UNLIKELY(!p->owner))
		return -ESRCH;
	if (TD_UNLIKELY(p->owner != td && p->owner != td_owner_unread(td)))
		return -EXDEV;
	if (td->src_fast && p->owner == td)
		return td->src->fast_end(td, p, res);
	return td_slow_end_read(td, p, res);
}

/*
 * The end entry (struct td end_entry) of a source without
 * fast_end_first: the region checked, then the source's fast end.
 */
int td_fast_end_checked(struct td *td, struct td_region *r,
			struct td_result *res)
{
	if (TD_LIKELY(r && priv(r)->owner == td))
		return td->src_end(td, priv(r), res);
	return td_end_checked(td, r, res);
}

__attribute__((noinline)) int td_end_checked(struct td *td,
					     struct td_region *r,
					     struct td_result *res)
{
	return end_checked(td, r, res);
}

/*
 * Out of line: inlined into td_end_checked, its sample's frame would be
 * set up on every end that passes there to a source's fast end too.
 */
__attribute__((noinline)) int td_slow_end_read(struct td *td,
					       struct td_region_priv *p,
					       struct td_result *res)
{
	struct td_sample s;
	int err = td_take_sample(td, &s);

	if (TD_UNLIKELY(err < 0))
		return err;
	td_end_sampled(td, p, &s, res);
	return 0;
}
