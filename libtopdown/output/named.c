/* SPDX-License-Identifier: MIT */
/*
 * Named regions: a region with a name and totals over its calls.
 *
 * A named region is declared once (a struct td_named, or a name) and may
 * be used from any thread and any recursion depth, so nothing a call
 * changes lives in it: each handle (one per thread) keeps a table of
 * slots, one per named region it has begun, found by the struct's
 * address or by the name through a small open-addressing hash (the slot
 * begun last is looked at first: the innermost region's end).  A slot
 * holds the region being measured, its recursion depth and its totals.
 * The first begin of a region on a handle allocates its slot (the cold
 * path); later begins and ends allocate nothing and make no system call.
 *
 * The caller's struct td_named is written only when a handle lets go of
 * its slot (td_named_unlink, td_close): the slot's totals are then added
 * to the struct's, under a process-wide mutex, so that td_named_totals()
 * still sees them.  A name given as a string is copied once per process
 * into a struct td_named the library keeps until exit.
 *
 * Totals are sums of the records' slot counts, so fractions of them are
 * slot-weighted; the per-call min/max of each level-1 fraction are kept
 * as num/den pairs and compared by cross-multiplication, so ending one
 * divides nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "source.h"

/* Totals: in a slot's own struct td_named, and in the caller's. */
struct td_named_acc {
	const struct td_source_ops *src; /* of the handle that measured */
	uint64_t calls, unreliable, counted;
	uint64_t slots, qerr;
	int64_t cat[TD_NR_CATS];
	uint64_t l2raw[TD_NR_L2RAW]; /* multiplexed level-2 events, summed */
	int64_t min_num[TD_NR_L1], min_den[TD_NR_L1];
	int64_t max_num[TD_NR_L1], max_den[TD_NR_L1];
	uint64_t open;      /* activations left open when a slot was folded */
	uint64_t max_depth; /* deepest recursion reached */
	unsigned flags;  /* TD_RESULT_L2 when level 2 was measured, _CYCLES,
			    _MULTIPLEXED */
	/* TD_OPT_MEMORY: memory bound's slots x 255 by node, summed over
	 * the reliable calls that had the nodes; a reliable call without */
	double mem[TD_MEM_COUNT];
	bool mem_call, no_mem_call;
	/*
	 * The flags a reliable call lacked: TD_RESULT_L2 (a call without
	 * level 2: hybrid E-cores), TD_RESULT_L2_FE_BE (a call with every
	 * level-2 node, beside a Skymont hybrid's E-only calls with the
	 * frontend and backend children of another tree),
	 * TD_RESULT_MULTIPLEXED (a call that passed no raw level-2 words:
	 * on a hybrid handle multiplexing its E-cores' level 2, one on
	 * P-cores only, whose tree is not the E-cores')
	 */
	unsigned lacked;
	/*
	 * Multiplexed totals made slots by the source's fold_named: their
	 * categories are the estimate, l2raw no longer summed (acc_merge,
	 * when unlike totals meet).
	 */
	bool folded;
};

_Static_assert(sizeof(struct td_named_acc) <=
		       sizeof(((struct td_named *)0)->opaque),
	       "struct td_named too small for its totals");

/* One named region on one handle. */
struct td_named_slot {
	/*
	 * What td_sink_put is handed while the slot ends (its name is the
	 * records'), with the handle's totals in its opaque words.
	 */
	struct td_named self;
	struct td_region region;
	struct td_named *key;     /* the caller's struct, or an interned one */
	uint64_t name_hash;       /* by_name slots: hash of self.name */
	uint64_t depth;           /* activations begun and not ended */
	size_t index;             /* in the handle's order of first begin */
	bool by_name;             /* begun by td_named_begin_str */
};

/* A handle's slots: in order of first begin, and hashed two ways. */
struct td_named_tab {
	struct td_named_slot **order;
	size_t n, cap;
	struct td_named_slot **by_key;  /* 1 << bits entries, at most half used */
	struct td_named_slot **by_name;
	struct td_named_slot *last;     /* begun last: looked at first */
	unsigned bits;
	const struct td *td;
	uint64_t thread;                /* this_thread() of td's owner */
	struct td_named_tab *next;      /* live tables (named_lock) */
};

