/* SPDX-License-Identifier: MIT */
/*
 * Arm: Arm's level-1 formulas with hand-checked values, MIDR
 * identification, and end to end on the emulated Neoverse cores (EL0
 * counter reads trapped and answered by the emulator: RDPMC natively,
 * MRS under qemu-aarch64), with the arm_pmuv3 driver's semantics: the
 * cycle counter at index 32, 32-bit counters that wrap, index 0 while
 * descheduled or perf_user_access is 0, groups refused when they do not
 * fit the counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "arm.h"

/* ---- pure formulas ------------------------------------------------------- */

/* The model of midr, its counts at v0 and v1, decoded. */
static unsigned decode_arm(uint32_t midr, unsigned caps, const uint64_t *v0,
			   const uint64_t *v1, struct td_result *r)
{
	struct td_gen_model m;
	struct td_counts a, b;
	struct td_delta d;
	unsigned flags;

	assert_int_equal(td_arm_lookup(midr, caps, &m), 0);
	td_arm_counts(&m, v0, &a);
	td_arm_counts(&m, v1, &b);
	flags = td_arm_delta(&m, &a, &b, &d);
	d.qerr = 0;
	td_decode(&d, false, r);
	r->flags |= flags;
	return flags;
}

static void assert_l1(const struct td_result *r, double ret, double bad,
		      double fe, double be)
{
	assert_float_equal(r->l1[TD_RETIRING], ret, 1e-9);
	assert_float_equal(r->l1[TD_BAD_SPEC], bad, 1e-9);
	assert_float_equal(r->l1[TD_FE_BOUND], fe, 1e-9);
	assert_float_equal(r->l1[TD_BE_BOUND], be, 1e-9);
}

/*
 * N2 r0p3, S = 5, 1000 cycles = 5000 slots; events in the model's order
 * cycles, STALL_SLOT_FRONTEND, _BACKEND, OP_RETIRED, OP_SPEC, BR_MIS_PRED,
 * STALL_SLOT: 1000, 1200, 1800, 1400, 2000, 50, 3000.
 * FE = 1200/5000 - 50/1000 = .19; BE = 1800/5000 - 3 x 50/1000 = .21;
 * busy = 1 - 3000/5000 = .4, ratio 1400/2000 = .7: RET = .28,
 * BS = .3 x .4 + 4 x 50/1000 = .32.
 */
static void test_formula_n2(void **state)
{
	uint64_t v0[7] = { 0 };
	uint64_t v1[7] = { 1000, 1200, 1800, 1400, 2000, 50, 3000 };
	/* r0p0: STALL_SLOT_FRONTEND and STALL_SLOT count 1000 more */
	uint64_t e1[7] = { 1000, 2200, 1800, 1400, 2000, 50, 4000 };
	struct td_result r;

	(void)state;
	assert_int_equal(decode_arm(0x410fd493, 0, v0, v1, &r), 0);
	assert_l1(&r, 0.28, 0.32, 0.19, 0.21);
	assert_int_equal(r.slots, 5000);
	assert_float_equal(r.err, 0, 1e-9);
	decode_arm(0x410fd490, 0, v0, e1, &r);
	assert_l1(&r, 0.28, 0.32, 0.19, 0.21);
	decode_arm(0x410fd492, 0, v0, e1, &r);
	assert_l1(&r, 0.28, 0.32, 0.19, 0.21);
	/*
	 * The same counts on r0p3 are taken as they are: FE 2200/5000 - .05
	 * = .39, busy 1 - 4000/5000 = .2: RET .14, BS .06 + .2 = .26.
	 */
	decode_arm(0x410fd493, 0, v0, e1, &r);
	assert_l1(&r, 0.14, 0.26, 0.39, 0.21);
}

/*
 * V1, S = 8, 1000 cycles: FE 2000, BE 2400, RET 1800, SPEC 3600, BR 50,
 * STALL 4400.  FE = .25 - 4 x .05 = .05; BE = .3; busy .45, ratio .5:
 * RET = .225, BS = .225 + 4 x .05 = .425.
 */
static void test_formula_v1(void **state)
{
	uint64_t v0[7] = { 10, 20, 30, 40, 50, 60, 70 };
	uint64_t v1[7] = { 1010, 2020, 2430, 1840, 3650, 110, 4470 };
	struct td_result r;

	(void)state;
	decode_arm(0x411fd401, 0, v0, v1, &r);
	assert_l1(&r, 0.225, 0.425, 0.05, 0.30);
}

/*
 * V3, S = 10, 1000 cycles: FE 3000, BE 2000, RET 3000, SPEC 4000,
 * STALL_FRONTEND_FLUSH 100, STALL 5000.  FE = .3 - .1 = .2; BE = .2;
 * busy .5, ratio .75: RET .375, BS .125 + .1 = .225.  N3 alike at S = 5.
 */
static void test_formula_v3_n3(void **state)
{
	uint64_t v0[7] = { 0 };
	uint64_t v1[7] = { 1000, 3000, 2000, 3000, 4000, 100, 5000 };
	uint64_t n1[7] = { 1000, 1500, 1000, 1500, 2000, 100, 2500 };
	struct td_result r;

	(void)state;
	decode_arm(0x410fd841, 0, v0, v1, &r);
	assert_l1(&r, 0.375, 0.225, 0.2, 0.2);
	assert_int_equal(r.slots, 10000);
	decode_arm(0x410fd8e0, 0, v0, n1, &r);
	assert_l1(&r, 0.375, 0.225, 0.2, 0.2);
}

/*
 * Generic SBSA with caps/slots 6 (no X event): cycles 1000, FE 600,
 * BE 1800, RET 2700, SPEC 3600, STALL 2400: FE .1, BE .3, busy .6,
 * ratio .75: RET .45, BS .15.
 */
static void test_formula_sbsa(void **state)
{
	uint64_t v0[6] = { 0 };
	uint64_t v1[6] = { 1000, 600, 1800, 2700, 3600, 2400 };
	struct td_result r;

	(void)state;
	decode_arm(0x411fd4e0, 6, v0, v1, &r);
	assert_l1(&r, 0.45, 0.15, 0.1, 0.3);
}

