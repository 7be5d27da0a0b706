/* SPDX-License-Identifier: MIT */
/*
 * Running an unmodified program on the emulator (LD_PRELOAD=libtdemu.so
 * TD_EMULATE=icl|spr, or an ordinary-counter profile: zen4|zen5|skl|hsw|
 * grt|tnt|cmt).  With no test driving it, the emulated thread's
 * work is its real CPU time outside the emulator: at every entry into it
 * (an emulated RDPMC, a read(2) of a perf fd, the hooks below) the
 * thread CPU time since it last left the emulator is run, 4 slots
 * per ns, with a synthetic mix that changes every millisecond, or with
 * the mix a program set through emu_preload_set_fractions.  The
 * breakdown is therefore made up; only the plumbing is real.
 *
 * What the emulator itself costs is not the program's work: a real
 * RDPMC is one instruction, and the PMU counts none of the kernel's
 * (exclude_kernel).  Its handlers' own time is left out (the clock is
 * read again as each one leaves).  The kernel's part of a trap, the #GP
 * delivered as a signal and the sigreturn (a few microseconds, far more
 * on a loaded machine), cannot be told apart from the program's own
 * instructions by the thread's clock.  So the reads of one reading see
 * one instant: an RDPMC of a counter of the group the previous RDPMC
 * read, one this reading has not read yet, with no other entry into
 * the emulator between them, runs nothing; what ran in between, a few
 * of the reader's instructions beside two kernel crossings, is dropped.
 * On hardware those reads lie a few cycles apart; here, with the time
 * between them counted, each counter of a region would take its share
 * of the traps' cost, which varies with the machine's load, and a
 * region's counters would disagree by it.  The first read of a reading
 * (a counter read again, another group's, or after any other entry)
 * runs the time since the last exit, one kernel crossing each way
 * included: that lengthens a region, the same for all its counters.
 *
 * A program that knows it runs here (topdown-validate --emulate finds
 * these functions with dlsym) may:
 * - set the mix of the work that follows (emu_preload_set_fractions):
 *   the emulator's synthetic answer for that work, not a measurement;
 *   and, on the profiles with the memory drill-down, where its memory
 *   bound stalls (emu_preload_set_mem_shares, as emu_set_mem_shares);
 * - declare its work (emu_preload_run): from the first call on, the
 *   thread's work is what it declares, its CPU time no longer counted,
 *   so that what it measures cannot depend on the machine's load;
 * - read the emulator's truth (emu_preload_truth) and raise a PMI
 *   (emu_preload_pmi).
 * Real system calls are modelled too: nanosleep/clock_nanosleep switch
 * the thread out and another task's work in (emu_context_switch), and
 * sched_setaffinity moves it to the first CPU of the new mask.
 *
 * TD_EMU_SLOW_TRAPS=1 makes each RDPMC trap spend 0 to 350 us of the
 * thread's CPU time before the emulator's clock is read (the trap's
 * number mod 8, times 50 us), as a #GP delivered on a loaded machine
 * may: what a program measures must not change.
 *
 * TD_EMU_FAULT=name[,name...] injects a fault, so that a checker can be
 * shown to catch it (off unless set):
 *   metrics_swap   RDPMC of PERF_METRICS returns the retiring and
 *                  backend-bound bytes swapped (a wrong encoding);
 *   slots_double   RDPMC of SLOTS returns twice the register;
 *   hide_reset     after a read(2) or PMI reset the registers, RDPMC
 *                  shows SLOTS plus the slots reset away and the
 *                  PERF_METRICS word of before the first such reset, so
 *                  a foreign reset leaves no trace and the readings stay
 *                  consistent but wrong (a missed flag; the library's
 *                  own IOC_RESET ends it);
 *   switch_scramble  a schedule-in restores PERF_METRICS with its
 *                  level-1 bytes rotated (a kernel restore bug: wrong
 *                  counts nobody can flag);
 *   fe_ret_swap    ordinary counters: RDPMC of the frontend event's
 *                  counter shows what the retiring event counted since
 *                  the kernel's last update of it, and the other way
 *                  round; read(2) stays exact (a region then measures
 *                  what a formula with the two terms swapped would);
 *   mem_swap       the memory drill-down's stall events count the L1
 *                  share's stall cycles as DRAM's and the other way
 *                  round (a wrong event encoding); the truth stays.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"

static bool preload_mode, slow_traps;
static __thread unsigned traps;
static __thread uint64_t last_ns;       /* thread CPU time at the last exit */
static __thread const void *reading_group; /* the reading in progress */
static __thread uint64_t reading_read;  /* its counters read so far */
static __thread bool mix_set;
static __thread bool work_declared;     /* emu_preload_run: no CPU time */
static __thread struct emu_mix set_mix;

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Retiring 0.1-0.5, bad speculation 0.02-0.2, frontend 0.05-0.2 (one hash
 * byte each): backend, the rest, is at least 0.1.  A mix whose first three
 * exceed 1 has no backend to give; ordinary counters would count it as
 * slots minus more than the slots, wrapped.
 */
