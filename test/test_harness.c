/* SPDX-License-Identifier: MIT */
/*
 * Harness support against the emulator: named regions and their totals,
 * per-iteration records and the three report formats.  Totals are
 * compared with the emulator's truth, records with the results
 * td_region_end returned, reports are parsed back.  (The environment's
 * opt-in report: test_env_report.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "report_parse.h"

static int setup_spr(void **state)
{
	struct td *td = NULL;

	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	*state = td;
	return 0;
}

static int setup_spr_never(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(EMU_SPR);
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	*state = td;
	return 0;
}

static int teardown(void **state)
{
	td_close(*state);
	emu_teardown();
	return 0;
}

/* Sum of per-category true slots over several stretches. */
struct truth_sum {
	struct emu_truth a;   /* scratch: start of the current stretch */
	struct emu_truth sum; /* accumulated */
};

static void truth_start(struct truth_sum *t)
{
	emu_truth(&t->a);
}

static void truth_stop(struct truth_sum *t)
{
	struct emu_truth b;

	emu_truth(&b);
	t->sum.slots += b.slots - t->a.slots;
	for (int i = 0; i < 8; i++)
		t->sum.cat[i] += b.cat[i] - t->a.cat[i];
}

static struct truth_frac truth_of(const struct truth_sum *t)
{
	const struct emu_truth zero = { 0 };

	return truth_between(&zero, &t->sum);
}

/* One named call of `slots` of `mix`, truth accumulated. */
static void named_call(struct td *td, struct td_named *n, uint64_t slots,
		       const struct emu_mix *mix, struct truth_sum *t,
		       struct td_result *res)
{
	assert_int_equal(td_named_begin(td, n), 0);
	truth_start(t);
	emu_run(slots, mix);
	truth_stop(t);
	assert_int_equal(td_named_end(td, n, res), 0);
}

/*
 * Totals are slot-weighted: one long DRAM call dominates two short ones.
 * The average of the per-call ratios is far off the truth (checked, so
 * this test would catch an averaging implementation).
 */
static void test_named_totals_slot_weighted(void **state)
{
	struct td *td = *state;
	static struct td_named n = TD_NAMED_INIT("weighted");
	const uint64_t len[3] = { 5000000, 60000000, 8000000 };
	const struct emu_mix *mix[3] = { &MIX_BRANCHY, &MIX_DRAM, &MIX_STREAM };
	struct truth_sum t = { 0 };
	struct td_result res;
	struct td_totals tot;
	struct truth_frac tf;
	double avg_be = 0;

	memset(n.opaque, 0, sizeof(n.opaque));
	emu_run(2000000, &MIX_CHAIN);
	for (int i = 0; i < 3; i++) {
		named_call(td, &n, len[i], mix[i], &t, &res);
		avg_be += res.l1[TD_BE_BOUND] / 3;
		emu_run(3000000, &MIX_CHAIN); /* outside: not counted */
	}
	assert_int_equal(td_named_totals(&n, &tot), 0);
	tf = truth_of(&t);
	assert_int_equal(tot.calls, 3);
	assert_int_equal(tot.unreliable, 0);
	assert_int_equal(tot.total.slots, 73000000);
	assert_true(tot.total.flags & TD_RESULT_L2);
	assert_within(&tot.total, &tf, 0.02);
	assert_true(fabs(avg_be - tf.l1[TD_BE_BOUND]) > 0.1);
	td_named_unlink(td, &n);
}

/* min/max of each level-1 fraction are those of the calls' results. */
static void test_named_min_max(void **state)
{
	struct td *td = *state;
	struct td_named n = TD_NAMED_INIT("minmax");
	const struct emu_mix *mix[4] = { &MIX_CHAIN, &MIX_BRANCHY, &MIX_STREAM,
					 &MIX_DRAM };
	double lo[TD_L1_COUNT], hi[TD_L1_COUNT];
	struct truth_sum t = { 0 };
	struct td_result res;
	struct td_totals tot;

	for (int i = 0; i < 8; i++) {
		named_call(td, &n, 10000000 + 1000000 * (uint64_t)i,
			   mix[i % 4], &t, &res);
		for (int c = 0; c < TD_L1_COUNT; c++) {
			lo[c] = i ? fmin(lo[c], res.l1[c]) : res.l1[c];
			hi[c] = i ? fmax(hi[c], res.l1[c]) : res.l1[c];
		}
	}
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 8);
	for (int c = 0; c < TD_L1_COUNT; c++) {
		assert_true(fabs(tot.min[c] - lo[c]) < 1e-12);
		assert_true(fabs(tot.max[c] - hi[c]) < 1e-12);
		assert_true(tot.max[c] - tot.min[c] > 0.05); /* mixes differ */
	}
	assert_int_equal(td_named_unlink(td, &n), 0);
}