/* A name given as a string, copied once per process. */
struct interned {
	struct interned *next;
	struct td_named key;
	char name[];
};

/*
 * Cold path only: the live tables (td_named_totals reads the calling
 * thread's), the interned names, and every write to a caller's struct.
 */
static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;
static struct td_named_tab *live;
static struct interned *names;

/*
 * The calling thread, as td_named_totals tells it: numbered once per
 * thread, never reused in the process (td_thread_self(), a TLS address,
 * is reused by a thread started after one that exited with a handle
 * still open).  Cold path only.
 */
static atomic_uint_least64_t threads_numbered;
static __thread uint64_t thread_number;

static uint64_t this_thread(void)
{
	if (!thread_number)
		thread_number = atomic_fetch_add(&threads_numbered, 1) + 1;
	return thread_number;
}

static struct td_named_acc *acc(struct td_named *n)
{
	return (struct td_named_acc *)(void *)n->opaque;
}

static const struct td_named_acc *cacc(const struct td_named *n)
{
	return (const struct td_named_acc *)(const void *)n->opaque;
}

/* ---- the hash tables ---------------------------------------------------- */

static size_t hash_ptr(const void *p, unsigned bits)
{
	return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >>
			(64 - bits));
}

/* FNV-1a, 64 bits. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static struct td_named_slot *find_key(const struct td_named_tab *t,
				      const struct td_named *key)
{
	size_t mask, i;

	if (!t)
		return NULL;
	mask = ((size_t)1 << t->bits) - 1;
	for (i = hash_ptr(key, t->bits);; i = (i + 1) & mask) {
		struct td_named_slot *s = t->by_key[i];

		if (!s || s->key == key)
			return s;
	}
}

static struct td_named_slot *find_name(const struct td_named_tab *t,
				       const char *name, uint64_t h)
{
	size_t mask, i;

	if (!t)
		return NULL;
	mask = ((size_t)1 << t->bits) - 1;
	for (i = (size_t)(h >> (64 - t->bits));; i = (i + 1) & mask) {
		struct td_named_slot *s = t->by_name[i];

		if (!s || (s->name_hash == h && !strcmp(s->self.name, name)))
			return s;
	}
}

/*
 * The slot begun last, when it is the one named, else the hash's: a loop's
 * next begin and the end of the innermost region find theirs in a compare
 * or two.  Whatever an end does before its counter read is counted in
 * the region (as whatever a begin does after its read), so the end's
 * search is kept short.
 */
static struct td_named_slot *lookup_key(const struct td_named_tab *t,
					const struct td_named *key)
{
	if (t && t->last && t->last->key == key)
		return t->last;
	return find_key(t, key);
}

static struct td_named_slot *lookup_name(const struct td_named_tab *t,
					 const char *name)
{
	if (t && t->last && t->last->by_name &&
	    !strcmp(t->last->self.name, name))
		return t->last;
	return find_name(t, name, hash_str(name));
}

static void put(struct td_named_slot **v, unsigned bits, size_t i,
		struct td_named_slot *s)
{
	size_t mask = ((size_t)1 << bits) - 1;

	while (v[i])
		i = (i + 1) & mask;
	v[i] = s;
}

/* Both hashes from the order, in the tables they have. */
static void reindex(struct td_named_tab *t)
{
	size_t size = (size_t)1 << t->bits;

	memset(t->by_key, 0, size * sizeof(*t->by_key));
	memset(t->by_name, 0, size * sizeof(*t->by_name));
	for (size_t i = 0; i < t->n; i++) {
		struct td_named_slot *s = t->order[i];

		s->index = i;
		put(t->by_key, t->bits, hash_ptr(s->key, t->bits), s);
		if (s->by_name)
			put(t->by_name, t->bits,
			    (size_t)(s->name_hash >> (64 - t->bits)), s);
	}
}

