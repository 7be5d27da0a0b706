/* SPDX-License-Identifier: MIT */
/* Picks the counter-access helpers of the architecture being built. */
#ifndef TD_ARCH_H
#define TD_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include "arch_x86.h"
#define TD_HAVE_USER_READ 1
#elif defined(__aarch64__)
#include "arch_arm64.h"
#define TD_HAVE_USER_READ 1
#else
#define TD_HAVE_USER_READ 0
/* No user-space counter read on this architecture yet: read(2) only. */
static inline uint64_t td_rdpmc(uint32_t counter)
{
	(void)counter;
	return 0;
}

static inline void td_rdpmc_halves(uint32_t counter, uint64_t *lo,
				   uint64_t *hi)
{
	(void)counter;
	*lo = *hi = 0;
}
#endif

#ifndef TD_HAVE_COUNTER_STUBS
/*
 * A counter as a fast path keeps it (counters_fast.c): its number, read
 * with td_rdpmc, the selector in a register (x86: any the kernel
 * publishes).  arm64 encodes the register in the instruction and keeps a
 * stub's address instead (arch_arm64.h).
 */
typedef uintptr_t td_counter_reader;
static inline bool td_reader_exists(uint32_t counter)
{
	(void)counter;
	return TD_HAVE_USER_READ;
}

static inline td_counter_reader td_reader_of(uint32_t counter)
{
	return counter;
}

static inline uint64_t td_read_counter(td_counter_reader r)
{
	return td_rdpmc((uint32_t)r);
}
#endif

#ifndef td_rdpmc_pair
/*
 * Two counters one after the other: i386 and arm64 (x86-64 has its own,
 * in one asm statement, arch_x86.h).
 */
#define td_rdpmc_pair(first, second, lo1, hi1, lo2, hi2)                   \
	do {                                                                 \
		td_rdpmc_halves((first), (lo1), (hi1));                      \
		td_rdpmc_halves((second), (lo2), (hi2));                     \
	} while (0)
#endif

#ifndef TD_HAVE_THREAD_POINTER
/*
 * This thread's identity without a system call: the address of a TLS
 * variable (initial-exec: an offset from the thread pointer, one add).
 */
extern __thread char td_tls_anchor __attribute__((tls_model("initial-exec")));
static inline const void *td_thread_self(void)
{
	return &td_tls_anchor;
}
#endif

#ifndef TD_HAVE_RSEQ_GUARD
#define TD_HAVE_RSEQ_GUARD 0
#endif

#endif /* TD_ARCH_H */
