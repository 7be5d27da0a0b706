/* SPDX-License-Identifier: MIT */
/*
 * Hybrid (Alder Lake) on the emulator: CPUs 0-7 P-cores, 8-15 E-cores, and
 * an RDPMC of fixed counter 3 / PERF_METRICS on an E-core kills the
 * process as the hardware's #GP would.  The tests migrate the thread at
 * the worst moments and prove the guard keeps it alive; a reading it
 * finds on an E-core takes cpu_core's saved counts by read(2) (the
 * E-core group's own tests are in test_hybrid_ecore.c), so such regions
 * come out exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "internal.h"
#include <linux/perf_event.h>

static struct td *open_adl(void)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;
	struct td_info info = { .size = sizeof(info) };

	emu_setup(EMU_ADL);
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_string_equal(info.pmu_name, "cpu_core");
	assert_int_equal(info.path, TD_PATH_RDPMC);
	return td;
}

static int teardown(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

/* On P-cores the guarded read is exact, like the unguarded one. */
static void test_pcore_regions_exact(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_truth(&a);
	emu_run(40000000, &MIX_CHAIN);
	emu_migrate(3); /* P-core to P-core: save/restore, still counted */
	emu_run(40000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	/* one schedule-in re-quantises: 2 x (8e7 + 4e7) / (255 x 8e7) */
	assert_within(&res, &t, 0.016);
	td_close(td);
}

/*
 * Err of a region of R slots begun or ended on an E-core: the readings'
 * raw SLOTS (up to S each), the kernel counts' scale S + 255 and twice
 * one restore (the schedule-out) of it: under 6 S / (255 R); doubled
 * when the region reports level 2 (all its slots from P-cores).
 */
#define ECORE_END_BOUND(S, R) (12.0 * (S) / (255.0 * (R)))

/*
 * A region moved to an E-core right before the RDPMC of its begin (the
 * guard aborts there: none of the fixed selectors read on an E-core),
 * back on a P-core for its second half: alive, exact within its err.
 * S: the raw SLOTS the readings carry (no reset under TD_RESET_NEVER).
 */
static void region_migrated_at_begin(struct td *td, struct td_region *r,
				     double s)
{
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;

	emu_truth(&a);
	emu_migrate_at_rdpmc(9);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_run(5000000, &MIX_DRAM);
	emu_migrate(2);
	emu_run(5000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, ECORE_END_BOUND(s, 1e7));
}

/* The same, moved right before the RDPMC of its end. */
static void region_migrated_at_end(struct td *td, struct td_region *r,
				   double s)
{
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_run(5000000, &MIX_DRAM);
	emu_truth(&b);
	emu_migrate_at_rdpmc(15);
	assert_int_equal(td_region_end(td, r, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, ECORE_END_BOUND(s, 5e6));
}

/* A region all on a P-core, 3e7 slots, within bound. */
static void region_on_pcore(struct td *td, struct td_region *r, double bound)
{
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_run(30000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, bound);
}

/* Migration to an E-core right before the RDPMC of begin: alive, exact. */
static void test_migrate_at_begin_rdpmc(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	region_migrated_at_begin(td, &r, 6e6);
	/* the next region, all on a P-core, is good again */
	region_on_pcore(td, &r, 0.02);
	td_close(td);
}

/* Migration to an E-core right before the RDPMC of end: alive, exact. */
static void test_migrate_at_end_rdpmc(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	region_migrated_at_end(td, &r, 6e6);
	td_close(td);
}

/*
 * Whole region on an E-core, then one begun on an E-core after a switch
 * between E-cores (the E page rewritten, cpu_core's not: the time offset
 * learnt at the first region's readings pairs them) and ended on a
 * P-core: both exact.
 */
static void test_ecore_region(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	emu_migrate(8);
	t = measure_region(td, &r, 5000000, &MIX_DRAM, &res);
	assert_within(&res, &t, ECORE_END_BOUND(1e6, 5e6));
	emu_migrate(9);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_migrate(0);
	emu_run(5000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_within(&res, &t, ECORE_END_BOUND(6e6, 5e6));
	td_close(td);
}

/*
 * The test can fail: the same migration with the guard bypassed (an
 * unguarded RDPMC, as a library without the guard would do after its
 * index check) kills the child with the emulated #GP.
 */
static void test_unguarded_rdpmc_dies(void **state)
{
	struct td *td = open_adl();
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2); /* the emulator's #GP message */
		emu_migrate_at_rdpmc(8);
		__asm__ __volatile__("rdpmc" ::"c"((1u << 30) | 3)
				     : "rax", "rdx");
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	td_close(td);
}

/* No registered rseq area: no guard possible, so the read(2) path. */
static void test_no_rseq_falls_back_to_read(void **state)
{
	struct td *td = NULL;
	struct td_info info = { .size = sizeof(info) };
	struct td_region r = { { 0 } };
	struct td_result res;

	(void)state;
	emu_setup(EMU_ADL);
	emu_rseq_set_cpu_raw((uint32_t)-2); /* RSEQ_CPU_ID_REGISTRATION_FAILED */
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_READ);
	emu_migrate_at_rdpmc(8); /* never reached: no RDPMC on this path */
	emu_migrate(8);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_DRAM);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_READ_PATH);
	td_close(td);
}