/* Nested named regions: the outer one's totals include the inner work. */
static void test_named_nested_inclusive(void **state)
{
	struct td *td = *state;
	struct td_named outer = TD_NAMED_INIT("outer");
	struct td_named inner = TD_NAMED_INIT("inner");
	struct truth_sum to = { 0 }, ti = { 0 };
	struct td_totals tot_o, tot_i;
	struct truth_frac fo, fi;

	for (int k = 0; k < 3; k++) {
		assert_int_equal(td_named_begin(td, &outer), 0);
		truth_start(&to);
		emu_run(10000000, &MIX_STREAM);
		named_call(td, &inner, 20000000, &MIX_DRAM, &ti, NULL);
		emu_run(10000000, &MIX_BRANCHY);
		truth_stop(&to);
		assert_int_equal(td_named_end(td, &outer, NULL), 0);
	}
	assert_int_equal(td_named_totals(&outer, &tot_o), 0);
	assert_int_equal(td_named_totals(&inner, &tot_i), 0);
	assert_int_equal(tot_o.total.slots, 3 * 40000000);
	assert_int_equal(tot_i.total.slots, 3 * 20000000);
	fo = truth_of(&to);
	fi = truth_of(&ti);
	assert_within(&tot_o.total, &fo, 0.02);
	assert_within(&tot_i.total, &fi, 0.02);
	/* enumeration: in the order of the first begin */
	assert_ptr_equal(td_named_next(td, NULL), &outer);
	assert_ptr_equal(td_named_next(td, &outer), &inner);
	assert_null(td_named_next(td, &inner));
	assert_int_equal(td_named_unlink(td, &inner), 0);
	assert_int_equal(td_named_unlink(td, &outer), 0);
	assert_null(td_named_next(td, NULL));
}

/* An unreliable call is counted and left out of the totals. */
static void test_named_unreliable(void **state)
{
	struct td *td = *state;
	struct td_named n = TD_NAMED_INIT("flaky");
	struct truth_sum t = { 0 }, junk = { 0 };
	struct td_result res;
	struct td_totals tot;
	struct truth_frac tf;

	emu_run(20000000, &MIX_STREAM);
	named_call(td, &n, 30000000, &MIX_CHAIN, &t, &res);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(8000000, &MIX_DRAM);
	emu_foreign_read();
	truth_start(&junk);
	emu_run(2000000, &MIX_DRAM);
	truth_stop(&junk);
	assert_int_equal(td_named_end(td, &n, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	named_call(td, &n, 30000000, &MIX_BRANCHY, &t, &res);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 3);
	assert_int_equal(tot.unreliable, 1);
	assert_int_equal(tot.total.slots, 60000000);
	tf = truth_of(&t);
	assert_within(&tot.total, &tf, 0.05);
	assert_int_equal(td_named_unlink(td, &n), 0);
}

/*
 * Bad input, unlink, and each handle's own slot of a region.  A named
 * region used to belong to the first handle that began it (another got
 * -EXDEV until td_close) and a begin while open gave -EALREADY: now every
 * handle keeps its own slot (one struct serves every thread) and a begin
 * while open is recursion (test_named_recursion).
 */
static void test_named_errors(void **state)
{
	struct td *td = *state, *other = NULL;
	struct td_named n = TD_NAMED_INIT("owned");
	struct td_totals tot;

	assert_int_equal(td_open(&other, NULL), 0);
	assert_int_equal(td_named_begin(NULL, &n), -EINVAL);
	assert_int_equal(td_named_begin(td, NULL), -EINVAL);
	assert_int_equal(td_named_end(td, &n, NULL), -ESRCH);
	assert_int_equal(td_named_unlink(td, &n), -ENOENT);
	assert_int_equal(td_named_begin_str(NULL, "s"), -EINVAL);
	assert_int_equal(td_named_begin_str(td, NULL), -EINVAL);
	assert_int_equal(td_named_end_str(td, NULL, NULL), -EINVAL);
	assert_int_equal(td_named_end_str(td, "never begun", NULL), -ESRCH);
	assert_int_equal(td_named_totals_str("never begun", &tot), -ENOENT);
	assert_int_equal(td_named_totals_str(NULL, &tot), -EINVAL);
	assert_int_equal(td_named_begin(td, &n), 0);
	/* other's slot of n is not begun, and not td's business */
	assert_int_equal(td_named_end(other, &n, NULL), -ESRCH);
	assert_int_equal(td_named_unlink(td, &n), -EBUSY);
	assert_int_equal(td_named_unlink(other, &n), -ENOENT);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_named_end(td, &n, NULL), -ESRCH);
	assert_int_equal(td_named_totals(&n, NULL), -EINVAL);
	assert_int_equal(td_named_totals(NULL, &tot), -EINVAL);
	assert_null(td_named_next(NULL, NULL));
	assert_null(td_named_next(other, &n));
	/* td_close adds td's totals to n; other's calls join them */
	td_close(td);
	*state = NULL;
	assert_int_equal(td_named_begin(other, &n), 0);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_named_end(other, &n, NULL), 0);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 2);
	assert_int_equal(tot.total.slots, 2000000);
	assert_int_equal(tot.open, 0);
	assert_int_equal(tot.max_depth, 1);
	assert_int_equal(td_named_unlink(other, &n), 0);
	assert_int_equal(td_named_unlink(other, &n), -ENOENT);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 2);
	td_close(other);
}

