/* SPDX-License-Identifier: MIT */
/*
 * RDPMC trap-and-emulate.  CR4.PCE is clear on these VMs, so the library's
 * own inline RDPMC raises #GP, delivered as SIGSEGV (SIGILL under
 * valgrind, which does not decode it).  The handler checks for 0f 33 at
 * RIP, answers from the emulated PMU by ECX, and steps over the insn.
 * When the emulated kernel would not allow RDPMC (sysfs rdpmc=0, nothing
 * mapped) or ECX names a counter that does not exist, the fault is real:
 * the process dies as it would on hardware.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "emu_internal.h"

/*
 * Test frameworks (cmocka) install their own SIGSEGV handler around every
 * test.  While the emulator is active, signal() for SIGSEGV/SIGILL records
 * that handler as the one to chain to for faults that are not RDPMC, so
 * real crashes are still reported and RDPMC keeps being emulated.
 */
typedef void (*emu_handler)(int);
static emu_handler chained = SIG_DFL;
static bool trap_installed;

emu_handler signal(int sig, emu_handler h)
{
	static emu_handler (*real_signal)(int, emu_handler);

	if (trap_installed && (sig == SIGSEGV || sig == SIGILL)) {
		emu_handler old = chained;
		chained = h;
		return old;
	}
	if (!real_signal)
		real_signal = (emu_handler (*)(int, emu_handler))dlsym(
			RTLD_NEXT, "signal");
	return real_signal(sig, h);
}

static void not_ours(int sig)
{
	struct sigaction sa;

	if (chained != SIG_DFL && chained != SIG_IGN) {
		chained(sig);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL); /* re-fault with the default action */
}

static void die(const char *why)
{
	static const char head[] = "emu: RDPMC #GP: ";

	if (write(2, head, sizeof(head) - 1) < 0 ||
	    write(2, why, strlen(why)) < 0 || write(2, "\n", 1) < 0)
		_exit(99);
	trap_installed = false;
	chained = SIG_DFL;
	not_ours(SIGSEGV);
	abort();
}

static bool rdpmc_allowed(void)
{
	if (emu.rdpmc_knob == 0)
		return false;
	return emu.rdpmc_knob == 2 ||
	       __atomic_load_n(&emu.rdpmc_maps, __ATOMIC_RELAXED) > 0;
}

/* Metrics-clear mode: a ring-3 read of the trigger zeroes both. */
static void clear_after_read(enum emu_clear_trigger reg)
{
	struct emu_group *g = emu_cpu.group;

	if (g && g->metrics_clear && g->scheduled && emu.clear_trigger == reg)
		memset(&emu_cpu.hw, 0, sizeof(emu_cpu.hw));
}

