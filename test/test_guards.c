/* SPDX-License-Identifier: MIT */
/*
 * The guards and steps that only matter at one instruction: a page
 * update racing the seqlock read, an rseq abort inside the guarded read,
 * a foreign reset between two readings, a reset undone, a fold between a
 * region's two readings.  The emulator plans each event at the exact
 * RDPMC (emu_schedule with skip) and the tests check that it was
 * reached (emu_sched_pending), so that none of them passes by missing
 * its moment.  Each fails when its guard or step is taken out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* General-purpose counters a test steps one by one (emu_stale_counting). */
#define EMU_GP_STEPS 8

TD_TEST_HANDLE

static struct td *open_policy(enum emu_profile p, enum td_reset_policy pol)
{
	struct td_options o = TD_OPTIONS_INIT;

	emu_setup(p);
	o.reset_policy = pol;
	assert_int_equal(td_open(&cur, &o), 0);
	return cur;
}

static struct td *open_never(enum emu_profile p)
{
	return open_policy(p, TD_RESET_NEVER);
}

static uint64_t foreign_resets(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	return info.foreign_resets;
}

static uint64_t library_resets(struct td *td)
{
	struct td_info info = { .size = sizeof(info) };

	assert_int_equal(td_query(td, &info), 0);
	return info.resets;
}

/*
 * err of a region of r slots begun s slots after the last reset, level 2
 * reported, nothing folded between (decode.c): 2 (2 s + r) / (255 r),
 * the level-1 bytes of each reading summing to 255; with the rounding of
 * the doubles it is computed in.
 */
static double err_bound(uint64_t s, uint64_t r)
{
	return 2.0 * (2.0 * (double)s + (double)r) / (255.0 * (double)r) *
	       (1 + 1e-9);
}

/* Plan ev at the (skip + 1)th RDPMC from now. */
static void at_rdpmc(enum emu_sched_kind kind, unsigned skip)
{
	struct emu_sched_event ev = { .kind = kind, .skip = skip };

	emu_schedule(EMU_AT_RDPMC, &ev);
}

/*
 * The group multiplexed out between the seqlock read's index load and
 * its lock re-check (at its RDPMC of SLOTS, a fresh region's begin: the
 * slow path's read): the index loaded still named SLOTS, but RDPMC then
 * returns what the next context left in the register.  The re-check sees
 * the lock moved, reads again and finds index 0: the reading is not
 * taken.  Taken, it would be another context's SLOTS: a foreign reset
 * that never happened, folding garbage into the handle's counts.  The
 * region begun there is flagged (its begin unread), so is the enclosing
 * one (an unreadable reading inside it), whose slots stay exact (no work
 * ran while out); the next region is exact.
 */
static void test_page_update_inside_seqlock(void **state)
{
	struct td *td = open_never(EMU_SPR);
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res, ro;
	struct emu_truth a, b;
	struct truth_frac t;

	(void)state;
	emu_run(20000000, &MIX_STREAM);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(10000000, &MIX_CHAIN);
	at_rdpmc(EMU_SCHED_DESCHEDULE, 0);
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	emu_reschedule();
	emu_run(10000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &outer, &ro), 0);
	assert_int_equal(ro.slots, b.slots - a.slots);
	assert_int_equal(foreign_resets(td), 0);
	emu_truth(&a);
	t = measure_region(td, &r, 5000000, &MIX_DRAM, &res);
	assert_within(&res, &t, err_bound(a.slots, 5000000));
	close_cur();
}

/*
 * Hybrid: a signal delivered inside the guarded read's rseq section (at
 * its first RDPMC) aborts the section without any page update or
 * migration: the P-core and the page are as they were, so only the
 * guard's own result says that the registers were not read.  The read is
 * retried; accepted, its values are whatever the registers held.  At
 * the slow path's read (a fresh region's begin), at the fast begin's and
 * at the fast end's: every region exact, no foreign reset seen.
 */
