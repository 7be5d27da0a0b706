/* SPDX-License-Identifier: MIT */
/*
 * Hybrid (Alder Lake) with the E-core group: cpu_core's PERF_METRICS
 * group on P-cores (CPUs 0-7), an Atom V2 group of ordinary counters on
 * cpu_atom for the E-cores (8-15, Gracemont, width 5).  A thread migrated
 * between core types mid-region gets the slot-weighted combination of
 * both; level 2 for every region whose E-core slots are at most 1/255
 * of its slots, such as the library's own reads after a migration (per
 * region, not per handle); no RDPMC ever faults.  Expected fractions: the workload's true composition.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
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

/*
 * An Alder Lake handle on the RDPMC path, on a P-core, that has counted
 * 1e6 slots: the next schedule-out saves a non-zero SLOTS, which the
 * schedule-in then restores exactly.
 */
static struct td *open_adl_counting(void)
{
	struct td *td;

	emu_setup(EMU_ADL);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/*
 * Ends r, begun at truth a, right after the truth of its work: its
 * slots are exactly those the thread ran.  Returns the truth over it.
 */
static struct truth_frac end_exact(struct td *td, struct td_region *r,
				   const struct emu_truth *a,
				   struct td_result *res)
{
	struct emu_truth b;

	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, res), 0);
	assert_int_equal(res->slots, b.slots - a->slots);
	return truth_between(a, &b);
}

/*
 * Ends r, begun at truth a, moved to cpu right before the end's first
 * RDPMC, which then runs there (its guard's section aborted and
 * retried): the emulator served some.  Returns the truth over r's work.
 */
static struct truth_frac end_moved_at_rdpmc(struct td *td,
					    struct td_region *r, int cpu,
					    const struct emu_truth *a,
					    struct td_result *res)
{
	struct emu_stats s0, s1;
	struct emu_truth b;

	emu_truth(&b);
	emu_stats(&s0);
	emu_migrate_at_rdpmc(cpu);
	assert_int_equal(td_region_end(td, r, res), 0);
	emu_stats(&s1);
	assert_true(s1.rdpmcs > s0.rdpmcs);
	return truth_between(a, &b);
}

/* P (2e7 chain) -> E (3e7 stream) -> P (2e7 dram), or ends on E. */
static void run_p_e_p(bool end_on_ecore)
{
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(9);
	emu_run(30000000, &MIX_STREAM);
	if (!end_on_ecore) {
		emu_migrate(1);
		emu_run(20000000, &MIX_DRAM);
	}
}

/* A region over run_p_e_p, begun on P. */
static void migrate_mid_region(struct td *td, bool end_on_ecore)
{
	struct td_region r = { { 0 } };
	struct emu_truth a;
	struct truth_frac t;
	struct td_result res;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	run_p_e_p(end_on_ecore);
	t = end_exact(td, &r, &a, &res);
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
	td = open_adl_counting();
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
	t = end_moved_at_rdpmc(td, &r, 4, &a, &res); /* the E RDPMC ran */
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
	struct emu_truth a;
	struct emu_stats s0, s1;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	td = open_adl_counting();
	pcore_region(td, true); /* the E group's first read(2) was here */
	emu_migrate(9);
	emu_truth(&a);
	emu_stats(&s0);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_stats(&s1);
	/* cpu_core's read(2), and INT_MISC.UOP_DROPPING's (pm_uop.c:
	 * switched out with it) */
	assert_int_equal(s1.reads - s0.reads, 2);
	emu_run(30000000, &MIX_STREAM);
	emu_migrate(1);
	emu_run(20000000, &MIX_DRAM);
	t = end_exact(td, &r, &a, &res);
	assert_false(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, BOUND);
	td_close(td);
}

