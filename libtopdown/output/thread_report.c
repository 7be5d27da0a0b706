/* SPDX-License-Identifier: MIT */
/*
 * The process's report across threads: one row per (thread, region
 * name), merged when a thread had several handles, and after each name's
 * thread rows an all-threads row ("all"); then the per-iteration records
 * of every thread, in the order each made them.  Merging keeps the meaning of
 * every column: counts and slots add up, fractions and err are
 * slot-weighted (a fraction of the summed slots, never an average of
 * ratios), min and max are the extremes over every thread's calls.
 * Cold path only: at td_close and at process exit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* Calls with counted slots: they carry fractions, min and max. */
static bool counted(const struct td_totals *t)
{
	return t->calls > t->unreliable;
}

/* a*sa + b*sb over sa + sb (0 when both weigh nothing). */
static double weigh(double a, double sa, double b, double sb)
{
	return sa + sb > 0 ? (a * sa + b * sb) / (sa + sb) : 0;
}

static void merge_fractions(struct td_result *x, const struct td_result *y,
			    bool l2)
{
	double sx = (double)x->slots, sy = (double)y->slots;

	for (int i = 0; i < TD_L1_COUNT; i++)
		x->l1[i] = weigh(x->l1[i], sx, y->l1[i], sy);
	for (int i = 0; i < TD_L2_COUNT; i++)
		x->l2[i] = l2 ? weigh(x->l2[i], sx, y->l2[i], sy) : 0;
	/* each part is off by at most err of its own slots */
	x->err = weigh(x->err, sx, y->err, sy);
	x->smt_contention = weigh(x->smt_contention, sx, y->smt_contention, sy);
}

/*
 * The memory drill-down's nodes, where both parts have them (with level
 * 2, or on Ice Lake without it).
 */
static bool merge_mem(struct td_result *x, const struct td_result *y)
{
	double sx = (double)x->slots, sy = (double)y->slots;

	if (!(x->flags & y->flags & TD_RESULT_MEMORY))
		return false;
	for (int i = 0; i < TD_MEM_COUNT; i++)
		x->mem[i] = weigh(x->mem[i], sx, y->mem[i], sy);
	return true;
}

static void merge_extremes(struct td_totals *into, const struct td_totals *t)
{
	for (int i = 0; i < TD_L1_COUNT; i++) {
		if (t->min[i] < into->min[i])
			into->min[i] = t->min[i];
		if (t->max[i] > into->max[i])
			into->max[i] = t->max[i];
	}
}

/* Not measured: no call counted, fractions 0 within err 1 (td_decode). */
static void merge_uncounted(struct td_totals *into, const struct td_totals *t)
{
	into->calls += t->calls;
	into->unreliable += t->unreliable;
	if (!counted(into))
		into->total.err = 1;
}

void td_totals_merge(struct td_totals *into, const struct td_totals *t)
{
	const unsigned keep = TD_RESULT_CYCLES | TD_RESULT_MULTIPLEXED |
			      TD_RESULT_L2_FE_BE;
	struct td_result *x = &into->total;
	uint64_t open = into->open + t->open;
	uint64_t depth = into->max_depth > t->max_depth ? into->max_depth
							: t->max_depth;
	bool l2, mem;

	if (!counted(t)) {
		merge_uncounted(into, t);
	} else if (!counted(into)) {
		uint64_t calls = into->calls, unreliable = into->unreliable;

		*into = *t;
		into->calls += calls;
		into->unreliable += unreliable;
	} else {
		/* level 2 only where every part measured it */
		l2 = (x->flags & t->total.flags & TD_RESULT_L2) != 0;
		mem = merge_mem(x, &t->total); /* before slots add up */
		merge_fractions(x, &t->total, l2);
		merge_extremes(into, t);
		x->slots += t->total.slots;
		x->resets += t->total.resets;
		x->flags = ((x->flags | t->total.flags) & keep) |
			   (l2 ? TD_RESULT_L2 : 0) |
			   (mem ? TD_RESULT_MEMORY : 0) |
			   (x->slots < TD_SHORT_SLOTS ? TD_RESULT_SHORT : 0);
		into->calls += t->calls;
		into->unreliable += t->unreliable;
	}
	into->open = open;
	into->max_depth = depth;
}

