/* SPDX-License-Identifier: MIT */
/*
 * INT_MISC.UOP_DROPPING (pm_uop.c): on the cores whose perf lists
 * subtract it from tma_frontend_bound and tma_fetch_latency (Ice Lake,
 * Sapphire Rapids, Alder Lake's P-cores) the emulator's PERF_METRICS
 * counts dropped uops' slots as frontend bound and fetch latency, where
 * the truth has them in bad speculation (emu_set_uop_dropping); the
 * library's results must match the truth within their err on every
 * route (fast path, read(2) path, records), sum to 1 at level 1, and
 * say when the counter could not be had (TD_RESULT_FE_UNREFINED, with
 * PERF_METRICS' own numbers).  Lunar Lake and Arrow Lake's lists do
 * not subtract it: no counter opened there, no flag, the truth anyway.
 * INT_MISC.CLEARS_COUNT the same way on Ice Lake, whose lists add 5
 * slots a clear to tma_backend_bound (emu_set_int_misc_clears;
 * TD_RESULT_BE_UNREFINED), and on no later core.
 */
#include <string.h>

#include "helpers.h"
#include <linux/perf_event.h>

/* INT_MISC.UOP_DROPPING, UMask 0x10: EventCode 0x0d on Ice Lake, 0xad
 * on Golden Cove and later (perf's pipeline.json of each). */
#define UOP_DROPPING_ICL 0x100dull
#define UOP_DROPPING_GC 0x10adull
/* INT_MISC.CLEARS_COUNT on Ice Lake: EventCode 0x0d, UMask 0x01,
 * CounterMask 1, EdgeDetect 1 (icelake/pipeline.json). */
#define CLEARS_COUNT_ICL 0x0104010dull

/* Ice Lake's clears in these tests: 3% of the slots, 5 a clear. */
#define CLEARS_PER_SLOT 0.006
#define CLEARS_SHARE (5 * CLEARS_PER_SLOT)

/* A mix with machine clears (bad speculation less branch mispredicts,
 * 0.05 of the slots) to take the dropped share from. */
static const struct emu_mix MIX_CLEARS = { { 0.30, 0.10, 0.25, 0.35,
					     0.05, 0.05, 0.15, 0.20 } };

static bool counter_open(void)
{
	struct perf_event_attr attrs[32];
	unsigned n = emu_open_attrs(attrs, 32);

	for (unsigned i = 0; i < n; i++)
		if (attrs[i].config == UOP_DROPPING_ICL ||
		    attrs[i].config == UOP_DROPPING_GC)
			return true;
	return false;
}

static bool clears_open(void)
{
	struct perf_event_attr attrs[32];
	unsigned n = emu_open_attrs(attrs, 32);

	for (unsigned i = 0; i < n; i++)
		if (attrs[i].config == CLEARS_COUNT_ICL)
			return true;
	return false;
}

/* A handle on the emulator as set up, that has counted 3e6 slots. */
static struct td *open_counting(unsigned flags)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	o.flags = flags;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(3000000, &MIX_STREAM);
	return td;
}

static struct td *open_profile(enum emu_profile p, bool metrics_clear,
			       unsigned flags, double share)
{
	emu_setup(p);
	if (metrics_clear)
		emu_offer_metrics_clear(); /* Alder Lake's: Arrow Lake's */
	emu_set_uop_dropping(share);
	emu_set_int_misc_clears(CLEARS_PER_SLOT);
	return open_counting(flags);
}

/*
 * Frontend bound, bad speculation (and fetch latency, machine clears
 * at level 2) within the result's err of the truth, every level-1
 * fraction too, and level 1 summing to 1.
 */
static void check_refined(const struct td_result *res,
			  const struct truth_frac *t)
{
	double sum = 0;

	assert_false(res->flags & TD_RESULT_FE_UNREFINED);
	assert_false(res->flags & TD_RESULT_BE_UNREFINED);
	assert_false(res->flags & TD_RESULT_UNRELIABLE);
	for (int i = 0; i < TD_L1_COUNT; i++) {
		if (fabs(res->l1[i] - t->l1[i]) > res->err + 1e-12)
			fail_msg("l1[%d] %.5f truth %.5f err %.5f", i,
				 res->l1[i], t->l1[i], res->err);
		sum += res->l1[i];
	}
	assert_true(fabs(sum - 1) < 1e-9);
	for (int i = 0; (res->flags & TD_RESULT_L2) && i < TD_L2_COUNT; i++)
		if (fabs(res->l2[i] - t->l2[i]) > res->err + 1e-12)
			fail_msg("l2[%d] %.5f truth %.5f err %.5f", i,
				 res->l2[i], t->l2[i], res->err);
	assert_true(res->err < 0.02); /* below the share: it tells */
}

