/* SPDX-License-Identifier: MIT */
/*
 * The x86 ordinary-counter source's own layout and entries: each
 * formula's event order, Zen's multiplexed level 2 in struct td_counts,
 * the formulas (formulas.c), the CPU table that picks one (cpumodel.c,
 * also the hybrid E-cores' model) and the group opens only x86 has
 * (counters_open.c).  Not installed.
 */
#ifndef TD_X86_FORMULAS_H
#define TD_X86_FORMULAS_H

#include <stdint.h>

#include "counter_group.h"

/* Event order of each formula: v[] of td_formula_counts. */
enum { TD_ZEN_CYC, TD_ZEN_FE, TD_ZEN_BE, TD_ZEN_SMT, TD_ZEN_DISP, TD_ZEN_RET,
       TD_ZEN_NR };
enum { TD_V45_CLK, TD_V45_IDQ_ND, TD_V45_ISSUED, TD_V45_RET_SLOTS,
       TD_V45_RECOVERY, TD_V45_NR };
enum { TD_V2_CLK, TD_V2_FE, TD_V2_BAD, TD_V2_RET, TD_V2_BE, TD_V2_NR };
/*
 * Atom level 2 counted in the level-1 group itself, where the core has
 * the counters for it (a hybrid part's Skymont E-cores: model
 * l2_in_group): frontend latency and alloc restrictions after level 1's.
 */
enum { TD_V2_FE_LAT = TD_V2_NR, TD_V2_ALLOC, TD_V2_L2_NR };
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
/*
 * TD_OPT_L2_MULTIPLEX: what a region passes to named totals besides its
 * record (struct td_delta l2raw, counters.c mux_delta): the level-2
 * values' deltas (in the formula's order), then the level-1 group's
 * counted (unscaled) slots, time running and enabled, level-2 group B's
 * time running (Zen), and the tag of the formula they are for (core's
 * TD_L2RAW_TAG: named totals keep it, they do not sum it).
 */
#define TD_MUXRAW_SLOTS 16
#define TD_MUXRAW_RUN   17
#define TD_MUXRAW_ENA   18
#define TD_MUXRAW_RUNB  19
#define TD_MUXRAW_MODEL TD_L2RAW_TAG
_Static_assert(TD_ZEN2_NR < TD_MUXRAW_SLOTS, "struct td_delta.l2raw");
_Static_assert(TD_MUXRAW_RUNB < TD_MUXRAW_MODEL, "struct td_delta.l2raw");

/*
 * Skylake's TopdownL2 events (perf's skylake/skl-metrics.json), in three
 * groups that each fit the 4 general counters a thread has with SMT on
 * (clocks and instructions go to fixed counters 1 and 0): 1, the
 * clocks, heavy operations' and fetch latency's events and
 * EXE_ACTIVITY.2_PORTS_UTIL; 2, memory bound's other events and clocks
 * again; 3, the mispredict/clear pair.  Every ratio's terms are in one
 * group but memory bound's, whose two groups' terms are per clock.
 */
enum { TD_V452_CLK1, TD_V452_INST, TD_V452_RET, TD_V452_MF, TD_V452_CYC0,
       TD_V452_P2,                                             /* 1 */
       TD_V452_CLK2, TD_V452_SMA, TD_V452_BOS, TD_V452_ST, TD_V452_P1, /* 2 */
       TD_V452_MISP, TD_V452_MC,                               /* 3 */
       TD_V452_NR };
/*
 * What a reading keeps of them (their linear combinations, so that they
 * fit struct td_counts beside level 1): the terms of td_formula_v45_l2.
 */
enum { TD_V45L2_CLK1, TD_V45L2_HEAVY, TD_V45L2_CYC0, TD_V45L2_P2,
       TD_V45L2_CLK2, TD_V45L2_MEM_NUM, TD_V45L2_MEM_DEN, TD_V45L2_MISP,
       TD_V45L2_MC, TD_V45L2_NR };
/*
 * Atom level 2 (perf's adln-metrics.json and the other Atom lists, each
 * node its TOPDOWN_* or UOPS_RETIRED.MS event over 5/6/8 x clocks): one
 * group, clocks on the fixed counter, four general counters; a model
 * whose list splits only frontend and backend counts the first three
 * (TD_A2_FE_BE_NR, model l2_fe_be).
 */
enum { TD_A2_CLK, TD_A2_FE_LAT, TD_A2_ALLOC, TD_A2_MISP, TD_A2_MS,
       TD_A2_NR };
#define TD_A2_FE_BE_NR TD_A2_MISP
/*
 * Sandy Bridge, Ivy Bridge, Haswell and Broadwell TopdownL2 (perf's
 * sandybridge/snb-metrics.json, ivybridge/ivb-metrics.json,
 * haswell/hsw-metrics.json, broadwell/bdw-metrics.json; formulas.c
 * td_formula_snb_l2), in four
 * groups that each fit the 4 general counters a thread has with SMT on
 * (clocks and instructions on fixed counters 1 and 0): 1, clocks, fetch
 * latency's and heavy operations' events; 2, clocks and memory bound's
 * stall counts; 3, clocks and the execution-port cycles of memory
 * bound's denominator, with instructions and the thread's own clocks
 * for its IPC test; 4, the mispredict/clear pair.  Every ratio's terms
 * are in one group but memory bound's, whose terms are per clock.
 */