struct emu_mix emu_preload_synthetic_mix(uint64_t ns)
{
	uint64_t h = (ns / 1000000) * 0x9e3779b97f4a7c15ull;
	double a = 0.1 + 0.4 * (double)((h >> 8) & 0xff) / 256;
	double b = 0.02 + 0.18 * (double)((h >> 16) & 0xff) / 256;
	double c = 0.05 + 0.15 * (double)((h >> 24) & 0xff) / 256;
	double d = 1 - a - b - c;

	return emu_mix_l2(a, b, c, d, a / 5, b / 2, c / 2, d / 2);
}

/* The program's work since the thread last left the emulator. */
static void run_until(uint64_t now)
{
	struct emu_mix mix;

	if (last_ns && now > last_ns && !work_declared) {
		mix = mix_set ? set_mix : emu_preload_synthetic_mix(now);
		emu_run((now - last_ns) * 4, &mix);
	}
	last_ns = now;
}

void emu_preload_advance(void)
{
	if (!preload_mode)
		return;
	run_until(thread_ns());
	reading_group = NULL;
	reading_read = 0;
}

/* TD_EMU_SLOW_TRAPS: a slow delivery of this trap's #GP. */
static void slow_delivery(void)
{
	uint64_t until = thread_ns() + (traps++ % 8) * 50000;

	while (thread_ns() < until)
		;
}

void emu_preload_rdpmc(const void *group, unsigned counter)
{
	uint64_t bit = UINT64_C(1) << (counter & 63);
	uint64_t now;

	if (!preload_mode)
		return;
	if (slow_traps)
		slow_delivery();
	now = thread_ns();
	if (!group || group != reading_group || (reading_read & bit)) {
		run_until(now); /* a new reading */
		reading_group = group;
		reading_read = 0;
	}
	reading_read |= bit;
	last_ns = now;
}

void emu_preload_leave(void)
{
	if (preload_mode)
		last_ns = thread_ns();
}

/* f: 4 level-1 fractions (sum 1) then 4 level-2 ones; NULL: synthetic. */
void emu_preload_set_fractions(const double *f);
void emu_preload_set_fractions(const double *f)
{
	emu_lock_acquire();
	emu_preload_advance(); /* the work so far keeps its old mix */
	mix_set = f != NULL;
	if (f)
		set_mix = emu_mix_l2(f[0], f[1], f[2], f[3], f[4], f[5], f[6],
				     f[7]);
	emu_lock_release();
	emu_preload_leave();
}

/* share: L1, L2, L3, DRAM, store (emu_set_mem_shares); NULL: all L1. */
void emu_preload_set_mem_shares(const double *share);
void emu_preload_set_mem_shares(const double *share)
{
	static const double l1[5] = { 1, 0, 0, 0, 0 };

	emu_lock_acquire();
	emu_preload_advance(); /* the work so far keeps its old shares */
	emu_set_mem_shares(share ? share : l1);
	emu_lock_release();
	emu_preload_leave();
}

/* slots of work with the mix set (else synthetic), and no CPU time after. */
void emu_preload_run(uint64_t slots);
void emu_preload_run(uint64_t slots)
{
	struct emu_mix mix;

	emu_lock_acquire();
	emu_preload_advance(); /* the CPU time so far still counts */
	work_declared = true;
	mix = mix_set ? set_mix : emu_preload_synthetic_mix(thread_ns());
	emu_run(slots, &mix);
	emu_lock_release();
	emu_preload_leave();
}

/* out: slots, then the 9 categories of emu_truth. */
void emu_preload_truth(uint64_t out[10]);
void emu_preload_truth(uint64_t out[10])
{
	struct emu_truth t;

	emu_lock_acquire();
	emu_preload_advance();
	emu_truth(&t);
	emu_lock_release();
	emu_preload_leave();
	out[0] = t.slots;
	memcpy(out + 1, t.cat, sizeof(t.cat));
}

