/* SPDX-License-Identifier: MIT */
/*
 * The fast path of sources that read ordinary counters one by one (x86's
 * formula table, Arm): what it trusts of each counter's user page, and
 * its operations (counters_fast.c).  Not installed.
 */
#ifndef TD_COUNTERS_FAST_H
#define TD_COUNTERS_FAST_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

/*
 * One open event as its page last described it.  The kernel writes
 * index, offset and pmc_width only inside perf_event_update_userpage,
 * which brackets them with ++lock (kernel/events/core.c), so while the
 * page's lock still reads `lock` they still hold, and the counter that
 * RDPMC (MRS) names is still this event's: a schedule-out rewrites the
 * page (x86_pmu_del; armpmu_del), as do an overflow's new period and
 * PERF_EVENT_IOC_RESET.
 */
struct td_fast_counter {
	const struct perf_event_mmap_page *pc;
	uint64_t lock;      /* pc->lock then; TD_FAST_STALE: not usable
			       (64 bits: loaded with pc in one pair) */
	uint64_t offset;    /* pc->offset then */
	uintptr_t reader;   /* counter index - 1, as arch.h reads it */
	uint32_t shift;     /* 64 - pmc_width: sign extension */
};

#define TD_FAST_ANY_WIDTH 8

/* td_gen_fast.slots_k of a formula that is not linear: no slots_per. */
#define TD_FAST_NOT_LINEAR (TD_GEN_MAX + 1)

/* A lock no settled page holds (the kernel's lock is even at rest). */
#define TD_FAST_STALE 1u

struct td_gen_recipe;
struct td_gen_fast {
	uint64_t diff[8];   /* a fast end's differences from the begin's
			       values, in the model's order (0 where no
			       counter is: counters_fast.c fast_take) */
	struct td_fast_counter c[8]; /* the group's open events, in order */
	uint64_t end[8];    /* a keyed fast end's values, on their way,
			       or a record's differences (open order:
			       counters_fast.c fast_take) */
	uint64_t seen[2][8]; /* the last whole reading's values, fast or
				slow, open order (the guard's base), and
				the reading under way's (counters_fast.c) */
	uint64_t *last;     /* the seen of the last whole reading */
	uintptr_t flip;     /* the seens' addresses xor'ed: last ^ flip is
			       the other, the reading under way's */
	uint8_t sel;        /* nr, + TD_FAST_ANY_WIDTH unless every counter
			       is as wide as most are (x86 48 bits, Arm 64:
			       counters_fast.c fast_sel): the reads' copy */
	bool refreshed;     /* the view was taken: *last holds the
			       last accepted values (td_gen_fast_last) */
	bool linear;        /* the counts of a difference of values are the
			       difference of their counts (counters_fast.c) */
	uint64_t slots_per[8]; /* linear: the slots one event of each adds */
	uint8_t slots_k;    /* the one event whose slots_per is not 0; 8:
			       several; TD_FAST_NOT_LINEAR: !linear */
	/* what finishes the records the fast end writes (counters_fast.c) */
	const struct td_gen_recipe *recipe;
};

struct td;
struct td_gen;
struct td_sample;
struct td_counts;
struct td_result;
struct td_region_priv;
/* counters_fast.c: set up at open, refreshed by every slow reading. */
TD_HIDDEN void td_gen_fast_setup(struct td *td);
TD_HIDDEN void td_gen_fast_refresh(struct td_gen *g, const uint64_t *open);
/* counters_fast.c: the slow path's guard base from the fast readings. */
TD_HIDDEN void td_gen_fast_last(struct td_gen *g);
/* counters_fast.c: the source operations (source.h) of this fast path. */
TD_HIDDEN int td_gen_fast_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_gen_fast_end(struct td *td, struct td_region_priv *p,
			      struct td_result *res);
/*
 * source.h fast_end_first: the end of this thread's fast handle; on x86
 * the leader read before its page's lock is checked, the Arm source's
 * (_locked) after, wherever it runs (counters_fast.c).
 */
struct td_region;
TD_HIDDEN int td_gen_fast_end_first(struct td *td, struct td_region *r,
				    struct td_result *res);
TD_HIDDEN int td_gen_fast_end_first_locked(struct td *td, struct td_region *r,
					   struct td_result *res);
TD_HIDDEN bool td_gen_begin_counts(const struct td *td, const uint64_t *values,
				   const struct td_sample *end,
				   struct td_counts *c);

#endif