static void test_end_on_ecore(void **state)
{
	struct td *td;

	(void)state;
	td = open_adl_counting();
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
	struct emu_truth a;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	td = open_adl_counting();
	emu_migrate(8);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(20000000, &MIX_STREAM);
	emu_migrate(2);
	emu_run(20000000, &MIX_CHAIN);
	emu_migrate(11);
	emu_run(10000000, &MIX_DRAM);
	t = end_exact(td, &r, &a, &res);
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
	td = open_adl_counting();
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
	td = open_adl_counting();
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
	td = open_adl_counting();
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

/* A Lunar Lake handle (emu_hybrid_skymont), on a P-core. */
static struct td *open_skymont(void)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td = NULL;

	emu_setup(EMU_ADL);
	emu_hybrid_skymont();
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_string_equal(info.uarch, "lunarlake_hybrid+skymont");
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/*
 * The E-cores' frontend and backend children against the truth, within
 * the result's own err: retiring's and bad speculation's 0.
 */
static void assert_fe_be(const struct td_result *res,
			 const struct truth_frac *t)
{
	static const int measured[] = { TD_FETCH_LAT, TD_FETCH_BW,
					TD_MEM_BOUND, TD_CORE_BOUND };
	static const int zero[] = { TD_HEAVY_OPS, TD_LIGHT_OPS,
				    TD_BR_MISPREDICT, TD_MACHINE_CLEARS };
	const unsigned want = TD_RESULT_L2 | TD_RESULT_L2_FE_BE;

	assert_int_equal(res->flags & (want | TD_RESULT_UNRELIABLE), want);
	assert_true(res->err <= BOUND);
	for (int k = 0; k < TD_L1_COUNT; k++)
		assert_float_equal(res->l1[k], t->l1[k], res->err + 1e-9);
	for (int k = 0; k < 4; k++) {
		assert_float_equal(res->l2[measured[k]], t->l2[measured[k]],
				   res->err + 1e-9);
		assert_float_equal(res->l2[zero[k]], 0, 0);
	}
}

/*
 * Lunar Lake (emu_hybrid_skymont): the Skymont E group counts perf's
 * lunarlake TopdownL2 events ifetch latency and alloc restrictions
 * beside level 1, so a region all of whose slots came from E-cores gets
 * their frontend and backend children (TD_RESULT_L2_FE_BE) against the
 * truth, retiring's and bad speculation's children 0; a P-only region
 * the P-cores' level 2; a region on both core types none.
 */
static void test_skymont_ecore_level2(void **state)
{
	static const struct emu_mix *const mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
						       &MIX_STREAM, &MIX_DRAM };
	struct td *td = open_skymont();
	struct td_region r = { { 0 } };
	struct truth_frac t;
	struct td_result res;

	(void)state;
	emu_migrate(8);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++) {
		t = measure_region(td, &r, 20000000, mixes[i], &res);
		assert_fe_be(&res, &t);
	}
	emu_migrate(0);
	pcore_region(td, true);
	migrate_mid_region(td, false);
	td_close(td);
}

/*
 * Skymont named totals: calls all on E-cores keep the E-cores' frontend
 * and backend children; once a call on P-cores joins them the totals
 * would mix two trees' nodes (memory bound with resource bound) and have
 * no level 2.
 */
static void test_skymont_named_totals(void **state)
{
	static struct td_named n = TD_NAMED_INIT("skymont");
	struct td *td = open_skymont();
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_totals tot;

	(void)state;
	memset(&n.opaque, 0, sizeof(n.opaque));
	emu_migrate(8);
	emu_truth(&a);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(td_named_begin(td, &n), 0);
		emu_run(10000000, i ? &MIX_DRAM : &MIX_BRANCHY);
		assert_int_equal(td_named_end(td, &n, NULL), 0);
	}
	emu_truth(&b);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	t = truth_between(&a, &b);
	assert_fe_be(&tot.total, &t);
	emu_migrate(0);
	assert_int_equal(td_named_begin(td, &n), 0);
	emu_run(20000000, &MIX_CHAIN);
	assert_int_equal(td_named_end(td, &n, NULL), 0);
	assert_int_equal(td_named_totals(&n, &tot), 0);
	assert_int_equal(tot.calls, 4);
	assert_false(tot.total.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE));
	td_close(td);
}

/* The slots each RDPMC charges in the next tests (emu_set_read_work). */
#define READ_WORK 300

