/* SPDX-License-Identifier: MIT */
/*
 * Named totals over handles that measure in different forms: one struct
 * td_named used on an AMD Zen 4 handle with TD_OPT_L2_MULTIPLEX (level 1
 * scaled by its time enabled / running, level 2 estimated from the
 * multiplexed groups' sums) and on one without it (level 1 counted
 * whole, no level 2), one after the other on one thread, or on another
 * thread.  td_named_totals must give the slot-weighted breakdown of both
 * handles' calls together, held to the workload's truth over both, and
 * no level 2 where part of the calls measured none.
 */
#include <pthread.h>
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
/* Each handle's share of the work: the same number of slots. */
#define MUX_CALLS   600
#define MUX_CALL    (MUX_INTERVAL / 10)
#define PLAIN_CALLS 60
#define PLAIN_CALL  (MUX_CALLS * MUX_CALL / PLAIN_CALLS)
/*
 * Totals against the truth: the multiplexed calls cover whole rotations
 * of steady mixes (MUX_CALLS x MUX_CALL = 60 intervals), so the time
 * scaling makes the estimate exact and the plain handle's counts are
 * exact: what is left is floating-point rounding (measured: 0).
 */
#define TOTALS_TOL 1e-9

static struct td *open_handle(bool mux)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td;

	o.flags = mux ? TD_OPT_L2_MULTIPLEX : 0;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.levels, mux ? 2 : 1);
	assert_int_equal(!!(info.flags & TD_INFO_MULTIPLEXED), mux);
	return td;
}

static void setup_zen4(void)
{
	emu_setup(EMU_ZEN4);
	emu_set_mux_interval(MUX_INTERVAL);
}

/* ret .40 (heavy .05), bad .10, fe .20, smt .05, backend .25 */
static struct emu_mix mix_mux(void)
{
	return emu_mix_amd_l2(0.40, 0.10, 0.20, 0.05, 0.05, 0.06, 0.12, 0.15);
}

/* a different region: ret .15, bad .05, fe .10, smt .10, backend .60 */
static struct emu_mix mix_plain(void)
{
	return emu_mix_amd_l2(0.15, 0.05, 0.10, 0.10, 0.02, 0.03, 0.05, 0.40);
}

/* calls named regions of len slots of mix on td */
static void run_calls(struct td *td, struct td_named *n, int calls,
		      uint64_t len, const struct emu_mix *mix)
{
	struct td_result r;

	for (int i = 0; i < calls; i++) {
		assert_int_equal(td_named_begin(td, n), 0);
		emu_run(len, mix);
		assert_int_equal(td_named_end(td, n, &r), 0);
	}
}

static void run_handle(bool mux, struct td_named *n, bool close)
{
	struct td *td = open_handle(mux);
	struct emu_mix m = mux ? mix_mux() : mix_plain();

	run_calls(td, n, mux ? MUX_CALLS : PLAIN_CALLS,
		  mux ? MUX_CALL : PLAIN_CALL, &m);
	if (close)
		td_close(td);
}

/*
 * The totals of both handles' calls against the truth between a and b
 * (every slot run between them was in a call of n): slots, level 1 and
 * SMT contention slot-weighted over both, flagged an estimate, and no
 * level 2 (the unmultiplexed handle's calls measured none).
 */
static void assert_combined(const struct td_named *n,
			    const struct emu_truth *a,
			    const struct emu_truth *b)
{
	struct truth_frac t = truth_between(a, b);
	double slots = (double)(b->slots - a->slots);
	double smt = (double)(b->cat[8] - a->cat[8]) / slots;
	struct td_totals tot;

	assert_int_equal(td_named_totals(n, &tot), 0);
	assert_int_equal(tot.calls, MUX_CALLS + PLAIN_CALLS);
	assert_int_equal(tot.unreliable, 0);
	assert_false(tot.total.flags & TD_RESULT_UNRELIABLE);
	assert_true(tot.total.flags & TD_RESULT_MULTIPLEXED);
	assert_float_equal((double)tot.total.slots / slots, 1, TOTALS_TOL);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(tot.total.l1[i], t.l1[i], TOTALS_TOL);
	assert_float_equal(tot.total.smt_contention, smt, TOTALS_TOL);
	assert_false(tot.total.flags & TD_RESULT_L2);
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_float_equal(tot.total.l2[i], 0, 0);
}

