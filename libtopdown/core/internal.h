/* SPDX-License-Identifier: MIT */
/* Private declarations shared by the library's files.  Not installed. */
#ifndef TD_INTERNAL_H
#define TD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "topdown.h"
#include "kernel.h"

/*
 * Counts a snapshot holds: a delta's categories, or up to 16 raw events
 * where a source applies its formula to a region's deltas.
 */
#define TD_NR_COUNTS    16
/*
 * A multiplexing source's raw words for named totals (struct td_delta
 * l2raw): what a region passes besides its record, summed over the calls
 * and folded by the source (source.h, fold_named, named_counted_word).
 * Their layout is the source's own, but for the last word: the source's
 * tag of what the words are for (the same in every call), which named
 * totals keep rather than sum.
 */
#define TD_NR_L2RAW     21
#define TD_L2RAW_TAG    (TD_NR_L2RAW - 1)
/*
 * A reading's words beyond struct td_counts, for a source whose reading
 * holds more than its counts have room for (level-2 events multiplexed
 * beside level 1's): the source says how many it uses (struct td
 * nr_more, 0 for most); a region keeps them from its begin (struct
 * td_region_priv more) and the source's delta reads them beside the
 * counts it is given (begin_state.h td_begin_more, td_sample_more).
 * Their layout is the source's own.
 */
#define TD_NR_MORE      7

/*
 * The categories of a delta (struct td_delta cat[]), level 1 then the
 * measured child of each: retiring, bad spec, fe bound, be bound, heavy
 * ops, br mispredict, fetch lat, mem bound.
 */
enum td_metric_byte {
	TD_M_RETIRING, TD_M_BAD_SPEC, TD_M_FE_BOUND, TD_M_BE_BOUND,
	TD_M_HEAVY_OPS, TD_M_BR_MISPREDICT, TD_M_FETCH_LAT, TD_M_MEM_BOUND
};

/*
 * SMT contention slots (TD_CAT_SMT_CONTENTION) follow the eight
 * categories, so that level 2 and SMT contention can be reported
 * together; 0 where the source does not measure them.
 */
#define TD_M_SMT  TD_NR_METRICS
#define TD_NR_CATS (TD_NR_METRICS + 1) /* categories a delta reports */

/*
 * Monotonic counters kept in user space, in the handle's source's units:
 * only its delta operation reads them (source.h).  Every reset the
 * library issues folds the last reading into them, so the difference of
 * two snapshots is right across any number of resets.  Each source lays
 * out the entries it uses in its own header (sources/).  A delta's cat[]
 * is the result's categories (enum td_metric_byte, then TD_M_SMT), in
 * slots x 255.
 */
struct td_counts {
	uint64_t slots;
	uint64_t cat[TD_NR_COUNTS];
};

/*
 * A formula's categories all zero before it sets its own (it sets slots
 * itself), in eight 16-byte stores: a memset of them becomes a rep stos,
 * whose start costs more than the stores on every fast end with a
 * result (and which bench/overhead's single steps count per word).
 */
typedef uint64_t td_u64x2 __attribute__((vector_size(16), may_alias,
					 aligned(8)));
static inline void td_counts_zero_cats(struct td_counts *c)
{
	_Static_assert(TD_NR_COUNTS == 16, "eight pairs");
	td_u64x2 *w = (td_u64x2 *)(void *)c->cat;

	w[0] = w[1] = w[2] = w[3] = (td_u64x2){ 0, 0 };
	w[4] = w[5] = w[6] = w[7] = (td_u64x2){ 0, 0 };
}

/*
 * The difference of two snapshots.  Category deltas are signed: a small
 * category's 8-bit estimate can shrink between readings.  qerr is the
 * region's quantisation scale in 1/255-slot units: every reading that
 * entered it may be off by its raw SLOTS / 255 in every category; plus
 * any error the source's delta adds (source.h delta: slots its level 2
 * could not see).
 */
