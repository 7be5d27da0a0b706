/* SPDX-License-Identifier: MIT */
/*
 * The fast paths against the general route.  Every fast path (the
 * fixed-selector path, metrics-clear's, the hybrid P-cores', the ordinary
 * counters' on x86 and Arm) promises the results the general route
 * (core/region_slow.c) gives for the same readings, bit for bit.  This
 * program runs the same pseudo-random operation sequences (fixed seeds)
 * on every emulated profile: regions begun and ended nested and
 * interleaved, with a result or without, misused, named regions, records
 * attached and detached, work of lengths from tens of slots to billions,
 * context switches, PMIs, foreign reads, deschedules, hybrid migrations,
 * switches and E-core stints at a library reset, under each reset
 * policy.  It writes what every call returned (return codes, results,
 * records, totals, td_query's counts) as a trace.
 *
 * It is built twice from this one source: test_fastslow-static against
 * the library, test_fastslow-nofast against the library compiled with
 * TD_NO_FAST_PATHS (core/handle.c: every begin and end on the general
 * route).  The first one's tests, one per profile, run the second with
 * --trace PROFILE, run the same sequences themselves, and compare the two
 * traces entry by entry, each number bitwise (doubles by their bits).
 * The emulated PMU counts only emu_run's work, not the library's own
 * instructions, so both builds read the same counts at the same calls
 * whatever path they take; nothing here depends on timing (what another
 * context leaves in the registers, the emulator's rand(), is seeded per
 * sequence).  The library's handles must have had a fast path (td->fast,
 * td->src_fast) and the reference's none, else the comparison proves
 * nothing; each profile prints both builds' RDPMCs, reads and syscalls.
 * TD_FASTSLOW_LOG=SEQ prints the operations of sequence SEQ.  An arm64
 * build (make test-arm64, under qemu-user) runs the Arm profiles, its
 * reference through TD_FASTSLOW_RUN (reference_argv).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "emu.h"
#include "internal.h"
#include "topdown.h"
#include "truth.h"

/* ---- profiles --------------------------------------------------------- */

struct profile {
	const char *name;
	enum emu_profile emu;
	bool amd;          /* mixes with SMT contention (emu_mix_amd_l2) */
	bool hybrid;       /* migrations between P- and E-cores */
	bool generic;      /* ordinary counters: overflow periods */
	int clear_trigger; /* EMU_LNL: which RDPMC clears; else -1 */
	bool offer_clear;  /* EMU_ADL offering metrics-clear mode */
	bool smt;          /* SMT active, AnyThread allowed */
	bool pin_big;      /* EMU_ARM_HETERO: pinned to the X3 CPUs */
	unsigned counters; /* GP counters, where the default is too few */
	bool l2_mux;       /* TD_OPT_L2_MULTIPLEX: level-2 groups rotated */
	bool arm;          /* an Arm PMU: the profiles an arm64 build runs */
};

static const struct profile profiles[] = {
	{ "spr", EMU_SPR, .clear_trigger = -1 },
	{ "icl", EMU_ICL, .clear_trigger = -1 },
	{ "lnl-clear-on-metrics", EMU_LNL,
	  .clear_trigger = EMU_CLEAR_ON_METRICS },
	{ "lnl-clear-on-slots", EMU_LNL, .clear_trigger = EMU_CLEAR_ON_SLOTS },
	{ "adl", EMU_ADL, .hybrid = true, .clear_trigger = -1 },
	{ "adl-offers-clear", EMU_ADL, .hybrid = true, .clear_trigger = -1,
	  .offer_clear = true },
	{ "zen4", EMU_ZEN4, .amd = true, .generic = true,
	  .clear_trigger = -1 },
	{ "zen5", EMU_ZEN5, .amd = true, .generic = true,
	  .clear_trigger = -1 },
	{ "zen4-l2mux", EMU_ZEN4, .amd = true, .generic = true,
	  .clear_trigger = -1, .l2_mux = true },
	{ "skl", EMU_SKL, .generic = true, .clear_trigger = -1 },
	{ "skl-smt", EMU_SKL, .generic = true, .clear_trigger = -1,
	  .smt = true },
	{ "skl-l2mux", EMU_SKL, .generic = true, .clear_trigger = -1,
	  .l2_mux = true },
	{ "skl-smt-l2mux", EMU_SKL, .generic = true, .clear_trigger = -1,
	  .smt = true, .l2_mux = true },
	{ "hsw", EMU_HSW, .generic = true, .clear_trigger = -1 },
	{ "grt", EMU_GRT, .generic = true, .clear_trigger = -1 },
	{ "grt-l2mux", EMU_GRT, .generic = true, .clear_trigger = -1,
	  .l2_mux = true },
	{ "slm", EMU_SLM, .generic = true, .clear_trigger = -1,
	  .counters = 4 },
	{ "tnt", EMU_TNT, .generic = true, .clear_trigger = -1 },
	{ "cmt", EMU_CMT, .generic = true, .clear_trigger = -1 },
	{ "skt", EMU_SKT, .generic = true, .clear_trigger = -1 },
	{ "arm-n1", EMU_ARM_N1, .generic = true, .clear_trigger = -1,
	  .arm = true },
	{ "arm-n2r0p0", EMU_ARM_N2_R0P0, .generic = true,
	  .clear_trigger = -1, .arm = true },
	{ "arm-v1", EMU_ARM_V1, .generic = true, .clear_trigger = -1,
	  .arm = true },
	{ "arm-v2", EMU_ARM_V2, .generic = true, .clear_trigger = -1,
	  .arm = true },
	{ "arm-n3", EMU_ARM_N3, .generic = true, .clear_trigger = -1,
	  .arm = true },
	{ "arm-sbsa", EMU_ARM_SBSA, .generic = true, .clear_trigger = -1,
	  .arm = true },
	{ "arm-hetero", EMU_ARM_HETERO, .generic = true, .clear_trigger = -1,
	  .pin_big = true, .arm = true },
};
#define NR_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

