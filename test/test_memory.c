/* SPDX-License-Identifier: MIT */
/*
 * The memory drill-down (TD_OPT_MEMORY, TOPDOWN_MEMORY=1) on the
 * emulator: the nodes against the work's true composition of memory
 * bound on Sapphire Rapids, on Alder Lake's P-cores and on Ice Lake (Meteor
 * Lake's: test_hybrid_cmt), the option's absence, and the refusals where
 * a CPU has no drill-down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* Memory bound's composition: L1, L2, L3, DRAM, store (sum 1). */
static const double SHARES_A[5] = { 0.10, 0.20, 0.30, 0.25, 0.15 };
static const double SHARES_DRAM[5] = { 0.05, 0.05, 0.10, 0.70, 0.10 };

static struct td *open_memory(enum emu_profile p, const double *shares)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(p);
	emu_set_mem_shares(shares);
	o.flags = TD_OPT_MEMORY;
	o.reset_policy = TD_RESET_ALWAYS; /* each region's err near 2/255 */
	assert_int_equal(td_open(&td, &o), 0);
	return td;
}

/*
 * A region of slots of mix: every node within the result's err of its
 * true share of the region's slots, and the nodes summing to memory
 * bound (perf's split of memory bound, pm_memory.c).
 */
static void check_region(struct td *td, uint64_t slots,
			 const struct emu_mix *mix, bool switch_inside)
{
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;

	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(slots / 2, mix);
	if (switch_inside)
		emu_context_switch(600000);
	emu_run(slots - slots / 2, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_L2);
	assert_true(res.flags & TD_RESULT_MEMORY);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_memory_nodes(&res, &a, &b);
	/*
	 * err, level 2 (decode.c): 2 x the 8-bit scales of the readings
	 * (reset at the begin: its own ~0; the end's: the region's slots S;
	 * the switch at S/2 counted once per page update, out and in:
	 * pm_reading.c restore_error) over S: 2 x 2 / 255 = 0.0157 with
	 * the switch, 2 / 255 = 0.0078 without.
	 */
	if (res.err > (switch_inside ? 0.016 : 0.008))
		fail_msg("err %.5f", res.err);
}

static void test_spr_nodes(void **state)
{
	struct td *td = open_memory(EMU_SPR, SHARES_A);

	(void)state;
	emu_run(600000, &MIX_STREAM);
	check_region(td, 60000000, &MIX_CHAIN, false);
	emu_set_mem_shares(SHARES_DRAM);
	check_region(td, 60000000, &MIX_DRAM, true);
	td_close(td);
}

/* Alder Lake, the thread on a P-core (the hybrid source). */
static void test_adl_pcore_nodes(void **state)
{
	struct td *td = open_memory(EMU_ADL, SHARES_A);

	(void)state;
	emu_run(600000, &MIX_STREAM);
	check_region(td, 60000000, &MIX_CHAIN, false);
	emu_set_mem_shares(SHARES_DRAM);
	emu_migrate(3); /* P-core to P-core */
	check_region(td, 60000000, &MIX_DRAM, true);
	td_close(td);
}

/*
 * A region that ran on an E-core too has no level 2 (the E-cores
 * measure level 1) and so no drill-down: cpu_core's events did not
 * count there.  Its level 1 stays reliable; the next P-only region has
 * the nodes again.
 */