/* Both hashes in new tables of 1 << bits entries. */
static int rehash(struct td_named_tab *t, unsigned bits)
{
	size_t size = (size_t)1 << bits;
	struct td_named_slot **k = calloc(size, sizeof(*k));
	struct td_named_slot **m = calloc(size, sizeof(*m));

	if (!k || !m) {
		free(k);
		free(m);
		return -ENOMEM;
	}
	free(t->by_key);
	free(t->by_name);
	t->by_key = k;
	t->by_name = m;
	t->bits = bits;
	reindex(t);
	return 0;
}

/* ---- slots: allocated at a region's first begin on a handle -------------- */

static struct td_named_tab *tab_of(struct td *td)
{
	struct td_named_tab *t = td->named;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || rehash(t, 3) < 0) {
		free(t);
		return NULL;
	}
	t->td = td;
	t->thread = this_thread(); /* td's owner: begin checked it */
	pthread_mutex_lock(&named_lock);
	t->next = live;
	live = t;
	pthread_mutex_unlock(&named_lock);
	td->named = t;
	return t;
}

static int append(struct td_named_tab *t, struct td_named_slot *s)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct td_named_slot **v = realloc(t->order, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->order = v;
		t->cap = cap;
	}
	/* at most half of each hash in use */
	if (2 * (t->n + 1) > ((size_t)1 << t->bits) &&
	    rehash(t, t->bits + 1) < 0)
		return -ENOMEM;
	s->index = t->n;
	t->order[t->n++] = s;
	put(t->by_key, t->bits, hash_ptr(s->key, t->bits), s);
	if (s->by_name)
		put(t->by_name, t->bits,
		    (size_t)(s->name_hash >> (64 - t->bits)), s);
	return 0;
}

static struct td_named_slot *slot_new(struct td *td, struct td_named *key,
				      bool by_name)
{
	struct td_named_tab *t = tab_of(td);
	struct td_named_slot *s;

	if (!t)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->key = key;
	s->self.name = key->name;
	s->by_name = by_name;
	if (by_name)
		s->name_hash = hash_str(key->name);
	acc(&s->self)->src = td->src;
	if (append(t, s) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* The process's one struct td_named for a name (named_lock held). */
static struct td_named *intern_locked(const char *name)
{
	size_t len = strlen(name);
	struct interned *i;

	for (i = names; i; i = i->next)
		if (!strcmp(i->name, name))
			return &i->key;
	i = calloc(1, sizeof(*i) + len + 1);
	if (!i)
		return NULL;
	memcpy(i->name, name, len + 1);
	i->key.name = i->name;
	i->next = names;
	names = i;
	return &i->key;
}

static struct td_named *intern(const char *name)
{
	struct td_named *key;

	pthread_mutex_lock(&named_lock);
	key = intern_locked(name);
	pthread_mutex_unlock(&named_lock);
	return key;
}

/* ---- totals ------------------------------------------------------------- */

/* a/b < c/d for b, d > 0, without dividing (products exact enough). */
static bool less(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return (double)a * (double)d < (double)c * (double)b;
}

/* One call's (or a part's) level-1 fraction num/den into the extremes. */
static void add_extreme(struct td_named_acc *p, int i, int64_t num,
			int64_t den, bool first)
{
	if (first || less(num, den, p->min_num[i], p->min_den[i])) {
		p->min_num[i] = num;
		p->min_den[i] = den;
	}
	if (first || less(p->max_num[i], p->max_den[i], num, den)) {
		p->max_num[i] = num;
		p->max_den[i] = den;
	}
}

/* Fractions as td_decode makes them: SMT contention in the sum. */
static void add_extremes(struct td_named_acc *p, const int64_t *cat)
{
	int64_t den = cat[0] + cat[1] + cat[2] + cat[3] + cat[TD_M_SMT];

	if (den <= 0)
		return;
	for (int i = 0; i < TD_NR_L1; i++) {
		int64_t num = cat[i] < 0 ? 0 : (cat[i] > den ? den : cat[i]);

		add_extreme(p, i, num, den, !p->counted);
	}
	p->counted++;
}

/* A reliable call's memory nodes (its record's parts of memory bound). */
static void add_mem(struct td_named_acc *p, const struct td_record *rec)
{
	double part[TD_MEM_COUNT];

	if (!(rec->flags & TD_RESULT_MEMORY)) {
		p->no_mem_call = true;
		return;
	}
	td_mem_parts_unpack(rec->reserved, part);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		p->mem[i] += (double)rec->cat[TD_M_MEM_BOUND] * part[i];
	p->mem_call = true;
}

static void named_add(struct td_named *n, const struct td_record *rec,
		      const uint64_t *l2raw)
{
	struct td_named_acc *p = acc(n);

	p->calls++;
	/*
	 * Multiplexed: level-2 ratios and level 1's times hold even where
	 * level 1 did not count; such a call is not unreliable, only
	 * unsampled (the source's fold_named accounts for its slots).
	 */
	for (int i = 0; l2raw && i < TD_L2RAW_TAG; i++)
		p->l2raw[i] += l2raw[i];
	if (l2raw)
		p->l2raw[TD_L2RAW_TAG] = l2raw[TD_L2RAW_TAG];
	if (l2raw)
		p->flags |= TD_RESULT_MULTIPLEXED;
	if (l2raw && l2raw[p->src->named_counted_word] == 0)
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
				  TD_RESULT_MULTIPLEXED | TD_RESULT_L2_FE_BE |
				  TD_RESULT_FE_UNREFINED |
				  TD_RESULT_BE_UNREFINED);
	p->lacked |= ~rec->flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE);
	if (!l2raw) /* not multiplexed: a hybrid handle's P-only call */
		p->lacked |= TD_RESULT_MULTIPLEXED;
	add_mem(p, rec);
	add_extremes(p, rec->cat);
}