/* Non-hybrid parts never look at rseq: a bogus area changes nothing. */
static void test_non_hybrid_skips_guard(void **state)
{
	struct td *td = NULL;
	struct td_info info = { .size = sizeof(info) };

	(void)state;
	emu_setup(EMU_SPR);
	emu_rseq_set_cpu_raw((uint32_t)-2);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_query(td, &info), 0);
	assert_int_equal(info.path, TD_PATH_RDPMC);
	td_close(td);
}

/*
 * The hybrid source's fast path (hybrid_fast.c), on a region object used
 * before: on a P-core a pair is the four guarded RDPMCs and no system
 * call, exact; a migration to an E-core just before the begin's or the
 * end's guarded read (the rseq section aborts: no RDPMC of the fixed
 * counters there) or a stint on an E-core inside the region sends it to
 * the slow path, alive and within the E-core bound; the default policy
 * (auto) keeps its resets.
 */
static void warm(struct td *td, struct td_region *r)
{
	for (int i = 0; i < 3; i++) {
		assert_int_equal(td_region_begin(td, r), 0);
		emu_run(200000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, r, NULL), 0);
	}
}

/*
 * A warm region of 2e6 slots whose begin meets ev (a stint on an E-core
 * after the fast begin's checks, before its guarded read): the stint is
 * not the region's, whose slots must be exactly its own.  Returns the
 * truth over the region, its result in res.
 */
static struct truth_frac
region_after_begin_stint(struct td *td, struct td_region *r,
			 const struct emu_sched_event *ev,
			 struct td_result *res)
{
	struct emu_truth a, b;

	warm(td, r);
	emu_schedule(EMU_AT_RDPMC, ev);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_truth(&a);
	emu_run(2000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, r, res), 0);
	assert_int_equal(res->slots, b.slots - a.slots);
	return truth_between(&a, &b);
}

static void test_fast_path_guarded(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct emu_stats s0, s1;
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	/* moved to an E-core just before the begin's guarded read */
	warm(td, &r);
	region_migrated_at_begin(td, &r, 6e6);
	/* ... just before the end's: raw SLOTS since the last schedule-in,
	 * the first case's last 5e6, the warm-up's 6e5 and this 5e6 */
	warm(td, &r);
	region_migrated_at_end(td, &r, 1.1e7);
	/* a stint on an E-core inside the region, back on a P-core */
	emu_migrate(2);
	warm(td, &r);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_CHAIN);
	emu_migrate(10);
	emu_run(3000000, &MIX_DRAM);
	emu_migrate(3);
	emu_run(5000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	/* the raw SLOTS entering it: 6e5 at begin, 5.6e6 at the
	 * schedule-out, 5e6 at end */
	assert_within(&res, &t, ECORE_END_BOUND(1.1e7, 1.3e7));
	/* switched out and in on P-cores inside the region (cpu_core's
	 * page rewritten, not cpu_atom's), SLOTS past their begin again */
	warm(td, &r);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(100000, &MIX_CHAIN);
	emu_context_switch(777777);
	emu_run(8000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	/* the end sees the page moved and takes the slow path, whose err
	 * counts the schedule-in's re-quantisation: exact within it */
	assert_within(&res, &t, 0.1);
	/* on a P-core: one rseq section at each end, its three RDPMCs
	 * SLOTS, PERF_METRICS and INT_MISC.UOP_DROPPING (pm_uop.c),
	 * nothing else; raw SLOTS up to
	 * 3.6e7 (no reset since the schedule-in after the stint) */
	warm(td, &r);
	emu_stats(&s0);
	region_on_pcore(td, &r, ECORE_END_BOUND(3.6e7, 3e7));
	emu_stats(&s1);
	assert_int_equal(s1.rdpmcs - s0.rdpmcs, 6);
	assert_int_equal(s1.syscalls - s0.syscalls, 0);
	td_close(td);
}

/*
 * RDPMCs a fast begin (end: at_end) executes when the thread is moved to
 * an E-core just before the (skip + 1)th RDPMC of its guarded section.
 */
static unsigned long rdpmcs_migrated_at(struct td *td, struct td_region *r,
					unsigned skip, bool at_end)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = 9,
				      .skip = skip };
	struct emu_stats s0, s1;
	struct td_result res;

	emu_migrate(2);
	warm(td, r);
	assert_int_equal(td_region_begin(td, r), 0);
	emu_run(200000, &MIX_CHAIN);
	if (at_end)
		emu_schedule(EMU_AT_RDPMC, &ev);
	else
		assert_int_equal(td_region_end(td, r, NULL), 0);
	emu_stats(&s0);
	if (at_end) {
		assert_int_equal(td_region_end(td, r, &res), 0);
	} else {
		emu_schedule(EMU_AT_RDPMC, &ev);
		assert_int_equal(td_region_begin(td, r), 0);
	}
	emu_stats(&s1);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	if (!at_end) {
		emu_run(200000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, r, &res), 0);
	}
	return s1.rdpmcs - s0.rdpmcs;
}