/*
 * The err bound of the next tests' regions: 4e7 slots, begun on a P-core
 * by RDPMC after the open's 1e6 slots, P-core work then e_slots of E-core
 * work, the end on the E-core or back on a P-core.  decode.c: err =
 * (E + |R - Y|) / Y, doubled with level 2, in 1/255-slot units; Y, the
 * categories' sum, is 255 x the region's slots (4e7 and the reads inside
 * it) to the kernel's rounding of a few slots, so at least 255 x 4e7.
 * reads: the slots of the library's own reads since the open, READ_WORK
 * for each RDPMC the emulator served (emu_stats); each read term below is
 * a part of it.
 *   The begin's raw SLOTS: S_b <= 1e6 + reads.
 *   SLOTS is never reset: the end's S_e <= p_slots (the P-core work
 *   since the open) + reads.
 *   End on the E-core (pm_reading.c ecore_p_sample): the kernel counts'
 *   scale S_e + 255, and twice that per restore, none here (the move to
 *   the E-core is a schedule-out; td_pm_restores counts schedule-ins).
 *   The E group is read member after member, a read's work between: Y
 *   exceeds 255 R by at most 255 x reads.
 *   End back on a P-core by RDPMC (cumulative_sample): S_e, and S_e
 *   again for its one restore (the schedule-in there).
 *   Level 2 kept (hybrid_source.c ecore_share_delta): the region's
 *   E-core slots e <= e_slots + reads join E as 255 x e.
 * test_end_after_migration_keeps_level2 (p_slots 4.1e7, the end on the
 * E-core, level 2): 2 x (4.2e7 + 255 + 512 reads) / (255 x 4e7), 0.0085
 * with its 8 RDPMCs, against 0.0082 for the P-core readings alone.
 */
static double ecore_end_bound(double p_slots, double e_slots, bool end_on_e,
			      bool l2)
{
	struct emu_stats s;
	double reads, s_begin, s_end, e;

	emu_stats(&s);
	reads = (double)READ_WORK * (double)s.rdpmcs;
	s_begin = 1e6 + reads;
	s_end = p_slots + reads;
	e = s_begin;
	if (end_on_e)
		e += s_end + 255 + 255 * reads; /* and |R - Y| */
	else
		e += 2 * s_end;
	if (l2)
		e += 255 * (e_slots + reads);
	return (l2 ? 2 : 1) * e / (255 * 4e7);
}

/*
 * The library's own work at each counter read counted (emu_set_read_work:
 * 300 slots per RDPMC, charged to the core the thread is on then).  A
 * region measured on a P-core whose end's first RDPMC finds the thread
 * moved to an E-core (an rseq abort: the guard's section) ends on the
 * slow path there: cpu_core's counts by read(2), cpu_atom's by RDPMC,
 * each RDPMC charged to the E-cores.  Those few slots of the library's
 * are the region's only E-core slots: level 2 stays, and err covers it.
 */
static void test_end_after_migration_keeps_level2(void **state)
{
	struct td_region r = { { 0 } };
	struct emu_truth a;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_set_read_work(READ_WORK, &MIX_CHAIN);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(40000000, &MIX_BRANCHY);
	/* the aborted RDPMC is not served: every one served ran on 9 */
	t = end_moved_at_rdpmc(td, &r, 9, &a, &res);
	assert_true(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, ecore_end_bound(4.1e7, 0, true, true));
	emu_migrate(0);
	pcore_region(td, true);
	td_close(td);
}

/*
 * Real work on an E-core inside a P-core region: 5% of its slots, with
 * the end on the E-core (the library's reads counted as above) or back
 * on a P-core.  Its level 2 could not be measured: the result says so
 * (no TD_RESULT_L2, level 2 all 0) and level 1 is the slot-weighted
 * combination of both core types.  A region with one E-core slot in a
 * thousand keeps level 2, within its err.
 */
static void ecore_share_region(uint64_t e_slots, bool end_on_e, bool l2)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	emu_setup(EMU_ADL);
	emu_set_read_work(READ_WORK, &MIX_CHAIN);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(40000000 - e_slots, &MIX_BRANCHY);
	emu_migrate(10);
	emu_run(e_slots, &MIX_STREAM);
	if (!end_on_e)
		emu_migrate(3);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(!!(res.flags & TD_RESULT_L2), l2);
	for (int i = 0; !l2 && i < TD_L2_COUNT; i++)
		assert_float_equal(res.l2[i], 0, 0);
	assert_within(&res, &t,
		      ecore_end_bound(4.1e7 - (double)e_slots,
				      (double)e_slots, end_on_e, l2));
	emu_migrate(0);
	pcore_region(td, true);
	td_close(td);
	emu_teardown();
}

