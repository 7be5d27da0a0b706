/* SPDX-License-Identifier: MIT */
/*
 * td_open against the emulated kernel: detection from sysfs, the group's
 * attributes, failures with distinct errors, options, misuse of regions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "helpers.h"

static void expect_open_error(enum emu_profile p, int err, const char *word)
{
	struct td *td = (struct td *)0x1;

	emu_setup(p);
	assert_int_equal(td_open(&td, NULL), err);
	assert_null(td);
	assert_non_null(strstr(td_strerror(err), word));
	emu_teardown();
}

static void test_no_pmu(void **state)
{
	(void)state;
	expect_open_error(EMU_NO_PMU, -ENODEV, "PMU");
}

/* No PERF_METRICS and a CPU without a formula (Core 2): named, no guess. */
static void test_no_topdown(void **state)
{
	(void)state;
	expect_open_error(EMU_NO_TOPDOWN, -ENOSYS,
			  "GenuineIntel family 0x6 model 0xf");
	assert_int_not_equal(-ENOSYS, -EOPNOTSUPP);
}

static void test_paranoid(void **state)
{
	struct emu_stats s;

	(void)state;
	expect_open_error(EMU_PARANOID, -EACCES, "perf_event_paranoid");
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
}

/*
 * The group: SLOTS leader + 8 metrics, this thread, CLOEXEC, same bits;
 * and INT_MISC.UOP_DROPPING beside it (pm_uop.c: Sapphire Rapids' perf
 * list subtracts it from frontend bound), mapped too.
 */
static void test_group_attributes(void **state)
{
	struct td *td;
	struct emu_stats s;
	struct td_info info = { .size = sizeof(info) };

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_stats(&s);
	assert_int_equal(s.perf_opens, 10);
	assert_int_equal(s.open_fds, 10);
	assert_int_equal(s.maps, 3);
	assert_true(s.last_open_flags & PERF_FLAG_FD_CLOEXEC);
	assert_int_equal(s.last_open_pid, 0);
	assert_int_equal(s.last_open_cpu, -1);
	assert_false(s.exclude_mismatch);
	memset(&info, 0xa5, sizeof(info)); /* the padding must be written */
	info.size = sizeof(info);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.reserved0, 0);
	assert_int_equal(info.reserved1, 0);
	assert_int_equal(info.levels, 2);
	assert_string_equal(info.uarch, "sapphire_rapids"); /* caps/pmu_name */
	assert_string_equal(info.pmu_name, "cpu");
	assert_int_equal(info.pmu_type, 4);
	td_close(td);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
}

/* Ice Lake lists four topdown events: four metrics, never 0x8400+
 * (and INT_MISC.UOP_DROPPING beside them, as on Sapphire Rapids, and
 * INT_MISC.CLEARS_COUNT, Ice Lake's alone). */
static void test_icl_opens_level1_only(void **state)
{
	struct td *td;
	struct emu_stats s;

	(void)state;
	emu_setup(EMU_ICL);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 7);
	td_close(td);
}

/* Hybrid: the cpu_core PMU is found and used. */
static void test_hybrid_uses_cpu_core(void **state)
{
	struct td *td;
	struct td_info info = { .size = sizeof(info) };

	(void)state;
	emu_setup(EMU_ADL);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_string_equal(info.pmu_name, "cpu_core");
	td_close(td);
}

