/* SPDX-License-Identifier: MIT */
/* x86 counter access: the RDPMC instruction, inline. */
#ifndef TD_ARCH_X86_H
#define TD_ARCH_X86_H

#include <stdint.h>

/*
 * RDPMC: ECX selects the counter, EDX:EAX receive it.  Bit 30 of ECX selects
 * fixed counters (SLOTS is fixed counter 3), bit 29 PERF_METRICS; the kernel
 * publishes exactly these selectors, plus one, as the user page's index.
 * Faults (#GP, SIGSEGV) when CR4.PCE is clear for this mm.
 */
static inline uint64_t td_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

#endif /* TD_ARCH_X86_H */
