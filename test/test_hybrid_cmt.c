/* SPDX-License-Identifier: MIT */
/*
 * Meteor Lake (emu_hybrid_crestmont): Redwood Cove P-cores on cpu_core
 * (PERF_METRICS, level 2), Crestmont E-cores on cpu_atom (the Atom V2
 * group, 6 wide, 8 general counters, the kernel's adl aliases, whose
 * topdown-retiring is not Crestmont's retiring).  Level 1 and level 2 of
 * P-only, E-only and migrating regions against the truth, by default
 * and with the E-cores' level 2 multiplexed (TD_OPT_L2_MULTIPLEX,
 * TOPDOWN_L2=multiplex); named totals of the multiplexed mode, here and
 * on Alder Lake; the E-cores' level 2 beside the memory drill-down.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "helpers.h"

/* P-core quantisation: a few readings of up to 4e7 slots each. */
#define BOUND 0.02
/* Slots between the emulated kernel's rotations (a few ms of a core). */
#define MUX_INTERVAL 300000
/* Multiplexed estimates: about half of a steady mix each, rounding. */
#define MUX_TOL 3e-3

TD_TEST_SAVED_ENV({ "TOPDOWN_L2", NULL }, { "TOPDOWN_MEMORY", NULL })

static const struct emu_mix *const mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					       &MIX_STREAM, &MIX_DRAM };

/* A Meteor Lake handle with flags, on a P-core, after some work. */
static struct td *open_mtl(unsigned flags)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td = NULL;

	emu_setup(EMU_ADL);
	emu_hybrid_crestmont();
	emu_set_mux_interval(MUX_INTERVAL);
	o.flags = flags;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	assert_int_equal(info.levels, 2);
	assert_true(info.flags & TD_INFO_HYBRID_ECORE);
	assert_string_equal(info.uarch, "meteorlake_hybrid+crestmont");
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/* Every level-1 fraction within tol of the truth, the slots exact. */
static void assert_l1(const struct td_result *res, const struct truth_frac *t,
		      uint64_t slots, double tol)
{
	assert_false(res->flags & TD_RESULT_UNRELIABLE);
	if (fabs((double)res->slots - (double)slots) > tol * (double)slots)
		fail_msg("slots %llu true %llu", (unsigned long long)res->slots,
			 (unsigned long long)slots);
	for (int k = 0; k < TD_L1_COUNT; k++)
		if (fabs(res->l1[k] - t->l1[k]) > tol)
			fail_msg("l1[%d] %.5f true %.5f", k, res->l1[k],
				 t->l1[k]);
}

/*
 * Crestmont's level 2 (perf's meteorlake mtl-metrics.json, cpu_atom:
 * tma_ifetch_latency, tma_core_bound; tma_resource_bound in the
 * memory-bound entry) against the truth within tol: the frontend's and
 * backend's children, retiring's and bad speculation's 0.
 */
static void assert_fe_be(const struct td_result *res,
			 const struct truth_frac *t, double tol)
{
	static const int measured[] = { TD_FETCH_LAT, TD_FETCH_BW,
					TD_MEM_BOUND, TD_CORE_BOUND };
	static const int zero[] = { TD_HEAVY_OPS, TD_LIGHT_OPS,
				    TD_BR_MISPREDICT, TD_MACHINE_CLEARS };
	const unsigned want = TD_RESULT_L2 | TD_RESULT_L2_FE_BE;

	assert_int_equal(res->flags & want, want);
	for (int k = 0; k < 4; k++) {
		if (fabs(res->l2[measured[k]] - t->l2[measured[k]]) > tol)
			fail_msg("l2[%d] %.5f true %.5f", measured[k],
				 res->l2[measured[k]], t->l2[measured[k]]);
		assert_float_equal(res->l2[zero[k]], 0, 0);
	}
}

/* One region of slots of mix where the thread is; its truth and slots. */
static struct truth_frac region(struct td *td, uint64_t slots,
				const struct emu_mix *mix,
				struct td_result *res, uint64_t *true_slots)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(slots, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, res), 0);
	*true_slots = b.slots - a.slots;
	return truth_between(&a, &b);
}

/* P (chain) -> E (stream) -> P (dram), or ending on the E-core. */
static struct truth_frac migrating_region(struct td *td, bool end_on_e,
					  struct td_result *res,
					  uint64_t *true_slots)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;

	emu_migrate(1);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(9);
	emu_run(30000000, &MIX_STREAM);
	if (!end_on_e) {
		emu_migrate(1);
		emu_run(20000000, &MIX_DRAM);
	}
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, res), 0);
	*true_slots = b.slots - a.slots;
	return truth_between(&a, &b);
}

/* A P-only region: the P-cores' exact level 2, not multiplexed. */
static void pcore_regions(struct td *td)
{
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		struct td_result res;
		struct truth_frac t;
		uint64_t slots;

		emu_migrate(2);
		t = region(td, 40000000, mixes[i], &res, &slots);
		assert_int_equal(res.slots, slots);
		assert_int_equal(res.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE |
					      TD_RESULT_MULTIPLEXED),
				 TD_RESULT_L2);
		assert_within(&res, &t, 2.5 * BOUND);
	}
}

/*
 * P-only regions the P-cores' level 2; E-only regions Crestmont's exact
 * level 1 (its TOPDOWN_RETIRING.ALL, not the adl alias's
 * UOPS_RETIRED.ALL) and its frontend and backend children, counted in
 * the E group beside level 1 (8 general counters: nothing multiplexed);
 * a region on both core types the slot-weighted level 1, no level 2.
 */
static void check_regions(struct td *td)
{
	struct td_result res;
	struct truth_frac t;
	uint64_t slots;

	assert_false(info_flags(td) & TD_INFO_MULTIPLEXED);
	pcore_regions(td);
	emu_migrate(10);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		t = region(td, 20000000, mixes[i], &res, &slots);
		assert_false(res.flags & TD_RESULT_MULTIPLEXED);
		/* whole cycles x 6 */
		assert_l1(&res, &t, slots, 6.0 / (double)slots);
		assert_fe_be(&res, &t, 1e-6);
	}
	for (int end_on_e = 0; end_on_e < 2; end_on_e++) {
		t = migrating_region(td, end_on_e, &res, &slots);
		assert_false(res.flags & (TD_RESULT_L2 | TD_RESULT_MULTIPLEXED));
		assert_within(&res, &t, BOUND);
		/* not the P-cores' alone: the stream's share is in it */
		assert_true(res.l1[TD_RETIRING] > 0.40);
	}
	pcore_regions(td);
}

static void test_default_mode(void **state)
{
	struct td *td = open_mtl(0);

	(void)state;
	check_regions(td);
	td_close(td);
}

/*
 * The E-cores' level 2 asked for as where it needs multiplexing (the
 * option, or TOPDOWN_L2=multiplex): on Meteor Lake it needs none, so the
 * same exact results, nothing flagged multiplexed.
 */
static void test_multiplex_option(void **state)
{
	struct td *td = open_mtl(TD_OPT_L2_MULTIPLEX);

	(void)state;
	check_regions(td);
	td_close(td);
}

static void test_multiplex_env(void **state)
{
	struct td *td;

	(void)state;
	setenv("TOPDOWN_L2", "multiplex", 1);
	td = open_mtl(0);
	check_regions(td);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_default_mode, teardown_env),
		cmocka_unit_test_teardown(test_multiplex_option, teardown_env),
		cmocka_unit_test_teardown(test_multiplex_env, teardown_env),
	};

	return cmocka_run_group_tests(tests, save_env, free_env);
}
