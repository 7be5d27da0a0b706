/* SPDX-License-Identifier: MIT */
/*
 * End-to-end scenarios: the real begin/end code, inline RDPMC included,
 * against the emulated kernel and PMU, compared with the workload's true
 * fractions.  Every reliable result must lie within its own err, and err
 * within the bound each scenario states.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static struct td *open_profile(enum emu_profile p, enum td_reset_policy pol,
			       double target)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(p);
	o.reset_policy = pol;
	o.err_target = target;
	assert_int_equal(td_open(&td, &o), 0);
	return td;
}

static int teardown(void **state)
{
	td_close(*state);
	emu_teardown();
	return 0;
}

static int setup_spr(void **state)
{
	*state = open_profile(EMU_SPR, TD_RESET_AUTO, 0);
	return 0;
}

static int setup_icl(void **state)
{
	*state = open_profile(EMU_ICL, TD_RESET_AUTO, 0);
	return 0;
}

static int setup_spr_never(void **state)
{
	*state = open_profile(EMU_SPR, TD_RESET_NEVER, 0);
	return 0;
}

/* Plain regions of contrasting mixes, level 1 + 2, no syscall on the path. */
static void test_plain_regions_spr(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_stats s0, s1;
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };

	emu_run(2000000, &MIX_STREAM); /* warm-up before the first region */
	for (int i = 0; i < 4; i++) {
		struct truth_frac t;
		emu_stats(&s0);
		t = measure_region(td, &r, 50000000, mixes[i], &res);
		emu_stats(&s1);
		assert_true(res.flags & TD_RESULT_L2);
		assert_within(&res, &t, 0.01);
		assert_int_equal(res.slots, 50000000);
		/* only the policy's counted resets may cost a syscall */
		assert_int_equal(s1.syscalls - s0.syscalls,
				 s1.resets - s0.resets);
		/* 6 RDPMCs: SLOTS, PERF_METRICS and INT_MISC.UOP_DROPPING
		 * (pm_uop.c) at each end; a reset re-reads (the fast try,
		 * then 2 x 3) */
		assert_true(s1.rdpmcs - s0.rdpmcs >= 6);
		assert_true(s1.rdpmcs - s0.rdpmcs <=
			    6 + 6 * (s1.resets - s0.resets));
	}
}

/* Ice Lake: level 1 only, TD_RESULT_L2 clear, l2 all zero. */
static void test_plain_regions_icl(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	struct truth_frac t;

	emu_run(1000000, &MIX_CHAIN);
	t = measure_region(td, &r, 20000000, &MIX_BRANCHY, &res);
	assert_false(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, 0.005);
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_true(res.l2[i] == 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.levels, 1);
	assert_int_equal(info.path, TD_PATH_RDPMC);
}

/* Nested: inner sees only its own work, outer the slot-weighted whole. */
static void test_nested(void **state)
{
	struct td *td = *state;
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result ro, ri;
	struct emu_truth a, b, c, d;
	struct truth_frac to, tin;

	emu_run(3000000, &MIX_DRAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	emu_run(20000000, &MIX_CHAIN);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_truth(&b);
	emu_run(30000000, &MIX_BRANCHY);
	emu_truth(&c);
	assert_int_equal(td_region_end(td, &inner, &ri), 0);
	emu_run(20000000, &MIX_STREAM);
	emu_truth(&d);
	assert_int_equal(td_region_end(td, &outer, &ro), 0);
	tin = truth_between(&b, &c);
	to = truth_between(&a, &d);
	assert_within(&ri, &tin, 0.02);
	assert_within(&ro, &to, 0.02);
	assert_int_equal(ro.slots, 70000000);
}

/* Interleaved: A begins, B begins, A ends, B ends. */
static void test_interleaved(void **state)
{
	struct td *td = *state;
	struct td_region ra = { { 0 } }, rb = { { 0 } };
	struct td_result resa, resb;
	struct emu_truth a0, b0, a1, b1;
	struct truth_frac ta, tb;

	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &ra), 0);
	emu_truth(&a0);
	emu_run(25000000, &MIX_CHAIN);
	assert_int_equal(td_region_begin(td, &rb), 0);
	emu_truth(&b0);
	emu_run(25000000, &MIX_DRAM);
	emu_truth(&a1);
	assert_int_equal(td_region_end(td, &ra, &resa), 0);
	emu_run(25000000, &MIX_BRANCHY);
	emu_truth(&b1);
	assert_int_equal(td_region_end(td, &rb, &resb), 0);
	ta = truth_between(&a0, &a1);
	tb = truth_between(&b0, &b1);
	assert_within(&resa, &ta, 0.02);
	assert_within(&resb, &tb, 0.02);
}

