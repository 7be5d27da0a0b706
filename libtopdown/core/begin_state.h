/* SPDX-License-Identifier: MIT */
/*
 * What a region keeps from its begin (the private layout of struct
 * td_region) and the hot path's constants, shared by the fast path
 * (region.c) and the slow path (region_slow.c).  Not installed.
 */
#ifndef TD_BEGIN_STATE_H
#define TD_BEGIN_STATE_H

#include "internal.h"

#define TD_RDPMC_SLOTS   ((1u << 30) | 3)
#define TD_RDPMC_METRICS (1u << 29)
/* In a region's copy of snap.resets: the begin could not read. */
#define TD_BEGIN_UNREAD  0x80000000u

/* The private layout of struct td_region (256 bytes, ABI). */
struct td_region_priv {
	const struct td *owner;   /* non-NULL while begun */
	uint64_t key;             /* td->epoch_hi | lock at the copy; 0: none */
	uint64_t slots;           /* raw SLOTS at begin (0 if folded) */
	union {                   /* raw PERF_METRICS at begin */
		uint64_t metrics;
		uint32_t metrics_half[2]; /* x86: little endian */
	};
	uint64_t reset_at;        /* policy threshold for the next begin, or
				     its error side alone after a fast end */
	uint64_t len;             /* slots of its last measured call; 0:
				     unknown */
	struct td_snap snap;      /* td->snap at begin */
};

_Static_assert(sizeof(struct td_region_priv) <= sizeof(struct td_region),
	       "struct td_region too small for its private layout");

static inline struct td_region_priv *priv(struct td_region *r)
{
	return (struct td_region_priv *)(void *)r;
}

/* SLOTS is fixed counter 3, 48 bits wide. */
static inline uint64_t td_join48(uint64_t lo, uint64_t hi)
{
	return (hi << 48 >> 16) | lo; /* bits 32-47 from hi */
}

/* region_slow.c: the slow path of begin and end. */
TD_HIDDEN int td_slow_begin(struct td *td, struct td_region_priv *p);
TD_HIDDEN int td_begin_checked(struct td *td, struct td_region *r);
TD_HIDDEN int td_slow_end(struct td *td, struct td_region *r,
			  struct td_result *res);
/* A fast reading of both registers, with somewhere to go. */
TD_HIDDEN int td_end_with_reading(struct td *td, struct td_region_priv *p,
				  struct td_result *res, uint64_t slots,
				  uint64_t metrics);

/*
 * What the policy learns from a region that ended with a reading: its
 * length (the next begin's error side) and its slots, measured (what the
 * reset budget is a share of).
 */
static inline void td_learn_length(struct td *td, struct td_region_priv *p, uint64_t len)
{
	uint64_t by_err = td_policy_by_err(&td->policy, len);

	p->len = len;
	/* with the budget's threshold joined: one compare at the next begin */
	p->reset_at = by_err > td->policy.budget_at ? by_err
						     : td->policy.budget_at;
	td->policy.recent_len = len;
	td->policy.measured += len;
}

#endif