/*
 * The fast path's three reads (SLOTS, PERF_METRICS, INT_MISC.
 * UOP_DROPPING) are all inside rseq sections, the drop's counter too:
 * the end's one section reads it third, the begin's first section
 * second (after SLOTS; PERF_METRICS alone in its second).  A move to an
 * E-core just before the drop's RDPMC aborts its section, so that it
 * does not execute there (an ordinary counter's selector may name a
 * counter the E-core lacks, or another's).  Against a move before the
 * section's first RDPMC, at the begin and at the end: exactly the
 * RDPMCs before the drop's in its section more, whatever the slow path
 * that follows reads.
 */
static void test_fast_path_uop_in_section(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	for (int end = 0; end < 2; end++) {
		unsigned before = end ? 2 : 1; /* RDPMCs before the drop's */
		unsigned long first = rdpmcs_migrated_at(td, &r, 0, end);
		unsigned long drop = rdpmcs_migrated_at(td, &r, before, end);

		assert_int_equal(drop, first + before);
	}
	td_close(td);
}

/*
 * A stint on an E-core that comes after the fast begin's checks (the
 * region's key, the E-cores quiet) and is over before its guarded read
 * (preempted between the two, outside the rseq section: nothing
 * aborts): the begin's reading is taken after the stint, so the stint is
 * not the region's.  Its E-core slots must not be counted in it: the
 * page's lock moved, so the begin is the slow path's, exact.
 */
static void test_fast_begin_stint_before_guard(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct emu_sched_event ev = { .kind = EMU_SCHED_STINT, .cpu = 9,
				      .slots = 8000000, .mix = MIX_DRAM };
	struct td_result res;
	struct truth_frac t;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	t = region_after_begin_stint(td, &r, &ev, &res);
	assert_within(&res, &t, ECORE_END_BOUND(1.1e7, 2e6));
	td_close(td);
}

/*
 * The fast begin reads SLOTS in one rseq section and PERF_METRICS in a
 * second (hybrid_fast.c), opening the region between them.  Planned at
 * the begin's third RDPMC (SLOTS, INT_MISC.UOP_DROPPING, then
 * PERF_METRICS): a stint on an E-core between the two sections (nothing
 * aborts outside them), which moves cpu_core's page, or a signal inside
 * the second, which aborts it.  Either way the begin is the slow path's,
 * exact, and the stretch of open regions the fast begin opened is
 * closed again: the region's stretch measures its own slots once, and
 * nothing is left open after its end.
 */
static void begin_interrupted_between_sections(enum emu_sched_kind kind)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct emu_sched_event ev = { .kind = kind, .cpu = 9, .skip = 2,
				      .slots = 8000000, .mix = MIX_DRAM };
	struct td_result res;
	struct truth_frac t;
	struct emu_truth a, b;
	uint64_t measured;

	emu_run(1000000, &MIX_STREAM);
	warm(td, &r);
	measured = td->policy.measured_less;
	emu_schedule(EMU_AT_RDPMC, &ev);
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	emu_truth(&a);
	emu_run(2000000, &MIX_BRANCHY);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	assert_int_equal(res.slots, b.slots - a.slots);
	assert_within(&res, &t, ECORE_END_BOUND(1.1e7, 2e6));
	assert_int_equal(td->policy.open_less1, -1);
	assert_int_equal(td->policy.measured_less - measured, res.slots);
	td_close(td);
}

static void test_fast_begin_stint_between_sections(void **state)
{
	(void)state;
	begin_interrupted_between_sections(EMU_SCHED_STINT);
}

static void test_fast_begin_signal_in_second_section(void **state)
{
	(void)state;
	begin_interrupted_between_sections(EMU_SCHED_SIGNAL);
}

/*
 * cpu_core's group switched out while the thread stays on a P-core (the
 * kernel multiplexing it out: another event holds fixed counter 3 there;
 * its page then shows index 0): a region ended then, or begun while the
 * switch-out races the begin's checks, must not RDPMC selector
 * index - 1 = 0xffffffff (a #GP on hardware, the emulator's death); the
 * slow path (pm_reading.c rdpmc_read) gives up on index 0.  In a child,
 * whose death the parent sees.
 */
