/* SPDX-License-Identifier: MIT */
/* Private state of the emulator. */
#ifndef TD_EMU_INTERNAL_H
#define TD_EMU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "emu.h"

#define EMU_RDPMC_SLOTS   ((1u << 30) | 3)
#define EMU_RDPMC_METRICS (1u << 29)
#define EMU_MAX_FD        65536
#define EMU_MAX_MEMBERS   16
#define EMU_ATOM_TYPE     10 /* EMU_ADL: cpu_atom's dynamic PMU type */
#define EMU_ANY           (1ull << 21) /* ARCH_PERFMON_EVENTSEL_ANY */
#define EMU_MAX_GEN_GROUPS 5

struct emu_hw {
	uint64_t slots;    /* fixed counter 3 */
	uint64_t acc[8];   /* internal per-category slots since zero */
};

struct emu_cpu;

enum emu_event_kind { EMU_EV_SLOTS, EMU_EV_METRIC, EMU_EV_RAW, EMU_EV_GP };

struct emu_group;

struct emu_event {
	int fd;
	enum emu_event_kind kind;
	int idx;                /* metric byte for EMU_EV_METRIC */
	struct perf_event_attr attr;
	struct emu_group *group;
	uint64_t count;         /* event->count */
	bool rdpmc_flag;        /* PERF_EVENT_FLAG_USER_READ_CNT */
	bool closed;
	int maps;
	/* EMU_EV_GP: an ordinary counter (emu_generic.c) */
	int sig;                /* what it counts, from its config */
	bool any;               /* AnyThread: the sibling's share too */
	int counter;            /* general-purpose counter, -1 if none */
	int last_counter;       /* the one it had before its schedule-out */
	uint64_t hw;            /* the counter register, width bits */
	unsigned width;         /* 48 (x86), 32 or 64 (Arm) */
	uint64_t prev;          /* hw.prev_count */
	bool overflowed;        /* wrapped: PMI pending */
	/* hw.state & PERF_HES_STOPPED between a del and its start: index 0
	 * on the page (perf_event_index) */
	bool stopped;
	struct perf_event_mmap_page *page;
};

struct emu_group {
	struct emu_event *members[EMU_MAX_MEMBERS];
	int nr;
	struct emu_cpu *owner;
	bool topdown;           /* has a metric member */
	bool atom;              /* EMU_ADL: a cpu_atom group (E-cores only) */
	bool metrics_clear;     /* leader opened with config1 bit 0 */
	bool enabled, started, scheduled;
	uint64_t saved_slots, saved_metrics;
	uint64_t time_enabled, time_running;
};

struct emu_cpu {
	struct emu_hw hw;
	struct emu_group *group; /* this thread's TopDown group */
	struct emu_group *gen_group; /* this thread's ordinary-counter group */
	/* every ordinary-counter group, in flexible-list order (gen_group
	 * among them); more than one only when multiplexing */
	struct emu_group *gen_list[EMU_MAX_GEN_GROUPS];
	int gen_nr;
	uint64_t mux_left;       /* slots until the next rotation tick */
	struct emu_group *gen_group2; /* a second one (Arm level 2), or NULL */
	uint64_t gen_slot_rem;   /* slots not yet a whole cycle */
	double mem_share[5];     /* emu_set_mem_shares */
	uint64_t mem_slot_rem;   /* P-core clocks: slots not yet a cycle */
	struct emu_truth truth;
	bool descheduled;
	int cpu;                 /* emulated CPU this thread runs on */
	/* the scheduler's plan for this thread, per point (emu_schedule) */
	struct emu_sched_event sched[EMU_SCHED_POINTS];
};

/* emu_sched.c: the planned event at a point, taken (kind NONE: none). */
struct emu_sched_event emu_sched_take(enum emu_sched_point at);
/*
 * Apply ev around the kernel's action at its point: act(ctx) runs
 * where the event puts the thread (away on an E-core, or with the group
 * switched out), then the thread comes back; MIGRATE moves it first.
 */
void emu_sched_around(const struct emu_sched_event *ev,
		      void (*act)(void *ctx), void *ctx);

/* The kernel's struct rseq (linux/rseq.h), as the emulator keeps it. */
struct emu_rseq {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
} __attribute__((aligned(32)));

struct emu_rseq_cs {
	uint32_t version, flags;
	uint64_t start_ip, post_commit_offset, abort_ip;
};

/* emu_rseq.c (weak: not part of the LD_PRELOAD emulator) */
struct emu_rseq *emu_rseq_self(void) __attribute__((weak));
void emu_rseq_init(void) __attribute__((weak));

