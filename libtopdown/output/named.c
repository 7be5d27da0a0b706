/* SPDX-License-Identifier: MIT */
/*
 * Named regions: a region with a name and totals, linked into its handle
 * at the first begin (intrusive list, no allocation).  Totals are sums of
 * the records' slot counts, so fractions of them are slot-weighted; the
 * per-call min/max of each level-1 fraction are kept as num/den pairs and
 * compared by cross-multiplication, so ending one divides nothing.
 */
#include <errno.h>
#include <string.h>

#include "output.h"
#include "source.h"

struct td_named_priv {
	struct td_region region;
	struct td_named *next;
	const struct td *owner;
	const struct td_source_ops *src; /* of the handle it was linked to */
	uint64_t calls, unreliable, counted;
	uint64_t slots, qerr;
	int64_t cat[TD_NR_CATS];
	uint64_t l2raw[TD_NR_L2RAW]; /* multiplexed level-2 events, summed */
	int64_t min_num[TD_NR_L1], min_den[TD_NR_L1];
	int64_t max_num[TD_NR_L1], max_den[TD_NR_L1];
	unsigned flags;  /* TD_RESULT_L2 when level 2 was measured, _CYCLES,
			    _MULTIPLEXED */
	bool l1_call;    /* a reliable call without level 2 (hybrid E-cores) */
	bool open;
};

_Static_assert(sizeof(struct td_named_priv) <=
		       sizeof(((struct td_named *)0)->opaque),
	       "struct td_named too small for its private layout");

static struct td_named_priv *priv(struct td_named *n)
{
	return (struct td_named_priv *)(void *)n->opaque;
}

static const struct td_named_priv *cpriv(const struct td_named *n)
{
	return (const struct td_named_priv *)(const void *)n->opaque;
}

/* Reports list regions in the order they were first begun. */
static void link_tail(struct td *td, struct td_named *n)
{
	struct td_named **link = &td->named;

	while (*link)
		link = &priv(*link)->next;
	*link = n;
	priv(n)->next = NULL;
	priv(n)->owner = td;
	priv(n)->src = td->src;
}

int td_named_begin(struct td *td, struct td_named *n)
{
	struct td_named_priv *p;
	int err;

	if (!td || !n)
		return -EINVAL;
	p = priv(n);
	if (p->owner && p->owner != td)
		return -EXDEV;
	err = td_region_begin(td, &p->region);
	if (err < 0)
		return err;
	if (!p->owner)
		link_tail(td, n);
	p->open = true;
	return 0;
}

/* a/b < c/d for b, d > 0, without dividing (products exact enough). */
static bool less(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return (double)a * (double)d < (double)c * (double)b;
}

/* Fractions as td_decode makes them: SMT contention in the sum. */
static void add_extremes(struct td_named_priv *p, const int64_t *cat)
{
	int64_t den = cat[0] + cat[1] + cat[2] + cat[3] + cat[TD_M_SMT];

	if (den <= 0)
		return;
	for (int i = 0; i < TD_NR_L1; i++) {
		int64_t num = cat[i] < 0 ? 0 : (cat[i] > den ? den : cat[i]);

		if (!p->counted || less(num, den, p->min_num[i], p->min_den[i])) {
			p->min_num[i] = num;
			p->min_den[i] = den;
		}
		if (!p->counted || less(p->max_num[i], p->max_den[i], num, den)) {
			p->max_num[i] = num;
			p->max_den[i] = den;
		}
	}
	p->counted++;
}