static void fast_end_switched_out_child(void)
{
	struct td *td = NULL;
	struct td_options o = TD_OPTIONS_INIT;
	struct td_region r = { { 0 } };
	struct td_result res;
	int fd = open("/dev/null", O_WRONLY);

	if (fd >= 0)
		dup2(fd, 2); /* the emulator's #GP message */
	o.reset_policy = TD_RESET_NEVER;
	if (td_open(&td, &o) != 0)
		_exit(2);
	for (int i = 0; i < 3; i++) {
		if (td_region_begin(td, &r) != 0)
			_exit(3);
		emu_run(200000, &MIX_CHAIN);
		if (td_region_end(td, &r, NULL) != 0)
			_exit(3);
	}
	if (td_region_begin(td, &r) != 0)
		_exit(4);
	emu_run(2000000, &MIX_BRANCHY);
	emu_deschedule(); /* on CPU 0, a P-core: index 0 */
	if (td_region_end(td, &r, &res) != 0)
		_exit(5);
	emu_reschedule();
	td_close(td);
	_exit(0);
}

static void test_fast_end_switched_out(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	emu_setup(EMU_ADL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		fast_end_switched_out_child();
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFSIGNALED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Records on the hybrid fast path: on P-cores each record keeps the two
 * readings (PERF_METRICS' records of readings), one whose region ran on
 * an E-core too goes the general route; decoded, each is its region.
 */
static void test_fast_path_records(void **state)
{
	struct td *td = open_adl();
	struct td_region r = { { 0 } };
	struct td_record recs[6];
	struct truth_frac t[6];
	struct emu_truth a, b;
	size_t n = 0;

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	warm(td, &r);
	assert_int_equal(td_records_attach(td, recs, 6), 0);
	for (int i = 0; i < 6; i++) {
		emu_truth(&a);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(2000000, i & 1 ? &MIX_DRAM : &MIX_BRANCHY);
		if (i == 3) { /* a stint on an E-core inside this one */
			emu_migrate(12);
			emu_run(1000000, &MIX_CHAIN);
			emu_migrate(1);
		}
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, NULL), 0);
		t[i] = truth_between(&a, &b);
	}
	assert_int_equal(td_records_detach(td, &n, NULL), 0);
	assert_int_equal(n, 6);
	for (int i = 0; i < 6; i++) {
		struct td_result res;

		assert_int_equal(td_record_decode(&recs[i], &res), 0);
		assert_within(&res, &t[i], ECORE_END_BOUND(1.6e7, 2e6));
	}
	td_close(td);
}

/* An Alder Lake that offers metrics-clear, SLOTS never reset. */
static struct td *open_adl_clear(void)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(EMU_ADL);
	emu_offer_metrics_clear();
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	return td;
}

/*
 * A hybrid part that offers metrics-clear (Lunar Lake, Arrow Lake): the
 * hybrid source keeps the mode, its one-pass reads inside the rseq guard.
 * A move to another P-core planned at every read, before either RDPMC
 * of the guarded section, aborts it, and its retry reads the same
 * interval (nothing cleared before the section's last RDPMC): every region within its err, on the fast
 * path and the slow one (a result, none).  Each stretch of work, before
 * a region and in it, is longer than the one before, so that every move
 * finds more slots than the last schedule-out saved and the kernel's
 * count grows: the restore is proven ours (pm_reading.c
 * clear_judge_restores; a count that did not grow could be a restore of
 * values read already, and flags).  A move to an E-core at a read
 * is survived (that region begun unread, flagged), and the next region
 * all on a P-core is good again.
 */
static void test_metrics_clear_offered(void **state)
{
	struct td_info info = { .size = sizeof(info) };
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct td *td = open_adl_clear();

	(void)state;
	assert_int_equal(td_query(td, &info), 0);
	assert_string_equal(info.pmu_name, "cpu_core");
	assert_int_equal(info.path, TD_PATH_RDPMC);
	assert_true(info.flags & TD_INFO_METRICS_CLEAR);
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 8; i++) {
		/* at the section's first RDPMC, or its second (the trigger) */
		struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE,
					      .skip = i & 1 };

		ev.cpu = 1 + i % 7;
		emu_run(10000000 + 20000000 * (uint64_t)i, &MIX_STREAM);
		emu_schedule(EMU_AT_RDPMC, &ev);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_truth(&a);
		emu_run(20000000 + 20000000 * (uint64_t)i,
			i & 1 ? &MIX_DRAM : &MIX_BRANCHY);
		emu_truth(&b);
		ev.cpu = 7 - i % 7;
		emu_schedule(EMU_AT_RDPMC, &ev);
		assert_int_equal(td_region_end(td, &r, i % 3 ? &res : NULL), 0);
		assert_false(emu_sched_pending(EMU_AT_RDPMC));
		if (!(i % 3))
			continue;
		t = truth_between(&a, &b);
		/* one reading's 8-bit fields and a restore: 2 x 2 / 255 */
		assert_within(&res, &t, 4.0 / 255);
	}
	emu_migrate_at_rdpmc(9);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(5000000, &MIX_DRAM);
	emu_migrate(2);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE); /* begun unread */
	region_on_pcore(td, &r, 4.0 / 255);
	td_close(td);
}