struct td_delta {
	int64_t slots;
	int64_t cat[TD_NR_COUNTS];
	uint64_t qerr;
	/*
	 * The source's auxiliary count over the region (struct td_sample
	 * aux: end's less begin's), set before its delta operation;
	 * TD_AUX_LOST where either reading has none.
	 */
	int64_t aux;
	int64_t aux2;         /* the same of its second such count */
	/* TD_OPT_L2_MULTIPLEX only: the source's raw level-2 data (the
	 * level-2 events' deltas, whichever groups counted), for named
	 * totals (named.c, the source's fold_named) */
	uint64_t l2raw[TD_NR_L2RAW];
};

/*
 * Counter values a region's begin keeps where the source reads its
 * counters one by one on a fast path of its own (source.h begin_counts).
 */
#define TD_NR_VALUES 8

/* struct td_sample aux: no count; struct td_delta aux: no difference. */
#define TD_AUX_NONE UINT64_MAX
#define TD_AUX_LOST INT64_MIN

/* One reading of the counters, converted to monotonic counts. */
struct td_sample {
	struct td_counts c;
	uint64_t raw_slots;   /* SLOTS since the last reset: the 8-bit error scale */
	uint64_t raw;         /* the source's raw word read with raw_slots,
				 which only the source interprets (a
				 region's begin keeps both: begin_state.h) */
	uint64_t raw_at_last; /* !valid: the source's raw SLOTS at its last
				 reading, past snap.base (region_slow.c
				 sample_at); set by sources that reset */
	uint64_t qerr_base;   /* td->snap.qerr_base after this reading */
	uint64_t unsched;     /* time_enabled - time_running, ns */
	uint64_t qself;       /* this reading's own error scale when it is
				 not raw_slots (x255 units) */
	uint64_t aux;         /* a monotonic count the source reads with
				 its reading, which only it interprets (an
				 event refining its categories);
				 TD_AUX_NONE where it has none or could not */
	uint64_t aux2;        /* a second such count, the same way */
	bool valid;           /* false: the group was not counting */
	/*
	 * Ordinary counters on their fast path: the counter values the
	 * counts came from, in the source's order (what a region's begin
	 * keeps: begin_state.h).
	 */
	uint64_t values[TD_NR_VALUES];
	/* The first td->nr_more: the source's further words (TD_NR_MORE). */
	uint64_t more[TD_NR_MORE];
};

/*
 * The part of a handle's state a region needs from its begin.  It changes
 * only on the slow path (folds, schedule-ins, untrusted events), so a
 * region copies it only when it changed since the region's previous begin:
 * td->epoch_hi names its version (see the sources' fast paths).
 *
 * resets and untrusted are counters a region compares between its begin
 * and end: the library's own resets (31 bits: a region spanning 2^31 of
 * them reports the count modulo that; bit 31 is free: TD_BEGIN_UNREAD) and
 * untrusted events (SLOTS seen going backwards, the group found
 * descheduled or unreadable: any change flags the region).
 */
struct td_snap {
	struct td_counts base;   /* folded counters (see struct td_counts) */
	uint64_t qerr_base;      /* sum of raw SLOTS at every fold: error scale */
	uint32_t resets;
	uint32_t untrusted;
};

#define TD_SNAP_RESETS_MASK 0x7fffffffu

/*
 * The accuracy contract's domain: regions of at least this many slots are
 * within the error target.  A region whose length is not known yet is
 * expected to last this long (policy.c).
 */
#define TD_POLICY_DOMAIN 1000000u

