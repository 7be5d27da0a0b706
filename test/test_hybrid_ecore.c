/* SPDX-License-Identifier: MIT */
/*
 * Hybrid (Alder Lake) with the E-core group: cpu_core's PERF_METRICS
 * group on P-cores (CPUs 0-7), an Atom V2 group of ordinary counters on
 * cpu_atom for the E-cores (8-15, Gracemont, width 5).  A thread migrated
 * between core types mid-region gets the slot-weighted combination of
 * both; level 2 for every region all of whose slots came from P-cores
 * (per region, not per handle); no RDPMC ever faults.  Expected fractions: the workload's true composition.
 */
#include <errno.h>
#include <string.h>

#include "helpers.h"

/* P-core quantisation: a few readings of up to 4e7 slots each over 8e7. */
#define BOUND 0.02

static int teardown(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

static struct td *open_adl(enum td_path want)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td = NULL;

	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, want);
	assert_true(info.flags & TD_INFO_HYBRID_ECORE);
	assert_int_equal(info.levels, 2);
	assert_string_equal(info.uarch, "alderlake_hybrid+gracemont");
	return td;
}

static unsigned levels(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	return info.levels;
}

/* P (2e7 chain) -> E (3e7 stream) -> P (2e7 dram), begun and ended on P. */
static void migrate_mid_region(struct td *td, bool end_on_ecore)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(9);
	emu_run(30000000, &MIX_STREAM);
	if (!end_on_ecore) {
		emu_migrate(1);
		emu_run(20000000, &MIX_DRAM);
	}
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_false(res.flags & TD_RESULT_L2); /* E-core slots in it */
	assert_within(&res, &t, BOUND);
	/* not P alone (what a P-only handle would report): stream's share */
	assert_true(res.l1[TD_RETIRING] > 0.40);
}

/* A P-only region first: level 2, exact within PERF_METRICS' bound. */
static void pcore_region(struct td *td, bool l2)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(40000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(!!(res.flags & TD_RESULT_L2), l2);
	/*
	 * Without resets the raw SLOTS reach 1.2e8 by the last call: err up
	 * to (8e7 + 1.2e8) / (255 x 4e7) = 0.0198, doubled with level 2.
	 */
	assert_within(&res, &t, l2 ? 2.5 * BOUND : BOUND);
}

static void test_migrate_mid_region_rdpmc(void **state)
{
	struct emu_stats s0, s1;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	pcore_region(td, true);
	migrate_mid_region(td, false);
	assert_int_equal(levels(td), 2); /* the handle still measures it */
	emu_stats(&s0);
	pcore_region(td, true); /* P-only again: level 2 again */
	emu_stats(&s1);
	/* the E group's final counts are kept: no read(2) on P-cores */
	assert_int_equal(s1.reads, s0.reads);
	td_close(td);
}

/* read(2) path (no rseq area): the end may be on an E-core too. */
static void test_migrate_mid_region_read(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_rseq_set_cpu_raw((uint32_t)-2); /* registration failed */
	td = open_adl(TD_PATH_READ);
	pcore_region(td, true);
	migrate_mid_region(td, false);
	emu_migrate(0);
	migrate_mid_region(td, true);
	td_close(td);
}

/*
 * Migrated to a P-core just before the E group's RDPMC (taken because
 * the end's P half came from read(2) on the E-core): the RDPMC of a
 * general-purpose counter does not fault there, and the schedule-out
 * rewrote the E page (x86_pmu_del), so the seqlock retries and falls
 * back to read(2).  With stale pages (emu_stale_pages: a kernel that
 * would not rewrite it) the RDPMC reads another context's counter and
 * counters_read.c's plausibility guard re-reads with read(2).  Either way the
 * region ends exact; the next region, around an E stint, too.
 */