/*
 * Metrics-clear mode's guarded fast path, a stint on an E-core after
 * the checks and before the guarded reads (outside the rseq section:
 * nothing aborts).  At the begin, as test_fast_begin_stint_before_guard:
 * the stint is not the region's.  At the end: it is, all of it (the
 * E-cores' slots folded by the slow path, which the page's lock sends
 * the reading to).
 */
static void test_clear_stint_before_guard(void **state)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_STINT, .cpu = 9,
				      .slots = 8000000, .mix = MIX_DRAM };
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct td *td = open_adl_clear();

	(void)state;
	emu_run(1000000, &MIX_STREAM);
	t = region_after_begin_stint(td, &r, &ev, &res);
	assert_within(&res, &t, 4.0 / 255);

	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(2000000, &MIX_BRANCHY);
	emu_schedule(EMU_AT_RDPMC, &ev);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	emu_truth(&b);
	assert_false(emu_sched_pending(EMU_AT_RDPMC));
	assert_int_equal(res.slots, b.slots - a.slots);
	td_close(td);
}

/*
 * The slow path's RDPMCs of cpu_core's ordinary counters (the
 * INT_MISC.UOP_DROPPING counter, the memory drill-down's events) on a
 * P-core counter an E-core lacks: others' CPU-wide cpu_core events hold
 * the low ones (emu_gp_hold_pcore), so the library's events get
 * counters up to 7 of a P-core's 8, where an E-core has 6
 * (arch/x86/events/intel/core.c intel_pmu_init).  A move to an E-core right before any RDPMC of a
 * region's begin or end must not let that RDPMC run there (#GP, the
 * process killed: the emulator's too).  Each move runs in a child whose
 * death the parent sees; the child hands its region's result and truth
 * back through shared memory.
 */
enum pcore_gp_case { GP_DROP, GP_MEMORY };

struct pcore_gp_outcome {
	int reached;  /* the move happened at the RDPMC asked for */
	int top;      /* the drop counter's counter; the drill-down's highest */
	struct td_result res, next;
	struct truth_frac t, next_t;
	double node_excess, next_node_excess; /* node_excess of each */
};

/* UOP_DROPPING on Golden Cove (perf's alderlake/pipeline.json). */
#define UOP_DROPPING_GLC 0x10adull

/* Memory bound's composition: L1, L2, L3, DRAM, store. */
static const double GP_SHARES[5] = { 0.10, 0.20, 0.30, 0.25, 0.15 };

static int top_counter(void)
{
	struct perf_event_attr attrs[32];
	unsigned n = emu_open_attrs(attrs, 32);
	int top = -1;

	for (unsigned i = 0; i < n && i < 32; i++) {
		int c = emu_counter_of(attrs[i].config);

		top = c > top ? c : top;
	}
	return top;
}

/* The reset policy the P-core GP children open with. */
static enum td_reset_policy gp_policy = TD_RESET_NEVER;

static struct td *open_pcore_gp(enum pcore_gp_case c)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	emu_setup(EMU_ADL);
	emu_set_uop_dropping(0.02);
	emu_set_mem_shares(GP_SHARES);
	emu_gp_hold_pcore(c == GP_DROP ? 7 : 2); /* memory: 6 events */
	o.flags = c == GP_MEMORY ? TD_OPT_MEMORY : 0;
	o.reset_policy = gp_policy;
	if (td_open(&td, &o) != 0)
		_exit(2);
	return td;
}

/*
 * The ioctl wrapper's user-mode instructions count in SLOTS, as on a
 * real PMU: after a reset SLOTS is above 0 by the next schedule-out,
 * which saves the registers.
 */
static void count_ioctl_work(void)
{
	emu_set_ioctl_work(40, &MIX_CHAIN);
	emu_set_ioctl_tail(40, &MIX_CHAIN);
}

/*
 * A handle (options flags, the default reset policy) on the profile the
 * test set up, its ioctls counting, after 1e6 slots of work.
 */
static struct td *open_counting_ioctls(unsigned flags)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = NULL;

	count_ioctl_work();
	o.flags = flags;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(1000000, &MIX_STREAM);
	return td;
}

/* How far r's worst drill-down node is beyond r's err from the truth. */
static double node_excess(const struct td_result *r, const struct emu_truth *a,
			  const struct emu_truth *b)
{
	double worst = -1;

	for (int i = 0; i < TD_MEM_COUNT; i++) {
		double truth = (double)(b->mem[i] - a->mem[i]) /
			       (double)(b->slots - a->slots);
		double e = fabs(r->mem[i] - truth) - r->err;

		worst = e > worst ? e : worst;
	}
	return worst;
}

