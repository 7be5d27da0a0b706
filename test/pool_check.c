/* SPDX-License-Identifier: MIT */
/*
 * pool_check REPORT.csv TRUTH.csv: a program's named-region report (CSV,
 * as topdown run -f csv writes it) against the truth test/truth_shim.c
 * kept of the same run.  For every thread's row and every all-threads
 * row: the calls (outermost activations) exactly, max_depth exactly,
 * none unreliable, none open, the slots those of the truth (exact: the
 * work is declared), each level-1 share (level 2 too when measured)
 * within the row's err of the true one.  Every truth row must have its
 * report row and the other way round.  Prints each mismatch; exit status
 * 0 when none, 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_parse.h"

#define MAX_ROWS 256
#define NR_TRUTH 10
#define MAX_COLS 48

struct truth {
	char name[64];
	int tid;                /* 0: the all-threads row */
	uint64_t calls, max_depth;
	double sum[NR_TRUTH];   /* slots, then emu_truth's categories */
	int seen;               /* report rows matched to it */
};

static struct truth truth[MAX_ROWS];
static int nr_truth, failures;

static void mismatch(const char *what, const struct truth *t, double got,
		     double want)
{
	printf("MISMATCH %s, thread %d: %s %.9g, want %.9g\n", t->name,
	       t->tid, what, got, want);
	failures++;
}

static struct truth *find(const char *name, int tid)
{
	for (int i = 0; i < nr_truth; i++)
		if (truth[i].tid == tid && !strcmp(truth[i].name, name))
			return &truth[i];
	return NULL;
}

/* The all-threads row of name: the threads' rows added up. */
static void add_to_all(const struct truth *t)
{
	struct truth *a = find(t->name, 0);

	if (!a) {
		if (nr_truth == MAX_ROWS)
			exit(2);
		a = &truth[nr_truth++];
		snprintf(a->name, sizeof(a->name), "%s", t->name);
	}
	a->calls += t->calls;
	if (t->max_depth > a->max_depth)
		a->max_depth = t->max_depth;
	for (int i = 0; i < NR_TRUTH; i++)
		a->sum[i] += t->sum[i];
}

static int read_truth(const char *path)
{
	char line[512], f[MAX_COLS][64];
	int threads;
	FILE *in = fopen(path, "r");

	if (!in)
		return -1;
	while (fgets(line, sizeof(line), in)) {
		struct truth *t = &truth[nr_truth];

		if (csv_split(line, f, MAX_COLS) != 4 + NR_TRUTH ||
		    nr_truth == MAX_ROWS)
			return -1;
		snprintf(t->name, sizeof(t->name), "%s", f[0]);
		t->tid = atoi(f[1]);
		t->calls = strtoull(f[2], NULL, 10);
		t->max_depth = strtoull(f[3], NULL, 10);
		for (int i = 0; i < NR_TRUTH; i++)
			t->sum[i] = strtod(f[4 + i], NULL);
		nr_truth++;
	}
	fclose(in);
	threads = nr_truth;
	for (int i = 0; i < threads; i++)
		add_to_all(&truth[i]);
	return threads;
}

/* The true share of each reported fraction, by its CSV column name. */
static double true_share(const struct truth *t, const char *col)
{
	static const char *const cols[] = {
		"retiring", "bad_speculation", "frontend_bound",
		"backend_bound", "heavy_operations", "branch_mispredicts",
		"fetch_latency", "memory_bound",
	};
	/* the second of each level-2 pair: its parent less the first */
	static const char *const rest[][3] = {
		{ "light_operations", "retiring", "heavy_operations" },
		{ "machine_clears", "bad_speculation", "branch_mispredicts" },
		{ "fetch_bandwidth", "frontend_bound", "fetch_latency" },
		{ "core_bound", "backend_bound", "memory_bound" },
	};

	for (int i = 0; i < 8; i++)
		if (!strcmp(col, cols[i]))
			return t->sum[1 + i] / t->sum[0];
	for (int i = 0; i < 4; i++)
		if (!strcmp(col, rest[i][0]))
			return true_share(t, rest[i][1]) -
			       true_share(t, rest[i][2]);
	return NAN;
}

