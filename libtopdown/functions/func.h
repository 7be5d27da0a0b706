/* SPDX-License-Identifier: MIT */
/*
 * libtopdown-functions, internal.  Per thread: a calling-context tree of
 * nodes (one per call path: parent node and function address), a shadow
 * stack of the calls in progress (a libtopdown region each) and a buffer
 * of records, one per ended call, folded into the nodes' counts when it
 * fills.  Nothing here is shared between threads but the registry of
 * thread states (fn_reg_lock) and the symbol cache (names.c).
 */
#ifndef TD_FUNC_H
#define TD_FUNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "topdown_functions.h"

#define FN_HIDDEN __attribute__((visibility("hidden")))
#define FN_NOINSTR __attribute__((no_instrument_function))

#define FN_NONE UINT32_MAX     /* no node: the root of every path */

/* Counts, summed over calls: slots and category slots x 255 (td_record). */
struct fn_counts {
	int64_t slots;
	int64_t cat[TD_CAT_COUNT];
	uint64_t qerr;                /* bound, 1/255-slot units: adds up */
	unsigned flags;               /* TD_RESULT_L2, _CYCLES, _L2_FE_BE */
	bool l1_call;                 /* a call without level 2 */
};

/* One call path on one thread. */
struct fn_node {
	void *fn;
	uint32_t parent;              /* FN_NONE at a path's root */
	uint32_t flags;               /* FN_NODE_* */
	void *child_fn;               /* the last measured callee: a loop's */
	struct fn_node *child;        /* calls find its node without hashing */
	uint64_t calls;               /* every call (counted at entry) */
	uint64_t measured;            /* calls folded with counts */
	uint64_t unreliable;          /* records flagged unreliable */
	uint64_t abandoned;           /* calls left by longjmp, an exception
					 or thread exit without their exit */
	uint64_t tainted;             /* calls whose self may hold a callee's
					 unreliable or abandoned counts */
	double min[TD_L1_COUNT], max[TD_L1_COUNT]; /* per call, measured */
	struct fn_counts incl, self;
};

#define FN_NODE_EXCLUDED (1u << 0)  /* the filter: counted, not measured */
#define FN_NODE_SKIP     (1u << 1)  /* under TOPDOWN_FUNCTIONS_MIN_SLOTS */

/* What could not be attributed, per thread (reported as such). */
enum fn_lost {
	FN_LOST_NO_HANDLE,    /* td_open failed: calls counted here only */
	FN_LOST_NODES,        /* the node table was full */
	FN_LOST_DEPTH,        /* deeper than the shadow stack */
	FN_LOST_REENTERED,    /* a hook inside a hook (signal handler) */
	FN_LOST_OTHER_STACK,  /* on a stack not the thread's (sigaltstack,
				 makecontext) */
	FN_LOST_AFTER_EXIT,   /* after the report was written */
	FN_LOST_STRAY_EXIT,   /* an exit matching no call in progress */
	FN_LOST_FAILED_END,   /* td_region_begin/end failed */
	FN_LOST_IN_SIGNAL,    /* a thread's first calls, in a signal handler
				 (its handle waits: opening it allocates) */
	FN_LOST_PENDING,      /* records not folded at report (thread busy) */
	FN_LOST_KINDS
};

struct fn_frame;

struct fn_thread {
	struct td *td;
	struct fn_frame *topf;        /* the innermost call; frames[0], the
					 root, when none; over_mark past the
					 stack's capacity */
	struct fn_frame *limit;       /* past the frames mapped so far */
	uintptr_t stack_lo, stack_size; /* the thread's stack */
	struct fn_node **rec_next;    /* the node of the next record */
	uint32_t rec_left;            /* records until the buffer is full */
	int tid;
	bool busy;                    /* a hook runs (signal handlers) */
	bool failed;                  /* td_open failed: count only */
	bool exited;
	uint32_t deferred;            /* calls while the handle waited */
	uint32_t over;                /* calls past the stack's capacity */
	struct fn_frame *over_top;    /* the innermost frame while over */
	struct fn_frame *frames;      /* the shadow stack, mapped on demand */
	struct fn_node root;          /* the parent of every path's root:
					 its callee cache */
	struct fn_node *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *hash;               /* node index + 1, 0 empty */
	unsigned hash_bits;
	struct td_record *recs;       /* attached to td */
	struct fn_node **rec_node;    /* the node of each record */
	uint32_t cap_recs;
	uint64_t lost[FN_LOST_KINDS];
	pthread_mutex_t lock;         /* the folded counts: owner and report */
	struct fn_thread *next;       /* the registry (fn_reg_lock) */
};

/* Records appended and not folded yet. */
static inline uint32_t fn_pending(const struct fn_thread *t)
{
	return t->cap_recs - t->rec_left;
}

extern FN_HIDDEN pthread_mutex_t fn_reg_lock;
extern FN_HIDDEN struct fn_thread *fn_threads;

/* hooks.c: fold the calling thread's records; end its open calls. */
FN_HIDDEN void fn_fold_self(bool end_open);

/* names.c: the symbol at addr (its start), else "0x..." in buf. */
FN_HIDDEN const char *fn_name(void *addr, char *buf, size_t len);

/* filter.c: the environment's settings (read once). */
struct fn_config {
	uint64_t min_slots;           /* TOPDOWN_FUNCTIONS_MIN_SLOTS */
	uint32_t max_nodes;           /* TOPDOWN_FUNCTIONS_MAX_NODES */
	const char *filter;           /* TOPDOWN_FUNCTIONS_FILTER, or NULL */
};
extern FN_HIDDEN struct fn_config fn_config;
FN_HIDDEN void fn_config_read(void);
FN_HIDDEN bool fn_filter_allows(void *fn);

/* report.c: the report of every thread to f. */
FN_HIDDEN int fn_report_write(FILE *f, enum td_format fmt);

#endif /* TD_FUNC_H */
