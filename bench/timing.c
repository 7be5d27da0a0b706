/* SPDX-License-Identifier: MIT */
/*
 * Overhead benchmark, timed: what a begin/end pair costs on this machine's
 * PMU, in nanoseconds (CLOCK_MONOTONIC) and TSC ticks, median over many
 * batches, next to the floor (four bare RDPMCs: what any user-space
 * reader of SLOTS and PERF_METRICS at both ends must pay) and the read(2)
 * path of the same library.  Needs a PMU with PERF_METRICS: without one it
 * says why and exits 2 (make bench then reruns it on the emulator, whose
 * figures measure the emulator, not the library).  Compare ratios taken
 * in one run; the absolute figures depend on the machine and its load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topdown.h"

#define MAX_BATCHES 201

/* Under the emulator every RDPMC is a trap: a token run shows the path. */
static int batch_len = 1000, nr_batches = MAX_BATCHES;

#if defined(__x86_64__)
static inline uint64_t ticks(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)
			     :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t bare_rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return ((uint64_t)hi << 32) | lo;
}
#else
static inline uint64_t ticks(void)
{
	return 0;
}

static inline uint64_t bare_rdpmc(uint32_t c)
{
	(void)c;
	return 0;
}
#endif

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum variant { PAIR, PAIR_RESULT, FLOOR };

/* One batch of batch_len repetitions; per-repetition ns and ticks. */
static void batch(struct td *td, enum variant v, double *ns, double *tk)
{
	struct td_region r = { { 0 } };
	struct td_result res;
	volatile uint64_t sink = 0;
	double t0 = now_ns();
	uint64_t k0 = ticks();

	for (int i = 0; i < batch_len; i++) {
		switch (v) {
		case PAIR:
			td_region_begin(td, &r);
			td_region_end(td, &r, NULL);
			break;
		case PAIR_RESULT:
			td_region_begin(td, &r);
			td_region_end(td, &r, &res);
			break;
		case FLOOR: /* SLOTS and PERF_METRICS, at begin and at end */
			sink += bare_rdpmc((1u << 30) | 3);
			sink += bare_rdpmc(1u << 29);
			sink += bare_rdpmc((1u << 30) | 3);
			sink += bare_rdpmc(1u << 29);
			break;
		}
	}
	*tk = (double)(ticks() - k0) / batch_len;
	*ns = (now_ns() - t0) / batch_len;
	(void)sink;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void measure(struct td *td, enum variant v, double *ns, double *tk)
{
	static double n[MAX_BATCHES], t[MAX_BATCHES];

	for (int i = 0; i < nr_batches; i++)
		batch(td, v, &n[i], &t[i]);
	qsort(n, nr_batches, sizeof(*n), cmp);
	qsort(t, nr_batches, sizeof(*t), cmp);
	*ns = n[nr_batches / 2];
	*tk = t[nr_batches / 2];
}

static void row(const char *name, double ns, double tk, double floor_ns)
{
	printf("%-34s %9.1f %9.1f %8.2f\n", name, ns, tk,
	       floor_ns > 0 ? ns / floor_ns : 0);
}

int main(void)
{
	struct td_options slow = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td, *rd;
	double fns = 0, ftk = 0, ns, tk;
	int err = td_open(&td, NULL);

	if (err < 0) {
		printf("timing: no usable PMU here (%s): skipped\n",
		       td_strerror(err));
		return 2;
	}
	td_query(td, &info);
	if (getenv("TD_EMULATE")) {
		batch_len = 20;
		nr_batches = 11;
	}
	printf("# ns and TSC ticks per begin/end pair, median of %d batches "
	       "of %d%s\n", nr_batches, batch_len,
	       getenv("TD_EMULATE") ? "  [EMULATED PMU: these time the "
				      "emulator's traps, not the library]"
				    : "");
	printf("%-34s %9s %9s %8s\n", "variant", "ns", "ticks", "x floor");
	if (info.path == TD_PATH_RDPMC && !strcmp(info.pmu_name, "cpu")) {
		measure(td, FLOOR, &fns, &ftk);
		row("floor: 4 bare RDPMCs", fns, ftk, fns);
	}
	measure(td, PAIR, &ns, &tk);
	row(info.path == TD_PATH_RDPMC ? "pair, RDPMC path" : "pair, read(2)",
	    ns, tk, fns);
	measure(td, PAIR_RESULT, &ns, &tk);
	row("pair + td_result", ns, tk, fns);
	td_close(td);
	slow.flags = TD_OPT_NO_RDPMC;
	if (td_open(&rd, &slow) == 0) {
		measure(rd, PAIR, &ns, &tk);
		row("pair, read(2) path (NO_RDPMC)", ns, tk, fns);
		td_close(rd);
	}
	return 0;
}