/*
 * What the sequences need and did not get: a failed test here, a message
 * and exit status 2 in the reference build's run (--trace), which the
 * test reports with its status.
 */
static bool tracing;

static void need(bool ok, const char *what, long value)
{
	if (ok)
		return;
	if (tracing) {
		fprintf(stderr, "test_fastslow --trace: %s (%ld)\n", what,
			value);
		exit(2);
	}
	fail_msg("%s (%ld)", what, value);
}

/* ---- the trace ---------------------------------------------------------- */

/*
 * One entry: what one call returned.  Every field a uint64_t (doubles by
 * their bits, pointers by what they name): no padding, so two entries
 * are equal exactly when every number is.
 */
enum entry_kind {
	ENTRY_BEGIN,   /* f[]: nothing */
	ENTRY_END,     /* f[]: the struct td_result */
	ENTRY_RECORD,  /* f[]: one struct td_record of a detached buffer */
	ENTRY_DETACH,  /* f[]: count, dropped */
	ENTRY_TOTALS,  /* f[]: a named region's struct td_totals */
	ENTRY_INFO,    /* f[]: td_query's counts */
	ENTRY_STATS,   /* f[]: the emulator's; not compared (see above) */
};
static const char *const kind_names[] = {
	"begin", "end", "record", "detach", "totals", "info", "stats",
};

#define RESULT_FIELDS 22
#define NR_FIELDS (2 + RESULT_FIELDS + 3 * TD_L1_COUNT)

struct entry {
	uint64_t seq;    /* sequence (its seed's index) */
	uint64_t op;     /* operation within it */
	uint64_t kind;   /* enum entry_kind */
	uint64_t what;   /* region, named region or record index */
	uint64_t rc;     /* the call's return code, as int64_t */
	uint64_t f[NR_FIELDS];
};

struct trace {
	struct entry *e;
	size_t n, cap;
	uint64_t seq, op;
};

static struct entry *trace_add(struct trace *t, enum entry_kind kind,
			       uint64_t what, int rc)
{
	struct entry *e;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->e = realloc(t->e, t->cap * sizeof(*t->e));
		need(t->e != NULL, "out of memory", 0);
	}
	e = &t->e[t->n++];
	memset(e, 0, sizeof(*e));
	e->seq = t->seq;
	e->op = t->op;
	e->kind = kind;
	e->what = what;
	e->rc = (uint64_t)(int64_t)rc;
	return e;
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* The 22 fields of a result, from f. */
static void put_result(uint64_t *f, const struct td_result *r)
{
	unsigned k = 0;

	f[k++] = r->slots;
	for (int i = 0; i < TD_L1_COUNT; i++)
		f[k++] = bits(r->l1[i]);
	for (int i = 0; i < TD_L2_COUNT; i++)
		f[k++] = bits(r->l2[i]);
	f[k++] = bits(r->err);
	f[k++] = r->flags;
	f[k++] = r->resets;
	f[k++] = bits(r->smt_contention);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		f[k++] = bits(r->mem[i]);
}

static void field_name(enum entry_kind kind, unsigned k, char *buf,
		       size_t len)
{
	static const char *const result[RESULT_FIELDS] = {
		"slots", "l1[0]", "l1[1]", "l1[2]", "l1[3]", "l2[0]", "l2[1]",
		"l2[2]", "l2[3]", "l2[4]", "l2[5]", "l2[6]", "l2[7]", "err",
		"flags", "resets", "smt_contention", "mem[0]",
		"mem[1]", "mem[2]", "mem[3]", "mem[4]",
	};
	static const char *const record[] = {
		"slots", "cat[0]", "cat[1]", "cat[2]", "cat[3]", "cat[4]",
		"cat[5]", "cat[6]", "cat[7]", "cat[8]", "qerr", "flags",
		"resets", "name", "reserved[0]", "reserved[1]", "reserved[2]",
	};
	static const char *const info[] = {
		"path", "levels", "resets", "foreign_resets", "flags",
	};
	const char *n = NULL;

	if (kind == ENTRY_END && k < RESULT_FIELDS)
		n = result[k];
	else if (kind == ENTRY_RECORD && k < sizeof(record) / sizeof(*record))
		n = record[k];
	else if (kind == ENTRY_INFO && k < sizeof(info) / sizeof(*info))
		n = info[k];
	else if (kind == ENTRY_DETACH && k < 2)
		n = k ? "dropped" : "count";
	if (n) {
		snprintf(buf, len, "%s", n);
	} else if (kind == ENTRY_TOTALS && k < 2) {
		snprintf(buf, len, "%s", k ? "unreliable" : "calls");
	} else if (kind == ENTRY_TOTALS && k < 2 + RESULT_FIELDS) {
		snprintf(buf, len, "total.%s", result[k - 2]);
	} else if (kind == ENTRY_TOTALS) {
		unsigned i = k - 2 - RESULT_FIELDS;
		static const char *const arr[] = { "min", "max", "reserved" };

		snprintf(buf, len, "%s[%u]", arr[i / TD_L1_COUNT],
			 i % TD_L1_COUNT);
	} else {
		snprintf(buf, len, "f[%u]", k);
	}
}

/* ---- deterministic pseudo-random numbers (splitmix64) ----------------- */

static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(uint64_t *s, unsigned n)
{
	return (unsigned)(next_random(s) % n);
}

/* ---- one sequence ------------------------------------------------------- */

#define NR_SEQUENCES 16
#define NR_OPS 400
#define NR_REGIONS 6
#define NR_NAMED 2
#define RECORDS_CAP 48

