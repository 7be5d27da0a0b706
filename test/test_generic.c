/* SPDX-License-Identifier: MIT */
/*
 * TopDown from ordinary counters: the formulas with hand-checked values,
 * CPU identification, and end to end on the emulated Zen 4, Zen 5,
 * Skylake and Gracemont through td_region_begin/td_region_end, with the
 * kernel's semantics for ordinary counters (offset, sign extension, the
 * 2^48 wrap, read(2) when index is 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "x86_formulas.h"
#include "userpage.h"

/* ---- pure formulas ------------------------------------------------------- */

static void decode_counts(const struct td_counts *a, const struct td_counts *b,
			  struct td_result *res)
{
	struct td_delta d;

	d.slots = (int64_t)(b->slots - a->slots);
	for (int i = 0; i < TD_NR_CATS; i++)
		d.cat[i] = (int64_t)(b->cat[i] - a->cat[i]);
	d.qerr = 0;
	td_decode(&d, false, res);
}

/*
 * Zen 4, 1000 cycles = 6000 slots: FE 1200, BE 1800, SMT 600, dispatched
 * 2400 of which 1800 retired: retiring .30, bad .10, FE .20, BE .30,
 * SMT .10 (sum 1).
 */
static void test_formula_zen4(void **state)
{
	uint64_t v0[TD_ZEN_NR] = { 0 };
	uint64_t v1[TD_ZEN_NR] = { 1000, 1200, 1800, 600, 2400, 1800 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_zen(6, v0, &a);
	td_formula_zen(6, v1, &b);
	assert_int_equal(b.slots, 6000);
	decode_counts(&a, &b, &r);
	assert_float_equal(r.l1[TD_RETIRING], 0.30, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.10, 1e-12);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.20, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.30, 1e-12);
	assert_float_equal(r.smt_contention, 0.10, 1e-12);
	assert_float_equal(r.err, 0, 1e-12);
}

/* Zen 5 is the same formula at width 8: 500 cycles = 4000 slots. */
static void test_formula_zen5(void **state)
{
	uint64_t v0[TD_ZEN_NR] = { 7, 1, 2, 3, 4, 4 };
	uint64_t v1[TD_ZEN_NR] = { 507, 401, 1202, 3, 2404, 2004 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_zen(8, v0, &a);
	td_formula_zen(8, v1, &b);
	decode_counts(&a, &b, &r);
	assert_int_equal(r.slots, 4000);
	assert_float_equal(r.l1[TD_RETIRING], 0.50, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.10, 1e-12);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.10, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.30, 1e-12);
	assert_float_equal(r.smt_contention, 0, 1e-12);
}

/*
 * V4.5, 1000 clocks x 4 = 4000 slots: IDQ not delivered 800 (FE .20),
 * retire slots 1600 (.40), issued 1900 + 4 x 50 recovery = bad 500
 * (.125), backend the rest (.275).
 */
static void test_formula_v45(void **state)
{
	uint64_t v0[TD_V45_NR] = { 0 };
	uint64_t v1[TD_V45_NR] = { 1000, 800, 1900, 1600, 50 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_v45(4, v0, &a);
	td_formula_v45(4, v1, &b);
	decode_counts(&a, &b, &r);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.20, 1e-12);
	assert_float_equal(r.l1[TD_RETIRING], 0.40, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.125, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.275, 1e-12);
	assert_float_equal(r.err, 0, 1e-12);
}

/*
 * Atom V2, width 5, 200 clocks = 1000 slots; the four events sum to 990:
 * fractions of their sum, and err says 10/990 of disagreement.
 */
static void test_formula_atom_v2(void **state)
{
	uint64_t v0[TD_V2_NR] = { 0 };
	uint64_t v1[TD_V2_NR] = { 200, 99, 198, 297, 396 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_atom_v2(5, v0, &a);
	td_formula_atom_v2(5, v1, &b);
	decode_counts(&a, &b, &r);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.1, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.2, 1e-12);
	assert_float_equal(r.l1[TD_RETIRING], 0.3, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.4, 1e-12);
	assert_float_equal(r.err, 10.0 / 990.0, 1e-12);
}