static void test_ecore_work_loses_level2(void **state)
{
	(void)state;
	ecore_share_region(2000000, true, false);
	ecore_share_region(2000000, false, false);
	ecore_share_region(40000, false, true);
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
	td = open_adl_counting();
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

/*
 * Regions on E-cores only, counted throughout: never flagged, whatever
 * came before them.  Opened on an E-core; opened on a P-core and moved
 * to one; moved between E-cores before any reading on a P-core.  Each
 * E-only region is exact (E counts) within BOUND; one that moves
 * between E-cores too.
 */
static void ecore_only_regions(struct td *td)
{
	struct td_region r = { { 0 } };
	struct emu_truth a;
	struct truth_frac t;
	struct td_result res;

	t = measure_region(td, &r, 5000000, &MIX_DRAM, &res);
	assert_within(&res, &t, BOUND);
	assert_false(res.flags & TD_RESULT_L2);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_migrate(12); /* E to E: cpu_atom's page rewritten, not cpu_core's */
	emu_run(5000000, &MIX_BRANCHY);
	t = end_exact(td, &r, &a, &res);
	assert_within(&res, &t, BOUND);
	emu_migrate(13);
	t = measure_region(td, &r, 5000000, &MIX_STREAM, &res);
	assert_within(&res, &t, BOUND);
}

static void test_ecore_regions_after_open(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_migrate(9); /* opened on an E-core */
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	ecore_only_regions(td);
	td_close(td);
	emu_teardown();

	td = open_adl_counting(); /* on a P-core, then moved */
	emu_migrate(9);
	ecore_only_regions(td);
	td_close(td);
	emu_teardown();

	td = open_adl_counting(); /* moved twice before any reading */
	emu_migrate(9);
	emu_run(1000000, &MIX_DRAM);
	emu_migrate(10);
	ecore_only_regions(td);
	td_close(td);
}

/*
 * Resetting at every begin (TD_RESET_ALWAYS, TOPDOWN_RESET=always): a
 * begin on an E-core finds cpu_core's group inactive, so IOC_RESET
 * could only zero the kernel's counts of it, not its saved registers
 * (kernel/events/core.c _perf_event_reset: pmu->read only for an active
 * event); E-only regions stay exact and unflagged, and so do regions
 * back on a P-core.
 */
static void test_ecore_regions_reset_always(void **state)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_region r = { { 0 } };
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	o.reset_policy = TD_RESET_ALWAYS;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(1000000, &MIX_STREAM);
	emu_migrate(9);
	ecore_only_regions(td);
	emu_migrate(2);
	t = measure_region(td, &r, 4000000, &MIX_BRANCHY, &res);
	assert_true(res.flags & TD_RESULT_L2);
	assert_within(&res, &t, BOUND);
	emu_migrate(11);
	ecore_only_regions(td);
	td_close(td);
}

/*
 * Counts really lost are still flagged: the group of the core type the
 * thread is on switched out (multiplexed) for a while inside the region,
 * on an E-core, on a P-core, in regions all on E-cores and in regions
 * across both, before and after the handle has paired the two groups'
 * times.
 */
static void run_switched_out(uint64_t slots, const struct emu_mix *mix)
{
	emu_deschedule();
	emu_run(slots, mix);
	emu_reschedule();
}

