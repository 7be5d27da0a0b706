/* SPDX-License-Identifier: MIT */
/*
 * The per-function report: the named-region report's columns (README.md
 * "Harnesses and reports"), kind "function" or "path", then the self
 * figures in the same columns prefixed self_, then measured (calls with
 * counts), abandoned (calls left without their exit) and tainted (calls
 * whose self may hold a callee's unreliable or abandoned counts).
 *
 * A function's inclusive counts are those of its outermost activations:
 * the nodes of paths on which it is not already open; its self counts
 * those of every node of it.  Threads and nodes are merged on counts,
 * then decoded once (td_record_decode), so fractions are slot-weighted.
 * Cold path: the report is written at exit or on request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "func.h"

/* A row's figures: counts and the counters beside them. */
struct agg {
	void *fn;
	const char *name;
	char thread[24];
	char *path;                   /* path rows: owned */
	uint64_t calls, measured, unreliable, abandoned, tainted, max_depth;
	double min[TD_L1_COUNT], max[TD_L1_COUNT];
	bool counted;                 /* min/max hold a measured call */
	size_t first, count;          /* all rows: its thread rows in fns */
	struct fn_counts incl, self;
};

struct aggs {
	struct agg *v;
	size_t n, cap;
};

static struct agg *aggs_add(struct aggs *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct agg *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	memset(&a->v[a->n], 0, sizeof(a->v[0]));
	return &a->v[a->n++];
}

static void aggs_free(struct aggs *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].path);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

static void counts_merge(struct fn_counts *into, const struct fn_counts *c)
{
	into->slots += c->slots;
	for (int i = 0; i < TD_CAT_COUNT; i++)
		into->cat[i] += c->cat[i];
	into->qerr += c->qerr;
	into->flags |= c->flags;
	into->l1_call |= c->l1_call;
}

static void extremes_merge(struct agg *into, const double *min,
			   const double *max)
{
	for (int i = 0; i < TD_L1_COUNT; i++) {
		if (!into->counted || min[i] < into->min[i])
			into->min[i] = min[i];
		if (!into->counted || max[i] > into->max[i])
			into->max[i] = max[i];
	}
	into->counted = true;
}

/* The counters of one node (or row) into a row: inclusive when outer. */
static void agg_merge(struct agg *into, const struct agg *a)
{
	into->calls += a->calls;
	into->measured += a->measured;
	into->unreliable += a->unreliable;
	into->abandoned += a->abandoned;
	into->tainted += a->tainted;
	if (a->max_depth > into->max_depth)
		into->max_depth = a->max_depth;
	counts_merge(&into->incl, &a->incl);
	counts_merge(&into->self, &a->self);
	if (a->counted)
		extremes_merge(into, a->min, a->max);
}

/*
 * How many times each node's function is open on its path, itself
 * included: a parent's index is below its callees' (made at their first
 * call), so depth[] is filled in one pass; direct recursion finds it in
 * the parent, other paths walk up to the nearest call of the function.
 */
static uint32_t *depths(const struct fn_thread *t)
{
	uint32_t *d = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*d));

	for (uint32_t v = 0; d && v < t->n_nodes; v++) {
		uint32_t p = t->nodes[v].parent;

		while (p != FN_NONE && t->nodes[p].fn != t->nodes[v].fn)
			p = t->nodes[p].parent;
		d[v] = p == FN_NONE ? 1 : d[p] + 1;
	}
	return d;
}

static void node_agg(const struct fn_thread *t, uint32_t v, struct agg *a)
{
	const struct fn_node *n = &t->nodes[v];

	memset(a, 0, sizeof(*a));
	a->fn = n->fn;
	a->calls = n->calls;
	a->measured = n->measured;
	a->unreliable = n->unreliable;
	a->abandoned = n->abandoned;
	a->tainted = n->tainted;
	a->self = n->self;
	a->incl = n->incl;
	a->counted = n->measured > 0;
	memcpy(a->min, n->min, sizeof(a->min));
	memcpy(a->max, n->max, sizeof(a->max));
}

static int by_fn(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct agg *)a)->fn;
	uintptr_t y = (uintptr_t)((const struct agg *)b)->fn;

	return x < y ? -1 : x > y;
}

static int by_fn_thread(const void *a, const void *b)
{
	int c = by_fn(a, b);

	return c ? c : strcmp(((const struct agg *)a)->thread,
			      ((const struct agg *)b)->thread);
}