void emu_preload_pmi(void);
void emu_preload_pmi(void)
{
	emu_lock_acquire();
	emu_preload_advance();
	emu_note_foreign_reset();
	emu_pmi();
	emu_lock_release();
	emu_preload_leave();
}

/* ---- real system calls, modelled --------------------------------------- */

static void switch_for_sleep(void)
{
	if (!preload_mode)
		return;
	emu_lock_acquire();
	emu_preload_advance();
	emu_context_switch(100000); /* another task ran meanwhile */
	emu_lock_release();
	emu_preload_leave();
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	static int (*real)(const struct timespec *, struct timespec *);

	if (!real)
		real = (int (*)(const struct timespec *, struct timespec *))
			dlsym(RTLD_NEXT, "nanosleep");
	switch_for_sleep();
	return real(req, rem);
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
		    struct timespec *rem)
{
	static int (*real)(clockid_t, int, const struct timespec *,
			   struct timespec *);

	if (!real)
		real = (int (*)(clockid_t, int, const struct timespec *,
				struct timespec *))dlsym(RTLD_NEXT,
							 "clock_nanosleep");
	switch_for_sleep();
	return real(clk, flags, req, rem);
}

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	static int (*real)(pid_t, size_t, const cpu_set_t *);
	int r;

	if (!real)
		real = (int (*)(pid_t, size_t, const cpu_set_t *))dlsym(
			RTLD_NEXT, "sched_setaffinity");
	r = real(pid, size, set);
	if (r == 0 && preload_mode && pid == 0) {
		for (int c = 0; c < (int)(size * 8); c++) {
			if (!CPU_ISSET_S(c, size, set))
				continue;
			emu_lock_acquire();
			emu_preload_advance();
			if (c != emu_cpu.cpu)
				emu_migrate(c);
			emu_lock_release();
			emu_preload_leave();
			break;
		}
	}
	return r;
}

static unsigned parse_faults(const char *s)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "metrics_swap", EMU_FAULT_METRICS_SWAP },
		{ "slots_double", EMU_FAULT_SLOTS_DOUBLE },
		{ "hide_reset", EMU_FAULT_HIDE_RESET },
		{ "switch_scramble", EMU_FAULT_SWITCH_SCRAMBLE },
		{ "fe_ret_swap", EMU_FAULT_FE_RET_SWAP },
		{ "mem_swap", EMU_FAULT_MEM_SWAP },
	};
	unsigned bits = 0;

	for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(s, names[i].name))
			bits |= names[i].bit;
	return bits;
}

/*
 * TD_EMULATE's profile names.  Anything else is refused: a typo must not
 * quietly emulate another CPU.
 */
static const struct { const char *name; enum emu_profile prof; } profiles[] = {
	{ "spr", EMU_SPR }, { "icl", EMU_ICL }, { "zen4", EMU_ZEN4 },
	{ "zen5", EMU_ZEN5 }, { "skl", EMU_SKL }, { "hsw", EMU_HSW },
	{ "grt", EMU_GRT }, { "tnt", EMU_TNT }, { "cmt", EMU_CMT },
};

static int profile_named(const char *p, enum emu_profile *prof)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		if (strcmp(p, profiles[i].name) == 0) {
			*prof = profiles[i].prof;
			return 0;
		}
	}
	return -1;
}

/* The emulator is a test tool, not the library: it may print and exit. */
static void refuse_profile(const char *p)
{
	fprintf(stderr, "libtopdown emulated PMU: TD_EMULATE=\"%s\" is not "
		"one of", p);
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		fprintf(stderr, "%s %s", i ? "," : "", profiles[i].name);
	fprintf(stderr, "\n");
	_exit(2);
}

__attribute__((constructor)) static void emu_preload_init(void)
{
	const char *p = getenv("TD_EMULATE");
	enum emu_profile prof;

	if (!p)
		return;
	if (profile_named(p, &prof) < 0)
		refuse_profile(p);
	emu_setup(prof);
	emu_profile_name = p;
	emu.faults = parse_faults(getenv("TD_EMU_FAULT"));
	slow_traps = getenv("TD_EMU_SLOW_TRAPS") != NULL;
	preload_mode = true;
}

__attribute__((destructor)) static void emu_preload_fini(void)
{
	if (preload_mode)
		emu_teardown();
}