/* The next region, on a P-core, with the drill-down's nodes. */
static void next_region(struct td *td, struct pcore_gp_outcome *out)
{
	struct td_region r = { { 0 } };
	struct emu_truth a, b;

	if (td_region_begin(td, &r) != 0)
		_exit(4);
	emu_truth(&a);
	emu_run(20000000, &MIX_CHAIN);
	emu_truth(&b);
	if (td_region_end(td, &r, &out->next) != 0)
		_exit(4);
	out->next_t = truth_for(&out->next, &a, &b);
	out->next_node_excess = node_excess(&out->next, &a, &b);
}

/*
 * A region of 1e7 slots, the thread moved to E-core 9 before the
 * (skip + 1)th RDPMC of its begin (at_end: of its end, a context switch
 * inside sending it to the slow path), and back to a P-core between.
 */
static void pcore_gp_child(enum pcore_gp_case c, bool at_end, unsigned skip,
			   struct pcore_gp_outcome *out)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = 9,
				      .skip = skip };
	struct emu_sched_event none = { .kind = EMU_SCHED_NONE };
	struct td_region r = { { 0 } };
	struct emu_truth a, b;
	struct td *td = open_pcore_gp(c);
	int fd = open("/dev/null", O_WRONLY);

	if (fd >= 0)
		dup2(fd, 2); /* the emulator's #GP message */
	if (gp_policy != TD_RESET_NEVER)
		count_ioctl_work();
	emu_run(1000000, &MIX_STREAM);
	out->top = c == GP_DROP ? emu_counter_of(UOP_DROPPING_GLC)
				: top_counter();
	if (!at_end)
		emu_schedule(EMU_AT_RDPMC, &ev);
	emu_truth(&a);
	if (td_region_begin(td, &r) != 0)
		_exit(3);
	out->reached = !at_end && !emu_sched_pending(EMU_AT_RDPMC);
	emu_schedule(EMU_AT_RDPMC, &none);
	emu_run(5000000, &MIX_DRAM);
	emu_migrate(2);
	emu_run(2500000, &MIX_CHAIN);
	emu_context_switch(0);
	emu_run(2500000, &MIX_CHAIN);
	emu_truth(&b);
	if (at_end)
		emu_schedule(EMU_AT_RDPMC, &ev);
	if (td_region_end(td, &r, &out->res) != 0)
		_exit(3);
	if (at_end)
		out->reached = !emu_sched_pending(EMU_AT_RDPMC);
	emu_schedule(EMU_AT_RDPMC, &none);
	out->t = truth_for(&out->res, &a, &b);
	out->node_excess = node_excess(&out->res, &a, &b);
	emu_migrate(3);
	if (c == GP_MEMORY)
		next_region(td, out);
	td_close(td);
	_exit(0);
}