/* Rows from index from on, sorted by function, merged per function. */
static void merge_by_fn(struct aggs *rows, size_t from)
{
	size_t out = from;

	qsort(rows->v + from, rows->n - from, sizeof(*rows->v), by_fn);
	for (size_t i = from; i < rows->n; i++) {
		if (out > from && rows->v[out - 1].fn == rows->v[i].fn) {
			agg_merge(&rows->v[out - 1], &rows->v[i]);
			continue;
		}
		rows->v[out++] = rows->v[i];
	}
	rows->n = out;
}

/* One thread's function rows: a row per node, then merged. */
static int thread_functions(const struct fn_thread *t, struct aggs *rows)
{
	size_t from = rows->n;
	uint32_t *d = depths(t);
	int err = 0;

	for (uint32_t v = 0; d && v < t->n_nodes && !err; v++) {
		struct agg *r;

		if (t->nodes[v].flags & FN_NODE_EXCLUDED)
			continue;
		r = aggs_add(rows);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		node_agg(t, v, r);
		snprintf(r->thread, sizeof(r->thread), "%d", t->tid);
		r->max_depth = d[v];
		if (d[v] > 1) { /* an inner activation: its outer one has it */
			memset(&r->incl, 0, sizeof(r->incl));
			r->counted = false;
		}
	}
	free(d);
	if (!d)
		return -ENOMEM;
	merge_by_fn(rows, from);
	return err;
}

/* "main;f;g": each node's path, from its caller's (made before it). */
static char **paths_of(const struct fn_thread *t)
{
	char **p = calloc(t->n_nodes ? t->n_nodes : 1, sizeof(*p));

	for (uint32_t v = 0; p && v < t->n_nodes; v++) {
		uint32_t up = t->nodes[v].parent;
		const char *pre = up == FN_NONE ? NULL : p[up];
		char buf[32];
		const char *name = fn_name(t->nodes[v].fn, buf, sizeof(buf));
		size_t len = (pre ? strlen(pre) + 1 : 0) + strlen(name) + 1;

		if (up != FN_NONE && !pre)
			continue; /* its caller's path was not made */
		p[v] = malloc(len);
		if (p[v])
			snprintf(p[v], len, "%s%s%s", pre ? pre : "",
				 pre ? ";" : "", name);
	}
	return p;
}

static int thread_paths(const struct fn_thread *t, struct aggs *paths)
{
	char **p = paths_of(t);
	int err = p ? 0 : -ENOMEM;

	for (uint32_t v = 0; p && v < t->n_nodes; v++) {
		struct agg *r;

		if (err || !p[v] || (t->nodes[v].flags & FN_NODE_EXCLUDED))
			continue;
		r = aggs_add(paths);
		if (!r) {
			err = -ENOMEM;
			continue;
		}
		node_agg(t, v, r);
		r->path = p[v];
		p[v] = NULL;   /* the row's now */
		r->name = r->path;
		snprintf(r->thread, sizeof(r->thread), "all");
	}
	for (uint32_t v = 0; p && v < t->n_nodes; v++)
		free(p[v]);
	free(p);
	return err;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct agg *)a)->path,
		      ((const struct agg *)b)->path);
}

/* Paths of every thread, sorted, one row per path. */
static void paths_merge(struct aggs *p)
{
	size_t out = 0;

	qsort(p->v, p->n, sizeof(*p->v), by_path);
	for (size_t i = 0; i < p->n; i++) {
		if (out && !strcmp(p->v[out - 1].path, p->v[i].path)) {
			agg_merge(&p->v[out - 1], &p->v[i]);
			free(p->v[i].path);
			continue;
		}
		p->v[out++] = p->v[i];
	}
	p->n = out;
}

/* ---- writing ---------------------------------------------------------------- */

struct out {
	FILE *f;
	enum td_format fmt;
	bool header;
	int fields;
};

static void key(struct out *o, const char *prefix, const char *k)
{
	if (o->fields++)
		fputc(',', o->f);
	else if (o->fmt == TD_FORMAT_JSONL)
		fputc('{', o->f);
	if (o->fmt == TD_FORMAT_JSONL)
		fprintf(o->f, "\"%s%s\":", prefix, k);
	else if (o->header)
		fprintf(o->f, "%s%s", prefix, k);
}

static void put_str(struct out *o, const char *k, const char *v)
{
	key(o, "", k);
	if (o->header)
		return;
	if (o->fmt == TD_FORMAT_JSONL || strpbrk(v, ",\"\n\r")) {
		fputc('"', o->f);
		for (; *v; v++) {
			unsigned char c = (unsigned char)*v;

			if (o->fmt == TD_FORMAT_CSV && c == '"')
				fputc('"', o->f);
			else if (o->fmt == TD_FORMAT_JSONL &&
				 (c == '"' || c == '\\'))
				fputc('\\', o->f);
			if (o->fmt == TD_FORMAT_JSONL && c < 0x20)
				fprintf(o->f, "\\u%04x", c);
			else
				fputc(c, o->f);
		}
		fputc('"', o->f);
	} else {
		fputs(v, o->f);
	}
}