static int grow(struct td_report_rows *rows)
{
	size_t cap = rows->cap ? 2 * rows->cap : 16;
	struct td_report_row *v;

	if (rows->n < rows->cap)
		return 0;
	v = realloc(rows->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	rows->v = v;
	rows->cap = cap;
	return 0;
}

static int add_row(struct td_report_rows *rows, const char *name,
		   const char *thread, const struct td_totals *t)
{
	struct td_report_row *r;

	for (size_t i = 0; i < rows->n; i++) {
		r = &rows->v[i];
		if (!strcmp(r->name, name) && !strcmp(r->thread, thread)) {
			td_totals_merge(&r->t, t);
			return 0;
		}
	}
	if (grow(rows) < 0)
		return -ENOMEM;
	r = &rows->v[rows->n];
	r->name = strdup(name);
	if (!r->name)
		return -ENOMEM;
	snprintf(r->thread, sizeof(r->thread), "%s", thread);
	r->t = *t;
	rows->n++;
	return 0;
}

static int add_record(struct td_report_rows *rows,
		      const struct td_record *rec, const char *name,
		      const char *thread)
{
	struct td_report_record *r;

	if (rows->nrec == rows->caprec) {
		size_t cap = rows->caprec ? 2 * rows->caprec : 64;
		struct td_report_record *v = realloc(rows->rec,
						     cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rows->rec = v;
		rows->caprec = cap;
	}
	r = &rows->rec[rows->nrec];
	r->name = strdup(name ? name : "");
	if (!r->name)
		return -ENOMEM;
	r->rec = *rec;
	r->rec.name = NULL;
	snprintf(r->thread, sizeof(r->thread), "%s", thread);
	rows->nrec++;
	return 0;
}

int td_rows_add_records(struct td_report_rows *rows,
			const struct td_record *recs, size_t n,
			const char *thread)
{
	for (size_t i = 0; i < n; i++) {
		/* a record of readings (still attached) has no name */
		const char *name = recs[i].flags & TD_RECORD_READINGS
					   ? NULL : recs[i].name;
		int err = add_record(rows, &recs[i], name, thread);

		if (err < 0)
			return err;
	}
	return 0;
}

int td_rows_add_handle(struct td_report_rows *rows, const struct td *td)
{
	for (size_t i = 0; i < td_named_count(td); i++) {
		struct td_totals t;
		const char *name = td_named_at(td, i, &t);
		int err = add_row(rows, name, td->env.thread, &t);

		if (err < 0)
			return err;
	}
	if (!td->sink.buf)
		return 0;
	return td_rows_add_records(rows, td->sink.buf,
				   (size_t)(td->sink.next - td->sink.buf),
				   td->env.thread);
}

int td_rows_copy(struct td_report_rows *dst, const struct td_report_rows *src)
{
	int err = 0;

	for (size_t i = 0; i < src->n && !err; i++) {
		const struct td_report_row *r = &src->v[i];

		err = add_row(dst, r->name, r->thread, &r->t);
	}
	for (size_t i = 0; i < src->nrec && !err; i++) {
		const struct td_report_record *r = &src->rec[i];

		err = add_record(dst, &r->rec, r->name, r->thread);
	}
	return err;
}

void td_rows_free(struct td_report_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		free(rows->v[i].name);
	for (size_t i = 0; i < rows->nrec; i++)
		free(rows->rec[i].name);
	free(rows->v);
	free(rows->rec);
	memset(rows, 0, sizeof(*rows));
}

/* Has an earlier row the name of row i (then i's group is written)? */
static bool seen_before(const struct td_report_rows *rows, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(rows->v[j].name, rows->v[i].name))
			return true;
	return false;
}

/* Has an earlier record the name and thread of record i? */
static bool group_seen(const struct td_report_rows *rows, size_t i)
{
	const struct td_report_record *r = &rows->rec[i];

	for (size_t j = 0; j < i; j++)
		if (!strcmp(rows->rec[j].name, r->name) &&
		    !strcmp(rows->rec[j].thread, r->thread))
			return true;
	return false;
}

/*
 * Are record i's name and thread a region's row?  Then the region's line
 * already has its calls' totals: records add the per-iteration detail,
 * for the full table and the picture.
 */
static bool group_is_region(const struct td_report_rows *rows, size_t i)
{
	const struct td_report_record *r = &rows->rec[i];

	for (size_t j = 0; j < rows->n; j++)
		if (!strcmp(rows->v[j].name, r->name) &&
		    !strcmp(rows->v[j].thread, r->thread))
			return true;
	return false;
}

/* Region names, and groups of records (name and thread) of no region. */
static size_t count_names(const struct td_report_rows *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < rows->n; i++)
		n += !seen_before(rows, i);
	for (size_t i = 0; i < rows->nrec; i++)
		n += !group_seen(rows, i) && !group_is_region(rows, i);
	return n;
}

