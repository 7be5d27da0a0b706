/* SPDX-License-Identifier: MIT */
/*
 * The public structs' layout, checked at compile time (make test compiles
 * this with the target's compiler, so test-arm64 checks aarch64 too).
 *
 * No implicit holes: each struct's size is the sum of its members' sizes,
 * so every padding byte is a named member the library zeroes (a hole would
 * carry stack garbage to the caller and could not be given a meaning in a
 * later release).  The sizes are the LP64 ABI README.md "ABI" states.
 */
#include <stddef.h>
#include <topdown.h>

#define MEMBER_SIZE(type, m) sizeof(((type *)0)->m)
#define NO_HOLES(type, sum) \
	_Static_assert(sizeof(type) == (sum), #type " has an implicit hole")
#define SIZE_IS(type, n) \
	_Static_assert(sizeof(type) == (n), #type " changed size: ABI")

NO_HOLES(struct td_result,
	 MEMBER_SIZE(struct td_result, slots) +
	 MEMBER_SIZE(struct td_result, l1) + MEMBER_SIZE(struct td_result, l2) +
	 MEMBER_SIZE(struct td_result, err) +
	 MEMBER_SIZE(struct td_result, flags) +
	 MEMBER_SIZE(struct td_result, resets) +
	 MEMBER_SIZE(struct td_result, smt_contention) +
	 MEMBER_SIZE(struct td_result, mem));

NO_HOLES(struct td_options,
	 MEMBER_SIZE(struct td_options, size) +
	 MEMBER_SIZE(struct td_options, flags) +
	 MEMBER_SIZE(struct td_options, reset_policy) +
	 MEMBER_SIZE(struct td_options, err_target) +
	 MEMBER_SIZE(struct td_options, reset_budget) +
	 MEMBER_SIZE(struct td_options, reset_cost_slots));

NO_HOLES(struct td_info,
	 MEMBER_SIZE(struct td_info, size) + MEMBER_SIZE(struct td_info, path) +
	 MEMBER_SIZE(struct td_info, levels) +
	 MEMBER_SIZE(struct td_info, pmu_type) +
	 MEMBER_SIZE(struct td_info, pmu_name) +
	 MEMBER_SIZE(struct td_info, reserved0) +
	 MEMBER_SIZE(struct td_info, resets) +
	 MEMBER_SIZE(struct td_info, foreign_resets) +
	 MEMBER_SIZE(struct td_info, flags) +
	 MEMBER_SIZE(struct td_info, uarch) +
	 MEMBER_SIZE(struct td_info, reserved1));

NO_HOLES(struct td_named,
	 MEMBER_SIZE(struct td_named, name) +
	 MEMBER_SIZE(struct td_named, opaque));

NO_HOLES(struct td_totals,
	 MEMBER_SIZE(struct td_totals, calls) +
	 MEMBER_SIZE(struct td_totals, unreliable) +
	 MEMBER_SIZE(struct td_totals, total) +
	 MEMBER_SIZE(struct td_totals, min) + MEMBER_SIZE(struct td_totals, max) +
	 MEMBER_SIZE(struct td_totals, open) +
	 MEMBER_SIZE(struct td_totals, max_depth) +
	 MEMBER_SIZE(struct td_totals, reserved));

NO_HOLES(struct td_record,
	 MEMBER_SIZE(struct td_record, slots) +
	 MEMBER_SIZE(struct td_record, cat) +
	 MEMBER_SIZE(struct td_record, qerr) +
	 MEMBER_SIZE(struct td_record, flags) +
	 MEMBER_SIZE(struct td_record, resets) +
	 MEMBER_SIZE(struct td_record, name) +
	 MEMBER_SIZE(struct td_record, reserved));

/* The sizes on LP64 (x86_64, aarch64), as README.md "ABI" lists them. */
#if defined(__LP64__)
SIZE_IS(struct td_result, 168);
SIZE_IS(struct td_options, 40);
SIZE_IS(struct td_region, 256);
SIZE_IS(struct td_info, 112);
SIZE_IS(struct td_named, 776);
SIZE_IS(struct td_totals, 280);
SIZE_IS(struct td_record, 128);
/* Padding made explicit moved no field. */
_Static_assert(offsetof(struct td_info, resets) == 56, "td_info.resets");
_Static_assert(offsetof(struct td_info, uarch) == 76, "td_info.uarch");
#endif