/* STALL_SLOT derived as FE + BE gives what the event gives. */
static void test_formula_derived_stall(void **state)
{
	struct td_arm_params p = { 5, 1, 3, 4, false, true,
				   { 0, 1, 2, 3, 4, 5, -1 }, false,
				   { 0, 1, 2, 3, 4, 5, 7 } };
	double dv[TD_ARM_NR] = { 1000, 1200, 1800, 1400, 2000, 50, 12345 };
	double f[4];

	(void)state;
	td_arm_fractions(&p, dv, f);
	assert_float_equal(f[TD_M_RETIRING], 0.28, 1e-12);
	assert_float_equal(f[TD_M_BAD_SPEC], 0.32, 1e-12);
	p.erratum = true; /* derived from the inflated FE: corrected alike */
	dv[TD_ARM_FE] += 1000;
	td_arm_fractions(&p, dv, f);
	assert_float_equal(f[TD_M_FE_BOUND], 0.19, 1e-12);
	assert_float_equal(f[TD_M_RETIRING], 0.28, 1e-12);
}

/* The counter budget's derivation (td_formula_derive) gives FE + BE. */
static void test_derive_stall_slot(void **state)
{
	uint64_t v[7] = { 1000, 1200, 1800, 1400, 2000, 50, 0 };
	uint64_t z[7] = { 0 };
	struct td_gen_model m;
	struct td_result r;

	(void)state;
	assert_int_equal(td_arm_lookup(0x410fd493, 0, &m), 0);
	td_formula_derive(&m, m.derivable, v);
	assert_int_equal(v[6], 3000);
	decode_arm(0x410fd493, 0, z, v, &r);
	assert_l1(&r, 0.28, 0.32, 0.19, 0.21);
	assert_int_equal(td_arm_lookup(0x413fd0c1, 0, &m), 0);
	assert_int_equal(m.derivable, 0); /* N1: nothing to derive */
}

/*
 * A negative category widens err.  V1, S = 8, 1000 cycles: FE slots 800,
 * BE 2400, RET 1800, SPEC 3600, BR_MIS_PRED 50, STALL 3200.  FE = .1 -
 * 4 x .05 = -.1; BE .3; busy 1 - .4 = .6, ratio .5: RET .3, BS .3 + .2
 * = .5.  FE cut to 0, the categories sum to 1.1 of the slots: reported
 * RET .3/1.1, BS .5/1.1, BE .3/1.1, FE 0, err .1/1.1.
 */
static void test_formula_negative_widens_err(void **state)
{
	uint64_t v0[7] = { 0 };
	uint64_t v1[7] = { 1000, 800, 2400, 1800, 3600, 50, 3200 };
	/* N1: stall cycles 600 + 500 overlap 1000 cycles: retiring -100 */
	uint64_t n0[3] = { 0 }, n1[3] = { 1000, 600, 500 };
	struct td_result r;

	(void)state;
	decode_arm(0x411fd401, 0, v0, v1, &r);
	assert_l1(&r, 0.3 / 1.1, 0.5 / 1.1, 0, 0.3 / 1.1);
	assert_float_equal(r.err, 0.1 / 1.1, 1e-9);
	decode_arm(0x413fd0c1, 0, n0, n1, &r);
	assert_l1(&r, 0, 0, 0.6 / 1.1, 0.5 / 1.1);
	assert_float_equal(r.err, 0.1 / 1.1, 1e-9);
}

/*
 * Level 2, V3: the level-1 counts of test_formula_v3_n3 (FE .2, BE .2,
 * RET .375, BS .225) and, in the level-2 group, STALL_FRONTEND 400,
 * STALL_FRONTEND_MEMBOUND 100, STALL_BACKEND 300, STALL_BACKEND_MEMBOUND
 * 200: fetch latency .2 x 100/400 = .05, fetch bandwidth .15, memory
 * bound .2 x 200/300 = .4/3, core bound .2/3; retiring's and bad
 * speculation's children 0.  A level-2 gap (its group not counting for
 * a while) leaves level 1 alone and drops level 2.
 */
static void test_formula_l2(void **state)
{
	uint64_t v0[7] = { 0 };
	uint64_t v1[7] = { 1000, 3000, 2000, 3000, 4000, 100, 5000 };
	uint64_t w0[TD_ARM2_NR] = { 7, 7, 7, 7 };
	uint64_t w1[TD_ARM2_NR] = { 407, 107, 307, 207 };
	struct td_gen_model m;
	struct td_counts a, b;
	struct td_delta d;
	struct td_result r;
	unsigned flags;

	(void)state;
	assert_int_equal(td_arm_lookup(0x410fd841, 0, &m), 0);
	assert_int_equal(m.nr2, TD_ARM2_NR);
	assert_int_equal(m.config2[TD_ARM2_FE_MEM], 0x8158);
	assert_int_equal(m.config2[TD_ARM2_BE_MEM], 0x8164);
	m.arm.l2 = true;
	td_arm_counts(&m, v0, &a);
	td_arm_counts(&m, v1, &b);
	for (int k = 0; k < TD_ARM2_NR; k++) {
		a.cat[TD_ARM_L2_AT + k] = w0[k];
		b.cat[TD_ARM_L2_AT + k] = w1[k];
	}
	flags = td_arm_delta(&m, &a, &b, &d);
	assert_int_equal(flags, TD_RESULT_L2 | TD_RESULT_L2_FE_BE);
	d.qerr = 0;
	td_decode_src(&d, false, flags, &r);
	assert_true(r.flags & TD_RESULT_L2_FE_BE);
	assert_l1(&r, 0.375, 0.225, 0.2, 0.2);
	assert_float_equal(r.l2[TD_FETCH_LAT], 0.05, 1e-9);
	assert_float_equal(r.l2[TD_FETCH_BW], 0.15, 1e-9);
	assert_float_equal(r.l2[TD_MEM_BOUND], 0.4 / 3, 1e-9);
	assert_float_equal(r.l2[TD_CORE_BOUND], 0.2 / 3, 1e-9);
	assert_float_equal(r.l2[TD_HEAVY_OPS], 0, 0);
	assert_float_equal(r.l2[TD_LIGHT_OPS], 0, 0);
	assert_float_equal(r.l2[TD_BR_MISPREDICT], 0, 0);
	assert_float_equal(r.l2[TD_MACHINE_CLEARS], 0, 0);
	assert_true(r.err < 1e-9);
	b.cat[TD_ARM_L2_GAP] = 1;
	flags = td_arm_delta(&m, &a, &b, &d);
	assert_int_equal(flags, 0);
	td_decode_src(&d, false, flags, &r);
	assert_false(r.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE));
	assert_l1(&r, 0.375, 0.225, 0.2, 0.2);
	assert_float_equal(r.l2[TD_FETCH_LAT], 0, 0);
}

