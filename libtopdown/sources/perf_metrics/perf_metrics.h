/* SPDX-License-Identifier: MIT */
/*
 * The PERF_METRICS source's operations, for the hybrid source that
 * composes it with the E-cores' group.  Not installed.
 */
#ifndef TD_PERF_METRICS_H
#define TD_PERF_METRICS_H

#include <string.h>

#include "pm_decode.h"
#include "source.h"
#include "userpage.h"

/*
 * PERF_METRICS' byte i is the slots fraction x 255 of category i of enum
 * td_metric_byte (arch/x86/include/asm/perf_event.h: INTEL_TD_METRIC_*
 * in that order), so a reading adds to struct td_counts cat[i] as it is.
 */
_Static_assert(TD_M_RETIRING == 0 && TD_M_BAD_SPEC == 1 &&
	       TD_M_FE_BOUND == 2 && TD_M_BE_BOUND == 3 &&
	       TD_M_HEAVY_OPS == 4 && TD_M_BR_MISPREDICT == 5 &&
	       TD_M_FETCH_LAT == 6 && TD_M_MEM_BOUND == 7,
	       "PERF_METRICS' byte order");

enum td_clear_trigger {
	TD_CLEAR_UNKNOWN,     /* not learnt yet: probe with extra reads */
	TD_CLEAR_BY_METRICS,  /* reading PERF_METRICS clears: slots first */
	TD_CLEAR_BY_SLOTS     /* reading SLOTS clears: metrics first */
};

/* PERF_METRICS' events on the core PMU, from sysfs (pm_pmu.c). */
struct td_pm_pmu {
	uint64_t slots_config;
	uint64_t metric_config[TD_NR_METRICS];
	unsigned nr_metrics;  /* 4 (L1) or 8 (L1+L2) */
	uint64_t metrics_clear_config1; /* format/metrics_clear bit, or 0 */
};

/*
 * The memory drill-down's counts (pm_memory.c), in struct td_counts
 * from cat[TD_PM_MEM0] on: the stall counts perf's level-3 memory nodes
 * are made of, and what the model needs besides.  Golden Cove counts
 * the thread's clocks in the first entry and uses the first six, below
 * the hybrid source's entry; Ice Lake (never hybrid) puts
 * EXE_ACTIVITY.2_PORTS_UTIL in the first and uses all seven, the last
 * the sum of two of its eight events (pm_memory.c icelake).
 */
enum td_pm_mem_ev {
	TD_PMM_CLKS, TD_PMM_LOADS, TD_PMM_L1D_MISS, TD_PMM_L2_MISS,
	TD_PMM_L3_MISS, TD_PMM_STORES, TD_PMM_EXE_IDLE, TD_PMM_NR
};
#define TD_PMM_PORTS_2 TD_PMM_CLKS
#define TD_PM_MEM0 (TD_M_SMT + 1)
#define TD_PMM_MAX_EVENTS 8 /* Ice Lake's */

struct td_pm_mem_model;

/* TD_OPT_MEMORY: the group of those events, beside SLOTS/PERF_METRICS. */
struct td_pm_mem {
	bool on;
	const struct td_pm_mem_model *model;
	int fd[TD_PMM_MAX_EVENTS];
	struct perf_event_mmap_page *pc[TD_PMM_MAX_EVENTS];
};

/*
 * INT_MISC.UOP_DROPPING (pm_uop.c), which perf subtracts from frontend
 * bound and fetch latency on some PERF_METRICS cores: one ordinary
 * counter in a group of its own beside SLOTS/PERF_METRICS.  The fast
 * paths read it by the RDPMC selector and add the page's offset, both
 * as the slow path last saw them (sel, offset).
 */
struct td_pm_uop {
	bool wanted;     /* perf refines frontend bound on this core */
	bool on;         /* counting: results refined (else flagged) */
	int fd;
	struct perf_event_mmap_page *pc;
	unsigned fe_flag; /* TD_RESULT_FE_UNREFINED where wanted, not on */
	uint32_t sel;    /* RDPMC selector: the page's index - 1 */
	uint64_t offset; /* count - RDPMC's value (pm_uop.c rdpmc_count) */
};

/*
 * The PERF_METRICS source's own state (sources/perf_metrics/, also used
 * by the hybrid source it serves), embedded in the handle: the fast path
 * reads only pmu.nr_metrics (whether to decode level 2) and the
 * metrics-clear fields of its own fast path.
 */
