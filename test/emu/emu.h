/* SPDX-License-Identifier: MIT */
/*
 * An emulated kernel and PMU for testing libtopdown on machines without a
 * hardware PMU.  It interposes on the libc wrappers the library uses
 * (syscall(SYS_perf_event_open), ioctl, read, mmap, munmap, close, open),
 * serves a fake sysfs tree, and traps the library's real RDPMC instructions
 * (SIGSEGV, CR4.PCE clear on these VMs) to return the fake PMU's registers.
 *
 * It models the kernel behaviour of arch/x86/events/intel/core.c
 * (intel_update_topdown_event, icl_set_topdown_event_period) and
 * kernel/events/core.c, as tools/perf/Documentation/topdown.txt describes:
 * - first enable of a fresh group zeroes SLOTS and PERF_METRICS;
 * - read(2) and IOC_RESET fold the registers into the events' counts with
 *   the "delta > last" rule and zero them; a read does not touch the user
 *   page's lock, IOC_RESET does;
 * - a context switch saves the registers and restores them exactly, but
 *   only if SLOTS was not 0 when saved (else they keep what another
 *   context left: icl_set_topdown_event_period);
 * - the user page is written as the kernel writes it: once per event at
 *   a schedule-out (x86_pmu_del, armpmu_del: index 0), twice at a
 *   schedule-in (x86: set_period, index still 0, then x86_pmu_start;
 *   Arm: armpmu_event_set_period, then armpmu_add), so three times
 *   (lock + 6) per context switch; once at an overflow PMI of an
 *   ordinary counter or of SLOTS (set_period), never at a read(2) or a
 *   PERF_METRICS overflow PMI;
 * - a PMI zeroes them (counts folded first), lock unchanged;
 * - a descheduled group (multiplexed out, E-core) shows index 0, does not
 *   count, time_running stops; RDPMC then returns whatever another context
 *   left in the registers;
 * - sysfs rdpmc=0: cap_user_rdpmc 0, index 0, and RDPMC faults for real;
 * - RDPMC is allowed only while an RDPMC-capable event is mapped.
 *
 * State is per thread (each thread is its own CPU), file descriptors are
 * process-wide.
 */
#ifndef TD_EMU_H
#define TD_EMU_H

#include <stdbool.h>
#include <stdint.h>