/* N1: cycles 1000, STALL_FRONTEND 200, STALL_BACKEND 350. */
static void test_formula_n1_cycles(void **state)
{
	uint64_t v0[3] = { 0 };
	uint64_t v1[3] = { 1000, 200, 350 };
	struct td_result r;

	(void)state;
	assert_int_equal(decode_arm(0x413fd0c1, 0, v0, v1, &r),
			 TD_RESULT_CYCLES);
	assert_l1(&r, 0.45, 0, 0.2, 0.35);
	assert_int_equal(r.slots, 1000); /* cycles */
}

/* ---- identification ------------------------------------------------------ */

static void test_midr_lookup(void **state)
{
	static const char cpuinfo[] =
		"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n"
		"CPU implementer\t: 0x41\nCPU architecture: 8\n"
		"CPU variant\t: 0x0\nCPU part\t: 0xd49\nCPU revision\t: 3\n";
	struct td_gen_model m;
	uint32_t midr;

	(void)state;
	assert_int_equal(td_arm_midr_parse(cpuinfo, &midr), 0);
	assert_int_equal(midr, 0x410fd493);
	assert_int_equal(td_arm_midr_parse("processor\t: 0\n", &midr),
			 -ENOSYS);
	assert_int_equal(td_arm_lookup(0x410fd490, 0, &m), 0);
	assert_string_equal(m.name, "neoverse-n2");
	assert_int_equal(m.arm.slots, 5);
	assert_true(m.arm.erratum);
	assert_int_equal(m.nr, 7);
	assert_int_equal(m.config[m.arm.at[TD_ARM_STALL]], 0x3f);
	assert_int_equal(m.arm.at[TD_ARM_STALL], 6); /* last: droppable */
	assert_int_equal(m.derivable, 6); /* the counter budget's term */
	assert_int_equal(td_arm_lookup(0x410fd493, 0, &m), 0);
	assert_false(m.arm.erratum);
	assert_int_equal(td_arm_lookup(0x411fd490, 0, &m), 0); /* r1p0 */
	assert_false(m.arm.erratum);
	assert_int_equal(td_arm_lookup(0x410fd4f0, 8, &m), 0);
	assert_string_equal(m.name, "neoverse-v2");
	assert_false(m.arm.erratum);
	assert_int_equal(td_arm_lookup(0x410fd840, 0, &m), 0);
	assert_int_equal(m.arm.slots, 10);
	assert_int_equal(m.config[m.arm.at[TD_ARM_X]], 0x8162);
	assert_int_equal(td_arm_lookup(0x410fd40f, 0, &m), 0);
	assert_int_equal(m.arm.slots, 8);
	assert_int_equal(td_arm_lookup(0x410fd8e0, 0, &m), 0);
	assert_int_equal(m.arm.slots, 5);
	assert_int_equal(td_arm_lookup(0x413fd0c1, 0, &m), 0);
	assert_int_equal(m.formula, TD_F_ARM_CYCLES);
	assert_int_equal(td_arm_lookup(0x411fd4e0, 0, &m), -ENOSYS);
	assert_int_equal(td_arm_lookup(0x411fd4e0, 6, &m), 0);
	assert_string_equal(m.name, "sbsa");
	assert_int_equal(m.arm.at[TD_ARM_X], -1);
	assert_int_equal(td_arm_lookup(0x610f0220, 0, &m), -ENOSYS);
}

/*
 * A fast end's result (td_arm_values_result, from a region's differences
 * to the result in one function) against the general route's steps for
 * the same differences: the counts of zero and of them (td_arm_counts),
 * their delta (td_arm_delta), td_decode, the delta's flags or'ed in;
 * bit for bit, with the delta's slots returned.  Every Arm model (N1's
 * and SBSA's absent events among them), STALL_SLOT derived or not, and
 * values that take each branch of the formula: no cycles, no speculated
 * ops, corrections that cut a category to 0, the erratum's subtraction
 * below zero, one cycle, counts near 2^50, others from a fixed-seed
 * generator.  The differences as a fast end keeps them: the model's
 * positions, 0 past them.
 */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13; /* xorshift64 (Marsaglia 2003) */
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void assert_values_result_bitwise(const struct td_gen_model *m,
					 const uint64_t *v, uint64_t qerr)
{
	static const uint64_t zero[TD_GEN_MAX];
	struct td_counts a, b;
	struct td_delta d;
	struct td_result fast, general;
	unsigned flags;
	int64_t slots;

	memset(&fast, 0xa5, sizeof(fast)); /* fields neither writes: equal */
	memset(&general, 0xa5, sizeof(general));
	slots = td_arm_values_result(m, v, qerr, &fast);
	td_arm_counts(m, zero, &a);
	td_arm_counts(m, v, &b);
	flags = td_arm_delta(m, &a, &b, &d);
	d.qerr = qerr;
	td_decode(&d, false, &general);
	general.flags |= flags;
	assert_int_equal(slots, d.slots);
	assert_memory_equal(&fast, &general, sizeof(fast));
}