/*
 * Recursion to depth DEPTH: a named region begun at every level of a
 * recursive function is measured once, from the outermost begin to the
 * outermost end, over the work of every level; inner ends succeed with a
 * result that says it has no figures; the totals say how deep it went.
 */
#define DEPTH 1000

struct recursion {
	struct td *td;
	struct td_named *n;     /* NULL: by name */
	const char *name;
	int bad;                /* begins or ends that failed */
	int nested;             /* inner results flagged nested, unreliable */
};

static int rec_begin(struct recursion *r)
{
	return r->n ? td_named_begin(r->td, r->n)
		    : td_named_begin_str(r->td, r->name);
}

static int rec_end(struct recursion *r, struct td_result *res)
{
	return r->n ? td_named_end(r->td, r->n, res)
		    : td_named_end_str(r->td, r->name, res);
}

static void recurse(struct recursion *r, int depth, struct td_result *res)
{
	struct td_result inner;

	if (rec_begin(r) < 0)
		r->bad++;
	emu_run(10000, depth % 2 ? &MIX_DRAM : &MIX_BRANCHY);
	if (depth < DEPTH)
		recurse(r, depth + 1, &inner);
	emu_run(10000, &MIX_STREAM);
	if (rec_end(r, depth == 1 ? res : &inner) < 0)
		r->bad++;
	if (depth > 1 && (inner.flags & TD_RESULT_NESTED) &&
	    (inner.flags & TD_RESULT_UNRELIABLE) && inner.slots == 0)
		r->nested++;
}

static void check_recursion(struct td *td, struct td_named *n,
			    const char *name)
{
	struct recursion r = { td, n, name, 0, 0 };
	struct emu_truth a, b;
	struct truth_frac tf;
	struct td_result res;
	struct td_totals tot;

	emu_run(1000000, &MIX_CHAIN); /* outside: not counted */
	emu_truth(&a);
	recurse(&r, 1, &res);
	emu_truth(&b);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.nested, DEPTH - 1);
	tf = truth_between(&a, &b);
	assert_int_equal(res.slots, 2 * 10000 * DEPTH);
	assert_within(&res, &tf, 0.02);
	assert_false(res.flags & TD_RESULT_NESTED);
	if (n)
		assert_int_equal(td_named_totals(n, &tot), 0);
	else
		assert_int_equal(td_named_totals_str(name, &tot), 0);
	assert_int_equal(tot.calls, 1);
	assert_int_equal(tot.unreliable, 0);
	assert_int_equal(tot.open, 0);
	assert_int_equal(tot.max_depth, DEPTH);
	assert_int_equal(tot.total.slots, 2 * 10000 * DEPTH);
	assert_within(&tot.total, &tf, 0.02);
	/* ended at every level: nothing left to end */
	assert_int_equal(rec_end(&r, NULL), -ESRCH);
}