/* The multiplexed handle closed (its totals in n), the other open. */
static void test_mux_closed_then_plain_open(void **state)
{
	static struct td_named n = TD_NAMED_INIT("mixed");
	struct emu_truth a, b;
	struct td *plain;
	struct emu_mix m = mix_plain();

	(void)state;
	setup_zen4();
	emu_truth(&a);
	run_handle(true, &n, true);
	plain = open_handle(false);
	run_calls(plain, &n, PLAIN_CALLS, PLAIN_CALL, &m);
	emu_truth(&b);
	assert_combined(&n, &a, &b); /* one folded, one open */
	td_close(plain);
	assert_combined(&n, &a, &b); /* both folded */
	memset(&n, 0, sizeof(n));
}

/* The other order: the unmultiplexed handle's totals folded first. */
static void test_plain_closed_then_mux_open(void **state)
{
	static struct td_named n = TD_NAMED_INIT("mixed");
	struct emu_truth a, b;
	struct td *mux;
	struct emu_mix m = mix_mux();

	(void)state;
	setup_zen4();
	emu_truth(&a);
	run_handle(false, &n, true);
	mux = open_handle(true);
	run_calls(mux, &n, MUX_CALLS, MUX_CALL, &m);
	emu_truth(&b);
	assert_combined(&n, &a, &b);
	td_close(mux);
	assert_combined(&n, &a, &b);
	memset(&n, 0, sizeof(n));
}

/* By name: the same through td_named_totals_str. */
static void test_by_name(void **state)
{
	struct emu_mix mm = mix_mux(), mp = mix_plain();
	struct emu_truth a, b;
	struct td_totals tot;
	struct td *td;
	double slots;

	(void)state;
	setup_zen4();
	emu_truth(&a);
	td = open_handle(true);
	for (int i = 0; i < MUX_CALLS; i++) {
		assert_int_equal(td_named_begin_str(td, "mixed by name"), 0);
		emu_run(MUX_CALL, &mm);
		assert_int_equal(td_named_end_str(td, "mixed by name", NULL),
				 0);
	}
	td_close(td);
	td = open_handle(false);
	for (int i = 0; i < PLAIN_CALLS; i++) {
		assert_int_equal(td_named_begin_str(td, "mixed by name"), 0);
		emu_run(PLAIN_CALL, &mp);
		assert_int_equal(td_named_end_str(td, "mixed by name", NULL),
				 0);
	}
	emu_truth(&b);
	slots = (double)(b.slots - a.slots);
	assert_int_equal(td_named_totals_str("mixed by name", &tot), 0);
	assert_float_equal((double)tot.total.slots / slots, 1, TOTALS_TOL);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(tot.total.l1[i],
				   truth_between(&a, &b).l1[i], TOTALS_TOL);
	assert_false(tot.total.flags & TD_RESULT_L2);
	td_close(td);
}

struct worker {
	struct td_named *n;
	struct emu_truth a, b; /* the worker's own work (emu_truth) */
};

static void *mux_thread(void *arg)
{
	struct worker *w = arg;

	emu_truth(&w->a);
	run_handle(true, w->n, true);
	emu_truth(&w->b);
	return NULL;
}

/* b - a of this thread plus the worker's, as truth from 0 to *b */
static void truth_add(struct emu_truth *a, struct emu_truth *b,
		      const struct worker *w)
{
	b->slots = b->slots - a->slots + w->b.slots - w->a.slots;
	for (int i = 0; i < 9; i++)
		b->cat[i] = b->cat[i] - a->cat[i] + w->b.cat[i] - w->a.cat[i];
	memset(a, 0, sizeof(*a));
}

/*
 * Across threads: another thread's multiplexed handle, closed (its totals
 * in n), and this thread's open one without multiplexing.
 */