enum emu_profile {
	EMU_NO_PMU,      /* a VM without a virtual PMU: no cpu PMU at all */
	EMU_NO_TOPDOWN,  /* a core PMU without slots/topdown events */
	EMU_ICL,         /* Ice Lake: level 1 only */
	EMU_SPR,         /* Sapphire Rapids: level 1 and level 2 */
	EMU_SPR_NO_RDPMC,/* SPR with sysfs rdpmc = 0 */
	EMU_PARANOID,    /* SPR, perf_event_paranoid forbids: EACCES */
	EMU_ADL,         /* Alder Lake hybrid: cpu_core (type 4, 8 general
			    counters) + cpu_atom (Gracemont, 6) */
	EMU_LNL,         /* Lunar Lake P-core: L1+L2 and RDPMC metrics-clear */
	/*
	 * No PERF_METRICS: ordinary counters only (emu_generic.c), with
	 * the kernel's semantics for them: index = counter + 1 while
	 * scheduled, offset = count - prev_count, pmc_width 48, the counter
	 * started at -period and wrapping at 2^48 (overflow PMI delivered
	 * at the next emu_run), read(2) not resetting, index 0 descheduled.
	 */
	EMU_ZEN4,        /* AMD family 19h model 11h, 6 counters, width 6 */
	EMU_ZEN5,        /* AMD family 1Ah model 02h, width 8 */
	EMU_SKL,         /* Intel Skylake (6/0x5e), V4.5 events, width 4 */
	EMU_GRT,         /* Intel Alder Lake-N Gracemont (6/0xbe), width 5,
			    the kernel's aliases: Tremont's (tnt) */
	EMU_SLM,         /* Intel Silvermont (6/0x4d), V1, width 2: 2 GP
			    counters, clocks on a fixed counter */
	EMU_HSW,         /* Intel Haswell (6/0x3c), V4.5 with the
			    pre-Skylake INT_MISC.RECOVERY_CYCLES umask 3 */
	EMU_TNT,         /* Intel Tremont (6/0x86), Atom V2 width 4, the
			    kernel's tnt aliases */
	EMU_CMT,         /* Intel Crestmont (6/0xaf), width 6, cmt aliases */
	EMU_SKT,         /* Intel Darkmont, Clearwater Forest (6/0xdd),
			    width 8, skt aliases (Skymont's encodings) */
	/*
	 * Arm PMUv3 (emu_arm.c), ordinary counters with the arm_pmuv3
	 * driver's semantics: 6 event counters + the cycle counter (index
	 * 32), 32-bit event counters without FEAT_PMUv3p5 (config1 bit 0
	 * refused: EOPNOTSUPP), index 0 while perf_user_access is 0, a
	 * group that does not fit refused with EINVAL.  The true work is
	 * turned into each core's events so that Arm's formula for it
	 * gives the true fractions back.
	 */
	EMU_ARM_N1,      /* Neoverse N1 r3p1: no slot events, 32-bit */
	EMU_ARM_N2_R0P0, /* Neoverse N2 r0p0: STALL_SLOT erratum */
	EMU_ARM_N2_R0P3, /* N2 r0p3: fixed; MIDR from /proc/cpuinfo only */
	EMU_ARM_V1,      /* Neoverse V1: width 8, 32-bit event counters */
	EMU_ARM_V2,      /* Neoverse V2: width 8, 64-bit (PMUv3p5) */
	EMU_ARM_N3,      /* Neoverse N3: width 5, STALL_FRONTEND_FLUSH */
	EMU_ARM_V3,      /* Neoverse V3: width 10, STALL_FRONTEND_FLUSH */
	EMU_ARM_SBSA,    /* Cortex-X3 (no table entry): caps/slots 6 */
	EMU_ARM_NO_USER, /* V2 with /proc/sys/kernel/perf_user_access 0 */
	EMU_ARM_VM5,     /* V2 in a VM exposing 5 event counters */
	EMU_ARM_VM4,     /* V2 in a VM exposing 4 event counters */
	EMU_ARM_HETERO,  /* Cortex-A510 CPUs 0-3 + Cortex-X3 CPUs 4-7; on 4 */
};

/* Arm: the thread's allowed CPUs (sched_getaffinity), "lo-hi". */
void emu_arm_pin(int lo, int hi);

/*
 * Arm: the cycle counter PMCCNTR_EL0.  Free (the default): the first
 * cycles event of a group takes it.  TAKEN: someone else holds it (the
 * perf hard-lockup detector, an inference):
 * open accepts a group (validate_group asks an empty fake PMU), but a
 * cycles event that is 64-bit without FEAT_PMUv3p5 then never schedules
 * (armv8pmu_get_event_idx: EAGAIN), and a 32-bit one takes an event
 * counter.  ABSENT: the PMU has none (a cntr_mask without it): the
 * 64-bit cycles event is refused at open (EINVAL from validate_group),
 * a 32-bit one takes an event counter.
 */
enum emu_pmccntr { EMU_PMCCNTR_FREE, EMU_PMCCNTR_TAKEN, EMU_PMCCNTR_ABSENT };
void emu_arm_set_pmccntr(enum emu_pmccntr state);

/*
 * On generic profiles a mix's f[0..3] are retiring, bad speculation,
 * frontend and backend as usual; on EMU_ZEN4/5, f[8] is SMT contention
 * (backend is what remains), and emu_truth.cat[8] counts its slots;
 * f[4..7] are the level-2 children PipelineL2 measures (heavy = retired
 * microcode ops, br_mispredict = the mispredict share of bad
 * speculation, fetch_lat = W x cycles the frontend delivered nothing,
 * mem_bound = the load share of backend), each a fraction of all slots.
 */
struct emu_mix emu_mix_amd(double ret, double bad, double fe, double smt);
struct emu_mix emu_mix_amd_l2(double ret, double bad, double fe, double smt,
			      double heavy, double br, double fetch_lat,
			      double mem);
/*
 * Multiplexing (generic x86 profiles): a thread may open several groups
 * of ordinary counters; they share the PMU's counters, scheduled in the
 * order of the kernel's flexible list, all-or-nothing per group.  Every
 * `slots` slots of work (the hrtimer's perf_event_mux_interval_ms) the
 * kernel rotates the list when a group could not be scheduled
 * (perf_rotate_context): all groups out, the first to the end, then in
 * again in order while they fit.  0 (the default): never rotates.
 */
