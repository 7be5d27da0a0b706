/* SPDX-License-Identifier: MIT */
/*
 * The frontend-bound workload's code: 4^5 = 1024 generated functions of
 * 16 cache lines each (1 KiB; 1 MiB in all: far above any L1
 * instruction cache, 32-64 KiB, and the reach of a first-level ITLB of
 * 4 KiB pages), each line holding one jump to the next line, so almost
 * every fetched line is a new one and almost nothing retires per line.
 * v_fe_run calls them directly in digit-reversed order: consecutive
 * calls land 256 KiB apart, so no prefetcher follows and every call
 * misses.  Direct calls and jumps only: the branch target buffer can
 * miss (a frontend resteer) but nothing is mispredicted at execute, so
 * bad speculation stays small (an inference from Intel's TMA
 * description of branch resteers under fetch latency).
 */
#include "validate.h"

void v_fe_run(void);

#if defined(__x86_64__) || defined(__i386__)
#define V_JUMP_LINE "jmp 1f\n\t.p2align 6, 0xcc\n1:\n\t"
#elif defined(__aarch64__)
#define V_JUMP_LINE "b 1f\n\t.p2align 6\n1:\n\t"
#else
#define V_JUMP_LINE ""
#endif

#define V_LINES4 V_JUMP_LINE V_JUMP_LINE V_JUMP_LINE V_JUMP_LINE
#define V_BODY V_LINES4 V_LINES4 V_LINES4 V_LINES4

/* One function per base-4 name: fe_abcde. */
#define V_F1(n) __attribute__((noinline, aligned(64))) static void fe_##n(void) \
	{ __asm__ __volatile__(".p2align 6\n\t" V_BODY ::: "memory"); }
#define V_F4(n) V_F1(n##0) V_F1(n##1) V_F1(n##2) V_F1(n##3)
#define V_F16(n) V_F4(n##0) V_F4(n##1) V_F4(n##2) V_F4(n##3)
#define V_F64(n) V_F16(n##0) V_F16(n##1) V_F16(n##2) V_F16(n##3)
#define V_F256(n) V_F64(n##0) V_F64(n##1) V_F64(n##2) V_F64(n##3)
V_F256(0) V_F256(1) V_F256(2) V_F256(3)

/*
 * Calls with the last digit of the name varying slowest: the first
 * digit of the call order is the last digit of the name (digit reversal).
 */
#define V_C1(n) fe_##n();
#define V_C4(s) V_C1(0##s) V_C1(1##s) V_C1(2##s) V_C1(3##s)
#define V_C16(s) V_C4(0##s) V_C4(1##s) V_C4(2##s) V_C4(3##s)
#define V_C64(s) V_C16(0##s) V_C16(1##s) V_C16(2##s) V_C16(3##s)
#define V_C256(s) V_C64(0##s) V_C64(1##s) V_C64(2##s) V_C64(3##s)

void v_fe_run(void)
{
	V_C256(0) V_C256(1) V_C256(2) V_C256(3)
}
