/* SPDX-License-Identifier: MIT */
/*
 * td_decode on arbitrary deltas: never crashes, every fraction and err
 * in [0, 1], never NaN, l1 either sums to ~1 or is all 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(double x)
{
	if (!(x >= 0 && x <= 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_delta d;
	struct td_result res;
	double sum = 0;

	if (size < sizeof(d) + 1)
		return 0;
	memcpy(&d, data, sizeof(d));
	td_decode(&d, data[sizeof(d)] & 1, &res);
	for (int i = 0; i < TD_L1_COUNT; i++) {
		check(res.l1[i]);
		sum += res.l1[i];
	}
	for (int i = 0; i < TD_L2_COUNT; i++)
		check(res.l2[i]);
	check(res.err);
	if (sum > 4 + 1e-9)
		abort();
	if (!(res.flags & TD_RESULT_L2))
		for (int i = 0; i < TD_L2_COUNT; i++)
			if (res.l2[i] != 0)
				abort();
	return 0;
}