static void migration_at_ecore_rdpmc(bool stale)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;
	struct emu_stats s0, s1;
	struct td *td;

	emu_setup(EMU_ADL);
	emu_stale_pages(stale, 0x5a5a5a5a5aull);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM); /* saved_slots != 0: restored exactly */
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(12);
	emu_run(30000000, &MIX_DRAM);
	emu_truth(&b);
	emu_stats(&s0);
	emu_migrate_at_rdpmc(4);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	emu_stats(&s1);
	assert_true(s1.rdpmcs > s0.rdpmcs); /* the E RDPMC did run */
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_within(&res, &t, BOUND);
	migrate_mid_region(td, false);
	td_close(td);
}

static void test_migration_at_ecore_rdpmc(void **state)
{
	(void)state;
	migration_at_ecore_rdpmc(false);
}

static void test_migration_at_ecore_rdpmc_stale_page(void **state)
{
	(void)state;
	migration_at_ecore_rdpmc(true);
}

/*
 * Regions that begin or end on an E-core (RDPMC path): the P half of
 * such a reading is cpu_core's counts the kernel saved at schedule-out,
 * by read(2), which resets nothing on the inactive group.  Exact within
 * err, without level 2 (E-core slots in them).
 */
static void test_begin_on_ecore(void **state)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct emu_stats s0, s1;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	pcore_region(td, true); /* the E group's first read(2) was here */
	emu_migrate(9);
	emu_truth(&a);
	emu_stats(&s0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_stats(&s1);
	assert_int_equal(s1.reads - s0.reads, 1); /* cpu_core's read(2) */
	emu_run(30000000, &MIX_STREAM);
	emu_migrate(1);
	emu_run(20000000, &MIX_DRAM);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_false(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, BOUND);
	td_close(td);
}

static void test_end_on_ecore(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	migrate_mid_region(td, true);
	td_close(td);
}

/*
 * Begun and ended on E-cores with a P stint between; then a region all
 * on the E-cores; then, on a P-core, a P-only region with level 2.
 */
static void test_both_on_ecore(void **state)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	emu_migrate(8);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, &MIX_STREAM);
	emu_migrate(2);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(11);
	emu_run(10000000, &MIX_DRAM);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_false(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, BOUND);
	/* All on the E-cores: E counts exact, err from the P readings. */
	t = measure_region(td, &r, 20000000, &MIX_BRANCHY, &res);
	assert_false(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, BOUND);
	emu_migrate(0);
	pcore_region(td, true);
	td_close(td);
}

/*
 * The thread migrates back to a P-core while the P read(2) of an E-core
 * reading is in the kernel: the group is active again, and the read
 * zeroes SLOTS and PERF_METRICS (a read of an active TopDown group
 * resets).  The page's lock changed around the read: the reading is
 * void, and every region it ends or lies in is flagged (without that,
 * the enclosing region below would miss the slots the reset took, with
 * no sign of it: its end sees more SLOTS than its begin).  Readings on
 * P-cores carry on exact; base and the kernel's counts pair no more, so
 * until the library's next reset an E-core end is flagged too.
 */
static void test_read_races_schedule_in(void **state)
{
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_migrate(12);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(10000000, &MIX_DRAM);
	emu_migrate_at_next_read(3);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	emu_run(20000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	t = truth_between(&a, &b);
	if (!(res.flags & TD_RESULT_UNRELIABLE)) { /* never silently wrong */
		assert_int_equal(res.slots, b.slots - a.slots);
		assert_within(&res, &t, BOUND);
	}
	pcore_region(td, true);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(10000000, &MIX_CHAIN);
	emu_migrate(9);
	emu_run(10000000, &MIX_STREAM);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	td_close(td);
}

/* The whole region on an E-core between P-core readings: E only. */
static void test_ecore_only_between_pcore_readings(void **state)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM); /* saved_slots != 0: restored exactly */
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_migrate(8);
	emu_truth(&a);
	emu_run(25000000, &MIX_BRANCHY);
	emu_truth(&b);
	emu_migrate(0);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	/*
	 * E counts exact; err still carries the P group's 8-bit scale: its
	 * two readings of 1e6 slots and two page updates (out, in) of it.
	 */
	assert_within(&res, &t, 4.0 * 1000000 / (255.0 * 25000000) + 1e-9);
	td_close(td);
}