static void test_adl_ecore_stint(void **state)
{
	struct td *td = open_memory(EMU_ADL, SHARES_A);
	struct td_region r = { { 0 } };
	struct td_result res;

	(void)state;
	emu_run(600000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(30000000, &MIX_CHAIN);
	emu_migrate(9);
	emu_run(30000000, &MIX_CHAIN);
	emu_migrate(2);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_false(res.flags & TD_RESULT_L2);
	assert_false(res.flags & TD_RESULT_MEMORY);
	check_region(td, 60000000, &MIX_CHAIN, false);
	td_close(td);
}

/* nodes of r against the truth between a and b, within r's err */
static void check_nodes(const struct td_result *r, const struct emu_truth *a,
			const struct emu_truth *b)
{
	assert_true(r->flags & TD_RESULT_MEMORY);
	nodes_within_err(r, a, b);
}

/*
 * Ice Lake: level 1 only, memory bound from the drill-down's own events
 * (perf's icl-metrics.json tma_memory_bound).  Every node within the
 * result's err of the truth; err covering memory bound's dependence on
 * level 1 (at most 1.5 x level 1's: the emulator's 2_PORTS_UTIL is a
 * fifth of the formula's denominator or less) and the L2/DRAM split the
 * library cannot count (at most the L2 node: perf's tma_l2_bound between
 * 0 and the reported one), and no more.  The emulator has no fill-buffer
 * -full periods, where perf's split is the reported one: there every
 * node is within memory bound's own error of the truth.
 */
static void check_region_icl(struct td *td, uint64_t slots,
			     const struct emu_mix *mix, bool switch_inside)
{
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	/* level 1's err, as test_spr_nodes derives it, without level 2 */
	double base = (switch_inside ? 2.0 : 1.0) / 255 + 1e-4;
	double sum = 0, truth_mem = 0, truth_l2;

	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(slots / 2, mix);
	if (switch_inside)
		emu_context_switch(600000);
	emu_run(slots - slots / 2, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_false(res.flags & TD_RESULT_L2);
	assert_true(res.flags & TD_RESULT_MEMORY);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	truth_l2 = (double)(b.mem[TD_L2_BOUND] - a.mem[TD_L2_BOUND]) /
		   (double)(b.slots - a.slots);
	for (int i = 0; i < TD_MEM_COUNT; i++) {
		double truth = (double)(b.mem[i] - a.mem[i]) /
			       (double)(b.slots - a.slots);

		if (fabs(res.mem[i] - truth) > res.err + 1e-12)
			fail_msg("node %d: %.6f, truth %.6f, err %.6f", i,
				 res.mem[i], truth, res.err);
		if (fabs(res.mem[i] - truth) > 1.5 * base)
			fail_msg("node %d: %.6f, truth %.6f", i, res.mem[i],
				 truth);
		sum += res.mem[i];
		truth_mem += truth;
	}
	/* the nodes sum to memory bound, within err of the truth's */
	if (fabs(sum - truth_mem) > res.err)
		fail_msg("memory bound %.6f, truth %.6f", sum, truth_mem);
	if (res.err < truth_l2 || res.err > 2 * base + 1.5 * truth_l2)
		fail_msg("err %.5f, L2 node %.5f", res.err, truth_l2);
}

static void test_icl_nodes(void **state)
{
	struct td *td = open_memory(EMU_ICL, SHARES_A);

	(void)state;
	emu_run(600000, &MIX_STREAM);
	check_region_icl(td, 60000000, &MIX_CHAIN, false);
	emu_set_mem_shares(SHARES_DRAM);
	check_region_icl(td, 60000000, &MIX_DRAM, true);
	check_region_icl(td, 60000000, &MIX_STREAM, false);
	td_close(td);
}

/*
 * Ice Lake's records: no level 2, the nodes and the err the region's
 * result had given back by td_record_decode; named totals of calls of
 * two compositions within their err of the truth.
 */
static void test_icl_records(void **state)
{
	static struct td_named n = TD_NAMED_INIT("icl");
	struct td *td = open_memory(EMU_ICL, SHARES_A);
	struct td_record recs[2];
	struct td_region r = { { 0 } };
	struct td_result res, dec;
	struct td_totals t;
	struct emu_truth a, b;
	size_t count = 0, len = 0;
	char *text = NULL, *be;
	FILE *f;

	(void)state;
	emu_run(600000, &MIX_STREAM);
	assert_int_equal(td_records_attach(td, recs, 2), 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(60000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_int_equal(td_records_detach(td, &count, NULL), 0);
	assert_int_equal(count, 1);
	assert_true(recs[0].flags & TD_RESULT_MEMORY);
	assert_false(recs[0].flags & TD_RESULT_L2);
	assert_int_equal(td_record_decode(&recs[0], &dec), 0);
	check_nodes(&dec, &a, &b);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		assert_true(fabs(dec.mem[i] - res.mem[i]) < 1e-6);
	assert_true(fabs(dec.err - res.err) < 1e-6);
	emu_truth(&a);
	for (int i = 0; i < 2; i++) {
		emu_set_mem_shares(i ? SHARES_DRAM : SHARES_A);
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(30000000, &MIX_CHAIN);
		assert_int_equal(td_named_end(td, &n, NULL), 0);
	}
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &t), 0);
	assert_int_equal(t.calls, 2);
	check_nodes(&t.total, &a, &b);
	/* the table lists them under backend bound (no memory_bound row) */
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_TABLE), 0);
	fclose(f);
	be = strstr(text, "backend_bound");
	assert_non_null(be);
	assert_non_null(strstr(be, "\n      l1_bound "));
	assert_non_null(strstr(be, "\n      dram_bound "));
	free(text);
	td_close(td);
}

