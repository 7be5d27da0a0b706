/* SPDX-License-Identifier: MIT */
/*
 * pool: a small program shaped like real code, instrumented with named
 * regions.  A pool of worker threads takes jobs from a queue (a thread
 * runs many jobs, the jobs run on whichever thread is free); a job sorts
 * an array with a recursive quicksort or scans one, then checksums it in
 * a loop kernel.  The regions:
 *
 *   "sort-<n>", "scan-<n>"  a whole job, its name built at run time
 *                           (td_named_begin_str copies it);
 *   "quicksort"             begun in every recursive call: counted once
 *                           per outermost call, max_depth the deepest;
 *   "checksum"              a static struct td_named shared by every
 *                           thread.
 *
 * Nothing here keeps per-thread region state: each worker opens a handle
 * of its own and the library keeps each thread's totals.  The report
 * comes from the environment (a row per thread and an all-threads row):
 *
 *   topdown run -- ./pool                 (or with --emulate, -f csv)
 *   TOPDOWN_REPORT=stderr ./pool
 *
 * Exit status 2: no usable PMU here (the reason is printed); 1: a region
 * call failed (the first failure is printed).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <topdown.h>

#define NR_WORKERS 3
#define NR_JOBS 24

enum job_kind { JOB_SORT, JOB_SCAN };

struct job {
	enum job_kind kind;
	unsigned n;
	uint32_t seed;
};

/* The queue: jobs taken in order by whichever worker is free. */
static struct job jobs[NR_JOBS];
static unsigned next_job;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;

/* The first error of any thread: kept, printed by main. */
static int first_err;
static const char *first_err_what;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

static struct td_named checksum_region = TD_NAMED_INIT("checksum");

static void note(int err, const char *what)
{
	if (err >= 0)
		return;
	pthread_mutex_lock(&err_lock);
	if (!first_err) {
		first_err = err;
		first_err_what = what;
	}
	pthread_mutex_unlock(&err_lock);
}

static bool take_job(struct job *j)
{
	bool got;

	pthread_mutex_lock(&queue_lock);
	got = next_job < NR_JOBS;
	if (got)
		*j = jobs[next_job++];
	pthread_mutex_unlock(&queue_lock);
	return got;
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void swap(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

/* Lomuto quicksort; the region is begun again at every level. */
static void quicksort(struct td *td, uint32_t *a, long lo, long hi)
{
	uint32_t pivot;
	long i = lo;

	if (lo >= hi)
		return;
	note(td_named_begin_str(td, "quicksort"), "begin quicksort");
	pivot = a[hi];
	for (long k = lo; k < hi; k++)
		if (a[k] < pivot)
			swap(&a[i++], &a[k]);
	swap(&a[i], &a[hi]);
	quicksort(td, a, lo, i - 1);
	quicksort(td, a, i + 1, hi);
	note(td_named_end_str(td, "quicksort", NULL), "end quicksort");
}

/* The loop kernel: a dependent chain over the array. */
static uint64_t checksum(struct td *td, const uint32_t *a, unsigned n)
{
	uint64_t h = 0;

	note(td_named_begin(td, &checksum_region), "begin checksum");
	for (unsigned i = 0; i < n; i++)
		h = (h ^ a[i]) * 0x100000001b3ull;
	note(td_named_end(td, &checksum_region, NULL), "end checksum");
	return h;
}

static uint64_t run_job(struct td *td, const struct job *j, uint32_t *a)
{
	static const char *const kinds[] = { "sort", "scan" };
	uint32_t s = j->seed;
	char name[32];
	uint64_t h;

	/* a name built at run time: the library copies it */
	snprintf(name, sizeof(name), "%s-%u", kinds[j->kind], j->n);
	note(td_named_begin_str(td, name), "begin job");
	for (unsigned i = 0; i < j->n; i++)
		a[i] = xorshift(&s);
	if (j->kind == JOB_SORT)
		quicksort(td, a, 0, (long)j->n - 1);
	h = checksum(td, a, j->n);
	note(td_named_end_str(td, name, NULL), "end job");
	return h;
}

struct worker {
	pthread_t thread;
	int id, err;
	uint64_t sink;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	uint32_t *a = malloc(16384 * sizeof(*a));
	char name[16];
	struct job j;
	struct td *td;

	snprintf(name, sizeof(name), "pool-%d", w->id);
	pthread_setname_np(pthread_self(), name);
	w->err = td_open(&td, NULL);
	if (w->err < 0 || !a) {
		free(a);
		return NULL;
	}
	while (take_job(&j))
		w->sink += run_job(td, &j, a);
	td_close(td); /* the thread's totals go to the process's report */
	free(a);
	return NULL;
}

int main(void)
{
	static struct worker w[NR_WORKERS];
	static const unsigned sizes[] = { 4096, 16384 };
	uint64_t sink = 0;

	for (unsigned i = 0; i < NR_JOBS; i++)
		jobs[i] = (struct job){ i % 3 ? JOB_SORT : JOB_SCAN,
					sizes[i / 3 % 2], 2463534242u + i };
	for (int i = 0; i < NR_WORKERS; i++) {
		w[i].id = i;
		if (pthread_create(&w[i].thread, NULL, worker, &w[i]) != 0)
			return 1;
	}
	for (int i = 0; i < NR_WORKERS; i++) {
		pthread_join(w[i].thread, NULL);
		sink += w[i].sink;
		if (w[i].err < 0) {
			fprintf(stderr, "pool: td_open: %s\n",
				td_strerror(w[i].err));
			return 2;
		}
	}
	if (first_err) {
		fprintf(stderr, "pool: %s: %s\n", first_err_what,
			td_strerror(first_err));
		return 1;
	}
	printf("pool: %d jobs on %d workers (%llu)\n", NR_JOBS, NR_WORKERS,
	       (unsigned long long)(sink & 0xff));
	return 0;
}
