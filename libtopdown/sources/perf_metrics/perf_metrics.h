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
	bool on_l2;      /* on, level 2 decoded, no second counter wanted
			    (INT_MISC.CLEARS_COUNT below): the fast
			    paths' common case, tested once (pm_fast.c) */
	int fd;
	struct perf_event_mmap_page *pc;
	unsigned fe_flag; /* TD_RESULT_FE_UNREFINED where wanted, not on */
	uint32_t sel;    /* RDPMC selector: the page's index - 1 */
	uint64_t offset; /* count - RDPMC's value (pm_uop.c rdpmc_count) */
	/*
	 * INT_MISC.CLEARS_COUNT, which perf adds to backend bound on some
	 * of those cores: a second counter the same way, opened only
	 * beside the first (read in the same places: be_on implies on).
	 */
	bool be_wanted;
	bool be_on;
	int be_fd;
	struct perf_event_mmap_page *be_pc;
	unsigned be_flag; /* TD_RESULT_BE_UNREFINED where wanted, not on */
	uint32_t be_sel;
	uint64_t be_offset;
	uint64_t be_end; /* its count at the fast end that read it last */
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
	/*
	 * pm_reading.c, read(2) path: the slots event's kernel count when
	 * SLOTS and PERF_METRICS were last known to be zeroed (a read(2)
	 * that folded SLOTS, read_epoch_start), and whether our last
	 * read(2) found the group switched out with saved registers, which
	 * it leaves as they were (read_kept_saved).
	 */
	uint64_t read_epoch_start;
	bool read_kept_saved;
	/*
	 * pm_reading.c, read(2) path: the category counts our last read(2)
	 * returned, and the schedule-ins seen since the last one whose
	 * counts had moved (charge_read_error).
	 */
	uint64_t read_last[TD_NR_METRICS];
	uint32_t read_restores;
	/* the page's lock and index right before our last IOC_RESET */
	uint32_t reset_lock;
	bool reset_inactive;
	/*
	 * Metrics-clear mode's fast begin (pm_clear_fast.c): a reading kept
	 * raw, folded into snap.base before anything reads it.  pending: the
	 * region whose fast begin took it (an end that finds its own begin's
	 * reading there knows that no reading came between), or
	 * TD_PM_PEND_KEPT for a reading the slow path is to judge; NULL:
	 * none.
	 */
	const void *pending;
	uint64_t pend_slots, pend_metrics;
	/*
	 * The region whose begin opened the policy's stretch of open
	 * regions and took the pending reading (else NULL): the stretch's
	 * start (policy.open_since, folded SLOTS after that reading) is set
	 * when the reading is folded, and an end of that region that finds
	 * it here is the end of the only region open, with no reading since
	 * its begin (pm_clear_fast.c).
	 */
	const void *pend_alone;
	/*
	 * The RDPMC selectors (the pages' index - 1) of SLOTS and
	 * PERF_METRICS at the last metrics-clear reading, which stand while
	 * the page's lock is as that reading left it (the kernel writes
	 * index only in perf_event_update_userpage, which bumps lock).
	 */
	uint32_t clear_sel_slots, clear_sel_metrics;
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
	 * Kept by that source too, for the guarded fast paths
	 * (td_pm_clear_guarded_fast_begin/end and the source's own): a
	 * reading stands without the source's own fold at a reading while
	 * *quiet_lock is quiet_want, one load and one compare inline (the
	 * hybrid source's E-core group has not run since its values were
	 * cached: hybrid.c td_hybrid_quiet_update); quiet_not, a value never
	 * quiet_want, for quiet_lock to point at while no cache stands.
	 */
	const uint32_t *quiet_lock;
	uint32_t quiet_want, quiet_not;
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

/*
 * How many times the kernel writes an x86 event's user page
 * (perf_event_update_userpage, lock + 2 each) for one context switch:
 * once at the schedule-out (x86_pmu_del, after x86_pmu_stop) and twice at
 * the schedule-in, when x86_pmu_enable starts the event with
 * x86_pmu_start(PERF_EF_RELOAD): its set_period writes the page
 * (icl_set_topdown_event_period for SLOTS and the metrics, after
 * restoring SLOTS and PERF_METRICS; x86_perf_event_set_period for an
 * ordinary counter), and x86_pmu_start writes it again
 * (arch/x86/events/core.c, arch/x86/events/intel/core.c).
 */
#define TD_PAGE_WRITES_SCHED_OUT 1
#define TD_PAGE_WRITES_SCHED_IN 2

/*
 * At most how many schedule-ins (restores of SLOTS and PERF_METRICS) the
 * page's lock moving from lock0 to lock1 can hold.  Each schedule-in
 * writes the page TD_PAGE_WRITES_SCHED_IN times, and between two of them
 * the group was scheduled out, one more write: k restores take at least
 * 2k + (k - 1) = 3k - 1 writes, so k <= (writes + 1) / 3, whether the
 * span begins with the group in (a reading) or out (a read(2) of a
 * switched-out group), and whether it ends in or out.  Every other
 * writer only adds writes, never a restore, so this stays an upper
 * bound: IOC_RESET (_perf_event_reset, one), IOC_ENABLE (a schedule-in,
 * counted as one), a group that did not fit (merge_sched_in's
 * group_update_userpage, one), the SLOTS overflow PMI
 * (intel_pmu_save_and_restart's set_period, one); read(2) and the
 * PERF_METRICS overflow PMI write none.  An odd lock (a poisoned last
 * lock, or a write in progress) counts as one more write.
 */
static inline uint32_t td_pm_restores(uint32_t lock0, uint32_t lock1)
{
	uint32_t writes = (lock1 - lock0 + 1) / 2;

	return (writes + TD_PAGE_WRITES_SCHED_OUT) /
	       (TD_PAGE_WRITES_SCHED_OUT + TD_PAGE_WRITES_SCHED_IN);
}

/*
 * A record of readings the fast end writes (pm_fast.c end_to_record):
 * slots and qerr the raw SLOTS at end and begin, cat[0] and cat[1]
 * PERF_METRICS at begin and end, and with TD_RECORD_UOP cat[2] the
 * region's INT_MISC.UOP_DROPPING count, which finishing the record moves
 * as a result's end does (pm_decode.h td_uop_move); reserved[0] names
 * td_pm_readings_finisher (pm_record.c), which makes its counts.
 */
#define TD_RECORD_UOP (1u << 29)
/* With TD_RECORD_UOP: cat[3] the region's INT_MISC.CLEARS_COUNT count,
 * moved after the drop's (pm_decode.h td_clears_move). */
#define TD_RECORD_CLEARS (1u << 28)
_Static_assert(((TD_RECORD_UOP | TD_RECORD_CLEARS) &
		(TD_RECORD_READINGS | TD_RECORD_VALUES | TD_RESULT_L2 |
		 TD_RESULT_FE_UNREFINED | TD_RESULT_BE_UNREFINED)) == 0,
	       "a source's own record bits");
extern TD_HIDDEN const struct td_record_finisher td_pm_readings_finisher;

/* INT_MISC.CLEARS_COUNT's count now, as td_pm_uop_now. */
static inline uint64_t td_pm_clears_now(const struct td *td)
{
	const struct td_pm_uop *u = &td_pm_of(td)->pm.uop;

	return u->be_offset + td_rdpmc(u->be_sel);
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
/* pm_clear_fast.c: a pending reading that no fast begin owns. */
#define TD_PM_PEND_KEPT ((const void *)&td_pm_pend_kept)
TD_HIDDEN extern const char td_pm_pend_kept;
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
/* The same where res is not NULL: one test less. */
TD_HIDDEN int td_pm_end_reading_result(struct td *td, struct td_region_priv *p,
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
 * paths use.  INT_MISC.CLEARS_COUNT the same way, where perf's backend
 * bound adds it (TD_RESULT_BE_UNREFINED, s->aux2).
 */
TD_HIDDEN void td_pm_uop_open(struct td *td, const struct td_open_req *req);
TD_HIDDEN void td_pm_uop_close(struct td *td);
TD_HIDDEN void td_pm_uop_sample(struct td *td, struct td_sample *s);
/* The result flags of a delta of this handle (TD_RESULT_FE_UNREFINED,
 * TD_RESULT_BE_UNREFINED or 0), its categories refined where they are
 * not set (pm_decode.h td_uop_move, td_clears_move). */
TD_HIDDEN unsigned td_pm_uop_delta(const struct td *td, struct td_delta *d);
/* The kernel's caps/pmu_name of the core PMU, "" when it does not say. */
TD_HIDDEN void td_pm_pmu_name(const struct td *td, char *out, size_t len);

#endif
