/* SPDX-License-Identifier: MIT */
/*
 * The one test that calls the real kernel (no emulator linked): where
 * TopDown exists, a short region must measure.  A machine without a
 * hardware PMU (or without usable TopDown) measures nothing, so the test
 * is reported skipped there, not passed, after checking that td_open
 * failed cleanly: -ENODEV, no handle, and a reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "topdown.h"

static void test_real_kernel(void **state)
{
	struct td *td = NULL;
	struct td_region r = { { 0 } };
	struct td_result res;
	volatile double x = 1;
	int err = td_open(&td, NULL);

	(void)state;
	if (err == -EOPNOTSUPP || err == -EACCES) {
		print_message("PMU without usable TopDown here: %s\n",
			      td_strerror(err));
		skip();
	}
	if (err == -ENODEV) {
		assert_null(td);
		assert_non_null(td_strerror(err));
		print_message("no PMU here (a VM without a virtual PMU?): %s\n",
			      td_strerror(err));
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	for (int i = 0; i < 1000000; i++)
		x = x * 1.0000001 + 1e-9;
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.slots > 0);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
