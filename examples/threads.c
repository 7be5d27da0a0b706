/* SPDX-License-Identifier: MIT */
/*
 * threads: four worker threads, each with its own handle, measuring the
 * same two named regions, declared once for all of them (each handle
 * keeps its own totals of a region: a row per thread in the report); no
 * report code at all.  The report comes from
 * the environment (one per process: a row per thread and an all-threads
 * row per region):
 *
 *   TOPDOWN_REPORT=stderr TOPDOWN_FORMAT=csv ./threads
 *   topdown run -f csv -- ./threads            (or with --emulate)
 *
 * Workers 0 and 1 close their handle and end early; 2 and 3 leave theirs
 * open (the library reports them at exit).  Exit status 2: no usable PMU
 * here (the reason is printed).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <topdown.h>

#define NR_THREADS 4
#define ITERS 5
#define N (1u << 20)

struct worker {
	pthread_t thread;
	int id, err;
	uint64_t sink;
};

/* Declared once, used by every thread. */
static struct td_named sum = TD_NAMED_INIT("sum");
static struct td_named chase = TD_NAMED_INIT("chase");

/* An independent loop, then a dependent pointer chase. */
static uint64_t sum_loop(unsigned n)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += (uint64_t)i * i;
	return s;
}

static uint64_t chase_loop(const uint32_t *next, unsigned n)
{
	uint32_t p = 0;

	for (unsigned i = 0; i < n; i++)
		p = next[p];
	return p;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint32_t *next = malloc(N * sizeof(*next));
	char name[16];
	struct td *td;

	snprintf(name, sizeof(name), "worker-%d", w->id);
	pthread_setname_np(pthread_self(), name);
	w->err = td_open(&td, NULL);
	if (w->err < 0 || !next) {
		free(next);
		return NULL;
	}
	for (unsigned i = 0; i < N; i++) /* one big cycle: stride 4099 */
		next[i] = (i + 4099) % N;
	for (int i = 0; i < ITERS; i++) {
		td_named_begin(td, &sum);
		w->sink += sum_loop(N << w->id);
		td_named_end(td, &sum, NULL);
		td_named_begin(td, &chase);
		w->sink += chase_loop(next, N);
		td_named_end(td, &chase, NULL);
	}
	if (w->id < 2)
		td_close(td); /* its totals go to the process's report */
	free(next);
	return NULL;
}

int main(void)
{
	static struct worker w[NR_THREADS];
	uint64_t sink = 0;

	for (int i = 0; i < NR_THREADS; i++) {
		w[i].id = i;
		if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0)
			return 1;
	}
	for (int i = 0; i < NR_THREADS; i++) {
		pthread_join(w[i].thread, NULL);
		sink += w[i].sink;
		if (w[i].err < 0) {
			fprintf(stderr, "threads: td_open: %s\n",
				td_strerror(w[i].err));
			return 2;
		}
	}
	printf("threads: %d workers done (%llu)\n", NR_THREADS,
	       (unsigned long long)(sink & 0xff));
	return 0;
}
