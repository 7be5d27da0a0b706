/* SPDX-License-Identifier: MIT */
/*
 * The PERF_METRICS source on the read(2) path (RDPMC not offered: the
 * emulated sysfs rdpmc=0), where the kernel's own counts are read: their
 * 8-bit error, and what a read(2) of a switched-out group leaves behind.
 *
 * The kernel folds SLOTS and PERF_METRICS into its counts at every
 * update of the active group (arch/x86/events/intel/core.c
 * intel_update_topdown_event, __icl_update_topdown_event: per category
 * mul_u64_u32_div(slots, field, 0xff) now less the same of the values
 * saved at the last schedule-out) and zeroes both registers only where
 * read(2) reaches an active group (perf_event_read, kernel/events/core.c,
 * calls pmu->read for PERF_EVENT_STATE_ACTIVE only).  A read(2) of a
 * switched-out group therefore leaves the saved registers, which the
 * schedule-in writes back (icl_set_topdown_event_period), and the next
 * updates quantise every slot since the last zeroing, those before the
 * read(2) too.
 */
#include <stdlib.h>

#include "helpers.h"

TD_TEST_HANDLE

static struct td *open_read_path(void)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };

	emu_setup(EMU_SPR_NO_RDPMC);
	o.reset_policy = TD_RESET_AUTO;
	assert_int_equal(td_open(&cur, &o), 0);
	assert_int_equal(td_query(cur, &info), 0);
	assert_int_equal(info.path, TD_PATH_READ);
	return cur;
}

/*
 * A long stretch whose fields are exact 8-bit fractions (100, 50, 50, 55
 * of 255; level 2 20 each), so that the saved word is the truth, then
 * the region's work, whose share of retiring (ret) sets where the
 * re-quantised fields round.
 */
static const struct emu_mix MIX_EXACT = {
	{ 100.0 / 255, 50.0 / 255, 50.0 / 255, 55.0 / 255, 20.0 / 255,
	  20.0 / 255, 20.0 / 255, 20.0 / 255 }
};

static struct emu_mix region_mix(double ret)
{
	return emu_mix_l2(ret, 0.3, 0.2, 0.5 - ret, 0.02, 0.1, 0.1, 0.1);
}

/*
 * 2e8 slots, the group switched out (saved: SLOTS 2e8 and its word), the
 * region's begin by read(2) of the switched-out group (nothing zeroed),
 * the schedule-in (restored), 1e7 slots, a context switch (an update:
 * fields of 2.1e8 slots, saved, restored), 1e7 slots, the end by read(2)
 * (an update: fields of 2.2e8 slots, zeroed).  The region's 2e7 slots
 * carry the 8-bit error of two updates of over 2e8 slots each: up to
 * 4.3e8/255 slots per category, where the bound of the slots read
 * between the region's readings (2e7 and two restores: 1e8/255) is four
 * times too small.  The retiring shares were chosen where both updates
 * round retiring the same way by about half a step (found by a scan of
 * shares; each gives an error above 0.055, 1.4 times that old bound).
 */