/*
 * Totals held as a multiplexing source's raw sums: only that source's
 * fold_named, given the raw level-2 words of its own formula, makes
 * their slots and level 2.  Not when a call passed no raw words (a
 * hybrid handle's P-only call): the words then miss its slots, and the
 * category slots are what add up.
 */
static bool acc_raw(const struct td_named_acc *p)
{
	return (p->flags & TD_RESULT_MULTIPLEXED) && p->src &&
	       p->src->fold_named && !p->folded &&
	       !(p->lacked & TD_RESULT_MULTIPLEXED);
}

/*
 * Raw sums that pool: of one source and one formula (the tag of its raw
 * words), the same estimate as one handle's calls make over all of
 * them; or either side holds no call, so nothing is pooled.
 */
static bool acc_raw_alike(const struct td_named_acc *a,
			  const struct td_named_acc *b)
{
	if (!a->calls || !b->calls)
		return true;
	if (!acc_raw(a) && !acc_raw(b))
		return true;
	return acc_raw(a) && acc_raw(b) && a->src == b->src &&
	       a->l2raw[TD_L2RAW_TAG] == b->l2raw[TD_L2RAW_TAG];
}

/*
 * Raw multiplexed sums to what they estimate, with their own source's
 * formula: slots and category slots x 255 (level 1 scaled by the time
 * enabled / running, level 2 where the groups counted enough), which
 * add to other totals' as any record's do.  Level 2 is then as the
 * fold made it: present, or lacked (so that totals it is merged into
 * report none).
 */
static void acc_fold(struct td_named_acc *p)
{
	const unsigned l2 = TD_RESULT_L2 | TD_RESULT_L2_FE_BE;
	struct td_delta d;
	unsigned got;

	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)p->slots;
	memcpy(d.cat, p->cat, sizeof(p->cat));
	d.qerr = p->qerr;
	got = p->src->fold_named(p->l2raw, &d);
	p->slots = d.slots < 0 ? 0 : (uint64_t)d.slots;
	memcpy(p->cat, d.cat, sizeof(p->cat));
	p->qerr = d.qerr;
	memset(p->l2raw, 0, sizeof(p->l2raw));
	p->flags = (p->flags & ~l2) | (got & l2);
	p->lacked = (p->lacked & ~l2) | (~got & l2);
	p->folded = true;
}

/*
 * into += from: sums add up, extremes are the extremes of both.  Raw
 * multiplexed sums add only to those of the same formula; unlike totals
 * (another source or model, or one not multiplexed) are each made slots
 * first, so that no raw word is read with another handle's formula.
 */
