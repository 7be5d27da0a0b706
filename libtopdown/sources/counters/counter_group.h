/* SPDX-License-Identifier: MIT */
/*
 * TopDown from ordinary counters: the formulas (formulas.c), the CPU
 * table that picks one (cpumodel.c) and the counter group (counters.c).
 * Not installed.
 */
#ifndef TD_COUNTER_GROUP_H
#define TD_COUNTER_GROUP_H

#include <stdint.h>

#include "internal.h"
#include "counters_fast.h"

#define TD_GEN_MAX 8 /* events in a generic group */

enum td_formula {
	TD_F_ZEN,     /* AMD Zen 4/5 PipelineL1 */
	TD_F_V45,     /* Intel Sandy Bridge .. Cascade Lake, per thread */
	TD_F_ATOM_V2, /* Intel Tremont, Gracemont, Crestmont, Skymont */
	TD_F_V1,      /* Intel Silvermont, Airmont, Knights Landing/Mill */
	TD_F_ARM,     /* Arm Neoverse / SBSA slot-based level 1 (arm_formulas.c) */
	TD_F_ARM_CYCLES /* Neoverse N1: cycle stall fractions, not slots */
};

/* Event order of each formula: v[] of td_formula_counts. */
enum { TD_ZEN_CYC, TD_ZEN_FE, TD_ZEN_BE, TD_ZEN_SMT, TD_ZEN_DISP, TD_ZEN_RET,
       TD_ZEN_NR };
enum { TD_V45_CLK, TD_V45_IDQ_ND, TD_V45_ISSUED, TD_V45_RET_SLOTS,
       TD_V45_RECOVERY, TD_V45_NR };
enum { TD_V2_CLK, TD_V2_FE, TD_V2_BAD, TD_V2_RET, TD_V2_BE, TD_V2_NR };
enum { TD_V1_CLK, TD_V1_FE, TD_V1_BAD, TD_V1_RET, TD_V1_NR };
/*
 * Zen 4/5 PipelineL2's events (perf's amdzen4/amdzen5 pipeline.json), in
 * two groups of 4 that each fit the counters the NMI watchdog leaves
 * (5): each of PipelineL2's ratios has its numerator and denominator in
 * one group (inference: a ratio needs only those two counted together),
 * so multiplexing cannot skew a ratio.
 */
enum { TD_ZEN2_CYC, TD_ZEN2_FE_CMASK, TD_ZEN2_RET, TD_ZEN2_UCODE, /* A */
       TD_ZEN2_MISP, TD_ZEN2_RESTART, TD_ZEN2_NC, TD_ZEN2_LOAD_NC, /* B */
       TD_ZEN2_NR };
#define TD_ZEN2_GROUP 4 /* events per level-2 group */
_Static_assert(TD_ZEN2_NR == TD_MUXRAW_SLOTS, "struct td_delta.l2raw");

/*
 * TD_OPT_L2_MULTIPLEX keeps, in the entries of struct td_counts that
 * Zen's level 1 leaves free, the level-2 groups' cumulative counts
 * (TD_ZEN2_* at td_mux_at[]), the level-1 group's time running and
 * enabled, and group B's time running (counters.c).
 */
#define TD_MUX_RUN1 13
#define TD_MUX_ENA1 14
#define TD_MUX_RUNB 15

/* AnyThread (config bit 21): count for both SMT threads of the core. */
#define TD_EV_ANY (UINT64_C(1) << 21)

/*
 * Arm: the raw events a formula reads, each kept cumulative in
 * td_counts.cat[] at its own position (the formulas are not linear in
 * them, so they are applied to a region's deltas: td_arm_delta).  X is
 * BR_MIS_PRED (N2, V1, V2) or STALL_FRONTEND_FLUSH (N3, V3).  On N1, FE
 * and BE are the cycle events STALL_FRONTEND and STALL_BACKEND.
 */
enum { TD_ARM_CYC, TD_ARM_FE, TD_ARM_BE, TD_ARM_RET, TD_ARM_SPEC, TD_ARM_X,
       TD_ARM_STALL, TD_ARM_NR };
/*
 * Arm level 2 (N3, V3; arm_level2.c): the second group's events, config2[]
 * order, kept in td_counts.cat[] from TD_ARM_L2_AT on; TD_ARM_L2_GAP
 * counts the group's time not counting and failed readings.
 */
enum { TD_ARM2_FE, TD_ARM2_FE_MEM, TD_ARM2_BE, TD_ARM2_BE_MEM, TD_ARM2_NR };
#define TD_ARM_L2_AT  TD_ARM_NR
#define TD_ARM_L2_GAP (TD_ARM_L2_AT + TD_ARM2_NR)
_Static_assert(TD_ARM_L2_GAP < TD_NR_COUNTS, "Arm counts exceed td_counts");