static void switched_out_begin(double ret, double min_error)
{
	struct td *td = open_read_path();
	struct emu_mix m = region_mix(ret);
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct emu_stats s0, s1;

	emu_run(200000000, &MIX_EXACT);
	emu_deschedule();
	emu_truth(&a);
	emu_stats(&s0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_stats(&s1);
	assert_true(s1.reads > s0.reads); /* the begin read(2) the group */
	emu_reschedule();
	emu_run(10000000, &m);
	emu_context_switch(0);
	emu_run(10000000, &m);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	/* the scenario still makes the error it is for */
	if (max_error(&res, &t) < min_error)
		fail_msg("error %.5f below %.5f: not the worst case",
			 max_error(&res, &t), min_error);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_right_or_flagged(&res, &a, &b);
	close_cur();
	emu_teardown();
}

static void test_switched_out_begin_bound(void **state)
{
	(void)state;
	switched_out_begin(0.0638, 0.055);
	switched_out_begin(0.0914, 0.055);
}

/*
 * The same work inside an outer region begun on the active group: the
 * inner region's begin is the read(2) of the switched-out group, the
 * outer one's readings both zero the registers.
 */
static void test_switched_out_nested_begin_bound(void **state)
{
	struct td *td = open_read_path();
	struct emu_mix m = region_mix(0.0638);
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct emu_truth a0, a1, b;

	(void)state;
	emu_run(1000000, &MIX_EXACT);
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(200000000, &MIX_EXACT);
	emu_deschedule();
	emu_truth(&a1);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_reschedule();
	emu_run(10000000, &m);
	emu_context_switch(0);
	emu_run(10000000, &m);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &inner, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_right_or_flagged(&res, &a1, &b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_right_or_flagged(&res, &a0, &b);
}

/*
 * A read(2) of the switched-out group, then its schedule-in: the
 * kernel's count at the schedule-in (the page's offset) is still what
 * the read(2) returned, as after a read(2) that zeroed the registers
 * and a schedule-out that saved nothing; but this read(2) zeroed
 * nothing, the schedule-out before it saved 2e8 slots and the
 * schedule-in wrote them back.  Every slot was counted: not flagged.
 */
static void test_read_then_schedule_in_not_flagged(void **state)
{
	struct td *td = open_read_path();
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;

	(void)state;
	emu_run(200000000, &MIX_EXACT);
	emu_deschedule();
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_reschedule();
	emu_run(30000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_right_or_flagged(&res, &a, &b);
	/* and the next region, on the active group, as any */
	assert_region_right(td, &r, 30000000, &MIX_BRANCHY);
}

/*
 * But where the schedule-out saved nothing, the schedule-in writes
 * nothing back either and the registers hold another context's values
 * (icl_set_topdown_event_period restores only "if (hwc->saved_slots
 * ...)"): a read(2) that zeroed the registers (the outer region's begin),
 * a switch-out before a slot was counted, a read(2) of the switched-out
 * group (the inner region's begin: it zeroes nothing, and nothing was
 * saved), the schedule-in.  Regions spanning it are right or flagged.
 */
static void test_nothing_saved_still_flagged(void **state)
{
	struct td *td = open_read_path();
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct emu_truth a0, a1, b;

	(void)state;
	emu_run(50000000, &MIX_STREAM);
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_deschedule();
	emu_truth(&a1);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_reschedule();
	emu_run(30000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &inner, &res), 0);
	assert_right_or_flagged(&res, &a1, &b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	assert_right_or_flagged(&res, &a0, &b);
}

/*
 * No wider than the updates between the readings: on a hybrid part whose
 * rseq registration failed (read(2) path), after 1e10 P-core slots, an
 * E-core stint leaves cpu_core's group off the PMU (intel_pmu_filter) and
 * its counts as they were: regions of the stint carry no 8-bit error
 * (an E-to-E migration among them).  Back on a P-core, the schedule-in
 * restores the saved registers and the region's begin zeroes them
 * (read(2) of the active group), so its end's update quantises its own
 * 1e6 slots only: (1e6 + 255) / (255 x 1e6), doubled for level 2.
 * (Charging every slot since the last zeroing at every reading instead
 * gives 1, the cap, to all four.)
 */
static void test_ecore_stint_after_long_run(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;

	(void)state;
	emu_setup(EMU_ADL);
	emu_rseq_set_cpu_raw((uint32_t)-2); /* registration failed */
	assert_int_equal(td_open(&cur, &o), 0);
	assert_int_equal(td_query(cur, &info), 0);
	assert_int_equal(info.path, TD_PATH_READ);
	emu_run(10000000000ull, &MIX_STREAM);
	emu_migrate(8);
	for (int i = 0; i < 3; i++) {
		emu_truth(&a);
		assert_int_equal(td_region_begin(cur, &r), 0);
		emu_run(1000000, &MIX_CHAIN);
		if (i == 1)
			emu_migrate(9);
		emu_truth(&b);
		assert_int_equal(td_region_end(cur, &r, &res), 0);
		t = truth_between(&a, &b);
		assert_within(&res, &t, 0.001);
	}
	emu_migrate(0);
	t = measure_region(cur, &r, 1000000, &MIX_CHAIN, &res);
	/* and the kernel's floor: up to 1 slot less in each of 4 fields */
	assert_within(&res, &t, 2 * (1e6 + 5 * 255) / (255 * (1e6 - 4)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_switched_out_begin_bound,
					  teardown),
		cmocka_unit_test_teardown(test_switched_out_nested_begin_bound,
					  teardown),
		cmocka_unit_test_teardown(
			test_read_then_schedule_in_not_flagged, teardown),
		cmocka_unit_test_teardown(test_nothing_saved_still_flagged,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_stint_after_long_run,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