struct sequence {
	const struct profile *p;
	struct trace *t;
	uint64_t rng;
	struct td *td;
	struct td_region r[NR_REGIONS];
	bool open[NR_REGIONS];
	struct td_named named[NR_NAMED];
	bool named_open[NR_NAMED];
	struct td_record recs[RECORDS_CAP];
	unsigned cap;      /* the attached buffer's records */
	bool attached;
	bool descheduled;
	bool calm;         /* few events that send begin/end the slow way */
	bool fast_at_open, fast_at_close; /* td->fast or td->src_fast */
	int cpu;
	/* hybrid: slots run on E-cores while each region was open, and the
	 * results that kept level 2 with some (hybrid_source.c's bounded
	 * E-core share: a branch both builds must take) */
	uint64_t ecore_slots[NR_REGIONS];
	uint64_t l2_with_ecore;
};

static const char *const named_names[NR_NAMED] = { "alpha", "beta" };

/*
 * TD_FASTSLOW_LOG=SEQ: each operation of sequence SEQ on stderr, to read
 * what led to a divergence the test reports.
 */
static void note(const struct sequence *q, const char *fmt, ...)
{
	static int wanted = -2;
	struct emu_truth truth;
	va_list ap;

	if (wanted == -2) {
		const char *env = getenv("TD_FASTSLOW_LOG");

		wanted = env ? atoi(env) : -1;
	}
	if ((int)q->t->seq != wanted)
		return;
	emu_truth(&truth);
	fprintf(stderr, "%s %3" PRIu64 " [truth %" PRIu64 "] ", q->p->name,
		q->t->op, truth.slots);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Work of one of four compositions, in the profile's terms. */
static struct emu_mix mix_of(const struct sequence *q, unsigned i)
{
	static const struct emu_mix *const intel[] = {
		&MIX_CHAIN, &MIX_BRANCHY, &MIX_STREAM, &MIX_DRAM,
	};

	if (!q->p->amd)
		return *intel[i % 4];
	switch (i % 4) {
	case 0:
		return emu_mix_amd_l2(0.30, 0.05, 0.10, 0.15, 0.02, 0.04,
				      0.06, 0.20);
	case 1:
		return emu_mix_amd_l2(0.25, 0.40, 0.20, 0.05, 0.05, 0.35,
				      0.15, 0.04);
	case 2:
		return emu_mix_amd_l2(0.70, 0.02, 0.08, 0.10, 0.10, 0.01,
				      0.03, 0.05);
	default:
		return emu_mix_amd_l2(0.08, 0.01, 0.06, 0.00, 0.01, 0.005,
				      0.02, 0.70);
	}
}

/*
 * Slots of work: a digit times a power of ten from 10 to 10^9, so that
 * regions range from far shorter than TD_SHORT_SLOTS to seconds long.
 */
static uint64_t work_slots(uint64_t *rng)
{
	uint64_t n = 1 + below(rng, 9);

	for (unsigned e = 1 + below(rng, 9); e; e--)
		n *= 10;
	return n + below(rng, 1000);
}

#define WORK_PIECE (UINT64_C(1) << 30)

/* Hybrid: slots about to run on the current CPU, if an E-core (8-15). */
static void note_ecore_work(struct sequence *q, uint64_t slots)
{
	for (unsigned i = 0; q->p->hybrid && q->cpu >= 8 && i < NR_REGIONS; i++)
		if (q->open[i])
			q->ecore_slots[i] += slots;
}

static void run_work(struct sequence *q)
{
	unsigned m = below(&q->rng, 4);
	struct emu_mix mix = mix_of(q, m);
	uint64_t slots = work_slots(&q->rng);

	note(q, "run %" PRIu64 " mix %u", slots, m);
	note_ecore_work(q, slots);
	/*
	 * In pieces of at most 2^30 slots: a 32-bit counter (Arm without
	 * FEAT_PMUv3p5) then wraps at most once in each, and its overflow
	 * interrupt (the emulator's at the next emu_run) comes before it
	 * wraps again, as the hardware's does.
	 */
	for (; slots > WORK_PIECE; slots -= WORK_PIECE)
		emu_run(WORK_PIECE, &mix);
	emu_run(slots, &mix);
}

/*
 * A region to act on: one in the state wanted (closed for a begin, open
 * for an end), else, one time in eight or when none is, any: the misuse
 * is part of the sequence (-EALREADY, -ESRCH).
 */
static unsigned pick(uint64_t *rng, const bool *open, unsigned n, bool want)
{
	unsigned i = below(rng, n);

	if (open[i] == want || below(rng, 8) == 0)
		return i;
	for (unsigned k = 1; k < n; k++)
		if (open[(i + k) % n] == want)
			return (i + k) % n;
	return i;
}

/* A result filled with a pattern first: what a call leaves is compared. */
static void end_entry(struct sequence *q, unsigned what, int rc,
		      const struct td_result *res)
{
	struct entry *e = trace_add(q->t, ENTRY_END, what, rc);

	if (res)
		put_result(e->f, res);
}

static void op_begin_region(struct sequence *q, unsigned i)
{
	int rc = td_region_begin(q->td, &q->r[i]);

	if (rc == 0)
		q->open[i] = true;
	note(q, "begin %u: %d", i, rc);
	trace_add(q->t, ENTRY_BEGIN, i, rc);
}

static void op_begin(struct sequence *q)
{
	op_begin_region(q, pick(&q->rng, q->open, NR_REGIONS, false));
}

static void op_end(struct sequence *q, unsigned i, bool want_result)
{
	struct td_result res;
	int rc;

	memset(&res, 0xa5, sizeof(res));
	rc = td_region_end(q->td, &q->r[i], want_result ? &res : NULL);
	if (rc == 0 && want_result && q->ecore_slots[i] &&
	    (res.flags & TD_RESULT_L2))
		q->l2_with_ecore++;
	if (rc == 0) {
		q->open[i] = false;
		q->ecore_slots[i] = 0;
	}
	note(q, "end %u%s: %d slots %" PRIu64 " flags %#x", i,
	     want_result ? "" : " (no result)", rc,
	     want_result ? res.slots : 0, want_result ? res.flags : 0);
	end_entry(q, i, rc, want_result ? &res : NULL);
}

static void op_named_begin(struct sequence *q)
{
	unsigned i = pick(&q->rng, q->named_open, NR_NAMED, false);
	int rc = td_named_begin(q->td, &q->named[i]);

	if (rc == 0)
		q->named_open[i] = true;
	note(q, "named begin %u: %d", i, rc);
	trace_add(q->t, ENTRY_BEGIN, NR_REGIONS + i, rc);
}

static void op_named_end(struct sequence *q, unsigned i, bool want_result)
{
	struct td_result res;
	int rc;

	memset(&res, 0xa5, sizeof(res));
	rc = td_named_end(q->td, &q->named[i], want_result ? &res : NULL);
	if (rc == 0)
		q->named_open[i] = false;
	note(q, "named end %u%s: %d", i, want_result ? "" : " (no result)",
	     rc);
	end_entry(q, NR_REGIONS + i, rc, want_result ? &res : NULL);
}

/* A record's name, by which named region it names (its address differs). */
static uint64_t name_id(const struct td_record *rec)
{
	for (unsigned i = 0; i < NR_NAMED; i++)
		if (rec->name == named_names[i])
			return i + 1;
	return rec->name ? 0xffff : 0;
}

static void put_record(struct entry *e, const struct td_record *rec)
{
	unsigned k = 0;

	e->f[k++] = rec->slots;
	for (int i = 0; i < TD_CAT_COUNT; i++)
		e->f[k++] = (uint64_t)rec->cat[i];
	e->f[k++] = rec->qerr;
	e->f[k++] = rec->flags;
	e->f[k++] = rec->resets;
	e->f[k++] = name_id(rec);
	for (int i = 0; i < 3; i++)
		e->f[k++] = rec->reserved[i];
}

/*
 * Every record of the attached buffer decoded while still attached (a
 * record of readings is decoded on a copy, finished as at detach; the
 * ones not written yet keep the attach's pattern), as ends numbered
 * 200 + its index.
 */
static void decode_attached(struct sequence *q)
{
	for (unsigned i = 0; i < q->cap; i++) {
		struct td_result res;
		int rc;

		memset(&res, 0xa5, sizeof(res));
		rc = td_record_decode(&q->recs[i], &res);
		end_entry(q, 200 + i, rc, &res);
	}
}

static void detach_records(struct sequence *q)
{
	size_t count = 0;
	uint64_t dropped = 0;
	int rc;
	struct entry *e;

	decode_attached(q);
	rc = td_records_detach(q->td, &count, &dropped);
	e = trace_add(q->t, ENTRY_DETACH, 0, rc);

	note(q, "detach: %d, %zu records, %" PRIu64 " dropped", rc, count,
	     dropped);
	e->f[0] = count;
	e->f[1] = dropped;
	q->attached = false;
	for (size_t i = 0; rc == 0 && i < count && i < RECORDS_CAP; i++)
		put_record(trace_add(q->t, ENTRY_RECORD, i, 0), &q->recs[i]);
}

/* Attach a buffer of 1 to RECORDS_CAP records, or detach the one there. */
static void op_records(struct sequence *q)
{
	unsigned cap;
	int rc;

	if (q->attached) {
		detach_records(q);
		return;
	}
	memset(q->recs, 0x5a, sizeof(q->recs));
	cap = 1 + below(&q->rng, RECORDS_CAP);
	rc = td_records_attach(q->td, q->recs, cap);
	note(q, "attach %u: %d", cap, rc);
	q->attached = rc == 0;
	q->cap = cap;
	trace_add(q->t, ENTRY_BEGIN, 100, rc);
}

static void op_query(struct sequence *q)
{
	struct td_info info = { .size = sizeof(info) };
	int rc = td_query(q->td, &info);
	struct entry *e = trace_add(q->t, ENTRY_INFO, 0, rc);

	e->f[0] = (uint64_t)info.path;
	e->f[1] = info.levels;
	e->f[2] = info.resets;
	e->f[3] = info.foreign_resets;
	e->f[4] = info.flags;
	note(q, "query: resets %" PRIu64 " foreign %" PRIu64, info.resets,
	     info.foreign_resets);
}

static void op_pmi(struct sequence *q)
{
	note(q, "PMI");
	emu_pmi();
}

static void op_foreign_read(struct sequence *q)
{
	note(q, "foreign read");
	emu_foreign_read();
}

static void op_deschedule(struct sequence *q)
{
	note(q, q->descheduled ? "reschedule" : "deschedule");
	if (q->descheduled)
		emu_reschedule();
	else
		emu_deschedule();
	q->descheduled = !q->descheduled;
}

static void op_switch(struct sequence *q, uint64_t other_slots)
{
	note(q, "context switch (other %" PRIu64 ")", other_slots);
	emu_context_switch(other_slots);
}

/*
 * Hybrid: a few slots to a few thousand on an E-core, then back (a
 * preemption that moved the thread for a moment, or the library's own
 * reads there after a migration): regions around it keep level 2.
 */
static void op_ecore_stint(struct sequence *q)
{
	int home = q->cpu;
	uint64_t slots = 1 + below(&q->rng, 5000);
	struct emu_mix mix = mix_of(q, below(&q->rng, 4));

	q->cpu = 8 + (int)below(&q->rng, 8);
	note(q, "E-core stint of %" PRIu64 " on %d", slots, q->cpu);
	emu_migrate(q->cpu);
	note_ecore_work(q, slots);
	emu_run(slots, &mix);
	q->cpu = home;
	emu_migrate(home);
}

/*
 * Hybrid, once at the end of each sequence: a region on a P-core with an
 * E-core stint far below 1/255 of its slots (op_ecore_stint's, planted
 * where the random operations may not put one), so that the branch that
 * keeps level 2 with an E-core share is met in every full run, whatever
 * the sequences' other operations draw.
 */
static void op_planted_stint(struct sequence *q)
{
	unsigned i = pick(&q->rng, q->open, NR_REGIONS, false);
	struct emu_mix mix = mix_of(q, below(&q->rng, 4));

	if (q->open[i])
		return; /* every region open: none to plant */
	q->cpu = (int)below(&q->rng, 8);
	note(q, "planted: migrate to %d", q->cpu);
	emu_migrate(q->cpu);
	op_begin_region(q, i);
	emu_run(2000000, &mix);
	op_ecore_stint(q);
	emu_run(2000000, &mix);
	op_end(q, i, true);
}

/*
 * PERF_METRICS' profiles, once at the end of each sequence that never
 * resets: a region whose end reads SLOTS at 2^43 or more since the
 * handle's last reset, past the exact doubles of the fast end's decode
 * (pm_decode.h TD_DECODE_EXACT_SLOTS), so that its integer route is
 * compared too, which the random operations' lengths never reach.
 */
static void op_planted_wide(struct sequence *q)
{
	unsigned i = pick(&q->rng, q->open, NR_REGIONS, false);
	struct emu_mix mix = mix_of(q, below(&q->rng, 4));
	uint64_t slots = (UINT64_C(1) << 43) + below(&q->rng, 1u << 20);

	if (q->open[i])
		return; /* every region open: none to plant */
	note(q, "planted: a region of %" PRIu64 " slots", slots);
	op_begin_region(q, i);
	note_ecore_work(q, slots);
	for (; slots > WORK_PIECE; slots -= WORK_PIECE)
		emu_run(WORK_PIECE, &mix);
	emu_run(slots, &mix);
	op_end(q, i, true);
}

/* Hybrid: to any CPU, P-core or E-core; elsewhere a context switch. */
static void op_migrate(struct sequence *q)
{
	if (!q->p->hybrid) {
		op_switch(q, work_slots(&q->rng));
		return;
	}
	if (below(&q->rng, 3) == 0) {
		op_ecore_stint(q);
		return;
	}
	q->cpu = (int)below(&q->rng, 16);
	note(q, "migrate to %d", q->cpu);
	emu_migrate(q->cpu);
}

/* The library's next reset (policy auto, always) meets the scheduler. */
static void op_plan_at_reset(struct sequence *q)
{
	struct emu_mix mix = mix_of(q, below(&q->rng, 4));

	if (q->p->hybrid && below(&q->rng, 2)) {
		uint64_t slots = work_slots(&q->rng);

		note(q, "plan: E-core stint of %" PRIu64 " at the next reset",
		     slots);
		emu_ecore_stint_at_next_reset(slots, &mix);
	} else {
		note(q, "plan: switch-out at the next reset");
		emu_switch_out_at_next_reset();
	}
}

/*
 * A harness's loop: one closed region begun and ended around work a few
 * times, with a result or without (records attached or not, as the
 * sequence stands), half the time after every other region ended.
 * Where no other region is open, each end finds no reading since its
 * begin's (metrics-clear mode's shortcut, pm_clear_fast.c), which the
 * random begins and ends above seldom make.  On every profile: the
 * same closed loops also meet the other modes' end paths back to back.
 */
static void op_loop(struct sequence *q)
{
	unsigned i = pick(&q->rng, q->open, NR_REGIONS, false);
	unsigned n = 1 + below(&q->rng, 4);
	bool want_result = below(&q->rng, 2) != 0;

	if (q->open[i])
		return;
	if (below(&q->rng, 2)) { /* half the loops with nothing else open */
		for (unsigned j = 0; j < NR_REGIONS; j++)
			if (q->open[j])
				op_end(q, j, true);
		for (unsigned j = 0; j < NR_NAMED; j++)
			if (q->named_open[j])
				op_named_end(q, j, true);
	}
	for (unsigned k = 0; k < n; k++) {
		op_begin_region(q, i);
		run_work(q);
		op_end(q, i, want_result);
	}
}

static void one_op(struct sequence *q)
{
	unsigned r = below(&q->rng, 100);

	if (r < 22)
		op_begin(q);
	else if (r < 44)
		op_end(q, pick(&q->rng, q->open, NR_REGIONS, true),
		       below(&q->rng, 4) != 0);
	else if (r < 50)
		op_named_begin(q);
	else if (r < 56)
		op_named_end(q, pick(&q->rng, q->named_open, NR_NAMED, true),
			     below(&q->rng, 2) != 0);
	else if (r < 60)
		op_loop(q);
	else if (r < 76 || (r < 92 && q->calm && below(&q->rng, 8)))
		run_work(q);
	else if (r < 80)
		op_switch(q, below(&q->rng, 2) ? work_slots(&q->rng) : 0);
	else if (r < 83)
		op_pmi(q);
	else if (r < 86)
		op_foreign_read(q);
	else if (r < 89)
		op_deschedule(q);
	else if (r < 92)
		op_migrate(q);
	else if (r < 95)
		op_records(q);
	else if (r < 97)
		op_plan_at_reset(q);
	else
		op_query(q);
}

static void open_handle(struct sequence *q, unsigned seq)
{
	static const enum td_reset_policy policies[] = {
		TD_RESET_AUTO, TD_RESET_NEVER, TD_RESET_ALWAYS,
	};
	static const double targets[] = { 0, 0.05, 0.002 };
	struct td_options o = TD_OPTIONS_INIT;
	const struct profile *p = q->p;
	int rc;

	emu_setup(p->emu);
	if (p->clear_trigger >= 0)
		emu_set_metrics_clear_trigger(
			(enum emu_clear_trigger)p->clear_trigger);
	if (p->offer_clear)
		emu_offer_metrics_clear();
	if (p->smt)
		emu_set_smt(true, true);
	if (p->pin_big)
		emu_arm_pin(4, 7);
	if (p->counters)
		emu_gp_set_counters(p->counters);
	if (p->l2_mux) { /* the kernel's rotation every 64k slots of work */
		emu_set_mux_interval(UINT64_C(1) << 16);
		o.flags |= TD_OPT_L2_MULTIPLEX;
	}
	/*
	 * What another context leaves in the registers (the emulator's
	 * rand()): the same in both builds' runs of this sequence.
	 */
	srand(seq + 1);
	if (p->generic && seq % 2) /* counters overflow: the kernel's PMIs */
		emu_gp_set_period(work_slots(&q->rng) * 4);
	o.reset_policy = policies[seq % 3];
	o.err_target = targets[(seq / 3) % 3];
	/* the handle opens only after some work: counters not at zero */
	if (seq % 4 == 3)
		run_work(q);
	rc = td_open(&q->td, &o);
	need(rc == 0, "td_open", rc);
	q->fast_at_open = q->td->fast || q->td->src_fast;
}

/*
 * A buffer still attached at close: copies of its records taken while
 * attached (a fast end's raw ones among them) decoded after td_close, as
 * ends numbered 300 + its index, then the buffer td_close finished.  A
 * record must decode without the handle it came from.
 */
static void decode_after_close(struct sequence *q,
			       const struct td_record *copies)
{
	for (unsigned i = 0; i < q->cap; i++) {
		struct td_result res;
		int rc;

		memset(&res, 0xa5, sizeof(res));
		rc = td_record_decode(&copies[i], &res);
		end_entry(q, 300 + i, rc, &res);
	}
	for (unsigned i = 0; i < q->cap; i++)
		put_record(trace_add(q->t, ENTRY_RECORD, i, 0), &q->recs[i]);
}

/*
 * Everything still open ended, the records and every total read; a
 * buffer still attached is left to td_close.
 */
static void close_handle(struct sequence *q)
{
	static struct td_record copies[RECORDS_CAP];

	for (unsigned i = 0; i < NR_REGIONS; i++)
		if (q->open[i])
			op_end(q, i, true);
	for (unsigned i = 0; i < NR_NAMED; i++)
		if (q->named_open[i])
			op_named_end(q, i, true);
	if (q->attached) {
		decode_attached(q);
		memcpy(copies, q->recs, sizeof(copies));
	}
	for (unsigned i = 0; i < NR_NAMED; i++) {
		struct td_totals tot;
		struct entry *e;
		int rc;
		unsigned k = 2 + RESULT_FIELDS;

		memset(&tot, 0xa5, sizeof(tot));
		rc = td_named_totals(&q->named[i], &tot);
		e = trace_add(q->t, ENTRY_TOTALS, i, rc);
		e->f[0] = tot.calls;
		e->f[1] = tot.unreliable;
		put_result(&e->f[2], &tot.total);
		for (int c = 0; c < TD_L1_COUNT; c++) {
			e->f[k + c] = bits(tot.min[c]);
			e->f[k + TD_L1_COUNT + c] = bits(tot.max[c]);
		}
		e->f[k + 2 * TD_L1_COUNT] = tot.open;
		e->f[k + 2 * TD_L1_COUNT + 1] = tot.max_depth;
		e->f[k + 2 * TD_L1_COUNT + 2] = tot.reserved[0];
		e->f[k + 2 * TD_L1_COUNT + 3] = tot.reserved[1];
	}
	op_query(q);
	q->fast_at_close = q->td->fast || q->td->src_fast;
	td_close(q->td);
	if (q->attached)
		decode_after_close(q, copies);
	q->attached = false;
	emu_teardown();
}

/*
 * Returns whether its handle had a fast path: bit 0 at open, 1 at close;
 * adds its results that kept level 2 with E-core slots to *l2_with_ecore.
 */
static unsigned run_sequence(const struct profile *p, unsigned seq,
			     unsigned nr_ops, struct trace *t,
			     uint64_t *l2_with_ecore)
{
	static struct sequence q; /* large: not on the stack */

	memset(&q, 0, sizeof(q));
	q.p = p;
	q.t = t;
	q.rng = 0x746f70646f776e00ull ^ ((uint64_t)seq << 8) ^
		(uint64_t)(p - profiles);
	for (unsigned i = 0; i < NR_NAMED; i++)
		q.named[i].name = named_names[i];
	q.calm = seq % 4 < 2;
	t->seq = seq;
	t->op = 0;
	open_handle(&q, seq);
	for (t->op = 1; t->op <= nr_ops; t->op++)
		one_op(&q);
	if (p->hybrid)
		op_planted_stint(&q);
	if (!p->generic && seq % 3 == 1) /* TD_RESET_NEVER: open_handle */
		op_planted_wide(&q);
	close_handle(&q);
	*l2_with_ecore += q.l2_with_ecore;
	return q.fast_at_open | (unsigned)q.fast_at_close << 1;
}

/*
 * Fewer under valgrind and the sanitizers, where each trapped RDPMC is
 * slow and what they look for (memory and thread errors) shows in a few
 * sequences as in sixteen: TD_FASTSLOW_SEQUENCES (1 to NR_SEQUENCES, set
 * by make test-asan and test-valgrind); make test runs them all.
 */
static unsigned nr_sequences(void)
{
	const char *env = getenv("TD_FASTSLOW_SEQUENCES");
	char *end;
	unsigned long n;

	if (!env)
		return NR_SEQUENCES;
	n = strtoul(env, &end, 10);
	if (!*env || *end || n < 1 || n > NR_SEQUENCES)
		fail_msg("TD_FASTSLOW_SEQUENCES=%s: want 1 to %d", env,
			 NR_SEQUENCES);
	return (unsigned)n;
}

/*
 * Every sequence of profile p, then what the emulator saw and how many
 * handles had a fast path at open and at close (not compared).
 */
static void run_profile(const struct profile *p, struct trace *t)
{
	uint64_t rdpmcs = 0, reads = 0, syscalls = 0, at_open = 0, at_close = 0;
	uint64_t l2_with_ecore = 0;
	struct entry *e;

	for (unsigned seq = 0; seq < nr_sequences(); seq++) {
		unsigned fast = run_sequence(p, seq, NR_OPS, t, &l2_with_ecore);
		struct emu_stats st;

		/* emu_teardown keeps the counts until the next setup */
		emu_stats(&st);
		rdpmcs += st.rdpmcs;
		reads += st.reads;
		syscalls += st.syscalls;
		at_open += fast & 1;
		at_close += fast >> 1;
	}
	e = trace_add(t, ENTRY_STATS, 0, 0);
	e->f[0] = rdpmcs;
	e->f[1] = reads;
	e->f[2] = syscalls;
	e->f[3] = at_open;
	e->f[4] = at_close;
	e->f[5] = l2_with_ecore;
}

/* ---- the reference build's run, and the comparison ---------------------- */

static const char *self_path;

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			exit(3);
		p += n;
		len -= (size_t)n;
	}
}

