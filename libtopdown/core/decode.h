/* SPDX-License-Identifier: MIT */
/*
 * The decoder's body, inline: td_decode and td_delta_consistent (decode.c)
 * are these functions out of line, and the fast end with a result
 * (region.c) inlines them on its delta, so that every route runs the same
 * arithmetic (see decode.c for the formulas and the error bound) while
 * the hot path keeps its categories in registers.
 */
#ifndef TD_DECODE_H
#define TD_DECODE_H

#include <math.h>
#include <string.h>

#include "internal.h"

#define TD_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Written so that the compiler makes two branchless min/max of it. */
TD_ALWAYS_INLINE double td_clamp01(double x)
{
	x = x > 0 ? x : 0;
	return x < 1 ? x : 1;
}

TD_ALWAYS_INLINE double td_pos(double x)
{
	return x > 0 ? x : 0;
}

/* Level 2: the measured children, then parent minus child. */
TD_ALWAYS_INLINE void td_decode_l2(const int64_t *cat, double inv,
				   struct td_result *res)
{
	double *l2 = res->l2;
	const double *l1 = res->l1;

	l2[TD_HEAVY_OPS] = td_clamp01((double)cat[TD_M_HEAVY_OPS] * inv);
	l2[TD_BR_MISPREDICT] = td_clamp01((double)cat[TD_M_BR_MISPREDICT] * inv);
	l2[TD_FETCH_LAT] = td_clamp01((double)cat[TD_M_FETCH_LAT] * inv);
	l2[TD_MEM_BOUND] = td_clamp01((double)cat[TD_M_MEM_BOUND] * inv);
	l2[TD_LIGHT_OPS] = td_pos(l1[TD_RETIRING] - l2[TD_HEAVY_OPS]);
	l2[TD_MACHINE_CLEARS] = td_pos(l1[TD_BAD_SPEC] - l2[TD_BR_MISPREDICT]);
	l2[TD_FETCH_BW] = td_pos(l1[TD_FE_BOUND] - l2[TD_FETCH_LAT]);
	l2[TD_CORE_BOUND] = td_pos(l1[TD_BE_BOUND] - l2[TD_MEM_BOUND]);
}

/* No fraction: every field of res as a region without slots has it. */
TD_ALWAYS_INLINE void td_decode_none(struct td_result *res)
{
	memset(res->l1, 0, sizeof(res->l1));
	memset(res->l2, 0, sizeof(res->l2));
	res->smt_contention = 0;
	res->err = 1;
}

/*
 * td_decode (decode.c).  Every field it sets is written once: no clearing
 * first.  The sum wraps instead of overflowing on absurd deltas (fuzzing).
 */
TD_ALWAYS_INLINE void td_decode_inline(const struct td_delta *d, bool l2,
				       struct td_result *res)
{
	const int64_t *cat = d->cat;
	int64_t smt = cat[TD_M_SMT]; /* 0 but on AMD, in the sum */
	int64_t sum = (int64_t)((uint64_t)cat[TD_M_RETIRING] +
				(uint64_t)cat[TD_M_BAD_SPEC] +
				(uint64_t)cat[TD_M_FE_BOUND] +
				(uint64_t)cat[TD_M_BE_BOUND] + (uint64_t)smt);
	uint64_t slots = d->slots > 0 ? (uint64_t)d->slots : 0;
	double inv, e1;

	res->slots = slots;
	res->flags = slots < TD_SHORT_SLOTS ? TD_RESULT_SHORT : 0;
	if (sum <= 0) {
		td_decode_none(res);
		return;
	}
	inv = 1.0 / (double)sum;
#pragma GCC unroll 4
	for (int i = 0; i < TD_L1_COUNT; i++)
		res->l1[i] = td_clamp01((double)cat[i] * inv);
	res->smt_contention = td_clamp01((double)smt * inv);
	e1 = ((double)d->qerr + fabs(255.0 * (double)d->slots - (double)sum)) *
	     inv;
	if (l2) {
		td_decode_l2(cat, inv, res);
		res->flags |= TD_RESULT_L2;
		e1 *= 2;
	} else {
		memset(res->l2, 0, sizeof(res->l2));
	}
	res->err = e1 < 1 ? e1 : 1;
}