static void test_hybrid_abort_by_signal(void **state)
{
	struct td *td = open_never(EMU_ADL);
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;

	(void)state;
	emu_run(3000000, &MIX_STREAM);
	for (int i = 0; i < 3; i++) {
		/* 0: the slow begin; 1: the fast begin; 2: the fast end */
		struct emu_truth a, b;

		at_rdpmc(EMU_SCHED_SIGNAL, i == 2 ? 2 : 0);
		emu_truth(&a);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(10000000, i % 2 ? &MIX_DRAM : &MIX_CHAIN);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		assert_false(emu_sched_pending(EMU_AT_RDPMC));
		t = truth_between(&a, &b);
		assert_int_equal(res.slots, b.slots - a.slots);
		assert_within(&res, &t, err_bound(a.slots, 10000000));
	}
	assert_int_equal(foreign_resets(td), 0);
	close_cur();
}

/*
 * A foreign reset between a fast begin's reading and the next: the next
 * reading is a fast begin, which must see SLOTS below the last reading
 * and go to the slow path, which counts the reset and flags every region
 * spanning it.  Unseen there, nothing later sees it (the readings after
 * it only grow), and the enclosing region, one mix throughout (so that
 * no category gives it away), ends with a result that is wrong and not
 * flagged.
 */
static void test_fast_begin_sees_foreign_reset(void **state)
{
	struct td *td = open_never(EMU_SPR);
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_result res;

	(void)state;
	emu_run(20000000, &MIX_STREAM);
	for (int i = 0; i < 2; i++) /* r's begins fast from now on */
		measure_region(td, &r, 1000000, &MIX_STREAM, NULL);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(8000000, &MIX_STREAM);
	measure_region(td, &r, 1000000, &MIX_STREAM, NULL);
	at_rdpmc(EMU_SCHED_FOREIGN_RESET, 0); /* at the next begin's read */
	measure_region(td, &r, 1000000, &MIX_STREAM, NULL);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	emu_run(40000000, &MIX_STREAM); /* SLOTS passes the outer's begin */
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(foreign_resets(td), 1);
	close_cur();
}

/*
 * A foreign reset right after a reading folds that reading into the
 * handle's counts, as if the reset had come right then: a region
 * spanning it is flagged (nothing says where the reset came), but the
 * counts of its record are the work it ran, before the reading and
 * after the reset, each category within the quantisation of the three
 * readings involved (its begin, the folded one, its end; in 1/255-slot
 * units, each at most its SLOTS).  The folded reading must be a pair:
 * the SLOTS and PERF_METRICS of one instant, whichever path took it (a
 * fast begin, a fast end to a record, the slow path).  A fast end
 * without output reads SLOTS alone: the last pair is its begin's, and
 * the slots between them are folded without categories (each category
 * may lack all of them: 255 x those slots more in the bound).  The mix
 * changes between the readings, so that PERF_METRICS of an older
 * reading paired with a newer SLOTS shows.
 */
enum last_reading { LAST_FAST_BEGIN, LAST_END_RECORD, LAST_END_NO_OUTPUT };