struct td_policy {
	enum td_reset_policy kind;
	bool track;           /* the source resets: open regions are counted */
	double err_x255;      /* err_target * 255, to compare without dividing */
	double budget;
	uint64_t cost;        /* slots charged per reset */
	uint64_t k_q16;       /* error side: reset when S > len x k (Q16) */
	/*
	 * Budget side: resets may cost at most budget x the measured slots,
	 * the slots during which at least one region of the handle was open
	 * (counted as they accrue: an inner region's reset is paid by its
	 * outer one).  credit is budget x measured minus cost x resets,
	 * capped at one reset's cost so that a quiet stretch cannot pay for
	 * a burst; it is brought up to date only on the slow path.
	 */
	/*
	 * The measured slots of the stretches closed, less open_since while
	 * one is open (wrapping arithmetic): a begin that opens a stretch
	 * subtracts where it starts, the end that closes it adds where it
	 * ends, one instruction each (policy.c measured_until adds now back
	 * while open).
	 */
	uint64_t measured_less;
	uint64_t measured_seen; /* measured when credit was last updated */
	/*
	 * Regions begun and not ended, less one (-1: none open), so that
	 * the begin's increment sets the flags its test needs (0: it opened
	 * a stretch) and the end's decrement too (negative: it closed one).
	 */
	int64_t open_less1;
	uint64_t open_since;  /* folded SLOTS when the stretch opened */
	double credit;
	/*
	 * Raw SLOTS below which the budget cannot allow a reset for a
	 * region that earns nothing: measured slots grow at most as fast as
	 * SLOTS, so credit cannot reach the cost before SLOTS has grown by
	 * what is missing / budget.  A region expected to last len slots
	 * earns budget x len, so the budget may pay for its reset only once
	 * SLOTS + len > budget_at.  budget_at only grows between two resets
	 * (credit grows no faster than it assumes), so the fast begin, which
	 * compares against it, goes to the slow path wherever the slow path
	 * could reset.  Folded SLOTS can grow with raw SLOTS standing still
	 * or restarting from 0 (a foreign reset folded, the E-cores' counts
	 * added): budget_at comes down by what was folded so
	 * (td_policy_folded), the threshold in folded SLOTS unchanged.
	 */
	uint64_t budget_at;
};

/*
 * The policy's error side as a threshold on raw SLOTS at a begin
 * (policy.c): from len, the coming region's expected slots, a shift and
 * a multiply, no division.  A region is expected to last no longer than
 * the domain, so that one longer before keeps the target if it shrinks.
 */
static inline uint64_t td_policy_by_err(const struct td_policy *p,
					uint64_t len)
{
	if (len > TD_POLICY_DOMAIN)
		len = TD_POLICY_DOMAIN;
	return (len >> 16) * p->k_q16;
}

/*
 * A region began at folded SLOTS at: the stretch with a region open
 * starts there, if none was.
 */
static inline void td_policy_open(struct td_policy *p, uint64_t at)
{
	if (TD_LIKELY(++p->open_less1 == 0)) { /* most regions nest in none */
		p->open_since = at;
		p->measured_less -= at;
	}
}

/* A region ended at folded SLOTS at: the stretch ends if it was the last. */
static inline void td_policy_close(struct td_policy *p, uint64_t at)
{
	if (TD_LIKELY(--p->open_less1 < 0))
		p->measured_less += at;
}

/*
 * A record that holds a region's boundary readings (or the differences
 * of its counter values), written raw by a source's fast end and turned
 * into counts by the struct td_record_finisher its reserved[0] names
 * (record.c calls it).  A private flag bit, never in a finished record.
 */
#define TD_RECORD_READINGS (1u << 31)
/*
 * With TD_RECORD_READINGS: cat[] holds the differences of the source's
 * counter values (not two readings).  Private too; bits 29 down to 10
 * of a record of readings are its source's own, for its finisher.
 */
#define TD_RECORD_VALUES (1u << 30)

/*
 * What finishes a TD_RECORD_READINGS record: immutable and never freed, so
 * that a record copied out of its buffer while attached decodes after
 * its handle is closed (td_record_decode is pure: it may outlive td).
 * A source embeds it first in the decoding parameters it keeps.
 */
struct td_record_finisher {
	void (*finish)(const struct td_record_finisher *f,
		       struct td_record *rec);
};