/* An Arm profile (emu_arm.c). */
struct emu_arm {
	enum emu_profile profile;
	const char *pmu;        /* sysfs PMU directory */
	uint32_t midr;
	unsigned slots;         /* pipeline width the work is made of */
	unsigned kf, kb, kbs;   /* per-X slot corrections of its formula */
	uint64_t x_event;       /* BR_MIS_PRED, STALL_FRONTEND_FLUSH or 0 */
	bool n1;                /* cycle events only */
	bool erratum;           /* N2 < r0p3: STALL_SLOT(_FRONTEND) + cycles */
	bool pmuv3p5;           /* 64-bit event counters */
	bool sysfs_midr;        /* regs/identification/midr_el1 present */
	unsigned counters;      /* event counters (PMCR_EL0.N) */
	int user_access;        /* /proc/sys/kernel/perf_user_access */
	unsigned caps_slots;    /* caps/slots, 0: absent */
	bool l2;                /* N3, V3: the level-2 stall events */
};

/* What an ordinary counter counts (emu_gen_signal, emu_arm_signal). */
enum emu_sig { SIG_NONE, SIG_CYCLES, SIG_FE, SIG_BE, SIG_SMT, SIG_DISP,
	       SIG_RET, SIG_BAD, SIG_ISSUED, SIG_RECOVERY,
	       SIG_FE_SLOT, SIG_BE_SLOT, SIG_STALL_SLOT, SIG_OP_SPEC, SIG_X,
	       SIG_FE_CYC, SIG_BE_CYC, SIG_BAD_CYC,
	       /* Zen PipelineL2 */
	       SIG_FE_CMASK, SIG_MISP, SIG_RESTART, SIG_NC, SIG_LOAD_NC,
	       SIG_UCODE,
	       /* Arm level 2 */
	       SIG_FE_MEM_CYC, SIG_FE_CPU_CYC, SIG_BE_MEM_CYC, SIG_BE_CPU_CYC,
	       SIG_BE_BUSY_CYC,
	       /* Gracemont TOPDOWN_BAD_SPECULATION umasks: NUKE 0x1,
	        * FASTNUKE 0x2, MACHINE_CLEARS 0x3, MISPREDICT 0x4, and the
	        * 0x6 of Tremont's table (FASTNUKE | MISPREDICT) */
	       SIG_BAD_NUKE, SIG_BAD_FASTNUKE, SIG_BAD_CLEARS, SIG_BAD_MISP,
	       SIG_BAD_FASTNUKE_MISP,
	       /* Skylake TopdownL2 (skl-metrics.json's events) */
	       SIG_INST, SIG_MACRO_FUSED, SIG_FE_CYC0, SIG_CLEARS,
	       SIG_STALLS_MEM, SIG_BOUND_STORES, SIG_STALLS_TOTAL,
	       SIG_PORTS_1, SIG_PORTS_2,
	       /* Atom TopdownL2: FRONTEND_LATENCY, ALLOC_RESTRICTIONS,
	        * UOPS_RETIRED.MS */
	       SIG_FE_LAT, SIG_ALLOC, SIG_MS,
	       /* Golden Cove memory stall events (emu_set_mem_shares) */
	       SIG_MEM_LOADS, SIG_MEM_L1D_MISS, SIG_MEM_L2_MISS,
	       SIG_MEM_L3_MISS, SIG_MEM_STORES,
	       /* INT_MISC.UOP_DROPPING (emu_set_uop_dropping) */
	       SIG_UOP_DROP,
	       /* Sandy Bridge to Broadwell TopdownL2 (snb-, ivb-, hsw-,
	        * bdw-metrics.json's events besides Skylake's): IDQ.MS_UOPS,
	        * RESOURCE_STALLS.SB, RS_EVENTS.EMPTY_CYCLES, cycles
	        * executing at least 1, 2, 3 uops */
	       SIG_IDQ_MS, SIG_SB, SIG_RS_EMPTY, SIG_EXE1, SIG_EXE2,
	       SIG_EXE3 };