/* td_delta_consistent (decode.c). */
TD_ALWAYS_INLINE bool td_delta_consistent_inline(const struct td_delta *d,
						 bool l2)
{
	int64_t floor = -(int64_t)(d->qerr > INT64_MAX ? INT64_MAX : d->qerr);
	const int64_t *c = d->cat;
	int64_t low = c[0];

#pragma GCC unroll 8
	for (unsigned i = 1; i < TD_NR_METRICS; i++)
		if (i < TD_NR_L1 || l2)
			low = c[i] < low ? c[i] : low;
	return d->slots >= 0 && low >= floor;
}

/*
 * td_decode_readings_inline: the fractions of two readings of SLOTS and
 * PERF_METRICS since the same reset (what td_readings_delta makes a delta
 * of), and whether td_delta_consistent holds for that delta.  Bit for bit
 * what td_decode_inline and td_delta_consistent_inline give on
 * td_readings_delta's delta (test_decode compares them on random
 * readings).
 */
TD_ALWAYS_INLINE bool td_decode_readings_scalar(uint64_t s0, uint64_t m0,
						uint64_t s1, uint64_t m1,
						bool l2,
						struct td_result *res)
{
	struct td_delta d;

	td_readings_delta(s0, m0, s1, m1, &d);
	td_decode_inline(&d, l2, res);
	return td_delta_consistent_inline(&d, l2);
}

/* Below it, SLOTS readings make exact doubles (the SSE2 path below). */
#define TD_DECODE_EXACT_SLOTS (UINT64_C(1) << 43)

#if defined(__SSE2__)
#include <emmintrin.h>

/*
 * Two categories at a time, in doubles.  With both SLOTS readings below
 * 2^43 every field x SLOTS (< 2^51), every category delta and each
 * partial sum of the level-1 sum (< 2^53) is an integer a double holds
 * exactly: the values are those td_decode converts from its exact
 * integers, and what follows is td_decode's arithmetic, the same IEEE
 * operations on the same operands (MAXPD/MINPD return the first operand
 * when it compares greater/less, else the second: td_clamp01 and td_pos
 * exactly; Intel SDM, MAXPD and MINPD).
 */
#define td_decode_readings_exact(s0, s1) \
	(((s0) | (s1)) < TD_DECODE_EXACT_SLOTS)

/* The eight 8-bit fields of PERF_METRICS as four pairs of doubles. */
TD_ALWAYS_INLINE void td_fields_pd(uint64_t m, __m128d v[4])
{
	__m128i z = _mm_setzero_si128();
	__m128i w = _mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)m), z);
	__m128i lo = _mm_unpacklo_epi16(w, z), hi = _mm_unpackhi_epi16(w, z);

	v[0] = _mm_cvtepi32_pd(lo);
	v[1] = _mm_cvtepi32_pd(_mm_shuffle_epi32(lo, 0xee));
	v[2] = _mm_cvtepi32_pd(hi);
	v[3] = _mm_cvtepi32_pd(_mm_shuffle_epi32(hi, 0xee));
}

TD_ALWAYS_INLINE __m128d td_clamp01_pd(__m128d x)
{
	return _mm_min_pd(_mm_max_pd(x, _mm_setzero_pd()), _mm_set1_pd(1));
}

/* Level 2 from c[2] (heavy ops, br mispredict), c[3] (fetch lat, mem). */
TD_ALWAYS_INLINE void td_decode_l2_pd(const __m128d c[4], __m128d inv,
				      const __m128d l1[2],
				      struct td_result *res)
{
	__m128d hb = td_clamp01_pd(_mm_mul_pd(c[2], inv));
	__m128d fm = td_clamp01_pd(_mm_mul_pd(c[3], inv));
	__m128d lc = _mm_max_pd(_mm_sub_pd(l1[0], hb), _mm_setzero_pd());
	__m128d bc = _mm_max_pd(_mm_sub_pd(l1[1], fm), _mm_setzero_pd());

