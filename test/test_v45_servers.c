/* SPDX-License-Identifier: MIT */
/*
 * The server parts of Sandy Bridge .. Broadwell (emu_hsw_model) get their
 * own perf lists' level 2 (tools/perf/pmu-events/arch/x86/<dir>/
 * *-metrics.json, MetricGroup TopdownL2), which are their client cores':
 * jaketown and ivytown's tma_memory_bound takes min(CPU_CLK_UNHALTED.
 * THREAD, CYCLE_ACTIVITY.STALLS_L1D_PENDING / STALLS_LDM_PENDING) and
 * the thread's execution cycles (UOPS_DISPATCHED.THREAD cmask n,
 * UOPS_EXECUTED.CYCLES_GE_n_UOP(S)_EXEC) as sandybridge's and
 * ivybridge's; haswellx's the core's (UOPS_EXECUTED.CORE cmask n), as
 * haswell's; broadwellx's and broadwellde's CYCLE_ACTIVITY.STALLS_MEM_ANY
 * and STALLS_TOTAL without min and the thread's execution cycles, as
 * broadwell's.  Each model's level 1 and level 2 (TD_OPT_L2_MULTIPLEX)
 * against the truth, with the emulator counting each core's encodings.
 */
#include <string.h>

#include "helpers.h"

/* Slots between the emulated kernel's rotations (a few ms of a core). */
#define MUX_INTERVAL 300000

static const struct emu_mix *const mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					       &MIX_STREAM, &MIX_DRAM };

/* Long regions of steady mixes: the true fractions back, to rounding. */
static void server_l2(unsigned model)
{
	struct td_info info;
	struct td *td;

	emu_setup(EMU_HSW);
	emu_hsw_model(model);
	td = open_l2_multiplexed(MUX_INTERVAL, &info);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		struct td_region r = { { 0 } };
		struct td_result res;
		struct truth_frac t;

		t = measure_region(td, &r, 40 * MUX_INTERVAL, mixes[i], &res);
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
		assert_true(res.flags & TD_RESULT_MULTIPLEXED);
		assert_true(res.flags & TD_RESULT_L2);
		for (int k = 0; k < TD_L1_COUNT; k++)
			assert_float_equal(res.l1[k], t.l1[k], 2e-3);
		for (int k = 0; k < TD_L2_COUNT; k++)
			if (fabs(res.l2[k] - t.l2[k]) > 2e-3)
				fail_msg("model %#x l2[%d] %.5f true %.5f",
					 model, k, res.l2[k], t.l2[k]);
	}
	td_close(td);
}

static void test_jaketown(void **state)
{
	(void)state;
	server_l2(0x2d);
}

static void test_ivytown(void **state)
{
	(void)state;
	server_l2(0x3e);
}

static void test_haswellx(void **state)
{
	(void)state;
	server_l2(0x3f);
}

static void test_broadwellx(void **state)
{
	(void)state;
	server_l2(0x4f);
}

static void test_broadwellde(void **state)
{
	(void)state;
	server_l2(0x56);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_jaketown, teardown_emu),
		cmocka_unit_test_teardown(test_ivytown, teardown_emu),
		cmocka_unit_test_teardown(test_haswellx, teardown_emu),
		cmocka_unit_test_teardown(test_broadwellx, teardown_emu),
		cmocka_unit_test_teardown(test_broadwellde, teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