static void check_spanning_record(const struct td_record *rec,
				  const struct emu_truth *a,
				  const struct emu_truth *b, uint64_t bound)
{
	assert_true(rec->flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(rec->slots, b->slots - a->slots);
	for (int i = 0; i < 4; i++) {
		int64_t want = 255 * (int64_t)(b->cat[i] - a->cat[i]);
		int64_t off = rec->cat[i] - want;

		if (llabs(off) > (long long)bound)
			fail_msg("category %d: %lld, truth %lld, bound %llu", i,
				 (long long)rec->cat[i], (long long)want,
				 (unsigned long long)bound);
	}
}

static void fold_keeps_pairs(enum emu_profile p, enum last_reading last)
{
	struct td *td = open_never(p);
	struct td_region outer = { { 0 } }, r = { { 0 } };
	struct td_record recs[4];
	struct emu_truth t0, t1, t2, t3, t4;
	uint64_t unpaired = 0;
	size_t n;

	emu_run(20000000, &MIX_DRAM);
	for (int i = 0; i < 2; i++) /* r's begins fast from now on */
		measure_region(td, &r, 1000000, &MIX_DRAM, NULL);
	emu_truth(&t0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(100000000, &MIX_STREAM);
	if (last == LAST_END_RECORD)
		assert_int_equal(td_records_attach(td, recs, 4), 0);
	emu_truth(&t1);
	assert_int_equal(td_region_begin(td, &r), 0);
	if (last != LAST_FAST_BEGIN) {
		emu_run(1000000, &MIX_STREAM);
		if (last == LAST_END_NO_OUTPUT)
			unpaired = 1000000;
		emu_truth(&t1);
		assert_int_equal(td_region_end(td, &r, NULL), 0);
	}
	emu_foreign_read(); /* right after that reading */
	emu_truth(&t2);
	emu_run(10000000, &MIX_CHAIN);
	emu_truth(&t3);
	if (last != LAST_END_RECORD)
		assert_int_equal(td_records_attach(td, recs, 4), 0);
	if (last == LAST_FAST_BEGIN)
		assert_int_equal(td_region_end(td, &r, NULL), 0);
	emu_truth(&t4);
	assert_int_equal(td_region_end(td, &outer, NULL), 0);
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(foreign_resets(td), 1);
	/* the readings' SLOTS since the group began counting (no reset) */
	uint64_t s0 = t0.slots, s1 = t1.slots, s3 = t3.slots - t2.slots;

	if (last == LAST_FAST_BEGIN) { /* r: begun at t1, reset, t2 to t3 */
		assert_int_equal(n, 2);
		assert_int_equal(recs[0].slots, t3.slots - t2.slots);
		check_spanning_record(&recs[0], &t2, &t3, s1 + s1 + s3);
	} else {
		assert_int_equal(n, last == LAST_END_RECORD ? 2 : 1);
	}
	/* outer: t0 to t1 (its reading folded), then t2 to t4 */
	struct emu_truth work = t1;

	for (int i = 0; i < 8; i++)
		work.cat[i] += t4.cat[i] - t2.cat[i];
	work.slots += t4.slots - t2.slots;
	check_spanning_record(&recs[n - 1], &t0, &work,
			      s0 + s1 + s3 + 255 * unpaired);
	close_cur();
}

static void test_fold_after_fast_begin(void **state)
{
	(void)state;
	fold_keeps_pairs(EMU_SPR, LAST_FAST_BEGIN);
}

static void test_fold_after_end_to_record(void **state)
{
	(void)state;
	fold_keeps_pairs(EMU_SPR, LAST_END_RECORD);
}

static void test_fold_after_end_no_output(void **state)
{
	(void)state;
	fold_keeps_pairs(EMU_SPR, LAST_END_NO_OUTPUT);
}

/* The hybrid source's fast begin and its ends (pm_fast.c's routes). */
static void test_fold_pairs_hybrid(void **state)
{
	(void)state;
	fold_keeps_pairs(EMU_ADL, LAST_FAST_BEGIN);
	emu_teardown();
	fold_keeps_pairs(EMU_ADL, LAST_END_RECORD);
	emu_teardown();
	fold_keeps_pairs(EMU_ADL, LAST_END_NO_OUTPUT);
}

/*
 * A reset at a region's begin while its group is switched out zeroes
 * nothing (the kernel's reset reaches the hardware only through an
 * active event): the library undoes its fold, and the reset, charged to
 * the budget, is refunded, so that the next begin which wants one gets
 * it.  Here the regions are short (1e5 slots, earning 5e3 of the 4e4 a
 * reset costs): without the refund, the credit spent on the reset that
 * did not happen would refuse the next one.
 */
static void test_undone_reset_refunded(void **state)
{
	struct td *td = open_policy(EMU_SPR, TD_RESET_AUTO);
	struct td_region lng = { { 0 } }, r = { { 0 } };
	struct emu_stats s0, s1;
	uint64_t resets;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 4; i++) /* the budget's credit full */
		measure_region(td, &lng, 50000000, &MIX_DRAM, NULL);
	emu_run(50000000, &MIX_DRAM); /* a reset due at the next begin */
	resets = library_resets(td);
	emu_stats(&s0);
	emu_switch_out_at_next_reset();
	measure_region(td, &r, 100000, &MIX_CHAIN, NULL);
	emu_stats(&s1);
	assert_int_equal(s1.resets - s0.resets, 1); /* tried... */
	assert_int_equal(library_resets(td), resets); /* ...and undone */
	measure_region(td, &r, 100000, &MIX_CHAIN, NULL);
	assert_int_equal(library_resets(td), resets + 1);
	close_cur();
}

/*
 * A region spanning a reset the library made at another region's begin
 * (a fold: the handle's state changed), ended by the fast end with a
 * result: its readings are of two versions of the handle's state and
 * cannot be decoded as one.  Its end's SLOTS, after the reset, lies
 * above its begin's (so no check on SLOTS alone refuses it): the result
 * must still count every slot of the region, and the reset in it.
 */
static void test_fast_end_across_fold(void **state)
{
	struct td_region outer = { { 0 } }, lng = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct td *td = open_policy(EMU_SPR, TD_RESET_AUTO);
	uint64_t resets;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 4; i++) /* lng's begin resets from now on */
		measure_region(td, &lng, 50000000, &MIX_DRAM, NULL);
	for (int i = 0; i < 2; i++) /* outer's length known: its key kept */
		measure_region(td, &outer, 400000000, &MIX_DRAM, NULL);
	/* lng's begin resets; outer's, right after it, needs none */
	emu_run(50000000, &MIX_DRAM);
	assert_int_equal(td_region_begin(td, &lng), 0);
	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_truth(&a);
	emu_run(50000000, &MIX_DRAM);
	assert_int_equal(td_region_end(td, &lng, NULL), 0);
	resets = library_resets(td);
	measure_region(td, &lng, 50000000, &MIX_DRAM, NULL);
	assert_int_equal(library_resets(td), resets + 1);
	emu_run(70000000, &MIX_DRAM); /* the end's SLOTS above the begin's */
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_int_equal(res.resets, 1);
	assert_within(&res, &t, 0.03);
	close_cur();
}