static void test_named_recursion(void **state)
{
	static struct td_named n = TD_NAMED_INIT("recursive");

	check_recursion(*state, &n, NULL);
	check_recursion(*state, NULL, "recursive by name");
}

/*
 * A region begun and never ended: the totals say it is open, with no
 * call counted; unlink refuses it; td_close adds it, still open, to the
 * struct's totals.
 */
static void test_named_forgotten_end(void **state)
{
	static struct td_named n = TD_NAMED_INIT("forgotten");
	struct td *td = *state;
	struct td_totals tot;

	named_call(td, &n, 2000000, &MIX_DRAM, &(struct truth_sum){ 0 }, NULL);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(3000000, &MIX_STREAM);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 1);
	assert_int_equal(tot.open, 1);
	assert_int_equal(tot.total.slots, 2000000);
	assert_int_equal(td_named_unlink(td, &n), -EBUSY);
	td_close(td);
	*state = NULL;
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 1);
	assert_int_equal(tot.open, 1);
	assert_int_equal(tot.total.slots, 2000000);
}

/*
 * Ends find their region by what they name, not by what was begun last:
 * a name buffer rewritten between nested begins, a struct and a string
 * of one name nested both ways, a region unlinked and begun again.  Each
 * region's slots are exactly the work between its begin and its end.
 */
static void test_named_lookup(void **state)
{
	static struct td_named n = TD_NAMED_INIT("same");
	struct td *td = *state;
	struct td_totals tot;
	char buf[16];

	strcpy(buf, "outer");
	assert_int_equal(td_named_begin_str(td, buf), 0);
	emu_run(100000, &MIX_CHAIN);
	strcpy(buf, "inner");
	assert_int_equal(td_named_begin_str(td, buf), 0);
	emu_run(200000, &MIX_DRAM);
	assert_int_equal(td_named_end_str(td, buf, NULL), 0);
	strcpy(buf, "outer");
	assert_int_equal(td_named_end_str(td, buf, NULL), 0);
	assert_int_equal(td_named_totals_str("inner", &tot), 0);
	assert_int_equal(tot.calls, 1);
	assert_int_equal(tot.total.slots, 200000);
	assert_int_equal(td_named_totals_str("outer", &tot), 0);
	assert_int_equal(tot.calls, 1);
	assert_int_equal(tot.open, 0);
	assert_int_equal(tot.total.slots, 300000);

	/* the string inside the struct: the string's end ends the string */
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(100000, &MIX_CHAIN);
	assert_int_equal(td_named_begin_str(td, "same"), 0);
	emu_run(200000, &MIX_DRAM);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	emu_run(400000, &MIX_STREAM);
	assert_int_equal(td_named_end_str(td, "same", NULL), 0);
	/* and the struct inside the string */
	assert_int_equal(td_named_begin_str(td, "same"), 0);
	emu_run(800000, &MIX_CHAIN);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(1600000, &MIX_DRAM);
	assert_int_equal(td_named_end_str(td, "same", NULL), 0);
	emu_run(3200000, &MIX_STREAM);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 2);
	assert_int_equal(tot.open, 0);
	assert_int_equal(tot.total.slots, 300000 + 1600000 + 3200000);
	assert_int_equal(td_named_totals_str("same", &tot), 0);
	assert_int_equal(tot.calls, 2);
	assert_int_equal(tot.open, 0);
	assert_int_equal(tot.total.slots, 600000 + 2400000);

	/* the region begun last, unlinked, then begun on a new slot */
	assert_int_equal(td_named_unlink(td, &n), 0);
	assert_int_equal(td_named_end(td, &n, NULL), -ESRCH);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(50000, &MIX_CHAIN);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 3);
	assert_int_equal(tot.total.slots, 5100000 + 50000);
}

static void assert_same_result(const struct td_result *a,
			       const struct td_result *b)
{
	assert_int_equal(a->slots, b->slots);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->resets, b->resets);
	assert_true(a->err == b->err);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_true(a->l1[i] == b->l1[i]);
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_true(a->l2[i] == b->l2[i]);
}

