/* SPDX-License-Identifier: MIT */
/*
 * The accuracy contract as tests (README.md, "Precision and resets"):
 * with the default options (auto policy, 1 pp target, 5% budget) every
 * region of at least 1e6 slots is within the error target whatever ran
 * before it, and the resets cost at most the budget of the measured
 * slots in every series of at least 2e6 measured slots.
 *
 * Each scenario runs on every source the emulator has on x86: PERF_METRICS
 * (Sapphire Rapids with level 2, Ice Lake without), metrics-clear (Lunar
 * Lake), hybrid P-cores (Alder Lake) and ordinary counters (Zen 4, Skylake,
 * Gracemont).  The truth is the emulated workload's composition; the bound
 * is the target itself, never a figure taken from the library.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define TARGET 0.01
#define LONG_RUN 100000000000ull /* 1e11 slots of work outside any region */
#define RESET_COST 40000.0       /* the default cost model (td_options) */
#define BUDGET 0.05              /* the default reset budget */

static const enum emu_profile profiles[] = { EMU_SPR, EMU_ICL, EMU_LNL,
					     EMU_ADL, EMU_ZEN4, EMU_SKL,
					     EMU_GRT };
#define NR_PROFILES (sizeof(profiles) / sizeof(*profiles))

/* Sources whose kernel can zero the registers under the library. */
static bool perf_metrics(enum emu_profile p)
{
	return p == EMU_SPR || p == EMU_ICL || p == EMU_LNL || p == EMU_ADL;
}

static enum emu_profile current; /* for the failure messages */

static struct td *open_default(enum emu_profile p)
{
	struct td *td = NULL;

	current = p;
	emu_setup(p);
	assert_int_equal(td_open(&td, NULL), 0);
	return td;
}

static void close_default(struct td *td)
{
	td_close(td);
	emu_teardown();
}

static uint64_t resets_now(void)
{
	struct emu_stats s;

	emu_stats(&s);
	return s.resets;
}

/* A region open on td with its truth taken at the begin. */
struct open_region {
	struct td_region r;
	struct emu_truth at_begin;
};

static void begin(struct td *td, struct open_region *o)
{
	assert_int_equal(td_region_begin(td, &o->r), 0);
	emu_truth(&o->at_begin);
}

static void end_within(struct td *td, struct open_region *o)
{
	struct emu_truth now;
	struct td_result res;
	struct truth_frac t;

	emu_truth(&now);
	assert_int_equal(td_region_end(td, &o->r, &res), 0);
	t = truth_between(&o->at_begin, &now);
	if (res.flags & TD_RESULT_UNRELIABLE || res.err > TARGET ||
	    max_error(&res, &t) > res.err + 1e-12)
		fail_msg("profile %d, region of %llu slots: flags %#x error "
			 "%.5f err %.5f", (int)current, (unsigned long long)res.slots,
			 res.flags, max_error(&res, &t), res.err);
}

/*
 * The first region of a new handle after 1e11 slots of other work, 1e6 to
 * 1e9 slots long, of the mix that ran before it and of another one.
 */
static void test_first_region_after_long_run(void **state)
{
	static const uint64_t lens[] = { 1000000, 10000000, 100000000,
					 1000000000 };

	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++)
		for (size_t l = 0; l < 4; l++)
			for (int changing = 0; changing < 2; changing++) {
				struct td *td = open_default(profiles[p]);
				struct open_region o = { 0 };

				emu_run(LONG_RUN, &MIX_CHAIN);
				begin(td, &o);
				emu_run(lens[l], changing ? &MIX_DRAM : &MIX_CHAIN);
				end_within(td, &o);
				close_default(td);
			}
}

/*
 * Regions up to 1e13 slots into the handle's life, each region the first
 * call of its object: the run before it must not matter.
 */
static void test_first_calls_after_any_run(void **state)
{
	static const uint64_t runs[] = { 0, 1000, 10000000, 10000000000ull,
					 10000000000000ull };

	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++) {
		struct td *td = open_default(profiles[p]);

		for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
			struct open_region o = { 0 };

			emu_run(runs[i], &MIX_STREAM);
			begin(td, &o);
			emu_run(1000000, &MIX_BRANCHY);
			end_within(td, &o);
		}
		close_default(td);
	}
}

/*
 * Inner regions of 1e6 slots that begin 1e8 slots into their outer
 * region, three times over the same objects, after a long run: the outer
 * region's open slots pay for the inner one's reset.
 */
static void test_nested_inner_after_long_stretch(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++) {
		struct td *td = open_default(profiles[p]);
		struct open_region outer = { 0 }, inner = { 0 };

		emu_run(LONG_RUN, &MIX_STREAM);
		for (int i = 0; i < 3; i++) {
			begin(td, &outer);
			emu_run(100000000, &MIX_STREAM);
			begin(td, &inner);
			emu_run(1000000, &MIX_DRAM);
			end_within(td, &inner);
			emu_run(1000000, &MIX_BRANCHY);
			end_within(td, &outer);
		}
		close_default(td);
	}
}

/*
 * Twenty nested regions, each begun 1e7 slots after its parent, the
 * innermost 1e6 slots long: every level within the target.
 */
