/* SPDX-License-Identifier: MIT */
/*
 * PERF_METRICS' readings decoded: two readings of SLOTS and PERF_METRICS
 * since the same reset (raw, as RDPMC gives them) turned into a delta
 * of category slots x 255 and into fractions, with the generic
 * arithmetic of decode.h.  The fast end with a result (pm_fast.c)
 * inlines it, records of readings (pm_record.c) and
 * td_decode_readings take the same delta.  Not installed.
 */
#ifndef TD_PM_DECODE_H
#define TD_PM_DECODE_H

#include "decode.h"

/* SLOTS is fixed counter 3, 48 bits wide (Intel SDM: CPUID.0AH:EDX[12:5]). */
#define TD_SLOTS_MASK   ((UINT64_C(1) << 48) - 1)

/*
 * The delta between two readings of SLOTS and PERF_METRICS since the
 * same reset, in category slots x 255 (no division): what a fast end
 * with a result, a record of readings and td_decode_readings all turn
 * into fractions (decode.c).  qerr: each reading's 8-bit error scale.
 */
static inline void td_readings_delta(uint64_t slots0, uint64_t metrics0,
				     uint64_t slots1, uint64_t metrics1,
				     struct td_delta *d)
{
	d->slots = (int64_t)(slots1 - slots0);
	d->cat[TD_M_SMT] = 0;
#pragma GCC unroll 8
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		d->cat[i] = (int64_t)(((metrics1 >> (8 * i)) & 0xff) * slots1 -
				      ((metrics0 >> (8 * i)) & 0xff) * slots0);
	d->qerr = slots1 + slots0;
}

/*
 * INT_MISC.UOP_DROPPING.  perf's expressions on the cores where it
 * counts it (pm_uop.c lists them) are
 *   tma_frontend_bound = topdown-fe-bound / (sum of the four) -
 *                        INT_MISC.UOP_DROPPING / tma_info_thread_slots
 *   tma_fetch_latency  = topdown-fetch-lat / (sum of the four) -
 *                        INT_MISC.UOP_DROPPING / tma_info_thread_slots
 *   tma_bad_speculation = max(1 - (tma_frontend_bound +
 *                             tma_backend_bound + tma_retiring), 0)
 * (sapphirerapids/spr-metrics.json, icelake/icl-metrics.json,
 * alderlake/adl-metrics.json Unit cpu_core), and at level 2
 * tma_fetch_bandwidth = max(0, tma_frontend_bound - tma_fetch_latency),
 * tma_machine_clears = max(0, tma_bad_speculation -
 * tma_branch_mispredicts).  So the dropped share leaves frontend bound
 * and fetch latency and lands in bad speculation (machine clears at
 * level 2); fetch bandwidth keeps its value.  The library makes that
 * move in a delta's categories (slots x 255 of a level-1 sum), so that
 * level 1 still sums to 1 and every route (results, records, named
 * totals) carries it: drop / SLOTS of the whole is drop x sum / slots
 * category units, truncated to an integer with CVTTSD2SI's rule (out of
 * range or NaN: INT64_MIN), then kept within frontend bound (and the
 * fetch latency part within fetch latency: a share perf would show
 * below 0), never below 0.  The fast end (td_decode_pd) makes the same
 * IEEE operations on the same operands: the same integers.
 */
TD_ALWAYS_INLINE int64_t td_uop_share(int64_t drop, int64_t sum,
				      int64_t slots)
{
	double q = (double)drop * (double)sum / (double)slots;

	if (!(q > -0x1p63 && q < 0x1p63)) /* CVTTSD2SI: the indefinite */
		return INT64_MIN;
	return (int64_t)q;
}

TD_ALWAYS_INLINE int64_t td_clamp_move(int64_t m, int64_t within)
{
	m = m < within ? m : within;
	return m > 0 ? m : 0;
}

