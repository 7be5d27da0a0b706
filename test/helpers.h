/* SPDX-License-Identifier: MIT */
/* Shared helpers of the emulator-backed tests. */
#ifndef TD_TEST_HELPERS_H
#define TD_TEST_HELPERS_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "truth.h"

/*
 * Assert a result against the truth: reliable, within its own err, and
 * that err within the bound the scenario states.
 */
#define assert_within(res, truth, bound)                                   \
	do {                                                                \
		double e_ = max_error((res), (truth));                      \
		if (((res)->flags & TD_RESULT_UNRELIABLE) ||                \
		    e_ > (res)->err + 1e-12 || (res)->err > (bound))        \
			fail_msg("flags %#x error %.5f err %.5f bound %.5f", \
				 (res)->flags, e_, (res)->err, (double)(bound)); \
	} while (0)

/*
 * One region of `slots` slots of `mix`, begun and ended on td (res may be
 * NULL); returns the workload's true fractions over it.
 */
static inline struct truth_frac measure_region(struct td *td,
					       struct td_region *r,
					       uint64_t slots,
					       const struct emu_mix *mix,
					       struct td_result *res)
{
	struct emu_truth a, b;

	assert_int_equal(td_region_begin(td, r), 0);
	emu_truth(&a);
	emu_run(slots, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, res), 0);
	return truth_between(&a, &b);
}

/*
 * An environment variable a file's tests set (TOPDOWN_*), as it was when
 * the file's group began (env_save, in the group's setup).  Each test's
 * teardown puts it back (env_restore): cmocka runs the teardown after a
 * failed assertion too, so a test that fails between its setenv and its
 * unsetenv leaves the setting to no other test.
 */
struct saved_env {
	const char *name;
	char *value; /* NULL: unset */
};

static inline void env_save(struct saved_env *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *now = getenv(v[i].name);

		v[i].value = now ? strdup(now) : NULL;
		if (now && !v[i].value)
			fail_msg("env_save: out of memory");
	}
}

static inline void env_restore(const struct saved_env *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].value)
			setenv(v[i].name, v[i].value, 1);
		else
			unsetenv(v[i].name);
	}
}

static inline void env_free(struct saved_env *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].value);
		v[i].value = NULL;
	}
}

/* cmocka teardown of every emulator-backed test. */
static inline int teardown_emu(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

/*
 * A test file's saved settings and its cmocka hooks: save_env and
 * free_env for the group, teardown_env (teardown_emu after putting the
 * settings back) for each test.  Use once per file, e.g.
 * TD_TEST_SAVED_ENV({ "TOPDOWN_L2", NULL });
 */
#define TD_TEST_SAVED_ENV(...)                                            \
	static struct saved_env env[] = { __VA_ARGS__ };                  \
	static int save_env(void **state)                                 \
	{                                                                 \
		(void)state;                                              \
		env_save(env, sizeof(env) / sizeof(env[0]));              \
		return 0;                                                 \
	}                                                                 \
	static int free_env(void **state)                                 \
	{                                                                 \
		(void)state;                                              \
		env_restore(env, sizeof(env) / sizeof(env[0]));           \
		env_free(env, sizeof(env) / sizeof(env[0]));              \
		return 0;                                                 \
	}                                                                 \
	static int teardown_env(void **state)                             \
	{                                                                 \
		env_restore(env, sizeof(env) / sizeof(env[0]));           \
		return teardown_emu(state);                               \
	}

/*
 * A test file's handle, cur, and its cmocka hooks: close_cur, for a test
 * to close it on its way, and teardown, which closes it even when the
 * test fails (so that the next test's handle is its thread's first, its
 * fast handle) and then the emulator.  Use once per file.
 */
#define TD_TEST_HANDLE                                                    \
	static struct td *cur;                                            \
	static void close_cur(void)                                       \
	{                                                                 \
		if (cur)                                                  \
			td_close(cur);                                    \
		cur = NULL;                                               \
	}                                                                 \
	static int teardown(void **state)                                 \
	{                                                                 \
		close_cur();                                              \
		return teardown_emu(state);                               \
	}

/*
 * A region's result that is either right or flagged: reliable, it must
 * count every slot of the work (a to b) and be within its own err.
 */
static inline void assert_right_or_flagged(const struct td_result *res,
					   const struct emu_truth *a,
					   const struct emu_truth *b)
{
	struct truth_frac t = truth_between(a, b);
	double e = max_error(res, &t);

	if (res->flags & TD_RESULT_UNRELIABLE)
		return;
	if (res->slots != b->slots - a->slots || e > res->err + 1e-12)
		fail_msg("flags %#x slots %llu, truth %llu, error %.5f err %.5f",
			 res->flags, (unsigned long long)res->slots,
			 (unsigned long long)(b->slots - a->slots), e,
			 res->err);
}

/*
 * A region r of `slots` slots of mix on td, reliable and right: every
 * slot of its work counted, within its own err of the truth.
 */
static inline void assert_region_right(struct td *td, struct td_region *r,
				       uint64_t slots,
				       const struct emu_mix *mix)
{
	struct td_result res;
	struct emu_truth a, b;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_run(slots, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_right_or_flagged(&res, &a, &b);
}

/*
 * Each memory drill-down node of r within r's err of its true share of
 * the slots between a and b; returns the nodes' sum.
 */
static inline double nodes_within_err(const struct td_result *r,
				      const struct emu_truth *a,
				      const struct emu_truth *b)
{
	double sum = 0;

	for (int i = 0; i < TD_MEM_COUNT; i++) {
		double truth = (double)(b->mem[i] - a->mem[i]) /
			       (double)(b->slots - a->slots);

		if (fabs(r->mem[i] - truth) > r->err + 1e-12)
			fail_msg("node %d: %.6f, truth %.6f, err %.6f", i,
				 r->mem[i], truth, r->err);
		sum += r->mem[i];
	}
	return sum;
}

/*
 * The nodes within r's err of the truth and summing to r's memory bound
 * (perf's split of memory bound, pm_memory.c).
 */
static inline void assert_memory_nodes(const struct td_result *r,
				       const struct emu_truth *a,
				       const struct emu_truth *b)
{
	assert_true(fabs(nodes_within_err(r, a, b) - r->l2[TD_MEM_BOUND]) <
		    1e-9);
}

/*
 * A handle with level 2 by multiplexing (TD_OPT_L2_MULTIPLEX), the
 * emulated kernel rotating the groups every `interval` slots; its
 * td_info, level 2 and multiplexed, in *info.
 */
static inline struct td *open_l2_multiplexed(uint64_t interval,
					     struct td_info *info)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_set_mux_interval(interval);
	o.flags = TD_OPT_L2_MULTIPLEX;
	assert_int_equal(td_open(&td, &o), 0);
	*info = (struct td_info){ .size = sizeof(*info) };
	assert_int_equal(td_query(td, info), 0);
	assert_int_equal(info->levels, 2);
	assert_true(info->flags & TD_INFO_MULTIPLEXED);
	return td;
}

/* td_info.flags of td. */
static inline unsigned info_flags(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	return info.flags;
}

#endif
