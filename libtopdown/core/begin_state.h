/* SPDX-License-Identifier: MIT */
/*
 * What a region keeps from its begin (the private layout of struct
 * td_region) and the hot path's constants, shared by the sources' fast
 * paths and the slow path (region_slow.c).  Not installed.
 */
#ifndef TD_BEGIN_STATE_H
#define TD_BEGIN_STATE_H

#include "internal.h"

/* In a region's copy of snap.resets: the begin could not read. */
#define TD_BEGIN_UNREAD  0x80000000u

/* The private layout of struct td_region (256 bytes, ABI). */
struct td_region_priv {
	const struct td *owner;   /* non-NULL while begun: the handle, or
				     td_owner_unread(handle) */
	uint64_t key;             /* td->epoch_hi | lock at the copy; 0: none */
	uint64_t slots;           /* raw SLOTS at begin (0 if folded) */
	uint64_t raw;             /* the source's raw word read with them
				     (0 if folded): only the source reads it
				     (struct td_sample raw) */
	uint64_t len;             /* slots of its last measured call; 0:
				     unknown */
	uint64_t aux;             /* the source's auxiliary count at begin
				     (struct td_sample aux) */
	struct td_snap snap;      /* td->snap at begin */
	/*
	 * One place for two things no source has both of: a second
	 * auxiliary count at begin (struct td_sample aux2), or the
	 * source's further reading words, td->nr_more of them (struct
	 * td_sample more).  A source with further words keeps aux2
	 * TD_AUX_NONE in its samples, so the end never compares it, and
	 * store_begin (region_slow.c) copies aux2 before the words.
	 */
	union {
		uint64_t aux2;
		uint64_t more[TD_NR_MORE];
	};
};

_Static_assert(sizeof(struct td_region_priv) <= sizeof(struct td_region),
	       "struct td_region too small for its private layout");

static inline struct td_region_priv *priv(struct td_region *r)
{
	return (struct td_region_priv *)(void *)r;
}

/*
 * A source with further reading words (struct td nr_more) reads them in
 * its delta operation (source.h), which such a source gets only on the
 * general route (region_slow.c region_delta: it takes no fast path),
 * with a region's begin counts (snap.base) and its end's reading (struct
 * td_sample c): their words beside them, at no cost to the sources
 * without.
 */
static inline const uint64_t *td_begin_more(const struct td_counts *begin)
{
	return td_container_of(begin, struct td_region_priv, snap.base)->more;
}

static inline const uint64_t *td_sample_more(const struct td_counts *end)
{
	return td_container_of(end, struct td_sample, c)->more;
}

/*
 * The owner of a region whose begin could not read (TD_BEGIN_UNREAD):
 * the handle's address with its low bit set (a struct td is aligned).
 * Every fast end compares owner with td, so such a region's end takes the
 * general route without a test of its own (it has no length to learn:
 * region_slow.c td_end_sampled).
 */
static inline const struct td *td_owner_unread(const struct td *td)
{
	return (const struct td *)((uintptr_t)td | 1);
}

/*
 * Where the source's fast path has begin_counts (source.h), a region
 * keeps its begin as the counter values it
 * read (struct td_sample values), in place of the counts of snap.base:
 * such a source folds nothing, so those counts are the values' through
 * its formula, which the end computes (source.h begin_counts).
 */
static inline uint64_t *td_begin_values(struct td_region_priv *p)
{
	_Static_assert(TD_NR_VALUES <= TD_NR_COUNTS, "begin values");
	return p->snap.base.cat;
}

/* region_slow.c: the slow path of begin and end. */
TD_HIDDEN int td_slow_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_begin_checked(struct td *td, struct td_region *r);
/*
 * Every end but the fast ways the entry point takes (the inlined fast
 * path, this thread's fast handle's end entry): the checks, then the
 * source's fast end or a reading.
 */
TD_HIDDEN int td_end_checked(struct td *td, struct td_region *r,
			     struct td_result *res);
/* The end entry of a source without fast_end_first (struct td end_entry). */
TD_HIDDEN int td_fast_end_checked(struct td *td, struct td_region *r,
				  struct td_result *res);
/* The end of a region begun on this handle: a reading, then the rest. */
TD_HIDDEN int td_slow_end_read(struct td *td, struct td_region_priv *p,
			       struct td_result *res);
/* The end of a region once its reading s is taken (s->values filled
 * where the begin keeps values), whichever path took it. */
TD_HIDDEN void td_end_sampled(struct td *td, struct td_region_priv *p,
			      const struct td_sample *s, struct td_result *res);
/*
 * The result of a region's delta d, flags the source's delta returned;
 * reliable: both readings taken and no untrusted event between them.
 */
TD_HIDDEN void td_delta_result(const struct td *td,
			       const struct td_region_priv *p, bool reliable,
			       const struct td_delta *d, unsigned flags,
			       struct td_result *res);

/*
 * What the policy learns from a region that ended with a reading: its
 * length (its measured slots are counted when the stretch of open
 * regions closes: td_policy_close).  The next begin's error side is the
 * length's (td_policy_by_err), worked out only where the budget side
 * lets a reset through (td_reset_may_be_due).
 */
static inline void td_learn_length(struct td *td, struct td_region_priv *p, uint64_t len)
{
	(void)td;
	/*
	 * p->len 0 means never ended with a reading, which the slow path
	 * expects to last the domain (reset_due, td_policy_reset_due): a
	 * region that did end after 0 slots is expected so too, the same
	 * decision on both paths.
	 */
	p->len = len ? len : TD_POLICY_DOMAIN;
}

/*
 * May a begin that read raw SLOTS need a reset, for a region whose length
 * is known (p->len)?  Past where the budget could pay (internal.h,
 * budget_at) and past its error side: the slow path decides.  The budget
 * first: SLOTS is below budget_at at most begins, which settles it in
 * one compare; the error side (a shift and a multiply of the length)
 * only past it.
 */
static inline bool td_reset_may_be_due(const struct td *td,
				       const struct td_region_priv *p,
				       uint64_t slots)
{
	return TD_UNLIKELY(slots + p->len > td->policy.budget_at) &&
	       slots > td_policy_by_err(&td->policy, p->len);
}

/* Folded SLOTS at the region's begin: where its open stretch starts. */
static inline uint64_t td_region_at(const struct td_region_priv *p)
{
	return p->snap.base.slots + p->slots;
}

#endif
