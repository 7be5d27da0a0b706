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

/* ---- Alder Lake, TD_OPT_L2_MULTIPLEX: named totals -------------------- */

/* An Alder Lake handle with TD_OPT_L2_MULTIPLEX, on a P-core. */
static struct td *open_adl_mux(void)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(EMU_ADL);
	emu_set_mux_interval(MUX_INTERVAL);
	o.flags = TD_OPT_L2_MULTIPLEX;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(info_flags(td) & (TD_INFO_HYBRID_ECORE |
					   TD_INFO_MULTIPLEXED),
			 TD_INFO_HYBRID_ECORE | TD_INFO_MULTIPLEXED);
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/* calls calls of n, each slots of mix; the truth over them all. */
static struct truth_frac named_calls(struct td *td, struct td_named *n,
				     int calls, uint64_t slots,
				     const struct emu_mix *mix)
{
	struct emu_truth a, b;

	emu_truth(&a);
	for (int i = 0; i < calls; i++) {
		assert_int_equal(td_named_begin(td, n), 0);
		emu_run(slots, mix);
		assert_int_equal(td_named_end(td, n, NULL), 0);
	}
	emu_truth(&b);
	return truth_between(&a, &b);
}

/* Every level-1 and level-2 fraction of a total within tol of t. */
static void assert_total(const struct td_result *r, const struct truth_frac *t,
			 double tol)
{
	for (int k = 0; k < TD_L1_COUNT; k++)
		if (fabs(r->l1[k] - t->l1[k]) > tol)
			fail_msg("l1[%d] %.5f true %.5f", k, r->l1[k], t->l1[k]);
	for (int k = 0; k < TD_L2_COUNT; k++)
		if (fabs(r->l2[k] - t->l2[k]) > tol)
			fail_msg("l2[%d] %.5f true %.5f", k, r->l2[k], t->l2[k]);
}

/*
 * Named totals in Alder Lake's multiplexed mode: a region called 600
 * times on E-cores, each call a tenth of a rotation (most calls see only
 * one of the E-cores' two groups), totals Gracemont's level 2 (perf's
 * alderlake list, cpu_atom) over all the calls against the truth,
 * flagged multiplexed; another called on P-cores only totals their
 * exact level 2, unflagged; once a call on P-cores joins the E-only
 * one's, the totals mix two trees and have no level 2.
 */
static void test_adl_mux_named_totals(void **state)
{
	static struct td_named e = TD_NAMED_INIT("ecore");
	static struct td_named p = TD_NAMED_INIT("pcore");
	struct td *td = open_adl_mux();
	struct td_totals tot;
	struct truth_frac t;

	(void)state;
	memset(e.opaque, 0, sizeof(e.opaque));
	memset(p.opaque, 0, sizeof(p.opaque));
	emu_migrate(9);
	t = named_calls(td, &e, 600, MUX_INTERVAL / 10, &MIX_BRANCHY);
	assert_int_equal(td_named_totals(&e, &tot), 0);
	assert_int_equal(tot.calls, 600);
	/* calls in the level-2 groups' turns only: level 1 lost, flagged */
	assert_true(tot.unreliable < tot.calls);
	assert_int_equal(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE |
					    TD_RESULT_MULTIPLEXED),
			 TD_RESULT_L2 | TD_RESULT_MULTIPLEXED);
	assert_total(&tot.total, &t, MUX_TOL);

	emu_migrate(3);
	t = named_calls(td, &p, 20, 2000000, &MIX_DRAM);
	assert_int_equal(td_named_totals(&p, &tot), 0);
	assert_int_equal(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE |
					    TD_RESULT_MULTIPLEXED),
			 TD_RESULT_L2);
	assert_within(&tot.total, &t, BOUND);

	(void)named_calls(td, &e, 1, 20000000, &MIX_CHAIN);
	assert_int_equal(td_named_totals(&e, &tot), 0);
	assert_int_equal(tot.calls, 601);
	assert_false(tot.total.flags & TD_RESULT_L2);
	td_close(td);
}

/*
 * The same E-only calls, then one that moves from an E-core to a P-core
 * mid-call: the totals have no level 2 either (that call's slots are of
 * both trees), level 1 still the truth of the calls.
 */
static void test_adl_mux_named_totals_migrating(void **state)
{
	static struct td_named m = TD_NAMED_INIT("migrating");
	struct td *td = open_adl_mux();
	struct emu_truth a, b;
	struct td_totals tot;
	struct truth_frac t;

	(void)state;
	memset(m.opaque, 0, sizeof(m.opaque));
	emu_migrate(9);
	emu_truth(&a);
	(void)named_calls(td, &m, 600, MUX_INTERVAL / 10, &MIX_STREAM);
	assert_int_equal(td_named_totals(&m, &tot), 0);
	assert_true(tot.total.flags & TD_RESULT_L2);
	assert_int_equal(td_named_begin(td, &m), 0);
	emu_run(40 * MUX_INTERVAL, &MIX_STREAM);
	emu_migrate(2);
	emu_run(20000000, &MIX_STREAM);
	assert_int_equal(td_named_end(td, &m, NULL), 0);
	emu_truth(&b);
	t = truth_between(&a, &b);
	assert_int_equal(td_named_totals(&m, &tot), 0);
	assert_int_equal(tot.calls, 601);
	assert_int_equal(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_MULTIPLEXED),
			 TD_RESULT_MULTIPLEXED);
	/* one mix throughout: the flagged calls' work, left out, as any */
	for (int k = 0; k < TD_L1_COUNT; k++)
		if (fabs(tot.total.l1[k] - t.l1[k]) > BOUND)
			fail_msg("l1[%d] %.5f true %.5f", k, tot.total.l1[k],
				 t.l1[k]);
	td_close(td);
}