/*
 * A record of a region with the memory drill-down (TD_RESULT_MEMORY)
 * keeps in its reserved words how memory bound splits over the nodes:
 * each node's part of it (enum td_mem order, parts summing to 1) as a
 * 32-bit fraction, two to a word; node i's slots are then its part of
 * cat[TD_CAT_MEM_BOUND].
 */
#define TD_MEM_PART_ONE 4294967295.0
static inline void td_mem_parts_pack(const double *part, uint64_t *w)
{
	for (unsigned i = 0; i < TD_MEM_COUNT; i++) {
		double p = part[i] < 0 ? 0 : part[i] > 1 ? 1 : part[i];
		uint64_t v = (uint64_t)(p * TD_MEM_PART_ONE + 0.5);

		w[i / 2] |= v << (32 * (i % 2));
	}
}

static inline void td_mem_parts_unpack(const uint64_t *w, double *part)
{
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		part[i] = (double)((w[i / 2] >> (32 * (i % 2))) & 0xffffffffu) /
			  TD_MEM_PART_ONE;
}

/*
 * The memory bound of a record (or of summed records) with
 * TD_RESULT_MEMORY: level 2's where it has TD_RESULT_L2, else the one the
 * drill-down put in cat[TD_CAT_MEM_BOUND] (Ice Lake, pm_memory.c), as a
 * share of level 1's sum as td_decode takes it.
 */
