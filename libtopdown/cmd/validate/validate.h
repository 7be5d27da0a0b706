/* SPDX-License-Identifier: MIT */
/*
 * topdown-validate: evidence, on the machine it runs on, that libtopdown's
 * numbers are right there.  See README "Validate your machine first".
 */
#ifndef TD_VALIDATE_H
#define TD_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <topdown.h>

/* The contrasting workloads (workloads.c). */
enum v_kernel {
	V_K_RETIRING,
	V_K_BAD_SPEC,
	V_K_FRONTEND,
	V_K_BE_MEMORY,
	V_K_BE_CORE,
	V_K_COUNT
};

struct v_kernel_desc {
	const char *name;
	int expect_l1;      /* enum td_l1 expected to dominate */
	int expect_l2;      /* enum td_l2 child expected, or -1 */
	double threshold;   /* perf's MetricThreshold for expect_l1 */
	double l2_threshold;
	/* The emulator's synthetic answer for this kernel (--emulate only):
	 * 4 level-1 fractions, then heavy, br_mispredict, fetch_lat, mem. */
	double emu_mix[8];
};

extern const struct v_kernel_desc v_kernels[V_K_COUNT];

int v_workloads_init(bool small);
void v_workloads_free(void);
/* Run kernel k for about one region's worth of work. */
void v_kernel_run(enum v_kernel k);

/* The memory drill-down's pair of pointer chases (workloads.c). */
enum v_chase { V_CHASE_L1, V_CHASE_DRAM, V_CHASE_COUNT };
void v_chase_run(enum v_chase c);
size_t v_chase_bytes(enum v_chase c);

/* The library group's own counts as the kernel keeps them (kref.c). */
struct v_counts {
	uint64_t slots;
	uint64_t cat[8];        /* per metric event, PERF_METRICS byte order;
				   ordinary counters: level 1 in slots */
	uint64_t enabled, running;
	uint64_t raw[8];        /* ordinary counters: each member's count */
	uint64_t uop;           /* INT_MISC.UOP_DROPPING (uop_ok) */
	bool uop_ok;
};

/* How the reference turns the group's counts into level 1. */
enum v_formula {
	V_F_NONE,               /* PERF_METRICS: the kernel's own split */
	V_F_ZEN,                /* AMD Zen 4/5 PipelineL1 */
	V_F_V45,                /* Intel Haswell .. Cascade Lake TopdownL1 */
	V_F_ATOM                /* Intel Gracemont, Crestmont TopdownL1 */
};

struct v_model {
	enum v_formula formula;
	unsigned width;         /* dispatch/issue slots per cycle */
	unsigned members;       /* the library's group, as read back */
	bool smt_any;           /* V4.5: AnyThread clocks, halved */
	const char *name;       /* "zen4", ... */
	const char *source;     /* the metric file the formula follows */
};

struct v_kref {
	int leader;             /* fd of the library's group leader, or -1 */
	int any_fd;             /* some perf fd of the library */
	unsigned nr_metrics;
	unsigned members;       /* members a read(2) must return */
	struct v_model model;   /* ordinary counters (formula != V_F_NONE) */
	int uop_fd;             /* the reference's own INT_MISC.UOP_DROPPING
				   (kref.c v_kref_open_uop), or -1 */
	char why[160];          /* when leader < 0 */
};

int v_perf_fds(int *fds, int max);
/*
 * PERF_METRICS: where perf's tma_frontend_bound subtracts INT_MISC.
 * UOP_DROPPING, a counter of it for the reference (after v_kref_find:
 * not one of the library's descriptors); uop_fd -1 elsewhere.
 */
void v_kref_open_uop(struct v_kref *k, const struct td_info *info);
int v_kref_find(struct v_kref *k, const int *before, int nbefore,
		unsigned nr_metrics);
/* Ordinary counters: the library's group and this CPU's formula. */
int v_kref_find_counters(struct v_kref *k, const int *before, int nbefore,
			 const struct td_info *info);
int v_kref_read(const struct v_kref *k, struct v_counts *c);
/* Level-1 fractions of the stretch between two reads; false: no slots. */
bool v_kref_fractions(const struct v_kref *k, const struct v_counts *a,
		      const struct v_counts *b, double l1[4], uint64_t *slots);

/* kref_counters.c: the independent formulas of ordinary counters. */
int v_model_detect(struct v_model *m, char *why, size_t n);
/* The group read back has nr members: -EPROTO if the model has no such. */
int v_model_members(struct v_model *m, unsigned nr, const struct td_info *i);
void v_model_slots(const struct v_model *m, const struct v_counts *a,
		   const struct v_counts *b, double *slots, double cat[4]);
void v_model_totals(const struct v_model *m, struct v_counts *c);
bool v_model_fractions(const struct v_model *m, const struct v_counts *a,
		       const struct v_counts *b, double l1[4], uint64_t *slots);
/* A read(2) of a library fd whose result is thrown away: a foreign read. */
int v_foreign_read(const struct v_kref *k);