static void assert_flagged(struct td *td, struct td_region *r)
{
	struct td_result res;

	assert_int_equal(td_region_end(td, r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
}

static void test_lost_counts_flagged(void **state)
{
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_migrate(9);
	td = open_adl(TD_PATH_RDPMC);
	emu_run(1000000, &MIX_STREAM);
	for (int round = 0; round < 2; round++) {
		/* all on E-cores */
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(2000000, &MIX_CHAIN);
		run_switched_out(3000000, &MIX_DRAM);
		emu_run(2000000, &MIX_CHAIN);
		assert_flagged(td, &r);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_migrate(12);
		run_switched_out(3000000, &MIX_DRAM);
		assert_flagged(td, &r);
		/* E to P, lost on the E-core */
		assert_int_equal(td_region_begin(td, &r), 0);
		run_switched_out(3000000, &MIX_DRAM);
		emu_migrate(1);
		emu_run(2000000, &MIX_CHAIN);
		assert_flagged(td, &r);
		/* P to E, lost on the P-core */
		assert_int_equal(td_region_begin(td, &r), 0);
		run_switched_out(3000000, &MIX_DRAM);
		emu_migrate(10);
		emu_run(2000000, &MIX_CHAIN);
		assert_flagged(td, &r);
		/* P to E, lost on the E-core */
		emu_migrate(3);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(2000000, &MIX_CHAIN);
		emu_migrate(14);
		run_switched_out(3000000, &MIX_DRAM);
		assert_flagged(td, &r);
		/*
		 * P to E, switched out on the P-core and moved while out:
		 * cpu_core's page from before the loss, cpu_atom's from
		 * after it, with the writes of a plain switch since the
		 * last P reading (x86_pmu_del's one on cpu_core's, the
		 * schedule-in's two on cpu_atom's): they would give a
		 * smaller c
		 */
		emu_migrate(4);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(2000000, &MIX_CHAIN);
		emu_deschedule();
		emu_run(3000000, &MIX_DRAM);
		emu_migrate(15);
		emu_reschedule();
		emu_run(2000000, &MIX_CHAIN);
		assert_flagged(td, &r);
		/* and a region counted throughout after them: unflagged */
		t = measure_region(td, &r, 5000000, &MIX_STREAM, &res);
		assert_within(&res, &t, BOUND);
		emu_migrate(8);
	}
	td_close(td);
}

/*
 * Regions hopping between ten CPUs (four P-cores, six E-cores): moved
 * between readings, at a begin's or an end's RDPMC (inside the rseq
 * section, which aborts) and inside the region, from a fixed seed.
 * Counted throughout, every region is unflagged, exact in slots and
 * within its own err, and has level 2 exactly when none of its work ran
 * on an E-core.  Returns the number of regions that were not.  (How
 * large err grows is not this test's subject: readings on E-cores carry
 * the 8-bit scale of cpu_core's counts since its last reset, which no
 * reset on an E-core can shrink.)
 */
static const int hop_cpus[10] = { 0, 1, 2, 3, 8, 9, 10, 11, 12, 13 };

static unsigned hop_next(uint64_t *x, unsigned n)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(*x >> 33) % n;
}

static void hop_plan_at_rdpmc(uint64_t *x)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE };

	ev.cpu = hop_cpus[hop_next(x, 10)];
	emu_schedule(EMU_AT_RDPMC, &ev);
}

static void hop_unplan(void)
{
	struct emu_sched_event none = { .kind = EMU_SCHED_NONE };

	emu_schedule(EMU_AT_RDPMC, &none);
}

static long hop_regions(enum td_reset_policy policy, uint64_t seed, int n)
{
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	struct td_options o = TD_OPTIONS_INIT;
	struct td_region r = { { 0 } };
	struct td *td;
	long bad = 0;

	emu_migrate(hop_cpus[hop_next(&seed, 10)]);
	o.reset_policy = policy;
	if (td_open(&td, &o) != 0)
		return n;
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < n; i++) {
		unsigned hops = hop_next(&seed, 4), when = hop_next(&seed, 3);
		bool on_ecore = false;
		struct emu_truth a, b;
		struct td_result res;
		struct truth_frac t;

		if (when == 0)
			hop_plan_at_rdpmc(&seed);
		else if (when == 1)
			emu_migrate(hop_cpus[hop_next(&seed, 10)]);
		if (td_region_begin(td, &r) != 0)
			return n;
		hop_unplan();
		emu_truth(&a);
		for (unsigned h = 0; h <= hops; h++) {
			if (h)
				emu_migrate(hop_cpus[hop_next(&seed, 10)]);
			on_ecore |= sched_getcpu() >= 8;
			emu_run(1000000 + hop_next(&seed, 5) * 1000000,
				mixes[hop_next(&seed, 4)]);
		}
		emu_truth(&b);
		if (hop_next(&seed, 3) == 0)
			hop_plan_at_rdpmc(&seed);
		if (td_region_end(td, &r, &res) != 0)
			return n;
		hop_unplan();
		t = truth_between(&a, &b);
		if ((res.flags & TD_RESULT_UNRELIABLE) ||
		    res.slots != b.slots - a.slots ||
		    max_error(&res, &t) > res.err + 1e-12 ||
		    !(res.flags & TD_RESULT_L2) != on_ecore)
			bad++;
	}
	td_close(td);
	return bad;
}