/* Regions on one handle: the first ones slow, then the fast path. */
static void check_regions(struct td *td, bool l2)
{
	struct td_region r = { { 0 } };

	for (int i = 0; i < 8; i++) {
		struct td_result res;
		struct truth_frac t = measure_region(td, &r, 4000000,
						     &MIX_CLEARS, &res);

		assert_true(!(res.flags & TD_RESULT_L2) == !l2);
		check_refined(&res, &t);
	}
}

static void test_spr(void **state)
{
	struct td *td = open_profile(EMU_SPR, false, 0, 0.02);

	(void)state;
	assert_true(counter_open());
	assert_false(clears_open());
	check_regions(td, true);
	td_close(td);
}

/* Both refinements, their err below either share: each tells. */
static void test_icl(void **state)
{
	struct td *td = open_profile(EMU_ICL, false, 0, 0.02);

	(void)state;
	assert_true(counter_open());
	assert_true(clears_open());
	check_regions(td, false);
	td_close(td);
}

static void test_adl_pcore(void **state)
{
	struct td *td = open_profile(EMU_ADL, false, 0, 0.02);

	(void)state;
	assert_true(counter_open());
	assert_false(clears_open());
	check_regions(td, true);
	td_close(td);
}

/* Meteor Lake's P-cores: perf's mtl-metrics.json (Unit cpu_core)
 * subtracts cpu_core@INT_MISC.UOP_DROPPING@ from both nodes too. */
static void test_mtl_pcore(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_name_meteor_lake();
	emu_set_uop_dropping(0.02);
	td = open_counting(0);
	assert_true(counter_open());
	assert_false(clears_open());
	check_regions(td, true);
	td_close(td);
}

/* The emulator's default share (1.5%), on the read(2) path. */
static void test_spr_read_path(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	td = open_counting(TD_OPT_NO_RDPMC);
	check_regions(td, true);
	td_close(td);
}

/* Ice Lake's read(2) path: both counters read there too. */
static void test_icl_read_path(void **state)
{
	struct td *td = open_profile(EMU_ICL, false, TD_OPT_NO_RDPMC, 0.02);

	(void)state;
	assert_true(clears_open());
	check_regions(td, false);
	td_close(td);
}

/* Records (of readings, on the fast path) decode to the same truth. */
static void check_records(enum emu_profile p, bool l2)
{
	struct td *td = open_profile(p, false, 0, 0.02);
	struct td_record recs[8];
	struct truth_frac t[8];
	struct td_region r = { { 0 } };
	size_t n = 0;

	check_regions(td, l2); /* the region's length learnt */
	assert_int_equal(td_records_attach(td, recs, 8), 0);
	for (int i = 0; i < 8; i++)
		t[i] = measure_region(td, &r, 4000000, &MIX_CLEARS, NULL);
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(n, 8);
	for (int i = 0; i < 8; i++) {
		struct td_result res;

		assert_int_equal(td_record_decode(&recs[i], &res), 0);
		check_refined(&res, &t[i]);
	}
	td_close(td);
}

static void test_spr_records(void **state)
{
	(void)state;
	check_records(EMU_SPR, true);
}

static void test_icl_records(void **state)
{
	(void)state;
	check_records(EMU_ICL, false);
}

/* Lunar Lake, Arrow Lake's P-cores: PERF_METRICS as it is is the truth. */
static void test_lion_cove(void **state)
{
	struct td *td = open_profile(EMU_LNL, false, 0, 0.02);

	(void)state;
	assert_false(counter_open());
	check_regions(td, true);
	td_close(td);
	td = open_profile(EMU_ADL, true, 0, 0.02);
	assert_false(counter_open());
	check_regions(td, true);
	td_close(td);
}

/*
 * Unrefined: PERF_METRICS' own numbers, every fraction within err of
 * truth_unrefined (the dropped uops' slots in frontend bound and fetch
 * latency, out of bad speculation and machine clears), flagged.  The
 * work drops more than err of its slots, so that a result refined all
 * the same (the truth's frontend bound) is off by more than its err.
 */
static void check_unrefined(struct td *td)
{
	struct td_region r = { { 0 } };

	for (int i = 0; i < 6; i++) {
		struct emu_truth a, b;
		struct td_result res;
		struct truth_frac t;
		double drop;

		assert_int_equal(td_region_begin(td, &r), 0);
		emu_truth(&a);
		emu_run(4000000, &MIX_CLEARS);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		t = truth_unrefined(&a, &b);
		drop = (double)(b.uop_drop - a.uop_drop) /
		       (double)(b.slots - a.slots);
		assert_true(res.flags & TD_RESULT_FE_UNREFINED);
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
		if (drop <= res.err || max_error(&res, &t) > res.err + 1e-12)
			fail_msg("drop %.5f error %.5f err %.5f (fe %.5f, "
				 "unrefined truth %.5f)", drop,
				 max_error(&res, &t), res.err,
				 res.l1[TD_FE_BOUND], t.l1[TD_FE_BOUND]);
	}
}