static void put_u64(struct out *o, const char *prefix, const char *k,
		    uint64_t v)
{
	key(o, prefix, k);
	if (!o->header)
		fprintf(o->f, "%llu", (unsigned long long)v);
}

static void put_frac(struct out *o, const char *prefix, const char *k,
		     double v)
{
	key(o, prefix, k);
	if (!o->header)
		fprintf(o->f, "%.6f", v);
}

/* Summed counts as a result: negative parts of a self clamped at 0. */
static void decode(const struct fn_counts *c, struct td_result *res)
{
	struct td_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.slots = c->slots > 0 ? (uint64_t)c->slots : 0;
	for (int i = 0; i < TD_CAT_COUNT; i++)
		rec.cat[i] = c->cat[i] > 0 ? c->cat[i] : 0;
	rec.qerr = c->qerr;
	rec.flags = c->flags & (TD_RESULT_CYCLES | TD_RESULT_L2_FE_BE);
	if ((c->flags & TD_RESULT_L2) && !c->l1_call)
		rec.flags |= TD_RESULT_L2;
	td_record_decode(&rec, res);
	if (!rec.slots)
		memset(res, 0, sizeof(*res));
}

static void put_figures(struct out *o, const char *p,
			const struct td_result *r)
{
	put_u64(o, p, "slots", r->slots);
	put_frac(o, p, "err", r->err);
	put_u64(o, p, "levels", r->flags & TD_RESULT_L2 ? 2 : 1);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, p, td_l1_name(i), r->l1[i]);
	for (int i = 0; i < TD_L2_COUNT; i++)
		put_frac(o, p, td_l2_name(i), r->l2[i]);
}

static void put_row(struct out *o, const char *kind, const struct agg *a)
{
	struct td_result in, self;
	char buf[32];
	const char *name = a->name ? a->name : fn_name(a->fn, buf, sizeof(buf));

	decode(&a->incl, &in);
	decode(&a->self, &self);
	o->fields = 0;
	put_str(o, "kind", kind);
	put_str(o, "name", name);
	put_str(o, "thread", a->thread);
	put_u64(o, "", "calls", a->calls);
	put_u64(o, "", "unreliable", a->unreliable);
	put_figures(o, "", &in);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, "min_", td_l1_name(i), a->counted ? a->min[i] : 0);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, "max_", td_l1_name(i), a->counted ? a->max[i] : 0);
	put_frac(o, "", "smt_contention", in.smt_contention);
	put_str(o, "basis", in.flags & TD_RESULT_CYCLES ? "cycles" : "slots");
	put_u64(o, "", "max_depth", a->max_depth);
	put_u64(o, "", "open", 0);
	put_figures(o, "self_", &self);
	put_frac(o, "self_", "smt_contention", self.smt_contention);
	put_u64(o, "", "measured", a->measured);
	put_u64(o, "", "abandoned", a->abandoned);
	put_u64(o, "", "tainted", a->tainted);
	fputs(o->fmt == TD_FORMAT_JSONL ? "}\n" : "\n", o->f);
}

static void table_row(FILE *f, const char *kind, const struct agg *a)
{
	struct td_result in, self;
	char buf[32];
	const char *name = a->name ? a->name : fn_name(a->fn, buf, sizeof(buf));

	if (strcmp(kind, "function"))
		return; /* paths: CSV and JSON Lines (the flame graph's) */
	decode(&a->incl, &in);
	decode(&a->self, &self);
	fprintf(f, "%-32s %-8s %10llu %14llu %14llu %7.2fpp",
		name, a->thread, (unsigned long long)a->calls,
		(unsigned long long)in.slots, (unsigned long long)self.slots,
		100 * in.err);
	if (a->unreliable || a->abandoned)
		fprintf(f, "  unreliable %llu abandoned %llu",
			(unsigned long long)a->unreliable,
			(unsigned long long)a->abandoned);
	if (a->max_depth > 1)
		fprintf(f, "  recursion depth %llu",
			(unsigned long long)a->max_depth);
	fputc('\n', f);
	for (int i = 0; i < TD_L1_COUNT && a->measured; i++)
		fprintf(f, "  %-30s %7.1f%% %7.1f%%\n", td_l1_name(i),
			100 * in.l1[i], 100 * self.l1[i]);
}

