/* SPDX-License-Identifier: MIT */
/*
 * Pure tests of the decode arithmetic (libtopdown/decode.c): no kernel,
 * no emulator.  Linked against the static library for its hidden symbols.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "pm_decode.h"
#include "internal.h"

/* A delta of S slots whose PERF_METRICS fields were f[] throughout. */
static struct td_delta delta_of(uint64_t slots, const unsigned f[8],
				uint64_t qerr)
{
	struct td_delta d;

	memset(&d, 0, sizeof(d)); /* no SMT contention (index TD_M_SMT) */
	d.slots = (int64_t)slots;
	for (int i = 0; i < 8; i++)
		d.cat[i] = (int64_t)(f[i] * slots);
	d.qerr = qerr;
	return d;
}

static void test_level1_fractions(void **state)
{
	const unsigned f[8] = { 51, 25, 77, 102, 0, 0, 0, 0 }; /* sum 255 */
	struct td_delta d = delta_of(1000000, f, 0);
	struct td_result r;

	(void)state;
	td_decode(&d, false, &r);
	assert_true(fabs(r.l1[TD_RETIRING] - 51.0 / 255) < 1e-12);
	assert_true(fabs(r.l1[TD_BAD_SPEC] - 25.0 / 255) < 1e-12);
	assert_true(fabs(r.l1[TD_FE_BOUND] - 77.0 / 255) < 1e-12);
	assert_true(fabs(r.l1[TD_BE_BOUND] - 102.0 / 255) < 1e-12);
	assert_int_equal(r.slots, 1000000);
	assert_false(r.flags & TD_RESULT_L2);
	assert_true(r.err == 0); /* no reading entered: nothing to bound */
}

/* Level 1 is normalised by the sum of its four deltas, as perf does. */
static void test_normalised_by_l1_sum(void **state)
{
	const unsigned f[8] = { 50, 50, 50, 50, 0, 0, 0, 0 }; /* sum 200 */
	struct td_delta d = delta_of(1000, f, 0);
	struct td_result r;

	(void)state;
	td_decode(&d, false, &r);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(r.l1[i] - 0.25) < 1e-12);
	/* |R - Y| enters the bound: 255*1000 vs 200*1000 */
	assert_true(fabs(r.err - 55.0 / 200) < 1e-12);
}

static void test_level2_derived(void **state)
{
	/* ret 102, bad 51, fe 51, be 51; heavy 40, br 60 (> bad), fl 10, mb 51 */
	const unsigned f[8] = { 102, 51, 51, 51, 40, 60, 10, 51 };
	struct td_delta d = delta_of(500000, f, 0);
	struct td_result r;

	(void)state;
	td_decode(&d, true, &r);
	assert_true(r.flags & TD_RESULT_L2);
	assert_true(fabs(r.l2[TD_HEAVY_OPS] - 40.0 / 255) < 1e-12);
	assert_true(fabs(r.l2[TD_LIGHT_OPS] - 62.0 / 255) < 1e-12);
	assert_true(fabs(r.l2[TD_BR_MISPREDICT] - 60.0 / 255) < 1e-12);
	assert_true(r.l2[TD_MACHINE_CLEARS] == 0); /* clamped at 0 */
	assert_true(fabs(r.l2[TD_FETCH_BW] - 41.0 / 255) < 1e-12);
	assert_true(r.l2[TD_CORE_BOUND] == 0);
}

/* err: (sum of raw SLOTS at the readings) / (255 R), doubled for L2. */
static void test_err_bound(void **state)
{
	const unsigned f[8] = { 64, 64, 64, 63, 10, 10, 10, 10 };
	/* Level 1 only: bytes 4-7 are 0. */
	const unsigned f1[8] = { 64, 64, 64, 63, 0, 0, 0, 0 };
	struct td_delta d1 = delta_of(1000000, f1, 3000000);
	struct td_delta d = delta_of(1000000, f, 3000000);
	struct td_result r;

	(void)state;
	td_decode(&d1, false, &r);
	assert_true(fabs(r.err - 3.0 / 255) < 1e-12);
	assert_true(r.smt_contention == 0);
	td_decode(&d, true, &r);
	assert_true(fabs(r.err - 6.0 / 255) < 1e-12);
	d.qerr = UINT64_C(1) << 50;
	td_decode(&d, true, &r);
	assert_true(r.err == 1); /* a bound above 1 says nothing more */
}