/*
 * A context switch right after the library's own reset, before the
 * thread counted a slot: the schedule-out finds SLOTS at 0 and saves
 * nothing (intel_update_topdown_event returns early on !slots), so the
 * schedule-in restores nothing either (icl_set_topdown_event_period
 * restores only "if (hwc->saved_slots ...)"), and SLOTS and
 * PERF_METRICS then hold what another context left there.  The kernel's
 * count of SLOTS, which the user page's offset shows, is still 0: no
 * slot was saved since the reset.  Regions spanning the switch cannot
 * know the work between the schedule-in and their next reading: they
 * are flagged, or right; regions begun after it are right.  The switch
 * comes between two calls (SWITCH; on the read(2) path, whose every
 * read zeroes the registers, after a region's begin), as a hybrid
 * part's stint on an
 * E-core (STINT: cpu_core's group out there), or inside the reset's own
 * slow path, at the RDPMC of the reading right after the ioctl
 * (IN_RESET), or as the ioctl returns (AT_EXIT: the page's lock already
 * moved when the ioctl returns); in these two only the library's
 * instructions ran since its reset, so no region has lost anything and
 * none needs to be flagged.
 */
enum after_reset { SWITCH, STINT, IN_RESET, AT_EXIT };

static void switch_after_reset(enum emu_profile p, enum after_reset how)
{
	struct td *td = open_policy(p, TD_RESET_AUTO);
	struct td_region r0 = { { 0 } }, r1 = { { 0 } }, r2 = { { 0 } };
	struct td_result res;
	struct emu_truth a0, a1, a2, b;
	struct emu_stats s0, s1;
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .skip = 2 };

	emu_run(1000000, &MIX_STREAM);
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &r0), 0);
	emu_run(560000000, &MIX_DRAM);
	emu_stats(&s0);
	if (how == IN_RESET) { /* begin: SLOTS, PERF_METRICS, reset, SLOTS */
		emu_schedule(EMU_AT_RDPMC, &ev);
	} else if (how == AT_EXIT) {
		ev.kind = EMU_SCHED_SWITCH_AFTER;
		ev.skip = 0;
		emu_schedule(EMU_AT_RESET, &ev);
	}
	emu_truth(&a1);
	assert_int_equal(td_region_begin(td, &r1), 0);
	emu_stats(&s1);
	if (p == EMU_SPR_NO_RDPMC) /* read(2) zeroes the registers too;
				      INT_MISC.UOP_DROPPING's is the other */
		assert_int_equal(s1.reads - s0.reads, 2);
	else
		assert_int_equal(s1.resets - s0.resets, 1); /* SLOTS now 0 */
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	assert_false(emu_sched_pending(EMU_AT_RESET));
	if (how == SWITCH) {
		emu_context_switch(0);
	} else if (how == STINT) {
		emu_migrate(8);
		emu_run(3000000, &MIX_BRANCHY);
		emu_migrate(0);
	}
	emu_truth(&a2);
	assert_int_equal(td_region_begin(td, &r2), 0);
	emu_run(30000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r2, &res), 0);
	assert_right_or_flagged(&res, &a2, &b);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &r1, &res), 0);
	assert_right_or_flagged(&res, &a1, &b);
	if (how == IN_RESET || how == AT_EXIT)
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &r0, &res), 0);
	assert_right_or_flagged(&res, &a0, &b);
	assert_region_right(td, &r0, 30000000, &MIX_BRANCHY);
	close_cur();
	emu_teardown();
}