	_mm_storeu_pd(&res->l2[TD_HEAVY_OPS], _mm_unpacklo_pd(hb, lc));
	_mm_storeu_pd(&res->l2[TD_BR_MISPREDICT], _mm_unpackhi_pd(hb, lc));
	_mm_storeu_pd(&res->l2[TD_FETCH_LAT], _mm_unpacklo_pd(fm, bc));
	_mm_storeu_pd(&res->l2[TD_MEM_BOUND], _mm_unpackhi_pd(fm, bc));
}

/* td_decode_readings_inline where td_decode_readings_exact(s0, s1). */
TD_ALWAYS_INLINE bool td_decode_readings_sse2(uint64_t s0, uint64_t m0,
					      uint64_t s1, uint64_t m1,
					      bool l2, struct td_result *res)
{
	__m128d f0[4], f1[4], c[4], l1[2], low, inv, d0, d1, q;
	int64_t slots = (int64_t)(s1 - s0);
	unsigned flags;
	double sum, e1;

	/* below 2^43: signed conversions, no unsigned fix-up */
	d0 = _mm_set1_pd((double)(int64_t)s0);
	d1 = _mm_set1_pd((double)(int64_t)s1);
	q = _mm_set1_pd((double)(int64_t)(s0 + s1)); /* qerr */
	td_fields_pd(m0, f0);
	td_fields_pd(m1, f1);
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		c[i] = _mm_sub_pd(_mm_mul_pd(f1[i], d1), _mm_mul_pd(f0[i], d0));
	/* consistent: no category below -qerr, so min + qerr >= +0 */
	low = _mm_min_pd(c[0], c[1]);
	if (l2)
		low = _mm_min_pd(low, _mm_min_pd(c[2], c[3]));
	low = _mm_add_pd(low, q);
	l1[0] = _mm_add_pd(c[0], c[1]);
	sum = _mm_cvtsd_f64(_mm_add_sd(l1[0], _mm_unpackhi_pd(l1[0], l1[0])));
	res->slots = slots > 0 ? (uint64_t)slots : 0;
	flags = res->slots < TD_SHORT_SLOTS ? TD_RESULT_SHORT : 0;
	if (TD_UNLIKELY(sum <= 0)) {
		td_decode_none(res);
	} else {
		inv = _mm_set1_pd(1.0 / sum);
		l1[0] = td_clamp01_pd(_mm_mul_pd(c[0], inv));
		l1[1] = td_clamp01_pd(_mm_mul_pd(c[1], inv));
		_mm_storeu_pd(&res->l1[TD_RETIRING], l1[0]);
		_mm_storeu_pd(&res->l1[TD_FE_BOUND], l1[1]);
		res->smt_contention = 0; /* td_clamp01(0 x inv) */
		e1 = (_mm_cvtsd_f64(q) + fabs(255.0 * (double)slots - sum)) *
		     _mm_cvtsd_f64(inv);
		if (l2) {
			td_decode_l2_pd(c, inv, l1, res);
			flags |= TD_RESULT_L2;
			e1 *= 2;
		} else {
			memset(res->l2, 0, sizeof(res->l2));
		}
		res->err = e1 < 1 ? e1 : 1;
	}
	res->flags = flags;
	return slots >= 0 && !_mm_movemask_pd(low);
}

TD_ALWAYS_INLINE bool td_decode_readings_inline(uint64_t s0, uint64_t m0,
						uint64_t s1, uint64_t m1,
						bool l2,
						struct td_result *res)
{
	if (td_decode_readings_exact(s0, s1))
		return td_decode_readings_sse2(s0, m0, s1, m1, l2, res);
	return td_decode_readings_scalar(s0, m0, s1, m1, l2, res);
}
#else
#define td_decode_readings_exact(s0, s1) false
#define td_decode_readings_sse2 td_decode_readings_scalar
#define td_decode_readings_inline td_decode_readings_scalar
#endif

#endif