/* A category estimate that shrank (negative delta) reports 0, not < 0. */
static void test_negative_delta_clamped(void **state)
{
	struct td_delta d;
	struct td_result r;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.slots = 100000;
	d.cat[TD_M_RETIRING] = 255 * 100000 + 500;
	d.cat[TD_M_BAD_SPEC] = -500;
	d.qerr = 1000;
	td_decode(&d, false, &r);
	assert_true(r.l1[TD_BAD_SPEC] == 0);
	assert_true(r.l1[TD_RETIRING] == 1);
}

static void test_short_and_empty(void **state)
{
	const unsigned f[8] = { 255, 0, 0, 0, 0, 0, 0, 0 };
	struct td_delta d = delta_of(TD_SHORT_SLOTS - 1, f, 0);
	struct td_result r;

	(void)state;
	td_decode(&d, false, &r);
	assert_true(r.flags & TD_RESULT_SHORT);
	d = delta_of(0, f, 0);
	td_decode(&d, true, &r);
	assert_true(r.flags & TD_RESULT_SHORT);
	assert_true(r.err == 1);
	assert_true(r.l1[TD_RETIRING] == 0);
	d = delta_of(TD_SHORT_SLOTS, f, 0);
	td_decode(&d, false, &r);
	assert_false(r.flags & TD_RESULT_SHORT);
}

/* A category below minus its quantisation bound proves a hidden reset. */
static void test_delta_consistency(void **state)
{
	const unsigned f[8] = { 64, 64, 64, 63, 10, 10, 10, 10 };
	struct td_delta d = delta_of(1000000, f, 5000);

	(void)state;
	assert_true(td_delta_consistent(&d, true));
	d.cat[TD_M_BE_BOUND] = -5000;      /* at the bound: possible */
	assert_true(td_delta_consistent(&d, true));
	d.cat[TD_M_BE_BOUND] = -5001;      /* beyond it: impossible */
	assert_false(td_delta_consistent(&d, true));
	d.cat[TD_M_BE_BOUND] = 0;
	d.cat[TD_M_MEM_BOUND] = -9000;     /* level 2 only counts if used */
	assert_true(td_delta_consistent(&d, false));
	assert_false(td_delta_consistent(&d, true));
}

/* xorshift64: a fixed sequence, so that a failure can be replayed. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A SLOTS reading of 0 to 48 bits, often near the exact path's limit. */
static uint64_t random_slots(uint64_t *x)
{
	uint64_t v = next_random(x);
	unsigned bits = (unsigned)(next_random(x) % 49);

	if (v % 8 == 0) /* around 2^43, where the two paths meet */
		return (TD_DECODE_EXACT_SLOTS - 64 + (v >> 56)) & TD_SLOTS_MASK;
	return bits ? v >> (64 - bits) : 0;
}

/* PERF_METRICS with some fields 0, 255 or unchanged from m0. */
static uint64_t random_metrics(uint64_t *x, uint64_t m0)
{
	uint64_t m = next_random(x), how = next_random(x);

	for (unsigned i = 0; i < 8; i++, how >>= 4) {
		uint64_t byte = UINT64_C(0xff) << (8 * i);

		if ((how & 15) == 0)
			m &= ~byte;
		else if ((how & 15) == 1)
			m |= byte;
		else if ((how & 15) == 2)
			m = (m & ~byte) | (m0 & byte);
	}
	return m;
}

/*
 * Two random readings: SLOTS and PERF_METRICS at begin and at end, put
 * in forward order (s0 <= s1, as regions run) when forward.
 */
struct readings {
	uint64_t s0, m0, s1, m1;
};

static struct readings random_readings(uint64_t *x, bool forward)
{
	struct readings r;

	r.s0 = random_slots(x);
	r.s1 = random_slots(x);
	r.m0 = random_metrics(x, 0);
	r.m1 = random_metrics(x, r.m0);
	if (forward && r.s1 < r.s0) {
		uint64_t t = r.s0;

		r.s0 = r.s1;
		r.s1 = t;
	}
	return r;
}