static inline double td_mem_bound_of(const int64_t *cat)
{
	int64_t sum = cat[TD_CAT_RETIRING] + cat[TD_CAT_BAD_SPEC] +
		      cat[TD_CAT_FE_BOUND] + cat[TD_CAT_BE_BOUND] +
		      cat[TD_CAT_SMT_CONTENTION];
	double f = sum > 0 ? (double)cat[TD_CAT_MEM_BOUND] / (double)sum : 0;

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* Where td_region_end sends records (result.c td_sink_put). */
struct td_sink {
	struct td_record *buf;   /* attached buffer, or NULL */
	struct td_record *next, *end; /* the next record to write, buf + cap */
	uint64_t dropped;
	struct td_named *pending; /* the named region td_named_end is ending */
	unsigned readings_flags;  /* a record of readings: TD_RECORD_READINGS,
				     TD_RESULT_L2 where the PMU has level 2 */
	/* where its record goes: named.c's totals (set with pending) */
	void (*to_named)(struct td_named *n, const struct td_record *rec,
			 const uint64_t *l2raw);
};

/* TOPDOWN_REPORT / TOPDOWN_FORMAT: env_report.c. */
struct td_env_report {
	char *path;              /* NULL: no report; "stderr" or a file */
	enum td_format format;
	int view;                /* the table's: enum td_table_view (output.h) */
	char *bad_format;        /* TOPDOWN_FORMAT not accepted, or NULL */
	bool listed;             /* on the process's list of open handles */
	int pid, tid;            /* the opening process and thread */
	char thread[48];         /* the report's thread column: tid[:name] */
	struct td *next;         /* list of handles that will report */
};

struct td_named_tab;
struct td_source_ops;

/*
 * The structure of type that holds member at ptr: each source's handle
 * embeds struct td (as perf's struct evsel embeds struct perf_evsel,
 * tools/perf/util/evsel.h) and reaches its own state through this.
 */
#define td_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* A layer's part in a handle's life (td_handle_open); any may be NULL. */
struct td_handle_hooks {
	/* before the source opens; a negative errno fails td_open */
	int (*open)(struct td *td);
	/* td_open succeeded: the handle is complete */
	void (*opened)(struct td *td);
	/* first thing in td_close, also of a td_open that failed */
	void (*close)(struct td *td);
};

struct td_region_priv;
struct td {
	/* The TopDown source (source.h), chosen by td_open. */
	const struct td_source_ops *src;
	unsigned levels;         /* td_query's levels, from the source */
	unsigned nr_more;        /* the source's reading words beyond its
				    counts (TD_NR_MORE), set by its open */
	struct td_pmu pmu;
	enum td_path path;
	int leader_fd;
	size_t page_size;

	/* Folded state, what regions copy (see struct td_snap). */
	struct td_snap snap;
	/*
	 * Version of snap in bits 32-63 (a process-wide counter, so that a
	 * region used with two handles never mistakes one's state for the
	 * other's); a region's key is epoch_hi | the page lock it saw.
	 */
	uint64_t epoch_hi;
	/* What a fast end expects to find in the page's lock (see
	   td_end_key_refresh). */
	uint64_t end_key;
	uint64_t last_unsched;   /* time_enabled - time_running at the
				    last reading */
	uint32_t last_lock;      /* the source's page lock at its last slow
				    reading: part of a region's key */
	bool fast_capable;       /* the source: the counters the entry
				    points' inlined fast path reads exist
				    on every CPU the thread may run on */
	bool fast;               /* that path may read them unchecked */
	bool src_fast;           /* begin/end may take the source's own fast
				    path (source.h fast_begin) */
	/*
	 * Where the entry point (td_region_end) sends this thread's fast
	 * handle: the source's fast_end_first, else the checks and then
	 * src_end, its fast_end (kept here: one load less than through
	 * src).  Set at open; the source may point it and src_begin at a
	 * copy of its fast path once it has learnt more of its counters.
	 */
	int (*end_entry)(struct td *td, struct td_region *r,
			 struct td_result *res);
	/* The source's fast_begin, kept here likewise. */
	int (*src_begin)(struct td *td, struct td_region_priv *p);
	int (*src_end)(struct td *td, struct td_region_priv *p,
		       struct td_result *res);
	uint64_t foreign_resets; /* SLOTS went backwards: someone else reset */
	uint64_t resets;         /* IOC_RESETs the library issued */
	uint64_t untrusted;      /* foreign resets, deschedulings, unreadable */

	struct td_policy policy;


	struct td_sink sink;
	struct td_named_tab *named; /* its named regions' slots: named.c */
	struct td_env_report env;
	const struct td_handle_hooks *hooks; /* of td_handle_open */

	/* owner.c: the opening thread and process (checked in begin/end). */
	const void *owner;
	unsigned long fork_gen;
	int fast_life;           /* owner.c: who frees a fast handle */
	/*
	 * A source's own state follows, in the handle of that source's type
	 * that embeds this one (struct td_source_ops handle_size).
	 */
};

/* owner.c: thread and fork checks of the hot path. */
extern TD_HIDDEN unsigned long td_fork_generation;
/*
 * This thread's fast handle, or TD_NO_FAST: one per thread, named by one
 * of two pointers, td where it takes the fast path the entry points
 * inline (td->fast), src_td where its source has a fast path of its own
 * (td->src_fast).  One variable, so that an entry that compares both
 * finds them by one address (the second a displacement from the
 * first).  initial-exec: a fixed offset from the thread pointer, no
 * __tls_get_addr call (a dlopen()ed copy uses glibc's static TLS
 * surplus for these 16 bytes).
 */
struct td_fast_handles {
	const struct td *td;
	const struct td *src_td;
};
extern TD_HIDDEN __thread struct td_fast_handles td_fast
	__attribute__((tls_model("initial-exec")));
extern TD_HIDDEN const uint64_t td_no_fast_anchor;
#define TD_NO_FAST ((const struct td *)(const void *)&td_no_fast_anchor)
TD_HIDDEN void td_owner_init(struct td *td);
TD_HIDDEN int td_owner_error(const struct td *td);
TD_HIDDEN void td_fast_claim(struct td *td);
TD_HIDDEN void td_owner_free(struct td *td);

/*
 * The lock value a fast end must find: the last one seen, or, while
 * records are being sunk, one no 32-bit lock can equal, which sends
 * every end to the path that writes records: with a buffer attached the
 * lock | TD_END_KEY_SINK (a record of readings), with a named region
 * ending TD_END_KEY_NAMED too (records of counts).
 */
#define TD_END_KEY_SINK  (UINT64_C(1) << 32)
#define TD_END_KEY_NAMED (UINT64_C(1) << 33)
static inline void td_end_key_refresh(struct td *td)
{
	td->end_key = td->last_lock |
		      (td->sink.buf || td->sink.pending ? TD_END_KEY_SINK : 0) |
		      (td->sink.pending ? TD_END_KEY_NAMED : 0);
}

/* True when td may be used here: its thread, its process (owner.c). */
#define td_owner_ok(td) \
	((td)->owner == td_thread_self() && \
	 (td)->fork_gen == td_fork_generation)


/* options.c: the caller's td_options, whatever their size. */
TD_HIDDEN int td_options_copy(struct td_options *dst,
			      const struct td_options *src);

/* sample.c: take a reading through the handle's source. */
TD_HIDDEN int td_take_sample(struct td *td, struct td_sample *s);
/* After td->snap, resets or untrusted changed: new version, keys. */
TD_HIDDEN void td_snap_publish(struct td *td, const struct td_snap *before);
/* A fast path that folded a reading into td->snap: its new version. */
TD_HIDDEN void td_snap_new_version(struct td *td);

/* errors.c: the CPU named by td_strerror(-ENOSYS) on this thread. */
TD_HIDDEN void td_set_unknown_cpu(const char *desc);
/* td_open refused a setting of the environment: td_strerror(-EINVAL) in
 * this thread quotes it until the next td_open clears it. */
TD_HIDDEN void td_set_bad_setting(const char *var, const char *value,
				  const char *const *words, int n);
TD_HIDDEN void td_clear_bad_setting(void);
/* errors.c: why TD_OPT_MEMORY was refused (td_strerror(-EOPNOTSUPP)
 * on this thread), NULL or "" when it was not. */
TD_HIDDEN void td_set_mem_refusal(const char *why);

/* decode.c: pure arithmetic on count deltas. */
TD_HIDDEN void td_decode(const struct td_delta *d, bool l2,
			 struct td_result *res);
TD_HIDDEN bool td_delta_consistent(const struct td_delta *d, bool l2);
/* td_decode with level 2 as the source says (src: its result flags). */
TD_HIDDEN void td_decode_src(const struct td_delta *d, bool l2, unsigned src,
			     struct td_result *res);

/* result.c: a region's record, and where it goes; an untrusted result. */
TD_HIDDEN void td_sink_put(struct td *td, struct td_record *rec,
			    const uint64_t *l2raw);
TD_HIDDEN void td_record_mark_unreliable(struct td_result *res);

/* handle.c: 1, or 2 where the handle's source measures level 2. */
TD_HIDDEN unsigned td_levels(const struct td *td);
/*
 * handle.c: td_open's work, with what the layers above core do to the
 * handle at open and close (output/open.c: the environment's report,
 * named regions, records), so that core names none of it.
 */
TD_HIDDEN int td_handle_open(struct td **out, const struct td_options *opts,
			     const struct td_handle_hooks *hooks);

/* options.c */
TD_HIDDEN int td_env_choice(const char *var, const char *const *words, int n,
			    int *choice);

/* policy.c */
TD_HIDDEN void td_policy_setup(struct td_policy *p, bool level2, bool track);
TD_HIDDEN int td_policy_init(struct td_policy *p, const struct td_options *o);
TD_HIDDEN bool td_policy_reset_due(struct td_policy *p, uint64_t raw_slots,
				   uint64_t now);
TD_HIDDEN bool td_policy_budget_allows(struct td_policy *p, uint64_t now,
				       uint64_t raw_slots, uint64_t len);
TD_HIDDEN void td_policy_charge(struct td_policy *p);
TD_HIDDEN void td_policy_refund(struct td_policy *p);
TD_HIDDEN void td_policy_folded(struct td_policy *p, uint64_t slots);


#endif /* TD_INTERNAL_H */