static uint64_t emulate_rdpmc(uint32_t ecx)
{
	struct emu_hw *hw = &emu_cpu.hw;

	if (emu.gen_width) { /* ordinary counters only */
		if (!rdpmc_allowed())
			die("CR4.PCE clear (no RDPMC-capable event mapped)");
		if (ecx >= emu.gp_counters && !(emu.arm && ecx == 31))
			die("no such general-purpose counter");
		__atomic_fetch_add(&emu.stats.rdpmcs, 1, __ATOMIC_RELAXED);
		emu_preload_rdpmc(emu_gen_group_of(ecx), ecx);
		return emu_gen_rdpmc(ecx);
	}
	if (emu.atom_width && !(ecx & ((1u << 30) | (1u << 29)))) {
		/* a GP counter: 8 on a P-core, 6 on an E-core (Skymont 8);
		 * RDPMC of one this core lacks: #GP (Intel SDM, RDPMC) */
		if (!rdpmc_allowed())
			die("CR4.PCE clear (no RDPMC-capable event mapped)");
		if (ecx >= emu_gp_counters_here())
			die("no such general-purpose counter on this core");
		__atomic_fetch_add(&emu.stats.rdpmcs, 1, __ATOMIC_RELAXED);
		emu_preload_rdpmc(emu_gen_group_of(ecx), ecx);
		return emu_gen_rdpmc(ecx);
	}
	if (emu.has_topdown && !(ecx & ((1u << 30) | (1u << 29)))) {
		/* a GP counter of a PERF_METRICS core (SPR: 8) */
		if (!rdpmc_allowed())
			die("CR4.PCE clear (no RDPMC-capable event mapped)");
		if (ecx >= emu.gp_counters)
			die("no such general-purpose counter");
		__atomic_fetch_add(&emu.stats.rdpmcs, 1, __ATOMIC_RELAXED);
		emu_preload_rdpmc(emu_gen_group_of(ecx), ecx);
		return emu_gen_rdpmc(ecx);
	}
	if (!emu.has_topdown)
		die("no fixed counter 3 / PERF_METRICS on this PMU");
	if (emu_is_ecore(emu_cpu.cpu))
		die("fixed counter 3 / PERF_METRICS do not exist on an E-core");
	if (!rdpmc_allowed())
		die("CR4.PCE clear (no RDPMC-capable event mapped)");
	__atomic_fetch_add(&emu.stats.rdpmcs, 1, __ATOMIC_RELAXED);
	/* SLOTS and PERF_METRICS: bits 32 and 33 of the reading */
	emu_preload_rdpmc(emu_cpu.group, 32 + (ecx == EMU_RDPMC_METRICS));
	if (ecx == EMU_RDPMC_SLOTS) {
		uint64_t v = hw->slots;

		if (emu.faults & EMU_FAULT_HIDE_RESET)
			v += emu.hidden_slots;
		if (emu.faults & EMU_FAULT_SLOTS_DOUBLE)
			v *= 2;
		v &= (UINT64_C(1) << 48) - 1;
		clear_after_read(EMU_CLEAR_ON_SLOTS);
		return v;
	}
	if (ecx == EMU_RDPMC_METRICS) {
		uint64_t v = emu_hw_metrics(hw);

		if ((emu.faults & EMU_FAULT_HIDE_RESET) && emu.frozen)
			v = emu.frozen_metrics;
		if (emu.faults & EMU_FAULT_METRICS_SWAP) /* bytes 0 and 3 */
			v = (v & ~UINT64_C(0xff0000ff)) | (v & 0xff) << 24 |
			    (v >> 24 & 0xff);
		clear_after_read(EMU_CLEAR_ON_METRICS);
		return v;
	}
	die("no such counter");
	return 0;
}

/*
 * The planned events that act the same on both architectures: the group
 * multiplexed out (an interrupt, no preemption), a PMI.
 */
static void sched_at_rdpmc(const struct emu_sched_event *ev)
{
	if (ev->kind == EMU_SCHED_DESCHEDULE)
		emu_deschedule();
	if (ev->kind == EMU_SCHED_FOREIGN_RESET)
		emu_pmi();
}

#if defined(__x86_64__)
/*
 * The kernel's rseq_ip_fixup for a preemption just before the RDPMC at
 * RIP: inside the registered critical section, the thread resumes at its
 * abort handler, whose preceding 4 bytes must be the signature (else the
 * kernel kills it), and rseq_cs is cleared.
 */