static void acc_merge(struct td_named_acc *into,
		      const struct td_named_acc *from_in)
{
	struct td_named_acc from_folded;
	const struct td_named_acc *from = from_in;

	if (!acc_raw_alike(into, from)) {
		if (acc_raw(into))
			acc_fold(into);
		if (acc_raw(from)) {
			from_folded = *from;
			acc_fold(&from_folded);
			from = &from_folded;
		}
		into->folded = true;
	}
	for (int i = 0; from->counted && i < TD_NR_L1; i++) {
		add_extreme(into, i, from->min_num[i], from->min_den[i],
			    !into->counted);
		add_extreme(into, i, from->max_num[i], from->max_den[i], false);
	}
	if (!into->src)
		into->src = from->src;
	into->calls += from->calls;
	into->unreliable += from->unreliable;
	into->counted += from->counted;
	into->slots += from->slots;
	into->qerr += from->qerr;
	for (int i = 0; i < TD_NR_CATS; i++)
		into->cat[i] += from->cat[i];
	for (int i = 0; i < TD_L2RAW_TAG; i++)
		into->l2raw[i] += from->l2raw[i];
	if (from->l2raw[TD_L2RAW_TAG])
		into->l2raw[TD_L2RAW_TAG] = from->l2raw[TD_L2RAW_TAG];
	into->open += from->open;
	if (from->max_depth > into->max_depth)
		into->max_depth = from->max_depth;
	into->flags |= from->flags;
	into->lacked |= from->lacked;
	for (int i = 0; i < TD_MEM_COUNT; i++)
		into->mem[i] += from->mem[i];
	into->mem_call |= from->mem_call;
	into->no_mem_call |= from->no_mem_call;
	into->folded |= from->folded;
}

/*
 * The nodes of the totals: memory bound split as the calls' nodes sum,
 * where every reliable call had them (memory bound: level 2's, or on Ice
 * Lake the sum of the calls' own in cat[TD_CAT_MEM_BOUND]).
 */
static void mem_totals(const struct td_named_acc *p, struct td_result *r)
{
	double sum = 0, mb;

	if (!p->mem_call || p->no_mem_call)
		return;
	mb = r->flags & TD_RESULT_L2 ? r->l2[TD_MEM_BOUND]
				     : td_mem_bound_of(p->cat);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		sum += p->mem[i];
	for (int i = 0; i < TD_MEM_COUNT; i++)
		r->mem[i] = sum > 0 ? mb * p->mem[i] / sum : 0;
	r->flags |= TD_RESULT_MEMORY;
}

/* A slot's totals, its open activation counted. */
static void slot_acc(const struct td_named_slot *s, struct td_named_acc *a)
{
	*a = *cacc(&s->self);
	a->open += s->depth > 0;
}

static void acc_totals(const struct td_named_acc *p, struct td_totals *t)
{
	struct td_delta d;
	bool l2;

	memset(t, 0, sizeof(*t));
	t->calls = p->calls;
	t->unreliable = p->unreliable;
	t->open = p->open;
	t->max_depth = p->max_depth;
	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)p->slots;
	memcpy(d.cat, p->cat, sizeof(p->cat));
	d.qerr = p->qerr;
	/*
	 * Level 2 only if every call measured it (a hybrid handle's calls
	 * after E-core slots have none), the same nodes (a Skymont hybrid's
	 * E-only calls have the frontend and backend children of another
	 * tree), or as an estimate when the handle multiplexes its level-2
	 * groups.
	 */
	if (acc_raw(p)) {
		unsigned src = p->src->fold_named(p->l2raw, &d);

		td_decode_src(&d, src & TD_RESULT_L2, src, &t->total);
	} else {
		/* a hybrid's P-core and E-core trees do not add up */
		bool mixed = ((p->lacked & TD_RESULT_L2_FE_BE) &&
			      (p->flags & TD_RESULT_L2_FE_BE)) ||
			     ((p->lacked & TD_RESULT_MULTIPLEXED) &&
			      (p->flags & TD_RESULT_MULTIPLEXED));

		l2 = (p->flags & TD_RESULT_L2) &&
		     !(p->lacked & TD_RESULT_L2) && !mixed;
		td_decode_src(&d, l2,
			      l2 ? p->flags & TD_RESULT_L2_FE_BE : 0,
			      &t->total);
	}
	t->total.flags |= p->flags & (TD_RESULT_CYCLES | TD_RESULT_MULTIPLEXED |
				      TD_RESULT_FE_UNREFINED |
				      TD_RESULT_BE_UNREFINED);
	mem_totals(p, &t->total);
	for (int i = 0; i < TD_NR_L1 && p->counted; i++) {
		t->min[i] = (double)p->min_num[i] / (double)p->min_den[i];
		t->max[i] = (double)p->max_num[i] / (double)p->max_den[i];
	}
}

