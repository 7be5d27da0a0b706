/* SPDX-License-Identifier: MIT */
/*
 * Reports to a caller's FILE *: an aligned table, CSV, JSON Lines.  CSV
 * and JSONL share one column list (documented in README.md), written by
 * one function in either syntax; the header row is that function run
 * with keys instead of values.
 */
#include <errno.h>
#include <stdio.h>

#include "output.h"

/* One line of output: a named region's totals or one record. */
struct row {
	const char *kind;
	const char *name;
	const char *thread; /* tid[:name], "all", or "" for a record */
	uint64_t calls, unreliable;
	const struct td_result *r;
	const double *min, *max;
	uint64_t max_depth, open; /* named regions: recursion, left open */
};

struct out {
	FILE *f;
	enum td_format fmt;
	bool header;  /* CSV header row: write keys, not values */
	int fields;   /* fields written on this line */
	const char *pmu; /* "emulated:<profile>" on the emulator, else NULL */
};

static void sep(struct out *o)
{
	if (o->fields++)
		fputc(',', o->f);
	else if (o->fmt == TD_FORMAT_JSONL)
		fputc('{', o->f);
}

static void key(struct out *o, const char *prefix, const char *k)
{
	sep(o);
	if (o->fmt == TD_FORMAT_JSONL)
		fprintf(o->f, "\"%s%s\":", prefix, k);
	else if (o->header)
		fprintf(o->f, "%s%s", prefix, k);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static bool csv_needs_quotes(const char *s)
{
	for (; *s; s++)
		if (*s == ',' || *s == '"' || *s == '\n' || *s == '\r')
			return true;
	return false;
}

static void csv_string(FILE *f, const char *s)
{
	if (!csv_needs_quotes(s)) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_str(struct out *o, const char *k, const char *v)
{
	key(o, "", k);
	if (o->header)
		return;
	if (o->fmt == TD_FORMAT_JSONL)
		json_string(o->f, v);
	else
		csv_string(o->f, v);
}

static void put_u64(struct out *o, const char *k, uint64_t v)
{
	key(o, "", k);
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

/* The memory drill-down's columns (enum td_mem order). */
static const char *const mem_keys[TD_MEM_COUNT] = {
	"l1_bound", "l2_bound", "l3_bound", "dram_bound", "store_bound",
};

/* A node: a share of the slots, or empty (CSV) / null (JSON) unmeasured. */
static void put_mem(struct out *o, int i, const struct td_result *r)
{
	key(o, "", mem_keys[i]);
	if (o->header)
		return;
	if (r->flags & TD_RESULT_MEMORY)
		fprintf(o->f, "%.6f", r->mem[i]);
	else if (o->fmt == TD_FORMAT_JSONL)
		fputs("null", o->f);
}

/* What the numbers are: slots, cycles (not TopDown), or estimated slots. */
static const char *basis(const struct td_result *r)
{
	if (r->flags & TD_RESULT_CYCLES)
		return "cycles";
	return r->flags & TD_RESULT_MULTIPLEXED ? "estimated" : "slots";
}

static void put_row(struct out *o, const struct row *w)
{
	const struct td_result *r = w->r;

	o->fields = 0;
	put_str(o, "kind", w->kind);
	put_str(o, "name", w->name ? w->name : "");
	put_str(o, "thread", w->thread ? w->thread : "");
	put_u64(o, "calls", w->calls);
	put_u64(o, "unreliable", w->unreliable);
	put_u64(o, "slots", r->slots);
	put_frac(o, "", "err", r->err);
	put_u64(o, "levels", r->flags & TD_RESULT_L2 ? 2 : 1);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, "", td_l1_name(i), r->l1[i]);
	for (int i = 0; i < TD_L2_COUNT; i++)
		put_frac(o, "", td_l2_name(i), r->l2[i]);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, "min_", td_l1_name(i), w->min[i]);
	for (int i = 0; i < TD_L1_COUNT; i++)
		put_frac(o, "max_", td_l1_name(i), w->max[i]);
	put_frac(o, "", "smt_contention", r->smt_contention);
	put_str(o, "basis", basis(r));
	/* added after basis: readers of the earlier columns keep working */
	put_u64(o, "max_depth", w->max_depth);
	put_u64(o, "open", w->open);
	/* the memory drill-down (TD_OPT_MEMORY), after those */
	for (int i = 0; i < TD_MEM_COUNT; i++)
		put_mem(o, i, r);
	/* topdown run's column, written by the library on the emulator */
	if (o->pmu)
		put_str(o, "pmu", o->pmu);
	fputs(o->fmt == TD_FORMAT_JSONL ? "}\n" : "\n", o->f);
}

static void put_header(struct out *o)
{
	static const double zero[TD_L1_COUNT];
	const struct td_result r = { .slots = 0 };
	const struct row w = { "", "", "", 0, 0, &r, zero, zero, 0, 0 };

	if (o->fmt != TD_FORMAT_CSV)
		return;
	o->header = true;
	put_row(o, &w);
	o->header = false;
}

/* ---- the table ---------------------------------------------------------- */

static void table_named_header(FILE *f)
{
	fprintf(f, "%-24s %-16s %8s %10s %16s %9s\n", "region", "thread",
		"calls", "unreliable", "slots", "err");
	fprintf(f, "  %-22s %8s %8s %8s\n", "category", "share", "min", "max");
}

/* Memory bound's nodes, under it (TD_RESULT_MEMORY). */
static void table_mem(FILE *f, const struct td_result *r)
{
	if (!(r->flags & TD_RESULT_MEMORY))
		return;
	for (int i = 0; i < TD_MEM_COUNT; i++)
		fprintf(f, "      %-18s %7.1f%%\n", mem_keys[i],
			100 * r->mem[i]);
}

static void table_named(FILE *f, const struct row *w)
{
	const struct td_result *r = w->r;

	fprintf(f, "%-24s %-16s %8llu %10llu %16llu %7.2fpp%s", w->name,
		w->thread, (unsigned long long)w->calls,
		(unsigned long long)w->unreliable,
		(unsigned long long)r->slots, 100 * r->err,
		r->flags & TD_RESULT_CYCLES ? "  cycles, not TopDown"
		: r->flags & TD_RESULT_MULTIPLEXED ? "  estimated (multiplexed)"
						   : "");
	if (w->max_depth > 1)
		fprintf(f, "  recursion depth %llu",
			(unsigned long long)w->max_depth);
	/* begun and never ended: its time is in no call */
	if (w->open)
		fprintf(f, "  still open: %llu not ended", (unsigned long long)w->open);
	fputc('\n', f);
	for (int i = 0; i < TD_L1_COUNT; i++) {
		fprintf(f, "  %-22s %7.1f%% %7.1f%% %7.1f%%\n", td_l1_name(i),
			100 * r->l1[i], 100 * w->min[i], 100 * w->max[i]);
		/* Ice Lake: the nodes without level 2, under backend bound */
		if (!(r->flags & TD_RESULT_L2) && i == TD_BE_BOUND)
			table_mem(f, r);
		if (!(r->flags & TD_RESULT_L2))
			continue;
		/* Arm N3/V3: no split of retiring and bad speculation */
		if ((r->flags & TD_RESULT_L2_FE_BE) && i < TD_FE_BOUND)
			continue;
		/* level-2 pairs 2i, 2i+1 split level-1 category i */
		for (int j = 2 * i; j < 2 * i + 2; j++) {
			fprintf(f, "    %-20s %7.1f%%\n", td_l2_name(j),
				100 * r->l2[j]);
			if (j == TD_MEM_BOUND)
				table_mem(f, r);
		}
	}
	/* AMD: the fifth share of the slots, with l1[] summing to 1 */
	if (r->smt_contention > 0)
		fprintf(f, "  %-22s %7.1f%%\n", "smt_contention",
			100 * r->smt_contention);
}

static void table_record_header(FILE *f)
{
	static const char *const l1[TD_L1_COUNT] = { "retiring", "bad_spec",
						      "frontend", "backend" };

	fprintf(f, "%6s %-20s %14s", "#", "region", "slots");
	for (int i = 0; i < TD_L1_COUNT; i++)
		fprintf(f, " %9s", l1[i]);
	fprintf(f, " %9s %9s  %s\n", "smt", "err", "flags");
}

static void table_record(FILE *f, size_t idx, const struct row *w)
{
	const struct td_result *r = w->r;

	fprintf(f, "%6zu %-20s %14llu", idx, w->name ? w->name : "-",
		(unsigned long long)r->slots);
	for (int i = 0; i < TD_L1_COUNT; i++)
		fprintf(f, " %8.1f%%", 100 * r->l1[i]);
	fprintf(f, " %8.1f%% %7.2fpp  %s%s%s%s", 100 * r->smt_contention,
		100 * r->err,
		r->flags & TD_RESULT_UNRELIABLE ? "UNRELIABLE " : "",
		r->flags & TD_RESULT_SHORT ? "SHORT " : "",
		r->flags & TD_RESULT_MULTIPLEXED ? "MULTIPLEXED " : "",
		r->flags & TD_RESULT_CYCLES ? "CYCLES" : "");
	/* the memory drill-down: memory bound's nodes, on the same line */
	for (int i = 0; (r->flags & TD_RESULT_MEMORY) && i < TD_MEM_COUNT; i++)
		fprintf(f, "%s%s %.1f%%", i ? ", " : "  memory: ", mem_keys[i],
			100 * r->mem[i]);
	fputc('\n', f);
}

/* ---- the two entry points ----------------------------------------------- */

/*
 * On the test emulator every report says so, whoever writes it: the
 * table a first line, CSV and JSON Lines a last column pmu with
 * "emulated:<profile>" (topdown run's column; absent on hardware).
 */
const char *td_report_label(FILE *f, enum td_format fmt, char *buf,
				  size_t len)
{
	const char *profile = td_emulated_pmu();

	if (!profile)
		return NULL;
	snprintf(buf, len, "emulated:%s", profile);
	if (fmt == TD_FORMAT_TABLE)
		fprintf(f, "EMULATED PMU (profile %s): synthetic counts from "
			"the test emulator, not a measurement\n", profile);
	return buf;
}

static bool format_ok(enum td_format fmt)
{
	return fmt == TD_FORMAT_TABLE || fmt == TD_FORMAT_CSV ||
	       fmt == TD_FORMAT_JSONL;
}

static int finish(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

void td_report_totals_header(FILE *f, enum td_format fmt, const char *pmu)
{
	struct out o = { f, fmt, false, 0, pmu };

	if (fmt == TD_FORMAT_TABLE)
		table_named_header(f);
	put_header(&o);
}

void td_report_totals_row(FILE *f, enum td_format fmt, const char *pmu,
			  const char *name, const char *thread,
			  const struct td_totals *t)
{
	struct out o = { f, fmt, false, 0, pmu };
	const struct row w = { "region", name ? name : "", thread, t->calls,
			       t->unreliable, &t->total, t->min, t->max,
			       t->max_depth, t->open };

	if (fmt == TD_FORMAT_TABLE)
		table_named(f, &w);
	else
		put_row(&o, &w);
}

int td_report_named(FILE *f, const struct td *td, enum td_format fmt)
{
	char label[48];
	const char *pmu;

	if (!f || !td || !format_ok(fmt))
		return -EINVAL;
	pmu = td_report_label(f, fmt, label, sizeof(label));
	td_report_totals_header(f, fmt, pmu);
	for (size_t i = 0; i < td_named_count(td); i++) {
		struct td_totals t;
		const char *name = td_named_at(td, i, &t);

		td_report_totals_row(f, fmt, pmu, name, td->env.thread, &t);
	}
	return finish(f);
}

void td_report_records_header(FILE *f)
{
	table_record_header(f);
}

void td_report_record_row(FILE *f, enum td_format fmt, const char *pmu,
			  const struct td_record *rec, const char *name,
			  const char *thread, size_t idx)
{
	struct out o = { f, fmt, false, 0, pmu };
	struct td_result r;
	struct row w;

	td_record_decode(rec, &r);
	w = (struct row){ "record", name, thread, 1,
			  r.flags & TD_RESULT_UNRELIABLE ? 1 : 0, &r,
			  r.l1, r.l1, 0, 0 };
	if (fmt == TD_FORMAT_TABLE)
		table_record(f, idx, &w);
	else
		put_row(&o, &w);
}

int td_report_records(FILE *f, const struct td_record *recs, size_t n,
		      enum td_format fmt)
{
	struct out o = { f, fmt, false, 0, NULL };
	char label[48];

	if (!f || (!recs && n) || !format_ok(fmt))
		return -EINVAL;
	o.pmu = td_report_label(f, fmt, label, sizeof(label));
	if (fmt == TD_FORMAT_TABLE)
		table_record_header(f);
	put_header(&o);
	/* a record of readings (buffer still attached) has no name */
	for (size_t i = 0; i < n; i++)
		td_report_record_row(f, fmt, o.pmu, &recs[i],
				     recs[i].flags & TD_RECORD_READINGS
					     ? NULL : recs[i].name, "", i);
	return finish(f);
}