/*
 * A context switch saves and restores: the region stays correct.  The
 * restore writes PERF_METRICS back from its 8-bit fields, so each one
 * re-quantises: err grows by the SLOTS at the switch / 255 per switch
 * (two here: 1 step at 1e7 and 2e7 slots, 2e7 at the end, doubled for
 * derived categories: 2 x 6e7 / (255 x 2e7) = 0.0235).
 */
static void test_context_switch(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;

	emu_run(100000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(10000000, &MIX_CHAIN);
	emu_context_switch(70000000);
	emu_run(10000000, &MIX_DRAM);
	emu_context_switch(5000000);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, 0.025);
	assert_int_equal(res.slots, 20000000);
}

/*
 * One context switch inside a region is one restore, though the kernel
 * writes the page three times for it (x86_pmu_del at the schedule-out;
 * icl_set_topdown_event_period and x86_pmu_start at the schedule-in).
 * What the region's categories may be off by, in 1/255-slot units: the
 * begin's and the end's 8-bit fields (S_b and S_e, the SLOTS each read)
 * and the schedule-out's fields, which the restore makes permanent (at
 * most S_e: the library cannot know the SLOTS at the switch, only that
 * they were not more).  Every reading's four level-1 fields sum to 255,
 * so Y = R (decode.c), and err = 2 (S_b + 2 S_e) / (255 slots) at most,
 * level 2 reported (derived categories: twice).  Counting each page
 * write as a restore charges S_b + 4 S_e: about twice that.
 */