/* A handle lets go of a slot: its totals to the caller's struct. */
static void fold_locked(struct td_named_slot *s)
{
	struct td_named_acc a;

	slot_acc(s, &a);
	acc_merge(acc(s->key), &a);
}

/* ---- begin and end ------------------------------------------------------ */

static int slot_begin(struct td *td, struct td_named_slot *s)
{
	struct td_named_acc *p = acc(&s->self);
	uint64_t max_depth = p->max_depth;
	int err;

	td->named->last = s;
	/* recursion: the outermost activation is the one measured */
	if (s->depth) {
		if (++s->depth > max_depth)
			p->max_depth = s->depth;
		return 0;
	}
	/*
	 * The slot's state first, the begin last: what runs after the
	 * begin's counter read is counted in the region.  Undone if the
	 * begin fails.
	 */
	s->depth = 1;
	if (!max_depth)
		p->max_depth = 1;
	err = td_region_begin(td, &s->region);
	if (err < 0) {
		s->depth = 0;
		p->max_depth = max_depth;
	}
	return err;
}

/*
 * An inner activation's end measures nothing: a result with no figures,
 * flagged so (TD_RESULT_UNRELIABLE too, for code that checks only that).
 */
static void nested_result(struct td_result *res)
{
	memset(res, 0, sizeof(*res));
	res->err = 1;
	res->flags = TD_RESULT_NESTED | TD_RESULT_UNRELIABLE;
}

/* An end that is not the outermost activation's, or of no open region. */
static __attribute__((noinline)) int slot_end_inner(struct td_named_slot *s,
						    struct td_result *res)
{
	if (!s || !s->depth)
		return -ESRCH;
	s->depth--;
	if (res)
		nested_result(res);
	return 0;
}

static int slot_end(struct td *td, struct td_named_slot *s,
		    struct td_result *res)
{
	int err;

	/* one test before the counter read: the outermost end or not */
	if (!s || s->depth != 1)
		return slot_end_inner(s, res);
	td->sink.pending = &s->self;
	td->sink.to_named = named_add;
	/* td_end_key_refresh with pending set, its tests done here */
	td->end_key = td->last_lock | TD_END_KEY_SINK | TD_END_KEY_NAMED;
	err = td_region_end(td, &s->region, res);
	td->sink.pending = NULL;
	td_end_key_refresh(td);
	if (err == 0)
		s->depth = 0;
	return err;
}

int td_named_begin(struct td *td, struct td_named *n)
{
	struct td_named_slot *s;

	if (!td || !n)
		return -EINVAL;
	if (!td_owner_ok(td)) /* before touching the handle's slots */
		return td_owner_error(td);
	s = lookup_key(td->named, n);
	if (!s)
		s = slot_new(td, n, false);
	return s ? slot_begin(td, s) : -ENOMEM;
}

int td_named_end(struct td *td, struct td_named *n, struct td_result *res)
{
	if (!td || !n)
		return -EINVAL;
	if (!td_owner_ok(td))
		return td_owner_error(td);
	return slot_end(td, lookup_key(td->named, n), res);
}

int td_named_begin_str(struct td *td, const char *name)
{
	struct td_named_slot *s;
	struct td_named *key;

	if (!td || !name)
		return -EINVAL;
	if (!td_owner_ok(td))
		return td_owner_error(td);
	s = lookup_name(td->named, name);
	if (!s) {
		key = intern(name);
		s = key ? find_key(td->named, key) : NULL;
		if (!s && key)
			s = slot_new(td, key, true);
	}
	return s ? slot_begin(td, s) : -ENOMEM;
}