/* What one emu_run makes of its slots: truth and every event's share. */
struct emu_parts {
	uint64_t cycles, fe, be, smt, ret, bad, recovery_cycles, issued;
	uint64_t fe_cyc, be_cyc, bad_cyc; /* V1, Arm N1: stall cycles */
	/* Arm */
	uint64_t fe_slot, be_slot, stall_slot, op_spec, x;
	/* Zen PipelineL2 */
	uint64_t fe_cmask, misp, restart, nc, load_nc, ucode;
	/* Arm level 2: true fetch-latency and memory-bound slots, and the
	 * stall cycles of each (of fe_cyc, be_cyc) */
	uint64_t fe_lat, be_mem, fe_mem_cyc, be_mem_cyc;
	/* Gracemont: bad speculation's parts (bad = the three summed) */
	uint64_t bad_nuke, bad_fastnuke, bad_misp;
	/* Skylake level 2: instructions, macro-fused uops, cycles the
	 * frontend delivered nothing, machine clears, and memory bound's
	 * cycle counts; Atom level 2: alloc restrictions, MS uops */
	uint64_t inst, macro_fused, fe_cyc0, clears;
	uint64_t stalls_mem, bound_stores, stalls_total, ports_1, ports_2;
	uint64_t alloc, ms;
	/* Golden Cove: stall cycles of memory bound by level (L1, L2, L3,
	 * DRAM, store) */
	uint64_t mem_cyc[5];
	uint64_t uop_drop;       /* INT_MISC.UOP_DROPPING's slots */
	/* Sandy Bridge to Broadwell level 2: MS uops, store-buffer stall cycles,
	 * RS-empty cycles, cycles executing at least 1, 2, 3 uops */
	uint64_t idq_ms, sb, rs_empty, exe[3];
};

struct emu_state {
	enum emu_profile profile;
	bool has_pmu, has_topdown, l2, paranoid;
	int rdpmc_knob;
	bool has_metrics_clear;
	double uop_share;        /* emu_set_uop_dropping */
	double clear_rate;       /* emu_set_int_misc_clears */
	bool stale_pages;       /* GP pages not rewritten at schedule-out */
	uint64_t foreign;       /* then: another context's register value */
	bool stale_counting;    /* or: our value moved by stale_steps[] */
	uint64_t stale_steps[EMU_MAX_MEMBERS];
	enum emu_clear_trigger clear_trigger;
	uint32_t core_type;
	unsigned gen_width;     /* generic profiles: pipeline width, else 0 */
	unsigned atom_width;    /* EMU_ADL: the E-cores' width (Gracemont 5) */
	bool atom_skymont;      /* EMU_ADL's E-cores Skymont (emu_hybrid_skymont) */
	bool atom_crestmont;    /* ... or Crestmont (emu_hybrid_crestmont) */
	unsigned v45_model;     /* EMU_HSW as another model (emu_hsw_model),
				   0: Haswell's 0x3c */
	bool anythread_ok;      /* AnyThread events allowed */
	unsigned gp_counters;   /* general-purpose counters per CPU (hybrid:
				   an E-core's, cpu_atom's) */
	unsigned gp_core_counters; /* hybrid: a P-core's (cpu_core's) */
	unsigned gp_reserved;   /* of which pinned by others (NMI watchdog) */
	unsigned gp_core_held;  /* hybrid: a P-core's lowest ones held by
				   others (emu_gp_hold_pcore) */
	uint64_t gp_left;       /* period: counters start at -left */
	unsigned gp_rotate;     /* shifts counter assignment per schedule-in */
	uint64_t mux_interval;  /* slots between rotation ticks, 0: never */
	const struct emu_arm *arm; /* Arm profiles, else NULL */
	uint64_t allowed_cpus;  /* Arm: sched_getaffinity (CPUs 0-63) */
	enum emu_pmccntr pmccntr; /* Arm: PMCCNTR_EL0 free, taken, absent */
	char sysfs_root[256];
	struct emu_event *fds[EMU_MAX_FD];
	struct emu_stats stats;
	int rdpmc_maps;         /* mapped RDPMC-capable events: CR4.PCE */
	unsigned faults;        /* EMU_FAULT_* (TD_EMU_FAULT, preload) */
	uint64_t hidden_slots;  /* EMU_FAULT_HIDE_RESET: slots reset away */
	uint64_t frozen_metrics; /* and the PERF_METRICS word it shows */
	bool frozen;
	uint64_t read_work;     /* emu_set_read_work: slots per RDPMC, 0 off */
	struct emu_mix read_work_mix;
	uint64_t ioctl_work;    /* emu_set_ioctl_work: slots per ioctl, 0 off */
	struct emu_mix ioctl_work_mix;
	uint64_t ioctl_tail;    /* emu_set_ioctl_tail: slots after each ioctl */
	struct emu_mix ioctl_tail_mix;
};

/* Injected faults (emu_preload.c TD_EMU_FAULT): checkers must catch them. */
#define EMU_FAULT_METRICS_SWAP    (1u << 0)
#define EMU_FAULT_SLOTS_DOUBLE    (1u << 1)
#define EMU_FAULT_HIDE_RESET      (1u << 2)
#define EMU_FAULT_SWITCH_SCRAMBLE (1u << 3)
#define EMU_FAULT_FE_RET_SWAP     (1u << 4)
#define EMU_FAULT_MEM_SWAP        (1u << 5)

extern struct emu_state emu;
extern __thread struct emu_cpu emu_cpu;
/* The profile's name for the library's label: TD_EMULATE's when
 * preloaded, else "test". */
extern const char *emu_profile_name;