static void test_values_result_bitwise(void **state)
{
	static const struct { uint32_t midr; unsigned caps; } cores[] = {
		{ 0x413fd0c1, 0 }, /* N1: cycles, slot events absent */
		{ 0x410fd490, 0 }, /* N2 r0p0: the erratum */
		{ 0x410fd493, 0 }, { 0x411fd401, 0 }, { 0x410fd4f0, 8 },
		{ 0x410fd8e0, 0 }, { 0x410fd840, 0 },
		{ 0x411fd4e0, 6 }, /* SBSA: no X */
	};
	/* cycles, FE, BE, RET, SPEC, X, STALL (TD_ARM_* order) */
	static const uint64_t fixed[][TD_ARM_NR] = {
		{ 0, 0, 0, 0, 0, 0, 0 },
		{ 0, 120, 180, 140, 200, 5, 300 },        /* no cycles */
		{ 1000, 1200, 1800, 1400, 0, 50, 3000 },  /* no SPEC */
		{ 1000, 800, 2400, 1800, 3600, 50, 3200 }, /* FE cut */
		{ 1000, 600, 500, 10, 20, 900, 1100 },    /* N1 RET < 0 */
		{ 1000, 400, 1800, 1400, 2000, 50, 700 }, /* erratum < 0 */
		{ 1, 1, 2, 1, 1, 0, 3 },
		{ 1ull << 50, 3ull << 49, 1ull << 49, 5ull << 48,
		  3ull << 49, 1ull << 40, 1ull << 51 },
	};
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (unsigned c = 0; c < sizeof(cores) / sizeof(cores[0]); c++) {
		for (unsigned n = 0; n < 64 + 2 * 8; n++) {
			const uint64_t *ev = fixed[n % 8];
			uint64_t random[TD_ARM_NR];
			uint64_t v[TD_GEN_MAX] = { 0 };
			struct td_gen_model m;

			assert_int_equal(td_arm_lookup(cores[c].midr,
						       cores[c].caps, &m),
					 0);
			assert_true(m.nr < TD_GEN_MAX);
			if (n >= 16) { /* cycles up to 2^32, events a few x */
				uint64_t cyc = next_random(&x) >> 32;

				random[TD_ARM_CYC] = cyc;
				for (int k = 1; k < TD_ARM_NR; k++)
					random[k] = next_random(&x) %
						    (6 * cyc + 1);
				ev = random;
			}
			for (int k = 0; k < TD_ARM_NR; k++)
				if (m.arm.at[k] >= 0)
					v[m.arm.at[k]] = ev[k];
			if (n % 2 && m.derivable) /* STALL_SLOT not counted */
				td_arm_derive(&m, m.derivable, v);
			m.arm.derived_stall = n % 4 == 3;
			assert_values_result_bitwise(&m, v, n * 255);
		}
	}
}

/* ---- end to end on the emulator ----------------------------------------- */

/* Integer rounding of the emulator's events: a few parts per million. */
#define TOL 1e-5

/*
 * read(2)s td_open made: its counter-budget check reads the group once;
 * on N3/V3 the level-2 probe reads level 1's times and level 2's, which
 * with the profiles' six counters does not fit (levels 1, says why).
 */
static unsigned long open_reads;

static bool has_l2(enum emu_profile p)
{
	return p == EMU_ARM_N3 || p == EMU_ARM_V3;
}

static struct td *open_arm(enum emu_profile p, enum td_path path)
{
	struct td_info info = { .size = sizeof(info) };
	struct emu_stats s;
	struct td *td;

	emu_setup(p);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_stats(&s);
	open_reads = s.reads;
	assert_int_equal(open_reads, has_l2(p) ? 3 : 1);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, path);
	assert_int_equal(info.levels, 1);
	assert_int_equal(!!(info.flags & TD_INFO_L2_NO_COUNTERS), has_l2(p));
	assert_int_equal(info.pmu_type, 8);
	assert_memory_equal(info.pmu_name, "arm", 3);
	return td;
}

static void region(struct td *td, uint64_t slots, const struct emu_mix *mix,
		   struct td_result *r, struct truth_frac *t)
{
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;

	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(slots, mix);
	assert_int_equal(td_region_end(td, &reg, r), 0);
	emu_truth(&t1);
	*t = truth_between(&t0, &t1);
}

static void check_slots(struct td *td, uint64_t slots,
			const struct emu_mix *mix)
{
	struct truth_frac t;
	struct td_result r;

	region(td, slots, mix, &r, &t);
	/* width x whole cycles; slots here are multiples of every width */
	assert_int_equal(r.slots, slots);
	assert_false(r.flags & (TD_RESULT_CYCLES | TD_RESULT_L2));
	assert_within(&r, &t, TOL);
}

static void e2e(enum emu_profile p)
{
	struct emu_mix m1 = emu_mix_l1(0.30, 0.05, 0.10, 0.55);
	struct emu_mix m2 = emu_mix_l1(0.55, 0.25, 0.12, 0.08);
	struct td *td = open_arm(p, TD_PATH_RDPMC);
	struct emu_stats s;

	emu_run(480000, &m2); /* before: not in the region */
	check_slots(td, 2400000, &m1);
	check_slots(td, 600000, &m2);
	emu_stats(&s);
	assert_int_equal(s.reads, open_reads); /* EL0 reads all the way */
	assert_true(s.rdpmcs > 0);
	td_close(td);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
}

/*
 * The ordinary-counter fast path on Arm (counters_fast.c; on arm64 the
 * MRS stubs): a pair reads each counter once at its begin and nothing at
 * an end asked for nothing; a region across many 32-bit wraps of V1's
 * event counters (pmc_width 32: each overflow's new period rewrites the
 * page) and one with a switch planned at the end's first counter read
 * are exact.
 */
