/* SPDX-License-Identifier: MIT */
/*
 * Counter budget (more events than free counters, counters_open.c
 * too_big) on the emulated kernel: a group that
 * does not fit the free counters either is refused at open (fewer
 * counters than events: validate_group, a VM) or is accepted and never
 * scheduled (the NMI watchdog pins one).  td_open then derives one term
 * where the formula allows, or fails with -ENOSPC naming the fix.
 * Expected fractions come from the workload's true composition.
 */
#include <errno.h>
#include <string.h>

#include "helpers.h"

#define EXACT 1e-6

/* One region of known composition; its result must match the truth. */
static void check_region(struct td *td, const struct emu_mix *m, bool amd)
{
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;
	double sum = 0;

	emu_run(60000, m); /* work before the region: not in it */
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(1200000, m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_truth(&t1);
	t = truth_between(&t0, &t1);
	assert_within(&r, &t, EXACT);
	assert_int_equal(r.slots, t1.slots - t0.slots);
	if (amd)
		assert_float_equal(r.smt_contention,
				   (double)(t1.cat[8] - t0.cat[8]) /
					   (double)(t1.slots - t0.slots),
				   EXACT);
	for (int i = 0; i < TD_L1_COUNT; i++)
		sum += r.l1[i];
	assert_float_equal(sum + r.smt_contention, 1, 1e-9);
}

static void assert_all_closed(void)
{
	struct emu_stats s;

	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
}

/* Zen 4, NMI watchdog on: 5 of 6 counters free, SMT contention derived. */
static void test_zen4_watchdog_derives_smt(void **state)
{
	struct emu_mix m = emu_mix_amd(0.35, 0.05, 0.15, 0.12);
	struct emu_stats s;
	struct td *td;

	(void)state;
	emu_setup(EMU_ZEN4);
	emu_gp_reserve(1);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_true(info_flags(td) & TD_INFO_DERIVED);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 5);
	check_region(td, &m, true);
	td_close(td);
	assert_all_closed();
}

/* All six free: the full set, nothing derived. */
static void test_zen4_full_set(void **state)
{
	struct emu_stats s;
	struct td *td;

	(void)state;
	emu_setup(EMU_ZEN4);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_false(info_flags(td) & TD_INFO_DERIVED);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 6);
	td_close(td);
}

/* A VM with 5 counters: the 6th member is refused at open (EINVAL). */
static void test_zen5_vm_five_counters(void **state)
{
	struct emu_mix m = emu_mix_amd(0.50, 0.10, 0.05, 0.08);
	struct td *td;

	(void)state;
	emu_setup(EMU_ZEN5);
	emu_gp_set_counters(5);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_true(info_flags(td) & TD_INFO_DERIVED);
	check_region(td, &m, true);
	td_close(td);
	assert_all_closed();
}

static void assert_enospc(void)
{
	struct td *td = (struct td *)&td;

	assert_int_equal(td_open(&td, NULL), -ENOSPC);
	assert_null(td);
	assert_non_null(strstr(td_strerror(-ENOSPC), "nmi_watchdog=0"));
	assert_non_null(strstr(td_strerror(-ENOSPC),
			       "echo 0 > /proc/sys/kernel/nmi_watchdog"));
	assert_all_closed();
}

/* Watchdog plus another pinned user: 4 free, even 5 do not fit. */
static void test_zen4_four_free_fails(void **state)
{
	(void)state;
	emu_setup(EMU_ZEN4);
	emu_gp_reserve(2);
	assert_enospc();
}

/* A VM with 4 counters: refused at open, both sets. */
static void test_zen4_vm_four_counters_fails(void **state)
{
	(void)state;
	emu_setup(EMU_ZEN4);
	emu_gp_set_counters(4);
	assert_enospc();
}

/* V4.5 already derives backend: nothing left to drop, so it fails. */
static void test_skylake_no_fallback(void **state)
{
	(void)state;
	emu_setup(EMU_SKL);
	emu_gp_reserve(4);
	assert_enospc();
}

/* Gracemont with 4 free: backend derived from the other three. */
static void test_gracemont_derives_backend(void **state)
{
	struct emu_mix m = emu_mix_l1(0.25, 0.10, 0.30, 0.35);
	struct emu_stats s;
	struct td *td;

	(void)state;
	emu_setup(EMU_GRT);
	emu_gp_reserve(4);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_true(info_flags(td) & TD_INFO_DERIVED);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 4);
	check_region(td, &m, false);
	td_close(td);
	assert_all_closed();
}

/* The read(2) path decides the same way (no page index to go by). */
static void test_read_path_watchdog(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct emu_mix m = emu_mix_amd(0.20, 0.20, 0.20, 0.10);
	struct td *td;

	(void)state;
	o.flags = TD_OPT_NO_RDPMC;
	emu_setup(EMU_ZEN4);
	emu_gp_reserve(1);
	assert_int_equal(td_open(&td, &o), 0);
	assert_true(info_flags(td) & TD_INFO_DERIVED);
	check_region(td, &m, true);
	td_close(td);
	assert_all_closed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_zen4_watchdog_derives_smt,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_full_set, teardown_emu),
		cmocka_unit_test_teardown(test_zen5_vm_five_counters,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_four_free_fails,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_vm_four_counters_fails,
					  teardown_emu),
		cmocka_unit_test_teardown(test_skylake_no_fallback,
					  teardown_emu),
		cmocka_unit_test_teardown(test_gracemont_derives_backend,
					  teardown_emu),
		cmocka_unit_test_teardown(test_read_path_watchdog,
					  teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