/* Records decode to exactly what td_region_end returned; a full buffer drops. */
static void test_records_decode_equal(void **state)
{
	struct td *td = *state;
	struct td_record buf[5];
	struct td_result direct[7], dec;
	struct td_region r = { { 0 } };
	struct td_named n = TD_NAMED_INIT("rec");
	size_t count = 99;
	uint64_t dropped = 99;

	memset(buf, 0xa5, sizeof(buf)); /* reserved words must be written */
	assert_int_equal(td_records_attach(td, buf, 5), 0);
	for (int i = 0; i < 7; i++) {
		const struct emu_mix *m = i & 1 ? &MIX_DRAM : &MIX_BRANCHY;

		if (i % 3 == 0) {
			assert_int_equal(td_named_begin(td, &n), 0);
			emu_run(3000000 + 100000 * (uint64_t)i, m);
			assert_int_equal(td_named_end(td, &n, &direct[i]), 0);
		} else {
			assert_int_equal(td_region_begin(td, &r), 0);
			emu_run(i == 4 ? 5000 : 4000000, m); /* one SHORT */
			assert_int_equal(td_region_end(td, &r, &direct[i]), 0);
		}
	}
	assert_int_equal(td_records_detach(td, &count, &dropped), 0);
	assert_int_equal(count, 5);
	assert_int_equal(dropped, 2);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(td_record_decode(&buf[i], &dec), 0);
		assert_same_result(&dec, &direct[i]);
		if (i % 3 == 0)
			assert_string_equal(buf[i].name, "rec");
		else
			assert_null(buf[i].name);
		for (size_t w = 0; w < 3; w++)
			assert_int_equal(buf[i].reserved[w], 0);
	}
	assert_true(direct[4].flags & TD_RESULT_SHORT);
	assert_int_equal(td_records_detach(td, NULL, NULL), -ENOENT);
	assert_int_equal(td_records_attach(td, NULL, 5), -EINVAL);
	assert_int_equal(td_records_attach(td, buf, 0), -EINVAL);
	assert_int_equal(td_records_attach(NULL, buf, 5), -EINVAL);
	assert_int_equal(td_records_detach(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(td_record_decode(NULL, &dec), -EINVAL);
	assert_int_equal(td_record_decode(&buf[0], NULL), -EINVAL);
	/* no buffer: td_region_end writes nothing */
	buf[0].slots = 12345;
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, NULL), 0);
	assert_int_equal(buf[0].slots, 12345);
	assert_int_equal(td_named_unlink(td, &n), 0);
}

/*
 * Records of readings: with a buffer attached and no result asked, the
 * fast end stores the boundary readings (two RDPMCs per end, as a bare
 * end, no syscall; policy never, so that no reset sends a begin to the
 * slow path); decoded while attached and after detach (which turns them
 * into counts) they hold the truth within err; a full buffer drops and
 * counts; a region with a PMI inside comes out unreliable.
 */
static void test_records_of_readings(void **state)
{
	struct td *td = *state;
	struct td_record buf[8];
	struct td_result live[8], dec;
	struct truth_frac truth[10];
	struct td_region r = { { 0 } };
	struct emu_stats s0, s1;
	size_t count = 0;
	uint64_t dropped = 0;

	memset(buf, 0xa5, sizeof(buf));
	emu_run(2000000, &MIX_STREAM);
	for (int i = 0; i < 2; i++) /* the region learns its length */
		measure_region(td, &r, 3000000, &MIX_CHAIN, NULL);
	assert_int_equal(td_records_attach(td, buf, 8), 0);
	emu_stats(&s0);
	for (int i = 0; i < 10; i++) {
		const struct emu_mix *m = i & 1 ? &MIX_DRAM : &MIX_BRANCHY;

		truth[i] = measure_region(td, &r, 3000000 + 50000 * (uint64_t)i,
					  m, NULL);
	}
	emu_stats(&s1);
	assert_int_equal(s1.syscalls - s0.syscalls, 0);
	/* SLOTS, PERF_METRICS and INT_MISC.UOP_DROPPING (pm_uop.c) at
	 * begin and end */
	assert_int_equal(s1.rdpmcs - s0.rdpmcs, 10 * 6);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(td_record_decode(&buf[i], &live[i]), 0);
		assert_within(&live[i], &truth[i], 0.5); /* no resets: err grows */
	}
	assert_int_equal(td_records_detach(td, &count, &dropped), 0);
	assert_int_equal(count, 8);
	assert_int_equal(dropped, 2);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(td_record_decode(&buf[i], &dec), 0);
		assert_same_result(&dec, &live[i]);
		assert_int_equal(buf[i].slots, 3000000 + 50000 * (uint64_t)i);
		assert_int_equal(buf[i].flags, TD_RESULT_L2);
		assert_int_equal(buf[i].resets, 0);
		assert_null(buf[i].name);
		for (size_t w = 0; w < 3; w++)
			assert_int_equal(buf[i].reserved[w], 0);
	}
	/* a PMI inside: the end is not fast, the record is of counts */
	assert_int_equal(td_records_attach(td, buf, 1), 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(3000000, &MIX_CHAIN);
	emu_pmi();
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, NULL), 0);
	assert_int_equal(td_records_detach(td, &count, NULL), 0);
	assert_int_equal(count, 1);
	assert_true(buf[0].flags & TD_RESULT_UNRELIABLE);
}