TD_ALWAYS_INLINE void td_uop_move(struct td_delta *d, bool l2, int64_t drop)
{
	int64_t *c = d->cat;
	int64_t sum = (int64_t)((uint64_t)c[TD_M_RETIRING] +
				(uint64_t)c[TD_M_BAD_SPEC] +
				(uint64_t)c[TD_M_FE_BOUND] +
				(uint64_t)c[TD_M_BE_BOUND]);
	int64_t m = d->slots ? td_uop_share(drop, sum, d->slots) : INT64_MIN;

	m = td_clamp_move(m, c[TD_M_FE_BOUND]);
	c[TD_M_FE_BOUND] -= m;
	c[TD_M_BAD_SPEC] += m;
	if (l2)
		c[TD_M_FETCH_LAT] -= td_clamp_move(m, c[TD_M_FETCH_LAT]);
}

/*
 * INT_MISC.CLEARS_COUNT (INT_MISC.RECOVERY_CYCLES with cmask 1 and edge:
 * the number of clears).  perf's expressions on the cores where it
 * counts it (pm_uop.c lists them: Ice Lake client and server, Tiger
 * Lake, Rocket Lake) are
 *   tma_backend_bound   = topdown-be-bound / (sum of the four) +
 *                         5 * INT_MISC.CLEARS_COUNT / tma_info_thread_slots
 *   tma_bad_speculation = max(1 - (tma_frontend_bound +
 *                             tma_backend_bound + tma_retiring), 0)
 * (icelake/icl-metrics.json, icelakex/icx-metrics.json, tigerlake/
 * tgl-metrics.json, rocketlake/rkl-metrics.json; older lists spell the
 * event "cpu@INT_MISC.RECOVERY_CYCLES\,cmask\=1\,edge@").  So 5 slots a
 * clear leave bad speculation for backend bound, after the dropped uops'
 * share came in (td_uop_move: perf's bad speculation is 1 less the
 * other three, both terms in it).  The same move in category units as
 * td_uop_move's, kept within bad speculation: where perf's bad
 * speculation would be below 0 it shows 0 and its four level-1 nodes
 * sum to more than 1 (backend bound keeps the whole term); the library
 * moves no more than bad speculation holds, so that level 1 sums to 1,
 * and reports backend bound that much below perf's then.  No core with
 * level 2 in PERF_METRICS wants it (their lists add 0 * slots).
 */
TD_ALWAYS_INLINE void td_clears_move(struct td_delta *d, int64_t clears)
{
	int64_t *c = d->cat;
	int64_t sum = (int64_t)((uint64_t)c[TD_M_RETIRING] +
				(uint64_t)c[TD_M_BAD_SPEC] +
				(uint64_t)c[TD_M_FE_BOUND] +
				(uint64_t)c[TD_M_BE_BOUND]);
	int64_t m = d->slots && clears >= 0 && clears <= INT64_MAX / 5
			    ? td_uop_share(5 * clears, sum, d->slots)
			    : INT64_MIN;

	m = td_clamp_move(m, c[TD_M_BAD_SPEC]);
	c[TD_M_BAD_SPEC] -= m;
	c[TD_M_BE_BOUND] += m;
}

/*
 * td_decode_readings_inline: the fractions of two readings of SLOTS and
 * PERF_METRICS since the same reset (what td_readings_delta makes a delta
 * of), and whether td_delta_consistent holds for that delta.  Bit for bit
 * what td_decode_inline and td_delta_consistent_inline give on
 * td_readings_delta's delta (test_decode compares them on random
 * readings).
 */
TD_ALWAYS_INLINE bool td_decode_readings_uop(uint64_t s0, uint64_t m0,
					     uint64_t s1, uint64_t m1,
					     bool l2, bool uop, int64_t drop,
					     struct td_result *res)
{
	struct td_delta d;

	td_readings_delta(s0, m0, s1, m1, &d);
	if (uop)
		td_uop_move(&d, l2, drop);
	td_decode_inline(&d, l2, res);
	return td_delta_consistent_inline(&d, l2);
}

/* The same with INT_MISC.CLEARS_COUNT's move after the drop's. */
TD_ALWAYS_INLINE bool td_decode_readings_refined(uint64_t s0, uint64_t m0,
						 uint64_t s1, uint64_t m1,
						 bool l2, int64_t drop,
						 int64_t clears,
						 struct td_result *res)
{
	struct td_delta d;