static void test_switch_after_reset(void **state)
{
	(void)state;
	switch_after_reset(EMU_SPR, SWITCH);
	switch_after_reset(EMU_ICL, SWITCH);
	switch_after_reset(EMU_ADL, SWITCH);
	switch_after_reset(EMU_ADL, STINT);
	switch_after_reset(EMU_SPR_NO_RDPMC, SWITCH);
}

static void test_switch_inside_reset(void **state)
{
	(void)state;
	switch_after_reset(EMU_SPR, IN_RESET);
	switch_after_reset(EMU_ICL, IN_RESET);
	switch_after_reset(EMU_ADL, IN_RESET);
	switch_after_reset(EMU_SPR, AT_EXIT);
	switch_after_reset(EMU_ADL, AT_EXIT);
}

/*
 * Metrics-clear mode (Lunar Lake; Arrow Lake's P-cores with
 * format/metrics_clear): every reading leaves SLOTS and PERF_METRICS at 0,
 * so a context switch before the thread counts a slot after a reading
 * finds SLOTS 0 at the schedule-out and saves nothing
 * (intel_update_topdown_event: "if (!slots) return 0"), and the
 * schedule-in restores what an earlier schedule-out saved (STALE: the
 * slots an earlier reading took already) or, none saved since the
 * group's first start, leaves what another context left (FOREIGN:
 * icl_set_topdown_event_period restores only "if (hwc->saved_slots
 * ...)").  The next reading takes those registers as its slots: regions
 * spanning the switch must be flagged, or right; regions begun after it
 * are right.  GOOD is the same switch where the schedule-out found the
 * slots the thread ran since the reading, more than it had saved before:
 * the restore is ours, and the kernel's count grew, which proves it.
 */
enum clear_switch { FOREIGN, STALE, GOOD };

/*
 * A handle in metrics-clear mode on Lunar Lake, or on Alder Lake's
 * P-cores offering format/metrics_clear (arl: Arrow Lake's), after 1e6
 * slots of work; ioctl_work: the ioctls' user-mode head in slots
 * (emu_set_ioctl_work), from the open on.  close_clearing ends it.
 */
static struct td *open_clearing(bool arl, uint64_t ioctl_work)
{
	emu_setup(arl ? EMU_ADL : EMU_LNL);
	if (arl)
		emu_offer_metrics_clear();
	if (ioctl_work)
		emu_set_ioctl_work(ioctl_work, &MIX_CHAIN);
	assert_int_equal(td_open(&cur, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	return cur;
}

static void close_clearing(void)
{
	close_cur();
	emu_teardown();
}

static void switch_after_clear(bool arl, enum clear_switch how)
{
	struct td_region r0 = { { 0 } }, r1 = { { 0 } }, r2 = { { 0 } };
	struct td_info info = { .size = sizeof(info) };
	struct td_result res;
	struct emu_truth a0, a1, a2, b;
	struct td *td = open_clearing(arl, 0);

	assert_int_equal(td_query(td, &info), 0);
	assert_true(info.flags & TD_INFO_METRICS_CLEAR);
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &r0), 0);
	emu_run(60000000, &MIX_DRAM);
	if (how == STALE) /* saves 6e7 slots, which r1's begin takes */
		emu_context_switch(0);
	emu_truth(&a1);
	assert_int_equal(td_region_begin(td, &r1), 0); /* SLOTS now 0 */
	if (how == GOOD)
		emu_run(70000000, &MIX_BRANCHY);
	emu_context_switch(0);
	emu_truth(&a2);
	assert_int_equal(td_region_begin(td, &r2), 0);
	emu_run(30000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r2, &res), 0);
	assert_right_or_flagged(&res, &a2, &b);
	if (how == GOOD)
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &r1, &res), 0);
	assert_right_or_flagged(&res, &a1, &b);
	if (how == GOOD)
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &r0, &res), 0);
	assert_right_or_flagged(&res, &a0, &b);
	assert_region_right(td, &r0, 30000000, &MIX_BRANCHY);
	close_clearing();
}