int td_named_end_str(struct td *td, const char *name, struct td_result *res)
{
	if (!td || !name)
		return -EINVAL;
	if (!td_owner_ok(td))
		return td_owner_error(td);
	return slot_end(td, lookup_name(td->named, name), res);
}

/* ---- totals, enumeration, unlink ---------------------------------------- */

/* The folded totals and the calling thread's open handles' (locked). */
static void totals_locked(const struct td_named *n, struct td_totals *t)
{
	struct td_named_acc a = *cacc(n), s;
	uint64_t me = this_thread();

	for (struct td_named_tab *tab = live; tab; tab = tab->next) {
		const struct td_named_slot *slot;

		/* a fork child's thread has the number of the parent's */
		if (tab->thread != me ||
		    tab->td->fork_gen != td_fork_generation)
			continue;
		slot = find_key(tab, n);
		if (!slot)
			continue;
		slot_acc(slot, &s);
		acc_merge(&a, &s);
	}
	acc_totals(&a, t);
}

int td_named_totals(const struct td_named *n, struct td_totals *t)
{
	if (!n || !t)
		return -EINVAL;
	pthread_mutex_lock(&named_lock);
	totals_locked(n, t);
	pthread_mutex_unlock(&named_lock);
	return 0;
}

int td_named_totals_str(const char *name, struct td_totals *t)
{
	const struct interned *i;

	if (!name || !t)
		return -EINVAL;
	pthread_mutex_lock(&named_lock);
	for (i = names; i && strcmp(i->name, name); i = i->next)
		;
	if (i)
		totals_locked(&i->key, t);
	pthread_mutex_unlock(&named_lock);
	return i ? 0 : -ENOENT;
}

struct td_named *td_named_next(const struct td *td,
			       const struct td_named *prev)
{
	const struct td_named_tab *t;
	const struct td_named_slot *s;

	if (!td || !td->named)
		return NULL;
	t = td->named;
	if (!prev)
		return t->n ? t->order[0]->key : NULL;
	s = find_key(t, prev);
	if (!s || s->index + 1 >= t->n)
		return NULL;
	return t->order[s->index + 1]->key;
}

size_t td_named_count(const struct td *td)
{
	return td->named ? td->named->n : 0;
}

const char *td_named_at(const struct td *td, size_t i, struct td_totals *t)
{
	const struct td_named_slot *s = td->named->order[i];
	struct td_named_acc a;

	slot_acc(s, &a);
	acc_totals(&a, t);
	return s->self.name ? s->self.name : "";
}

int td_named_unlink(struct td *td, struct td_named *n)
{
	struct td_named_tab *t;
	struct td_named_slot *s;

	if (!td || !n)
		return -EINVAL;
	t = td->named;
	s = find_key(t, n);
	if (!s)
		return -ENOENT;
	if (s->depth)
		return -EBUSY;
	pthread_mutex_lock(&named_lock);
	fold_locked(s);
	pthread_mutex_unlock(&named_lock);
	memmove(&t->order[s->index], &t->order[s->index + 1],
		(t->n - s->index - 1) * sizeof(*t->order));
	t->n--;
	if (t->last == s)
		t->last = NULL;
	free(s);
	reindex(t); /* open addressing: rebuilt rather than deleted from */
	return 0;
}

/* td_close: every slot's totals to its struct td_named, the slots freed. */
void td_named_unlink_all(struct td *td)
{
	struct td_named_tab *t = td->named, **link;

	if (!t)
		return;
	pthread_mutex_lock(&named_lock);
	for (size_t i = 0; i < t->n; i++)
		fold_locked(t->order[i]);
	for (link = &live; *link && *link != t; link = &(*link)->next)
		;
	if (*link)
		*link = t->next;
	pthread_mutex_unlock(&named_lock);
	for (size_t i = 0; i < t->n; i++)
		free(t->order[i]);
	free(t->order);
	free(t->by_key);
	free(t->by_name);
	free(t);
	td->named = NULL;
}