/*
 * The fast end's decode of two readings (decode.h, doubles where exact)
 * gives what td_decode and td_delta_consistent give on
 * td_readings_delta's delta, bit for bit, on random readings.
 */
static void test_readings_decode_identical(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned exact = 0, wide = 0, inconsistent = 0, empty = 0;

	(void)state;
	for (int n = 0; n < 200000; n++) {
		/* mostly forward, as regions are */
		struct readings rd = random_readings(&x, n % 4 != 0);
		uint64_t s0 = rd.s0, m0 = rd.m0, s1 = rd.s1, m1 = rd.m1;
		bool l2 = n & 1, ok_fast, ok_ref;
		struct td_result fast, ref;
		struct td_delta d;

		memset(&fast, 0xa5, sizeof(fast));
		memset(&ref, 0xa5, sizeof(ref));
		ok_fast = td_decode_readings_inline(s0, m0, s1, m1, l2, &fast);
		td_readings_delta(s0, m0, s1, m1, &d);
		td_decode(&d, l2, &ref);
		ok_ref = td_delta_consistent(&d, l2);
		if (memcmp(&fast, &ref, sizeof(fast)) != 0 || ok_fast != ok_ref)
			fail_msg("readings %#llx %#llx %#llx %#llx l2 %d differ",
				 (unsigned long long)s0, (unsigned long long)m0,
				 (unsigned long long)s1, (unsigned long long)m1,
				 l2);
		if ((s0 | s1) < TD_DECODE_EXACT_SLOTS)
			exact++;
		else
			wide++;
		inconsistent += !ok_ref;
		empty += ref.err == 1 && ref.l1[TD_RETIRING] == 0;
	}
	/* every kind of case was met (the doubles' path is x86-64's) */
	assert_true(exact > 1000);
	assert_true(wide > 1000);
	assert_true(inconsistent > 1000);
	assert_true(empty > 100);
}

/*
 * The fast end with a result (pm_fast.c, end_same_snap_l2) takes the
 * doubles' path on SLOTS at end alone (below 2^43), SLOTS at begin being
 * no greater on that path; were it greater, and beyond 2^43, the delta is
 * inconsistent and the region marked unreliable.  Either way the result
 * is the integers' route's, marked the same way, bit for bit, with
 * resets 0.
 */
static void test_readings_end_decode_identical(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1du;
	unsigned forward = 0, backward_wide = 0;

	(void)state;
	for (int n = 0; n < 200000; n++) {
		/* half forward, as regions are */
		struct readings rd = random_readings(&x, n % 2 != 0);
		uint64_t s0 = rd.s0, m0 = rd.m0, s1 = rd.s1, m1 = rd.m1;
		bool l2 = n & 1, ok_fast, ok_ref;
		/*
		 * A third with INT_MISC.UOP_DROPPING moved (pm_decode.h
		 * td_uop_move): counts up to the slots and past them, and
		 * negative ones, as a counter's garbage would be
		 */
		bool uop = n % 3 == 0;
		int64_t drop = (int64_t)(next_random(&x) %
					 ((s1 > s0 ? s1 - s0 : 0) + 2)) -
			       (int64_t)(n % 7 == 0);
		struct td_result fast, ref;
		struct td_delta d;

		if (s1 >= TD_DECODE_EXACT_SLOTS) /* the end's wide path */
			s1 >>= 5;
		memset(&fast, 0xa5, sizeof(fast));
		memset(&ref, 0xa5, sizeof(ref));
		ok_fast = td_decode_readings_end(s0, &m0, s1, m1, l2, uop, drop,
						 0, &fast);
		if (!ok_fast)
			td_record_mark_unreliable(&fast);
		td_readings_delta(s0, m0, s1, m1, &d);
		if (uop)
			td_uop_move(&d, l2, drop);
		td_decode(&d, l2, &ref);
		ref.resets = 0;
		ok_ref = td_delta_consistent(&d, l2);
		if (!ok_ref)
			td_record_mark_unreliable(&ref);
		if (memcmp(&fast, &ref, sizeof(fast)) != 0 || ok_fast != ok_ref)
			fail_msg("end readings %#llx %#llx %#llx %#llx l2 %d "
				 "differ", (unsigned long long)s0,
				 (unsigned long long)m0,
				 (unsigned long long)s1,
				 (unsigned long long)m1, l2);
		forward += s0 <= s1;
		backward_wide += s0 >= TD_DECODE_EXACT_SLOTS;
	}
	assert_true(forward > 1000);
	assert_true(backward_wide > 1000);
}

