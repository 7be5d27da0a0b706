/* SPDX-License-Identifier: MIT */
/*
 * AMD Zen 4/5 level 2 (PipelineL2) through td_region_begin/end on the
 * emulator: without TD_OPT_L2_MULTIPLEX level 1 only and td_info says
 * why; with it, three groups time-multiplexed by the emulated kernel's
 * rotation (perf_rotate_context), results flagged estimates, compared
 * with the workload's true level-1 and level-2 fractions.
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

/* Slots between the emulated kernel's rotations (a few ms of a core). */
#define MUX_INTERVAL 300000

static struct td *open_mux(enum emu_profile p, unsigned reserved)
{
	struct td_info info;
	struct td *td;

	emu_setup(p);
	emu_gp_reserve(reserved);
	td = open_l2_multiplexed(MUX_INTERVAL, &info);
	assert_false(info.flags & TD_INFO_L2_NEEDS_MULTIPLEX);
	assert_int_equal(info.path, TD_PATH_READ);
	return td;
}

/* Level 1 (with SMT contention) and level 2 against the truth. */
static void assert_truth(const struct td_result *r, const struct emu_truth *a,
			 const struct emu_truth *b, double tol, bool l2,
			 bool check_slots)
{
	struct truth_frac t = truth_between(a, b);
	double slots = (double)(b->slots - a->slots);
	double smt = (double)(b->cat[8] - a->cat[8]) / slots;
	double sum = r->smt_contention;

	assert_false(r->flags & TD_RESULT_UNRELIABLE);
	assert_true(r->flags & TD_RESULT_MULTIPLEXED);
	for (int i = 0; i < TD_L1_COUNT; i++) {
		assert_float_equal(r->l1[i], t.l1[i], tol);
		sum += r->l1[i];
	}
	assert_float_equal(r->smt_contention, smt, tol);
	assert_float_equal(sum, 1, 1e-9);
	if (check_slots)
		assert_float_equal((double)r->slots / slots, 1, tol);
	assert_int_equal(!!(r->flags & TD_RESULT_L2), l2);
	if (!l2)
		return;
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_float_equal(r->l2[i], t.l2[i], tol);
}

static void measure(struct td *td, uint64_t slots, const struct emu_mix *m,
		    struct td_result *r, struct emu_truth *a,
		    struct emu_truth *b)
{
	struct td_region reg = { { 0 } };

	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_truth(a);
	emu_run(slots, m);
	emu_truth(b);
	assert_int_equal(td_region_end(td, &reg, r), 0);
}

static const struct emu_mix *zen_mix(void)
{
	static struct emu_mix m;

	/* ret .40 (heavy .05), bad .10 (mispredicts .06), fe .20
	 * (latency .12), smt .05, backend .25 (memory .15) */
	m = emu_mix_amd_l2(0.40, 0.10, 0.20, 0.05, 0.05, 0.06, 0.12, 0.15);
	return &m;
}

/* Without the option: level 1 exact, no level 2, and the reason. */
static void test_zen_l1_only_by_default(void **state)
{
	struct td_info info = { .size = sizeof(info) };
	struct emu_truth a, b;
	struct td_result r;
	struct emu_stats s;
	struct td *td;

	(void)state;
	emu_setup(EMU_ZEN4);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.levels, 1);
	assert_true(info.flags & TD_INFO_L2_NEEDS_MULTIPLEX);
	assert_false(info.flags & TD_INFO_MULTIPLEXED);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 6); /* level 1 only */
	measure(td, 3000000, zen_mix(), &r, &a, &b);
	assert_false(r.flags & (TD_RESULT_L2 | TD_RESULT_MULTIPLEXED));
	assert_float_equal(r.l1[TD_RETIRING], 0.40, 1e-6);
	td_close(td);
}

/*
 * A region of many rotation intervals: every group counted a third of
 * it; a steady mix gives the true fractions back (rounding only).
 */
static void long_region(enum emu_profile p, unsigned reserved)
{
	struct td *td = open_mux(p, reserved);
	struct emu_truth a, b;
	struct td_result r;
	struct emu_stats s;

	emu_stats(&s);
	assert_int_equal(s.open_fds, (reserved ? 5 : 6) + 8);
	measure(td, 40 * MUX_INTERVAL, zen_mix(), &r, &a, &b);
	assert_truth(&r, &a, &b, 2e-3, true, true);
	td_close(td);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
}