/*
 * Level 2 per region: the handle's first region runs on an E-core (level
 * 1, E counts alone), a later P-only region gets level 2, and a region
 * enclosing both does not.
 */
static void test_level2_per_region(void **state)
{
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct emu_truth a, b, c;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM); /* saved_slots != 0: restored exactly */
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &outer), 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_migrate(8);
	emu_run(25000000, &MIX_BRANCHY);
	emu_truth(&b);
	emu_migrate(0);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_false(res.flags & TD_RESULT_L2);
	assert_int_equal(res.slots, b.slots - a.slots);
	/* E counts exact; err: the P group's 8-bit scale of 1e6 slots */
	assert_within(&res, &t, 4.0 * 1000000 / (255.0 * 25000000) + 1e-9);
	pcore_region(td, true);
	emu_truth(&c);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	t = truth_between(&a, &c);
	assert_false(res.flags & TD_RESULT_L2);
	assert_int_equal(res.slots, c.slots - a.slots);
	assert_within(&res, &t, BOUND);
	assert_int_equal(levels(td), 2);
	td_close(td);
}

/*
 * A named region called on P-cores only (level 2), then across both core
 * types: its totals are level 1 (not every call measured level 2), the
 * slot-weighted level 1 of all its slots, no SMT contention read from
 * the level-2 sums.
 */
static void test_named_totals_mixed(void **state)
{
	static struct td_named n = TD_NAMED_INIT("mixed");
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_totals tot;
	struct td *td;

	(void)state;
	memset(&n.opaque, 0, sizeof(n.opaque));
	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(40000000, &MIX_BRANCHY);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_true(tot.total.flags & TD_RESULT_L2);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(10);
	emu_run(30000000, &MIX_STREAM);
	emu_migrate(2);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	t = truth_between(&a, &b);
	assert_int_equal(tot.calls, 2);
	assert_int_equal(tot.unreliable, 0);
	assert_false(tot.total.flags & TD_RESULT_L2);
	assert_float_equal(tot.total.smt_contention, 0, 0);
	assert_within(&tot.total, &t, BOUND);
	td_close(td);
}

/*
 * The library's reset at an inner begin finds cpu_core's group inactive
 * because the thread is away on an E-core (nothing zeroed; the reset is
 * undone).  The E-cores' slots of that stint belong to the enclosing
 * region and must stay in it.
 */
static void test_reset_undo_keeps_ecore_stint(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result ro, ri;
	struct emu_truth a, b;
	struct truth_frac t;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	o.reset_policy = TD_RESET_ALWAYS;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(30000000, &MIX_CHAIN);
	emu_ecore_stint_at_next_reset(30000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &inner), 0);
	emu_run(20000000, &MIX_DRAM);
	assert_int_equal(td_region_end(td, &inner, &ri), 0);
	assert_int_equal(td_region_end(td, &outer, &ro), 0);
	emu_truth(&b);
	t = truth_between(&a, &b);
	assert_int_equal(ro.slots, 80000000);
	assert_within(&ro, &t, BOUND);
	td_close(td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_migrate_mid_region_rdpmc,
					  teardown),
		cmocka_unit_test_teardown(test_migrate_mid_region_read,
					  teardown),
		cmocka_unit_test_teardown(test_migration_at_ecore_rdpmc,
					  teardown),
		cmocka_unit_test_teardown(
			test_migration_at_ecore_rdpmc_stale_page, teardown),
		cmocka_unit_test_teardown(test_begin_on_ecore, teardown),
		cmocka_unit_test_teardown(test_end_on_ecore, teardown),
		cmocka_unit_test_teardown(test_both_on_ecore, teardown),
		cmocka_unit_test_teardown(test_read_races_schedule_in,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_only_between_pcore_readings,
					  teardown),
		cmocka_unit_test_teardown(test_level2_per_region, teardown),
		cmocka_unit_test_teardown(test_named_totals_mixed, teardown),
		cmocka_unit_test_teardown(test_reset_undo_keeps_ecore_stint,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