/* td_close finishes an attached buffer's records of readings. */
static void test_records_finished_at_close(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_record buf[3];
	struct td_region r = { { 0 } };
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_SPR);
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	for (int i = 0; i < 2; i++)
		measure_region(td, &r, 2000000, &MIX_CHAIN, NULL);
	assert_int_equal(td_records_attach(td, buf, 3), 0);
	for (int i = 0; i < 3; i++)
		measure_region(td, &r, 2000000 + 1000 * (uint64_t)i, &MIX_DRAM,
			       NULL);
	td_close(td);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(buf[i].slots, 2000000 + 1000 * (uint64_t)i);
		assert_int_equal(buf[i].flags, TD_RESULT_L2);
		assert_null(buf[i].name);
		assert_true(buf[i].cat[TD_CAT_MEM_BOUND] > 0); /* counts now */
	}
	emu_teardown();
}

/* Unreliable records decode as unreliable. */
static void test_records_unreliable(void **state)
{
	struct td *td = *state;
	struct td_record buf[1];
	struct td_region r = { { 0 } };
	struct td_result direct, dec;

	emu_run(20000000, &MIX_STREAM);
	assert_int_equal(td_records_attach(td, buf, 1), 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_pmi();
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &direct), 0);
	assert_int_equal(td_records_detach(td, NULL, NULL), 0);
	assert_true(buf[0].flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_record_decode(&buf[0], &dec), 0);
	assert_same_result(&dec, &direct);
}

/* Two raw readings: known fields give known fractions. */
static void test_decode_readings(void **state)
{
	/* bytes: ret bad fe be heavy br fetchlat mem */
	const uint64_t m0 = 0x0a14051e28141e32ull; /* 50 30 20 40 | 30 5 20 10 */
	const uint64_t m1 = 0x141e0a3c32142864ull; /* 100 40 20 50 | 60 10 30 20 */
	const uint64_t s0 = 1000000, s1 = 3000000;
	struct td_result r;
	double sum, ret, heavy;

	(void)state;
	/* per-category: f1*s1 - f0*s0 */
	ret = 100.0 * 3 - 50;
	sum = ret + (40.0 * 3 - 30) + (20.0 * 3 - 20) + (50.0 * 3 - 40);
	heavy = 60.0 * 3 - 30;
	assert_int_equal(td_decode_readings(s0, m0, s1, m1, 2, &r), 0);
	assert_int_equal(r.slots, 2000000);
	assert_true(r.flags & TD_RESULT_L2);
	assert_true(fabs(r.l1[TD_RETIRING] - ret / sum) < 1e-12);
	assert_true(fabs(r.l2[TD_HEAVY_OPS] - heavy / sum) < 1e-12);
	assert_true(fabs(r.l2[TD_LIGHT_OPS] - (ret - heavy) / sum) < 1e-12);
	assert_true(r.err > 0 && r.err <= 1);
	assert_int_equal(td_decode_readings(s0, m0, s1, m1, 1, &r), 0);
	assert_false(r.flags & TD_RESULT_L2);
	assert_true(r.l2[TD_HEAVY_OPS] == 0);
	assert_int_equal(td_decode_readings(s1, m1, s0, m0, 2, &r), -ERANGE);
	assert_int_equal(td_decode_readings(s0, m0, s1, m1, 3, &r), -EINVAL);
	assert_int_equal(td_decode_readings(s0, m0, s1, m1, 2, NULL), -EINVAL);
}

/* ---- reports ------------------------------------------------------------ */