struct td_pm {
	struct td_pm_pmu pmu;
	int metric_fd[TD_NR_METRICS];
	struct td_counts last_read; /* read(2) path: last counts returned */
	/*
	 * RDPMC metrics-clear mode (Lunar Lake P-cores and later): every
	 * user RDPMC of the trigger register zeroes SLOTS and PERF_METRICS.
	 * Which of the two reads triggers is learnt at run time.
	 */
	bool clear_mode;
	enum td_clear_trigger clear_trigger;
	/*
	 * pm_reading.c: snap.base plus the cpu_core group's kernel counts
	 * (read(2)) are its counts in our units.  True from open and after
	 * each of our resets (IOC_RESET zeroes both); false once a fold put
	 * P counts into base that the kernel's counts hold too (a foreign
	 * reset, an undone reset, a read(2) that raced a schedule-in).
	 */
	bool kcount_ok;
	/*
	 * pm_reading.c: readings that found another context's values in
	 * the registers after a schedule-in (rebase_foreign_registers),
	 * whether the last reading was the one right after our reset, and
	 * whether the group was seen active (or having run) since open.
	 */
	uint64_t rebases;
	bool after_reset;
	bool started;
	/*
	 * pm_reading.c: our last IOC_RESET found the group switched out and
	 * was undone (reset_missed_saved): the kernel's count is 0 while
	 * the saved registers it keeps come back at the next schedule-in,
	 * so that count says nothing of a restore (registers_not_ours).
	 * Until our next reset or a foreign one.
	 */
	bool saved_kept;
	/* the page's lock and index right before our last IOC_RESET */
	uint32_t reset_lock;
	bool reset_inactive;
	/*
	 * Metrics-clear mode's fast begin (pm_clear_fast.c): a reading kept
	 * raw, folded into snap.base before anything reads it.
	 */
	bool pending;
	uint64_t pend_slots, pend_metrics;
	/*
	 * Set by a source that serves this one where the fixed selectors
	 * exist on some CPUs only (the hybrid source's rseq guard): the
	 * RDPMC of SLOTS and PERF_METRICS (their user-page indices) that
	 * never runs on another CPU; false when the thread is on one.  NULL:
	 * plain RDPMC.
	 */
	bool (*guarded_read)(const struct td *td, uint32_t sidx, uint32_t midx,
			     uint64_t *slots, uint64_t *metrics);
	/*
	 * Set by that source too, for td_pm_clear_guarded_fast_begin/end:
	 * does a metrics-clear reading they just took stand without the
	 * source's own fold at a reading (the hybrid source's E-cores quiet,
	 * its page as last seen)?
	 */
	bool (*clear_fast_stands)(const struct td *td);
	/*
	 * The guard guarded_read applies, for the metrics-clear fast path
	 * to apply inline (arch_x86.h td_rdpmc_guarded) and the slow path's
	 * reads of ordinary counters (td_pm_guard): the thread's rseq area
	 * and the bitmap of the CPUs having the fixed selectors, which
	 * have every general-purpose counter of the core PMU too.  cpus
	 * NULL: none set.
	 */
	struct td_cpu_guard guard;
	/*
	 * When RDPMC cannot read, take the group's counts the kernel saved
	 * at schedule-out by read(2) (pm_reading.c ecore_p_sample): set by
	 * the hybrid source, whose E-core group counts meanwhile.
	 */
	bool saved_read_fallback;
	/*
	 * The last reading (td_pm_sample), where its counts were those the
	 * kernel saved (saved_read_fallback; pm_reading.c ecore_p_sample):
	 * cpu_core's page times then and its time_enabled from read(2),
	 * which the hybrid source pairs with the E group's (hybrid.c
	 * pair_times).
	 */
	struct td_pm_saved_read {
		bool used;           /* the last reading was such a one */
		uint64_t en, run;    /* the page's time_enabled, time_running */
		uint64_t en_now;     /* time_enabled from read(2) */
	} saved;
	/* TD_OPT_MEMORY: the memory drill-down's group (pm_memory.c) */
	struct td_pm_mem mem;
	/*
	 * Metrics-clear mode (pm_reading.c clear_judge_restores): the slots
	 * event's kernel count on the page as last judged (with last_lock),
	 * which a schedule-in since must have seen grow to have restored
	 * our registers.
	 */
	uint64_t clear_count;
	/*
	 * The kernel's saved registers are 0 (our IOC_RESET after the
	 * last schedule-in judged, pm_reading.c clear_zero_saved): a
	 * schedule-in since restored ours iff the count grew.
	 */
	bool clear_saved_zero;
	/* INT_MISC.UOP_DROPPING (pm_uop.c) */
	struct td_pm_uop uop;
};

