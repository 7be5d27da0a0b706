/* SPDX-License-Identifier: MIT */
/*
 * harness: a microbenchmark runner.  Three pairs of contrasting kernels,
 * each run ITERS times as a named region, with one record per iteration;
 * then the per-iteration records and the per-kernel totals, in the table,
 * CSV and JSON Lines formats of libtopdown's reports.
 *
 *   cc harness.c $(pkg-config --cflags --libs topdown) -o harness
 *   ./harness [table|csv|jsonl]      (default: all three)
 *
 * Exit status 2 means no usable PMU here (the reason is printed); `make
 * harness` then runs the same binary on the test emulator, labelled.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topdown.h>

#define ITERS 4
#define BYTES (1u << 22)          /* 4 MiB of random bytes */
#define SMALL (1u << 12)          /* 16 KiB walk: L1-resident */
#define LARGE (1u << 24)          /* 64 MiB walk: DRAM-bound */
#define STEPS (1u << 20)          /* pointer-chase steps per iteration */

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct data {
	uint8_t *bytes;           /* random bytes */
	uint32_t *small, *large;  /* one random cycle each (Sattolo) */
};

/* Branch on i: the predictor learns it. */
static uint64_t branch_predictable(const struct data *d)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < BYTES; i++)
		if (i & 1)
			sum += d->bytes[i];
	return sum;
}

/* Branch on a random byte: mispredicted half the time. */
static uint64_t branch_random(const struct data *d)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < BYTES; i++)
		if (d->bytes[i] < 128)
			sum += d->bytes[i];
	return sum;
}

static uint64_t chase(const uint32_t *next)
{
	uint32_t p = 0;

	for (uint32_t i = 0; i < STEPS; i++)
		p = next[p];
	return p;
}

static uint64_t walk_cached(const struct data *d)
{
	return chase(d->small);
}

static uint64_t walk_dram(const struct data *d)
{
	return chase(d->large);
}

/* Each multiply-add waits for the previous one: core bound. */
static uint64_t dep_chain(const struct data *d)
{
	uint64_t x = d->bytes[0];

	for (uint32_t i = 0; i < BYTES; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Four independent chains of the same operations: the core overlaps them. */
static uint64_t independent(const struct data *d)
{
	uint64_t a = d->bytes[0], b = a + 1, c = a + 2, e = a + 3;

	for (uint32_t i = 0; i < BYTES; i += 4) {
		a = a * 6364136223846793005ull + 1442695040888963407ull;
		b = b * 6364136223846793005ull + 1442695040888963407ull;
		c = c * 6364136223846793005ull + 1442695040888963407ull;
		e = e * 6364136223846793005ull + 1442695040888963407ull;
	}
	return a ^ b ^ c ^ e;
}

struct kernel {
	struct td_named region;
	uint64_t (*fn)(const struct data *);
};

static struct kernel kernels[] = {
	{ TD_NAMED_INIT("branch_predictable"), branch_predictable },
	{ TD_NAMED_INIT("branch_random"), branch_random },
	{ TD_NAMED_INIT("walk_cached"), walk_cached },
	{ TD_NAMED_INIT("walk_dram"), walk_dram },
	{ TD_NAMED_INIT("dep_chain"), dep_chain },
	{ TD_NAMED_INIT("independent"), independent },
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

static void random_cycle(uint32_t *next, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		next[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(next_random() % i), t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
}

static int prepare(struct data *d)
{
	d->bytes = malloc(BYTES);
	d->small = malloc(SMALL * sizeof(uint32_t));
	d->large = malloc(LARGE * sizeof(uint32_t));
	if (!d->bytes || !d->small || !d->large)
		return -1;
	for (uint32_t i = 0; i < BYTES; i++)
		d->bytes[i] = (uint8_t)next_random();
	random_cycle(d->small, SMALL);
	random_cycle(d->large, LARGE);
	return 0;
}

/* Run every kernel ITERS times (after one warm-up call). */
static uint64_t run_all(struct td *td, const struct data *d)
{
	uint64_t sink = 0;

	for (size_t k = 0; k < NKERNELS; k++) {
		sink += kernels[k].fn(d);
		for (int i = 0; i < ITERS; i++) {
			td_named_begin(td, &kernels[k].region);
			sink += kernels[k].fn(d);
			td_named_end(td, &kernels[k].region, NULL);
		}
	}
	return sink;
}

static void report(struct td *td, const struct td_record *recs, size_t n,
		   enum td_format fmt, const char *label)
{
	printf("\n=== %s: per-iteration records\n", label);
	td_report_records(stdout, recs, n, fmt);
	printf("\n=== %s: totals per kernel (slot-weighted)\n", label);
	td_report_named(stdout, td, fmt);
}

static void print_header(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	td_query(td, &info);
	printf("harness: core PMU %s, level %u, read by %s, %d iterations%s\n",
	       info.pmu_name, info.levels,
	       info.path == TD_PATH_RDPMC ? "RDPMC" : "read(2)", ITERS,
	       info.flags & TD_INFO_EMULATED
		       ? "  [EMULATED PMU: synthetic counts]" : "");
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "table", "csv", "jsonl" };
	static struct td_record recs[NKERNELS * ITERS];
	const char *which = argc > 1 ? argv[1] : "all";
	struct data d;
	struct td *td;
	size_t n = 0;
	uint64_t sink;
	int err;

	err = td_open(&td, NULL);
	if (err < 0) {
		fprintf(stderr, "harness: td_open: %s\n", td_strerror(err));
		return 2;
	}
	if (prepare(&d) < 0)
		return 1;
	print_header(td);
	td_records_attach(td, recs, NKERNELS * ITERS);
	sink = run_all(td, &d);
	td_records_detach(td, &n, NULL);
	for (int f = 0; f < 3; f++)
		if (!strcmp(which, "all") || !strcmp(which, names[f]))
			report(td, recs, n, (enum td_format)(TD_FORMAT_TABLE + f),
			       names[f]);
	td_close(td);
	free(d.bytes);
	free(d.small);
	free(d.large);
	return sink == 42 ? 3 : 0;
}