static void test_hopping_regions(void **state)
{
	(void)state;
	emu_setup(EMU_ADL);
	assert_int_equal(hop_regions(TD_RESET_AUTO, 1, 8), 0);
	emu_teardown();
	emu_setup(EMU_ADL);
	assert_int_equal(hop_regions(TD_RESET_AUTO, 7, 200), 0);
	emu_teardown();
	emu_setup(EMU_ADL);
	assert_int_equal(hop_regions(TD_RESET_ALWAYS, 3, 200), 0);
}

/* Four threads, each its own handle and emulated CPU, hopping. */
struct hopper {
	pthread_t tid;
	uint64_t seed;
	long bad;
};

static void *hopper_run(void *arg)
{
	struct hopper *h = arg;

	h->bad = hop_regions(TD_RESET_AUTO, h->seed, 100);
	return NULL;
}

static void test_hopping_threads(void **state)
{
	struct hopper h[4];

	(void)state;
	emu_setup(EMU_ADL);
	for (int i = 0; i < 4; i++) {
		h[i].seed = 100 + (uint64_t)i;
		h[i].bad = -1;
		assert_int_equal(pthread_create(&h[i].tid, NULL, hopper_run,
						&h[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(h[i].tid, NULL), 0);
		assert_int_equal(h[i].bad, 0);
	}
}

/* ---- TD_OPT_L2_MULTIPLEX: Gracemont E-cores' level 2 -------------------- */

/* Slots between the emulated kernel's rotations (a few ms of a core). */
#define MUX_INTERVAL 300000
/*
 * Multiplexed estimates: each group counted about half of a steady mix
 * for some hundred rotations; the rest is rounding.
 */
#define MUX_TOL 3e-3

/* An Alder Lake handle with TD_OPT_L2_MULTIPLEX, on a P-core. */
static struct td *open_adl_mux(enum td_path want)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td_info info = { .size = sizeof(info) };
	struct td *td = NULL;

	emu_set_mux_interval(MUX_INTERVAL);
	o.reset_policy = TD_RESET_NEVER;
	o.flags = TD_OPT_L2_MULTIPLEX;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, want);
	assert_int_equal(info.levels, 2);
	assert_int_equal(info.flags & (TD_INFO_HYBRID_ECORE |
				       TD_INFO_MULTIPLEXED),
			 TD_INFO_HYBRID_ECORE | TD_INFO_MULTIPLEXED);
	assert_string_equal(info.uarch, "alderlake_hybrid+gracemont");
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/* Every level-1 fraction, and the slots, within tol of the truth. */
static void assert_l1_near(const struct td_result *res,
			   const struct emu_truth *a,
			   const struct emu_truth *b, double tol)
{
	struct truth_frac t = truth_between(a, b);
	double slots = (double)(b->slots - a->slots);

	assert_false(res->flags & TD_RESULT_UNRELIABLE);
	assert_true(res->flags & TD_RESULT_MULTIPLEXED);
	if (fabs((double)res->slots - slots) > tol * slots)
		fail_msg("slots %llu true %.0f", (unsigned long long)res->slots,
			 slots);
	for (int k = 0; k < TD_L1_COUNT; k++)
		if (fabs(res->l1[k] - t.l1[k]) > tol)
			fail_msg("l1[%d] %.5f true %.5f", k, res->l1[k],
				 t.l1[k]);
}

/*
 * A region all on E-cores: Gracemont's level-2 tree (perf's alderlake
 * list, cpu_atom: MS uops, base, branch mispredicts, machine clears,
 * ifetch latency and bandwidth, core bound, resource bound in the
 * memory-bound entry), every node against the truth, and level 1 and
 * the slots scaled to the E-cores' whole time.
 */
static void ecore_mux_region(struct td *td, uint64_t slots,
			     const struct emu_mix *mix)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(slots, mix);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_l1_near(&res, &a, &b, MUX_TOL);
	assert_int_equal(res.flags & (TD_RESULT_L2 | TD_RESULT_L2_FE_BE),
			 TD_RESULT_L2);
	for (int k = 0; k < TD_L2_COUNT; k++)
		if (fabs(res.l2[k] - t.l2[k]) > MUX_TOL)
			fail_msg("l2[%d] %.5f true %.5f", k, res.l2[k],
				 t.l2[k]);
}

