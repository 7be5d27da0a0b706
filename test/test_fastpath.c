/* SPDX-License-Identifier: MIT */
/*
 * The fast path's own rules (pm_fast.c, owner.c): one fast handle per
 * thread named by a thread-local pointer, regions that copy the handle's
 * slow-path state only when its version (key) changed, a policy threshold
 * learnt at every fast end, and handle memory that outlives a close by
 * another thread while the owner's pointer may still name it.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "internal.h"

static int teardown(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

/*
 * Once a region object has been used, a pair without a result reads
 * SLOTS and PERF_METRICS at begin and SLOTS alone at end: three RDPMCs,
 * and INT_MISC.UOP_DROPPING at begin where the core's frontend bound
 * subtracts it (pm_uop.c; Sapphire Rapids does): four, no system call.
 * Guards the fast path against silently going slow.
 */
static void test_pair_is_four_rdpmcs(void **state)
{
	struct td_region r = { { 0 } };
	struct emu_stats a, b;
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 3; i++) { /* learn the region's length */
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(50000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, &r, NULL), 0);
	}
	emu_stats(&a);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(50000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, &r, NULL), 0);
	}
	emu_stats(&b);
	assert_int_equal(b.rdpmcs - a.rdpmcs, 40);
	assert_int_equal(b.syscalls - a.syscalls, 0);
	td_close(td);
}

/*
 * Two handles in one thread: the second cannot be the thread's fast
 * handle and runs on the slow path; a region object used alternately with
 * both must never take one handle's state for the other's.
 */
static void test_two_handles_one_region(void **state)
{
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_DRAM, &MIX_STREAM };
	struct td_region r = { { 0 } };
	struct td *a, *b;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&a, NULL), 0);
	assert_int_equal(td_open(&b, NULL), 0);
	emu_run(5000000, &MIX_STREAM);
	for (int i = 0; i < 40; i++) {
		struct td *td = i % 3 ? a : b;
		struct td_result res;
		struct truth_frac t = measure_region(td, &r, 2000000 + 100000 * i,
					      mixes[i % 4], &res);

		/* the first call: length unknown, nothing measured, no reset */
		assert_within(&res, &t, i == 0 ? 1.0 : 0.02);
		assert_int_equal(res.slots, 2000000 + 100000 * i);
	}
	td_close(b);
	td_close(a);
}

/*
 * A region's state copy is refreshed after the handle folded (a reset
 * issued at another region's begin): alternate a long region, whose begin
 * resets, with short ones, all exact in slots and within their err.
 */
static void test_copy_refreshed_after_fold(void **state)
{
	struct td_region lng = { { 0 } }, shrt = { { 0 } };
	struct td_info info = { .size = sizeof(info) };
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 30; i++) {
		struct td_result rl, rs;
		struct truth_frac tl, ts;

		tl = measure_region(td, &lng, 50000000, &MIX_DRAM, &rl);
		ts = measure_region(td, &shrt, 300000, i % 2 ? &MIX_CHAIN
						      : &MIX_BRANCHY, &rs);
		assert_within(&rl, &tl, 0.01);
		assert_int_equal(rl.slots, 50000000);
		assert_int_equal(rs.slots, 300000);
		assert_false(rs.flags & TD_RESULT_UNRELIABLE);
		assert_true(max_error(&rs, &ts) <= rs.err + 1e-12);
	}
	assert_int_equal(td_query(td, &info), 0);
	assert_true(info.resets >= 20); /* the long regions did reset */
	td_close(td);
}

/*
 * The policy learns a region's length at every end, fast ones included:
 * after a long phase, a region that turns short must get its resets at
 * the short length's threshold, not the long one's (which would let SLOTS
 * since the reset grow to ~1.4e7 and err to ~0.2).
 */
static void test_threshold_follows_shorter_region(void **state)
{
	struct td_region r = { { 0 } };
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < 4; i++) { /* learnt by an end with a result */
		struct td_result res;

		measure_region(td, &r, 100000000, &MIX_CHAIN, &res);
	}
	for (int i = 0; i < 60; i++) { /* learnt by fast ends, no result */
		struct td_result res;
		bool check = i % 10 == 9;
		struct truth_frac t = measure_region(td, &r, 1000000,
					      i % 2 ? &MIX_DRAM : &MIX_BRANCHY,
					      check ? &res : NULL);

		if (check)
			assert_within(&res, &t, 0.03);
	}
	td_close(td);
}

struct opener {
	struct td *td;
	struct td_region r;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stage;
	int begin_err;
};

