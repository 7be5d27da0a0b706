/* SPDX-License-Identifier: MIT */
/*
 * Threads: one handle per thread, many threads at once.  Each thread opens
 * its own handle and measures TD_STRESS_REGIONS (default 100,000) regions
 * of known composition on its own emulated CPU; every result must be
 * reliable, exact in slots and within its own err.  Also run under
 * ThreadSanitizer (make test-tsan).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define NR_THREADS 8

struct worker {
	pthread_t tid;
	long regions;
	long bad;           /* results out of their err, or unreliable */
	int open_err;
	double worst;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	struct td_region r = { { 0 } };
	struct td_result res;
	struct emu_truth a, b;
	struct td *td;

	w->open_err = td_open(&td, NULL);
	if (w->open_err < 0)
		return NULL;
	emu_run(1000000, &MIX_STREAM);
	for (long i = 0; i < w->regions; i++) {
		uint64_t slots = 1000000 + (uint64_t)(i % 7) * 100000;
		struct truth_frac t;
		double e;

		if (td_region_begin(td, &r) < 0) {
			w->bad++;
			continue;
		}
		emu_truth(&a);
		emu_run(slots, mixes[i % 4]);
		emu_truth(&b);
		if (td_region_end(td, &r, &res) < 0) {
			w->bad++;
			continue;
		}
		t = truth_between(&a, &b);
		e = max_error(&res, &t);
		if ((res.flags & TD_RESULT_UNRELIABLE) || res.slots != slots ||
		    e > res.err + 1e-12 || res.err > 0.05)
			w->bad++;
		if (e > w->worst)
			w->worst = e;
	}
	td_close(td);
	return NULL;
}

static void test_threads_stress(void **state)
{
	struct worker w[NR_THREADS];
	const char *env = getenv("TD_STRESS_REGIONS");
	long n = env ? atol(env) : 100000;
	struct emu_stats s;

	(void)state;
	emu_setup(EMU_SPR);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < NR_THREADS; i++) {
		w[i].regions = n;
		assert_int_equal(pthread_create(&w[i].tid, NULL, work, &w[i]),
				 0);
	}
	for (int i = 0; i < NR_THREADS; i++) {
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
		assert_int_equal(w[i].open_err, 0);
		assert_int_equal(w[i].bad, 0);
		assert_true(w[i].worst < 0.05);
	}
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
	assert_true(s.rdpmcs >= (unsigned long)(NR_THREADS * n * 4));
	print_message("%d threads x %ld regions: all within their err\n",
		      NR_THREADS, n);
	emu_teardown();
}

/* A handle used from another thread: -EPERM at begin and end, no harm. */
struct foreign {
	struct td *td;
	struct td_region *r;
	int begin_err, end_err;
};

static void *use_foreign(void *arg)
{
	struct foreign *f = arg;
	struct td_region mine = { { 0 } };
	struct td_result res;

	f->begin_err = td_region_begin(f->td, &mine);
	f->end_err = td_region_end(f->td, f->r, &res);
	return NULL;
}

static void test_wrong_thread(void **state)
{
	struct td *td;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct foreign f;
	pthread_t t;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &r), 0);
	emu_run(30000000, &MIX_CHAIN);
	f.td = td;
	f.r = &r;
	assert_int_equal(pthread_create(&t, NULL, use_foreign, &f), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(f.begin_err, -EPERM);
	assert_int_equal(f.end_err, -EPERM);
	assert_non_null(strstr(td_strerror(-EPERM), "thread"));
	/* the owner's region is untouched and ends normally */
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_true(res.slots == 30000000);
	td_close(td);
	emu_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrong_thread),
		cmocka_unit_test(test_threads_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