static void test_mux_other_thread(void **state)
{
	static struct td_named n = TD_NAMED_INIT("threads");
	struct worker w = { .n = &n };
	struct emu_truth a, b;
	struct td *plain;
	struct emu_mix m = mix_plain();
	pthread_t t;

	(void)state;
	setup_zen4();
	emu_truth(&a);
	assert_int_equal(pthread_create(&t, NULL, mux_thread, &w), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	plain = open_handle(false);
	run_calls(plain, &n, PLAIN_CALLS, PLAIN_CALL, &m);
	emu_truth(&b);
	truth_add(&a, &b, &w);
	assert_combined(&n, &a, &b);
	td_close(plain);
	assert_combined(&n, &a, &b);
	memset(&n, 0, sizeof(n));
}

/*
 * Two multiplexed handles of one model: their raw level-2 sums are of the
 * same formula and pool (one estimate over both, as over one handle's
 * calls): level 2 kept, within rounding of the truth of the steady mix.
 */
static void test_two_mux_handles_pool(void **state)
{
	static struct td_named n = TD_NAMED_INIT("pooled");
	struct emu_truth a, b;
	struct td_totals tot;
	struct truth_frac t;
	double slots;

	(void)state;
	setup_zen4();
	emu_truth(&a);
	run_handle(true, &n, true);
	run_handle(true, &n, true);
	emu_truth(&b);
	t = truth_between(&a, &b);
	slots = (double)(b.slots - a.slots);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 2 * MUX_CALLS);
	assert_true(tot.total.flags & TD_RESULT_MULTIPLEXED);
	assert_true(tot.total.flags & TD_RESULT_L2);
	assert_float_equal((double)tot.total.slots / slots, 1, TOTALS_TOL);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(tot.total.l1[i], t.l1[i], TOTALS_TOL);
	for (int i = 0; i < TD_L2_COUNT; i++)
		assert_float_equal(tot.total.l2[i], t.l2[i], TOTALS_TOL);
	memset(&n, 0, sizeof(n));
}

/* SPR: named calls of 6M slots of mix on a handle, then closed. */
static void run_memory_handle(struct td_named *n, bool memory,
			      const struct emu_mix *mix)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td;

	o.flags = memory ? TD_OPT_MEMORY : 0;
	o.reset_policy = TD_RESET_ALWAYS; /* each call's err near 2/255 */
	assert_int_equal(td_open(&td, &o), 0);
	run_calls(td, n, 10, 6000000, mix);
	td_close(td);
}

/*
 * The memory drill-down on one handle and not on the other: the nodes
 * are not reported (half the calls have none), levels 1 and 2 still
 * hold to the truth of both within the totals' err; on both, the nodes
 * too.
 */
static void memory_pair(bool both)
{
	/* every handle closed before the return: no slot outlives n */
	struct td_named n = TD_NAMED_INIT("memory");
	struct emu_truth a, b;
	struct td_totals tot;
	struct truth_frac t;

	emu_setup(EMU_SPR);
	emu_set_mem_shares((const double[5]){ 0.10, 0.20, 0.30, 0.25, 0.15 });
	emu_truth(&a);
	run_memory_handle(&n, true, &MIX_CHAIN);
	run_memory_handle(&n, both, &MIX_DRAM);
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	t = truth_for(&tot.total, &a, &b);
	assert_int_equal(tot.calls, 20);
	assert_true(tot.total.flags & TD_RESULT_L2);
	assert_within(&tot.total, &t, 0.01);
	assert_int_equal(!!(tot.total.flags & TD_RESULT_MEMORY), both);
	for (int i = 0; both && i < TD_MEM_COUNT; i++) {
		double truth = (double)(b.mem[i] - a.mem[i]) /
			       (double)(b.slots - a.slots);

		if (fabs(tot.total.mem[i] - truth) > tot.total.err + 1e-12)
			fail_msg("node %d: %.6f, truth %.6f, err %.6f", i,
				 tot.total.mem[i], truth, tot.total.err);
	}
}

static void test_memory_on_one_handle(void **state)
{
	(void)state;
	memory_pair(false);
}

static void test_memory_on_both_handles(void **state)
{
	(void)state;
	memory_pair(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_mux_closed_then_plain_open,
					  teardown_emu),
		cmocka_unit_test_teardown(test_plain_closed_then_mux_open,
					  teardown_emu),
		cmocka_unit_test_teardown(test_by_name, teardown_emu),
		cmocka_unit_test_teardown(test_mux_other_thread,
					  teardown_emu),
		cmocka_unit_test_teardown(test_two_mux_handles_pool,
					  teardown_emu),
		cmocka_unit_test_teardown(test_memory_on_one_handle,
					  teardown_emu),
		cmocka_unit_test_teardown(test_memory_on_both_handles,
					  teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
