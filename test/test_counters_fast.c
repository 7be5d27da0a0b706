/* SPDX-License-Identifier: MIT */
/*
 * The ordinary-counter fast path (sources/counters/counters_fast.c) on the
 * emulator: a begin reads each counter once and no file; an end asked
 * for nothing reads nothing; one with a result or a record reads each
 * counter once.  Whatever rewrites a page between begin and end (a
 * context switch moving the counters, a deschedule) sends the end to the
 * slow path, and the numbers stay exact (or flagged where counting
 * stopped).  Truth: the emulator's counts of the workload.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "emu.h"
#include "topdown.h"
#include "helpers.h"

#define EXACT 1e-6

struct profile {
	enum emu_profile emu;
	unsigned counters; /* events the model opens (its formula's) */
	bool amd;          /* SMT contention in the truth's cat[8] */
};

/*
 * Zen 4: PipelineL1's six events; Skylake V4.5 and Gracemont: five.
 * Region lengths are multiples of 60 slots: whole cycles at widths 4-6.
 */
static const struct profile profiles[] = {
	{ EMU_ZEN4, 6, true },
	{ EMU_SKL, 5, false },
	{ EMU_GRT, 5, false },
};

static struct emu_mix mix_of(const struct profile *p, unsigned i)
{
	double f = 0.05 * (double)(i % 5);

	return p->amd ? emu_mix_amd(0.3 + f, 0.1, 0.2, 0.1)
		      : emu_mix_l1(0.3 + f, 0.1, 0.2, 0.4 - f);
}

static struct td *open_warm(const struct profile *p)
{
	struct td_info info = { .size = sizeof(info) };
	struct td_region warm = { { 0 } };
	struct td *td;

	emu_setup(p->emu);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	/* a first region takes the slow path and leaves the view set */
	assert_int_equal(td_region_begin(td, &warm), 0);
	assert_int_equal(td_region_end(td, &warm, NULL), 0);
	return td;
}

static void stats(struct emu_stats *s)
{
	emu_stats(s);
}

/*
 * What a pair reads: the begin each counter once; the end nothing when
 * nothing is asked of it, each counter once for a result; no read(2).
 * The slow path reads every counter at both ends, so a pair without a
 * result reading more than `counters` times fails here.
 */
static void test_reads_per_pair(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		const struct profile *p = &profiles[i];
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, i);
		struct td_region reg = { { 0 } };
		struct emu_stats s0, s1;
		struct truth_frac t;
		struct td_result r;

		for (int k = 0; k < 3; k++) {
			stats(&s0);
			assert_int_equal(td_region_begin(td, &reg), 0);
			emu_run(100000, &m);
			assert_int_equal(td_region_end(td, &reg, NULL), 0);
			stats(&s1);
			assert_int_equal(s1.rdpmcs - s0.rdpmcs, p->counters);
			assert_int_equal(s1.reads - s0.reads, 0);
			assert_int_equal(s1.syscalls - s0.syscalls, 0);
		}
		stats(&s0);
		t = measure_region(td, &reg, 240000, &m, &r);
		stats(&s1);
		assert_int_equal(s1.rdpmcs - s0.rdpmcs, 2 * p->counters);
		assert_int_equal(s1.syscalls - s0.syscalls, 0);
		assert_int_equal(r.slots, 240000);
		assert_within(&r, &t, EXACT);
		td_close(td);
		emu_teardown();
	}
}

/*
 * Regions nested and interleaved on the fast path: each its own begin
 * values, each exact.
 */
static void test_nested_interleaved(void **state)
{
	const struct profile *p = &profiles[0];
	struct td *td = open_warm(p);
	struct emu_mix m1 = mix_of(p, 1), m2 = mix_of(p, 3);
	struct td_region a = { { 0 } }, b = { { 0 } };
	struct emu_truth t0, t1, t2, t3;
	struct truth_frac ta, tb;
	struct td_result ra, rb;

	(void)state;
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &a), 0);
	emu_run(300000, &m1);
	emu_truth(&t1);
	assert_int_equal(td_region_begin(td, &b), 0);
	emu_run(480000, &m2);
	emu_truth(&t2);
	assert_int_equal(td_region_end(td, &a, &ra), 0); /* a ends first */
	emu_run(180000, &m1);
	emu_truth(&t3);
	assert_int_equal(td_region_end(td, &b, &rb), 0);
	ta = truth_between(&t0, &t2);
	tb = truth_between(&t1, &t3);
	assert_int_equal(ra.slots, 780000);
	assert_int_equal(rb.slots, 660000);
	assert_within(&ra, &ta, EXACT);
	assert_within(&rb, &tb, EXACT);
	td_close(td);
}