/* The child's outcome; fails if it died. */
static void run_pcore_gp(enum pcore_gp_case c, bool at_end, unsigned skip,
			 struct pcore_gp_outcome *out)
{
	int status;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		pcore_gp_child(c, at_end, skip, out);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("%s: killed by signal %d, moved at the %s's RDPMC %u",
			 c == GP_DROP ? "drop counter" : "drill-down",
			 WTERMSIG(status), at_end ? "end" : "begin", skip + 1);
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Each move of case c's child under policy, at the begin's RDPMCs (and,
 * with both_ends, the end's) in turn until the move comes after the
 * last: the library's events on counters the E-core lacks, and check on
 * each move that happened.  Returns their number.
 */
typedef void pcore_gp_check(const struct pcore_gp_outcome *out,
			    bool at_end, unsigned skip);

static unsigned each_pcore_gp_move(enum pcore_gp_case c,
				   enum td_reset_policy policy, bool both_ends,
				   pcore_gp_check *check)
{
	struct pcore_gp_outcome *out =
		mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned moves = 0;

	assert_true(out != MAP_FAILED);
	gp_policy = policy;
	for (int at_end = 0; at_end < (both_ends ? 2 : 1); at_end++) {
		for (unsigned skip = 0; skip < 64; skip++) {
			run_pcore_gp(c, at_end, skip, out);
			assert_true(out->top >= 6);
			if (!out->reached)
				break;
			moves++;
			check(out, at_end, skip);
		}
	}
	gp_policy = TD_RESET_NEVER;
	munmap(out, sizeof(*out));
	return moves;
}

/*
 * Every RDPMC of the begin and of the end in turn, until the move comes
 * after the last: no death, the library's events on counters the E-core
 * lacks, each region within its err of the truth unless flagged (level
 * 1 where it ran on both core types; truth_for: the drill-down leaves no
 * counter for INT_MISC.UOP_DROPPING, so its results are unrefined and
 * held to PERF_METRICS' own frontend bound), its nodes too where it has them,
 * and the next P-core region's nodes within theirs.  Returns the moves
 * that happened.
 *
 * The err bounds, from decode.c's (E + |R - Y|) / Y, doubled with level
 * 2, where E sums each reading's raw SLOTS and the restores' re-
 * quantisation (pm_reading.c), and the emulator's level-1 bytes add up
 * to 0xff (emu_hw_metrics), so R - Y is only the kernel's rounding of
 * its read(2) counts, a few slots.  SLOTS is never reset: at a reading
 * it is at most the P-core slots run since the open.
 *
 * The moved region (1e7 slots, S = 1.1e7 P-core slots before its end):
 * between its readings cpu_core's group is scheduled in twice (the move
 * to CPU 2, the context switch), the move to the E-core is a schedule-
 * out only (td_pm_restores counts schedule-ins).  Worst, the end on the
 * E-core: ecore_p_sample charges the kernel counts' scale S + 255 and
 * twice that per restore; with the begin's 1e6:
 *   E <= 1e6 + (1 + 2 x 2)(1.1e7 + 255) < 6 S,
 * 12 S / (255 R) with level 2: ECORE_END_BOUND(1.1e7, 1e7), which holds
 * the level-2 factor already.  (Begun on the E-core, the P-cores saw
 * 6e6 slots and the region is level 1: below that.)
 *
 * The next region (2e7 slots on CPU 3, S = 3.1e7 before its end): no
 * schedule-in between its two RDPMC readings, E <= 2 S, level 2:
 * 4 S / (255 R), PCORE_L2_BOUND(3.1e7, 2e7).
 */
#define PCORE_L2_BOUND(S, R) (4.0 * (S) / (255.0 * (R)))

static void check_never_reset_move(const struct pcore_gp_outcome *out,
				   bool at_end, unsigned skip)
{
	(void)at_end;
	(void)skip;
	if (!(out->res.flags & TD_RESULT_UNRELIABLE))
		assert_within(&out->res, &out->t, ECORE_END_BOUND(1.1e7, 1e7));
	if (out->res.flags & TD_RESULT_MEMORY)
		assert_true(out->node_excess <= 1e-12);
}

static void check_never_reset_memory_move(const struct pcore_gp_outcome *out,
					  bool at_end, unsigned skip)
{
	check_never_reset_move(out, at_end, skip);
	assert_within(&out->next, &out->next_t, PCORE_L2_BOUND(3.1e7, 2e7));
	assert_true(out->next.flags & TD_RESULT_MEMORY);
	assert_true(out->next_node_excess <= 1e-12);
}

static unsigned check_pcore_gp(enum pcore_gp_case c)
{
	return each_pcore_gp_move(c, TD_RESET_NEVER, true,
				  c == GP_MEMORY ? check_never_reset_memory_move
						 : check_never_reset_move);
}

static void test_drop_counter_off_ecore(void **state)
{
	(void)state;
	assert_true(check_pcore_gp(GP_DROP) >= 4);
}

static void test_drill_down_off_ecore(void **state)
{
	(void)state;
	assert_true(check_pcore_gp(GP_MEMORY) >= 4);
}

/* Within its own err of the truth, or flagged. */
static void check_own_err_move(const struct pcore_gp_outcome *out,
			       bool at_end, unsigned skip)
{
	if (!(out->res.flags & TD_RESULT_UNRELIABLE) &&
	    max_error(&out->res, &out->t) > out->res.err + 1e-12)
		fail_msg("moved at the %s's RDPMC %u: error %.5f err %.5f",
			 at_end ? "end" : "begin", skip + 1,
			 max_error(&out->res, &out->t), out->res.err);
}

/*
 * Under the default reset policy the handle's first begin resets the
 * group after its reading: moved to an E-core at any RDPMC of that begin
 * (the drop counter's too, right after SLOTS and PERF_METRICS were read
 * on the P-core), the reset may find cpu_core's group switched out.
 * Each region within its own err of the truth, or flagged.
 */
static void test_drop_counter_off_ecore_default_reset(void **state)
{
	(void)state;
	assert_true(each_pcore_gp_move(GP_DROP, TD_RESET_DEFAULT, false,
				       check_own_err_move) >= 4);
}

/*
 * The same reset issued while the thread is on an E-core: it moves there
 * as the ioctl enters the kernel, after the begin's reading on a
 * P-core, and comes back to one inside the region.
 */
static void test_reset_while_ecore(void **state)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = 9 };
	struct td_region r = { { 0 } };
	struct td *td;
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;
	struct emu_stats st;

	(void)state;
	emu_setup(EMU_ADL);
	td = open_counting_ioctls(0);
	emu_schedule(EMU_AT_RESET, &ev);
	emu_truth(&a);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_stats(&st);
	assert_int_equal(st.resets, 1); /* the reset was asked for */
	assert_false(emu_sched_pending(EMU_AT_RESET));
	emu_run(5000000, &MIX_DRAM);
	emu_migrate(2);
	emu_run(5000000, &MIX_CHAIN);
	emu_truth(&b);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	t = truth_between(&a, &b);
	if (!(res.flags & TD_RESULT_UNRELIABLE) &&
	    max_error(&res, &t) > res.err + 1e-12)
		fail_msg("error %.5f err %.5f", max_error(&res, &t), res.err);
	/* the next region, all on a P-core, within its err */
	region_on_pcore(td, &r, 0.02);
	td_close(td);
}