/*
 * Ice Lake without INT_MISC.CLEARS_COUNT: PERF_METRICS' backend bound,
 * the clears' share below the truth and bad speculation that much above
 * it (within err), flagged; frontend bound refined or flagged as fe says.
 */
static void check_be_unrefined(struct td *td, bool fe)
{
	struct td_region r = { { 0 } };

	for (int i = 0; i < 6; i++) {
		struct td_result res;
		struct truth_frac t = measure_region(td, &r, 4000000,
						     &MIX_CLEARS, &res);

		assert_true(res.flags & TD_RESULT_BE_UNREFINED);
		assert_true(!(res.flags & TD_RESULT_FE_UNREFINED) == !fe);
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
		assert_true(res.err < CLEARS_SHARE);
		if (fabs(res.l1[TD_BE_BOUND] -
			 (t.l1[TD_BE_BOUND] - CLEARS_SHARE)) > res.err + 1e-12)
			fail_msg("be %.5f truth %.5f - %.3f err %.5f",
				 res.l1[TD_BE_BOUND], t.l1[TD_BE_BOUND],
				 CLEARS_SHARE, res.err);
		if (!fe && fabs(res.l1[TD_BAD_SPEC] -
				(t.l1[TD_BAD_SPEC] + CLEARS_SHARE)) >
				   res.err + 1e-12)
			fail_msg("bad %.5f truth %.5f + %.3f err %.5f",
				 res.l1[TD_BAD_SPEC], t.l1[TD_BAD_SPEC],
				 CLEARS_SHARE, res.err);
	}
}

static void test_icl_be_unrefined_by_option(void **state)
{
	struct td *td = open_profile(EMU_ICL, false, TD_OPT_BE_UNREFINED,
				     0.02);

	(void)state;
	assert_true(counter_open());
	assert_false(clears_open());
	check_be_unrefined(td, false);
	td_close(td);
}

/* TD_OPT_FE_UNREFINED: neither counter (the second one is read in the
 * first one's place). */
static void test_icl_fe_option_unrefines_both(void **state)
{
	struct td *td = open_profile(EMU_ICL, false, TD_OPT_FE_UNREFINED,
				     0.02);

	(void)state;
	assert_false(counter_open());
	assert_false(clears_open());
	check_be_unrefined(td, true);
	td_close(td);
}

/* One general-purpose counter left: the drop's, none for the clears. */
static void test_icl_no_counter_for_clears(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ICL);
	emu_set_uop_dropping(0.02);
	emu_set_int_misc_clears(CLEARS_PER_SLOT);
	emu_gp_reserve(7);
	td = open_counting(0);
	check_be_unrefined(td, false);
	td_close(td);
}

static void test_unrefined_by_option(void **state)
{
	struct td *td = open_profile(EMU_SPR, false, TD_OPT_FE_UNREFINED,
				     0.02);

	(void)state;
	assert_false(counter_open());
	check_unrefined(td);
	td_close(td);
}

/* Every general-purpose counter pinned by someone else: none to have. */
static void test_unrefined_no_counter(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	emu_set_uop_dropping(0.02);
	emu_gp_reserve(8);
	td = open_counting(0);
	check_unrefined(td);
	td_close(td);
}

/* Alder Lake's P-core with the memory drill-down: its six events take
 * the six of the eight counters that others' CPU-wide events leave. */
static void test_unrefined_beside_memory(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_set_uop_dropping(0.02);
	emu_gp_hold_pcore(2);
	td = open_counting(TD_OPT_MEMORY);
	check_unrefined(td);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_spr, teardown_emu),
		cmocka_unit_test_teardown(test_icl, teardown_emu),
		cmocka_unit_test_teardown(test_adl_pcore, teardown_emu),
		cmocka_unit_test_teardown(test_mtl_pcore, teardown_emu),
		cmocka_unit_test_teardown(test_spr_read_path, teardown_emu),
		cmocka_unit_test_teardown(test_spr_records, teardown_emu),
		cmocka_unit_test_teardown(test_icl_read_path, teardown_emu),
		cmocka_unit_test_teardown(test_icl_records, teardown_emu),
		cmocka_unit_test_teardown(test_icl_be_unrefined_by_option,
					  teardown_emu),
		cmocka_unit_test_teardown(test_icl_fe_option_unrefines_both,
					  teardown_emu),
		cmocka_unit_test_teardown(test_icl_no_counter_for_clears,
					  teardown_emu),
		cmocka_unit_test_teardown(test_lion_cove, teardown_emu),
		cmocka_unit_test_teardown(test_unrefined_by_option,
					  teardown_emu),
		cmocka_unit_test_teardown(test_unrefined_no_counter,
					  teardown_emu),
		cmocka_unit_test_teardown(test_unrefined_beside_memory,
					  teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
