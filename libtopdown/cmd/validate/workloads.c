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
 * The memory drill-down's pair (memory.c) chases pointers the same way
 * over two buffers: one of 16 KiB, which any L1 data cache the drill-down
 * runs on holds (32 KiB on Gracemont, 48 KiB on Golden Cove), and the
 * be_memory buffer, at least 4 times the last-level cache.
 * Thresholds are perf's MetricThreshold of the same metrics (tools/perf/
 * pmu-events/arch/x86/sapphirerapids/spr-metrics.json: tma_retiring >
 * 0.7, tma_bad_speculation > 0.15, tma_frontend_bound > 0.15,
 * tma_backend_bound > 0.2, tma_branch_mispredicts > 0.1, tma_fetch_latency
 * > 0.1, tma_memory_bound > 0.2, tma_core_bound > 0.1): the level at
 * which perf itself calls the category significant.
 */
#include <stdint.h>
#include <stdio.h>
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
static uint64_t *l1_chase;     /* the same, L1-resident */
static size_t l1_chase_at;
#define V_L1_CHASE_BYTES (16u << 10)
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
static int build_chase(uint64_t *buf, size_t nodes, uint64_t *seed)
{
	size_t *perm = malloc(nodes * sizeof(*perm));

	if (!perm)
		return -1;
	for (size_t i = 0; i < nodes; i++)
		perm[i] = i;
	for (size_t i = nodes - 1; i > 0; i--) {
		size_t j = (size_t)(next_rand(seed) % i);
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < nodes; i++)
		buf[perm[i] * 8] = perm[(i + 1) % nodes] * 8;
	free(perm);
	return 0;
}

/* The last-level cache's size as sysfs lists it for CPU 0, or 0. */
static size_t llc_bytes(void)
{
	size_t best = 0;

	for (int i = 0; i < 8; i++) {
		char path[96], line[32], unit = 'K';
		unsigned long n = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/"
			 "cache/index%d/size", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%lu%c", &n, &unit) >= 1) {
			size_t b = (size_t)n << (unit == 'M' ? 20 :
						 unit == 'G' ? 30 : 10);
			best = b > best ? b : best;
		}
		fclose(f);
	}
	return best;
}

/* Far larger than the last-level cache: 256 MiB, or 4 times it (2 GiB
 * at most). */
static size_t dram_chase_bytes(void)
{
	size_t bytes = (size_t)256 << 20, llc4 = 4 * llc_bytes();

	if (llc4 > bytes)
		bytes = llc4 < ((size_t)2 << 30) ? llc4 : (size_t)2 << 30;
	return bytes & ~(size_t)63;
}

size_t v_chase_bytes(enum v_chase c)
{
	return c == V_CHASE_L1 ? V_L1_CHASE_BYTES : chase_nodes * 64;
}

int v_workloads_init(bool small)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	size_t bytes = small ? (4u << 20) : dram_chase_bytes();

	scale = small ? 12 : 16;
	chase_nodes = bytes / 64;
	chase = aligned_alloc(64, bytes);
	l1_chase = aligned_alloc(64, V_L1_CHASE_BYTES);
	random_bits = malloc(V_RANDOM_BYTES);
	if (!chase || !l1_chase || !random_bits ||
	    build_chase(chase, chase_nodes, &seed) < 0)
		goto fail;
	for (size_t i = 0; i < V_RANDOM_BYTES; i++)
		random_bits[i] = (uint8_t)next_rand(&seed);
	if (build_chase(l1_chase, V_L1_CHASE_BYTES / 64, &seed) < 0)
		goto fail;
	return 0;
fail:
	v_workloads_free();
	return -1;
}

void v_workloads_free(void)
{
	free(chase);
	free(l1_chase);
	free(random_bits);
	chase = NULL;
	l1_chase = NULL;
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

/* Dependent loads that hit L1: each waits for the last one's latency. */
static void run_l1_chase(unsigned n)
{
	size_t at = l1_chase_at;

	for (unsigned i = 0; i < n; i++)
		at = (size_t)l1_chase[at];
	l1_chase_at = at;
}

void v_chase_run(enum v_chase c)
{
	if (c == V_CHASE_L1)
		run_l1_chase(150000 * scale);
	else
		run_be_memory(3000 * scale);
	v_emu_run(V_EMU_KERNEL_SLOTS); /* emulated: its work, declared */
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
