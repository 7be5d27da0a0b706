/* SPDX-License-Identifier: MIT */
/*
 * Threads: one handle per thread, many threads at once.  Each thread opens
 * its own handle and measures TD_STRESS_REGIONS (default 100,000) regions
 * of known composition on its own emulated CPU; every result must be
 * reliable, exact in slots and within its own err.  Named regions
 * declared once and used from every thread: at once, one thread after
 * another, from a pool of threads.  Also run under ThreadSanitizer (make
 * test-tsan).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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

/* ---- named regions shared by threads ------------------------------------ */

/* What a thread did in a named region: calls and the work's truth. */
struct tally {
	uint64_t calls;
	struct emu_truth sum;  /* true slots of the calls, summed */
	int bad;               /* begins or ends that failed */
};

static void tally_add(struct tally *t, const struct tally *u)
{
	t->calls += u->calls;
	t->bad += u->bad;
	t->sum.slots += u->sum.slots;
	for (int i = 0; i < 9; i++)
		t->sum.cat[i] += u->sum.cat[i];
}

/* One call of n (or of the region named name) of `slots` of mix. */
static void named_call(struct td *td, struct td_named *n, const char *name,
		       uint64_t slots, const struct emu_mix *mix,
		       struct tally *t)
{
	struct emu_truth a, b;

	if ((n ? td_named_begin(td, n) : td_named_begin_str(td, name)) < 0) {
		t->bad++;
		return;
	}
	emu_truth(&a);
	emu_run(slots, mix);
	emu_truth(&b);
	if ((n ? td_named_end(td, n, NULL) : td_named_end_str(td, name, NULL))
	    < 0) {
		t->bad++;
		return;
	}
	t->calls++;
	t->sum.slots += b.slots - a.slots;
	for (int i = 0; i < 9; i++)
		t->sum.cat[i] += b.cat[i] - a.cat[i];
}

/* Totals against what the threads did: calls, slots, the truth. */
static void assert_totals(const struct td_totals *tot, const struct tally *t)
{
	const struct emu_truth zero = { 0 };
	struct truth_frac tf = truth_between(&zero, &t->sum);

	assert_int_equal(t->bad, 0);
	assert_int_equal(tot->calls, t->calls);
	assert_int_equal(tot->unreliable, 0);
	assert_int_equal(tot->open, 0);
	assert_int_equal(tot->total.slots, t->sum.slots);
	assert_within(&tot->total, &tf, 0.02);
}

/* The calls and slots td_report_named writes for td's one region. */
static void report_row(struct td *td, uint64_t *calls, uint64_t *slots)
{
	char *text = NULL, *row;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	*calls = *slots = UINT64_MAX;
	if (!f)
		return;
	td_report_named(f, td, TD_FORMAT_CSV);
	fclose(f);
	row = strstr(text, "\nregion,");
	/* region,<name>,<thread>,calls,unreliable,slots */
	if (row && sscanf(row, "\nregion,%*[^,],%*[^,],%llu,%*u,%llu",
			  (unsigned long long *)calls,
			  (unsigned long long *)slots) != 2)
		*calls = *slots = UINT64_MAX;
	free(text);
}

#define NR_NAMED 4

static struct td_named hot = TD_NAMED_INIT("hot");

struct named_worker {
	pthread_t tid;
	int id;
	pthread_barrier_t *all;   /* every worker at once, or NULL */
	bool close;               /* td_close at the end */
	struct tally t;
	struct td_totals own;     /* td_named_totals, before any close */
	uint64_t row_calls, row_slots; /* td_report_named of its handle */
	int open_err;
};

static void wait_all(struct named_worker *w)
{
	if (w->all)
		pthread_barrier_wait(w->all);
}

/*
 * Worker id: id + 1 calls of hot, of its own length and mix.  With a
 * barrier, every worker has hot open at once (the first call spans the
 * barrier), and none closes before all have read their totals.
 */