/* The reference binary beside this one (…/test_fastslow-nofast). */
static char *reference_path(void)
{
	static const char ref[] = "test_fastslow-nofast";
	const char *slash = strrchr(self_path, '/');
	size_t dir = slash ? (size_t)(slash - self_path) + 1 : 0;
	char *path = malloc(dir + sizeof(ref));

	assert_non_null(path);
	memcpy(path, self_path, dir);
	memcpy(path + dir, ref, sizeof(ref));
	return path;
}

/*
 * The command that runs the reference: TD_FASTSLOW_RUN, a command prefix
 * split on spaces, then the reference's path and its arguments.  make
 * test-arm64 sets it to its qemu-aarch64 command: under qemu-user this
 * process is a guest whose execve goes to the host kernel as it is
 * (linux-user/syscall.c do_execve), and the host runs an aarch64 program
 * only where binfmt_misc has qemu registered for it, which a machine with
 * just qemu-user installed does not have; nor would that qemu get the
 * runner's sysroot (-L).  The guest execs the host's qemu-aarch64 (an
 * x86 program the host runs itself) with the same command line instead.
 * Unset (make test; make test-valgrind, whose valgrind does not follow
 * the exec), the reference is exec'd itself.
 */
#define MAX_RUN_WORDS 16

static void reference_argv(const char *path, const char *arg, char *run,
			   char **argv)
{
	unsigned n = 0;

	for (char *w = strtok(run, " "); w; w = strtok(NULL, " ")) {
		if (n == MAX_RUN_WORDS)
			fail_msg("TD_FASTSLOW_RUN: more than %d words",
				 MAX_RUN_WORDS);
		argv[n++] = w;
	}
	argv[n++] = (char *)path;
	argv[n++] = (char *)"--trace";
	argv[n++] = (char *)arg;
	argv[n] = NULL;
}

