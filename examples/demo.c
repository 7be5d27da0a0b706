/* SPDX-License-Identifier: MIT */
/*
 * demo: three contrasting regions and their TopDown breakdown.
 *
 *   cc demo.c $(pkg-config --cflags --libs topdown) -o demo && ./demo
 *
 * Exit status 2 means no usable PMU here (the reason is printed); `make
 * demo` then runs the same binary on the test emulator, labelled.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <topdown.h>

#define N (1u << 24)

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* An unpredictable branch per element: bad speculation. */
static uint64_t branchy(const uint8_t *bytes)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < N; i++)
		if (bytes[i] < 128)
			sum += bytes[i];
	return sum;
}

/* A sequential, predictable sum: mostly retiring. */
static uint64_t stream(const uint8_t *bytes)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < N; i++)
		sum += bytes[i] * 3u + 1;
	return sum;
}

/* A random pointer chase over 128 MiB: memory bound. */
static uint64_t chase(const uint32_t *next)
{
	uint32_t p = 0;

	for (uint32_t i = 0; i < N / 8; i++)
		p = next[p];
	return p;
}

static void print_result(const char *name, const struct td_result *r)
{
	printf("%-8s %12llu", name, (unsigned long long)r->slots);
	for (int i = 0; i < TD_L1_COUNT; i++)
		printf(" %7.1f%%", 100 * r->l1[i]);
	printf("  +-%.1fpp%s\n", 100 * r->err,
	       r->flags & TD_RESULT_UNRELIABLE ? "  UNRELIABLE" : "");
	if (!(r->flags & TD_RESULT_L2))
		return;
	/* level-2 pairs 2i, 2i+1 split level-1 category i */
	for (int i = 0; i < TD_L1_COUNT; i++)
		printf("    %-16s = %-18s %5.1f%% + %-18s %5.1f%%\n",
		       td_l1_name(i), td_l2_name(2 * i), 100 * r->l2[2 * i],
		       td_l2_name(2 * i + 1), 100 * r->l2[2 * i + 1]);
}

static void print_header(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	td_query(td, &info);
	printf("core PMU %s, level %u, read by %s%s\n", info.pmu_name,
	       info.levels, info.path == TD_PATH_RDPMC ? "RDPMC" : "read(2)",
	       info.flags & TD_INFO_EMULATED
		       ? "  [EMULATED PMU: synthetic counts]" : "");
	printf("%-8s %12s %8s %8s %8s %8s\n", "region", "slots", "retire",
	       "badspec", "frontend", "backend");
}

int main(void)
{
	uint8_t *bytes = malloc(N);
	uint32_t *next = malloc((N * 2u) * sizeof(*next));
	struct td_region region = { { 0 } };
	struct td_result res;
	struct td *td;
	uint64_t sink = 0;
	int err;

	if (!bytes || !next)
		return 1;
	for (uint32_t i = 0; i < N; i++)
		bytes[i] = (uint8_t)next_random();
	for (uint32_t i = 0; i < N * 2u; i++) /* Sattolo: one random cycle */
		next[i] = i;
	for (uint32_t i = N * 2u - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(next_random() % i), t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
	err = td_open(&td, NULL);
	if (err < 0) {
		fprintf(stderr, "demo: td_open: %s\n", td_strerror(err));
		return 2;
	}
	print_header(td);
	td_region_begin(td, &region);
	sink += branchy(bytes);
	td_region_end(td, &region, &res);
	print_result("branchy", &res);
	td_region_begin(td, &region);
	sink += stream(bytes);
	td_region_end(td, &region, &res);
	print_result("stream", &res);
	td_region_begin(td, &region);
	sink += chase(next);
	td_region_end(td, &region, &res);
	print_result("chase", &res);
	td_close(td);
	free(bytes);
	free(next);
	return sink == 42 ? 3 : 0;
}