static void *named_work(void *arg)
{
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	struct named_worker *w = arg;
	const struct emu_mix *mix = mixes[w->id % 4];
	uint64_t len = 1000000 * (uint64_t)(w->id + 1);
	struct emu_truth a, b;
	struct td *td;

	w->open_err = td_open(&td, NULL);
	if (w->open_err < 0)
		return NULL;
	emu_run(500000, &MIX_STREAM); /* outside: not counted */
	if (td_named_begin(td, &hot) < 0)
		w->t.bad++;
	emu_truth(&a);
	emu_run(len / 2, mix);
	wait_all(w); /* everyone has begun hot */
	emu_run(len - len / 2, mix);
	emu_truth(&b);
	if (td_named_end(td, &hot, NULL) < 0)
		w->t.bad++;
	w->t.calls++;
	w->t.sum.slots += b.slots - a.slots;
	for (int i = 0; i < 9; i++)
		w->t.sum.cat[i] += b.cat[i] - a.cat[i];
	for (int c = 0; c < w->id; c++)
		named_call(td, &hot, NULL, len, mix, &w->t);
	wait_all(w); /* everyone is done: no handle closed yet */
	td_named_totals(&hot, &w->own);
	report_row(td, &w->row_calls, &w->row_slots);
	wait_all(w);
	if (w->close)
		td_close(td);
	return NULL;
}

static void check_worker(const struct named_worker *w)
{
	assert_int_equal(w->open_err, 0);
	assert_totals(&w->own, &w->t);
	assert_int_equal(w->row_calls, w->t.calls);
	assert_int_equal(w->row_slots, w->t.sum.slots);
}

/* hot's totals after every worker: those of all, each counted once. */
static void check_all(const struct named_worker *w, int n)
{
	struct tally all = { 0 };
	struct td_totals tot;

	for (int i = 0; i < n; i++)
		tally_add(&all, &w[i].t);
	assert_int_equal(td_named_totals(&hot, &tot), 0);
	assert_totals(&tot, &all);
	assert_int_equal(tot.max_depth, 1);
}

/*
 * One static named region, NR_NAMED threads with it open at once: each
 * thread's handle counts its own calls (the totals it reads, its report
 * row), and after every td_close the region has every call once.
 */
static void test_named_concurrent(void **state)
{
	struct named_worker w[NR_NAMED];
	pthread_barrier_t all;

	(void)state;
	emu_setup(EMU_SPR);
	memset(&hot.opaque, 0, sizeof(hot.opaque));
	memset(w, 0, sizeof(w));
	pthread_barrier_init(&all, NULL, NR_NAMED);
	for (int i = 0; i < NR_NAMED; i++) {
		w[i] = (struct named_worker){ .id = i, .all = &all,
					      .close = true };
		assert_int_equal(pthread_create(&w[i].tid, NULL, named_work,
						&w[i]), 0);
	}
	for (int i = 0; i < NR_NAMED; i++)
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
	pthread_barrier_destroy(&all);
	for (int i = 0; i < NR_NAMED; i++)
		check_worker(&w[i]);
	check_all(w, NR_NAMED);
	emu_teardown();
}

/*
 * A thread per job, one after another, with and without td_close: each
 * thread's report row has its own calls only (not those of the threads
 * before it), and the region's totals every call once.  Without td_close
 * the totals of the handles left open are not the main thread's: the
 * region has none of their calls until they are closed (the exit report
 * has them: test_env_report).
 */
static void test_named_sequential(void **state)
{
	struct named_worker w[NR_NAMED];
	struct td_totals tot;

	(void)state;
	for (int close = 1; close >= 0; close--) {
		emu_setup(EMU_SPR);
		memset(&hot.opaque, 0, sizeof(hot.opaque));
		memset(w, 0, sizeof(w));
		for (int i = 0; i < NR_NAMED; i++) {
			w[i] = (struct named_worker){ .id = i,
						      .close = close };
			assert_int_equal(pthread_create(&w[i].tid, NULL,
							named_work, &w[i]), 0);
			assert_int_equal(pthread_join(w[i].tid, NULL), 0);
		}
		for (int i = 0; i < NR_NAMED; i++) {
			struct td_totals own = w[i].own;

			if (close) /* the closed handles' calls, then its own */
				for (int j = 0; j < i; j++)
					own.calls -= w[j].t.calls;
			assert_int_equal(w[i].row_calls, w[i].t.calls);
			assert_int_equal(w[i].row_slots, w[i].t.sum.slots);
			assert_int_equal(own.calls, w[i].t.calls);
		}
		if (close) {
			check_all(w, NR_NAMED);
		} else {
			assert_int_equal(td_named_totals(&hot, &tot), 0);
			assert_int_equal(tot.calls, 0);
		}
		emu_teardown();
	}
}

/*
 * A pool of threads reusing their handle (or opening one per job): jobs
 * taken from a shared counter, so which thread runs which is anyone's;
 * each thread's totals are its own jobs, the region's every job once, for
 * a struct and for names built at run time in a reused buffer.
 */
#define NR_JOBS 40
#define NR_KINDS 3