void emu_set_mux_interval(uint64_t slots);
/*
 * Counter budget of generic profiles (Arm's too: event counters, the
 * cycle counter apart): the PMU has n GP counters (a VM
 * exposing fewer; validate_group then refuses a bigger group at open,
 * EINVAL), and n of them are pinned by someone else (the NMI watchdog:
 * a group that fits the PMU but not what is left is accepted and never
 * scheduled, index 0, time_running 0).
 */
void emu_gp_set_counters(unsigned n);
/*
 * SMT (generic Intel profiles): sysfs smt/active says active; AnyThread
 * events (config bit 21) open only if anythread_ok (else EACCES, as
 * perf_allow_cpu refuses), and count the sibling's equal share too.
 */
void emu_set_smt(bool active, bool anythread_ok);
/*
 * EMU_HSW as another V4.5 core before Skylake, by its model number
 * (arch/x86/include/asm/intel-family.h): 0x2a Sandy Bridge, 0x3a Ivy
 * Bridge, 0x3d Broadwell; the servers 0x2d Sandy Bridge-EP, 0x3e Ivy
 * Bridge-EP, 0x3f Haswell-EP (the core's execution cycles, as Haswell),
 * 0x4f Broadwell-EP, 0x56 Broadwell-DE.  Level 1 as Haswell's (INT_MISC.RECOVERY_
 * CYCLES umask 3 on all four), level 2 with the thread's execution
 * cycles (event 0xb1 umask 0x01: perf's sandybridge UOPS_DISPATCHED.
 * THREAD, ivybridge and broadwell UOPS_EXECUTED.CYCLES_GE_n) where
 * Haswell counts the core's (UOPS_EXECUTED.CORE, umask 0x02).  After
 * emu_setup.
 */
void emu_hsw_model(unsigned model);
void emu_gp_reserve(unsigned n);
/*
 * Hybrid (EMU_ADL): the P-cores' n lowest general-purpose counters held
 * by another user's CPU-wide cpu_core events (perf stat -a on cpu_core),
 * so that the thread's cpu_core groups get counters n and up, which an
 * E-core may not have (Alder Lake: 8 on a P-core, 6 on an E-core).
 */
void emu_gp_hold_pcore(unsigned n);
/* Period of ordinary counters started from now on (default 2^47 - 1). */
void emu_gp_set_period(uint64_t left);

/*
 * True composition of a stretch of work: the four level-1 fractions (sum 1)
 * and the four measured level-2 fractions, each a fraction of all slots
 * (heavy <= retiring, br_mispredict <= bad_spec, fetch_lat <= fe_bound,
 * mem_bound <= be_bound).  Order: PERF_METRICS byte order.
 */
struct emu_mix {
	double f[9];
};

/* True per-category slots and total slots this thread has executed. */
struct emu_truth {
	uint64_t slots;
	uint64_t cat[9]; /* PERF_METRICS order, then SMT contention (AMD) */
	/* PERF_METRICS profiles: memory bound's slots by where its stalls
	 * came from (emu_set_mem_shares), in enum td_mem's order: L1, L2,
	 * L3, DRAM, store bound */
	uint64_t mem[5];
	/* PERF_METRICS profiles: the slots of uops a clear dropped
	 * (emu_set_uop_dropping), INT_MISC.UOP_DROPPING's count; within
	 * cat[1] (bad speculation, not branch mispredicts) */
	uint64_t uop_drop;
};

/*
 * PERF_METRICS profiles (Golden Cove: EMU_SPR, EMU_ADL's P-cores): the
 * shares of this thread's memory-bound slots (mix f[7]) stalled on L1,
 * L2, L3, DRAM and stores (sum 1; default all L1).  The core's events
 * count them as hardware would: each level's stall cycles are its slots
 * / width (a stalled cycle wastes every slot of it), and
 * EXE_ACTIVITY.BOUND_ON_LOADS counts the load stalls of every level,
 * MEMORY_ACTIVITY.STALLS_L1D_MISS those beyond L1, _L2_MISS beyond L2,
 * _L3_MISS those of DRAM, EXE_ACTIVITY.BOUND_ON_STORES the stores'.
 */
void emu_set_mem_shares(const double share[5]);