/*
 * A context switch between begin and end rewrites every page (the group
 * leaves and comes back, its counters reprogrammed): the end sees the
 * lock move, takes the slow path, and the begin's values, kept as
 * counts since the group was enabled, still give the exact region.
 */
static void test_switch_inside_region(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		const struct profile *p = &profiles[i];
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, i + 2);
		struct td_region reg = { { 0 } };
		struct emu_truth t0, t1, t2;
		struct truth_frac t;
		struct td_result r;

		emu_truth(&t0);
		assert_int_equal(td_region_begin(td, &reg), 0);
		emu_run(420000, &m);
		emu_context_switch(123457);
		emu_run(420000, &m);
		emu_truth(&t1);
		assert_int_equal(td_region_end(td, &reg, &r), 0);
		t = truth_between(&t0, &t1);
		assert_int_equal(r.slots, t1.slots - t0.slots);
		assert_within(&r, &t, EXACT);
		/* the next pair is fast again, and exact */
		emu_truth(&t1);
		t = measure_region(td, &reg, 300000, &m, &r);
		emu_truth(&t2);
		assert_int_equal(r.slots, t2.slots - t1.slots);
		assert_within(&r, &t, EXACT);
		td_close(td);
		emu_teardown();
	}
}

/*
 * The race the lock check after each read is for: the thread switched
 * out and in again between the end's first check and its reads (the
 * scheduling model's switch just before an RDPMC), the counters moved
 * meanwhile.  The value read is then another counter's: the check sees
 * the lock moved, the slow path reads again, the region stays exact.
 * At the begin the same.
 */
static void test_switch_between_reads(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		const struct profile *p = &profiles[i];
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, i + 1);
		struct emu_sched_event sw = { .kind = EMU_SCHED_SWITCH_OUT };
		struct td_region reg = { { 0 } };
		struct emu_truth t0, t1;
		struct truth_frac t;
		struct td_result r;

		for (int at_begin = 0; at_begin < 2; at_begin++) {
			emu_run(60000, &m);
			if (at_begin)
				emu_schedule(EMU_AT_RDPMC, &sw);
			emu_truth(&t0);
			assert_int_equal(td_region_begin(td, &reg), 0);
			emu_run(360000, &m);
			emu_truth(&t1);
			if (!at_begin)
				emu_schedule(EMU_AT_RDPMC, &sw);
			assert_int_equal(td_region_end(td, &reg, &r), 0);
			t = truth_between(&t0, &t1);
			assert_int_equal(r.slots, t1.slots - t0.slots);
			assert_within(&r, &t, EXACT);
		}
		td_close(td);
		emu_teardown();
	}
}

/* Descheduled inside the region: time not counted, the region flagged. */
static void test_deschedule_flags(void **state)
{
	const struct profile *p = &profiles[1];
	struct td *td = open_warm(p);
	struct emu_mix m = mix_of(p, 0);
	struct td_region reg = { { 0 } };
	struct td_result r;

	(void)state;
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(300000, &m);
	emu_deschedule();
	emu_run(5000, &m);
	emu_reschedule();
	emu_run(300000, &m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_true(r.flags & TD_RESULT_UNRELIABLE);
	td_close(td);
}

/*
 * Records on the fast path: each end with a buffer attached reads and
 * writes one record; decoded, each is its region, exactly; a switch in
 * one of them changes nothing of that.
 */
static void test_records(void **state)
{
	const struct profile *p = &profiles[0];
	struct td *td = open_warm(p);
	struct td_record recs[16];
	struct truth_frac t[16];
	struct td_region reg = { { 0 } };
	size_t n = 0;
	uint64_t dropped = 1;

	(void)state;
	assert_int_equal(td_records_attach(td, recs, 16), 0);
	for (unsigned i = 0; i < 16; i++) {
		struct emu_mix m = mix_of(p, i);
		struct emu_truth a, b;

		assert_int_equal(td_region_begin(td, &reg), 0);
		emu_truth(&a);
		emu_run(60000 + 600 * i, &m);
		if (i == 7)
			emu_context_switch(999);
		emu_run(600, &m);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &reg, NULL), 0);
		t[i] = truth_between(&a, &b);
	}
	assert_int_equal(td_records_detach(td, &n, &dropped), 0);
	assert_int_equal(n, 16);
	assert_int_equal(dropped, 0);
	for (unsigned i = 0; i < 16; i++) {
		struct td_result r;

		assert_int_equal(td_record_decode(&recs[i], &r), 0);
		assert_int_equal(r.slots, 60600 + 600 * i);
		assert_within(&r, &t[i], EXACT);
	}
	td_close(td);
}

