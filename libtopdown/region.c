/* SPDX-License-Identifier: MIT */
/*
 * td_region_begin / td_region_end: the hot path.  One reading each (two
 * RDPMCs), integer bookkeeping, and a reset at begin only when the policy
 * says so.  The region keeps its begin snapshot in monotonic units, so
 * regions nest and interleave freely and survive resets between them.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

#define TD_REGION_OPEN   0x5444u /* "TD" */
#define TD_REGION_CLOSED 0x2d2du

#define TD_BEGIN_UNREADABLE (1u << 0)

/* The private layout of struct td_region. */
struct td_region_priv {
	const struct td *owner;
	uint16_t state;
	uint16_t begin_flags;
	uint32_t resets;          /* td->resets at begin (mod 2^32) */
	uint64_t foreign_resets;  /* td->foreign_resets at begin */
	uint64_t unsched;         /* time not counted, at begin */
	uint64_t qmark;           /* qerr_base - raw slots, at begin */
	uint64_t last_len;        /* slots of this region's previous run */
	struct td_counts start;
};

_Static_assert(sizeof(struct td_region_priv) <= sizeof(struct td_region),
	       "struct td_region too small for its private layout");

static struct td_region_priv *priv(struct td_region *r)
{
	return (struct td_region_priv *)(void *)r;
}

/*
 * The auto/always policy acts here, before the begin reading, so that the
 * region starts on fresh counters.  Enclosing regions keep their snapshots
 * in folded units and are unaffected; the user-mode tail of the ioctl
 * wrapper after the kernel's reset is charged to them, the head before it
 * (a few dozen slots) is lost.
 */
static void maybe_reset(struct td *td, const struct td_region_priv *p,
			struct td_sample *s)
{
	uint64_t expected = p->last_len ? p->last_len : td->policy.recent_len;

	if (td->path != TD_PATH_RDPMC || !s->valid ||
	    !td_policy_reset_due(td, s->raw_slots, expected, s->c.slots))
		return;
	if (td_fold_and_reset(td, s) == 0)
		td_take_sample(td, s);
}

int td_region_begin(struct td *td, struct td_region *r)
{
	struct td_region_priv *p;
	struct td_sample s;
	int err;

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	p = priv(r);
	if (TD_UNLIKELY(p->state == TD_REGION_OPEN))
		return -EALREADY;
	err = td_take_sample(td, &s);
	if (TD_UNLIKELY(err < 0))
		return err;
	if (td->policy.kind != TD_RESET_NEVER)
		maybe_reset(td, p, &s);
	p->owner = td;
	p->begin_flags = s.valid ? 0 : TD_BEGIN_UNREADABLE;
	p->resets = (uint32_t)td->resets;
	p->foreign_resets = td->foreign_resets;
	p->unsched = s.unsched;
	p->qmark = s.qerr_base - s.raw_slots;
	p->start = s.c;
	p->state = TD_REGION_OPEN;
	return 0;
}

static bool region_reliable(const struct td *td,
			    const struct td_region_priv *p,
			    const struct td_sample *s)
{
	return s->valid && !(p->begin_flags & TD_BEGIN_UNREADABLE) &&
	       td->foreign_resets == p->foreign_resets &&
	       s->unsched == p->unsched;
}

static void region_delta(const struct td_region_priv *p,
			 const struct td_sample *s, struct td_delta *d)
{
	d->slots = (int64_t)(s->c.slots - p->start.slots);
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d->cat[i] = (int64_t)(s->c.cat[i] - p->start.cat[i]);
	d->qerr = s->qerr_base + s->raw_slots - p->qmark;
}

static void fill_result(const struct td *td, const struct td_region_priv *p,
			const struct td_sample *s, struct td_result *res)
{
	struct td_delta d;

	region_delta(p, s, &d);
	td_decode(&d, td->pmu.nr_metrics == TD_NR_METRICS, res);
	res->resets = (uint32_t)td->resets - p->resets;
	if (td->path == TD_PATH_READ)
		res->flags |= TD_RESULT_READ_PATH;
	if (!region_reliable(td, p, s)) {
		memset(res->l1, 0, sizeof(res->l1));
		memset(res->l2, 0, sizeof(res->l2));
		res->err = 1;
		res->flags |= TD_RESULT_UNRELIABLE;
		res->flags &= ~TD_RESULT_L2;
	}
}

int td_region_end(struct td *td, struct td_region *r, struct td_result *res)
{
	struct td_region_priv *p;
	struct td_sample s;
	int err;

	if (TD_UNLIKELY(!td || !r))
		return -EINVAL;
	if (TD_UNLIKELY(!td_owner_ok(td)))
		return td_owner_error(td);
	p = priv(r);
	if (TD_UNLIKELY(p->state != TD_REGION_OPEN))
		return -ESRCH;
	if (TD_UNLIKELY(p->owner != td))
		return -EXDEV;
	err = td_take_sample(td, &s);
	if (TD_UNLIKELY(err < 0))
		return err;
	p->state = TD_REGION_CLOSED;
	p->last_len = s.c.slots - p->start.slots;
	td->policy.recent_len = p->last_len;
	if (res)
		fill_result(td, p, &s, res);
	return 0;
}