/*
 * Counter budget: the derived term from the others.  Zen 4, 100 cycles =
 * 600 slots, FE 60 + BE 240 + dispatched 210: SMT 90.  Gracemont, 100
 * clocks = 500 slots, FE 50 + bad 100 + retiring 150: backend 200.
 */
static void test_formula_derive(void **state)
{
	struct td_gen_model m;
	uint64_t z[TD_ZEN_NR] = { 100, 60, 240, 0, 210, 180 };
	uint64_t a[TD_V2_NR] = { 100, 50, 100, 150, 0 };

	(void)state;
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x19, 0x11, &m), 0);
	assert_int_equal(m.derivable, TD_ZEN_SMT);
	td_formula_derive(&m, m.derivable, z);
	assert_int_equal(z[TD_ZEN_SMT], 90);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0xbe, &m), 0);
	assert_int_equal(m.derivable, TD_V2_BE);
	td_formula_derive(&m, m.derivable, a);
	assert_int_equal(a[TD_V2_BE], 200);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x5e, &m), 0);
	assert_int_equal(m.derivable, 0); /* V4.5: backend derived already */
}

/*
 * Which kernel aliases are another core's (arch/x86/events/intel/core.c
 * intel_pmu_init against perf's event lists): Alder Lake-N's bad
 * speculation (Tremont's umask 0x6), Meteor Lake's and Arrow Lake-U's
 * cpu_atom retiring (0xc2, UOPS_RETIRED.ALL on Crestmont).  Values
 * written from the event lists, not from the table.
 */
static void test_alias_audit(void **state)
{
	struct td_gen_model m;

	(void)state;
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0xbe, &m), 0);
	assert_int_equal(m.alias_foreign, 1u << TD_V2_BAD);
	assert_int_equal(m.config[TD_V2_BAD], 0x73);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x86, &m), 0);
	assert_int_equal(m.alias_foreign, 0);
	assert_int_equal(m.config[TD_V2_BAD], 0x673);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0xaf, &m), 0);
	assert_int_equal(m.alias_foreign, 0);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0xdd, &m), 0);
	assert_string_equal(m.name, "darkmont");
	assert_int_equal(m.alias_foreign, 0);
	for (unsigned model = 0xaa; model <= 0xb5; model++) {
		if (model != 0xaa && model != 0xac && model != 0xb5)
			continue;
		assert_int_equal(td_hybrid_atom_lookup(6, model, &m), 0);
		assert_string_equal(m.name, "crestmont");
		assert_int_equal(m.width, 6);
		assert_int_equal(m.alias_foreign, 1u << TD_V2_RET);
		assert_int_equal(m.config[TD_V2_RET], 0x72);
	}
	assert_int_equal(td_hybrid_atom_lookup(6, 0x97, &m), 0);
	assert_int_equal(m.alias_foreign, 0);
	assert_int_equal(td_hybrid_atom_lookup(6, 0xbd, &m), 0);
	assert_string_equal(m.name, "skymont");
	assert_int_equal(m.alias_foreign, 0);
}

/*
 * V4.5 SMT form: THREAD_ANY 2000 core clocks / 2 x 4 = 4000 slots, IDQ
 * not delivered 800 (.20), retire slots 1600 (.40), issued 1900 + 4 x
 * RECOVERY_CYCLES_ANY 100 / 2 = bad 500 (.125), backend .275.
 */
static void test_formula_v45_any(void **state)
{
	uint64_t v0[TD_V45_NR] = { 0 };
	uint64_t v1[TD_V45_NR] = { 2000, 800, 1900, 1600, 100 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_v45_any(4, v0, &a);
	td_formula_v45_any(4, v1, &b);
	assert_int_equal(b.slots, 4000);
	decode_counts(&a, &b, &r);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.20, 1e-12);
	assert_float_equal(r.l1[TD_RETIRING], 0.40, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.125, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.275, 1e-12);
}

/*
 * V1, width 2: 1000 clocks = 2000 slots; 150 not-delivered cycles = 300
 * slots (.15), 50 mispredict cycles = 100 (.05), 800 uops retired (.40),
 * backend the rest (.40).
 */