/*
 * A record copied out of its buffer while attached still holds the
 * fast end's counter differences, not counts: td_record_decode, which
 * is pure, must turn it into its region after the handle is closed,
 * exactly, on every ordinary-counter model (its formula and events
 * known without the handle, freed by td_close; under ASan reading it is
 * a use-after-free, make test-asan).
 */
static void test_record_decoded_after_close(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		const struct profile *p = &profiles[i];
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, i + 2);
		struct td_record recs[2], copy;
		struct td_region reg = { { 0 } };
		struct emu_truth a, b;
		struct truth_frac t;
		struct td_result r;

		assert_int_equal(td_records_attach(td, recs, 2), 0);
		assert_int_equal(td_region_begin(td, &reg), 0);
		emu_truth(&a);
		emu_run(120000, &m);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &reg, NULL), 0);
		t = truth_between(&a, &b);
		copy = recs[0]; /* attached: the fast end's raw record */
		td_close(td);
		assert_int_equal(td_record_decode(&copy, &r), 0);
		assert_int_equal(r.slots, 120000);
		assert_false(r.flags & TD_RESULT_UNRELIABLE);
		assert_within(&r, &t, EXACT);
		/* the buffer td_close finished decodes to the same */
		assert_int_equal(td_record_decode(&recs[0], &r), 0);
		assert_int_equal(r.slots, 120000);
		assert_within(&r, &t, EXACT);
		emu_teardown();
	}
}

/* A named region's totals on the fast path: every call, exactly. */
static void test_named_totals(void **state)
{
	const struct profile *p = &profiles[2];
	struct td *td = open_warm(p);
	static struct td_named n = TD_NAMED_INIT("fast");
	struct emu_mix m = mix_of(p, 4);
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_totals tot;

	(void)state;
	emu_truth(&a);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(50000, &m);
		assert_int_equal(td_named_end(td, &n, NULL), 0);
	}
	emu_truth(&b);
	t = truth_between(&a, &b);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 10);
	assert_int_equal(tot.unreliable, 0);
	assert_int_equal(tot.total.slots, 500000);
	assert_within(&tot.total, &t, EXACT);
	assert_int_equal(td_named_unlink(td, &n), 0);
	td_close(td);
}

/*
 * A long region: some counter advances by more than 2^44 between its
 * begin and end (minutes of counting: Zen's per-slot events at 6 slots a
 * cycle, Arm's STALL_SLOT at the pipeline's width).  The slow path has
 * no limit on a region's length (its guard is between readings, and
 * read(2) settles a large step), so the region is exact and reliable;
 * and the next region with the same object too.
 */
static void test_long_region(void **state)
{
	const struct profile *p = &profiles[0];
	struct td *td = open_warm(p);
	struct emu_mix m = mix_of(p, 2);
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;

	(void)state;
	/* a short pair first: the region's key is set, its begins fast */
	t = measure_region(td, &reg, 60000, &m, &r);
	assert_false(r.flags & TD_RESULT_UNRELIABLE);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	/* 16 x 60 x 2^37 slots (~2^47), whole cycles, PMIs in between */
	for (int i = 0; i < 16; i++)
		emu_run(UINT64_C(60) << 37, &m);
	emu_truth(&t1);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	t = truth_between(&t0, &t1);
	assert_int_equal(r.slots, t1.slots - t0.slots);
	assert_false(r.flags & TD_RESULT_UNRELIABLE);
	assert_within(&r, &t, EXACT);
	/* the same object again, a short region: reliable, exact */
	t = measure_region(td, &reg, 60000, &m, &r);
	assert_int_equal(r.slots, 60000);
	assert_false(r.flags & TD_RESULT_UNRELIABLE);
	assert_within(&r, &t, EXACT);
	td_close(td);
}

/* General-purpose counters a test steps one by one (emu_stale_counting). */
#define EMU_GP_STEPS 8

/*
 * A long region with readings inside it, each within the guard's step of
 * the last, and work after the last: its end's differences pass 2^44
 * while every step is short.  Begun on td (warm), t0 its truth at the
 * begin.
 */
static void long_region_begin(struct td *td, struct td_region *reg,
			      const struct emu_mix *m, struct emu_truth *t0)
{
	struct td_region in = { { 0 } };

	emu_truth(t0);
	assert_int_equal(td_region_begin(td, reg), 0);
	/* 16 x 60 x 2^37 slots (~2^47), a reading after each 2^43 */
	for (int i = 0; i < 16; i++) {
		emu_run(UINT64_C(60) << 37, m);
		assert_int_equal(td_region_begin(td, &in), 0);
		assert_int_equal(td_region_end(td, &in, NULL), 0);
	}
	emu_run(40000020, m); /* the end's steps: ~10^7 on each counter */
}