static void test_deep_nesting(void **state)
{
	enum { DEPTH = 20 };

	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++) {
		struct td *td = open_default(profiles[p]);
		struct open_region o[DEPTH];

		memset(o, 0, sizeof(o));
		emu_run(LONG_RUN, &MIX_CHAIN);
		for (int d = 0; d < DEPTH; d++) {
			begin(td, &o[d]);
			emu_run(d == DEPTH - 1 ? 1000000 : 10000000,
				d % 2 ? &MIX_DRAM : &MIX_BRANCHY);
		}
		for (int d = DEPTH - 1; d >= 0; d--)
			end_within(td, &o[d]);
		close_default(td);
	}
}

/* A begins, B begins 1e8 later, A ends, B ends: both within the target. */
static void test_interleaved_after_long_run(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++) {
		struct td *td = open_default(profiles[p]);
		struct open_region a = { 0 }, b = { 0 };

		emu_run(LONG_RUN, &MIX_STREAM);
		for (int i = 0; i < 3; i++) {
			begin(td, &a);
			emu_run(100000000, &MIX_CHAIN);
			begin(td, &b);
			emu_run(10000000, &MIX_DRAM);
			end_within(td, &a);
			emu_run(1000000, &MIX_BRANCHY);
			end_within(td, &b);
		}
		close_default(td);
	}
}

/*
 * What the kernel does between regions (a context switch, a PMI, someone
 * else's read(2) of the group) after a long run: the next region of 1e6
 * slots, first call of its object or not, is within the target.
 */
static void test_kernel_events_before_region(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_PROFILES; p++) {
		struct td *td = open_default(profiles[p]);
		struct open_region o = { 0 };

		emu_run(LONG_RUN, &MIX_STREAM);
		for (int ev = 0; ev < 3; ev++) {
			struct open_region fresh = { 0 };

			if (ev == 0)
				emu_context_switch(1000000000);
			else if (perf_metrics(profiles[p]))
				ev == 1 ? emu_pmi() : emu_foreign_read();
			emu_run(50000000, &MIX_CHAIN);
			begin(td, &fresh);
			emu_run(1000000, &MIX_DRAM);
			end_within(td, &fresh);
			emu_run(50000000, &MIX_STREAM);
			begin(td, &o);
			emu_run(1000000, &MIX_BRANCHY);
			end_within(td, &o);
		}
		close_default(td);
	}
}

/*
 * A series of n regions of len slots each (a few slots apart) after a long
 * run: the resets it caused cost at most the budget of its measured slots.
 */
static void assert_series_within_budget(enum emu_profile p, int n,
					uint64_t len)
{
	struct td *td = open_default(p);
	struct td_region r = { { 0 } };
	struct td_result res;
	uint64_t before;
	double measured = (double)n * (double)len;

	emu_run(LONG_RUN, &MIX_STREAM);
	before = resets_now();
	for (int i = 0; i < n; i++) {
		struct truth_frac t = measure_region(td, &r, len, &MIX_CHAIN,
						     &res);

		/* short regions: outside the target's domain, err honest */
		assert_within(&res, &t, len >= 1000000 ? TARGET : 1.0 + 1e-12);
		emu_run(10, &MIX_BRANCHY);
	}
	if ((double)(resets_now() - before) * RESET_COST > BUDGET * measured)
		fail_msg("%d regions of %llu slots: %llu resets", n,
			 (unsigned long long)len,
			 (unsigned long long)(resets_now() - before));
	close_default(td);
}

static void test_short_loop_after_long_run_within_budget(void **state)
{
	(void)state;
	assert_series_within_budget(EMU_SPR, 3000, 1000);
	assert_series_within_budget(EMU_SPR, 2000, 1000);
	assert_series_within_budget(EMU_SPR, 200, 10000);
	assert_series_within_budget(EMU_SPR, 30, 100000);
	assert_series_within_budget(EMU_SPR, 3, 1000000);
	assert_series_within_budget(EMU_ICL, 2500, 1000);
	assert_series_within_budget(EMU_ADL, 2500, 1000);
}

/*
 * A bad TOPDOWN_RESET fails td_open, and td_strerror says which setting,
 * its value and the values accepted (lower case: ALWAYS is not always);
 * the next td_open of the thread starts clean.
 */
static void test_bad_reset_quoted(void **state)
{
	struct td *td = NULL;
	const char *msg;

	(void)state;
	emu_setup(EMU_SPR);
	setenv("TOPDOWN_RESET", "ALWAYS", 1);
	assert_int_equal(td_open(&td, NULL), -EINVAL);
	assert_null(td);
	unsetenv("TOPDOWN_RESET");
	msg = td_strerror(-EINVAL);
	assert_non_null(strstr(msg, "TOPDOWN_RESET=\"ALWAYS\""));
	assert_non_null(strstr(msg, "auto, always, never"));
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_open(NULL, NULL), -EINVAL); /* not a setting */
	assert_null(strstr(td_strerror(-EINVAL), "ALWAYS"));
	td_close(td);
	emu_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_region_after_long_run),
		cmocka_unit_test(test_first_calls_after_any_run),
		cmocka_unit_test(test_nested_inner_after_long_stretch),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_interleaved_after_long_run),
		cmocka_unit_test(test_kernel_events_before_region),
		cmocka_unit_test(test_short_loop_after_long_run_within_budget),
		cmocka_unit_test(test_bad_reset_quoted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