/*
 * Ice Lake's refinements against perf's expressions, written here from
 * icelake/icl-metrics.json (the same in icelakex, tigerlake, rocketlake),
 * not from the library:
 *   tma_frontend_bound  = fe / sum - INT_MISC.UOP_DROPPING / slots
 *   tma_backend_bound   = be / sum + 5 * INT_MISC.CLEARS_COUNT / slots
 *   tma_retiring        = ret / sum
 *   tma_bad_speculation = max(1 - (frontend + backend + retiring), 0)
 * on random counter sets (the drop within frontend bound, as the event
 * counts a part of it).  Where perf's bad speculation is above 0 the
 * library's four are perf's (within the integer truncation of the moved
 * share, 1/sum); where perf's would be below 0 (its level 1 then sums to
 * more than 1), the library's bad speculation is 0 and its backend bound
 * takes what the other three leave (pm_decode.h td_clears_move).
 */
static void test_icelake_refinements_as_perf(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned clamped = 0, exact = 0;

	(void)state;
	for (int n = 0; n < 100000; n++) {
		uint64_t slots = 1000 + next_random(&x) % 100000000;
		unsigned f[8] = { 0 }, left = 255;
		struct td_delta d;
		struct td_result r;
		double sum, fe, be, ret, bad, tol;
		int64_t drop, clears;

		for (int i = 0; i < 3; i++) {
			f[i] = (unsigned)(next_random(&x) % (left + 1));
			left -= f[i];
		}
		f[3] = left; /* retiring, bad, fe, be: PERF_METRICS order */
		d = delta_of(slots, f, 0);
		sum = 255.0 * (double)slots;
		drop = (int64_t)(next_random(&x) % (f[2] * slots / 255 + 1));
		clears = (int64_t)(next_random(&x) % (slots / 20 + 1));
		fe = (double)f[2] / 255 - (double)drop / (double)slots;
		be = (double)f[3] / 255 + 5.0 * (double)clears / (double)slots;
		ret = (double)f[0] / 255;
		bad = 1 - (fe + be + ret);
		td_uop_move(&d, false, drop);
		td_clears_move(&d, clears);
		td_decode(&d, false, &r);
		tol = 4 / sum + 1e-12;
		assert_true(fabs(r.l1[TD_RETIRING] - ret) < tol);
		assert_true(fabs(r.l1[TD_FE_BOUND] - fe) < tol);
		if (bad > 0) {
			if (fabs(r.l1[TD_BE_BOUND] - be) > tol ||
			    fabs(r.l1[TD_BAD_SPEC] - bad) > tol)
				fail_msg("be %.9f perf %.9f bad %.9f perf %.9f",
					 r.l1[TD_BE_BOUND], be,
					 r.l1[TD_BAD_SPEC], bad);
			exact++;
		} else {
			assert_true(r.l1[TD_BAD_SPEC] < tol);
			assert_true(fabs(r.l1[TD_BE_BOUND] - (1 - fe - ret)) <
				    tol);
			clamped++;
		}
	}
	assert_true(exact > 1000);
	assert_true(clamped > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level1_fractions),
		cmocka_unit_test(test_normalised_by_l1_sum),
		cmocka_unit_test(test_level2_derived),
		cmocka_unit_test(test_err_bound),
		cmocka_unit_test(test_negative_delta_clamped),
		cmocka_unit_test(test_short_and_empty),
		cmocka_unit_test(test_delta_consistency),
		cmocka_unit_test(test_readings_decode_identical),
		cmocka_unit_test(test_readings_end_decode_identical),
		cmocka_unit_test(test_icelake_refinements_as_perf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
