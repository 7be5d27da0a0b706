/* SPDX-License-Identifier: MIT */
/*
 * arm64: one small function per PMU counter register, each an MRS of
 * that register into x0 and a return (arch_arm64.h td_reader_of): the
 * register is encoded in the instruction, so a fast path that keeps a
 * counter's number calls its entry instead of switching over all 32.
 * Entry n reads PMEVCNTR<n>_EL0, entry 31 PMCCNTR_EL0, the numbering of
 * the user page's index - 1 (drivers/perf/arm_pmuv3.c,
 * armv8pmu_user_event_idx).  Where the library is built with branch
 * protection (-mbranch-protection=bti or standard: the ACLE's
 * __ARM_FEATURE_BTI_DEFAULT), each entry starts with BTI c (HINT #34),
 * the landing pad an indirect call needs on pages the loader maps
 * guarded (PROT_BTI), which it does only for objects marked BTI, and
 * only such a build marks this one so.  Elsewhere the hint would be an
 * instruction executed at every read for nothing: each entry is then
 * the MRS and the return, padded to the same size.
 */
#if defined(__aarch64__)
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT == 1
#define TD_STUB(reg) "hint #34\n\tmrs x0, " reg "\n\tret\n\tnop\n\t"
#else
#define TD_STUB(reg) "mrs x0, " reg "\n\tret\n\tnop\n\tnop\n\t"
#endif
#define TD_EV(n) TD_STUB("pmevcntr" #n "_el0")

__asm__(".text\n\t"
	".balign 16\n\t"
	".globl td_mrs_stubs\n\t"
	".hidden td_mrs_stubs\n\t"
	".type td_mrs_stubs, %function\n"
	"td_mrs_stubs:\n\t"
	TD_EV(0) TD_EV(1) TD_EV(2) TD_EV(3) TD_EV(4) TD_EV(5) TD_EV(6)
	TD_EV(7) TD_EV(8) TD_EV(9) TD_EV(10) TD_EV(11) TD_EV(12) TD_EV(13)
	TD_EV(14) TD_EV(15) TD_EV(16) TD_EV(17) TD_EV(18) TD_EV(19)
	TD_EV(20) TD_EV(21) TD_EV(22) TD_EV(23) TD_EV(24) TD_EV(25)
	TD_EV(26) TD_EV(27) TD_EV(28) TD_EV(29) TD_EV(30)
	TD_STUB("pmccntr_el0")
	".size td_mrs_stubs, .-td_mrs_stubs\n");
#else
typedef int td_no_mrs_stubs; /* ISO C: a translation unit is not empty */
#endif