/*
 * PERF_METRICS profiles: the share of this process's slots whose uops a
 * clear dropped (default 0.015), taken from each run's machine clears
 * (bad speculation less branch mispredicts; at most those), which truth
 * keeps as bad speculation.  INT_MISC.UOP_DROPPING counts them; where the
 * core's perf list subtracts that event from tma_frontend_bound and
 * tma_fetch_latency (Ice Lake, Sapphire Rapids, Alder Lake's P-cores),
 * PERF_METRICS counts them as frontend bound and fetch latency instead
 * of bad speculation (Lunar Lake, and Alder Lake with metrics-clear
 * offered, which stands for Arrow Lake: rightly).
 */
void emu_set_uop_dropping(double share);

/*
 * Ice Lake (EMU_ICL): clears per slot of this process (default 0.002),
 * at most a fifth of each run's backend-bound slots.  INT_MISC.
 * CLEARS_COUNT counts them; Sunny Cove's PERF_METRICS counts 5 slots of
 * backend bound after each as bad speculation, which is why perf's
 * icelake, icelakex, tigerlake and rocketlake lists add "5 *
 * INT_MISC.CLEARS_COUNT / tma_info_thread_slots" to tma_backend_bound;
 * truth keeps them as backend bound.  Later cores' lists add 0 there:
 * the emulator's other PERF_METRICS profiles count them rightly.
 */
void emu_set_int_misc_clears(double per_slot);

struct emu_stats {
	unsigned long perf_opens;
	unsigned long resets;       /* PERF_EVENT_IOC_RESET calls */
	unsigned long reads;        /* read(2) on perf fds */
	unsigned long syscalls;     /* every interposed call, any fd */
	unsigned long rdpmcs;       /* RDPMCs emulated */
	unsigned long open_fds;     /* perf fds currently open */
	unsigned long maps;         /* perf pages currently mapped */
	unsigned last_open_flags;   /* perf_event_open flags argument */
	int last_open_pid, last_open_cpu;
	bool exclude_mismatch;      /* group members with different exclude bits */
	unsigned long anythread_opens; /* events opened with AnyThread */
};

void emu_setup(enum emu_profile profile);
void emu_teardown(void);

/* Run work on this thread: counted by its group when scheduled. */
void emu_run(uint64_t slots, const struct emu_mix *mix);
void emu_truth(struct emu_truth *t);

/* Kernel events that happen to this thread's group. */
void emu_foreign_read(void);              /* someone read(2)s the group */
void emu_pmi(void);                       /* PMI: registers zeroed */
void emu_context_switch(uint64_t other_slots); /* out, other task, in */
void emu_deschedule(void);                /* multiplexed out / E-core */
void emu_reschedule(void);

/*
 * Metrics-clear mode (EMU_LNL, slots opened with config1 bit 0): a user
 * RDPMC of the trigger register zeroes SLOTS and PERF_METRICS after the
 * read.  The kernel does not say which register triggers; tests run both.
 */
enum emu_clear_trigger { EMU_CLEAR_ON_METRICS, EMU_CLEAR_ON_SLOTS };
void emu_set_metrics_clear_trigger(enum emu_clear_trigger which);
/* After emu_setup: the core PMU offers metrics-clear (EMU_ADL: Lunar
 * and Arrow Lake's hybrid case; EMU_LNL offers it from the start). */
void emu_offer_metrics_clear(void);
/* After emu_setup(EMU_ADL): cpu_core named as on Meteor Lake, whose
 * P-cores' PERF_METRICS the Alder Lake profile's stand for. */
void emu_name_meteor_lake(void);

/*
 * Hybrid (EMU_ADL): CPUs 0-7 are P-cores (cpu_core), 8-15 E-cores
 * (cpu_atom).  Each thread starts on CPU 0.  On an E-core the cpu_core
 * group is not scheduled, and an RDPMC of fixed counter 3 or PERF_METRICS
 * kills the process (#GP), as it would on hardware.  The emulator keeps
 * an rseq area per thread (it provides __rseq_offset) and applies the
 * kernel's rseq rules to it: a migration inside a critical section moves
 * the thread to the section's abort handler.
 */
#define EMU_ADL_PCORES "0-7"
#define EMU_ADL_ECORES "8-15"
/*
 * After emu_setup(EMU_ADL): a Lunar Lake instead (family 6 model 0xbd),
 * its E-cores Skymont: 8 wide, 8 general counters, the kernel's lnl
 * topdown-* strings on cpu_atom, and perf's lunarlake TopdownL2 events
 * FRONTEND_LATENCY and ALLOC_RESTRICTIONS modelled with the truth.
 */
