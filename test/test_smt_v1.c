/* SPDX-License-Identifier: MIT */
/*
 * Intel V4.5 with SMT on (AnyThread granted, refused, SMT off) and V1
 * (Silvermont) end to end on the emulated kernel.  Expected fractions
 * come from the workload's true composition; the emulated sibling thread
 * runs as many clocks as this one, so the _ANY form halved is exact.
 */
#include <errno.h>
#include <string.h>

#include "helpers.h"

#define EXACT 1e-6

static void check_region(struct td *td, const struct emu_mix *m)
{
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;

	emu_run(40000, m);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(2000000, m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_truth(&t1);
	t = truth_between(&t0, &t1);
	assert_int_equal(r.slots, t1.slots - t0.slots);
	assert_within(&r, &t, EXACT);
}

static struct td *open_skl(bool smt, bool any_ok, unsigned long *any_opens)
{
	struct emu_mix m = emu_mix_l1(0.35, 0.10, 0.15, 0.40);
	struct emu_stats s;
	struct td *td;

	emu_setup(EMU_SKL);
	emu_set_smt(smt, any_ok);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_stats(&s);
	*any_opens = s.anythread_opens;
	check_region(td, &m);
	return td;
}

/* SMT on, AnyThread allowed: clocks and recovery cycles per core. */
static void test_v45_anythread(void **state)
{
	unsigned long any;
	struct td *td = open_skl(true, true, &any);

	(void)state;
	assert_int_equal(any, 2);
	assert_false(info_flags(td) & TD_INFO_SMT_PER_THREAD);
	td_close(td);
}

/* SMT on, AnyThread refused (EACCES): per-thread form, flagged. */
static void test_v45_anythread_refused(void **state)
{
	unsigned long any;
	struct td *td = open_skl(true, false, &any);
	struct emu_stats s;

	(void)state;
	assert_int_equal(any, 0);
	assert_true(info_flags(td) & TD_INFO_SMT_PER_THREAD);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 5); /* the refused attempt is closed */
	td_close(td);
}

/* SMT off: the per-thread form is the exact one, no flag. */
static void test_v45_smt_off(void **state)
{
	unsigned long any;
	struct td *td = open_skl(false, true, &any);

	(void)state;
	assert_int_equal(any, 0);
	assert_false(info_flags(td) & TD_INFO_SMT_PER_THREAD);
	td_close(td);
}

/* Silvermont: 3 GP events + fixed clocks do not fit 2 GP counters. */
static void test_v1_silvermont_too_few_counters(void **state)
{
	struct td *td = NULL;
	struct emu_stats s;

	(void)state;
	emu_setup(EMU_SLM);
	assert_int_equal(td_open(&td, NULL), -ENOSPC);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
}

/* With 4 GP counters the V1 group fits: cycle-based level 1, exact. */
static void test_v1_silvermont_e2e(void **state)
{
	struct emu_mix m1 = emu_mix_l1(0.30, 0.06, 0.24, 0.40);
	struct emu_mix m2 = emu_mix_l1(0.62, 0.02, 0.10, 0.26);
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_SLM);
	emu_gp_set_counters(4);
	assert_int_equal(td_open(&td, NULL), 0);
	check_region(td, &m1);
	check_region(td, &m2);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_v45_anythread, teardown_emu),
		cmocka_unit_test_teardown(test_v45_anythread_refused,
					  teardown_emu),
		cmocka_unit_test_teardown(test_v45_smt_off, teardown_emu),
		cmocka_unit_test_teardown(test_v1_silvermont_too_few_counters,
					  teardown_emu),
		cmocka_unit_test_teardown(test_v1_silvermont_e2e, teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