/*
 * Per-core constants of Arm's level-1 formulas (telemetry-solution
 * neoverse-<core>.json; perf's arm64 neoverse-<core>/metrics.json):
 * X events take kf slots-per-cycle from frontend, kb from backend and
 * give kbs to bad speculation; erratum: N2 before r0p3 over-counts
 * STALL_SLOT and STALL_SLOT_FRONTEND by one per cycle.
 */
struct td_arm_params {
	unsigned slots;         /* pipeline width: 5 (N2, N3), 8 (V1, V2), 10 (V3) */
	unsigned kf, kb, kbs;
	bool erratum;
	bool derived_stall;     /* td_arm_fractions: STALL_SLOT = FE + BE
				   (an open group with STALL_SLOT not
				   counted has it derived into v[] instead:
				   td_formula_derive) */
	int8_t at[TD_ARM_NR];   /* event's position in config[], -1 absent */
	bool l2;                /* td_arm_delta: level-2 group open */
};

/* What a CPU needs: formula, pipeline width, events. */
struct td_gen_model {
	enum td_formula formula;
	unsigned width;
	unsigned nr;
	uint64_t config[TD_GEN_MAX];
	const char *name;       /* microarchitecture, e.g. "zen4" */
	unsigned derivable;     /* event the formula can derive from the
				   others when counters are short; 0 none */
	bool any;               /* V4.5 SMT form: _ANY clocks, halved */
	unsigned nr2;           /* level-2 events: Zen (TD_ZEN2_*, groups of
				   TD_ZEN2_GROUP), Arm N3/V3 (a second
				   group) */
	uint64_t config2[TD_GEN_MAX];
	struct td_arm_params arm;
	/*
	 * Atom V2: the events (bit 1 << TD_V2_*) whose topdown-* alias the
	 * kernel publishes for this model from another core's table, so
	 * that it names another event here: the table's encoding is used.
	 * The other aliases are the core's own and win over the table.
	 */
	unsigned alias_foreign;
};

/*
 * The handle's generic group: nr events open, ev[k] the model's index of
 * open event k; derived (0: none) the model event computed instead.
 */
struct td_gen {
	struct td_gen_model m;
	unsigned nr, derived;
	bool rdpmc_ok;          /* every page offers RDPMC (hybrid E group) */
	/* hybrid E group: its final counts while it does not run (hybrid.c) */
	bool cached;
	uint32_t cached_lock;   /* its page's lock then (the last P reading) */
	uint32_t times_lock;    /* the leader page's lock at the last RDPMC */
	uint64_t cv[TD_GEN_MAX], ct[2];
	bool smt_per_thread;    /* SMT on, AnyThread refused: approximate */
	/* TD_OPT_L2_MULTIPLEX: level-2 groups A and B (Zen), else NULL */
	struct td_gen *mux[2];
	bool cyc32;             /* Arm: cycles asked 32-bit (counters_open.c) */
	/* Arm level 2 (arm_level2.c): its group, or NULL and why */
	struct td_gen *l2;
	bool l2_unfit;          /* too few counters: TD_INFO_L2_NO_COUNTERS */
	uint64_t l2_gap, l2_fails; /* its last time not counting, failures */
	/* counters_read.c's plausibility guard: the last values accepted, model order */
	bool have_last;
	uint64_t last[TD_GEN_MAX];
	uint8_t ev[TD_GEN_MAX];
	int fd[TD_GEN_MAX];
	struct perf_event_mmap_page *pc[TD_GEN_MAX];
	struct td_gen_fast fast; /* counters_fast.c: its view of pc[] */
};
_Static_assert(TD_GEN_MAX <= TD_NR_VALUES, "a region keeps every value");

/* counters.c: the ordinary-counter group of a model, opened for td. */
struct td_open_req;
typedef int (*td_model_fn)(const struct td_pmu *pmu, struct td_gen_model *m);
TD_HIDDEN int td_generic_open(struct td *td, const struct td_open_req *req,
			      td_model_fn model);
TD_HIDDEN void td_generic_close(struct td *td);
TD_HIDDEN int td_generic_sample(struct td *td, struct td_sample *s);
TD_HIDDEN bool td_generic_consistent(const struct td *td,
				     const struct td_delta *d);
TD_HIDDEN void td_generic_info(const struct td *td, struct td_info *i);

/* formulas.c: cumulative counter values v[] -> monotonic counts. */
TD_HIDDEN void td_formula_zen(unsigned width, const uint64_t *v,
			      struct td_counts *c);
TD_HIDDEN void td_formula_v45(unsigned width, const uint64_t *v,
			      struct td_counts *c);
TD_HIDDEN void td_formula_atom_v2(unsigned width, const uint64_t *v,
				  struct td_counts *c);
TD_HIDDEN void td_formula_v45_any(unsigned width, const uint64_t *v,
				  struct td_counts *c);
TD_HIDDEN void td_formula_v1(unsigned width, const uint64_t *v,
			     struct td_counts *c);