void emu_hybrid_skymont(void);
/*
 * After emu_setup(EMU_ADL): a Meteor Lake instead (family 6 model 0xaa),
 * its E-cores Crestmont: 6 wide, 8 general counters, the kernel's adl
 * topdown-* strings on cpu_atom (topdown-retiring 0xc2, not Crestmont's
 * TOPDOWN_RETIRING.ALL 0x72), and perf's meteorlake TopdownL2 events
 * FRONTEND_LATENCY and ALLOC_RESTRICTIONS modelled with the truth.
 */
void emu_hybrid_crestmont(void);
void emu_migrate(int cpu);          /* now, between two instructions */

/*
 * The scheduler's model of this thread: where the kernel may preempt or
 * move it, and what then happens.  A test plans an event at a point; the
 * emulator applies it when the thread next gets there (once).  Points:
 * just before an RDPMC (arm64: MRS) executes (an interrupt between
 * instructions; a switch there reassigns the counters as any
 * schedule-in does),
 * when read(2) of a perf fd enters the kernel, when PERF_EVENT_IOC_RESET
 * runs.  Events: a migration to cpu; a switch-out and back (the group
 * inactive while the kernel acts, so IOC_RESET finds nothing to zero);
 * a stint on E-core cpu running slots of mix, then back (hybrid: the
 * kernel acts while cpu_core's group is inactive there).  A stint at an
 * RDPMC (x86) is over before that RDPMC's rseq critical section starts:
 * preempted between the caller's last check and the section, moved to
 * the E-core, back on its P-core before the section's first instruction,
 * so the section runs on the P-core and does not abort (plan it at a
 * section's first RDPMC: nothing in the section before that RDPMC but
 * the cpu_id check, which sees the P-core either way).
 */
enum emu_sched_point { EMU_AT_RDPMC, EMU_AT_READ, EMU_AT_RESET,
		       EMU_SCHED_POINTS };
/*
 * At an RDPMC (MRS) only, three more: DESCHEDULE, the group multiplexed
 * out by the rotation timer's interrupt (perf_rotate_context: the page
 * rewritten, index 0, lock bumped; the registers then another context's)
 * and left out until emu_reschedule, no preemption so no rseq abort;
 * SIGNAL, a signal delivered there and its handler returned: an rseq
 * critical section aborts (rseq_signal_deliver), nothing else changes,
 * not even the page; FOREIGN_RESET, a PMI (or another thread's read(2)
 * of the group) there: registers folded and zeroed, page untouched.
 * The RDPMC of a seqlock read lies between its index load and its lock
 * re-check: an event there is a page update racing the reader.
 */
/*
 * At IOC_RESET only, one more: SWITCH_AFTER, the thread preempted on
 * the ioctl's way out, after the kernel's reset (a context switch, out
 * and in, before the thread runs another instruction).
 */
enum emu_sched_kind { EMU_SCHED_NONE, EMU_SCHED_MIGRATE,
		      EMU_SCHED_SWITCH_OUT, EMU_SCHED_STINT,
		      EMU_SCHED_DESCHEDULE, EMU_SCHED_SIGNAL,
		      EMU_SCHED_FOREIGN_RESET, EMU_SCHED_SWITCH_AFTER };
struct emu_sched_event {
	enum emu_sched_kind kind;
	int cpu;                  /* MIGRATE, STINT */
	uint64_t slots;           /* STINT */
	struct emu_mix mix;       /* STINT */
	unsigned skip;            /* times the point passes first: at the
				     (skip + 1)th RDPMC from now */
};
void emu_schedule(enum emu_sched_point at, const struct emu_sched_event *ev);
/* Is an event still planned at the point (not yet reached)? */
bool emu_sched_pending(enum emu_sched_point at);

/* Shorthands for emu_schedule. */
void emu_migrate_at_rdpmc(int cpu); /* just before the next RDPMC executes */
/* just before the next read(2) of a perf fd executes (in the kernel) */
void emu_migrate_at_next_read(int cpu);
void emu_rseq_set_cpu_raw(uint32_t v); /* e.g. -2: registration failed */

/* The next PERF_EVENT_IOC_RESET runs while the group is switched out
 * (so the kernel cannot zero the hardware), then it is switched back in. */