/* ---- the compact table: one line per region ----------------------------- */

static void compact_header(FILE *f)
{
	fprintf(f, "%-24s %-16s %8s %16s %9s %9s %9s %9s %9s\n", "region",
		"thread", "calls", "slots", "retiring", "bad_spec", "frontend",
		"backend", "err");
}

/* What the full table says in words on a region's line, shortened. */
static void compact_notes(FILE *f, const struct td_totals *t)
{
	if (t->unreliable)
		fprintf(f, "  %llu unreliable", (unsigned long long)t->unreliable);
	if (t->total.flags & TD_RESULT_CYCLES)
		fputs("  cycles, not TopDown", f);
	else if (t->total.flags & TD_RESULT_MULTIPLEXED)
		fputs("  estimated", f);
	if (t->max_depth > 1)
		fprintf(f, "  depth %llu", (unsigned long long)t->max_depth);
	if (t->open)
		fprintf(f, "  still open: %llu", (unsigned long long)t->open);
}

static void compact_line(FILE *f, const char *name, const char *thread,
			 const struct td_totals *t, bool records)
{
	fprintf(f, "%-24s %-16s %8llu %16llu", name, thread,
		(unsigned long long)t->calls,
		(unsigned long long)t->total.slots);
	for (int i = 0; i < TD_L1_COUNT; i++)
		fprintf(f, " %8.1f%%", 100 * t->total.l1[i]);
	fprintf(f, " %7.2fpp", 100 * t->total.err);
	if (records) /* calls: iterations; err: slot-weighted */
		fputs("  records", f);
	compact_notes(f, t);
	fputc('\n', f);
}

/*
 * One name: its thread rows, then "all".  The table leaves out the all
 * row of a name measured by one thread (the same figures again), and
 * the compact table has only the all row ("all (N)") of a name measured
 * by several.
 */
static void write_name(FILE *f, const struct td_report_rows *rows, size_t i,
		       enum td_format fmt, const char *pmu, bool compact)
{
	const char *name = rows->v[i].name;
	struct td_totals all;
	size_t threads = 0;
	char label[32];

	memset(&all, 0, sizeof(all));
	for (size_t j = i; j < rows->n; j++) {
		if (strcmp(rows->v[j].name, name))
			continue;
		threads++;
		td_totals_merge(&all, &rows->v[j].t);
		if (!compact)
			td_report_totals_row(f, fmt, pmu, name,
					     rows->v[j].thread, &rows->v[j].t);
	}
	if (compact && threads == 1)
		compact_line(f, name, rows->v[i].thread, &rows->v[i].t,
			     false);
	else if (compact) {
		snprintf(label, sizeof(label), "all (%zu)", threads);
		compact_line(f, name, label, &all, false);
	} else if (threads > 1 || fmt != TD_FORMAT_TABLE)
		td_report_totals_row(f, fmt, pmu, name, "all", &all);
}

