/* SPDX-License-Identifier: MIT */
/* x86 counter access: the RDPMC instruction, inline. */
#ifndef TD_ARCH_X86_H
#define TD_ARCH_X86_H

#include <stdbool.h>
#include <stdint.h>

/*
 * RDPMC: ECX selects the counter, EDX:EAX receive it.  Bit 30 of ECX selects
 * fixed counters (SLOTS is fixed counter 3), bit 29 PERF_METRICS; the kernel
 * publishes exactly these selectors, plus one, as the user page's index.
 * Faults (#GP, SIGSEGV) when CR4.PCE is clear for this mm.
 */
static inline uint64_t td_rdpmc(uint32_t counter)
{
#if defined(__x86_64__) /* bits 32-63 cleared: no zero extension (below) */
	uint64_t lo, hi;
#else
	uint32_t lo, hi;
#endif

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * The same, leaving the halves apart: for callers that only store them,
 * two stores instead of a shift, an or and a store.  In 64-bit mode RDPMC
 * clears bits 32-63 of RAX and RDX, so 64-bit outputs need no zero
 * extension before they are joined.
 */
static inline void td_rdpmc_halves(uint32_t counter, uint64_t *lo,
				   uint64_t *hi)
{
#if defined(__x86_64__)
	__asm__ __volatile__("rdpmc" : "=a"(*lo), "=d"(*hi) : "c"(counter));
#else
	uint64_t v = td_rdpmc(counter);

	*lo = (uint32_t)v;
	*hi = v >> 32;
#endif
}

/*
 * Two counters back to back, in one asm statement so that the compiler
 * cannot schedule its own register moves between or before them: the
 * first's halves go to R10/R11 (free in the calling convention), the
 * second's stay in EAX/EDX (RDPMC clears bits 32-63 of both in 64-bit
 * mode).  A macro: the second selector must be a constant ("i") at any
 * optimisation level.  x86-64 only: i386 has no R10/R11.
 */
#if defined(__x86_64__)
#define td_rdpmc_pair(first, second, lo1, hi1, lo2, hi2)                   \
	do {                                                                 \
		register uint64_t l1_ __asm__("r10");                        \
		register uint64_t h1_ __asm__("r11");                        \
		uint32_t sel_ = (first);                                     \
		__asm__ __volatile__("rdpmc\n\t"                             \
				     "movq %%rax, %[l1]\n\t"                 \
				     "movq %%rdx, %[h1]\n\t"                 \
				     "movl %[sel2], %%ecx\n\t"               \
				     "rdpmc"                                 \
				     : [l1] "=&r"(l1_), [h1] "=&r"(h1_),     \
				       "=a"(*(lo2)), "=d"(*(hi2)), "+c"(sel_) \
				     : [sel2] "i"(second));                  \
		*(lo1) = l1_;                                                \
		*(hi1) = h1_;                                                \
	} while (0)
#endif /* elsewhere, arch.h's: the two reads one after the other */

#if defined(__x86_64__)
/*
 * The thread pointer: the TLS ABI (variant II) stores the TCB's own
 * address at %fs:0, so one load names the calling thread.
 */
#define TD_HAVE_THREAD_POINTER 1
static inline const void *td_thread_self(void)
{
	const void *tp;

	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp;
}

#if __has_include(<linux/rseq.h>)
#include <stddef.h>
#include <linux/rseq.h>

/*
 * glibc registers its rseq area with this signature on x86 (sysdeps/unix/
 * sysv/linux/x86/bits/rseq.h RSEQ_SIG); the kernel (kernel/rseq.c
 * rseq_get_rseq_cs) checks that the 4 bytes before an abort handler hold
 * the signature the area was registered with.
 */
#define TD_RSEQ_SIG 0x53053053

/*
 * The descriptor is emitted by the assembler below as version, flags and
 * three quads: the kernel's struct rseq_cs (include/uapi/linux/rseq.h).
 */
_Static_assert(offsetof(struct rseq_cs, version) == 0 &&
		       offsetof(struct rseq_cs, flags) == 4 &&
		       offsetof(struct rseq_cs, start_ip) == 8 &&
		       offsetof(struct rseq_cs, post_commit_offset) == 16 &&
		       offsetof(struct rseq_cs, abort_ip) == 24 &&
		       sizeof(struct rseq_cs) == 32,
	       "the rseq_cs descriptor emitted by td_rdpmc_guarded");

enum td_guard { TD_GUARD_OK, TD_GUARD_WRONG_CPU, TD_GUARD_ABORTED };

/*
 * Both RDPMCs inside an rseq critical section that first checks that the
 * current CPU (rseq cpu_id, kept current by the kernel on every return to
 * user space) is in the bitmap of CPUs having fixed counter 3 and
 * PERF_METRICS.  If the thread is preempted, migrated or signalled between
 * the check and the commit point (label 2), the kernel moves it to the
 * abort handler (label 4) before it runs another user instruction
 * (rseq_ip_fixup), so an RDPMC never executes on an E-core where it would
 * #GP (inference from the Intel SDM; PAPI's topdown component guards the
 * same way).  The descriptor lives in __rseq_cs, the abort handler in
 * __rseq_failure preceded by the signature the kernel checks.  rseq_cs is
 * cleared on every exit so that no pointer into this object outlives the
 * section (the library may be dlclosed).
 */
#define TD_HAVE_RSEQ_GUARD 1

/*
 * The section's frame, shared by the two- and three-counter reads below
 * so that both keep the same layout: the descriptor (label 3) and its
 * registration, the CPU check (start_ip, label 1), then the reads; the
 * commit point (label 2), the abort handler (label 4, after the
 * signature) and the wrong-CPU exit (label 5) all clear rseq_cs.  The
 * operands [rs], [cpus], [n], [res] and the immediates are named alike
 * in both.
 */
#define TD_RSEQ_ENTER                                                      \
	".pushsection __rseq_cs, \"aw\"\n\t"                               \
	".balign %c[cs_align]\n\t"                                         \
	"3:\n\t"                                                           \
	".long 0, 0\n\t"                                                   \
	".quad 1f, 2f - 1f, 4f\n\t"                                        \
	".popsection\n\t"                                                  \
	"leaq 3b(%%rip), %%rax\n\t"                                        \
	"movq %%rax, %c[cs](%[rs])\n\t"                                    \
	"1:\n\t"                                                           \
	"movl %c[cpu_id](%[rs]), %%eax\n\t"                                \
	"cmpl %[n], %%eax\n\t"                                             \
	"jae 5f\n\t"                                                       \
	"btl %%eax, (%[cpus])\n\t"                                         \
	"jnc 5f\n\t"

#define TD_RSEQ_LEAVE                                                      \
	"2:\n\t"                                                           \
	"movq $0, %c[cs](%[rs])\n\t"                                       \
	"movl %[ok], %[res]\n\t"                                           \
	"jmp 6f\n\t"                                                       \
	".pushsection __rseq_failure, \"ax\"\n\t"                          \
	".byte 0x0f, 0xb9, 0x3d\n\t" /* ud1 <sig>(%rip): never run */      \
	".long %c[sig]\n\t"                                                \
	"4:\n\t"                                                           \
	"movq $0, %c[cs](%[rs])\n\t"                                       \
	"movl %[aborted], %[res]\n\t"                                      \
	"jmp 6f\n\t"                                                       \
	".popsection\n\t"                                                  \
	"5:\n\t"                                                           \
	"movq $0, %c[cs](%[rs])\n\t"                                       \
	"movl %[wrong_cpu], %[res]\n\t"                                    \
	"6:\n\t"

#define TD_RSEQ_CONSTANTS                                                  \
	[cs] "i"(offsetof(struct rseq, rseq_cs)),                          \
	[cpu_id] "i"(offsetof(struct rseq, cpu_id)),                       \
	[cs_align] "i"(_Alignof(struct rseq_cs)), [sig] "i"(TD_RSEQ_SIG),  \
	[ok] "i"(TD_GUARD_OK), [wrong_cpu] "i"(TD_GUARD_WRONG_CPU),        \
	[aborted] "i"(TD_GUARD_ABORTED)

/*
 * The steps the guarded reads below are made of, as asm text: a counter
 * read by the selector operand named sel (ECX, then RDPMC: EDX:EAX), and
 * its halves joined, into the operand named dst or into RAX, 48 bits
 * wide (bits 32-47 from EDX; a fixed counter's width on these cores) or
 * 64 (EDX above EAX; RDPMC clears bits 32-63 of both in 64-bit mode).
 */
#define TD_ASM_RDPMC(sel) "movl %[" sel "], %%ecx\n\trdpmc\n\t"
#define TD_ASM_JOIN48_TO(dst)                                              \
	"shlq $48, %%rdx\n\tshrq $16, %%rdx\n\t"                             \
	"leaq (%%rax,%%rdx), %[" dst "]\n\t"
#define TD_ASM_JOIN48_RAX                                                  \
	"shlq $48, %%rdx\n\tshrq $16, %%rdx\n\torq %%rdx, %%rax\n\t"
#define TD_ASM_JOIN64_TO(dst)                                              \
	"shlq $32, %%rdx\n\tleaq (%%rax,%%rdx), %[" dst "]\n\t"
#define TD_ASM_JOIN64_RAX "shlq $32, %%rdx\n\torq %%rdx, %%rax\n\t"

static inline enum td_guard td_rdpmc_guarded(struct rseq *rs,
					     const uint64_t *cpus,
					     uint32_t nr_cpus, uint32_t sidx,
					     uint32_t midx, uint64_t *slots,
					     uint64_t *metrics)
{
	uint32_t slo, shi, mlo, mhi, res;

	__asm__ __volatile__(
		TD_RSEQ_ENTER
		TD_ASM_RDPMC("sidx")
		"movl %%eax, %[slo]\n\t"
		"movl %%edx, %[shi]\n\t"
		TD_ASM_RDPMC("midx")
		TD_RSEQ_LEAVE
		: [slo] "=&r"(slo), [shi] "=&r"(shi), [res] "=&r"(res),
		  "=&a"(mlo), "=&d"(mhi)
		: [rs] "r"(rs), [cpus] "r"(cpus), [n] "r"(nr_cpus),
		  [sidx] "r"(sidx), [midx] "r"(midx), TD_RSEQ_CONSTANTS
		: "rcx", "cc", "memory");
	*slots = ((uint64_t)shi << 32) | slo;
	*metrics = ((uint64_t)mhi << 32) | mlo;
	return (enum td_guard)res;
}

/*
 * The same with a third counter read after the two, in the same section
 * (the hybrid source's INT_MISC.UOP_DROPPING, pm_uop.c): one check, one
 * registration and one commit for the three.  An ordinary counter's
 * selector must be guarded like the fixed ones: an E-core may have fewer
 * general-purpose counters than the selector a P-core gave the event.
 * Each value is joined in the section (RDPMC clears bits 32-63 of RAX
 * and RDX in 64-bit mode, so the shifted high half and the low half add
 * without a carry), one register per value instead of two halves: with
 * three values live the halves would cost the caller's saved registers.
 * The selectors may come from memory ("rm").
 */
static inline enum td_guard td_rdpmc_guarded3(struct rseq *rs,
					      const uint64_t *cpus,
					      uint32_t nr_cpus, uint32_t sidx,
					      uint32_t midx, uint32_t xidx,
					      uint64_t *slots,
					      uint64_t *metrics,
					      uint64_t *extra)
{
	uint64_t s, m, x;
	uint32_t res;

	__asm__ __volatile__(
		TD_RSEQ_ENTER
		TD_ASM_RDPMC("sidx")
		TD_ASM_JOIN64_TO("s")
		TD_ASM_RDPMC("midx")
		TD_ASM_JOIN64_TO("m")
		TD_ASM_RDPMC("xidx")
		TD_ASM_JOIN64_RAX
		TD_RSEQ_LEAVE
		: [s] "=&r"(s), [m] "=&r"(m), [res] "=&r"(res), "=&a"(x)
		: [rs] "r"(rs), [cpus] "r"(cpus), [n] "rm"(nr_cpus),
		  [sidx] "rm"(sidx), [midx] "rm"(midx), [xidx] "rm"(xidx),
		  TD_RSEQ_CONSTANTS
		: "rcx", "rdx", "cc", "memory");
	*slots = s;
	*metrics = m;
	*extra = x;
	return (enum td_guard)res;
}

/*
 * One counter alone in the section (userpage.h td_rdpmc_on: the slow
 * path's reads of ordinary counters on a hybrid part, one page at a
 * time), joined as td_rdpmc_guarded3's third.
 */
static inline enum td_guard td_rdpmc_guarded1(struct rseq *rs,
					      const uint64_t *cpus,
					      uint32_t nr_cpus, uint32_t idx,
					      uint64_t *value)
{
	uint64_t x;
	uint32_t res;

	__asm__ __volatile__(
		TD_RSEQ_ENTER
		TD_ASM_RDPMC("idx")
		TD_ASM_JOIN64_RAX
		TD_RSEQ_LEAVE
		: [res] "=&r"(res), "=&a"(x)
		: [rs] "r"(rs), [cpus] "r"(cpus), [n] "rm"(nr_cpus),
		  [idx] "rm"(idx), TD_RSEQ_CONSTANTS
		: "rcx", "rdx", "cc", "memory");
	*value = x;
	return (enum td_guard)res;
}

/*
 * The fast paths' sections (hybrid_fast.c): the same rules, laid out for
 * the fewest instructions around the reads.  The CPU check is one bit
 * test of the CPU's 16 low bits in a bitmap of TD_GUARD_CPUS bits (the
 * kernel's CPU numbers stay below CONFIG_NR_CPUS, at most 8192 on x86:
 * arch/x86/Kconfig NR_CPUS_RANGE_END), so no bound is compared; every
 * way out but the commit (the abort handler, label 4, and the wrong-CPU
 * exit, label 5, one address) clears rseq_cs and jumps to the caller's
 * label: the commit falls through with no result to test.  The kernel
 * clears rseq_cs itself before it enters an abort handler
 * (kernel/rseq.c rseq_ip_fixup, clear_rseq_cs); the handler's clear is
 * for the wrong-CPU exit it shares.  The bitmap's address is an operand
 * in memory (cpus: where it is kept), loaded into RCX, which RDPMC's
 * selector takes next: one register fewer live across the section.
 */
#define TD_GUARD_CPUS 65536

#define TD_RSEQ_GOTO_ENTER                                                 \
	".pushsection __rseq_cs, \"aw\"\n\t"                               \
	".balign %c[cs_align]\n\t"                                         \
	"3:\n\t"                                                           \
	".long 0, 0\n\t"                                                   \
	".quad 1f, 2f - 1f, 4f\n\t"                                        \
	".popsection\n\t"                                                  \
	"leaq 3b(%%rip), %%rax\n\t"                                        \
	"movq %%rax, %c[cs](%[rs])\n\t"                                    \
	"1:\n\t"                                                           \
	"movzwl %c[cpu_id](%[rs]), %%eax\n\t"                              \
	"movq %[cpus], %%rcx\n\t"                                          \
	"btl %%eax, (%%rcx)\n\t"                                           \
	"jnc 5f\n\t"

#define TD_RSEQ_GOTO_LEAVE                                                 \
	"2:\n\t"                                                           \
	"movq $0, %c[cs](%[rs])\n\t"                                       \
	".pushsection __rseq_failure, \"ax\"\n\t"                          \
	".byte 0x0f, 0xb9, 0x3d\n\t" /* ud1 <sig>(%rip): never run */      \
	".long %c[sig]\n\t"                                                \
	"4:\n\t"                                                           \
	"5:\n\t"                                                           \
	"movq $0, %c[cs](%[rs])\n\t"                                       \
	"jmp %l[off]\n\t"                                                  \
	".popsection\n\t"

#define TD_RSEQ_GOTO_CONSTANTS                                             \
	[cs] "i"(offsetof(struct rseq, rseq_cs)),                          \
	[cpu_id] "i"(offsetof(struct rseq, cpu_id)),                       \
	[cs_align] "i"(_Alignof(struct rseq_cs)), [sig] "i"(TD_RSEQ_SIG)

/*
 * A fixed counter (sel) 48 bits wide, then, where with_x (a constant of
 * the caller's copy), an ordinary counter (xsel), each joined in the
 * section; false:
 * the thread off cpus, or preempted, moved or signalled in the section.
 */
static inline __attribute__((always_inline)) bool
td_rseq_read48x(struct rseq *rs, const uint64_t *const *cpus, uint32_t sel,
		bool with_x, const uint32_t *xsel, uint64_t *value, uint64_t *x)
{
	uint64_t v, c;

	if (!with_x) {
		__asm__ goto(
			TD_RSEQ_GOTO_ENTER
			TD_ASM_RDPMC("sel")
			TD_ASM_JOIN48_RAX
			TD_RSEQ_GOTO_LEAVE
			: "=&a"(v)
			: [rs] "r"(rs), [cpus] "m"(*cpus), [sel] "ri"(sel),
			  TD_RSEQ_GOTO_CONSTANTS
			: "rcx", "rdx", "cc", "memory"
			: off);
		*value = v;
		return true;
	}
	__asm__ goto(
		TD_RSEQ_GOTO_ENTER
		TD_ASM_RDPMC("sel")
		TD_ASM_JOIN48_TO("v")
		TD_ASM_RDPMC("xsel")
		TD_ASM_JOIN64_RAX
		TD_RSEQ_GOTO_LEAVE
		: [v] "=&r"(v), "=&a"(c)
		: [rs] "r"(rs), [cpus] "m"(*cpus), [sel] "ri"(sel),
		  [xsel] "m"(*xsel), TD_RSEQ_GOTO_CONSTANTS
		: "rcx", "rdx", "cc", "memory"
		: off);
	*value = v;
	*x = c;
	return true;
off:
	return false;
}

/*
 * A fixed counter alone, as RDPMC gives it: two halves, for the caller
 * to store as they are (the fewest instructions after the read).
 */
static inline __attribute__((always_inline)) bool
td_rseq_read_halves(struct rseq *rs, const uint64_t *const *cpus, uint32_t sel,
		    uint32_t *lo, uint32_t *hi)
{
	uint32_t l, h;

	__asm__ goto(
		TD_RSEQ_GOTO_ENTER
		TD_ASM_RDPMC("sel")
		TD_RSEQ_GOTO_LEAVE
		: "=&a"(l), "=&d"(h)
		: [rs] "r"(rs), [cpus] "m"(*cpus), [sel] "ri"(sel),
		  TD_RSEQ_GOTO_CONSTANTS
		: "rcx", "cc", "memory"
		: off);
	*lo = l;
	*hi = h;
	return true;
off:
	return false;
}

/*
 * Two fixed counters (the first 48 bits wide) and, where with_x, an
 * ordinary one (xsel) after them, joined in the section.
 */
static inline __attribute__((always_inline)) bool
td_rseq_read3(struct rseq *rs, const uint64_t *const *cpus, uint32_t sel1,
	      uint32_t sel2, bool with_x, const uint32_t *xsel, uint64_t *v1,
	      uint64_t *v2, uint64_t *x)
{
	uint64_t a, b, c;

	if (!with_x) {
		__asm__ goto(
			TD_RSEQ_GOTO_ENTER
			TD_ASM_RDPMC("sel1")
			TD_ASM_JOIN48_TO("a")
			TD_ASM_RDPMC("sel2")
			TD_ASM_JOIN64_RAX
			TD_RSEQ_GOTO_LEAVE
			: [a] "=&r"(a), "=&a"(b)
			: [rs] "r"(rs), [cpus] "m"(*cpus), [sel1] "ri"(sel1),
			  [sel2] "ri"(sel2), TD_RSEQ_GOTO_CONSTANTS
			: "rcx", "rdx", "cc", "memory"
			: off);
		*v1 = a;
		*v2 = b;
		return true;
	}
	__asm__ goto(
		TD_RSEQ_GOTO_ENTER
		TD_ASM_RDPMC("sel1")
		TD_ASM_JOIN48_TO("a")
		TD_ASM_RDPMC("sel2")
		TD_ASM_JOIN64_TO("b")
		TD_ASM_RDPMC("xsel")
		TD_ASM_JOIN64_RAX
		TD_RSEQ_GOTO_LEAVE
		: [a] "=&r"(a), [b] "=&r"(b), "=&a"(c)
		: [rs] "r"(rs), [cpus] "m"(*cpus), [sel1] "ri"(sel1),
		  [sel2] "ri"(sel2), [xsel] "m"(*xsel), TD_RSEQ_GOTO_CONSTANTS
		: "rcx", "rdx", "cc", "memory"
		: off);
	*v1 = a;
	*v2 = b;
	*x = c;
	return true;
off:
	return false;
}

/*
 * Two counters by the selectors in memory, the second's RDPMC the
 * section's last instruction, its commit: metrics-clear mode's trigger
 * (its read zeroes SLOTS and PERF_METRICS), so that an abort comes
 * before it ran, nothing cleared, and a read that ran is never undone.
 * The first is joined in the section (48 bits wide where first48, a
 * constant of the caller's copy), the second left as RDPMC gave it, two
 * halves, for the caller to join after the section (each zero-extended
 * by RDPMC in 64-bit mode: no instruction more to clear bits 32-63).
 */
static inline __attribute__((always_inline)) bool
td_rseq_read2_commit(struct rseq *rs, const uint64_t *const *cpus,
		     const uint32_t *sel1, const uint32_t *sel2, bool first48,
		     uint64_t *v1, uint64_t *lo2, uint64_t *hi2)
{
	uint64_t a, l, h;

	/* one section, the first read joined as `join` says */
#define TD_READ2_COMMIT(join)                                              \
	__asm__ goto(TD_RSEQ_GOTO_ENTER TD_ASM_RDPMC("sel1") join            \
		     TD_ASM_RDPMC("sel2") TD_RSEQ_GOTO_LEAVE                 \
		     : [a] "=&r"(a), "=&a"(l), "=&d"(h)                      \
		     : [rs] "r"(rs), [cpus] "m"(*cpus), [sel1] "m"(*sel1),   \
		       [sel2] "m"(*sel2), TD_RSEQ_GOTO_CONSTANTS             \
		     : "rcx", "cc", "memory"                                 \
		     : off)
	if (first48)
		TD_READ2_COMMIT(TD_ASM_JOIN48_TO("a"));
	else
		TD_READ2_COMMIT(TD_ASM_JOIN64_TO("a"));
#undef TD_READ2_COMMIT
	*v1 = a;
	*lo2 = l;
	*hi2 = h;
	return true;
off:
	return false;
}

#endif /* linux/rseq.h */
#endif /* __x86_64__ */

#endif /* TD_ARCH_X86_H */