TD_HIDDEN void td_formula_zen_l2(const uint64_t *w, int64_t *cat);
/* cpumodel.c: switch a V4.5 model to its AnyThread (SMT) form. */
TD_HIDDEN void td_model_anythread(struct td_gen_model *m);
TD_HIDDEN void td_formula_derive(const struct td_gen_model *m,
				 unsigned derived, uint64_t *v);
TD_HIDDEN void td_formula_counts(const struct td_gen_model *m,
				 const uint64_t *v, struct td_counts *c);

/* arm_formulas.c: Arm's level 1 on deltas; pure. */
TD_HIDDEN void td_arm_counts(const struct td_gen_model *m, const uint64_t *v,
			     struct td_counts *c);
TD_HIDDEN void td_arm_fractions(const struct td_arm_params *p,
				const double *dv, double *f);
TD_HIDDEN unsigned td_arm_delta(const struct td_gen_model *m,
				const struct td_counts *a,
				const struct td_counts *b, struct td_delta *d);

/* arm_level2.c: Arm level 2's group, opened after level 1's, and read. */
TD_HIDDEN void td_arm_l2_open(struct td *td, struct td_gen *g,
			      bool include_kernel);
TD_HIDDEN void td_arm_l2_sample(struct td_gen *g, bool rdpmc,
				struct td_counts *c);

/* arm_cpu.c: Arm core identification (MIDR_EL1) and its model. */
TD_HIDDEN int td_arm_lookup(uint32_t midr, unsigned caps_slots,
			    struct td_gen_model *m);
TD_HIDDEN int td_arm_midr_parse(const char *cpuinfo, uint32_t *midr);
TD_HIDDEN int td_arm_model(const struct td_pmu *pmu, struct td_gen_model *m);

/* cpumodel.c: the model of this CPU from sysfs and /proc/cpuinfo. */
TD_HIDDEN int td_cpu_model(const char *pmu, struct td_gen_model *m);
/* The E-cores of a hybrid part, PMU pmu (cpu_atom). */
TD_HIDDEN int td_cpu_model_atom(const char *pmu, struct td_gen_model *m);
TD_HIDDEN int td_hybrid_atom_lookup(unsigned family, unsigned model,
				    struct td_gen_model *m);
/* Pure: vendor, family, model -> table entry; -ENOSYS when unknown. */
TD_HIDDEN int td_cpu_lookup(const char *vendor, unsigned family,
			    unsigned model, struct td_gen_model *m);
/* The value of "key : value" on the first line starting with key. */
TD_HIDDEN const char *td_cpuinfo_field(const char *text, const char *key);
TD_HIDDEN int td_cpuinfo_parse(const char *text, char *vendor, size_t len,
			       unsigned *family, unsigned *model);

/* counters_open.c: a further group of g's model (level 2). */
TD_HIDDEN struct td_gen *td_gen_sub(const struct td_gen *g,
				    const uint64_t *config, unsigned nr);
/* counters_open.c: TD_OPT_L2_MULTIPLEX's level-2 groups beside level 1's. */
TD_HIDDEN int td_gen_open_l2_mux(struct td *td, bool include_kernel);

/*
 * counters_open.c: one group of a model's events on PMU type (also the
 * hybrid E-cores' and Arm level 2's), its pages, its end.
 */
TD_HIDDEN int td_gen_group_open(struct td *td, struct td_gen *g, uint32_t type,
				bool include_kernel, bool check);
TD_HIDDEN bool td_gen_rdpmc_offered(const struct td *td, const struct td_gen *g);
TD_HIDDEN struct td_gen *td_gen_new(void);
TD_HIDDEN void td_gen_close_group(struct td *td, struct td_gen *g);
TD_HIDDEN int td_gen_open_v45_smt(struct td *td, struct td_gen *g,
				  bool include_kernel);
TD_HIDDEN void td_gen_free(struct td *td, struct td_gen *g);

/*
 * counters_read.c: values of a reading: a negative errno, or flags:
 * TD_GEN_BY_READ, taken with read(2) (times[] are then current, not the
 * page's); TD_GEN_SUSPECT, exact (read(2)) but inconsistent with the
 * previous reading accepted, which must then have been wrong (the caller
 * flags regions spanning it).
 */
#define TD_GEN_SUSPECT 1
#define TD_GEN_BY_READ 2
TD_HIDDEN int td_gen_values(struct td_gen *g, bool rdpmc, uint64_t *v,
			    uint64_t *times);
TD_HIDDEN void td_gen_model_values(const struct td_gen *g,
				   const uint64_t *open, uint64_t *v);
TD_HIDDEN int td_gen_read_group(const struct td_gen *g, uint64_t *v,
				uint64_t *times);

/* Pure: a counter value from a user page reading (counters_read.c). */
static inline uint64_t td_gen_value(int64_t offset, uint64_t raw,
				    unsigned width)
{
	unsigned shift = 64 - (width ? width : 64);
	/* Cast before shifting right: the shift must be arithmetic. */
	int64_t ext = (int64_t)(raw << shift) >> shift;

	return (uint64_t)offset + (uint64_t)ext;
}

#endif