/*
 * Ice Lake's eight events take every general-purpose counter: with one
 * held by someone else the group never runs, and td_open says so.
 */
static void test_icl_no_room(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_ICL);
	emu_gp_reserve(1);
	o.flags = TD_OPT_MEMORY;
	assert_int_equal(td_open(&td, &o), -ENOSPC);
	assert_null(td);
	assert_non_null(strstr(td_strerror(-ENOSPC), "group of 8 events"));
	assert_int_equal(td_open(&td, NULL), 0);
	td_close(td);
}

/*
 * Records carry the nodes (their parts of memory bound in the reserved
 * words): td_record_decode gives them back, the CSV and JSONL reports
 * have them as columns l1_bound .. store_bound.
 */
static void test_records(void **state)
{
	struct td *td = open_memory(EMU_SPR, SHARES_A);
	struct td_record recs[2];
	struct td_region r = { { 0 } };
	struct td_result res, dec;
	struct emu_truth a, b;
	char *text = NULL, want[160];
	size_t len = 0, n = 0;
	FILE *f;

	(void)state;
	emu_run(600000, &MIX_STREAM);
	assert_int_equal(td_records_attach(td, recs, 2), 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(60000000, &MIX_DRAM);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_true(recs[0].flags & TD_RESULT_MEMORY);
	assert_int_equal(td_record_decode(&recs[0], &dec), 0);
	check_nodes(&dec, &a, &b);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		assert_true(fabs(dec.mem[i] - res.mem[i]) < 1e-6);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_records(f, recs, 1, TD_FORMAT_CSV), 0);
	fclose(f);
	/* the nodes, then the emulator's label (pmu, always last) */
	assert_non_null(strstr(text, ",l1_bound,l2_bound,l3_bound,dram_bound,"
				     "store_bound,pmu\n"));
	snprintf(want, sizeof(want), ",%.6f,%.6f,%.6f,%.6f,%.6f,emulated:",
		 dec.mem[0], dec.mem[1], dec.mem[2], dec.mem[3], dec.mem[4]);
	assert_non_null(strstr(text, want));
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_records(f, recs, 1, TD_FORMAT_JSONL), 0);
	fclose(f);
	snprintf(want, sizeof(want), "\"dram_bound\":%.6f,", dec.mem[3]);
	assert_non_null(strstr(text, want));
	free(text);
	td_close(td);
}

/* Named totals: the nodes of every call, slot-weighted, in the report. */
static void test_named_totals(void **state)
{
	static struct td_named n = TD_NAMED_INIT("chase");
	struct td *td = open_memory(EMU_ADL, SHARES_A);
	struct td_totals t;
	struct emu_truth a, b;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	emu_run(600000, &MIX_STREAM);
	emu_truth(&a);
	for (int i = 0; i < 2; i++) {
		emu_set_mem_shares(i ? SHARES_DRAM : SHARES_A);
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(30000000, i ? &MIX_DRAM : &MIX_CHAIN);
		assert_int_equal(td_named_end(td, &n, NULL), 0);
	}
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &t), 0);
	assert_int_equal(t.calls, 2);
	check_nodes(&t.total, &a, &b);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_TABLE), 0);
	fclose(f);
	assert_non_null(strstr(text, "      dram_bound"));
	free(text);
	td_close(td);
}

/* TOPDOWN_MEMORY=1 asks as the option does; another value is refused. */
static void test_environment(void **state)
{
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_SPR);
	emu_set_mem_shares(SHARES_A);
	setenv("TOPDOWN_MEMORY", "1", 1);
	setenv("TOPDOWN_RESET", "always", 1);
	assert_int_equal(td_open(&td, NULL), 0);
	unsetenv("TOPDOWN_RESET");
	check_region(td, 60000000, &MIX_CHAIN, false);
	td_close(td);
	td = NULL;
	setenv("TOPDOWN_MEMORY", "yes", 1);
	assert_int_equal(td_open(&td, NULL), -EINVAL);
	assert_null(td);
	/* the message names the setting, its value and the accepted ones */
	assert_non_null(strstr(td_strerror(-EINVAL),
			       "TOPDOWN_MEMORY=\"yes\" is not one of 0, 1"));
	unsetenv("TOPDOWN_MEMORY");
}