struct pool {
	atomic_int next;
	bool handle_per_job;  /* also names the run's kinds: a name's
				 totals live as long as the process */
	pthread_barrier_t all;
};

struct pool_worker {
	pthread_t tid;
	struct pool *pool;
	struct tally hot, kind[NR_KINDS];
	struct td_totals own_hot, own_kind[NR_KINDS];
	int open_err;
};

static void run_job(struct td *td, int j, struct pool_worker *w)
{
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					  &MIX_STREAM, &MIX_DRAM };
	char name[32];

	named_call(td, &hot, NULL, 200000 * (uint64_t)(j + 1), mixes[j % 4],
		   &w->hot);
	snprintf(name, sizeof(name), "kind-%d-%d", w->pool->handle_per_job,
		 j % NR_KINDS);
	named_call(td, NULL, name, 300000 + 1000 * (uint64_t)j,
		   mixes[(j + 1) % 4], &w->kind[j % NR_KINDS]);
	memset(name, 'x', sizeof(name) - 1); /* the library copied it */
}

static void *pool_work(void *arg)
{
	struct pool_worker *w = arg;
	struct pool *p = w->pool;
	struct td *td = NULL;
	int j;

	while ((j = atomic_fetch_add(&p->next, 1)) < NR_JOBS) {
		if (!td)
			w->open_err = td_open(&td, NULL);
		if (w->open_err < 0)
			break;
		run_job(td, j, w);
		if (p->handle_per_job) {
			td_close(td);
			td = NULL;
		}
	}
	pthread_barrier_wait(&p->all); /* every job done, none closed */
	if (!p->handle_per_job) {
		char name[32];

		td_named_totals(&hot, &w->own_hot);
		for (int k = 0; k < NR_KINDS; k++) {
			snprintf(name, sizeof(name), "kind-%d-%d",
				 p->handle_per_job, k);
			td_named_totals_str(name, &w->own_kind[k]);
		}
	}
	pthread_barrier_wait(&p->all);
	td_close(td);
	return NULL;
}

static void check_pool(bool handle_per_job)
{
	struct pool p = { .handle_per_job = handle_per_job };
	struct pool_worker w[NR_NAMED];
	struct tally hot_all = { 0 }, kind_all[NR_KINDS] = { 0 };
	struct td_totals tot;
	char name[32];

	emu_setup(EMU_SPR);
	memset(&hot.opaque, 0, sizeof(hot.opaque));
	memset(w, 0, sizeof(w));
	atomic_init(&p.next, 0);
	pthread_barrier_init(&p.all, NULL, NR_NAMED);
	for (int i = 0; i < NR_NAMED; i++) {
		w[i].pool = &p;
		assert_int_equal(pthread_create(&w[i].tid, NULL, pool_work,
						&w[i]), 0);
	}
	for (int i = 0; i < NR_NAMED; i++)
		assert_int_equal(pthread_join(w[i].tid, NULL), 0);
	pthread_barrier_destroy(&p.all);
	for (int i = 0; i < NR_NAMED; i++) {
		assert_int_equal(w[i].open_err, 0);
		tally_add(&hot_all, &w[i].hot);
		for (int k = 0; k < NR_KINDS; k++)
			tally_add(&kind_all[k], &w[i].kind[k]);
		if (handle_per_job)
			continue;
		/* a thread that ran no job has no calls: 0 and 0 */
		assert_int_equal(w[i].own_hot.calls, w[i].hot.calls);
		assert_int_equal(w[i].own_hot.total.slots, w[i].hot.sum.slots);
		for (int k = 0; k < NR_KINDS; k++)
			assert_int_equal(w[i].own_kind[k].total.slots,
					 w[i].kind[k].sum.slots);
	}
	assert_int_equal(hot_all.calls, NR_JOBS);
	assert_int_equal(td_named_totals(&hot, &tot), 0);
	assert_totals(&tot, &hot_all);
	for (int k = 0; k < NR_KINDS; k++) {
		snprintf(name, sizeof(name), "kind-%d-%d", handle_per_job, k);
		assert_int_equal(td_named_totals_str(name, &tot), 0);
		assert_totals(&tot, &kind_all[k]);
	}
	emu_teardown();
}

static void test_named_pool(void **state)
{
	(void)state;
	check_pool(false);
	check_pool(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrong_thread),
		cmocka_unit_test(test_threads_stress),
		cmocka_unit_test(test_named_concurrent),
		cmocka_unit_test(test_named_sequential),
		cmocka_unit_test(test_named_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