enum { TD_SNB2_CLK1, TD_SNB2_CYC0, TD_SNB2_MS, TD_SNB2_RET, TD_SNB2_ISSUED,
       TD_SNB2_CLK2, TD_SNB2_MEM, TD_SNB2_STALLS, TD_SNB2_SB,
       TD_SNB2_RS_EMPTY,
       TD_SNB2_CLK3, TD_SNB2_INST, TD_SNB2_THREAD, TD_SNB2_EXE1,
       TD_SNB2_EXE2, TD_SNB2_EXE3,
       TD_SNB2_MISP, TD_SNB2_MC, TD_SNB2_NR };
/*
 * What a reading keeps of them: the events but the execution-port
 * cycles, kept as the two differences memory bound takes (cycles with 1
 * uop or more less those with 2 or more, or with 3 or more), and the
 * IPC test's terms as 5 x instructions - 9 x clocks, positive where IPC
 * > 1.8 (all linear, so that a region's values are the differences of
 * its readings').  16 values: the first TD_L2_IN_COUNTS in struct
 * td_counts, the rest in a reading's further words (struct td_sample
 * more).
 */
enum { TD_SNBL2_CLK1, TD_SNBL2_CYC0, TD_SNBL2_MS, TD_SNBL2_RET,
       TD_SNBL2_ISSUED, TD_SNBL2_CLK2, TD_SNBL2_MEM, TD_SNBL2_STALLS,
       TD_SNBL2_SB, TD_SNBL2_RS_EMPTY, TD_SNBL2_CLK3, TD_SNBL2_IPC18,
       TD_SNBL2_EXE_1_2, TD_SNBL2_EXE_1_3, TD_SNBL2_MISP, TD_SNBL2_MC,
       TD_SNBL2_NR };
#define TD_L2_IN_COUNTS 9 /* level-2 values struct td_counts keeps */
#define TD_L2_VALUES (TD_L2_IN_COUNTS + TD_NR_MORE) /* at most */
_Static_assert(TD_V45L2_NR <= TD_L2_IN_COUNTS &&
	       TD_A2_NR <= TD_L2_IN_COUNTS && TD_ZEN2_NR <= TD_L2_IN_COUNTS,
	       "td_mux_at");
_Static_assert(TD_SNBL2_NR <= TD_L2_VALUES, "struct td_sample more");
_Static_assert(TD_L2_VALUES <= TD_MUXRAW_SLOTS, "struct td_delta.l2raw");

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
TD_HIDDEN void td_formula_v45_l2(unsigned width, bool any, const uint64_t *w,
				 int64_t slots, int64_t *cat);
TD_HIDDEN void td_formula_snb_l2(unsigned width, bool any, bool min_clk,
				 bool exe_core, const uint64_t *w,
				 int64_t slots, int64_t *cat);
TD_HIDDEN unsigned td_formula_atom_l2(unsigned width, bool fe_be,
				      const uint64_t *w, int64_t slots,
				      int64_t *cat);

/* cpumodel.c: switch a V4.5 model to its AnyThread (SMT) form. */
TD_HIDDEN void td_model_anythread(struct td_gen_model *m);
/* cpumodel.c: the model of this CPU from sysfs and /proc/cpuinfo. */
TD_HIDDEN int td_cpu_model(const char *pmu, struct td_gen_model *m);
/* The E-cores of a hybrid part, PMU pmu (cpu_atom). */
TD_HIDDEN int td_cpu_model_atom(const char *pmu, struct td_gen_model *m);
TD_HIDDEN int td_hybrid_atom_lookup(unsigned family, unsigned model,
				    struct td_gen_model *m);
/* Pure: vendor, family, model -> table entry; -ENOSYS when unknown. */
TD_HIDDEN int td_cpu_lookup(const char *vendor, unsigned family,
			    unsigned model, struct td_gen_model *m);
TD_HIDDEN int td_cpuinfo_parse(const char *text, char *vendor, size_t len,
			       unsigned *family, unsigned *model);

/* counters_open.c: TD_OPT_L2_MULTIPLEX's level-2 groups beside level 1's. */
TD_HIDDEN int td_gen_open_l2_mux(struct td *td, bool include_kernel);
TD_HIDDEN int td_gen_open_mux_groups(struct td *td, struct td_gen *g,
				     uint32_t type, bool include_kernel);
/* counters_open.c: V4.5's level-1 group with SMT on; 1: not this case. */
TD_HIDDEN int td_gen_open_v45_smt(struct td *td, struct td_gen *g,
				  bool include_kernel);

#endif