/*
 * A handle of the PERF_METRICS source (and of the hybrid source, which
 * embeds this one): the core handle, then the source's own state.  The
 * fast path (pm_fast.c) reads the user page and the last readings at
 * fixed offsets from the core handle, as it did when they were core's.
 */
struct td_pm_handle {
	struct td td;
	struct perf_event_mmap_page *slots_pc;  /* leader's user page */
	struct perf_event_mmap_page *metric_pc; /* first metric's user page */
	/*
	 * The last RDPMC reading of SLOTS, which a later one below it shows
	 * a foreign reset by; and the last reading of both registers, a pair
	 * of one instant, which such a reset folds (pm_reading.c): set
	 * together wherever both are read.  A fast end without output reads
	 * SLOTS alone: last_raw_slots only.
	 */
	uint64_t last_raw_slots;
	uint64_t last_pair_slots;
	union {
		uint64_t last_raw_metrics;
		uint32_t last_raw_metrics_half[2]; /* x86: little endian */
	};
	struct td_pm pm;
};
_Static_assert(offsetof(struct td_pm_handle, td) == 0,
	       "a handle is freed as its struct td");

/* c += one reading: field x slots per category (x255 units), slots. */
static inline void td_counts_add(struct td_counts *c, uint64_t slots,
				 uint64_t metrics)
{
#pragma GCC unroll 8
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		c->cat[i] += ((metrics >> (8 * i)) & 0xff) * slots;
	c->slots += slots;
}

/*
 * PERF_METRICS as RDPMC gave it, in two halves (EDX:EAX), into a word
 * that holds it whole (a region's begin: begin_state.h raw): two 32-bit
 * stores, not joined first (x86 is little endian).
 */
static inline void td_pm_store_halves(uint64_t *w, uint32_t lo, uint32_t hi)
{
	memcpy(w, &lo, sizeof(lo));
	memcpy((char *)w + sizeof(lo), &hi, sizeof(hi));
}

static inline struct td_pm_handle *td_pm_of(const struct td *td)
{
	return td_container_of(td, struct td_pm_handle, td);
}

/*
 * The guard for an RDPMC of one of the core PMU's ordinary counters (the
 * slow path's reads of the drop counter and the drill-down's, through
 * userpage.h td_user_read), where the source serving this one set it;
 * NULL: plain RDPMC.
 */
static inline const struct td_cpu_guard *td_pm_guard(const struct td *td)
{
	const struct td_cpu_guard *g = &td_pm_of(td)->pm.guard;

	return g->cpus ? g : NULL;
}

/*
 * INT_MISC.UOP_DROPPING's count now (pm_uop.c): RDPMC of the selector
 * the slow path last saw, plus its base.  Only while the page of SLOTS
 * is as the slow path saw it (the fast paths' checks): the counter's
 * group is the same task context's, scheduled in and out (and rotated,
 * and rescheduled) with SLOTS' group, so its page then is as seen too.
 * A CPU whose every core has that counter: the hybrid source reads it
 * inside its guard (hybrid_fast.c).
 */
static inline uint64_t td_pm_uop_now(const struct td *td)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	return u->offset + td_rdpmc(u->sel);
}

/* pm_pmu.c: PERF_METRICS' events on the core PMU; -EOPNOTSUPP: none. */
TD_HIDDEN int td_pm_pmu_find(const struct td_pmu *pmu, struct td_pm_pmu *pm);
/* pm_group.c: the perf_event group of SLOTS and the metrics. */
TD_HIDDEN int td_group_open(struct td *td, bool include_kernel,
			   bool want_rdpmc);
TD_HIDDEN void td_group_close(struct td *td);
TD_HIDDEN int td_group_reset(struct td *td);
/*
 * pm_reading.c: the source's reading, on whichever of its paths the
 * handle uses (RDPMC, metrics-clear, read(2)), and its reset operation.
 */
