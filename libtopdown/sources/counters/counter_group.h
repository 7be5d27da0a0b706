/* SPDX-License-Identifier: MIT */
/*
 * The ordinary-counter group, shared by the sources built on it: the x86
 * source here (counters.c), the Arm source (sources/arm) and the hybrid
 * E-cores (sources/hybrid).  It holds what the group code reads: the
 * model a source gives it (formula, events, per-family parameters) and
 * the group's state, opens and reads.  Each source's own entry layout
 * and functions are in its own header: x86_formulas.h here, arm.h in
 * sources/arm, hybrid.h in sources/hybrid.  The dependency points one
 * way: those folders include this header, this folder never includes
 * theirs; a formula kept elsewhere (Arm's) is reached through the model
 * (struct td_gen_family).  Not installed.
 */
#ifndef TD_COUNTER_GROUP_H
#define TD_COUNTER_GROUP_H

#include <stdint.h>

#include "internal.h"
#include "counters_fast.h"

#define TD_GEN_MAX 8 /* events in a generic group */
#define TD_GEN_L2_MAX 18 /* level-2 events of a model, all its groups */
#define TD_GEN_L2_GROUPS 4 /* multiplexed level-2 groups at most */

enum td_formula {
	TD_F_ZEN,     /* AMD Zen 4/5 PipelineL1 */
	TD_F_V45,     /* Intel Sandy Bridge .. Cascade Lake, per thread */
	TD_F_ATOM_V2, /* Intel Tremont, Gracemont, Crestmont, Skymont */
	TD_F_V1,      /* Intel Silvermont, Airmont, Knights Landing/Mill */
	TD_F_ARM,     /* Arm Neoverse / SBSA slot-based level 1 (arm_formulas.c) */
	TD_F_ARM_CYCLES /* Neoverse N1: cycle stall fractions, not slots */
};

/*
 * Per-core constants of Arm's level-1 formulas (telemetry-solution
 * neoverse-<core>.json; perf's arm64 neoverse-<core>/metrics.json):
 * X events take kf slots-per-cycle from frontend, kb from backend and
 * give kbs to bad speculation; erratum: N2 before r0p3 over-counts
 * STALL_SLOT and STALL_SLOT_FRONTEND by one per cycle.
 *
 * Model-table data, kept here because struct td_gen_model holds it by
 * value, as it holds the x86 formulas' own (any, alias_foreign): a model
 * is a plain value, filled in place by the source's model function and
 * copied whole (td_gen_open_v45_smt), with nothing to allocate or free.
 * Only the Arm source fills and reads it (arm_cpu.c, arm_formulas.c,
 * arm.c; td_gen_sub leaves a further group's at[] empty); at[] is
 * indexed by its entries (TD_ARM_*, arm.h, which asserts they fit), so
 * this header needs none of Arm's layout.
 */
struct td_arm_params {
	unsigned slots;         /* pipeline width: 5 (N2, N3), 8 (V1, V2), 10 (V3) */
	unsigned kf, kb, kbs;
	bool erratum;
	bool derived_stall;     /* td_arm_fractions: STALL_SLOT = FE + BE
				   (an open group with STALL_SLOT not
				   counted has it derived into v[] instead:
				   td_formula_derive) */
	int8_t at[TD_GEN_MAX];  /* by TD_ARM_*: the event's position in
				   config[], -1 absent */
	bool l2;                /* td_arm_delta: level-2 group open */
	uint8_t in[TD_GEN_MAX]; /* at[], TD_ARM_ABSENT where absent: a
				   position no Arm event takes, 0 in a
				   fast end's values (arm_formulas.c
				   td_arm_values_result) */
};

struct td_gen_model;

/*
 * A formula whose code is its source's own (Arm's, sources/arm: not
 * linear in the counters, so readings keep the raw events), reached
 * through the model so that this folder calls it without including that
 * one: counts, a reading's counts (td_formula_counts); derive, the
 * model's derivable event from the others (td_formula_derive); delta,
 * the source's delta of two counts (its source operation's, without the
 * handle); values_delta, that delta from zero counts to the counts of
 * values, the same bit for bit without the counts between (what a
 * record of values is finished with, counters_fast.c); values_result,
 * values_delta's delta then its result as the general route decodes a
 * delta without level 2, the delta's slots returned (a fast end's
 * result, counters_fast.c end_result; the family's file says what it
 * asks of the values).
 */