	td_readings_delta(s0, m0, s1, m1, &d);
	td_uop_move(&d, l2, drop);
	td_clears_move(&d, clears);
	td_decode_inline(&d, l2, res);
	return td_delta_consistent_inline(&d, l2);
}

TD_ALWAYS_INLINE bool td_decode_readings_scalar(uint64_t s0, uint64_t m0,
						uint64_t s1, uint64_t m1,
						bool l2,
						struct td_result *res)
{
	return td_decode_readings_uop(s0, m0, s1, m1, l2, false, 0, res);
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
 * operations on the same operands (MAXPD/MINPD/MINSD return the first
 * operand when it compares greater/less, else the second: td_clamp01,
 * td_pos and err's cap at 1 exactly; ANDPD clearing the sign bit is fabs;
 * Intel SDM, MAXPD, MINPD, MINSD, ANDPD).
 */
#define td_decode_readings_exact(s0, s1) \
	(((s0) | (s1)) < TD_DECODE_EXACT_SLOTS)

/*
 * v as it is, in a register: an empty asm the compiler cannot see
 * through.  A broadcast kept so is added and subtracted as a pair (not as
 * a scalar broadcast again, an UNPCKLPD more each), and a zero so kept is
 * one register for every use (not a PXOR at each).
 */
#define td_pd_keep(v) __asm__("" : "+x"(v))

/* The eight 8-bit fields of PERF_METRICS (low 64 bits of m) as pairs. */
TD_ALWAYS_INLINE void td_fields_pd(__m128i m, __m128i z, __m128d v[4])
{
	__m128i w = _mm_unpacklo_epi8(m, z);
	__m128i lo = _mm_unpacklo_epi16(w, z), hi = _mm_unpackhi_epi16(w, z);

	v[0] = _mm_cvtepi32_pd(lo);
	v[1] = _mm_cvtepi32_pd(_mm_shuffle_epi32(lo, 0xee));
	v[2] = _mm_cvtepi32_pd(hi);
	v[3] = _mm_cvtepi32_pd(_mm_shuffle_epi32(hi, 0xee));
}

/*
 * One lane of v to memory (MOVLPD, MOVHPD; Intel SDM): level 2 puts each
 * child next to its parent's rest, so each of its pairs is two lanes of
 * two registers.  In asm, or the compiler merges the stores back into
 * shuffles and 16-byte stores, two instructions more.
 */
TD_ALWAYS_INLINE void td_store_lo(double *to, __m128d v)
{
	__asm__("movlpd %1, %0" : "=m"(*to) : "x"(v));
}

TD_ALWAYS_INLINE void td_store_hi(double *to, __m128d v)
{
	__asm__("movhpd %1, %0" : "=m"(*to) : "x"(v));
}

/*
 * res->flags = fl, and with resets0 res->resets = 0 in the same store
 * (the field after it; x86 is little endian).
 */
TD_ALWAYS_INLINE void td_store_flags(struct td_result *res, uint64_t fl,
				     bool resets0)
{
	_Static_assert(offsetof(struct td_result, resets) ==
			       offsetof(struct td_result, flags) + 4,
		       "flags and resets adjacent");
	if (resets0)
		memcpy(&res->flags, &fl, sizeof(fl));
	else
		res->flags = (unsigned)fl;
}

/*
 * td_decode_readings_inline where td_decode_readings_exact(s0, s1), m0
 * and m1 in the low 64 bits of their registers; with resets0, res->resets
 * is set to 0 too.  The slots delta and qerr are the readings' doubles'
 * difference and sum, exact (below 2^44); the level-1 sum is made in
 * both lanes at once (a + b and b + a: the same IEEE sum), so that inv
 * and err need no conversion or broadcast of their own.
 */
TD_ALWAYS_INLINE bool td_decode_pd(uint64_t s0, __m128i m0, uint64_t s1,
				   __m128i m1, bool l2, struct td_result *res,
				   bool resets0, bool uop, int64_t drop,
				   unsigned extra)
{
	/*
	 * Constants as pairs in memory, operands where they are; the empty
	 * asm below hides their values, or the compiler loads each as a
	 * scalar and broadcasts it (MOVSD, UNPCKLPD: two instructions where
	 * a memory operand needs none).
	 */
	static const union {
		double d[2];
		uint64_t u[2];
	} kv[3] __attribute__((aligned(16))) = {
		{ .d = { 1, 1 } }, { .d = { 255, 255 } },
		{ .u = { INT64_MAX, INT64_MAX } } /* fabs: all but the sign */
	};
	const __typeof__(kv[0]) *k = kv;
	__m128d f0[4], f1[4], c[4], d0, d1, q, ds, low, l1, sum, inv, e1;
	__m128d one, zero = _mm_setzero_pd(), hb, fm;
	int64_t slots = (int64_t)(s1 - s0);
	uint64_t fl;

	__asm__("" : "+r"(k));
	one = _mm_load_pd(k[0].d);
	td_pd_keep(zero); /* one zero register for every use */
	/* below 2^43: signed conversions, no unsigned fix-up */
	d0 = _mm_set1_pd((double)(int64_t)s0);
	d1 = _mm_set1_pd((double)(int64_t)s1);
	td_pd_keep(d0);
	td_pd_keep(d1);
	q = _mm_add_pd(d0, d1);  /* (double)qerr */
	ds = _mm_sub_pd(d1, d0); /* (double)slots */
	td_fields_pd(m0, _mm_castpd_si128(zero), f0);
	td_fields_pd(m1, _mm_castpd_si128(zero), f1);
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		c[i] = _mm_sub_pd(_mm_mul_pd(f1[i], d1), _mm_mul_pd(f0[i], d0));
	l1 = _mm_add_pd(c[0], c[1]);
	sum = _mm_add_pd(l1, _mm_castsi128_pd(_mm_shuffle_epi32(
				     _mm_castpd_si128(l1), 0x4e)));
	if (uop) {
		/*
		 * td_uop_move: (m, 0) from frontend bound (c[1]'s low lane)
		 * and fetch latency (c[3]'s), (0, m) to bad speculation
		 * (c[0]'s high lane); the sum does not change.
		 */
		__m128d v = _mm_div_sd(_mm_mul_sd(_mm_cvtsi64_sd(zero, drop),
						  sum), ds);

		v = _mm_cvtsi64_sd(zero, _mm_cvttsd_si64(v));
		v = _mm_max_sd(_mm_min_sd(v, c[1]), zero);
		c[1] = _mm_sub_pd(c[1], v);
		c[0] = _mm_add_pd(c[0], _mm_unpacklo_pd(zero, v));
		if (l2)
			c[3] = _mm_sub_pd(c[3], _mm_max_sd(_mm_min_sd(v, c[3]),
							   zero));
	}
	/*
	 * consistent: slots >= 0 and no category below -qerr: neither ds
	 * nor min + qerr has its sign bit set (neither is ever -0: no
	 * operand here is)
	 */
	low = _mm_min_pd(c[0], c[1]);
	if (l2)
		low = _mm_min_pd(low, _mm_min_pd(c[2], c[3]));
	low = _mm_min_pd(_mm_add_pd(low, q), ds);
	res->slots = slots > 0 ? (uint64_t)slots : 0;
	/*
	 * res->slots < TD_SHORT_SLOTS, so slots < TD_SHORT_SLOTS, as the
	 * sign of their difference (no wrap: |slots| < 2^48), bit 63 to
	 * bit 2: a shift and a mask, no compare and set
	 */
	_Static_assert(TD_RESULT_SHORT == 1u << 2, "TD_RESULT_SHORT");
	fl = ((uint64_t)(slots - TD_SHORT_SLOTS) >> 61 & TD_RESULT_SHORT) |
	     extra;
	if (TD_UNLIKELY(_mm_cvtsd_f64(sum) <= _mm_cvtsd_f64(zero))) {
		td_decode_none(res);
		td_store_flags(res, fl, resets0);
	} else {
		td_store_flags(res, fl | (l2 ? TD_RESULT_L2 : 0), resets0);
		inv = _mm_div_pd(one, sum);
		c[0] = _mm_min_pd(_mm_max_pd(_mm_mul_pd(c[0], inv), zero), one);
		c[1] = _mm_min_pd(_mm_max_pd(_mm_mul_pd(c[1], inv), zero), one);
		_mm_storeu_pd(&res->l1[TD_RETIRING], c[0]);
		_mm_storeu_pd(&res->l1[TD_FE_BOUND], c[1]);
		res->smt_contention = 0; /* td_clamp01(0 x inv) */
		e1 = _mm_sub_pd(_mm_mul_pd(ds, _mm_load_pd(k[1].d)), sum);
		e1 = _mm_and_pd(e1, _mm_load_pd(k[2].d)); /* fabs */
		e1 = _mm_mul_pd(_mm_add_pd(q, e1), inv);
		if (l2) {
			/* children, then parent minus child, lane by lane */
			hb = _mm_mul_pd(c[2], inv);
			fm = _mm_mul_pd(c[3], inv);
			hb = _mm_min_pd(_mm_max_pd(hb, zero), one);
			fm = _mm_min_pd(_mm_max_pd(fm, zero), one);
			c[0] = _mm_max_pd(_mm_sub_pd(c[0], hb), zero);
			c[1] = _mm_max_pd(_mm_sub_pd(c[1], fm), zero);
			td_store_lo(&res->l2[TD_HEAVY_OPS], hb);
			td_store_lo(&res->l2[TD_LIGHT_OPS], c[0]);
			td_store_hi(&res->l2[TD_BR_MISPREDICT], hb);
			td_store_hi(&res->l2[TD_MACHINE_CLEARS], c[0]);
			td_store_lo(&res->l2[TD_FETCH_LAT], fm);
			td_store_lo(&res->l2[TD_FETCH_BW], c[1]);
			td_store_hi(&res->l2[TD_MEM_BOUND], fm);
			td_store_hi(&res->l2[TD_CORE_BOUND], c[1]);
			e1 = _mm_add_pd(e1, e1); /* x 2, exactly */
		} else {
			memset(res->l2, 0, sizeof(res->l2));
		}
		_mm_store_sd(&res->err, _mm_min_sd(e1, one));
	}
	return !_mm_movemask_pd(low);
}

/* td_decode_readings_inline where td_decode_readings_exact(s0, s1). */
TD_ALWAYS_INLINE bool td_decode_readings_sse2(uint64_t s0, uint64_t m0,
					      uint64_t s1, uint64_t m1,
					      bool l2, struct td_result *res)
{
	return td_decode_pd(s0, _mm_cvtsi64_si128((long long)m0), s1,
			    _mm_cvtsi64_si128((long long)m1), l2, res, false,
			    false, 0, 0);
}

/*
 * The fast end's (pm_fast.c): td_decode_readings_sse2, PERF_METRICS at
 * begin read from memory straight into its register, and res->resets
 * (0) written with res->flags in one store.
 */
TD_ALWAYS_INLINE bool td_decode_readings_end(uint64_t s0, const uint64_t *m0,
					     uint64_t s1, uint64_t m1, bool l2,
					     bool uop, int64_t drop,
					     unsigned extra,
					     struct td_result *res)
{
	return td_decode_pd(s0, _mm_loadl_epi64((const __m128i *)m0), s1,
			    _mm_cvtsi64_si128((long long)m1), l2, res, true,
			    uop, drop, extra);
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

TD_ALWAYS_INLINE bool td_decode_readings_end(uint64_t s0, const uint64_t *m0,
					     uint64_t s1, uint64_t m1, bool l2,
					     bool uop, int64_t drop,
					     unsigned extra,
					     struct td_result *res)
{
	bool ok = td_decode_readings_uop(s0, *m0, s1, m1, l2, uop, drop, res);

	res->resets = 0;
	res->flags |= extra;
	return ok;
}
#endif

#endif