static void test_formula_v1(void **state)
{
	uint64_t v0[TD_V1_NR] = { 0 };
	uint64_t v1[TD_V1_NR] = { 1000, 150, 50, 800 };
	struct td_counts a, b;
	struct td_result r;
	struct td_gen_model m;

	(void)state;
	td_formula_v1(2, v0, &a);
	td_formula_v1(2, v1, &b);
	decode_counts(&a, &b, &r);
	assert_int_equal(r.slots, 2000);
	assert_float_equal(r.l1[TD_FE_BOUND], 0.15, 1e-12);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.05, 1e-12);
	assert_float_equal(r.l1[TD_RETIRING], 0.40, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.40, 1e-12);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x4d, &m), 0);
	assert_int_equal(m.formula, TD_F_V1);
	assert_int_equal(m.config[TD_V1_FE], 0x50ca);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x57, &m), 0);
	assert_int_equal(m.config[TD_V1_FE], 0x90ca); /* Knights Landing */
}

/*
 * Zen 4 level 2 over a region of 1000 cycles = 6000 slots: retiring 1800
 * ops of which 300 microcode (heavy .05 = .30 x 300/1800), FE cmask-6
 * cycles 100 of 1000 (fetch latency .10), bad = 2400 - 1800 = 600 split
 * by 30 mispredicts : 10 restarts (450, .075), backend 2400 x 30 load /
 * 60 not complete (1200, .20 of .40); SMT off.  The level-2 group's
 * counts may come from a third of the region (multiplexed): the ratios,
 * hence the results, are the same.  Raw configs from perf's amdzen4 JSON.
 */
static void check_zen_l2(const uint64_t *w)
{
	uint64_t v[TD_ZEN_NR] = { 1000, 1200, 2400, 0, 2400, 1800 };
	struct td_counts a = { 0 }, b;
	struct td_result r;
	struct td_delta d;

	td_formula_zen(6, v, &b);
	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)b.slots;
	for (int i = 0; i < TD_NR_CATS; i++)
		d.cat[i] = (int64_t)(b.cat[i] - a.cat[i]);
	td_formula_zen_l2(w, d.cat);
	td_decode(&d, true, &r);
	assert_float_equal(r.l2[TD_HEAVY_OPS], 0.05, 1e-12);
	assert_float_equal(r.l2[TD_LIGHT_OPS], 0.25, 1e-12);
	assert_float_equal(r.l2[TD_FETCH_LAT], 0.10, 1e-12);
	assert_float_equal(r.l2[TD_FETCH_BW], 0.10, 1e-12);
	assert_float_equal(r.l2[TD_BR_MISPREDICT], 0.075, 1e-12);
	assert_float_equal(r.l2[TD_MACHINE_CLEARS], 0.025, 1e-12);
	assert_float_equal(r.l2[TD_MEM_BOUND], 0.20, 1e-12);
	assert_float_equal(r.l2[TD_CORE_BOUND], 0.20, 1e-12);
}

static void test_formula_zen_l2(void **state)
{
	/* CYC, FE_CMASK, RET, UCODE | MISP, RESTART, NC, LOAD_NC */
	const uint64_t whole[TD_ZEN2_NR] = { 1000, 100, 1800, 300,
					     30, 10, 60, 30 };
	const uint64_t third[TD_ZEN2_NR] = { 300, 30, 600, 100, 9, 3, 20, 10 };
	struct td_gen_model m;

	(void)state;
	check_zen_l2(whole);
	check_zen_l2(third);
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x19, 0x11, &m), 0);
	assert_int_equal(m.nr2, TD_ZEN2_NR);
	assert_int_equal(m.config2[TD_ZEN2_FE_CMASK], 0x1060001a0ull);
	assert_int_equal(m.config2[TD_ZEN2_LOAD_NC], 0xa2d6);
	assert_int_equal(m.config2[TD_ZEN2_UCODE], 0x1000000c2ull);
	assert_int_equal(m.config2[TD_ZEN2_RESTART], 0x96);
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x1a, 0x02, &m), 0);
	assert_int_equal(m.config2[TD_ZEN2_FE_CMASK], 0x1080001a0ull);
	assert_int_equal(m.config2[TD_ZEN2_RESTART], 0x19f);
}