/*
 * The reference build's run on profile i, under way while this one runs
 * its own: its trace goes to an unlinked temporary file.
 */
struct reference {
	pid_t pid;
	int fd;
	char arg[16];
};

static void reference_start(unsigned i, struct reference *ref)
{
	char *path = reference_path();
	const char *env = getenv("TD_FASTSLOW_RUN");
	char *run = strdup(env ? env : "");
	char *argv[MAX_RUN_WORDS + 4];
	FILE *f = tmpfile();

	assert_non_null(run);
	assert_non_null(f);
	ref->fd = dup(fileno(f));
	assert_true(ref->fd >= 0);
	fclose(f);
	snprintf(ref->arg, sizeof(ref->arg), "%u", i);
	reference_argv(path, ref->arg, run, argv);
	ref->pid = fork();
	assert_true(ref->pid >= 0);
	if (ref->pid == 0) {
		dup2(ref->fd, STDOUT_FILENO);
		close(ref->fd);
		if (argv[0] == path)
			execv(path, argv);
		else
			execvp(argv[0], argv);
		_exit(127);
	}
	free(run);
	free(path);
}

/* Its end, and its trace whole. */
static void reference_finish(struct reference *ref, struct trace *t)
{
	int status;
	off_t len;

	assert_int_equal(waitpid(ref->pid, &status, 0), ref->pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("test_fastslow-nofast --trace %s: status %#x",
			 ref->arg, status);
	len = lseek(ref->fd, 0, SEEK_END);
	assert_true(len >= 0 && len % (off_t)sizeof(*t->e) == 0);
	t->n = t->cap = (size_t)len / sizeof(*t->e);
	t->e = malloc((size_t)len + 1);
	assert_non_null(t->e);
	assert_int_equal(pread(ref->fd, t->e, (size_t)len, 0), len);
	close(ref->fd);
}

static void report_divergence(const struct profile *p, const struct entry *a,
			      const struct entry *b)
{
	char field[32] = "entry";

	for (unsigned k = 0; k < NR_FIELDS; k++)
		if (a->f[k] != b->f[k]) {
			field_name((enum entry_kind)a->kind, k, field,
				   sizeof(field));
			fail_msg("%s: sequence %" PRIu64 " operation %" PRIu64
				 " %s #%" PRIu64 ": %s fast %#" PRIx64
				 " slow %#" PRIx64, p->name, a->seq, a->op,
				 kind_names[a->kind], a->what, field, a->f[k],
				 b->f[k]);
		}
	fail_msg("%s: sequence %" PRIu64 " operation %" PRIu64
		 ": fast %s #%" PRIu64 " rc %" PRId64 ", slow sequence %"
		 PRIu64 " operation %" PRIu64 " %s #%" PRIu64 " rc %" PRId64,
		 p->name, a->seq, a->op, kind_names[a->kind], a->what,
		 (int64_t)a->rc, b->seq, b->op, kind_names[b->kind], b->what,
		 (int64_t)b->rc);
}

/*
 * Equal, bit for bit, but for one thing: the categories and error scale
 * of a record both builds flag TD_RESULT_UNRELIABLE.  A fast end asked
 * for nothing reads SLOTS alone, so the last pair of readings (SLOTS and
 * PERF_METRICS) a foreign reset folds is older on the fast path than on
 * the general route, which reads both: the fold adds the slots past the
 * pair without categories and widens the error scale by them
 * (pm_reading.c fold_foreign_reset).  Only regions spanning that reset
 * see it, and each is flagged for spanning it; its result's fractions are
 * zeroed (td_record_mark_unreliable) and compared, its record keeps the
 * raw counts.  Its slots, flags, resets and name still match.
 */
#define RECORD_CATS_FIRST 1 /* put_record: f[1..TD_CAT_COUNT] */
#define RECORD_QERR (RECORD_CATS_FIRST + TD_CAT_COUNT)

static bool entries_equal(const struct entry *a, const struct entry *b)
{
	struct entry x = *a, y = *b;

	if (x.kind == ENTRY_RECORD && y.kind == ENTRY_RECORD &&
	    (x.f[11] & TD_RESULT_UNRELIABLE) &&
	    (y.f[11] & TD_RESULT_UNRELIABLE)) {
		memset(&x.f[RECORD_CATS_FIRST], 0, TD_CAT_COUNT * sizeof(x.f[0]));
		memset(&y.f[RECORD_CATS_FIRST], 0, TD_CAT_COUNT * sizeof(y.f[0]));
		x.f[RECORD_QERR] = y.f[RECORD_QERR] = 0;
	}
	return !memcmp(&x, &y, sizeof(x));
}

/* Same entries, bit for bit; the emulator's counts must differ. */
static void compare(const struct profile *p, const struct trace *fast,
		    const struct trace *slow)
{
	const struct entry *fs, *ss;
	size_t n = fast->n < slow->n ? fast->n : slow->n;

	for (size_t i = 0; i + 1 < n; i++) {
		const struct entry *a = &fast->e[i], *b = &slow->e[i];

		if (!entries_equal(a, b))
			report_divergence(p, a, b);
	}
	if (fast->n != slow->n)
		fail_msg("%s: %zu entries fast, %zu slow", p->name, fast->n,
			 slow->n);
	fs = &fast->e[fast->n - 1];
	ss = &slow->e[slow->n - 1];
	assert_int_equal(fs->kind, ENTRY_STATS);
	assert_int_equal(ss->kind, ENTRY_STATS);
	print_message("%s: %zu entries equal; rdpmcs %" PRIu64 " / %" PRIu64
		      ", reads %" PRIu64 " / %" PRIu64 ", syscalls %" PRIu64
		      " / %" PRIu64 ", handles with a fast path at open %"
		      PRIu64 " / %" PRIu64 ", at close %" PRIu64 " / %"
		      PRIu64 " (fast / slow build)\n", p->name, fast->n,
		      fs->f[0], ss->f[0], fs->f[1], ss->f[1], fs->f[2],
		      ss->f[2], fs->f[3], ss->f[3], fs->f[4], ss->f[4]);
	/*
	 * hybrid: the branch of an E-core share small enough, both builds.
	 * Its coverage is asked of the full run only: under valgrind the
	 * three sequences run (nr_sequences) need not reach it.
	 */
	if (p->hybrid) {
		print_message("%s: results with level 2 and E-core slots %"
			      PRIu64 " / %" PRIu64 "\n", p->name, fs->f[5],
			      ss->f[5]);
		if (nr_sequences() == NR_SEQUENCES && (!fs->f[5] || !ss->f[5]))
			fail_msg("%s: no region kept level 2 with E-core "
				 "slots in it", p->name);
	}
	/*
	 * TD_OPT_L2_MULTIPLEX reads its groups with read(2) on the general
	 * route (counters.c): no fast path in either build, so both
	 * builds' results must be the general route's, bit for bit (a fast
	 * path there would not read the level-2 groups).
	 */
	if (p->l2_mux) {
		if (fs->f[3] || fs->f[4] || ss->f[3] || ss->f[4])
			fail_msg("%s: fast paths in %" PRIu64 " / %" PRIu64
				 " handles with multiplexed level 2", p->name,
				 fs->f[3], ss->f[3]);
		return;
	}
	if (!fs->f[3] || ss->f[3] || ss->f[4])
		fail_msg("%s: fast paths in %" PRIu64 " handles of the "
			 "library, %" PRIu64 " of its build without them: "
			 "the comparison proves nothing", p->name, fs->f[3],
			 ss->f[3]);
}

static void test_profile(void **state)
{
	const struct profile *p = *state;
	struct trace fast = { 0 }, slow = { 0 };
	struct reference ref;

	reference_start((unsigned)(p - profiles), &ref);
	run_profile(p, &fast);
	reference_finish(&ref, &slow);
	compare(p, &fast, &slow);
	free(fast.e);
	free(slow.e);
}

/* The reference build's side: the trace of one profile on stdout. */
static int write_trace(const char *arg)
{
	struct trace t = { 0 };
	unsigned long i = strtoul(arg, NULL, 10);

	if (i >= NR_PROFILES)
		return 2;
	run_profile(&profiles[i], &t);
	write_all(STDOUT_FILENO, t.e, t.n * sizeof(*t.e));
	free(t.e);
	return 0;
}

/*
 * The profiles whose fast paths this build has: on arm64 the Arm ones
 * (counters_fast.c's MRS route, arm_formulas.c); the x86 fast paths are
 * not compiled there.  An x86 build runs every profile.
 */
static bool runs_here(const struct profile *p)
{
#if defined(__aarch64__)
	return p->arm;
#else
	(void)p;
	return true;
#endif
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[NR_PROFILES];
	size_t n = 0;

	if (argc == 3 && !strcmp(argv[1], "--trace")) {
		tracing = true;
		return write_trace(argv[2]);
	}
	self_path = argv[0];
	for (unsigned i = 0; i < NR_PROFILES; i++) {
		struct CMUnitTest u = {
			.name = profiles[i].name,
			.test_func = test_profile,
			.initial_state = (void *)&profiles[i],
		};

		if (runs_here(&profiles[i]))
			tests[n++] = u;
	}
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