static void named_add(struct td_named *n, const struct td_record *rec,
		      const uint64_t *l2raw)
{
	struct td_named_priv *p = priv(n);

	p->calls++;
	/*
	 * Multiplexed: level-2 ratios and level 1's times hold even where
	 * level 1 did not count; such a call is not unreliable, only
	 * unsampled (the source's fold_named accounts for its slots).
	 */
	for (int i = 0; l2raw && i < TD_NR_L2RAW; i++)
		p->l2raw[i] += l2raw[i];
	if (l2raw)
		p->flags |= TD_RESULT_MULTIPLEXED;
	if (l2raw && l2raw[TD_MUXRAW_RUN] == 0)
		return;
	if (rec->flags & TD_RESULT_UNRELIABLE) {
		p->unreliable++;
		return;
	}
	p->slots += rec->slots;
	p->qerr += rec->qerr;
	for (int i = 0; i < TD_NR_CATS; i++)
		p->cat[i] += rec->cat[i];
	p->flags |= rec->flags & (TD_RESULT_L2 | TD_RESULT_CYCLES |
				  TD_RESULT_MULTIPLEXED | TD_RESULT_L2_FE_BE);
	p->l1_call |= !(rec->flags & TD_RESULT_L2);
	add_extremes(p, rec->cat);
}

int td_named_end(struct td *td, struct td_named *n, struct td_result *res)
{
	struct td_named_priv *p;
	int err;

	if (!td || !n)
		return -EINVAL;
	if (!td_owner_ok(td)) /* before touching the owner's state */
		return td_owner_error(td);
	p = priv(n);
	if (p->owner != td)
		return p->owner ? -EXDEV : -ESRCH;
	td->sink.pending = n;
	td->sink.to_named = named_add;
	td_end_key_refresh(td);
	err = td_region_end(td, &p->region, res);
	td->sink.pending = NULL;
	td_end_key_refresh(td);
	if (err == 0)
		p->open = false;
	return err;
}

int td_named_totals(const struct td_named *n, struct td_totals *t)
{
	const struct td_named_priv *p;
	struct td_delta d;
	bool l2;

	if (!n || !t)
		return -EINVAL;
	p = cpriv(n);
	memset(t, 0, sizeof(*t));
	t->calls = p->calls;
	t->unreliable = p->unreliable;
	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)p->slots;
	memcpy(d.cat, p->cat, sizeof(p->cat));
	d.qerr = p->qerr;
	/*
	 * Level 2 only if every call measured it (a hybrid handle's calls
	 * after E-core slots have none), or as an estimate when the handle
	 * multiplexes its level-2 groups.
	 */
	if ((p->flags & TD_RESULT_MULTIPLEXED) && p->src &&
	    p->src->fold_named) {
		l2 = p->src->fold_named(p->l2raw, &d) & TD_RESULT_L2;
		td_decode(&d, l2, &t->total);
	} else {
		l2 = (p->flags & TD_RESULT_L2) && !p->l1_call;
		td_decode_src(&d, l2,
			      p->l1_call ? 0 : p->flags & TD_RESULT_L2_FE_BE,
			      &t->total);
	}
	t->total.flags |= p->flags & (TD_RESULT_CYCLES | TD_RESULT_MULTIPLEXED);
	for (int i = 0; i < TD_NR_L1 && p->counted; i++) {
		t->min[i] = (double)p->min_num[i] / (double)p->min_den[i];
		t->max[i] = (double)p->max_num[i] / (double)p->max_den[i];
	}
	return 0;
}

struct td_named *td_named_next(const struct td *td,
			       const struct td_named *prev)
{
	if (!td)
		return NULL;
	if (!prev)
		return td->named;
	return cpriv(prev)->owner == td ? cpriv(prev)->next : NULL;
}

int td_named_unlink(struct td *td, struct td_named *n)
{
	struct td_named **link;

	if (!td || !n)
		return -EINVAL;
	if (priv(n)->owner != td)
		return -ENOENT;
	if (priv(n)->open)
		return -EBUSY;
	for (link = &td->named; *link && *link != n; link = &priv(*link)->next)
		;
	if (!*link)
		return -ENOENT;
	*link = priv(n)->next;
	priv(n)->next = NULL;
	priv(n)->owner = NULL;
	return 0;
}

/* td_close: every named region becomes free to begin on a new handle. */
void td_named_unlink_all(struct td *td)
{
	struct td_named *n = td->named;

	while (n) {
		struct td_named_priv *p = priv(n);

		n = p->next;
		p->next = NULL;
		p->owner = NULL;
		p->open = false;
		memset(&p->region, 0, sizeof(p->region));
	}
	td->named = NULL;
}