/* Cumulative derived categories may dip below 0: deltas stay right. */
static void test_formula_modular(void **state)
{
	uint64_t v0[TD_V45_NR] = { 10, 0, 0, 100, 0 }; /* bad = -100 so far */
	uint64_t v1[TD_V45_NR] = { 1010, 800, 1900, 1700, 50 };
	struct td_counts a, b;
	struct td_result r;

	(void)state;
	td_formula_v45(4, v0, &a);
	td_formula_v45(4, v1, &b);
	decode_counts(&a, &b, &r);
	assert_float_equal(r.l1[TD_BAD_SPEC], 0.125, 1e-12);
	assert_float_equal(r.l1[TD_BE_BOUND], 0.275, 1e-12);
}

/* offset + the register sign-extended at pmc_width. */
static void test_sign_extension(void **state)
{
	uint64_t left = (UINT64_C(1) << 47) - 1;
	uint64_t prev = (uint64_t)0 - left;
	int64_t offset = (int64_t)(1000 - prev); /* count 1000 at start */

	(void)state;
	/* At start: the register holds -left in 48 bits. */
	assert_int_equal(td_user_count(offset, prev & ((UINT64_C(1) << 48) - 1),
				       48), 1000);
	/* Wrapped past 2^48, PMI not yet handled: left + 5 events on. */
	assert_int_equal(td_user_count(offset, 5, 48), 1000 + left + 5);
	/* The top bit of a 48-bit value must extend, not be logical. */
	assert_int_equal(td_user_count(0, (UINT64_C(1) << 48) - 1, 48),
			 UINT64_MAX);
}

/* ---- identification ------------------------------------------------------ */

static void test_cpu_lookup(void **state)
{
	struct td_gen_model m;
	char vendor[32];
	unsigned f, mo;

	(void)state;
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x19, 0x11, &m), 0);
	assert_string_equal(m.name, "zen4");
	assert_int_equal(m.width, 6);
	assert_int_equal(m.config[TD_ZEN_FE], 0x1000001a0ull);
	assert_int_equal(m.config[TD_ZEN_BE], 0x100001ea0ull);
	assert_int_equal(m.config[TD_ZEN_SMT], 0x1000060a0ull);
	assert_int_equal(m.config[TD_ZEN_DISP], 0x7aa);
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x19, 0x21, &m),
			 -ENOSYS); /* Zen 3 */
	assert_int_equal(td_cpu_lookup("AuthenticAMD", 0x1a, 0x02, &m), 0);
	assert_int_equal(m.width, 8);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x55, &m), 0);
	assert_string_equal(m.name, "skylake");
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x3c, &m), 0);
	assert_int_equal(m.config[TD_V45_RECOVERY], 0x100030d);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0xbe, &m), 0);
	assert_int_equal(m.width, 5);
	assert_int_equal(td_cpu_lookup("GenuineIntel", 6, 0x0f, &m), -ENOSYS);
	assert_int_equal(td_cpu_lookup("HygonGenuine", 0x18, 0, &m), -ENOSYS);
	assert_int_equal(td_cpuinfo_parse("processor\t: 0\nvendor_id\t: "
					  "AuthenticAMD\ncpu family\t: 26\n"
					  "model\t\t: 2\nmodel name\t: x\n",
					  vendor, sizeof(vendor), &f, &mo), 0);
	assert_string_equal(vendor, "AuthenticAMD");
	assert_int_equal(f, 26);
	assert_int_equal(mo, 2);
	assert_int_equal(td_cpuinfo_parse("garbage", vendor, sizeof(vendor),
					  &f, &mo), -ENOSYS);
}

/* ---- end to end on the emulator ----------------------------------------- */

/* Exact counts: the only error is the emulator's integer rounding. */
#define EXACT 1e-6