static void test_fast_path_arm(void **state)
{
	struct emu_mix m = emu_mix_l1(0.30, 0.05, 0.10, 0.55);
	struct emu_sched_event sw = { .kind = EMU_SCHED_SWITCH_OUT };
	struct td *td = open_arm(EMU_ARM_V1, TD_PATH_RDPMC);
	struct td_region reg = { { 0 } };
	struct emu_stats s0, s1;
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;

	(void)state;
	check_slots(td, 240000, &m); /* the view set */
	assert_int_equal(td_region_begin(td, &reg), 0);
	assert_int_equal(td_region_end(td, &reg, NULL), 0);
	emu_stats(&s0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(240000, &m);
	assert_int_equal(td_region_end(td, &reg, NULL), 0);
	emu_stats(&s1);
	assert_int_equal(s1.reads, s0.reads);
	assert_true(s1.rdpmcs - s0.rdpmcs >= 4 && s1.rdpmcs - s0.rdpmcs <= 8);
	for (int sched = 0; sched < 2; sched++) {
		emu_truth(&t0);
		assert_int_equal(td_region_begin(td, &reg), 0);
		/* 2^32 slots at a time at most: one wrap between PMIs */
		for (int i = 0; i < 16; i++)
			emu_run(UINT64_C(240) << 24, &m);
		emu_truth(&t1);
		if (sched)
			emu_schedule(EMU_AT_RDPMC, &sw);
		assert_int_equal(td_region_end(td, &reg, &r), 0);
		t = truth_between(&t0, &t1);
		assert_int_equal(r.slots, t1.slots - t0.slots);
		assert_false(r.flags & TD_RESULT_UNRELIABLE);
		assert_within(&r, &t, TOL);
	}
	td_close(td);
}

static void test_e2e_n2_r0p0(void **state)
{
	(void)state;
	e2e(EMU_ARM_N2_R0P0);
}

/* r0p3: no erratum, and MIDR from /proc/cpuinfo (no sysfs file). */
static void test_e2e_n2_r0p3(void **state)
{
	(void)state;
	e2e(EMU_ARM_N2_R0P3);
}

static void test_e2e_v1(void **state)
{
	(void)state;
	e2e(EMU_ARM_V1);
}

static void test_e2e_v2(void **state)
{
	(void)state;
	e2e(EMU_ARM_V2);
}

static void test_e2e_n3(void **state)
{
	(void)state;
	e2e(EMU_ARM_N3);
}

static void test_e2e_v3(void **state)
{
	(void)state;
	e2e(EMU_ARM_V3);
}

/* A core outside the table with the slot events: SBSA, caps/slots 6. */
static void test_e2e_sbsa(void **state)
{
	(void)state;
	e2e(EMU_ARM_SBSA);
}

/* N1: cycle stall fractions, flagged, never slot-based. */
static void test_e2e_n1_cycles(void **state)
{
	static struct td_named nr = TD_NAMED_INIT("n1");
	struct emu_mix m = emu_mix_l1(0.30, 0.10, 0.15, 0.45);
	struct td *td = open_arm(EMU_ARM_N1, TD_PATH_RDPMC);
	struct td_record rec[2];
	struct td_result r, d;
	struct td_totals tot;
	struct truth_frac t;
	size_t n;

	(void)state;
	assert_int_equal(td_records_attach(td, rec, 2), 0);
	region(td, 5000000, &m, &r, &t);
	assert_true(r.flags & TD_RESULT_CYCLES);
	assert_int_equal(r.slots, 5000000 / 5); /* cycles of the 5-wide N1 */
	assert_float_equal(r.l1[TD_FE_BOUND], t.l1[TD_FE_BOUND], TOL);
	assert_float_equal(r.l1[TD_BE_BOUND], t.l1[TD_BE_BOUND], TOL);
	assert_float_equal(r.l1[TD_RETIRING],
			   t.l1[TD_RETIRING] + t.l1[TD_BAD_SPEC], TOL);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0, 0);
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(td_record_decode(&rec[0], &d), 0);
	assert_true(d.flags & TD_RESULT_CYCLES);
	assert_float_equal(d.l1[TD_FE_BOUND], r.l1[TD_FE_BOUND], 1e-12);
	/* named regions' totals keep the flag too */
	memset(&nr.opaque, 0, sizeof(nr.opaque));
	assert_int_equal(td_named_begin(td, &nr), 0);
	emu_run(1000000, &m);
	assert_int_equal(td_named_end(td, &nr, &r), 0);
	assert_int_equal(td_named_totals(&nr, &tot), 0);
	assert_true(tot.total.flags & TD_RESULT_CYCLES);
	assert_float_equal(tot.total.l1[TD_FE_BOUND], r.l1[TD_FE_BOUND],
			   1e-12);
	/* and the reports say so: basis column, table marker */
	for (int fmt = TD_FORMAT_TABLE; fmt <= TD_FORMAT_JSONL; fmt++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(td_report_named(f, td, (enum td_format)fmt),
				 0);
		fclose(f);
		assert_non_null(strstr(text, fmt == TD_FORMAT_TABLE ?
						     "cycles, not TopDown" :
					     fmt == TD_FORMAT_CSV ?
						     ",cycles,1,0,,,,,,emulated:test\n" :
						     "\"basis\":\"cycles\",\"max_depth\":1,\"open\":0,\"l1_bound\":null,\"l2_bound\":null,\"l3_bound\":null,\"dram_bound\":null,\"store_bound\":null,\"pmu\":\"emulated:test\"}"));
		free(text);
	}
	td_close(td);
}

/*
 * 32-bit event counters (V1, no PMUv3p5: config1 3 refused, 2 taken):
 * with a short period they wrap inside the region, and a reading
 * between the wrap and its overflow interrupt needs pmc_width 32 sign
 * extension with the old offset; then more than 2^32 events at the
 * kernel's own period (2^31 - 1).
 */