/* Without the option: no flag, and mem[] not written (the hot path). */
static void test_off_by_default(void **state)
{
	struct td *td = NULL;
	struct td_region r = { { 0 } };
	struct td_result res;

	(void)state;
	emu_setup(EMU_SPR);
	emu_set_mem_shares(SHARES_A);
	assert_int_equal(td_open(&td, NULL), 0);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		res.mem[i] = -7;
	measure_region(td, &r, 60000000, &MIX_CHAIN, &res);
	assert_false(res.flags & TD_RESULT_MEMORY);
	for (int i = 0; i < TD_MEM_COUNT; i++)
		assert_true(res.mem[i] == -7);
	td_close(td);
}

static void expect_refusal(enum emu_profile p, int err, const char *says)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(p);
	o.flags = TD_OPT_MEMORY;
	assert_int_equal(td_open(&td, &o), err);
	assert_null(td);
	if (!strstr(td_strerror(err), says))
		fail_msg("td_strerror(%d): \"%s\" does not say \"%s\"", err,
			 td_strerror(err), says);
	emu_teardown();
	/* the same CPU without the option opens */
	emu_setup(p);
	assert_int_equal(td_open(&td, NULL), 0);
	td_close(td);
}

/*
 * Lion Cove P-cores (Lunar Lake, Arrow Lake): perf's lnl-metrics.json
 * counts the nodes on MEMORY_STALLS.*, not Golden Cove's events, so the
 * drill-down is refused with that reason: on the Lunar Lake profile, on
 * the hybrid one with Skymont E-cores, and on the Alder Lake one offering
 * metrics-clear (the emulator's Arrow Lake, whose pmu keeps the Alder
 * Lake name: metrics-clear marks Lion Cove).
 */
static void test_lion_cove_refused(void **state)
{
	static void (*const variants[])(void) = { emu_hybrid_skymont,
						   emu_offer_metrics_clear };
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	(void)state;
	expect_refusal(EMU_LNL, -EOPNOTSUPP, "MEMORY_STALLS");
	o.flags = TD_OPT_MEMORY;
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		emu_setup(EMU_ADL);
		variants[i]();
		assert_int_equal(td_open(&td, &o), -EOPNOTSUPP);
		assert_null(td);
		assert_non_null(strstr(td_strerror(-EOPNOTSUPP),
				       "Lion Cove P-cores"));
		emu_teardown();
	}
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refusal(EMU_LNL, -EOPNOTSUPP, "memory drill-down");
	expect_refusal(EMU_ZEN4, -EOPNOTSUPP, "backend_bound_memory");
	expect_refusal(EMU_ZEN5, -EOPNOTSUPP, "backend_bound_memory");
	expect_refusal(EMU_SKL, -EOPNOTSUPP, "memory drill-down");
	expect_refusal(EMU_ARM_V3, -EOPNOTSUPP, "Neoverse N3/V3");
	expect_refusal(EMU_ARM_N2_R0P3, -EOPNOTSUPP, "memory drill-down");
}

/* A refusal's text does not stay for a later, unrelated error. */
static void test_refusal_text_cleared(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	(void)state;
	emu_setup(EMU_ZEN4);
	o.flags = TD_OPT_MEMORY;
	assert_int_equal(td_open(&td, &o), -EOPNOTSUPP);
	emu_teardown();
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	td_close(td);
	assert_null(strstr(td_strerror(-EOPNOTSUPP), "drill-down"));
}

/* The settings this file's tests make, put back after each test. */
TD_TEST_SAVED_ENV({ "TOPDOWN_MEMORY", NULL }, { "TOPDOWN_RESET", NULL })

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_spr_nodes, teardown_env),
		cmocka_unit_test_teardown(test_adl_pcore_nodes, teardown_env),
		cmocka_unit_test_teardown(test_adl_ecore_stint, teardown_env),
		cmocka_unit_test_teardown(test_icl_nodes, teardown_env),
		cmocka_unit_test_teardown(test_icl_records, teardown_env),
		cmocka_unit_test_teardown(test_icl_no_room, teardown_env),
		cmocka_unit_test_teardown(test_records, teardown_env),
		cmocka_unit_test_teardown(test_named_totals, teardown_env),
		cmocka_unit_test_teardown(test_environment, teardown_env),
		cmocka_unit_test_teardown(test_off_by_default, teardown_env),
		cmocka_unit_test_teardown(test_refusals, teardown_env),
		cmocka_unit_test_teardown(test_lion_cove_refused,
					  teardown_env),
		cmocka_unit_test_teardown(test_refusal_text_cleared,
					  teardown_env),
	};

	return cmocka_run_group_tests(tests, save_env, free_env);
}