/*
 * Such a region's end is read once on the fast path (no read(2), no
 * second reading), exact and reliable.  That reading is the guard's base
 * from then on: a stale page whose register reads one counter `back`
 * below it (though above the region's last inner reading, the work
 * after it) must be refused at the next begin, read(2) beginning the
 * region exactly (as test_guards.c stale_back_on), on whichever counter
 * it lands.
 */
static void test_long_region_read_between(void **state)
{
	const uint64_t back = 200000;
	const struct profile *p = &profiles[0];

	(void)state;
	for (unsigned c = 0; c < p->counters; c++) {
		uint64_t steps[EMU_GP_STEPS] = { 0 };
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, 2);
		struct td_region reg = { { 0 } };
		struct emu_truth t0, t1;
		struct emu_stats s0, s1;
		struct truth_frac t;
		struct td_result r;

		measure_region(td, &reg, 60000, &m, &r); /* begins fast */
		long_region_begin(td, &reg, &m, &t0);
		emu_truth(&t1);
		stats(&s0);
		assert_int_equal(td_region_end(td, &reg, &r), 0);
		stats(&s1);
		assert_int_equal(s1.rdpmcs - s0.rdpmcs, p->counters);
		assert_int_equal(s1.reads - s0.reads, 0);
		assert_int_equal(s1.syscalls - s0.syscalls, 0);
		t = truth_between(&t0, &t1);
		assert_int_equal(r.slots, t1.slots - t0.slots);
		assert_within(&r, &t, EXACT);
		/* 48-bit registers: `back` below the end's reading */
		steps[c] = (UINT64_C(1) << 48) - back;
		emu_stale_counting(steps, EMU_GP_STEPS);
		emu_deschedule();
		emu_truth(&t0);
		stats(&s0);
		assert_int_equal(td_region_begin(td, &reg), 0);
		stats(&s1);
		assert_int_equal(s1.reads - s0.reads, 1); /* refused: read(2) */
		emu_reschedule();
		emu_run(3000000, &m);
		emu_truth(&t1);
		assert_int_equal(td_region_end(td, &reg, &r), 0);
		t = truth_between(&t0, &t1);
		assert_int_equal(r.slots, t1.slots - t0.slots);
		assert_within(&r, &t, EXACT);
		td_close(td);
		emu_teardown();
	}
}

/*
 * The same long region, switched out just before its end, no work
 * since, its page left stale (emu_stale_counting): one register reads
 * another context's count, 2^45 past ours.  The end's differences pass
 * 2^44 anyway, so only the check of each step apart sees the jump: the
 * reading is refused, and read(2) gives the exact counts.  The jump goes
 * to each counter in turn.
 */
static void test_long_region_jump_at_end(void **state)
{
	const struct profile *p = &profiles[0];

	(void)state;
	for (unsigned c = 0; c < p->counters; c++) {
		uint64_t steps[EMU_GP_STEPS] = { 0 };
		struct td *td = open_warm(p);
		struct emu_mix m = mix_of(p, 2);
		struct td_region reg = { { 0 } };
		struct emu_truth t0, t1;
		struct emu_stats s0, s1;
		struct truth_frac t;
		struct td_result r;

		measure_region(td, &reg, 60000, &m, &r); /* begins fast */
		long_region_begin(td, &reg, &m, &t0);
		emu_truth(&t1);
		steps[c] = UINT64_C(1) << 45;
		emu_stale_counting(steps, EMU_GP_STEPS);
		emu_deschedule();
		stats(&s0);
		assert_int_equal(td_region_end(td, &reg, &r), 0);
		stats(&s1);
		assert_int_equal(s1.reads - s0.reads, 1); /* read(2), exact */
		t = truth_between(&t0, &t1);
		assert_int_equal(r.slots, t1.slots - t0.slots);
		assert_within(&r, &t, EXACT);
		td_close(td);
		emu_teardown();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_per_pair),
		cmocka_unit_test_teardown(test_nested_interleaved,
					  teardown_emu),
		cmocka_unit_test(test_switch_inside_region),
		cmocka_unit_test(test_switch_between_reads),
		cmocka_unit_test_teardown(test_deschedule_flags, teardown_emu),
		cmocka_unit_test_teardown(test_records, teardown_emu),
		cmocka_unit_test(test_record_decoded_after_close),
		cmocka_unit_test_teardown(test_named_totals, teardown_emu),
		cmocka_unit_test_teardown(test_long_region, teardown_emu),
		cmocka_unit_test_teardown(test_long_region_read_between,
					  teardown_emu),
		cmocka_unit_test_teardown(test_long_region_jump_at_end,
					  teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