static void test_zen4_mux_long_region(void **state)
{
	(void)state;
	long_region(EMU_ZEN4, 0);
}

static void test_zen5_mux_long_region(void **state)
{
	(void)state;
	long_region(EMU_ZEN5, 0);
}

/* NMI watchdog: level 1 derives SMT contention (5), level 2 groups fit. */
static void test_zen4_mux_watchdog(void **state)
{
	(void)state;
	long_region(EMU_ZEN4, 1);
}

/*
 * Regions shorter than a rotation interval: the one level 1 counted in
 * has level 1 but no level 2; one where level 1 never counted is
 * unreliable (nothing to estimate from).
 */
static void test_zen4_mux_short_regions(void **state)
{
	struct td *td = open_mux(EMU_ZEN4, 0);
	struct emu_truth a, b;
	struct td_result r;
	const uint64_t len = MUX_INTERVAL / 4;

	(void)state;
	/* level 1's group is first in the list: it counts now */
	measure(td, len, zen_mix(), &r, &a, &b);
	assert_truth(&r, &a, &b, 1e-3, false, true);
	emu_run(MUX_INTERVAL - len, zen_mix()); /* rotation: group A */
	measure(td, len, zen_mix(), &r, &a, &b);
	assert_true(r.flags & TD_RESULT_UNRELIABLE);
	assert_false(r.flags & TD_RESULT_L2);
	assert_float_equal(r.l1[TD_RETIRING], 0, 0);
	td_close(td);
}

/*
 * A harness loop of short iterations: each call sees one group, the
 * named totals still estimate level 2 from the calls that saw the
 * level-2 groups (flagged), within rounding of the truth here, where the
 * mix does not change.
 */
static void test_zen4_mux_named_totals(void **state)
{
	static struct td_named n = TD_NAMED_INIT("loop");
	struct td *td = open_mux(EMU_ZEN4, 0);
	struct emu_truth a, b;
	struct td_totals t;
	struct td_result r;

	(void)state;
	emu_truth(&a);
	for (int i = 0; i < 600; i++) {
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(MUX_INTERVAL / 10, zen_mix());
		assert_int_equal(td_named_end(td, &n, &r), 0);
	}
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &t), 0);
	assert_int_equal(t.calls, 600);
	/* calls level 1 did not count in are unsampled, not unreliable */
	assert_int_equal(t.unreliable, 0);
	/* slots of every call, scaled by level 1's enabled / running */
	assert_truth(&t.total, &a, &b, 2e-3, true, true);
	td_close(td);
	memset(&n, 0, sizeof(n));
}

/*
 * A region level 1 counted only its first 300 slots of (review's case):
 * its breakdown, scaled up, is that of a tiny sample: flagged SHORT.
 */
static void test_zen4_mux_tiny_sample_flagged(void **state)
{
	struct td *td = open_mux(EMU_ZEN4, 0);
	struct emu_mix x = emu_mix_amd_l2(0.90, 0.02, 0.03, 0.0, 0.0, 0.01,
					  0.01, 0.01);
	struct td_region reg = { { 0 } };
	struct td_result r;

	(void)state;
	emu_run(MUX_INTERVAL - 300, zen_mix()); /* level 1 about to go out */
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(300, &x);                       /* all level 1 sees */
	emu_run(2 * MUX_INTERVAL - 600, zen_mix()); /* groups A, B */
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_true(r.flags & TD_RESULT_MULTIPLEXED);
	assert_true(r.flags & TD_RESULT_SHORT);
	assert_true(r.slots > TD_SHORT_SLOTS); /* the scaled estimate */
	td_close(td);
}

/* The report says the figures are estimates. */
static void test_zen4_mux_report(void **state)
{
	static struct td_named n = TD_NAMED_INIT("mux");
	struct td *td = open_mux(EMU_ZEN4, 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(10 * MUX_INTERVAL, zen_mix());
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_CSV), 0);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_TABLE), 0);
	fclose(f);
	assert_non_null(strstr(text, ",estimated,1,0,,,,,,emulated:test\n"));
	assert_non_null(strstr(text, "estimated (multiplexed)"));
	free(text);
	td_close(td);
	memset(&n, 0, sizeof(n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_zen_l1_only_by_default,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_long_region,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen5_mux_long_region,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_watchdog, teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_short_regions,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_named_totals,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_tiny_sample_flagged,
					  teardown_emu),
		cmocka_unit_test_teardown(test_zen4_mux_report, teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