struct td_delta;
struct td_gen_family {
	void (*counts)(const struct td_gen_model *m, const uint64_t *v,
		       struct td_counts *c);
	void (*derive)(const struct td_gen_model *m, unsigned derived,
		       uint64_t *v);
	unsigned (*delta)(const struct td_gen_model *m,
			  const struct td_counts *a,
			  const struct td_counts *b, struct td_delta *d);
	unsigned (*values_delta)(const struct td_gen_model *m,
				 const uint64_t *v, struct td_delta *d);
	int64_t (*values_result)(const struct td_gen_model *m,
				 const uint64_t *v, uint64_t qerr,
				 struct td_result *res);
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
	unsigned nr2;           /* level-2 events: Zen (TD_ZEN2_*), Intel
				   V4.5 (TD_V452_*, TD_SNB2_*) and Atom
				   (TD_A2_*) in
				   l2_group[] groups; Arm N3/V3 (a second
				   group) */
	uint64_t config2[TD_GEN_L2_MAX];
	/* x86: events in each multiplexed level-2 group, in config2 order */
	uint8_t l2_group[TD_GEN_L2_GROUPS];
	/*
	 * Intel V4.5 before Skylake: Sandy Bridge's to Broadwell's level 2
	 * (TD_SNB2_*, formulas.c td_formula_snb_l2), not Skylake's; its
	 * forms: l2_min_clk, cycle counts taken at most the clocks (Sandy
	 * Bridge, Ivy Bridge, Haswell); l2_exe_core, execution cycles of
	 * the core, halved with SMT on (Haswell)
	 */
	bool l2_snb, l2_min_clk, l2_exe_core;
	bool l2_fe_be;          /* Atom: level 2 of frontend and backend only
				   (TD_RESULT_L2_FE_BE) */
	bool l2_in_group;       /* Atom, hybrid E-cores: those two children's
				   events in config[] after level 1's
				   (TD_V2_FE_LAT, TD_V2_ALLOC), no
				   multiplexing (hybrid.c) */
	/* Arm (TD_F_ARM, TD_F_ARM_CYCLES): its formula's code, NULL else */
	const struct td_gen_family *family;
	struct td_arm_params arm;
	int8_t cycles_at;       /* Arm: CPU_CYCLES's position in config[],
				   the one event the cycle counter can take
				   (counters_open.c, on an Arm PMU only);
				   -1 none (a further group: td_gen_sub) */
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
	/*
	 * counters_fast.c: its view of pc[].  First, so that each counter's
	 * fields lie within a load-pair's reach of the group (arm64's LDP
	 * takes offsets up to 504): no address computed per read.
	 */
	struct td_gen_fast fast;
	struct td_gen_model m;
	unsigned nr, derived;
	bool rdpmc_ok;          /* every page offers RDPMC (hybrid E group) */
	/* hybrid E group: its final counts while it does not run (hybrid.c) */
	bool cached;
	uint32_t cached_lock;   /* its page's lock then (the last P reading) */
	uint32_t times_lock;    /* the leader page's lock at the last RDPMC */
	uint64_t cv[TD_GEN_MAX], ct[2];
	bool smt_per_thread;    /* SMT on, AnyThread refused: approximate */
	/* TD_OPT_L2_MULTIPLEX: the model's level-2 groups (x86), else NULL */
	struct td_gen *mux[TD_GEN_L2_GROUPS];
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
};
_Static_assert(TD_GEN_MAX <= TD_NR_VALUES, "a region keeps every value");

/* A handle of the ordinary-counter sources (x86 counters, Arm). */
struct td_gen_handle {
	struct td td;
	struct td_gen *gen;      /* the level-1 group, from the source's open */
};
_Static_assert(offsetof(struct td_gen_handle, td) == 0,
	       "a handle is freed as its struct td");

static inline struct td_gen_handle *td_gen_of(const struct td *td)
{
	return td_container_of(td, struct td_gen_handle, td);
}

/* counters.c: the ordinary-counter group of a model, opened for td. */
struct td_open_req;
typedef int (*td_model_fn)(const struct td *td, const struct td_open_req *req,
			   struct td_gen_model *m);
TD_HIDDEN int td_generic_open(struct td *td, const struct td_open_req *req,
			      td_model_fn model);
TD_HIDDEN void td_generic_close(struct td *td);
TD_HIDDEN int td_generic_sample(struct td *td, struct td_sample *s);
TD_HIDDEN bool td_generic_consistent(const struct td *td,
				     const struct td_delta *d);
TD_HIDDEN void td_generic_info(const struct td *td, struct td_info *i);

/*
 * formulas.c: a reading's model-order values v[] -> monotonic counts by
 * the model's formula, and the counter budget's derived event.
 */
TD_HIDDEN void td_formula_derive(const struct td_gen_model *m,
				 unsigned derived, uint64_t *v);
TD_HIDDEN void td_formula_counts(const struct td_gen_model *m,
				 const uint64_t *v, struct td_counts *c);
TD_HIDDEN void td_formula_l1(const struct td_gen_model *m, const uint64_t *v,
			     struct td_counts *c);

/*
 * cpumodel.c: the value of "key : value" on the first line starting with
 * key (/proc/cpuinfo; Arm's table reads it too: arm_cpu.c).
 */
TD_HIDDEN const char *td_cpuinfo_field(const char *text, const char *key);

/* counters_open.c: a further group of g's model (level 2). */
TD_HIDDEN struct td_gen *td_gen_sub(const struct td_gen *g,
				    const uint64_t *config, unsigned nr);

/*
 * counters_open.c: one group of a model's events on PMU type (also the
 * hybrid E-cores' and Arm level 2's), its pages, its end.
 */
TD_HIDDEN int td_gen_group_open(struct td *td, struct td_gen *g, uint32_t type,
				bool include_kernel, bool check);
TD_HIDDEN bool td_gen_rdpmc_offered(const struct td *td, const struct td_gen *g);
TD_HIDDEN struct td_gen *td_gen_new(void);
TD_HIDDEN void td_gen_close_group(struct td *td, struct td_gen *g);
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
/* The counts of the open events' values (open order): model order, the
 * derived event computed, the model's formula. */
static inline void td_gen_counts_of(const struct td_gen *g,
				    const uint64_t *open, struct td_counts *c)
{
	uint64_t v[TD_GEN_MAX];

	td_gen_model_values(g, open, v);
	td_formula_counts(&g->m, v, c);
}
/*
 * The guard's step (counters_read.c): 2^44 events between two readings,
 * minutes of any core's counting; a foreign value jumps by the kernel's
 * period (~2^47) or goes backwards.
 */
#define TD_GEN_STEP_SHIFT 44
#define TD_GEN_STEP_MAX (UINT64_C(1) << TD_GEN_STEP_SHIFT)
TD_HIDDEN int td_gen_read_group(const struct td_gen *g, uint64_t *v,
				uint64_t *times);

#endif
