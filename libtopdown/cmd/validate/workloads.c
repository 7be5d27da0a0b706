/* SPDX-License-Identifier: MIT */
/*
 * Five workloads, each built so that one TopDown category dominates on
 * any modern out-of-order core (the expectation is an inference from
 * Intel's Top-down Microarchitecture Analysis method, Yasin, "A Top-Down
 * Method for Performance Analysis and Counters Architecture", ISPASS
 * 2014, which defines the categories by where slots are lost):
 *   retiring     independent integer additions in a predictable loop;
 *   bad_spec     a conditional branch on random bits (half mispredicted);
 *   frontend     1 MiB of code fetched a line at a time (fe_code.c);
 *   be_memory    a dependent pointer chase over a buffer far larger than
 *                the last-level cache (256 MiB), in random order;
 *   be_core      a long dependency chain of 64-bit divisions.
 * Thresholds are perf's MetricThreshold of the same metrics (tools/perf/
 * pmu-events/arch/x86/sapphirerapids/spr-metrics.json: tma_retiring >
 * 0.7, tma_bad_speculation > 0.15, tma_frontend_bound > 0.15,
 * tma_backend_bound > 0.2, tma_branch_mispredicts > 0.1, tma_fetch_latency
 * > 0.1, tma_memory_bound > 0.2, tma_core_bound > 0.1): the level at
 * which perf itself calls the category significant.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

void v_fe_run(void);

const struct v_kernel_desc v_kernels[V_K_COUNT] = {
	[V_K_RETIRING] = { "retiring", TD_RETIRING, -1, 0.7, 0,
		{ 0.80, 0.03, 0.07, 0.10, 0.02, 0.02, 0.04, 0.05 } },
	[V_K_BAD_SPEC] = { "bad_speculation", TD_BAD_SPEC, TD_BR_MISPREDICT,
		0.15, 0.1, { 0.30, 0.45, 0.10, 0.15, 0.01, 0.42, 0.05, 0.05 } },
	[V_K_FRONTEND] = { "frontend", TD_FE_BOUND, TD_FETCH_LAT, 0.15, 0.1,
		{ 0.20, 0.05, 0.60, 0.15, 0.01, 0.03, 0.50, 0.05 } },
	[V_K_BE_MEMORY] = { "backend_memory", TD_BE_BOUND, TD_MEM_BOUND, 0.2,
		0.2, { 0.08, 0.02, 0.05, 0.85, 0.00, 0.01, 0.03, 0.75 } },
	[V_K_BE_CORE] = { "backend_core", TD_BE_BOUND, TD_CORE_BOUND, 0.2,
		0.1, { 0.15, 0.02, 0.05, 0.78, 0.01, 0.01, 0.03, 0.08 } },
};

/* Work per region: a few ms on hardware, a fraction of that emulated. */
static unsigned scale = 16;
static uint64_t *chase;        /* one node per 64-byte line */
static size_t chase_nodes;
static size_t chase_at;
static uint8_t *random_bits;
#define V_RANDOM_BYTES (1u << 16)
static volatile uint64_t sink;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Sattolo's algorithm: one cycle through every node, in random order. */
static void build_chase(size_t nodes, uint64_t *seed)
{
	size_t *perm = malloc(nodes * sizeof(*perm));

	for (size_t i = 0; i < nodes; i++)
		perm[i] = i;
	for (size_t i = nodes - 1; i > 0; i--) {
		size_t j = (size_t)(next_rand(seed) % i);
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < nodes; i++)
		chase[perm[i] * 8] = perm[(i + 1) % nodes] * 8;
	free(perm);
}

int v_workloads_init(bool small)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	size_t bytes = small ? (4u << 20) : (256u << 20);

	scale = small ? 12 : 16;
	chase_nodes = bytes / 64;
	chase = aligned_alloc(64, bytes);
	random_bits = malloc(V_RANDOM_BYTES);
	if (!chase || !random_bits) {
		v_workloads_free();
		return -1;
	}
	build_chase(chase_nodes, &seed);
	for (size_t i = 0; i < V_RANDOM_BYTES; i++)
		random_bits[i] = (uint8_t)next_rand(&seed);
	return 0;
}

void v_workloads_free(void)
{
	free(chase);
	free(random_bits);
	chase = NULL;
	random_bits = NULL;
}

/* The asm barrier keeps the compiler from vectorising or folding. */
static void run_retiring(unsigned n)
{
	uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;

	for (unsigned i = 0; i < n; i++) {
		a += 3; b += 5; c += 7; d += 11; e += 13; f += 17;
		__asm__ __volatile__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d),
				     "+r"(e), "+r"(f));
	}
	sink = a + b + c + d + e + f;
}

/* A real conditional branch (no cmov: the compiler cannot if-convert asm). */
static void run_bad_spec(unsigned n)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t v = random_bits[i & (V_RANDOM_BYTES - 1)];
#if defined(__x86_64__)
		__asm__ __volatile__("test $1, %1\n\tjz 1f\n\tadd $3, %0\n1:"
				     : "+r"(s) : "r"(v) : "cc");
#elif defined(__aarch64__)
		__asm__ __volatile__("tbz %1, #0, 1f\n\tadd %0, %0, #3\n1:"
				     : "+r"(s) : "r"(v));
#else
		if (v & 1)
			s += 3;
		__asm__ __volatile__("" : "+r"(s));
#endif
	}
	sink = s;
}

static void run_be_memory(unsigned n)
{
	size_t at = chase_at;

	for (unsigned i = 0; i < n; i++)
		at = (size_t)chase[at];
	chase_at = at;
}

static void run_be_core(unsigned n)
{
	volatile uint64_t dv = 3;
	uint64_t d = dv, x = UINT64_MAX;

	for (unsigned i = 0; i < n; i++)
		x = x / d + (UINT64_C(1) << 62); /* each needs the last */
	sink = x;
}

void v_kernel_run(enum v_kernel k)
{
	switch (k) {
	case V_K_RETIRING:
		run_retiring(150000 * scale);
		break;
	case V_K_BAD_SPEC:
		run_bad_spec(60000 * scale);
		break;
	case V_K_FRONTEND:
		for (unsigned i = 0; i < 8 * scale; i++)
			v_fe_run();
		break;
	case V_K_BE_MEMORY:
		run_be_memory(3000 * scale);
		break;
	case V_K_BE_CORE:
		run_be_core(20000 * scale);
		break;
	default:
		break;
	}
	v_emu_run(V_EMU_KERNEL_SLOTS); /* emulated: its work, declared */
}