static const char *const shares[] = {
	"retiring", "bad_speculation", "frontend_bound", "backend_bound",
	"heavy_operations", "light_operations", "branch_mispredicts",
	"machine_clears", "fetch_latency", "fetch_bandwidth",
	"memory_bound", "core_bound",
};

static int col_of(char head[][64], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(head[i], name))
			return i;
	fprintf(stderr, "pool_check: no column %s\n", name);
	exit(2);
}

static void check_row(char head[][64], int n, char f[][64])
{
	const char *thread = f[col_of(head, n, "thread")];
	int tid = strcmp(thread, "all") ? atoi(thread) : 0;
	struct truth *t = find(f[col_of(head, n, "name")], tid);
	double err = strtod(f[col_of(head, n, "err")], NULL);
	double slots = strtod(f[col_of(head, n, "slots")], NULL);
	int levels = atoi(f[col_of(head, n, "levels")]);

	if (!t) {
		printf("MISMATCH %s, thread %s: no such region on that "
		       "thread\n", f[col_of(head, n, "name")], thread);
		failures++;
		return;
	}
	t->seen++;
	if (strtoull(f[col_of(head, n, "calls")], NULL, 10) != t->calls)
		mismatch("calls", t, strtod(f[col_of(head, n, "calls")], NULL),
			 (double)t->calls);
	if (strtoull(f[col_of(head, n, "max_depth")], NULL, 10) !=
	    t->max_depth)
		mismatch("max_depth", t, strtod(f[col_of(head, n, "max_depth")], NULL),
			 (double)t->max_depth);
	if (atoi(f[col_of(head, n, "unreliable")]) != 0)
		mismatch("unreliable", t, strtod(f[col_of(head, n, "unreliable")], NULL), 0);
	if (atoi(f[col_of(head, n, "open")]) != 0)
		mismatch("open", t, strtod(f[col_of(head, n, "open")], NULL), 0);
	/*
	 * SLOTS counts exactly and the declared work is all the region ran
	 * (truth_shim.c): err bounds the shares, the slots are the truth's.
	 */
	if (slots != t->sum[0])
		mismatch("slots", t, slots, t->sum[0]);
	for (int i = 0; i < (levels == 2 ? 12 : 4); i++) {
		double got = strtod(f[col_of(head, n, shares[i])], NULL);
		double want = true_share(t, shares[i]);

		/* the report's six decimals: half a unit of the last more */
		if (fabs(got - want) > err + 0.5e-6)
			mismatch(shares[i], t, got, want);
	}
}

int main(int argc, char **argv)
{
	char line[2048], head[MAX_COLS][64], f[MAX_COLS][64];
	int n = 0, rows = 0, threads;
	FILE *in;

	if (argc != 3) {
		fprintf(stderr, "usage: pool_check REPORT.csv TRUTH.csv\n");
		return 2;
	}
	threads = read_truth(argv[2]);
	in = fopen(argv[1], "r");
	if (threads <= 0 || !in) {
		fprintf(stderr, "pool_check: cannot read %s or %s\n", argv[1],
			argv[2]);
		return 2;
	}
	while (fgets(line, sizeof(line), in)) {
		if (!n) {
			n = csv_split(line, head, MAX_COLS);
			continue;
		}
		if (csv_split(line, f, MAX_COLS) != n ||
		    strcmp(f[0], "region"))
			continue;
		check_row(head, n, f);
		rows++;
	}
	fclose(in);
	for (int i = 0; i < nr_truth; i++)
		if (truth[i].seen != 1) {
			printf("MISMATCH %s, thread %d: %d report rows, "
			       "want 1\n", truth[i].name, truth[i].tid,
			       truth[i].seen);
			failures++;
		}
	printf("pool_check: %d report rows, %d thread rows of truth, %d "
	       "mismatches\n", rows, threads, failures);
	return failures ? 1 : 0;
}