/* ---- records ------------------------------------------------------------ */

static void record_totals(const struct td_record *rec, struct td_totals *t)
{
	memset(t, 0, sizeof(*t));
	td_record_decode(rec, &t->total);
	t->calls = 1;
	t->unreliable = (t->total.flags & TD_RESULT_UNRELIABLE) != 0;
	memcpy(t->min, t->total.l1, sizeof(t->min));
	memcpy(t->max, t->total.l1, sizeof(t->max));
}

/*
 * Compact: one line per record name and thread, its iterations merged,
 * but for the records of a region that has its line.
 */
static void compact_records(FILE *f, const struct td_report_rows *rows)
{
	for (size_t i = 0; i < rows->nrec; i++) {
		const struct td_report_record *r = &rows->rec[i];
		struct td_totals all, t;

		if (group_seen(rows, i) || group_is_region(rows, i))
			continue;
		memset(&all, 0, sizeof(all));
		for (size_t j = i; j < rows->nrec; j++) {
			if (strcmp(rows->rec[j].name, r->name) ||
			    strcmp(rows->rec[j].thread, r->thread))
				continue;
			record_totals(&rows->rec[j].rec, &t);
			td_totals_merge(&all, &t);
		}
		compact_line(f, r->name[0] ? r->name : "-", r->thread, &all,
			     true);
	}
}

/*
 * Every record, after the regions: rows of kind "record" under the one
 * CSV header; in the table, its own header, then each thread's records
 * numbered from 0.
 */
static void write_records(FILE *f, const struct td_report_rows *rows,
			  enum td_format fmt, const char *pmu)
{
	size_t idx = 0;

	if (rows->nrec && fmt == TD_FORMAT_TABLE) {
		fputs("\nper-iteration records\n", f);
		td_report_records_header(f);
	}
	for (size_t i = 0; i < rows->nrec; i++) {
		const struct td_report_record *r = &rows->rec[i];

		if (i == 0 || strcmp(r->thread, rows->rec[i - 1].thread)) {
			idx = 0;
			if (fmt == TD_FORMAT_TABLE)
				fprintf(f, "thread %s\n", r->thread);
		}
		td_report_record_row(f, fmt, pmu, &r->rec,
				     r->name[0] ? r->name : NULL, r->thread,
				     idx++);
	}
}

/* Names in the order first seen; each: its thread rows, then "all". */
int td_rows_write(FILE *f, const struct td_report_rows *rows,
		  enum td_format fmt, enum td_table_view view)
{
	bool compact = fmt == TD_FORMAT_TABLE &&
		       (view == TD_VIEW_COMPACT ||
			(view == TD_VIEW_AUTO &&
			 (count_names(rows) > TD_COMPACT_ABOVE ||
			  rows->nrec > TD_COMPACT_RECORDS)));
	char label[48];
	/* on the emulator: the pmu column, or the table's first line */
	const char *pmu = td_report_label(f, fmt, label, sizeof(label));

	if (compact)
		compact_header(f);
	else
		td_report_totals_header(f, fmt, pmu);
	/* handles opened, nothing to show: say what would be shown */
	if (!rows->n && !rows->nrec && fmt == TD_FORMAT_TABLE)
		fputs(TD_NO_NAMED_REGION "\n", f);
	for (size_t i = 0; i < rows->n; i++)
		if (!seen_before(rows, i))
			write_name(f, rows, i, fmt, pmu, compact);
	if (compact)
		compact_records(f, rows);
	else
		write_records(f, rows, fmt, pmu);
	if (compact)
		fprintf(f, "(one line per region: TOPDOWN_FORMAT=full, topdown "
			"run -f full, for every thread and level 2%s)\n",
			rows->nrec ? ", and each of the records" : "");
	return ferror(f) ? -EIO : 0;
}