static void test_wrap_32bit(void **state)
{
	struct emu_mix m = emu_mix_l1(0.35, 0.15, 0.20, 0.30);
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct emu_truth t0, t1, t2;
	struct truth_frac t;
	struct td_result r;
	struct td *td;

	(void)state;
	emu_setup(EMU_ARM_V1);
	emu_gp_set_period(100000);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(900000, &m); /* wrapped, interrupt pending */
	emu_truth(&t1);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_run(1200000, &m);
	assert_int_equal(td_region_end(td, &inner, &r), 0);
	emu_truth(&t2);
	t = truth_between(&t1, &t2);
	assert_within(&r, &t, TOL);
	assert_int_equal(td_region_end(td, &outer, &r), 0);
	t = truth_between(&t0, &t2);
	assert_within(&r, &t, TOL);
	td_close(td);
	emu_teardown();

	emu_setup(EMU_ARM_V1);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	/* FE slots 2^33 and more, each stretch wrapping at most once */
	for (int i = 0; i < 40; i++)
		emu_run(UINT64_C(1000000000), &m);
	assert_int_equal(td_region_end(td, &outer, &r), 0);
	emu_truth(&t1);
	t = truth_between(&t0, &t1);
	assert_within(&r, &t, TOL);
	td_close(td);
}

/* Descheduled: index 0, read(2) of the group (exact, not resetting). */
static void test_index0_read_fallback(void **state)
{
	struct td *td = open_arm(EMU_ARM_V2, TD_PATH_RDPMC);
	struct emu_mix m = emu_mix_l1(0.4, 0.1, 0.2, 0.3);
	struct td_region reg = { { 0 } };
	struct td_result r;
	struct emu_stats s;

	(void)state;
	emu_deschedule();
	assert_int_equal(td_region_begin(td, &reg), 0);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_stats(&s);
	assert_int_equal(s.reads - open_reads, 2);
	assert_int_equal(s.rdpmcs, 0);
	/* scheduled at begin, out at end: flagged */
	emu_reschedule();
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(600000, &m);
	emu_deschedule();
	emu_run(6000, &m); /* not counted: time_running stops */
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_true(r.flags & TD_RESULT_UNRELIABLE);
	emu_reschedule();
	check_slots(td, 1200000, &m);
	emu_context_switch(99999); /* counters move: new index, offset */
	check_slots(td, 1200000, &m);
	td_close(td);
}

/* perf_user_access = 0: opens, read(2) path, says why; never an MRS. */
static void test_user_access_off(void **state)
{
	struct td_info info = { .size = sizeof(info) };
	struct emu_mix m = emu_mix_l1(0.4, 0.1, 0.2, 0.3);
	struct td *td = open_arm(EMU_ARM_NO_USER, TD_PATH_READ);
	struct emu_stats s;

	(void)state;
	assert_int_equal(td_query(td, &info), 0);
	assert_true(info.flags & TD_INFO_USER_ACCESS_OFF);
	check_slots(td, 1200000, &m);
	emu_stats(&s);
	assert_int_equal(s.rdpmcs, 0);
	assert_int_equal(s.reads - open_reads, 2);
	td_close(td);
}

/* The handle of an ordinary V2 reports no such flag. */
static void test_user_access_on_flag(void **state)
{
	struct td_info info = { .size = sizeof(info) };
	struct td *td = open_arm(EMU_ARM_V2, TD_PATH_RDPMC);

	(void)state;
	assert_int_equal(td_query(td, &info), 0);
	assert_false(info.flags & TD_INFO_USER_ACCESS_OFF);
	td_close(td);
}

/*
 * A VM with 5 counters: STALL_SLOT derived (the counter budget's one
 * term, TD_INFO_DERIVED), results unchanged.
 */
static void test_vm_five_counters(void **state)
{
	struct emu_mix m = emu_mix_l1(0.3, 0.2, 0.2, 0.3);
	struct td_info info = { .size = sizeof(info) };
	struct td *td = open_arm(EMU_ARM_VM5, TD_PATH_RDPMC);
	struct emu_stats s;

	(void)state;
	emu_stats(&s);
	assert_int_equal(s.open_fds, 6); /* cycles + 5 */
	assert_int_equal(td_query(td, &info), 0);
	assert_true(info.flags & TD_INFO_DERIVED);
	assert_string_equal(info.uarch, "neoverse-v2");
	check_slots(td, 1200000, &m);
	td_close(td);
}

/* Four counters: not even the derived set fits. */
static void test_vm_too_few_counters(void **state)
{
	struct emu_stats s;
	struct td *td;

	(void)state;
	emu_setup(EMU_ARM_VM4);
	assert_int_equal(td_open(&td, NULL), -ENOSPC);
	assert_null(td);
	assert_non_null(strstr(td_strerror(-ENOSPC), "larger instance"));
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
}

/*
 * Level 2 end to end (N3, V3) on a PMU with `counters` event counters:
 * level 1 takes six and the cycle counter, level 2 four more.  Fetch
 * latency, fetch bandwidth, memory and core bound against the true
 * fractions; the children Arm has no events for stay 0.  The emulator
 * makes the memory-bound share of stall cycles the true share of the
 * slots (what the library's scaling assumes); these stretches are whole
 * cycles (exact, measured 6e-17), TOL_L2 leaves room for the integer
 * cycles of other lengths.
 */
#define TOL_L2 5e-5

static void check_l2(const struct td_result *r, const struct truth_frac *t)
{
	static const int measured[] = { TD_FETCH_LAT, TD_FETCH_BW,
					TD_MEM_BOUND, TD_CORE_BOUND };
	static const int absent[] = { TD_HEAVY_OPS, TD_LIGHT_OPS,
				      TD_BR_MISPREDICT, TD_MACHINE_CLEARS };

	assert_int_equal(r->flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE |
				     TD_RESULT_UNRELIABLE),
			 TD_RESULT_L2 | TD_RESULT_L2_FE_BE);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_float_equal(r->l1[i], t->l1[i], TOL);
	for (int i = 0; i < 4; i++) {
		assert_float_equal(r->l2[measured[i]], t->l2[measured[i]],
				   TOL_L2);
		assert_float_equal(r->l2[absent[i]], 0, 0);
	}
	assert_true(r->err < 1e-4);
}