TD_HIDDEN int td_pm_sample(struct td *td, struct td_sample *s);
TD_HIDDEN int td_pm_reset(struct td *td, struct td_sample *s);
/* pm_clear_fast.c: fold the reading a metrics-clear fast begin kept. */
TD_HIDDEN void td_pm_fold_pending(struct td *td);
/* perf_metrics.c */
TD_HIDDEN int td_pm_group_open(struct td *td, const struct td_open_req *req);
TD_HIDDEN void td_pm_close(struct td *td);
TD_HIDDEN unsigned td_pm_delta(const struct td *td, const struct td_counts *a,
			       uint64_t raw_slots, uint64_t raw,
			       const struct td_counts *b, struct td_delta *d);
TD_HIDDEN bool td_pm_consistent(const struct td *td, const struct td_delta *d);
TD_HIDDEN void td_pm_info(const struct td *td, struct td_info *i);
/* pm_fast.c: the source's ready operation (source.h). */
TD_HIDDEN void td_pm_fast_setup(struct td *td);
/* pm_clear_fast.c: metrics-clear mode's fast path (source.h). */
struct td_region_priv;
TD_HIDDEN int td_pm_clear_fast_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_pm_clear_fast_end(struct td *td, struct td_region_priv *p,
				   struct td_result *res);
TD_HIDDEN int td_pm_clear_guarded_fast_begin(struct td *td,
					     struct td_region_priv *p);
TD_HIDDEN int td_pm_clear_guarded_fast_end(struct td *td,
					   struct td_region_priv *p,
					   struct td_result *res);
/* pm_fast.c: a fast reading of both registers, with somewhere to go. */
TD_HIDDEN int td_end_with_reading(struct td *td, struct td_region_priv *p,
				  struct td_result *res, uint64_t slots,
				  uint64_t metrics, uint64_t aux);
/* pm_fast.c: the end of two readings another fast path took (hybrid). */
TD_HIDDEN int td_pm_end_reading(struct td *td, struct td_region_priv *p,
				struct td_result *res, uint64_t slots,
				uint64_t metrics, uint64_t aux);
/*
 * pm_memory.c: the memory drill-down (TD_OPT_MEMORY).  open: its group
 * where req->memory (-EOPNOTSUPP or -ENOSPC where the CPU has none, the
 * reason for td_strerror set), nothing otherwise; sample: its counts
 * into a reading; delta: into a region's delta; decode: the nodes (the
 * sources' decode_more).
 */
TD_HIDDEN int td_pm_mem_open(struct td *td, const struct td_open_req *req);
TD_HIDDEN void td_pm_mem_close(struct td *td);
TD_HIDDEN void td_pm_mem_sample(struct td *td, struct td_sample *s);
TD_HIDDEN void td_pm_mem_delta(const struct td_counts *a,
			       const struct td_counts *b, struct td_delta *d);
TD_HIDDEN void td_pm_mem_decode(const struct td *td, const struct td_delta *d,
				struct td_result *res);
TD_HIDDEN void td_pm_mem_record(const struct td *td, const struct td_delta *d,
				struct td_record *rec);
/*
 * pm_uop.c: INT_MISC.UOP_DROPPING where perf's frontend bound subtracts
 * it.  open: its counter where the core wants it and req allows (a
 * counter that cannot be had leaves the handle's results flagged
 * TD_RESULT_FE_UNREFINED, never an error); sample: its count into s->aux
 * (TD_AUX_NONE when unreadable), and the selector and offset the fast
 * paths use.
 */
TD_HIDDEN void td_pm_uop_open(struct td *td, const struct td_open_req *req);
TD_HIDDEN void td_pm_uop_close(struct td *td);
TD_HIDDEN void td_pm_uop_sample(struct td *td, struct td_sample *s);
/* The result flag of a delta of this handle (0 or TD_RESULT_FE_UNREFINED),
 * its categories refined where it is 0 (pm_decode.h td_uop_move). */
TD_HIDDEN unsigned td_pm_uop_delta(const struct td *td, struct td_delta *d);
/* The kernel's caps/pmu_name of the core PMU, "" when it does not say. */
TD_HIDDEN void td_pm_pmu_name(const struct td *td, char *out, size_t len);

#endif