/* ---- the E-cores' level 2 beside the memory drill-down ------------------ */

/* Memory bound's composition on the P-cores: L1, L2, L3, DRAM, store. */
static const double SHARES[5] = { 0.10, 0.20, 0.30, 0.25, 0.15 };

/*
 * A P-only region of the drill-down: every node within the result's err
 * of its true share of the slots, the nodes summing to memory bound.
 */
static void pcore_memory_region(struct td *td, const struct emu_mix *mix)
{
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;

	emu_migrate(3);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_int_equal(res.flags & (TD_RESULT_L2 | TD_RESULT_MEMORY |
				      TD_RESULT_UNRELIABLE |
				      TD_RESULT_L2_FE_BE),
			 TD_RESULT_L2 | TD_RESULT_MEMORY);
	assert_memory_nodes(&res, &a, &b);
}

/* A handle with the drill-down (and flags), on a P-core. */
static struct td *open_memory(unsigned flags)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_set_mem_shares(SHARES);
	emu_set_mux_interval(MUX_INTERVAL);
	o.flags = TD_OPT_MEMORY | flags;
	o.reset_policy = TD_RESET_ALWAYS;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/*
 * Meteor Lake with the drill-down (Redwood Cove's nodes are Golden
 * Cove's: perf's mtl-metrics.json, Unit cpu_core), with and without the
 * E-cores' level 2 asked for: P-only regions have the nodes against the
 * truth; E-only regions keep Crestmont's exact level 1 and its frontend
 * and backend children but no drill-down (cpu_core's events did not
 * count there, and perf's meteorlake list has no tma_l1_bound ..
 * tma_store_bound for cpu_atom); a region on both core types has
 * neither level 2 nor the drill-down; the next P-only region has the
 * nodes again.
 */
static void test_mtl_memory(void **state)
{
	static const unsigned flags[] = { 0, TD_OPT_L2_MULTIPLEX };

	(void)state;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct td *td;
		struct td_result res;
		struct truth_frac t;
		uint64_t slots;

		emu_setup(EMU_ADL);
		emu_hybrid_crestmont();
		td = open_memory(flags[i]);
		assert_false(info_flags(td) & TD_INFO_MULTIPLEXED);
		for (size_t k = 0; k < sizeof(mixes) / sizeof(mixes[0]); k++)
			pcore_memory_region(td, mixes[k]);
		emu_migrate(10);
		for (size_t k = 0; k < sizeof(mixes) / sizeof(mixes[0]); k++) {
			t = region(td, 20000000, mixes[k], &res, &slots);
			assert_false(res.flags & (TD_RESULT_MEMORY |
						  TD_RESULT_MULTIPLEXED));
			assert_l1(&res, &t, slots, 6.0 / (double)slots);
			assert_fe_be(&res, &t, 1e-6);
		}
		t = migrating_region(td, false, &res, &slots);
		assert_false(res.flags & (TD_RESULT_L2 | TD_RESULT_MEMORY));
		assert_within(&res, &t, BOUND);
		pcore_memory_region(td, &MIX_DRAM);
		td_close(td);
		emu_teardown();
	}
}

/*
 * Alder Lake with the drill-down and TD_OPT_L2_MULTIPLEX: Gracemont's
 * multiplexed level 2 and the drill-down are not combined (their counts
 * would take the same entries: hybrid.h TD_C_ECORE_L2), so td_query says
 * nothing is multiplexed, E-only regions are exact level 1 without level
 * 2, and P-only regions have the drill-down against the truth.
 */
static void test_adl_memory_with_l2_multiplex(void **state)
{
	struct td *td;
	struct td_result res;
	struct truth_frac t;
	uint64_t slots;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_memory(TD_OPT_L2_MULTIPLEX);
	assert_int_equal(info_flags(td) & (TD_INFO_HYBRID_ECORE |
					   TD_INFO_MULTIPLEXED),
			 TD_INFO_HYBRID_ECORE);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		pcore_memory_region(td, mixes[i]);
		emu_migrate(11);
		t = region(td, 40 * MUX_INTERVAL, mixes[i], &res, &slots);
		assert_int_equal(res.flags & (TD_RESULT_MEMORY | TD_RESULT_L2 |
					      TD_RESULT_MULTIPLEXED), 0);
		assert_int_equal(res.slots, slots);
		assert_l1(&res, &t, slots, 1e-6);
	}
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_default_mode, teardown_env),
		cmocka_unit_test_teardown(test_multiplex_option, teardown_env),
		cmocka_unit_test_teardown(test_multiplex_env, teardown_env),
		cmocka_unit_test_teardown(test_adl_mux_named_totals,
					  teardown_env),
		cmocka_unit_test_teardown(test_adl_mux_named_totals_migrating,
					  teardown_env),
		cmocka_unit_test_teardown(test_mtl_memory,
					  teardown_env),
		cmocka_unit_test_teardown(test_adl_memory_with_l2_multiplex,
					  teardown_env),
	};

	return cmocka_run_group_tests(tests, save_env, free_env);
}