/*
 * Memory drill-down beside 2 counters others hold: a P-core region under
 * the default reset policy, no migration.  Its 6 events take the other 6
 * of the P-core's 8 (arch/x86/events/intel/core.c intel_pmu_init: 8 on
 * Golden Cove), none is left for INT_MISC.UOP_DROPPING, so the results
 * are unrefined: PERF_METRICS' own frontend bound, the dropped uops'
 * share (MIX_CHAIN's machine clears, 0.01) above the truth's and bad
 * speculation that much below it, each within err of that.
 */
static void test_drill_down_unrefined_default_reset(void **state)
{
	struct td_region r = { { 0 } };
	struct td *td;
	struct td_result res;
	struct emu_truth a, b;
	struct truth_frac t;

	(void)state;
	emu_setup(EMU_ADL);
	emu_set_uop_dropping(0.02);
	emu_set_mem_shares(GP_SHARES);
	emu_gp_hold_pcore(2);
	td = open_counting_ioctls(TD_OPT_MEMORY);
	for (int i = 0; i < 3; i++) {
		emu_truth(&a);
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(20000000, &MIX_CHAIN);
		emu_truth(&b);
		assert_int_equal(td_region_end(td, &r, &res), 0);
		assert_true(res.flags & TD_RESULT_FE_UNREFINED);
		assert_true(res.flags & TD_RESULT_MEMORY);
		assert_false(res.flags & TD_RESULT_UNRELIABLE);
		assert_true(b.uop_drop - a.uop_drop == 200000); /* 0.01 */
		t = truth_unrefined(&a, &b);
		assert_within(&res, &t, res.err);
	}
	td_close(td);
}

/*
 * test_drill_down_off_ecore's moves under the default reset policy:
 * each region (unrefined, as above) within its own err of the truth, or
 * flagged, its nodes too, and the next P-core region's.
 */
static void check_own_err_memory_move(const struct pcore_gp_outcome *out,
				      bool at_end, unsigned skip)
{
	check_own_err_move(out, at_end, skip);
	if (out->res.flags & TD_RESULT_MEMORY)
		assert_true(out->node_excess <= 1e-12);
	assert_true(out->next.flags & TD_RESULT_FE_UNREFINED);
	assert_true(out->next.flags & TD_RESULT_MEMORY);
	assert_within(&out->next, &out->next_t, out->next.err);
	assert_true(out->next_node_excess <= 1e-12);
}

static void test_drill_down_off_ecore_default_reset(void **state)
{
	(void)state;
	assert_true(each_pcore_gp_move(GP_MEMORY, TD_RESET_DEFAULT, true,
				       check_own_err_memory_move) >= 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pcore_regions_exact, teardown),
		cmocka_unit_test_teardown(test_migrate_at_begin_rdpmc, teardown),
		cmocka_unit_test_teardown(test_migrate_at_end_rdpmc, teardown),
		cmocka_unit_test_teardown(test_ecore_region, teardown),
		cmocka_unit_test_teardown(test_fast_path_guarded, teardown),
		cmocka_unit_test_teardown(test_fast_path_uop_in_section,
					  teardown),
		cmocka_unit_test_teardown(test_fast_path_records, teardown),
		cmocka_unit_test_teardown(test_metrics_clear_offered, teardown),
		cmocka_unit_test_teardown(test_clear_stint_before_guard,
					  teardown),
		cmocka_unit_test_teardown(test_fast_begin_stint_before_guard,
					  teardown),
		cmocka_unit_test_teardown(test_fast_begin_stint_between_sections,
					  teardown),
		cmocka_unit_test_teardown(test_fast_begin_signal_in_second_section,
					  teardown),
		cmocka_unit_test_teardown(test_fast_end_switched_out, teardown),
		cmocka_unit_test_teardown(test_unguarded_rdpmc_dies, teardown),
		cmocka_unit_test_teardown(test_no_rseq_falls_back_to_read,
					  teardown),
		cmocka_unit_test_teardown(test_non_hybrid_skips_guard,
					  teardown),
		cmocka_unit_test_teardown(test_drop_counter_off_ecore,
					  teardown),
		cmocka_unit_test_teardown(test_drill_down_off_ecore, teardown),
		cmocka_unit_test_teardown(test_drop_counter_off_ecore_default_reset,
					  teardown),
		cmocka_unit_test_teardown(test_reset_while_ecore, teardown),
		cmocka_unit_test_teardown(test_drill_down_unrefined_default_reset,
					  teardown),
		cmocka_unit_test_teardown(test_drill_down_off_ecore_default_reset,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
