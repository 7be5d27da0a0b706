/* SPDX-License-Identifier: MIT */
/* Shared helpers of the emulator-backed tests. */
#ifndef TD_TEST_HELPERS_H
#define TD_TEST_HELPERS_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
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

/* cmocka teardown of every emulator-backed test. */
static inline int teardown_emu(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

/* td_info.flags of td. */
static inline unsigned info_flags(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	return info.flags;
}

#endif
