/* SPDX-License-Identifier: MIT */
/* arm64 counter access: MRS of the PMU counter registers at EL0, inline. */
#ifndef TD_ARCH_ARM64_H
#define TD_ARCH_ARM64_H

#include <stdbool.h>
#include <stdint.h>

#define TD_MRS_CASE(n)                                                   \
	case n:                                                          \
		__asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break

/*
 * The counter the kernel publishes as the user page's index - 1
 * (drivers/perf/arm_pmuv3.c armv8pmu_user_event_idx): n in 0..30 is
 * PMEVCNTR<n>_EL0, 31 is PMCCNTR_EL0.  The
 * register is encoded in the instruction, so a switch over the 32
 * encodings, each case its own register (libperf's table swaps 12 and 13:
 * not here).  Legal at EL0 only while the kernel has set PMUSERENR_EL0 for
 * this task (perf_user_access=1 and a mapped user-read event); otherwise
 * it raises SIGILL, which the seqlock's cap_user_rdpmc and index checks
 * keep it from reaching.
 */
static inline uint64_t td_rdpmc(uint32_t counter)
{
	uint64_t v = 0;

	switch (counter) {
	TD_MRS_CASE(0); TD_MRS_CASE(1); TD_MRS_CASE(2); TD_MRS_CASE(3);
	TD_MRS_CASE(4); TD_MRS_CASE(5); TD_MRS_CASE(6); TD_MRS_CASE(7);
	TD_MRS_CASE(8); TD_MRS_CASE(9); TD_MRS_CASE(10); TD_MRS_CASE(11);
	TD_MRS_CASE(12); TD_MRS_CASE(13); TD_MRS_CASE(14); TD_MRS_CASE(15);
	TD_MRS_CASE(16); TD_MRS_CASE(17); TD_MRS_CASE(18); TD_MRS_CASE(19);
	TD_MRS_CASE(20); TD_MRS_CASE(21); TD_MRS_CASE(22); TD_MRS_CASE(23);
	TD_MRS_CASE(24); TD_MRS_CASE(25); TD_MRS_CASE(26); TD_MRS_CASE(27);
	TD_MRS_CASE(28); TD_MRS_CASE(29); TD_MRS_CASE(30);
	case 31:
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	default: /* no such counter: x86 selectors never reach here */
		break;
	}
	return v;
}

#undef TD_MRS_CASE

/*
 * A counter as a fast path keeps it (counters_fast.c): the address of a
 * two-instruction function that MRSes that one register (mrs_stubs.c:
 * entry n reads counter n, 31 PMCCNTR_EL0), so that a read is a call,
 * the MRS and a return, not the switch above.
 */
#define TD_HAVE_COUNTER_STUBS 1
typedef uintptr_t td_counter_reader;
#define TD_MRS_STUB_BYTES 16
extern __attribute__((visibility("hidden"))) const char td_mrs_stubs[];

/* Counters 0-31 have a stub; any other (PMICNTR's 32) is not read. */
static inline bool td_reader_exists(uint32_t counter)
{
	return counter <= 31;
}

static inline td_counter_reader td_reader_of(uint32_t counter)
{
	return (uintptr_t)td_mrs_stubs + TD_MRS_STUB_BYTES * (counter & 31);
}

/*
 * The call in asm: a stub writes x0 and, by the call, x30, nothing else
 * (mrs_stubs.c), so the caller keeps every other register across it,
 * where a C call would spill the AAPCS64 caller-saved ones around it.
 */
static inline uint64_t td_read_counter(td_counter_reader r)
{
	register uint64_t x0 __asm__("x0");

	__asm__ __volatile__("blr %1" : "=r"(x0) : "r"(r) : "x30");
	return x0;
}

/*
 * The x86 fast path's helper (pm_fast.c; td_rdpmc_pair from arch.h), so
 * that it compiles here: it never runs on arm64 (td_pm_fast_setup
 * wants the x86 "cpu" PMU's PERF_METRICS and its fixed RDPMC selectors,
 * which are no counter here).  As on x86: the halves apart.
 */
static inline void td_rdpmc_halves(uint32_t counter, uint64_t *lo,
				   uint64_t *hi)
{
	uint64_t v = td_rdpmc(counter);

	*lo = (uint32_t)v;
	*hi = v >> 32;
}

#endif /* TD_ARCH_ARM64_H */