/*
 * TD_OPT_L2_MULTIPLEX on Alder Lake: the E group's level-2 group on
 * cpu_atom, rotated with level 1 (6 general counters: never both), so
 * a region all on E-cores gets Gracemont's level 2, flagged
 * multiplexed; a P-only region keeps the P-cores' exact level 2, not
 * flagged; both paths.
 */
static void ecore_level2_multiplexed(bool rdpmc)
{
	static const struct emu_mix *const mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
						       &MIX_STREAM, &MIX_DRAM };
	struct td *td;

	emu_setup(EMU_ADL);
	if (!rdpmc)
		emu_rseq_set_cpu_raw((uint32_t)-2); /* registration failed */
	td = open_adl_mux(rdpmc ? TD_PATH_RDPMC : TD_PATH_READ);
	pcore_region(td, true);
	emu_migrate(9);
	for (size_t i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		ecore_mux_region(td, 40 * MUX_INTERVAL, mixes[i]);
	emu_migrate(2);
	pcore_region(td, true);
	td_close(td);
}

static void test_ecore_level2_multiplexed_rdpmc(void **state)
{
	(void)state;
	ecore_level2_multiplexed(true);
}

static void test_ecore_level2_multiplexed_read(void **state)
{
	(void)state;
	ecore_level2_multiplexed(false);
}

/*
 * A migration mid-region with TD_OPT_L2_MULTIPLEX: P (chain) -> E
 * (stream) -> P (dram), and one that ends on the E-core.  The E-cores'
 * level-1 counts, taken while their level-2 group had its turns, are
 * scaled to their whole time before they join the P-cores' (a region
 * on both core types: level 1 the slot-weighted combination, flagged
 * multiplexed, no level 2, as without the option).
 */
static void test_ecore_multiplexed_migration(void **state)
{
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_adl_mux(TD_PATH_RDPMC);
	for (int end_on_e = 0; end_on_e < 2; end_on_e++) {
		struct td_region r = { { 0 } };
		struct emu_truth a, b;
		struct td_result res;

		emu_migrate(1);
		emu_truth(&a);
		assert_int_equal(td_region_begin(td, &r), 0);
		run_p_e_p(end_on_e);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		assert_false(res.flags & TD_RESULT_L2);
		/* P-cores' quantisation over 7e7 slots, and the E estimate */
		assert_l1_near(&res, &a, &b, BOUND);
	}
	td_close(td);
}

/*
 * Without the option nothing changes: no level-2 group on cpu_atom, no
 * multiplexing (a region all on E-cores is exact level 1, not flagged).
 */
static void test_ecore_no_multiplex_by_default(void **state)
{
	struct td_info info = { .size = sizeof(info) };
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct truth_frac t;
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_ADL);
	emu_set_mux_interval(MUX_INTERVAL);
	td = open_adl(TD_PATH_RDPMC);
	assert_int_equal(td_query(td, &info), 0);
	assert_false(info.flags & TD_INFO_MULTIPLEXED);
	emu_migrate(9);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(40 * MUX_INTERVAL, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_false(res.flags & (TD_RESULT_L2 | TD_RESULT_MULTIPLEXED));
	assert_int_equal(res.slots, b.slots - a.slots);
	for (int k = 0; k < TD_L1_COUNT; k++)
		assert_float_equal(res.l1[k], t.l1[k], 1e-6);
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
		cmocka_unit_test_teardown(test_end_after_migration_keeps_level2,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_work_loses_level2,
					  teardown),
		cmocka_unit_test_teardown(test_skymont_ecore_level2, teardown),
		cmocka_unit_test_teardown(test_skymont_named_totals, teardown),
		cmocka_unit_test_teardown(test_named_totals_mixed, teardown),
		cmocka_unit_test_teardown(test_reset_undo_keeps_ecore_stint,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_regions_after_open,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_regions_reset_always,
					  teardown),
		cmocka_unit_test_teardown(test_lost_counts_flagged, teardown),
		cmocka_unit_test_teardown(test_hopping_regions, teardown),
		cmocka_unit_test_teardown(test_hopping_threads, teardown),
		cmocka_unit_test_teardown(test_ecore_level2_multiplexed_rdpmc,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_level2_multiplexed_read,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_multiplexed_migration,
					  teardown),
		cmocka_unit_test_teardown(test_ecore_no_multiplex_by_default,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