static void test_one_switch_one_restore(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	const double before = 100000, slots = 20000000;
	/* no reset at the begin leaves S_b = before, S_e = before + slots */
	const double tight = 2 * (before + 2 * (before + slots)) /
			     (255 * slots);

	emu_run((uint64_t)before, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run((uint64_t)slots / 2, &MIX_CHAIN);
	emu_context_switch(5000000);
	emu_run((uint64_t)slots / 2, &MIX_DRAM);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_true(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, tight);
}

/*
 * The other way: the count of restores must never fall short, whatever
 * else writes the page and wherever the readings fall.  read(2) path:
 * the region begins with the group in (the read zeroes both registers),
 * A slots, the group goes out (x86_pmu_del: one write) and a read(2) of
 * the switched-out group (an inner region) writes nothing and zeroes
 * nothing (perf_event_read leaves an inactive event's registers alone);
 * back in (two writes, restoring A), B slots, a context switch (three
 * writes, restoring A + B), C slots, end.  Two restores in five writes
 * after the inner reading: rounding five writes down to one switch
 * would miss one.  What the kernel's counts may be off by: the fields
 * each schedule-out saved and the restore made permanent (A, then
 * A + B) and the end's (A + B + C), 3A + 2B + C in 1/255-slot units,
 * against Y <= R (the kernel's integer division rounds down), so
 * err >= 2 (3A + 2B + C) / (255 (A + B + C)), level 2 reported.
 */
static void test_restores_not_undercounted(void **state)
{
	struct td *td = *state;
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	const double A = 20000000, B = 10000000, C = 10000000;
	const double least = 2 * (3 * A + 2 * B + C) / (255 * (A + B + C));

	emu_run(100000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	emu_run((uint64_t)A, &MIX_CHAIN);
	emu_deschedule();
	assert_int_equal(td_region_begin(td, &inner), 0);
	assert_int_equal(td_region_end(td, &inner, &res), 0);
	emu_reschedule();
	emu_run((uint64_t)B, &MIX_DRAM);
	emu_context_switch(5000000);
	emu_run((uint64_t)C, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	t = truth_between(&a, &b);
	assert_true(res.flags & TD_RESULT_READ_PATH);
	assert_true(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, 1.0);
	if (res.err < least)
		fail_msg("err %.5f below %.5f", res.err, least);
}

/*
 * The group is switched out between the library's reading and its
 * IOC_RESET, so the kernel cannot zero the hardware (the reset reads an
 * inactive event): the library must notice and not count twice.
 */
static void test_reset_while_switched_out(void **state)
{
	struct td *td = *state;
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res, ro;
	struct emu_truth a, b;
	struct truth_frac t;

	emu_run(5000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	emu_run(30000000, &MIX_CHAIN);
	emu_switch_out_at_next_reset();
	t = measure_region(td, &r, 20000000, &MIX_DRAM, &res);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &ro), 0);
	assert_int_equal(res.slots, 20000000);
	assert_int_equal(ro.slots, 50000000);
	if (!(res.flags & TD_RESULT_UNRELIABLE))
		assert_within(&res, &t, 1.0);
	if (!(ro.flags & TD_RESULT_UNRELIABLE)) {
		t = truth_between(&a, &b);
		assert_within(&ro, &t, 1.0);
	}
}

/*
 * Property: whatever the number and placement of context switches and
 * mixes, every reported err holds (re-quantising restores included).
 */
static void test_err_holds_under_switches(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	unsigned seed = 12345;

	for (int i = 0; i < 500; i++) {
		struct emu_truth a, b;
		struct truth_frac t;
		int parts = 1 + (int)(rand_r(&seed) % 40);

		assert_int_equal(td_region_begin(td, &r), 0);
		emu_truth(&a);
		for (int k = 0; k < parts; k++) {
			emu_run(1000 + (uint64_t)rand_r(&seed) % 300000,
				mixes[rand_r(&seed) % 4]);
			if (rand_r(&seed) % 4)
				emu_context_switch(rand_r(&seed) % 2 ? 500000 : 0);
		}
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		t = truth_between(&a, &b);
		assert_within(&res, &t, 1.0);
		emu_run((uint64_t)rand_r(&seed) % 200000, mixes[i % 4]);
	}
}

/*
 * Someone else's read(2) (or a PMI) zeroes the registers mid-region: the
 * region is flagged, never garbage, and the next region is right again.
 * Detection needs SLOTS to go backwards against the previous reading, so
 * the handle runs without library resets (which would start the region
 * near zero: see the limitation in pm_reading.c).
 */
static void kernel_reset_case(struct td *td, void (*reset)(void))
{
	struct td_region r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	struct truth_frac t;

	emu_run(20000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(8000000, &MIX_CHAIN);
	reset();
	emu_run(2000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_true(res.l1[i] == 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.foreign_resets, 1);
	t = measure_region(td, &r, 30000000, &MIX_BRANCHY, &res);
	assert_within(&res, &t, 0.02);
}

static void test_foreign_read_reset(void **state)
{
	kernel_reset_case(*state, emu_foreign_read);
}

static void test_pmi_reset(void **state)
{
	kernel_reset_case(*state, emu_pmi);
}

/*
 * A reset followed by more slots than before it: SLOTS alone cannot tell,
 * but a category that was large before and absent after goes below its
 * quantisation bound, which flags the region.
 */
static void test_foreign_reset_seen_by_category(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;

	emu_run(10000000, &MIX_DRAM);   /* backend-bound before begin */
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(1000000, &MIX_DRAM);
	emu_foreign_read();
	emu_run(30000000, &MIX_STREAM); /* more slots, mostly retiring */
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
}

/* A nested begin's reading is a reading too: reset seen at the inner end. */
static void test_foreign_reset_seen_by_enclosing(void **state)
{
	struct td *td = *state;
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result ro, ri;

	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(9000000, &MIX_CHAIN);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_run(1000000, &MIX_CHAIN);
	emu_foreign_read();
	emu_run(1000000, &MIX_DRAM);
	assert_int_equal(td_region_end(td, &inner, &ri), 0);
	assert_int_equal(td_region_end(td, &outer, &ro), 0);
	assert_true(ri.flags & TD_RESULT_UNRELIABLE);
	assert_true(ro.flags & TD_RESULT_UNRELIABLE);
}

/* Multiplexed out (or on an E-core) mid-region: flagged. */
static void test_not_scheduled_mid_region(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;

	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_deschedule();
	emu_run(5000000, &MIX_DRAM);
	emu_reschedule();
	emu_run(5000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	t = measure_region(td, &r, 30000000, &MIX_BRANCHY, &res);
	assert_within(&res, &t, 0.02);
}

/* Not scheduled at begin (index 0): no RDPMC of stale state, flagged. */
static void test_not_scheduled_at_begin(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;

	emu_run(1000000, &MIX_STREAM);
	emu_deschedule();
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_DRAM);
	emu_reschedule();
	emu_run(5000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
}

/* Descheduled exactly at end (index 0 at the end reading): flagged. */
static void test_not_scheduled_at_end(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;

	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_deschedule();
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_true(res.l1[i] == 0);
	emu_reschedule();
	t = measure_region(td, &r, 30000000, &MIX_BRANCHY, &res);
	assert_within(&res, &t, 0.02);
}

/* Descheduled at begin and at end, counting in between: flagged. */
static void test_not_scheduled_at_begin_and_end(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;

	emu_run(1000000, &MIX_STREAM);
	emu_deschedule();
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_reschedule();
	emu_run(5000000, &MIX_CHAIN);
	emu_deschedule();
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	assert_false(res.flags & TD_RESULT_L2);
	emu_reschedule();
}

/* Multiplexed out and back between two readings, never seen at index 0. */
static void test_unscheduled_gap_between_readings(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;

	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_deschedule();
	emu_run(5000000, &MIX_DRAM); /* time_enabled runs, time_running not */
	emu_reschedule();
	emu_run(20000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
}

/*
 * A long run whose mix changes every region.  auto with a 5 pp target:
 * every region, the first
 * of the handle included, stays within its err and err within the
 * target: a region never ended is expected to last a million slots, whose
 * budget pays for the reset it needs.
 */
static void test_long_run_auto_reset(void **state)
{
	struct td *td;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	const int n = 2000;
	double worst = 0;

	(void)state;
	td = open_profile(EMU_SPR, TD_RESET_AUTO, 0.05);
	emu_run(4000000000ull, &MIX_STREAM); /* a second of earlier work */
	for (int i = 0; i < n; i++) {
		struct truth_frac t;
		t = measure_region(td, &r, 10000000, mixes[i % 4], &res);
		assert_within(&res, &t, 0.05);
		worst = fmax(worst, max_error(&res, &t));
		emu_run(1000000, mixes[(i + 1) % 4]); /* between regions */
	}
	assert_int_equal(td_query(td, &info), 0);
	/*
	 * Some resets, at most one per region, and within the budget of the
	 * measured slots (5% at 40,000 slots a reset).  A region is expected
	 * to last no more than the accuracy domain (1e6 slots) for the error
	 * side, so regions of 1e7 reset at every call, for 0.4% of their
	 * slots.
	 */
	assert_true(info.resets >= n / 10);
	assert_true(info.resets <= (uint64_t)n);
	assert_true((double)info.resets * 40000 <= 0.05 * n * 1e7);
	print_message("long run: %d regions, %llu resets, max error %.4f\n", n,
		      (unsigned long long)info.resets, worst);
	td_close(td);
	emu_teardown();
}

/* Without resets the same run drifts past any target: err must say so. */
static void test_never_reports_growing_err(void **state)
{
	struct td *td = *state;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;
	double first_err = 0;

	for (int i = 0; i < 200; i++) {
		t = measure_region(td, &r, 1000000, i & 1 ? &MIX_CHAIN : &MIX_DRAM,
			       &res);
		assert_within(&res, &t, 1.0);
		if (i == 0)
			first_err = res.err;
	}
	assert_true(res.err > 10 * first_err);
	assert_int_equal(res.resets, 0);
}

/* The always policy: one counted reset per region, error of one step. */
static void test_always_policy_env(void **state)
{
	struct td *td = NULL;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_stats s0, s1;
	struct truth_frac t;

	(void)state;
	emu_setup(EMU_SPR);
	setenv("TOPDOWN_RESET", "always", 1);
	assert_int_equal(td_open(&td, NULL), 0);
	unsetenv("TOPDOWN_RESET");
	emu_run(50000000, &MIX_STREAM);
	for (int i = 0; i < 10; i++) {
		emu_stats(&s0);
		t = measure_region(td, &r, 100000, &MIX_BRANCHY, &res);
		emu_stats(&s1);
		assert_int_equal(s1.resets - s0.resets, 1);
		assert_int_equal(res.resets, 0); /* before the region, not in */
		/* 2 steps for derived categories, plus the begin reading */
		assert_within(&res, &t, 2.0 / 255 + 0.001);
	}
	td_close(td);
	emu_teardown();
}

/* RDPMC disabled (sysfs rdpmc=0): read(2) path, still right. */
static void test_rdpmc_disabled_read_path(void **state)
{
	struct td *td = *state;
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	struct emu_stats s;
	struct emu_truth a, b;
	struct truth_frac t;

	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_READ);
	emu_run(5000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	for (int i = 0; i < 3; i++) {
		t = measure_region(td, &r, 20000000, i ? &MIX_DRAM : &MIX_CHAIN,
			       &res);
		assert_true(res.flags & TD_RESULT_READ_PATH);
		assert_within(&res, &t, 0.01);
		emu_run(100000, &MIX_STREAM);
		emu_context_switch(1000000);
	}
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, 0.03); /* 3 switches, re-quantised */
	emu_stats(&s);
	assert_int_equal(s.rdpmcs, 0);
}

/*
 * Metrics-clear mode, whichever RDPMC triggers the clear: every region
 * within one 8-bit step (two for derived categories) at every length,
 * nested ones included, with no syscall at all.
 */
static void metrics_clear_case(enum emu_clear_trigger trigger)
{
	struct td *td = NULL;
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	struct emu_stats s0, s1;
	struct emu_truth a, b;
	struct truth_frac t;
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };

	emu_setup(EMU_LNL);
	emu_set_metrics_clear_trigger(trigger);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_true(info.flags & TD_INFO_METRICS_CLEAR);
	emu_run(7000000000ull, &MIX_STREAM); /* long run before the first */
	emu_stats(&s0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	for (int i = 0; i < 400; i++) {
		uint64_t len = 10000ull << (i % 10); /* 1e4 .. 5e6 slots */
		t = measure_region(td, &r, len, mixes[i % 4], &res);
		assert_within(&res, &t, 2.0 / 255 + 1e-9);
		emu_run(len / 3, mixes[(i + 1) % 4]);
	}
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	emu_stats(&s1);
	t = truth_between(&a, &b);
	assert_within(&res, &t, 2.0 / 255 + 1e-9);
	assert_int_equal(s1.syscalls - s0.syscalls, 0);
	assert_int_equal(s1.resets - s0.resets, 0);
	td_close(td);
	emu_teardown();
}

/*
 * Metrics-clear mode's fast path (pm_clear_fast.c) refuses a page that
 * moved since the last reading: regions with forty context switches each
 * (the kernel restores the registers re-quantised) end on the slow path,
 * which counts the restores into err, and short regions around them go
 * fast again: every one within its err.  A reading follows each switch
 * (an empty inner region): a reading after two switches could not prove
 * the first (pm_reading.c clear_judge_restores).  The only syscalls are
 * the resets that zero the kernel's saved registers after a schedule-in
 * is judged (clear_zero_saved): at most one per switch.
 */
static void metrics_clear_switches(enum emu_clear_trigger trigger)
{
	struct td *td = NULL;
	struct td_region r = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct emu_stats s0, s1;
	struct emu_truth a, b;
	struct truth_frac t;

	emu_setup(EMU_LNL);
	emu_set_metrics_clear_trigger(trigger);
	assert_int_equal(td_open(&td, NULL), 0);
	t = measure_region(td, &r, 100000, &MIX_CHAIN, &res); /* the probe */
	emu_stats(&s0);
	for (int i = 0; i < 20; i++) {
		emu_truth(&a);
		assert_int_equal(td_region_begin(td, &r), 0);
		for (int k = 0; k < 40; k++) { /* each restore re-quantises */
			emu_run(100000 + 7919 * (uint64_t)(40 * i + k),
				(i + k) & 1 ? &MIX_DRAM : &MIX_BRANCHY);
			emu_context_switch(1000000);
			assert_int_equal(td_region_begin(td, &inner), 0);
			assert_int_equal(td_region_end(td, &inner, NULL), 0);
		}
		emu_run(200000, &MIX_STREAM);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		t = truth_between(&a, &b);
		assert_within(&res, &t, 0.5);
		t = measure_region(td, &r, 50000, &MIX_CHAIN, &res);
		assert_within(&res, &t, 2.0 / 255 + 1e-9);
	}
	emu_stats(&s1);
	assert_int_equal(s1.syscalls - s0.syscalls, s1.resets - s0.resets);
	assert_in_range(s1.resets - s0.resets, 1, 20 * 40);
	td_close(td);
	emu_teardown();
}

static void test_metrics_clear_switches(void **state)
{
	(void)state;
	metrics_clear_switches(EMU_CLEAR_ON_METRICS);
	metrics_clear_switches(EMU_CLEAR_ON_SLOTS);
}

/*
 * The policy's budget (README, "Precision and resets") pays for the
 * resets metrics-clear mode makes after a schedule-in it judged
 * (pm_reading.c clear_zero_saved) from the slots measured while a region
 * was open: budget x measured, banked up to one reset's cost, plus the
 * coming region's expected length (1e6 slots where unknown).  With a
 * cost of 1e6 and a budget of 5%, a switch after 18e6 measured slots
 * gets no reset (900000 + 50000 < 1e6), one after 2e6 more does.  The
 * regions are pairs and nested pairs ended on the fast path, which
 * folds no reading of a pair and counts its slots into the measured
 * ones itself: the budget must see the slots the regions ran, no more,
 * no less.
 */
static void metrics_clear_budget(enum emu_clear_trigger trigger)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;
	struct td_region r = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct emu_stats s0, s1;

	emu_setup(EMU_LNL);
	emu_set_metrics_clear_trigger(trigger);
	o.reset_cost_slots = 1000000;
	o.reset_budget = 0.05;
	assert_int_equal(td_open(&td, &o), 0);
	measure_region(td, &r, 1000, &MIX_CHAIN, &res); /* the probe */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < (round ? 2 : 18); i++) {
			assert_int_equal(td_region_begin(td, &r), 0);
			if (i & 1)
				assert_int_equal(td_region_begin(td, &inner), 0);
			emu_run(1000000, &MIX_BRANCHY);
			if (i & 1)
				assert_int_equal(td_region_end(td, &inner, NULL),
						 0);
			assert_int_equal(td_region_end(td, &r, NULL), 0);
		}
		emu_run(5000, &MIX_CHAIN); /* outside any region */
		emu_stats(&s0);
		emu_context_switch(1000000);
		assert_int_equal(td_region_begin(td, &inner), 0); /* judged */
		assert_int_equal(td_region_end(td, &inner, NULL), 0);
		emu_stats(&s1);
		assert_int_equal(s1.resets - s0.resets, round);
	}
	td_close(td);
	emu_teardown();
}

static void test_metrics_clear_budget(void **state)
{
	(void)state;
	metrics_clear_budget(EMU_CLEAR_ON_METRICS);
	metrics_clear_budget(EMU_CLEAR_ON_SLOTS);
}

static void test_metrics_clear_on_metrics_read(void **state)
{
	(void)state;
	metrics_clear_case(EMU_CLEAR_ON_METRICS);
}

static void test_metrics_clear_on_slots_read(void **state)
{
	(void)state;
	metrics_clear_case(EMU_CLEAR_ON_SLOTS);
}

/*
 * Until a reading has seen slots, the trigger is unknown; if the very
 * first region's end is where the SLOTS read turns out to clear, that
 * region's categories are lost: flagged, never wrong.  The next is right.
 */
static void test_metrics_clear_first_region_unknown(void **state)
{
	struct td *td = NULL;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;

	(void)state;
	emu_setup(EMU_LNL);
	emu_set_metrics_clear_trigger(EMU_CLEAR_ON_SLOTS);
	assert_int_equal(td_open(&td, NULL), 0);
	t = measure_region(td, &r, 1000000, &MIX_DRAM, &res);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	t = measure_region(td, &r, 1000000, &MIX_CHAIN, &res);
	assert_within(&res, &t, 2.0 / 255 + 1e-9);
	td_close(td);
	emu_teardown();
}

/*
 * The reset budget is a share of the measured slots: 2000 regions of
 * 1e3 slots after a long run without a reset measure 2e6 slots, and 5%
 * of them pays for 2 resets of 40,000 slots (the default cost model),
 * not 3; every region keeps its err.  Counted from the emulator's
 * IOC_RESETs, and the bound computed here from the options' defaults.
 */
static void test_budget_of_measured_slots(void **state)
{
	struct td *td = open_profile(EMU_SPR, TD_RESET_AUTO, 0);
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_stats s0, s1;
	const int n = 2000;
	const uint64_t len = 1000;

	(void)state;
	emu_run(10000000000ull, &MIX_STREAM);
	emu_stats(&s0);
	for (int i = 0; i < n; i++) {
		struct truth_frac t = measure_region(td, &r, len, &MIX_CHAIN,
						     &res);
		assert_within(&res, &t, 1.0);
		emu_run(len + 10, &MIX_BRANCHY);
	}
	emu_stats(&s1);
	assert_true((double)(s1.resets - s0.resets) * 40000 <=
		    0.05 * (double)n * (double)len);
	assert_true(s1.resets - s0.resets >= 1); /* the budget is used */
	td_close(td);
	emu_teardown();
}

/* TD_OPT_NO_METRICS_CLEAR: ordinary cumulative readings on LNL. */
static void test_metrics_clear_opt_out(void **state)
{
	struct td *td = NULL;
	struct td_options o = TD_OPTIONS_INIT;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };
	struct truth_frac t;

	(void)state;
	emu_setup(EMU_LNL);
	o.flags = TD_OPT_NO_METRICS_CLEAR;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_false(info.flags & TD_INFO_METRICS_CLEAR);
	emu_run(5000000, &MIX_STREAM);
	/* the first call: no reset (length unknown, nothing measured yet) */
	t = measure_region(td, &r, 20000000, &MIX_DRAM, &res);
	assert_within(&res, &t, 1.0);
	emu_run(5000000, &MIX_STREAM);
	t = measure_region(td, &r, 20000000, &MIX_DRAM, &res);
	assert_within(&res, &t, 0.01);
	td_close(td);
	emu_teardown();
}

static int setup_no_rdpmc(void **state)
{
	*state = open_profile(EMU_SPR_NO_RDPMC, TD_RESET_AUTO, 0);
	return 0;
}

static int setup_no_rdpmc_never(void **state)
{
	*state = open_profile(EMU_SPR_NO_RDPMC, TD_RESET_NEVER, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plain_regions_spr,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_plain_regions_icl,
						setup_icl, teardown),
		cmocka_unit_test_setup_teardown(test_nested, setup_spr,
						teardown),
		cmocka_unit_test_setup_teardown(test_interleaved, setup_spr,
						teardown),
		cmocka_unit_test(test_metrics_clear_switches),
		cmocka_unit_test(test_metrics_clear_budget),
		cmocka_unit_test_setup_teardown(test_context_switch,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_err_holds_under_switches,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_one_switch_one_restore,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_restores_not_undercounted,
						setup_no_rdpmc_never, teardown),
		cmocka_unit_test_setup_teardown(test_reset_while_switched_out,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_read_reset,
						setup_spr_never, teardown),
		cmocka_unit_test_setup_teardown(test_pmi_reset,
						setup_spr_never, teardown),
		cmocka_unit_test_setup_teardown(
			test_foreign_reset_seen_by_enclosing, setup_spr_never,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_foreign_reset_seen_by_category, setup_spr_never,
			teardown),
		cmocka_unit_test_setup_teardown(test_not_scheduled_mid_region,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_not_scheduled_at_begin,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(test_not_scheduled_at_end,
						setup_spr, teardown),
		cmocka_unit_test_setup_teardown(
			test_not_scheduled_at_begin_and_end, setup_spr,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_unscheduled_gap_between_readings, setup_spr,
			teardown),
		cmocka_unit_test(test_long_run_auto_reset),
		cmocka_unit_test(test_budget_of_measured_slots),
		cmocka_unit_test_setup_teardown(test_never_reports_growing_err,
						setup_spr_never, teardown),
		cmocka_unit_test(test_always_policy_env),
		cmocka_unit_test_setup_teardown(test_rdpmc_disabled_read_path,
						setup_no_rdpmc, teardown),
		cmocka_unit_test(test_metrics_clear_on_metrics_read),
		cmocka_unit_test(test_metrics_clear_on_slots_read),
		cmocka_unit_test(test_metrics_clear_first_region_unknown),
		cmocka_unit_test(test_metrics_clear_opt_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