static void region(struct td *td, uint64_t slots, const struct emu_mix *mix,
		   struct td_result *r, struct emu_truth *t0,
		   struct emu_truth *t1)
{
	struct td_region reg = { { 0 } };

	emu_truth(t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(slots, mix);
	assert_int_equal(td_region_end(td, &reg, r), 0);
	emu_truth(t1);
}

static void check_region(struct td *td, uint64_t slots,
			 const struct emu_mix *mix, bool smt)
{
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;
	double sum = 0;

	region(td, slots, mix, &r, &t0, &t1);
	t = truth_between(&t0, &t1);
	if (smt) /* truth's cat[8] is SMT contention on AMD profiles */
		assert_float_equal(r.smt_contention,
				   (double)(t1.cat[8] - t0.cat[8]) /
					   (double)(t1.slots - t0.slots),
				   EXACT);
	else
		assert_float_equal(r.smt_contention, 0, 0);
	for (int i = 0; i < TD_L1_COUNT; i++)
		sum += r.l1[i];
	assert_float_equal(sum + r.smt_contention, 1, 1e-9);
	assert_int_equal(r.slots, slots);
	assert_false(r.flags & TD_RESULT_L2);
	assert_within(&r, &t, EXACT);
}

/* read(2)s td_open made: its counter-budget check reads the group once. */
static unsigned long open_reads;

static struct td *open_profile(enum emu_profile p)
{
	struct td *td;
	struct td_info info = { .size = sizeof(info) };
	struct emu_stats s;

