/* SPDX-License-Identifier: MIT */
/*
 * Per-function TopDown with no code edits: three functions of contrasting
 * kinds, built with -finstrument-functions and nothing else (not linked
 * with libtopdown).  Run it with the hooks preloaded:
 *
 *   topdown run --functions -f jsonl -o fn.jsonl -- build/examples/functions
 *   topdown plot fn.jsonl -o fn.svg          (the TopDown flame graph)
 *
 * dot() is compute bound (retiring), classify() branchy on random data
 * (bad speculation), chase() a pointer chase through a shuffled ring
 * larger than the caches (backend, memory bound).
 *
 * On the test emulator (topdown run --emulate) the PMU is made up: each
 * function then tells the emulator the mix of its work and its length
 * (the emulator's emu_preload_* functions, found with dlsym only when it
 * is preloaded), so that the picture shows what hardware would.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1u << 22)           /* 32 MiB of ring: past the last level */

static double *vec;
static uint32_t *ring;
static unsigned char *coin;

/* The emulator's answer for the work that follows (emulated runs only):
 * not instrumented, so that the work is its caller's. */
static __attribute__((no_instrument_function)) void emulated(const double *fractions, uint64_t slots)
{
	void (*set)(const double *) = (void (*)(const double *))
		dlsym(RTLD_DEFAULT, "emu_preload_set_fractions");
	void (*run)(uint64_t) = (void (*)(uint64_t))
		dlsym(RTLD_DEFAULT, "emu_preload_run");

	if (set && run) {
		set(fractions);
		run(slots);
	}
}

/* Retiring, heavy on FP: a dot product in registers. */
static __attribute__((noinline)) double dot(unsigned rounds)
{
	static const double mix[8] = { 0.80, 0.03, 0.07, 0.10,
				       0.20, 0.02, 0.04, 0.03 };
	double s = 0;

	emulated(mix, 3000000);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 4096; i++)
			s += vec[i] * vec[(i + r) & 4095];
	return s;
}

/* Bad speculation: a branch on random bits. */
static __attribute__((noinline)) unsigned classify(unsigned rounds)
{
	static const double mix[8] = { 0.25, 0.50, 0.10, 0.15,
				       0.02, 0.46, 0.06, 0.05 };
	unsigned hits = 0;

	emulated(mix, 2000000);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 65536; i++)
			if (coin[(i * 7 + r) & (N - 1)] & 1)
				hits += i;
			else
				hits ^= i;
	return hits;
}

/* Backend, memory bound: each load's address is the last load's value. */
static __attribute__((noinline)) uint32_t chase(unsigned steps)
{
	static const double mix[8] = { 0.08, 0.01, 0.04, 0.87,
				       0.01, 0.01, 0.02, 0.80 };
	uint32_t p = 0;

	emulated(mix, 4000000);
	for (unsigned i = 0; i < steps; i++)
		p = ring[p];
	return p;
}

static void setup(void)
{
	static const double mix[8] = { 0.40, 0.05, 0.15, 0.40,
				       0.05, 0.03, 0.10, 0.30 };

	vec = malloc(4096 * sizeof(*vec));
	ring = malloc(N * sizeof(*ring));
	coin = malloc(N);
	if (!vec || !ring || !coin)
		exit(1);
	emulated(mix, 500000);
	for (unsigned i = 0; i < 4096; i++)
		vec[i] = i * 0.5;
	/* one cycle through all slots (Sattolo's shuffle) */
	for (uint32_t i = 0; i < N; i++)
		ring[i] = i;
	srand(1);
	for (uint32_t i = N - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % i, t = ring[i];

		ring[i] = ring[j];
		ring[j] = t;
		coin[i] = (unsigned char)rand();
	}
}

/* main's own work is setup; its callees are the three above. */
int main(void)
{
	double d;
	unsigned c;
	uint32_t p;

	setup();
	d = dot(2000);
	c = classify(100);
	p = chase(4000000);
	printf("dot %g classify %u chase %u\n", d, c, (unsigned)p);
	return 0;
}
