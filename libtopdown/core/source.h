/* SPDX-License-Identifier: MIT */
/*
 * The TopDown source interface: everything that varies per CPU family
 * sits behind one table of operations, chosen once by td_open.  Generic
 * code (the region path, records, named totals, td_query) calls these and
 * never names a CPU family.  Sources:
 *   td_source_perf_metrics  Intel SLOTS + PERF_METRICS (metrics-clear mode
 *                           and the read(2) path are its own modes);
 *   td_source_hybrid        Intel hybrid: PERF_METRICS on the P-cores
 *                           composed with an ordinary-counter group on the
 *                           E-cores' PMU;
 *   td_source_counters      x86 ordinary counters: the formula table
 *                           (V4.5, Atom V1/V2, AMD Zen level 1, Zen
 *                           multiplexed level 2);
 *   td_source_arm           Arm PMUv3: Arm's formulas, N3/V3 level 2.
 * Not installed.
 */
#ifndef TD_SOURCE_H
#define TD_SOURCE_H

#include "internal.h"

struct td_region_priv;

/* What td_open found before choosing the source: sources.c's own. */
struct td_found;

/* What td_open asks of a source. */
struct td_open_req {
	const struct td_found *found;
	bool include_kernel;  /* TD_OPT_INCLUDE_KERNEL */
	bool want_rdpmc;      /* not TD_OPT_NO_RDPMC */
	bool l2_multiplex;    /* TD_OPT_L2_MULTIPLEX */
	bool metrics_clear;   /* neither TD_OPT_NO_METRICS_CLEAR nor _NO_RDPMC */
	bool memory;          /* TD_OPT_MEMORY or TOPDOWN_MEMORY=1 */
};

struct td_source_ops {
	const char *name;
	/*
	 * The size of the source's handle, which embeds struct td at offset
	 * 0 and holds the source's own state after it (as perf's struct
	 * evsel embeds struct perf_evsel): td_open allocates this much.
	 */
	size_t handle_size;
	/*
	 * Open the source's counters for td (its PMU already discovered),
	 * within the counters the PMU has free; sets td->path and, where
	 * begin/end may RDPMC fixed selectors unchecked, td->fast_capable.
	 * Returns 0 or a negative errno (td_open's list).
	 */
	int (*open)(struct td *td, const struct td_open_req *req);
	void (*close)(struct td *td);
	/* A reading on the slow path, as monotonic counts. */
	int (*sample)(struct td *td, struct td_sample *s);
	/*
	 * Fold the reading s into the handle's counts, zero the hardware
	 * (one counted PERF_EVENT_IOC_RESET) and read again into s; returns
	 * 1 when the reset stands, 0 when none was made or it was undone,
	 * a negative errno.  NULL where counts are exact and nothing needs
	 * resetting.
	 */
	int (*reset)(struct td *td, struct td_sample *s);
	/*
	 * A region's delta b - a in category slots x 255, cut to what the
	 * region measured (level 2 zeroed where it has none); returns the
	 * result flags the source adds (TD_RESULT_L2 where it measured level
	 * 2 for this delta, _CYCLES, _MULTIPLEXED, _L2_FE_BE, _UNRELIABLE,
	 * _SHORT).
	 */
	unsigned (*delta)(const struct td *td, const struct td_counts *a,
			  const struct td_counts *b, struct td_delta *d);
	/* Could the delta have come from counting without an unseen reset? */
	bool (*consistent)(const struct td *td, const struct td_delta *d);
	/* td_info's source-specific part: levels, flags, uarch. */
	void (*info)(const struct td *td, struct td_info *info);
	/*
	 * Named totals: turn the summed deltas of every call (d) and the
	 * summed raw level-2 data of the source (raw, TD_NR_L2RAW words, as
	 * its delta left them in struct td_delta.l2raw) into the totals'
	 * delta; returns result flags.  NULL: nothing to add.
	 */
	unsigned (*fold_named)(const uint64_t *raw, struct td_delta *d);
	/*
	 * Called once by td_open when the handle is complete (its policy,
	 * its owner): PERF_METRICS decides there whether begin/end may take
	 * the fixed-selector path the entry points inline (pm_fast.c), the
	 * hybrid source whether its own fast path may serve (td->src_fast).
	 * NULL: nothing to do.
	 */
	void (*ready)(struct td *td);
	/*
	 * A fast path of the source's own (PERF_METRICS' fixed selectors
	 * are read by pm_fast.c's path instead): ordinary counters read one
	 * by one, the hybrid source's guarded reads; used while
	 * td->src_fast.  fast_begin and fast_end do a
	 * region's begin and end on the opening thread (the owner checks
	 * made) and fall back to td_slow_begin / td_slow_end_read.  With
	 * begin_counts a region's begin is the counter values it read
	 * (struct td_sample values), which begin_counts turns into the
	 * counts its delta takes; it returns false when the values cannot
	 * have preceded the end's exact ones (the region is then flagged).
	 * Without it the begin is PERF_METRICS' raw reading (the hybrid
	 * source's fast path).  NULL: none.
	 */
	int (*fast_begin)(struct td *td, struct td_region_priv *p);
	int (*fast_end)(struct td *td, struct td_region_priv *p,
			struct td_result *res);
	bool (*begin_counts)(const struct td *td, const uint64_t *values,
			     const struct td_sample *end,
			     struct td_counts *c);
	/*
	 * What the source measures beyond levels 1 and 2 (the memory
	 * drill-down, TD_OPT_MEMORY): from the region's delta into res,
	 * after res's levels are decoded, on the general route only (a
	 * handle that measures more takes no fast path).  NULL: nothing.
	 */
	void (*decode_more)(const struct td *td, const struct td_delta *d,
			    struct td_result *res);
	/* The same for a region's record (its reserved words).  NULL:
	 * nothing. */
	void (*record_more)(const struct td *td, const struct td_delta *d,
			    struct td_record *rec);
};

extern TD_HIDDEN const struct td_source_ops td_source_perf_metrics;
extern TD_HIDDEN const struct td_source_ops td_source_hybrid;
extern TD_HIDDEN const struct td_source_ops td_source_counters;
extern TD_HIDDEN const struct td_source_ops td_source_arm;
/* The first two with the memory drill-down (TD_OPT_MEMORY): their open
 * puts the handle on these. */
extern TD_HIDDEN const struct td_source_ops td_source_perf_metrics_memory;
extern TD_HIDDEN const struct td_source_ops td_source_hybrid_memory;

/*
 * sources.c: td_open's handle, of the source that serves this machine.
 * Finds the core PMU and chooses its source, allocates a handle of that
 * source's size, lets prepare set up the rest (a negative errno stops
 * there, before any failure of the discovery is returned), then opens
 * the source with what the discovery found.  *out: the handle, also when
 * this fails (td_close frees it), NULL only when out of memory.
 */
TD_HIDDEN int td_source_open(const struct td_options *o,
			     int (*prepare)(struct td *td,
					    const struct td_options *o,
					    void *ctx),
			     void *ctx, struct td **out);

#endif