/*
 * The same switch inside a reading, at the first RDPMC of a region's end
 * right after its begin cleared the registers (nothing counted since):
 * the fast end's page check passed before it, so only the page seen
 * after the reads tells (pm_clear_fast.c page_unmoved; on the hybrid
 * part, the guard's abort and the source's own check): the end must be
 * flagged, or right.  The region after is right.
 */
static void switch_inside_clear_read(bool arl, bool stale)
{
	struct td_region r0 = { { 0 } }, r1 = { { 0 } };
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = 1 };
	struct td_result res;
	struct emu_truth a0, a1, b;
	struct td *td = open_clearing(arl, 0);

	measure_region(td, &r1, 100000, &MIX_CHAIN, NULL); /* the probe */
	measure_region(td, &r1, 100000, &MIX_CHAIN, NULL); /* fast now */
	emu_run(60000000, &MIX_DRAM);
	if (stale)
		emu_context_switch(0); /* saves 6e7 slots */
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &r0), 0);
	emu_run(20000000, &MIX_BRANCHY);
	emu_truth(&a1);
	assert_int_equal(td_region_begin(td, &r1), 0); /* SLOTS now 0 */
	emu_schedule(EMU_AT_RDPMC, &ev);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r1, &res), 0);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	assert_right_or_flagged(&res, &a1, &b);
	assert_int_equal(td_region_end(td, &r0, &res), 0);
	assert_right_or_flagged(&res, &a0, &b);
	assert_region_right(td, &r0, 30000000, &MIX_CHAIN);
	close_clearing();
}

/*
 * The same switch inside a nested region's begin, at its first RDPMC:
 * the enclosing region's begin reading was folded first (the nested
 * begin's), then the fast begin read, and the page it finds moved sends
 * it to the slow path with its reading kept (pm_clear_fast.c
 * begin_page_moved).  The enclosing region's reading, taken after 6e7
 * slots since the one before, is folded once: the enclosing region ends
 * right or flagged, and the region after both is right.
 */
static void switch_inside_clear_begin(bool arl)
{
	struct td_region r0 = { { 0 } }, r1 = { { 0 } };
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = 1 };
	struct td_result res;
	struct emu_truth a0, b;
	struct td *td = open_clearing(arl, 0);

	measure_region(td, &r1, 100000, &MIX_CHAIN, NULL); /* the probe */
	measure_region(td, &r1, 100000, &MIX_CHAIN, NULL); /* fast now */
	measure_region(td, &r0, 100000, &MIX_CHAIN, NULL);
	emu_run(60000000, &MIX_DRAM);
	emu_truth(&a0);
	assert_int_equal(td_region_begin(td, &r0), 0);
	emu_run(20000000, &MIX_BRANCHY);
	emu_schedule(EMU_AT_RDPMC, &ev);
	assert_int_equal(td_region_begin(td, &r1), 0);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	emu_run(20000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r1, &res), 0);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r0, &res), 0);
	assert_right_or_flagged(&res, &a0, &b);
	assert_region_right(td, &r0, 30000000, &MIX_CHAIN);
	close_clearing();
}

static void test_switch_inside_clearing_read(void **state)
{
	(void)state;
	switch_inside_clear_read(false, false);
	switch_inside_clear_read(false, true);
	switch_inside_clear_read(true, false);
	switch_inside_clear_read(true, true);
	switch_inside_clear_begin(false);
	switch_inside_clear_begin(true);
}

static void test_switch_after_clearing_read(void **state)
{
	(void)state;
	switch_after_clear(false, FOREIGN);
	switch_after_clear(false, STALE);
	switch_after_clear(false, GOOD);
	switch_after_clear(true, FOREIGN);
	switch_after_clear(true, STALE);
	switch_after_clear(true, GOOD);
}

/*
 * Regions of real work spanning exactly one context switch each, at a
 * pseudo-random point (fixed seed), in metrics-clear mode: the kernel
 * saves and restores what the thread counted since the region's begin
 * cleared the registers.  Before the library zeroed the saved
 * registers after each schedule-in it judged (its IOC_RESET of the
 * group, which intel_update_topdown_event's reset branch does with
 * update_saved_topdown_regs(event, 0, 0, ...)), a switch whose
 * schedule-out found no more slots than the previous one had saved
 * left the kernel's count as it was, and the region was flagged: about
 * half of them.  Every tenth region has its switch right after its
 * begin's clearing read instead (nothing saved, another context's
 * registers left): flagged, and the region after it is right.  The
 * ioctl's user-mode head counts 40 slots (emu_set_ioctl_work), as any
 * user instructions do on a real PMU.
 */