/* The emulator, when this process runs on it (emuhook.c). */
bool v_emulated(void);
void v_emu_set_mix(const double *f8);
/* Where the memory-bound slots of the work that follows stall: L1, L2,
 * L3, DRAM, store (NULL: all L1, the emulator's default). */
void v_emu_set_mem_shares(const double *f5);
bool v_emu_truth(struct v_counts *c);
bool v_emu_pmi(void);
/*
 * The work of one workload run, declared: after the first call the
 * emulator counts no CPU time of this thread (emu_preload_run).
 */
void v_emu_run(uint64_t slots);
#define V_EMU_KERNEL_SLOTS 4000000 /* 1 ms at the emulator's 4 per ns */

/* Reference of one stretch of work: kernel counts (and emulator truth). */
struct v_ref {
	struct v_counts kern0, kern1, truth0, truth1;
	long switches0, switches1;
	bool kern_ok, truth_ok;
};
void v_ref_begin(const struct v_kref *k, struct v_ref *r);
void v_ref_end(const struct v_kref *k, struct v_ref *r);
/* Fractions of the stretch from a counts delta; false if no slots. */
bool v_ref_fractions(const struct v_counts *a, const struct v_counts *b,
		     double l1[4], uint64_t *slots);

/* Results and report (report.c). */
enum v_status { V_PASS, V_FAIL, V_SKIP, V_INFO };

struct v_check {
	char name[40];
	enum v_status status;
	char detail[400];
};

#define V_MAX_CHECKS 48

struct v_report {
	bool emulated;
	const char *profile;
	struct td_info info;
	bool perf_metrics;      /* sysfs events/slots of the PMU */
	struct v_check checks[V_MAX_CHECKS];
	int nchecks;
	FILE *json_figures;     /* open_memstream of fig_buf */
	char *fig_buf;
	size_t fig_len;
	int figures;
	char machine_model[128];
	double whole_l1[TD_L1_COUNT]; /* the library's regions, all kernels */
	uint64_t whole_slots;
};

struct v_check *v_add(struct v_report *r, const char *name,
		      enum v_status st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* One JSON member of "figures": name and a preformatted JSON value. */
void v_figure(struct v_report *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int v_write_json(const struct v_report *r, const char *path);
void v_print_summary(const struct v_report *r, FILE *f);
int v_failures(const struct v_report *r);
void v_machine_json(FILE *f, const struct v_report *r);

/* The checks. */
struct v_opts {
	bool emulated;
	bool small;             /* short workloads (emulated) */
	bool long_drills;       /* drills that wait for the NMI watchdog */
	int regions;            /* per kernel */
};

void v_check_kernels(struct td *td, const struct v_kref *k,
		     const struct v_opts *o, struct v_report *r);
void v_check_drills(struct td *td, const struct v_kref *k,
		    const struct v_opts *o, struct v_report *r);
void v_check_perf_stat(const struct v_opts *o, struct v_report *r,
		       const char *self);
/* With a handle of its own (TD_OPT_MEMORY): open it with no other. */
void v_check_memory(const struct v_opts *o, struct v_report *r);
/* Run every kernel once per region without the library (perf stat). */
int v_workload_only(int regions, bool small);

/*
 * Most of a reference stretch that may lie outside the region it
 * brackets: the library's begin/end code and the read(2) wrappers, a few
 * thousand slots against regions of milliseconds.  More means the region
 * lost slots.  Emulated, the workloads' work is declared (v_emu_run) and
 * nothing else counts: none lies outside, and the same bound holds.
 */
#define V_MAX_OUTSIDE 0.05

/*
 * Largest err accepted as a useful answer, from decode.c's bound: on
 * PERF_METRICS the validator's reads zero the registers right before
 * every region (S_b = 0, S_e = R), so err is k R / (255 R) = 2/255 =
 * 0.008 with level 2 (k = 2), and each schedule-in inside the region adds
 * at most one more such step; 0.05 is the bound with up to five of them
 * in a region of about 1 ms.  On ordinary counters err is the
 * categories' disagreement with width x cycles, a few cycles of read
 * skew, far below it.  An err near 1 is within itself whatever the
 * fractions and would make any comparison pass.  Emulated, the reads of
 * one reading see one instant (test/emu/emu_preload.c): no skew at all.
 */
#define V_MAX_ERR 0.05

/* Agreement of a region with a reference: the tolerance used. */
double v_tolerance(const struct v_kref *k, const struct td_result *res,
		   uint64_t ref_slots, long switches);

/*
 * topdown validate [--emulate] [-o REPORT]: argv starts at "validate"
 * (or the standalone program's name); exec_argv is the whole command
 * line, for re-executing on the emulator, found at emulator (NULL: next
 * to the executable, or $TOPDOWN_EMULATOR).
 */
int td_cmd_validate(int argc, char **argv, char **exec_argv,
		    const char *emulator);
/* "validate" when run as `topdown validate`, "" standalone. */
extern const char *v_subcommand;

#endif