static void wait_stage(struct opener *o, int stage)
{
	pthread_mutex_lock(&o->lock);
	while (o->stage < stage)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

static void set_stage(struct opener *o, int stage)
{
	pthread_mutex_lock(&o->lock);
	o->stage = stage;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
}

/* Opens a handle, lets main close it, then tries main's new handle. */
static void *owner_thread(void *arg)
{
	struct opener *o = arg;

	if (td_open(&o->td, NULL) < 0)
		o->td = NULL;
	set_stage(o, 1);
	wait_stage(o, 2);           /* main closed ours, opened its own */
	o->begin_err = td_region_begin(o->td, &o->r);
	return NULL;
}

/*
 * Fill this thread's malloc cache for the size of a handle, so that a
 * handle freed now goes where the next calloc() of that size looks first
 * (glibc: tcache holds 7 chunks per size and calloc() bypasses it; with
 * one arena, set in main, other threads' chunks come back here too).
 */
static void crowd_allocator(void)
{
	void *p[8];

	for (int i = 0; i < 8; i++)
		p[i] = malloc(sizeof(struct td));
	for (int i = 0; i < 8; i++)
		free(p[i]);
}

/*
 * Thread A opens a handle; the main thread closes it and opens new ones,
 * which the allocator would happily place at the same address.  A's
 * thread-local pointer still names the old address: its memory must not
 * be handed out again while A lives, and a new handle must still be
 * refused to A (-EPERM), never read on A's fast path.
 */
static void close_by_other_thread(enum emu_profile profile, int handles)
{
	struct opener o = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	struct td *mine[16];
	void *blocks[16];
	uintptr_t old;
	pthread_t t;

	emu_setup(profile);
	assert_int_equal(pthread_create(&t, NULL, owner_thread, &o), 0);
	wait_stage(&o, 1);
	assert_non_null(o.td);
	old = (uintptr_t)o.td;
	crowd_allocator();
	td_close(o.td);
	/* new handles (as many as the PMU's counters allow), then plain
	 * blocks of a handle's size: none may land at the old address */
	for (int i = 0; i < handles; i++) {
		assert_int_equal(td_open(&mine[i], NULL), 0);
		assert_true((uintptr_t)mine[i] != old);
	}
	for (int i = 0; i < 16; i++) {
		blocks[i] = calloc(1, sizeof(struct td));
		assert_true((uintptr_t)blocks[i] != old);
	}
	o.td = mine[0];
	set_stage(&o, 2);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(o.begin_err, -EPERM);
	for (int i = 0; i < 16; i++)
		free(blocks[i]);
	for (int i = 0; i < handles; i++)
		td_close(mine[i]);
}

/*
 * The fixed-selector path's pointer (td_fast.td, Sapphire Rapids) and a
 * source's own (td_fast.src_td: Zen 4's ordinary counters) alike.
 */
static void test_close_by_other_thread(void **state)
{
	(void)state;
	close_by_other_thread(EMU_SPR, 16);
	emu_teardown();
	close_by_other_thread(EMU_ZEN4, 1); /* six counters: one group */
}

/*
 * Untrusted events are counted, not just noticed: a long outer region
 * spanning hundreds of foreign resets (here 257, one more than a byte
 * holds) must be flagged, never reported as if it had lost nothing.
 */
static void test_many_foreign_resets_flagged(void **state)
{
	struct td_region outer = { { 0 } }, inner = { { 0 } };
	struct td_result res;
	struct td *td;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &outer), 0);
	for (int i = 0; i < 257; i++) {
		assert_int_equal(td_region_begin(td, &inner), 0);
		emu_run(10000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, &inner, NULL), 0);
		emu_run(500000, &MIX_CHAIN);
		emu_foreign_read();
	}
	assert_int_equal(td_region_end(td, &outer, &res), 0);
	assert_true(res.flags & TD_RESULT_UNRELIABLE);
	td_close(td);
}

/* In the child: wait for its first thread to exit, then leave at once
 * (no exit handlers: the parent's copied state is not the child's leak). */
static void *reap_and_exit(void *arg)
{
	pthread_join(*(pthread_t *)arg, NULL);
	_exit(0);
}

/*
 * A fork child closes its inherited handle, as it should, then its thread
 * exits: nothing may touch the freed handle at thread exit (the ASan run
 * of this test sees it).  Not under valgrind: once the child's first
 * thread has exited, memcheck counts everything only its stack referred
 * to, inherited from the parent, as leaked, and fails the child.
 */
static void test_fork_child_close_then_thread_exit(void **state)
{
	struct td *td;
	int status;
	pid_t pid;

	(void)state;
	if (getenv("TD_UNDER_VALGRIND"))
		skip();
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static pthread_t first, reaper;

		first = pthread_self();
		td_close(td);
		if (pthread_create(&reaper, NULL, reap_and_exit, &first) != 0)
			_exit(3);
		pthread_exit(NULL); /* runs thread-specific destructors */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	td_close(td);
}

int main(void)
{
	mallopt(M_ARENA_MAX, 1); /* test_close_by_other_thread: one arena */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pair_is_four_rdpmcs, teardown),
		cmocka_unit_test_teardown(test_two_handles_one_region,
					  teardown),
		cmocka_unit_test_teardown(test_copy_refreshed_after_fold,
					  teardown),
		cmocka_unit_test_teardown(test_threshold_follows_shorter_region,
					  teardown),
		cmocka_unit_test_teardown(test_close_by_other_thread, teardown),
		cmocka_unit_test_teardown(test_many_foreign_resets_flagged,
					  teardown),
		cmocka_unit_test_teardown(test_fork_child_close_then_thread_exit,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