static struct td *open_l2(enum emu_profile p, unsigned counters,
			  unsigned levels)
{
	struct td_info info = { .size = sizeof(info) };
	struct td *td;

	emu_setup(p);
	emu_gp_set_counters(counters);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.levels, levels);
	assert_int_equal(!!(info.flags & TD_INFO_L2_NO_COUNTERS), levels == 1);
	assert_false(info.flags & TD_INFO_DERIVED);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	return td;
}

/* The table lists level 2 under frontend and backend only. */
static void report_l2(struct td *td, const struct emu_mix *m)
{
	static struct td_named nr = TD_NAMED_INIT("l2");
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&nr.opaque, 0, sizeof(nr.opaque));
	assert_int_equal(td_named_begin(td, &nr), 0);
	emu_run(600000, m);
	assert_int_equal(td_named_end(td, &nr, NULL), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_TABLE), 0);
	fclose(f);
	assert_non_null(strstr(text, "fetch_latency"));
	assert_non_null(strstr(text, "memory_bound"));
	assert_null(strstr(text, "light_operations"));
	assert_null(strstr(text, "machine_clears"));
	free(text);
	assert_int_equal(td_named_unlink(td, &nr), 0);
}

static void e2e_l2(enum emu_profile p)
{
	struct emu_mix m1 = emu_mix_l2(0.30, 0.05, 0.15, 0.50,
				       0, 0, 0.06, 0.35);
	struct emu_mix m2 = emu_mix_l2(0.40, 0.20, 0.25, 0.15,
				       0, 0, 0.20, 0.01);
	struct td *td = open_l2(p, 10, 2);
	struct td_region reg = { { 0 } };
	struct td_record rec[2];
	struct td_result r, d;
	struct truth_frac t;
	struct emu_stats s0, s1;
	size_t n;

	emu_stats(&s0);
	emu_run(480000, &m2); /* before: not in the region */
	assert_int_equal(td_records_attach(td, rec, 2), 0);
	t = measure_region(td, &reg, 2400000, &m1, &r);
	check_l2(&r, &t);
	t = measure_region(td, &reg, 1200000, &m2, &r);
	check_l2(&r, &t);
	emu_stats(&s1);
	assert_int_equal(s1.reads, s0.reads); /* EL0 reads all the way */
	/* records decode to the same, flags and all */
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(td_record_decode(&rec[1], &d), 0);
	assert_int_equal(d.flags, r.flags);
	assert_memory_equal(d.l2, r.l2, sizeof(d.l2));
	report_l2(td, &m1);
	td_close(td);
	emu_teardown();
	/* nine counters: level 2 does not fit beside level 1 */
	td = open_l2(p, 9, 1);
	t = measure_region(td, &reg, 1200000, &m1, &r);
	assert_false(r.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE));
	assert_within(&r, &t, TOL);
	td_close(td);
	emu_teardown();
}

static void test_e2e_l2_n3(void **state)
{
	(void)state;
	e2e_l2(EMU_ARM_N3);
}

static void test_e2e_l2_v3(void **state)
{
	(void)state;
	e2e_l2(EMU_ARM_V3);
}

/*
 * The level-2 group crowded out for part of a region (another perf user
 * takes a counter; level 1, the older group, keeps its counters): that
 * region reports level 1 only, reliable; once level 2 counts again, so
 * does the next region.  Named totals then mix level-1 and level-2 calls:
 * level 1 only.
 */
static void test_l2_gap(void **state)
{
	static struct td_named nr = TD_NAMED_INIT("v3");
	struct emu_mix m = emu_mix_l2(0.30, 0.10, 0.20, 0.40, 0, 0, 0.05, 0.2);
	struct td *td = open_l2(EMU_ARM_V3, 10, 2);
	struct td_region reg = { { 0 } };
	struct td_totals tot;
	struct truth_frac t;
	struct td_result r;

	(void)state;
	memset(&nr.opaque, 0, sizeof(nr.opaque));
	assert_int_equal(td_named_begin(td, &nr), 0);
	emu_run(600000, &m);
	assert_int_equal(td_named_end(td, &nr, &r), 0);
	assert_true(r.flags & TD_RESULT_L2);
	assert_int_equal(td_named_totals(&nr, &tot), 0);
	assert_true(tot.total.flags & TD_RESULT_L2_FE_BE);
	assert_float_equal(tot.total.l2[TD_LIGHT_OPS], 0, 0);

	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(600000, &m);
	emu_gp_reserve(1);
	emu_context_switch(0); /* level 2 no longer fits */
	emu_run(600000, &m);
	emu_gp_reserve(0);
	emu_context_switch(0); /* back */
	emu_run(600000, &m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_false(r.flags & (TD_RESULT_L2 | TD_RESULT_UNRELIABLE));
	assert_float_equal(r.l2[TD_FETCH_LAT], 0, 0);
	t = measure_region(td, &reg, 1200000, &m, &r);
	check_l2(&r, &t);

	assert_int_equal(td_named_begin(td, &nr), 0);
	emu_gp_reserve(1);
	emu_context_switch(0);
	emu_run(600000, &m);
	assert_int_equal(td_named_end(td, &nr, &r), 0);
	assert_false(r.flags & TD_RESULT_L2);
	assert_int_equal(td_named_totals(&nr, &tot), 0);
	assert_false(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE));
	td_close(td);
}

/*
 * Without FEAT_PMUv3p5 a 64-bit cycles event lives on PMCCNTR_EL0 or
 * nowhere.  PMCCNTR held by someone else (the hard-lockup detector):
 * the group opens but never schedules, so td_open retries with a 32-bit
 * cycles event on an event counter, which with STALL_SLOT derived fits
 * V1's six; a PMU without PMCCNTR refuses the 64-bit event at open
 * (EINVAL), the same retry.  N1 (3 events, nothing to derive) just gets
 * the 32-bit cycles event.  Results stay exact across 32-bit wraps.
 */