uint64_t emu_hw_metrics(const struct emu_hw *hw);
void emu_page_update(struct emu_event *e);
void emu_topdown_update(struct emu_group *g, bool reset);
void emu_group_enable(struct emu_group *g);
void emu_group_disable(struct emu_group *g);
bool emu_is_ecore(int cpu);
bool emu_group_runnable(const struct emu_group *g);
void emu_lock_acquire(void);
void emu_lock_release(void);

/* emu_kernel.c: the system calls */
long emu_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			     int group_fd, unsigned long flags);
int emu_sys_ioctl(struct emu_event *e, unsigned long req, unsigned long arg);
ssize_t emu_sys_read(struct emu_event *e, void *buf, size_t len);
void *emu_sys_mmap(struct emu_event *e, size_t len, int prot, int flags);
int emu_sys_munmap(void *addr, size_t len, bool *handled);
void emu_sys_close(struct emu_event *e);
struct emu_event *emu_event_of(int fd);

/* emu_generic.c */
int emu_gen_signal(uint64_t config);
bool emu_gen_start(struct emu_group *g);
unsigned emu_gp_counters_here(void);
int emu_gen_validate(const struct emu_group *g, const struct emu_event *e);
void emu_gen_stop(struct emu_group *g);
void emu_gen_fold(struct emu_group *g);
void emu_gen_run(uint64_t slots, const struct emu_mix *m);
/* PERF_METRICS profiles: the core's memory events (SIG_MEM_*; Ice
 * Lake's also SIG_STALLS_TOTAL, SIG_PORTS_*) of a run whose true slots by
 * category were part[] (memory bound's part[7]); SIG_NONE for another
 * config */
int emu_mem_signal(uint64_t config);
void emu_mem_run(uint64_t slots, const uint64_t part[8], uint64_t drop,
		 uint64_t clears);
/* A P-core's dropped-uop slots for a run split as part (emu_pmu.c):
 * what PERF_METRICS counts as frontend-bound and fetch-latency slots but
 * are bad speculation's; 0 where the core counts them rightly. */
uint64_t emu_uop_drop(uint64_t slots, const uint64_t part[8]);
bool emu_drop_in_frontend(void);
/* A P-core's INT_MISC.CLEARS_COUNT for a run split as part; where
 * emu_clears_in_bad_spec, 5 backend-bound slots each that PERF_METRICS
 * counts as bad speculation. */
uint64_t emu_int_misc_clears(uint64_t slots, const uint64_t part[8]);
bool emu_clears_in_bad_spec(void);
uint64_t emu_gen_rdpmc(uint32_t ecx);
/* The scheduled group counter ecx counts for, or NULL. */
const struct emu_group *emu_gen_group_of(uint32_t ecx);
void emu_gen_page(const struct emu_event *e, struct perf_event_mmap_page *pc);
void emu_gen_add_group(struct emu_group *g);
void emu_gen_remove_group(struct emu_group *g);
/* emu_pmu.c: perf_rotate_context for the thread's ordinary groups */
void emu_gen_rotate(void);
const char *emu_cpuinfo(void);

/* emu_arm.c */
const struct emu_arm *emu_arm_profile(enum emu_profile p);
void emu_arm_sysfs(void (*put)(const char *rel, const char *text));
const char *emu_arm_cpuinfo(void);
int emu_arm_signal(uint64_t config);
void emu_arm_parts(struct emu_parts *p);
int emu_arm_check_open(const struct perf_event_attr *a,
		       const struct emu_event *leader);
unsigned emu_arm_width(const struct perf_event_attr *a);

/* emu_sysfs.c */
void emu_sysfs_create(void);
void emu_sysfs_remove(void);
void emu_sysfs_write_knob(int value);
void emu_sysfs_smt(bool active);
const char *emu_sysfs_redirect(const char *path, char *buf, size_t len);

/*
 * emu_preload.c: entering the emulator runs the program's work since it
 * last left (advance; an RDPMC of counter of group: rdpmc, which runs
 * nothing inside one reading), and leaving it restarts the clock.
 */
void emu_preload_advance(void);
void emu_preload_rdpmc(const void *group, unsigned counter);
void emu_preload_leave(void);
/* A read(2) or PMI is about to reset the registers (EMU_FAULT_HIDE_RESET) */
void emu_note_foreign_reset(void);

/* emu_trap.c */
void emu_trap_install(void);
/* emu_pmu.c: the library's work before an RDPMC (emu_set_read_work) */
void emu_read_work(void);

/* emu_libc.c: the real libc functions */
int emu_real_open(const char *path, int flags, int mode);
int emu_real_close(int fd);

/* glibc's fortified entry points, interposed too */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
int __open_2(const char *path, int flags);

#endif