static void write_row(struct out *o, const char *kind, const struct agg *a)
{
	if (o->fmt == TD_FORMAT_TABLE)
		table_row(o->f, kind, a);
	else
		put_row(o, kind, a);
}

static void write_header(struct out *o)
{
	static const struct agg zero = { .name = "" };

	if (o->fmt == TD_FORMAT_TABLE) {
		fprintf(o->f, "%-32s %-8s %10s %14s %14s %9s\n", "function",
			"thread", "calls", "slots", "self_slots", "err");
		fprintf(o->f, "  %-30s %8s %8s\n", "category", "incl", "self");
		return;
	}
	if (o->fmt != TD_FORMAT_CSV)
		return;
	o->header = true;
	put_row(o, "", &zero);
	o->header = false;
}

static const char *const lost_names[FN_LOST_KINDS] = {
	"no_handle", "nodes_full", "too_deep", "reentered", "other_stack",
	"after_report", "stray_exit", "failed", "in_signal", "pending",
};

/* What could not be attributed: one row per reason, its count in calls. */
static void write_lost(struct out *o, const uint64_t *lost)
{
	for (int k = 0; k < FN_LOST_KINDS; k++) {
		struct agg a;
		char name[48];

		if (!lost[k])
			continue;
		memset(&a, 0, sizeof(a));
		snprintf(name, sizeof(name), "(unattributed:%s)", lost_names[k]);
		a.name = name;
		a.calls = lost[k];
		snprintf(a.thread, sizeof(a.thread), "all");
		if (o->fmt == TD_FORMAT_TABLE)
			fprintf(o->f, "%-32s %-8s %10llu\n", name, "all",
				(unsigned long long)lost[k]);
		else
			put_row(o, "function", &a);
	}
}

static int by_slots(const void *a, const void *b)
{
	int64_t x = ((const struct agg *)a)->incl.slots;
	int64_t y = ((const struct agg *)b)->incl.slots;

	return x < y ? 1 : x > y;
}

static int collect(struct aggs *fns, struct aggs *paths, uint64_t *lost)
{
	int err = 0;

	for (struct fn_thread *t = __atomic_load_n(&fn_threads, __ATOMIC_ACQUIRE);
	     t && !err; t = t->next) {
		pthread_mutex_lock(&t->lock);
		err = thread_functions(t, fns);
		if (!err)
			err = thread_paths(t, paths);
		for (int k = 0; k < FN_LOST_KINDS; k++)
			lost[k] += t->lost[k];
		lost[FN_LOST_PENDING] += t->exited ? 0 : fn_pending(t);
		pthread_mutex_unlock(&t->lock);
	}
	return err;
}

/* Function rows of every thread, then per function its all-threads row;
 * functions in order of their inclusive slots. */
static int write_functions(struct out *o, struct aggs *fns)
{
	struct aggs all = { 0 };

	qsort(fns->v, fns->n, sizeof(*fns->v), by_fn_thread);
	for (size_t i = 0; i < fns->n; i++) {
		struct agg *r = all.n && all.v[all.n - 1].fn == fns->v[i].fn
					? &all.v[all.n - 1] : NULL;

		if (!r) {
			r = aggs_add(&all);
			if (!r) {
				aggs_free(&all);
				return -ENOMEM;
			}
			r->fn = fns->v[i].fn;
			r->first = i;
			snprintf(r->thread, sizeof(r->thread), "all");
		}
		r->count++;
		agg_merge(r, &fns->v[i]);
	}
	qsort(all.v, all.n, sizeof(*all.v), by_slots);
	for (size_t i = 0; i < all.n; i++) {
		for (size_t j = 0; j < all.v[i].count; j++)
			write_row(o, "function", &fns->v[all.v[i].first + j]);
		write_row(o, "function", &all.v[i]);
	}
	aggs_free(&all);
	return 0;
}

int fn_report_write(FILE *f, enum td_format fmt)
{
	struct aggs fns = { 0 }, paths = { 0 };
	uint64_t lost[FN_LOST_KINDS] = { 0 };
	struct out o = { f, fmt, false, 0 };
	int err;

	pthread_mutex_lock(&fn_reg_lock);
	err = collect(&fns, &paths, lost);
	pthread_mutex_unlock(&fn_reg_lock);
	if (!err) {
		paths_merge(&paths);
		write_header(&o);
		err = write_functions(&o, &fns);
	}
	for (size_t i = 0; !err && i < paths.n; i++)
		write_row(&o, "path", &paths.v[i]);
	if (!err)
		write_lost(&o, lost);
	aggs_free(&fns);
	aggs_free(&paths);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}