	emu_setup(p);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_stats(&s);
	open_reads = s.reads;
	assert_int_equal(open_reads, 1);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	assert_int_equal(info.levels, 1);
	assert_string_equal(info.pmu_name, "cpu");
	assert_string_equal(info.uarch, p == EMU_ZEN4   ? "zen4"
					: p == EMU_ZEN5 ? "zen5"
					: p == EMU_SKL  ? "skylake"
					: p == EMU_HSW  ? "haswell"
					: p == EMU_TNT  ? "tremont"
					: p == EMU_CMT  ? "crestmont"
					: p == EMU_SKT  ? "darkmont"
							: "gracemont");
	return td;
}

static void e2e(enum emu_profile p, bool smt)
{
	struct emu_mix m1 = smt ? emu_mix_amd(0.30, 0.05, 0.10, 0.15)
				: emu_mix_l1(0.30, 0.05, 0.10, 0.55);
	struct emu_mix m2 = smt ? emu_mix_amd(0.70, 0.02, 0.08, 0.0)
				: emu_mix_l1(0.70, 0.02, 0.08, 0.20);
	struct td *td = open_profile(p);
	struct emu_stats s;

	emu_run(480000, &m2); /* before: not in the region */
	check_region(td, 2400000, &m1, smt);
	check_region(td, 240000, &m2, smt);
	emu_stats(&s);
	assert_int_equal(s.reads, open_reads); /* RDPMC all the way */
	assert_int_equal(s.resets, 0); /* never needed */
	td_close(td);
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
}

/*
 * The mix an unmodified program's work gets under LD_PRELOAD (one per
 * millisecond of its CPU time) is a mix: level-1 fractions in [0, 1]
 * summing to 1, each level-2 one within its parent; and on Zen 4 a
 * millisecond of each is a region the library measures, unflagged.
 */
static void test_synthetic_mix(void **state)
{
	struct td *td = open_profile(EMU_ZEN4);

	(void)state;
	for (uint64_t ms = 0; ms < 100000; ms++) {
		struct emu_mix m = emu_preload_synthetic_mix(ms * 1000000);
		double sum = 0;

		for (int i = 0; i < 4; i++) {
			assert_true(m.f[i] >= 0 && m.f[i] <= 1);
			assert_true(m.f[4 + i] >= 0 && m.f[4 + i] <= m.f[i]);
			sum += m.f[i];
		}
		assert_float_equal(sum, 1, 1e-9);
	}
	for (uint64_t ms = 0; ms < 200; ms++) {
		struct emu_mix m = emu_preload_synthetic_mix(ms * 1000000);
		struct emu_truth t0, t1;
		struct truth_frac t;
		struct td_result r;

		region(td, 4000000, &m, &r, &t0, &t1);
		t = truth_between(&t0, &t1);
		assert_false(r.flags & TD_RESULT_UNRELIABLE);
		assert_within(&r, &t, EXACT);
	}
	td_close(td);
}

static void test_e2e_zen4(void **state)
{
	(void)state;
	e2e(EMU_ZEN4, true);
}

static void test_e2e_zen5(void **state)
{
	(void)state;
	e2e(EMU_ZEN5, true);
}

static void test_e2e_skylake(void **state)
{
	(void)state;
	e2e(EMU_SKL, false);
}

/* Haswell: V4.5 with the pre-Skylake recovery-cycles encoding. */
static void test_e2e_haswell(void **state)
{
	(void)state;
	e2e(EMU_HSW, false);
}

/*
 * Standalone Atom V2 cores with the kernel's own aliases: widths
 * Tremont 4, Crestmont 6, Darkmont 8.
 */
static void test_e2e_tremont(void **state)
{
	(void)state;
	e2e(EMU_TNT, false);
}

static void test_e2e_crestmont(void **state)
{
	(void)state;
	e2e(EMU_CMT, false);
}

static void test_e2e_skymont(void **state)
{
	(void)state;
	e2e(EMU_SKT, false);
}

/*
 * Alder Lake-N: the kernel publishes Tremont's topdown-bad-spec (umask
 * 0x6, no NUKE slots on Gracemont); the table's umask 0 must be used, or
 * every category shifts.
 */
static void test_e2e_gracemont(void **state)
{
	(void)state;
	e2e(EMU_GRT, false);
}

/* Descheduled at the end: index 0, read(2) (exact), region flagged. */
static void test_index0_read_fallback(void **state)
{
	struct td *td = open_profile(EMU_ZEN4);
	struct emu_mix m = emu_mix_amd(0.4, 0.1, 0.2, 0.1);
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;
	struct emu_stats s;

	(void)state;
	/* Descheduled across the whole region: read(2) both ends, exact. */
	emu_deschedule();
	assert_int_equal(td_region_begin(td, &reg), 0);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_stats(&s);
	assert_int_equal(s.reads - open_reads, 2);
	assert_false(r.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(r.slots, 0);
	/* Scheduled at begin, out at end: counts exact, time says so. */
	emu_reschedule();
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(600000, &m);
	emu_truth(&t1);
	emu_deschedule();
	emu_run(6000, &m); /* not counted */
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_true(r.flags & TD_RESULT_UNRELIABLE);
	/* Back on: read(2) did not reset, RDPMC readings continue. */
	emu_reschedule();
	check_region(td, 60000, &m, true);
	emu_stats(&s);
	assert_int_equal(s.resets, 0);
	t = truth_between(&t0, &t1);
	(void)t;
	td_close(td);
}

/*
 * The plausibility guard (counters.c) against a kernel that would leave a
 * user page stale at schedule-out (emu_stale_pages; x86 does not: it
 * writes index 0 there).  Then a switched-out group's page still names
 * its counters and RDPMC returns `foreign`, another context's value.
 * Every region must come out exact (repaired by read(2)) or flagged,
 * never silently wrong; with stale false (x86's x86_pmu_del behaviour)
 * the results must be the same.  Truth: the emulator's counts.
 */
static void stale_page_regions(enum emu_profile p, bool stale,
			       uint64_t foreign)
{
	struct td *td = open_profile(p);
	struct emu_mix m = p == EMU_ZEN4 ? emu_mix_amd(0.4, 0.1, 0.2, 0.1)
					 : emu_mix_l1(0.4, 0.1, 0.2, 0.3);
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct emu_stats s0, s1;
	struct truth_frac t;
	struct td_result r;

	emu_stale_pages(stale, foreign);
	/* Switched out just before the end, no work since: all counted. */
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(600000, &m);
	emu_truth(&t1);
	emu_deschedule();
	emu_stats(&s0);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_stats(&s1);
	assert_int_equal(s1.reads - s0.reads, 1); /* read(2), exact */
	t = truth_between(&t0, &t1);
	assert_int_equal(r.slots, t1.slots - t0.slots);
	assert_within(&r, &t, EXACT);
	/* Begun while out, then back in: the same counts, exact. */
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_reschedule();
	emu_truth(&t0);
	emu_run(360000, &m);
	emu_truth(&t1);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	t = truth_between(&t0, &t1);
	assert_int_equal(r.slots, t1.slots - t0.slots);
	assert_within(&r, &t, EXACT);
	/* Work while switched out is not counted: flagged. */
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(300000, &m);
	emu_deschedule();
	emu_run(6000, &m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	assert_true(r.flags & TD_RESULT_UNRELIABLE);
	/* Back in: the guard is silent (RDPMC only), regions exact. */
	emu_reschedule();
	emu_stats(&s0);
	check_region(td, 240000, &m, p == EMU_ZEN4);
	emu_stats(&s1);
	assert_int_equal(s1.reads, s0.reads);
	td_close(td);
}

/* A counter another context left at 0x5a5a5a5a5a: a jump of ~2^47. */
static void test_stale_page_jump(void **state)
{
	(void)state;
	stale_page_regions(EMU_ZEN4, true, 0x5a5a5a5a5aull);
	emu_teardown();
	stale_page_regions(EMU_GRT, true, 0x5a5a5a5a5aull);
}

/*
 * Another context's counting event just started at -2^47 (the kernel's
 * -max_period): offset + sign-extended value = our count at the last
 * page update - 1, behind the last reading.
 */
static void test_stale_page_backwards(void **state)
{
	(void)state;
	stale_page_regions(EMU_ZEN4, true, UINT64_C(1) << 47);
	emu_teardown();
	stale_page_regions(EMU_SKL, true, UINT64_C(1) << 47);
}

/* x86's kernel (x86_pmu_del): index 0, read(2); the same results. */
static void test_stale_page_knob_off(void **state)
{
	(void)state;
	stale_page_regions(EMU_ZEN4, false, 0);
	emu_teardown();
	stale_page_regions(EMU_GRT, false, 0);
}

/* A context switch moves events to other counters: new index, offset. */
static void test_context_switch_moves_counters(void **state)
{
	struct td *td = open_profile(EMU_SKL);
	struct emu_mix m = emu_mix_l1(0.5, 0.1, 0.2, 0.2);
	struct td_region reg = { { 0 } };
	struct emu_truth t0, t1;
	struct truth_frac t;
	struct td_result r;

	(void)state;
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &reg), 0);
	emu_run(400000, &m);
	emu_context_switch(123456);
	emu_run(400000, &m);
	emu_context_switch(7);
	emu_run(400000, &m);
	assert_int_equal(td_region_end(td, &reg, &r), 0);
	emu_truth(&t1);
	t = truth_between(&t0, &t1);
	assert_within(&r, &t, EXACT);
	td_close(td);
}

/*
 * The 2^48 wrap: with a short period the registers wrap inside the
 * region; a reading between the wrap and its PMI sees a small register
 * that only sign extension with the old offset reads right, and the PMI
 * then restarts the period with a new offset.
 */
static void test_wrap(void **state)
{
	struct emu_mix m = emu_mix_amd(0.3, 0.1, 0.2, 0.1);
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct emu_truth t0, t1, t2;
	struct truth_frac t;
	struct td_result r;
	struct td *td;

	(void)state;
	emu_setup(EMU_ZEN4);
	emu_gp_set_period(100000); /* before td_open starts the counters */
	assert_int_equal(td_open(&td, NULL), 0);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(900000, &m); /* every counter wrapped; PMI pending */
	emu_truth(&t1);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_run(1200000, &m); /* PMIs first, then wraps again */
	assert_int_equal(td_region_end(td, &inner, &r), 0);
	emu_truth(&t2);
	t = truth_between(&t1, &t2);
	assert_within(&r, &t, EXACT);
	assert_int_equal(td_region_end(td, &outer, &r), 0);
	t = truth_between(&t0, &t2);
	assert_within(&r, &t, EXACT);
	td_close(td);
}

/* Records and named regions carry SMT contention through unchanged. */
static void test_records_and_named(void **state)
{
	static struct td_named n = TD_NAMED_INIT("amd");
	struct td *td = open_profile(EMU_ZEN5);
	struct emu_mix m = emu_mix_amd(0.3, 0.1, 0.2, 0.2);
	struct td_record rec[4];
	struct td_result r, d;
	struct td_totals tot;
	size_t count;

	(void)state;
	memset(&n.opaque, 0, sizeof(n.opaque));
	assert_int_equal(td_records_attach(td, rec, 4), 0);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(800000, &m);
	assert_int_equal(td_named_end(td, &n, &r), 0);
	assert_int_equal(td_records_detach(td, &count, NULL), 0);
	assert_int_equal(count, 1);
	assert_int_equal(rec[0].qerr, 0);
	assert_int_equal(td_record_decode(&rec[0], &d), 0);
	assert_float_equal(d.smt_contention, r.smt_contention, 0);
	assert_float_equal(d.smt_contention, 0.2, EXACT);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_float_equal(tot.total.smt_contention, 0.2, EXACT);
	assert_float_equal(tot.max[TD_BE_BOUND], 0.2, EXACT);
	td_close(td);
}

/* Reports carry SMT contention: its CSV column, its table line. */
static void test_report_smt(void **state)
{
	static struct td_named n = TD_NAMED_INIT("amd");
	struct td *td = open_profile(EMU_ZEN4);
	struct emu_mix m = emu_mix_amd(0.3, 0.1, 0.2, 0.25);
	char *text = NULL, *last;
	size_t len = 0;
	FILE *f;

	(void)state;
	memset(&n.opaque, 0, sizeof(n.opaque));
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(1200000, &m);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_CSV), 0);
	fclose(f);
	last = strstr(text, "\nregion,");
	assert_non_null(last);
	assert_non_null(strstr(last, ",0.250000,slots,1,0,,,,,,emulated:test\n"));
	assert_non_null(strstr(text, ",smt_contention,basis,max_depth,open,"
				     "l1_bound,l2_bound,l3_bound,dram_bound,"
				     "store_bound,pmu\n"));
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(td_report_named(f, td, TD_FORMAT_TABLE), 0);
	fclose(f);
	assert_non_null(strstr(text, "smt_contention            25.0%"));
	free(text);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formula_zen4),
		cmocka_unit_test(test_formula_zen5),
		cmocka_unit_test(test_formula_v45),
		cmocka_unit_test(test_formula_atom_v2),
		cmocka_unit_test(test_formula_derive),
		cmocka_unit_test(test_alias_audit),
		cmocka_unit_test(test_formula_v45_any),
		cmocka_unit_test(test_formula_v1),
		cmocka_unit_test(test_formula_zen_l2),
		cmocka_unit_test(test_formula_modular),
		cmocka_unit_test(test_sign_extension),
		cmocka_unit_test(test_cpu_lookup),
		cmocka_unit_test_teardown(test_e2e_zen4, teardown_emu),
		cmocka_unit_test_teardown(test_synthetic_mix, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_zen5, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_skylake, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_gracemont, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_haswell, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_tremont, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_crestmont, teardown_emu),
		cmocka_unit_test_teardown(test_e2e_skymont, teardown_emu),
		cmocka_unit_test_teardown(test_index0_read_fallback,
					  teardown_emu),
		cmocka_unit_test_teardown(test_stale_page_jump, teardown_emu),
		cmocka_unit_test_teardown(test_stale_page_backwards,
					  teardown_emu),
		cmocka_unit_test_teardown(test_stale_page_knob_off,
					  teardown_emu),
		cmocka_unit_test_teardown(test_context_switch_moves_counters,
					  teardown_emu),
		cmocka_unit_test_teardown(test_wrap, teardown_emu),
		cmocka_unit_test_teardown(test_records_and_named, teardown_emu),
		cmocka_unit_test_teardown(test_report_smt, teardown_emu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