static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static unsigned one_switch_regions(bool arl)
{
	static const struct emu_mix *const mixes[] = {
		&MIX_CHAIN, &MIX_BRANCHY, &MIX_STREAM, &MIX_DRAM
	};
	uint64_t seed = UINT64_C(0x2545f4914f6cdd1d);
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	unsigned flagged = 0;

	open_clearing(arl, 40);
	measure_region(cur, &r, 100000, &MIX_CHAIN, NULL); /* the probe */
	for (unsigned i = 0; i < 220; i++) {
		uint64_t len = 1000000 + xorshift(&seed) % 4000000;
		bool bad = i % 10 == 9;
		uint64_t at = bad ? 0 : 1 + xorshift(&seed) % (len - 1);
		const struct emu_mix *m = mixes[xorshift(&seed) % 4];
		struct truth_frac t;

		assert_int_equal(td_region_begin(cur, &r), 0);
		emu_truth(&a);
		emu_run(at, m);
		emu_context_switch(xorshift(&seed) % 3000000);
		emu_run(len - at, m);
		emu_truth(&b);
		assert_int_equal(td_region_end(cur, &r, &res), 0);
		t = truth_between(&a, &b);
		if (bad) {
			assert_right_or_flagged(&res, &a, &b);
			assert_true(res.flags & TD_RESULT_UNRELIABLE);
		} else if (res.flags & TD_RESULT_UNRELIABLE) {
			flagged++;
		} else {
			assert_true(max_error(&res, &t) <= res.err + 1e-12);
		}
	}
	close_clearing();
	return flagged;
}

static void test_one_switch_per_region_clearing(void **state)
{
	unsigned lnl, arl;

	(void)state;
	lnl = one_switch_regions(false);
	arl = one_switch_regions(true);
	print_message("good regions flagged: lnl %u of 198, arl-pcore %u of 198\n",
		      lnl, arl);
	assert_int_equal(lnl, 0);
	assert_int_equal(arl, 0);
}

/*
 * A stale-page scenario, with the step on `counter`, on p: a fresh
 * handle (cur, the default options) after 1e6 slots of the work, m
 * (AMD's level-1 categories with SMT contention on Zen 4, Intel's level
 * 1 elsewhere).
 */
typedef void stale_scenario(struct td *td, const struct emu_mix *m,
			    unsigned counter);

static void run_stale(stale_scenario *scenario, enum emu_profile p,
		      unsigned counter)
{
	struct emu_mix m = p == EMU_ZEN4 ? emu_mix_amd(0.4, 0.1, 0.2, 0.1)
					 : emu_mix_l1(0.4, 0.1, 0.2, 0.3);

	emu_setup(p);
	assert_int_equal(td_open(&cur, NULL), 0);
	emu_run(1000000, &m);
	scenario(cur, &m, counter);
	close_cur();
	emu_teardown();
}

/* The scenario with the step on each counter in turn, Gracemont's, Zen 4's. */
static void on_each_counter(stale_scenario *scenario)
{
	for (unsigned c = 0; c < EMU_GP_STEPS; c++) {
		run_stale(scenario, EMU_GRT, c);
		run_stale(scenario, EMU_ZEN4, c);
	}
}

/*
 * r begun on a stale page that reads one counter, `counter`, `step` off
 * what the group counted (emu_stale_counting), the thread switched out
 * as the region begins and back in after; *a the truth at the begin.
 */
static void begin_stale(struct td *td, struct td_region *r, unsigned counter,
			uint64_t step, struct emu_truth *a)
{
	uint64_t steps[EMU_GP_STEPS] = { 0 };

	steps[counter] = step;
	emu_stale_counting(steps, EMU_GP_STEPS);
	emu_deschedule();
	emu_truth(a);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_reschedule();
}

/* r's end: right, or flagged, against the truth since a. */
static void end_right_or_flagged(struct td *td, struct td_region *r,
				 const struct emu_truth *a)
{
	struct td_result res;
	struct emu_truth b;

	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, &res), 0);
	assert_right_or_flagged(&res, a, &b);
}