/* The documented key list, in order. */
static int expected_keys(char keys[][32])
{
	static const char *const head[] = { "kind", "name", "thread",
					    "calls", "unreliable", "slots",
					    "err", "levels" };
	int n = 0;

	for (int i = 0; i < 8; i++)
		snprintf(keys[n++], 32, "%s", head[i]);
	for (int i = 0; i < TD_L1_COUNT; i++)
		snprintf(keys[n++], 32, "%s", td_l1_name(i));
	for (int i = 0; i < TD_L2_COUNT; i++)
		snprintf(keys[n++], 32, "%s", td_l2_name(i));
	for (int i = 0; i < TD_L1_COUNT; i++)
		snprintf(keys[n++], 32, "min_%s", td_l1_name(i));
	for (int i = 0; i < TD_L1_COUNT; i++)
		snprintf(keys[n++], 32, "max_%s", td_l1_name(i));
	snprintf(keys[n++], 32, "smt_contention");
	snprintf(keys[n++], 32, "basis");
	snprintf(keys[n++], 32, "max_depth");
	snprintf(keys[n++], 32, "open");
	snprintf(keys[n++], 32, "l1_bound");
	snprintf(keys[n++], 32, "l2_bound");
	snprintf(keys[n++], 32, "l3_bound");
	snprintf(keys[n++], 32, "dram_bound");
	snprintf(keys[n++], 32, "store_bound");
	snprintf(keys[n++], 32, "pmu"); /* on the emulator: every test here */
	return n;
}

/* Named regions "alpha" (2 calls) and "beta, the \"second\"" (1 call). */
static void make_regions(struct td *td, struct td_named *a,
			 struct td_named *b)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(td_named_begin(td, a), 0);
		emu_run(10000000, &MIX_CHAIN);
		assert_int_equal(td_named_end(td, a, NULL), 0);
	}
	assert_int_equal(td_named_begin(td, b), 0);
	emu_run(10000000, &MIX_DRAM);
	assert_int_equal(td_named_end(td, b, NULL), 0);
}

static char *capture_named(struct td *td, enum td_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(td_report_named(f, td, fmt), 0);
	fclose(f);
	return text;
}

static void test_report_csv(void **state)
{
	struct td *td = *state;
	struct td_named a = TD_NAMED_INIT("alpha");
	struct td_named b = TD_NAMED_INIT("beta, the \"second\"");
	char keys[40][32], f[40][64];
	int nkeys = expected_keys(keys), rows = 0;
	char *text, *line, *save = NULL;

	make_regions(td, &a, &b);
	text = capture_named(td, TD_FORMAT_CSV);
	line = strtok_r(text, "\n", &save);
	assert_int_equal(csv_split(line, f, 40), nkeys);
	for (int i = 0; i < nkeys; i++)
		assert_string_equal(f[i], keys[i]);
	while ((line = strtok_r(NULL, "\n", &save))) {
		assert_int_equal(csv_split(line, f, 40), nkeys);
		assert_string_equal(f[0], "region");
		/* in the order of the first begin */
		assert_string_equal(f[1], rows ? "beta, the \"second\"" : "alpha");
		/* this thread: the main one, its id without a name */
		assert_int_equal(atoi(f[2]), getpid());
		assert_string_equal(f[3], rows ? "1" : "2");
		assert_string_equal(f[7], "2");
		assert_string_equal(f[nkeys - 9], "slots");
		assert_string_equal(f[nkeys - 8], "1"); /* max_depth */
		assert_string_equal(f[nkeys - 7], "0"); /* open */
		/* no memory drill-down: its five columns empty */
		for (int i = nkeys - 6; i < nkeys - 1; i++)
			assert_string_equal(f[i], "");
		/* the emulator's counts say so (its in-process profiles
		 * have the name "test") */
		assert_string_equal(f[nkeys - 1], "emulated:test");
		rows++;
	}
	assert_int_equal(rows, 2);
	free(text);
	td_named_unlink(td, &a);
	td_named_unlink(td, &b);
}

static void check_jsonl(char *text, const char *kind, int want_lines)
{
	char keys[40][32], got[40][32];
	int nkeys = expected_keys(keys), lines = 0;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char want[48];

		assert_int_equal(json_flat(line, got, 40), nkeys);
		for (int i = 0; i < nkeys; i++)
			assert_string_equal(got[i], keys[i]);
		snprintf(want, sizeof(want), "{\"kind\":\"%s\",", kind);
		assert_memory_equal(line, want, strlen(want));
		lines++;
	}
	assert_int_equal(lines, want_lines);
}