static void cycles_32bit(enum emu_profile p, enum emu_pmccntr state,
			 bool derived)
{
	struct emu_mix m = emu_mix_l1(0.35, 0.15, 0.20, 0.30);
	struct td_info info = { .size = sizeof(info) };
	const struct perf_event_mmap_page *pc;
	struct td *td;

	emu_setup(p);
	emu_arm_set_pmccntr(state);
	emu_gp_set_period(100000); /* wraps inside the regions */
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	assert_int_equal(!!(info.flags & TD_INFO_DERIVED), derived);
	pc = td_gen_of(td)->gen->pc[0]; /* the leader: CPU_CYCLES */
	assert_int_equal(td_gen_of(td)->gen->m.config[td_gen_of(td)->gen->ev[0]], 0x11);
	assert_int_equal(pc->pmc_width, 32);
	assert_true(pc->index >= 1 && pc->index <= 6); /* not PMCCNTR's 32 */
	if (p == EMU_ARM_N1) {
		struct truth_frac t;
		struct td_result r;

		region(td, 3000000, &m, &r, &t);
		assert_true(r.flags & TD_RESULT_CYCLES);
		assert_float_equal(r.l1[TD_FE_BOUND], t.l1[TD_FE_BOUND], TOL);
		assert_float_equal(r.l1[TD_BE_BOUND], t.l1[TD_BE_BOUND], TOL);
	} else {
		check_slots(td, 3000000, &m);
		check_slots(td, 600000, &m);
	}
	td_close(td);
	emu_teardown();
}

static void test_cycles_32bit_pmccntr_taken(void **state)
{
	(void)state;
	cycles_32bit(EMU_ARM_V1, EMU_PMCCNTR_TAKEN, true);
	cycles_32bit(EMU_ARM_N1, EMU_PMCCNTR_TAKEN, false);
}

static void test_cycles_32bit_pmccntr_absent(void **state)
{
	(void)state;
	cycles_32bit(EMU_ARM_V1, EMU_PMCCNTR_ABSENT, true);
	cycles_32bit(EMU_ARM_N1, EMU_PMCCNTR_ABSENT, false);
}

/* With 64-bit event counters (V2) the cycles event keeps its 64 bits. */
static void test_cycles_64bit_pmuv3p5(void **state)
{
	struct emu_mix m = emu_mix_l1(0.35, 0.15, 0.20, 0.30);
	struct td *td;

	(void)state;
	emu_setup(EMU_ARM_V2);
	emu_arm_set_pmccntr(EMU_PMCCNTR_TAKEN);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_gen_of(td)->gen->pc[0]->pmc_width, 64);
	assert_int_not_equal(td_gen_of(td)->gen->pc[0]->index, 32);
	check_slots(td, 1200000, &m);
	td_close(td);
}

/* No PMU at all (a VM without one): -ENODEV. */
static void test_no_pmu(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_NO_PMU);
	assert_int_equal(td_open(&td, NULL), -ENODEV);
}

/*
 * Cortex-A510 CPUs 0-3 and Cortex-X3 4-7: unpinned, -ENXIO naming
 * taskset; pinned to the big cores, the X3's PMU (generic SBSA formula);
 * pinned to the little ones, whose PMU lists no slot events: -ENOSYS.
 */
static void test_heterogeneous(void **state)
{
	struct emu_mix m = emu_mix_l1(0.3, 0.2, 0.2, 0.3);
	struct td_info info = { .size = sizeof(info) };
	struct td *td;

	(void)state;
	emu_setup(EMU_ARM_HETERO);
	assert_int_equal(td_open(&td, NULL), -ENXIO);
	assert_non_null(strstr(td_strerror(-ENXIO), "taskset"));
	emu_arm_pin(4, 7);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_string_equal(info.pmu_name, "armv8_cortex_x3");
	check_slots(td, 1200000, &m);
	td_close(td);
	emu_migrate(1);
	emu_arm_pin(0, 3);
	assert_int_equal(td_open(&td, NULL), -ENOSYS);
	assert_non_null(strstr(td_strerror(-ENOSYS), "part 0xd46"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formula_n2),
		cmocka_unit_test(test_formula_v1),
		cmocka_unit_test(test_formula_v3_n3),
		cmocka_unit_test(test_formula_sbsa),
		cmocka_unit_test(test_formula_derived_stall),
		cmocka_unit_test(test_derive_stall_slot),
		cmocka_unit_test(test_formula_n1_cycles),
		cmocka_unit_test(test_formula_l2),
		cmocka_unit_test(test_formula_negative_widens_err),
		cmocka_unit_test(test_midr_lookup),
		cmocka_unit_test(test_values_result_bitwise),
		cmocka_unit_test_teardown(test_e2e_n2_r0p0, teardown_emu),
		cmocka_unit_test_teardown(test_fast_path_arm, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_n2_r0p3, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_v1, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_v2, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_n3, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_v3, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_sbsa, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_n1_cycles, teardown_emu),
		cmocka_unit_test_teardown(test_wrap_32bit, teardown_emu),
		cmocka_unit_test_teardown(test_index0_read_fallback,
					  teardown_emu),
		cmocka_unit_test_teardown(test_user_access_off, teardown_emu),
		cmocka_unit_test_teardown(test_user_access_on_flag,
					  teardown_emu),
		cmocka_unit_test_teardown(test_vm_five_counters, teardown_emu),
		cmocka_unit_test_teardown(test_vm_too_few_counters,
					  teardown_emu),
		cmocka_unit_test_teardown(test_e2e_l2_n3, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_l2_v3, teardown_emu),
		cmocka_unit_test_teardown(test_l2_gap, teardown_emu),
		cmocka_unit_test_teardown(test_cycles_32bit_pmccntr_taken,
					  teardown_emu),
		cmocka_unit_test_teardown(test_cycles_32bit_pmccntr_absent,
					  teardown_emu),
		cmocka_unit_test_teardown(test_cycles_64bit_pmuv3p5,
					  teardown_emu),
		cmocka_unit_test_teardown(test_no_pmu, teardown_emu),
		cmocka_unit_test_teardown(test_heterogeneous, teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