void emu_switch_out_at_next_reset(void);
/* Hybrid: the next IOC_RESET comes while the thread is away on an E-core
 * (cpu 8) running `slots` slots of mix, so cpu_core's group is inactive
 * there (nothing zeroed); then it migrates back. */
void emu_ecore_stint_at_next_reset(uint64_t slots, const struct emu_mix *mix);

/*
 * A kernel that does NOT rewrite an ordinary-counter event's user page at
 * schedule-out (off by default: arch/x86/events/core.c x86_pmu_del does
 * rewrite it, and perf_event_index gives 0 for the stopped event).  While
 * on, a group of ordinary counters switched
 * out (emu_deschedule, a hybrid migration) keeps its old page: index
 * still names the counter, lock unchanged; an RDPMC of it then returns
 * `foreign`, what another context left in that 48-bit register.
 */
void emu_stale_pages(bool on, uint64_t foreign);
/*
 * The same stale pages, but the registers are not left at one value:
 * another context counted on from ours, by a different step on each
 * counter (steps[c] for general-purpose counter c, n of them), so that
 * a stale RDPMC reads as the switched-out event's value at schedule-out
 * plus its counter's step: every counter forward, each by its own
 * amount, none by a jump no core counts.
 */
void emu_stale_counting(const uint64_t *steps, unsigned n);

/*
 * The library's own work at each counter read, which the model leaves
 * out by default (0: only emu_run's work is counted, so that a fast and
 * a slow path reading at the same calls read the same counts).  From
 * here on, every RDPMC (arm64: MRS) the emulator serves first runs
 * `slots` slots of mix on the CPU the thread is on at that moment, as
 * the library's instructions leading to that read would: after an event
 * planned at that read (emu_schedule), before its value is taken.  On a
 * hybrid part, reads on an E-core after a migration charge cpu_atom's
 * group, those on a P-core cpu_core's.  An RDPMC whose planned event
 * sends the thread to an rseq abort handler does not execute and charges
 * nothing.  Deterministic: a fixed number of slots per read.
 */
void emu_set_read_work(uint64_t slots, const struct emu_mix *mix);
/*
 * The library's own user-mode instructions leading to each perf ioctl
 * (the wrapper's head before the syscall enters the kernel), which the
 * model leaves out by default: from here on, every ioctl first runs
 * `slots` slots of mix on the CPU the thread is on, before the kernel
 * does anything (so before an event planned at a reset, emu_schedule).
 * On a real PMU those user-mode slots count in SLOTS (exclude_kernel or
 * not): a metrics-clear reading right before an IOC_RESET leaves SLOTS
 * above 0 by the time the kernel reads it.  Deterministic.
 */
void emu_set_ioctl_work(uint64_t slots, const struct emu_mix *mix);
/*
 * The same for the wrapper's user-mode tail: from here on, every ioctl
 * runs `slots` slots of mix on the CPU the thread is on once the kernel
 * returns (after an event planned at a reset), so that SLOTS is above 0
 * after a reset by the time of any later schedule-out, as on a real PMU
 * (intel_update_topdown_event saves nothing of a SLOTS of 0).
 */
void emu_set_ioctl_tail(uint64_t slots, const struct emu_mix *mix);

void emu_stats(struct emu_stats *s);
/* The attributes of the perf events open now (fd order): their count. */
struct perf_event_attr;
unsigned emu_open_attrs(struct perf_event_attr *out, unsigned max);
/* The general-purpose counter the open core-PMU event of config holds
 * now (RDPMC selector: the page's index - 1); -1: none, not scheduled. */
int emu_counter_of(uint64_t config);
/* Set the sysfs rdpmc knob at runtime (existing events keep their flag). */
void emu_set_rdpmc_knob(int value);

/* Helpers for tests */
struct emu_mix emu_mix_l1(double ret, double bad, double fe, double be);
struct emu_mix emu_mix_l2(double ret, double bad, double fe, double be,
			  double heavy, double br, double fetch_lat,
			  double mem);
/*
 * The mix an unmodified program's work runs with (LD_PRELOAD, no mix set)
 * in the millisecond of thread CPU time ns falls in: made up, but a mix.
 */
struct emu_mix emu_preload_synthetic_mix(uint64_t ns);

#endif /* TD_EMU_H */