/*
 * The ordinary counters' plausibility guard (counters_read.c): a
 * reading taken while a stale page still names the group's counters
 * (emu_stale_counting: a kernel that would not rewrite the page at
 * schedule-out; another context counted on each register by its own
 * step) looks plausible: every counter forward, no jump, its categories
 * within their bound.  It is accepted, and a region begins there.  Back
 * in, the next reading finds one counter below it; RDPMC is refused,
 * and read(2)'s exact values, below the accepted reading too, say that
 * reading was wrong: the regions spanning it are flagged.  Only the
 * check that no counter went backwards sees it (slots and categories
 * stay within their bounds): without it the region that began on the
 * stale reading ends reliable and wrong by the step.  The step goes to
 * each counter in turn, so that it lands on a category's event
 * whichever counter the kernel gave it.
 */
static void stale_step_on(struct td *td, const struct emu_mix *m,
			  unsigned counter)
{
	struct td_region outer = { { 0 } }, r = { { 0 } }, x = { { 0 } };
	struct emu_truth a;

	assert_int_equal(td_region_begin(td, &outer), 0);
	emu_run(1000000, m);
	begin_stale(td, &r, counter, 500000, &a); /* slow: a fresh one */
	emu_run(300000, m);
	measure_region(td, &x, 100000, m, NULL); /* sees one go back */
	emu_run(2000000, m);
	end_right_or_flagged(td, &r, &a);
	assert_int_equal(td_region_end(td, &outer, NULL), 0);
}

static void test_counters_backwards(void **state)
{
	(void)state;
	on_each_counter(stale_step_on);
}

/*
 * The same stale page, read by a fast begin (a region begun before: its
 * key lets it), where the stale register reads one counter below the
 * last reading, a fast end's, by `back`, though above the last reading
 * the slow path took, `far` slots earlier.  The slow path's guard
 * refuses a counter below the last reading (read(2)'s exact values then
 * begin the region); the fast path's guard must compare with that same
 * last reading, not with the slow path's older one, and neither may the
 * slow path's guard, after fast readings, compare with its own older
 * one: either way the region would begin `back` low on that event and
 * end reliable and wrong.
 */
static void stale_back_on(struct td *td, const struct emu_mix *m,
			  unsigned counter)
{
	const uint64_t back = 200000, far = 40000000;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a;

	assert_int_equal(td_region_begin(td, &r), 0); /* slow: a fresh one */
	emu_run(far, m);
	assert_int_equal(td_region_end(td, &r, &res), 0); /* fast: reads */
	/* 48-bit registers */
	begin_stale(td, &r, counter, (UINT64_C(1) << 48) - back, &a);
	emu_run(3000000, m);
	end_right_or_flagged(td, &r, &a);
}

static void test_fast_guard_follows_readings(void **state)
{
	(void)state;
	on_each_counter(stale_back_on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_page_update_inside_seqlock,
					  teardown),
		cmocka_unit_test_teardown(test_fast_guard_follows_readings,
					  teardown),
		cmocka_unit_test_teardown(test_hybrid_abort_by_signal,
					  teardown),
		cmocka_unit_test_teardown(test_fast_begin_sees_foreign_reset,
					  teardown),
		cmocka_unit_test_teardown(test_fold_after_fast_begin,
					  teardown),
		cmocka_unit_test_teardown(test_fold_after_end_to_record,
					  teardown),
		cmocka_unit_test_teardown(test_fold_after_end_no_output,
					  teardown),
		cmocka_unit_test_teardown(test_fold_pairs_hybrid, teardown),
		cmocka_unit_test_teardown(test_undone_reset_refunded,
					  teardown),
		cmocka_unit_test_teardown(test_fast_end_across_fold,
					  teardown),
		cmocka_unit_test_teardown(test_switch_after_reset, teardown),
		cmocka_unit_test_teardown(test_switch_inside_reset, teardown),
		cmocka_unit_test_teardown(test_switch_after_clearing_read,
					  teardown),
		cmocka_unit_test_teardown(test_switch_inside_clearing_read,
					  teardown),
		cmocka_unit_test_teardown(test_one_switch_per_region_clearing,
					  teardown),
		cmocka_unit_test_teardown(test_counters_backwards, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