static void test_report_jsonl(void **state)
{
	struct td *td = *state;
	struct td_named a = TD_NAMED_INIT("alpha");
	struct td_named b = TD_NAMED_INIT("beta, the \"second\"");
	char *text;

	make_regions(td, &a, &b);
	text = capture_named(td, TD_FORMAT_JSONL);
	assert_non_null(strstr(text, "\"name\":\"beta, the \\\"second\\\"\""));
	check_jsonl(text, "region", 2);
	free(text);
	td_named_unlink(td, &a);
	td_named_unlink(td, &b);
}

static void test_report_records_formats(void **state)
{
	struct td *td = *state;
	struct td_record buf[4];
	struct td_region r = { { 0 } };
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, count = 0;
	FILE *f;
	int lines = 0;

	assert_int_equal(td_records_attach(td, buf, 4), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(5000000, &MIX_BRANCHY);
		assert_int_equal(td_region_end(td, &r, NULL), 0);
	}
	assert_int_equal(td_records_detach(td, &count, NULL), 0);
	assert_int_equal(count, 3);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_records(f, buf, count, TD_FORMAT_JSONL), 0);
	fclose(f);
	check_jsonl(text, "record", 3);
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_records(f, buf, count, TD_FORMAT_CSV), 0);
	assert_int_equal(td_report_records(f, buf, 0, TD_FORMAT_TABLE), 0);
	assert_int_equal(td_report_records(f, buf, count, 0), -EINVAL);
	assert_int_equal(td_report_records(f, NULL, 1, TD_FORMAT_CSV), -EINVAL);
	assert_int_equal(td_report_records(NULL, buf, 1, TD_FORMAT_CSV), -EINVAL);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		lines++;
	/* CSV header + rows, the table's EMULATED line and header */
	assert_int_equal(lines, 1 + 3 + 1 + 1);
	free(text);
}

/* The table: a block per region, L2 indented under its level-1 parent. */
static void test_report_table(void **state)
{
	struct td *td = *state;
	struct td_named a = TD_NAMED_INIT("alpha");
	struct td_named b = TD_NAMED_INIT("beta");
	char *text, *line, *save = NULL;
	int lines = 0, l2_lines = 0;
	const char *l1_after = NULL;

	make_regions(td, &a, &b);
	text = capture_named(td, TD_FORMAT_TABLE);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "    ", 4) == 0) {
			l2_lines++;
			/* heavy/light under retiring, etc. */
			if (strstr(line, "heavy_operations"))
				assert_string_equal(l1_after, "retiring");
			if (strstr(line, "memory_bound"))
				assert_string_equal(l1_after, "backend_bound");
		} else if (strncmp(line, "  ", 2) == 0) {
			for (int i = 0; i < TD_L1_COUNT; i++)
				if (strncmp(line + 2, td_l1_name(i),
					    strlen(td_l1_name(i))) == 0)
					l1_after = td_l1_name(i);
		}
		lines++;
	}
	assert_int_equal(l2_lines, 2 * 8);
	assert_int_equal(lines, 1 + 2 + 2 * (1 + 4 + 8));
	assert_memory_equal(text, "EMULATED PMU (profile test)", 27);
	free(text);
	assert_int_equal(td_report_named(NULL, td, TD_FORMAT_CSV), -EINVAL);
	assert_int_equal(td_report_named(stdout, NULL, TD_FORMAT_CSV), -EINVAL);
	assert_int_equal(td_report_named(stdout, td, 7), -EINVAL);
	td_named_unlink(td, &a);
	td_named_unlink(td, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_named_totals_slot_weighted,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_named_min_max, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_named_nested_inclusive,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_named_unreliable,
						setup_spr_never, teardown),
		cmocka_unit_test_setup_teardown(test_named_recursion,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_named_lookup, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_named_forgotten_end,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_named_errors, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_records_decode_equal,
						setup_spr, teardown),
		cmocka_unit_test(test_records_finished_at_close),
		cmocka_unit_test_setup_teardown(test_records_of_readings,
						setup_spr_never, teardown),
		cmocka_unit_test_setup_teardown(test_records_unreliable,
						setup_spr_never, teardown),
		cmocka_unit_test(test_decode_readings),
		cmocka_unit_test_setup_teardown(test_report_csv, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_jsonl, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_records_formats,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_report_table, setup_spr,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