static bool rseq_abort(greg_t *r)
{
	struct emu_rseq *rs = emu_rseq_self ? emu_rseq_self() : NULL;
	const struct emu_rseq_cs *cs;
	uint64_t ip = (uint64_t)r[REG_RIP];
	uint32_t sig;

	if (!rs || !rs->rseq_cs)
		return false;
	cs = (const struct emu_rseq_cs *)(uintptr_t)rs->rseq_cs;
	rs->rseq_cs = 0;
	if (ip - cs->start_ip >= cs->post_commit_offset)
		return false;
	memcpy(&sig, (const void *)(uintptr_t)(cs->abort_ip - 4), 4);
	if (sig != 0x53053053 || cs->version != 0)
		die("rseq abort signature mismatch (kernel: SIGSEGV)");
	r[REG_RIP] = (greg_t)cs->abort_ip;
	return true;
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *r = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)r[REG_RIP];
	uint64_t v;

	(void)si;
	if (ip[0] != 0x0f || ip[1] != 0x33) {
		not_ours(sig);
		return;
	}
	struct emu_sched_event ev = emu_sched_take(EMU_AT_RDPMC);

	if (ev.kind == EMU_SCHED_MIGRATE) { /* an interrupt, then the move */
		emu_migrate(ev.cpu);
		if (rseq_abort(r))
			return;
	}
	if (ev.kind == EMU_SCHED_SWITCH_OUT) /* an interrupt, out and in */
		emu_context_switch(0);
	if (ev.kind == EMU_SCHED_STINT) { /* away and back before the section */
		int home = emu_cpu.cpu;

		emu_migrate(ev.cpu);
		emu_run(ev.slots, &ev.mix);
		emu_migrate(home);
	}
	if (ev.kind == EMU_SCHED_SIGNAL && rseq_abort(r))
		return; /* the handler ran; back at the abort handler */
	sched_at_rdpmc(&ev);
	emu_read_work();
	v = emulate_rdpmc((uint32_t)r[REG_RCX]);
	r[REG_RAX] = (greg_t)(uint32_t)v;
	r[REG_RDX] = (greg_t)(v >> 32);
	r[REG_RIP] += 2;
	emu_preload_leave();
}

void emu_trap_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	trap_installed = true;
}
#elif defined(__aarch64__)
/*
 * arm64: an EL0 MRS of a PMU register traps while PMUSERENR_EL0 denies
 * it; under qemu-user it always raises SIGILL.  Decode the MRS at PC
 * (o0 op1 CRn CRm op2 Rt, op0 = 3): PMCCNTR_EL0 is op1 3, CRn 9, CRm 13,
 * op2 0 (counter 31); PMEVCNTR<n>_EL0 is op1 3, CRn 14, CRm 0b10:n[4:3],
 * op2 n[2:0].  Answer from the emulated PMU into Rt, step over it.
 */
static int pmu_counter_of(uint32_t insn)
{
	unsigned op1 = (insn >> 16) & 7, crn = (insn >> 12) & 15;
	unsigned crm = (insn >> 8) & 15, op2 = (insn >> 5) & 7;

	if ((insn & 0xfff80000u) != 0xd5380000u || op1 != 3)
		return -1;
	if (crn == 9 && crm == 13 && op2 == 0)
		return 31;
	if (crn == 14 && (crm >> 2) == 2) {
		unsigned n = (crm & 3) << 3 | op2;
		return n < 31 ? (int)n : -1;
	}
	return -1;
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint32_t insn;
	unsigned rt;
	int n;

	(void)si;
	memcpy(&insn, (const void *)(uintptr_t)uc->uc_mcontext.pc, 4);
	n = pmu_counter_of(insn);
	if (n < 0) {
		not_ours(sig);
		return;
	}
	/* the scheduling model's interrupt just before this instruction */
	struct emu_sched_event ev = emu_sched_take(EMU_AT_RDPMC);

	if (ev.kind == EMU_SCHED_SWITCH_OUT)
		emu_context_switch(0);
	sched_at_rdpmc(&ev); /* no rseq guard on arm64: SIGNAL does nothing */
	emu_read_work();
	rt = insn & 31;
	if (rt != 31) /* xzr: the value is discarded */
		uc->uc_mcontext.regs[rt] = emulate_rdpmc((uint32_t)n);
	else
		emulate_rdpmc((uint32_t)n);
	uc->uc_mcontext.pc += 4;
	emu_preload_leave();
}

void emu_trap_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	trap_installed = true;
}
#else
void emu_trap_install(void)
{
}
#endif