static void test_options(void **state)
{
	struct td *td = NULL;
	struct td_options o = TD_OPTIONS_INIT;
	unsigned char big[sizeof(o) + 16];

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(NULL, NULL), -EINVAL);
	o.size = 0;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	o = (struct td_options)TD_OPTIONS_INIT;
	o.flags = 1u << 30;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	o = (struct td_options)TD_OPTIONS_INIT;
	o.err_target = -1;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	o = (struct td_options)TD_OPTIONS_INIT;
	o.reset_policy = (enum td_reset_policy)42;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	/* a newer caller's larger struct: fine when the tail is zero */
	memset(big, 0, sizeof(big));
	o = (struct td_options)TD_OPTIONS_INIT;
	memcpy(big, &o, sizeof(o));
	((struct td_options *)big)->size = sizeof(big);
	assert_int_equal(td_open(&td, (struct td_options *)big), 0);
	td_close(td);
	big[sizeof(o) + 3] = 1;
	assert_int_equal(td_open(&td, (struct td_options *)big), -EINVAL);
	/* an older caller's smaller struct: the rest defaults */
	o = (struct td_options)TD_OPTIONS_INIT;
	o.size = offsetof(struct td_options, reset_policy);
	assert_int_equal(td_open(&td, &o), 0);
	td_close(td);
	/* forcing the read(2) path */
	o = (struct td_options)TD_OPTIONS_INIT;
	o.flags = TD_OPT_NO_RDPMC;
	assert_int_equal(td_open(&td, &o), 0);
	{
		struct td_info info = { .size = sizeof(info) };
		assert_int_equal(td_query(td, &info), 0);
		assert_int_equal(info.path, TD_PATH_READ);
	}
	td_close(td);
}

static void test_bad_env(void **state)
{
	struct td *td = NULL;
	struct emu_stats s;

	(void)state;
	emu_setup(EMU_SPR);
	setenv("TOPDOWN_RESET", "sometimes", 1);
	assert_int_equal(td_open(&td, NULL), -EINVAL);
	unsetenv("TOPDOWN_RESET");
	assert_null(td);
	assert_non_null(strstr(td_strerror(-EINVAL), "TOPDOWN_RESET"));
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
}

static void test_region_misuse(void **state)
{
	struct td *td, *other;
	struct td_region r = { { 0 } }, fresh = { { 0 } };
	struct td_result res;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_open(&other, NULL), 0);
	assert_int_equal(td_region_begin(NULL, &r), -EINVAL);
	assert_int_equal(td_region_begin(td, NULL), -EINVAL);
	assert_int_equal(td_region_end(NULL, &r, &res), -EINVAL);
	assert_int_equal(td_region_end(td, NULL, &res), -EINVAL);
	assert_int_equal(td_region_end(td, &fresh, &res), -ESRCH);
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_int_equal(td_region_begin(td, &r), -EALREADY);
	assert_int_equal(td_region_end(other, &r, &res), -EXDEV);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, NULL), 0);
	assert_int_equal(td_region_end(td, &r, &res), -ESRCH);
	/* a region is reusable after its end */
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_int_equal(td_query(NULL, NULL), -EINVAL);
	td_close(other);
	td_close(td);
	td_close(NULL);
}

static void test_strerror_and_names(void **state)
{
	(void)state;
	assert_non_null(td_strerror(-ENODEV));
	assert_non_null(td_strerror(-12345));
	assert_non_null(td_strerror(7));
	assert_string_equal(td_l1_name(TD_BE_BOUND), "backend_bound");
	assert_string_equal(td_l2_name(TD_CORE_BOUND), "core_bound");
	assert_null(td_l1_name(TD_L1_COUNT));
	assert_null(td_l2_name(-1));
	assert_int_equal(td_version_major(), TD_VERSION_MAJOR);
	assert_int_equal(td_version_minor(), TD_VERSION_MINOR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_pmu),
		cmocka_unit_test(test_no_topdown),
		cmocka_unit_test(test_paranoid),
		cmocka_unit_test_teardown(test_group_attributes, teardown_emu),
		cmocka_unit_test_teardown(test_icl_opens_level1_only,
					  teardown_emu),
		cmocka_unit_test_teardown(test_hybrid_uses_cpu_core,
					  teardown_emu),
		cmocka_unit_test_teardown(test_options, teardown_emu),
		cmocka_unit_test_teardown(test_bad_env, teardown_emu),
		cmocka_unit_test_teardown(test_region_misuse, teardown_emu),
		cmocka_unit_test(test_strerror_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
