/* SPDX-License-Identifier: MIT */
/*
 * The TopDown source interface: everything that varies per CPU family
 * sits behind one table of operations, chosen once by td_open.  Generic
 * code (the region path, records, named totals, td_query) calls these and
 * never names a CPU family.  The sources are listed in sources/sources.h.
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
	bool uop_dropping;    /* not TD_OPT_FE_UNREFINED */
	bool int_misc_clears; /* neither TD_OPT_FE_UNREFINED nor _BE_ */
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
	 * the fast path the entry points inline may read its counters
	 * unchecked on every CPU, td->fast_capable.
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
	 * _SHORT).  The begin's counts are a plus its raw reading as the
	 * region kept it (struct td_sample raw_slots and raw; both 0 where
	 * the reading was folded into a), which the source adds itself:
	 * only it knows what raw holds, and its fast path keeps the sum
	 * inline, with no call more.  d->qerr comes in 0: an error of the
	 * source's own (1/255-slot units) goes there, and the general
	 * route adds the readings' quantisation scale to it.  A source with
	 * further reading words (struct td nr_more) takes no fast path, so
	 * that a and b are always a region's begin and end there
	 * (begin_state.h td_begin_more).
	 */
	unsigned (*delta)(const struct td *td, const struct td_counts *a,
			  uint64_t raw_slots, uint64_t raw,
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
	 * With fold_named: which of a call's raw level-2 words (as above) is
	 * 0 when its level 1 did not count at all (its group multiplexed
	 * out for the whole call).  Such a call adds its raw words to the
	 * totals and nothing else: it is unsampled, not unreliable.
	 */
	unsigned named_counted_word;
	/*
	 * Called once by td_open when the handle is complete (its policy,
	 * its owner): the source decides there whether begin/end may take
	 * the fast path the entry points inline (td->fast) or its own
	 * (td->src_fast).  NULL: nothing to do.
	 */
	void (*ready)(struct td *td);
	/*
	 * A fast path of the source's own, besides the one the entry points
	 * inline (counters read one by one, guarded reads); used while
	 * td->src_fast.  fast_begin and fast_end do a
	 * region's begin and end on the opening thread (the owner checks
	 * made) and fall back to td_slow_begin / td_slow_end_read.  With
	 * begin_counts a region's begin is the counter values it read
	 * (struct td_sample values), which begin_counts turns into the
	 * counts its delta takes; it returns false when the values cannot
	 * have preceded the end's exact ones (the region is then flagged).
	 * Without it the begin is the source's raw reading (raw SLOTS and
	 * raw, as struct td_sample has them).  NULL: none.
	 */
	int (*fast_begin)(struct td *td, struct td_region_priv *p);
	int (*fast_end)(struct td *td, struct td_region_priv *p,
			struct td_result *res);
	/*
	 * Optional: where the entry point sends this thread's fast handle
	 * (td_fast.src_td) at once, the region not yet checked (NULL, not
	 * begun, begun on another handle): a fast end that reads before it
	 * checks, so that the checks are not charged to the region, and
	 * then, should they fail, discards the reading and returns
	 * td_end_checked's answer.  NULL: the checks, then fast_end.
	 */
	int (*fast_end_first)(struct td *td, struct td_region *r,
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

/*
 * sources/messages.c: td_strerror's text for err where it depends on the
 * sources (their kernels, descriptors, counters), else NULL; for -ENOSYS
 * not a line but why no source serves the CPU the line names.
 */
TD_HIDDEN const char *td_source_message(int err);

#endif
