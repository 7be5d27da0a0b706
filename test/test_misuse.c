/* SPDX-License-Identifier: MIT */
/*
 * Every misuse of the API the README's table lists, and what it returns;
 * fork; descriptor exhaustion and leaks; close-on-exec.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static int teardown(void **state)
{
	(void)state;
	emu_teardown();
	return 0;
}

static void test_null_arguments(void **state)
{
	struct td *td;
	struct td_region r = { { 0 } };
	struct td_result res;
	struct td_info info = { .size = sizeof(info) };

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(NULL, NULL), -EINVAL);
	assert_int_equal(td_open(&td, NULL), 0); /* NULL options: defaults */
	assert_int_equal(td_region_begin(NULL, &r), -EINVAL);
	assert_int_equal(td_region_begin(td, NULL), -EINVAL);
	assert_int_equal(td_region_end(NULL, &r, &res), -EINVAL);
	assert_int_equal(td_region_end(td, NULL, &res), -EINVAL);
	assert_int_equal(td_query(NULL, &info), -EINVAL);
	assert_int_equal(td_query(td, NULL), -EINVAL);
	/* NULL result: the region ends, nothing is written */
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_int_equal(td_region_end(td, &r, NULL), 0);
	td_close(td);
	td_close(NULL);
}

static void test_options_wrong_size(void **state)
{
	struct {
		struct td_options o;
		unsigned char tail[16];
	} big;
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td = (struct td *)0x1;

	(void)state;
	emu_setup(EMU_SPR);
	o.size = 0;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	assert_null(td);
	o.size = sizeof(size_t) - 1;
	assert_int_equal(td_open(&td, &o), -EINVAL);
	/* larger than ours: fine while the unknown tail is zero */
	memset(&big, 0, sizeof(big));
	big.o.size = sizeof(big);
	assert_int_equal(td_open(&td, &big.o), 0);
	td_close(td);
	big.tail[7] = 1;
	assert_int_equal(td_open(&td, &big.o), -EINVAL);
	/* smaller (an older caller): the missing fields default */
	o.size = sizeof(size_t);
	assert_int_equal(td_open(&td, &o), 0);
	td_close(td);
	o.size = sizeof(o);
	o.flags = 1u << 31;
	assert_int_equal(td_open(&td, &o), -EINVAL);
}

static void test_region_sequence_misuse(void **state)
{
	struct td *td, *other;
	struct td_region r = { { 0 } }, fresh = { { 0 } };
	struct td_result res;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	assert_int_equal(td_open(&other, NULL), 0);
	assert_int_equal(td_region_end(td, &fresh, &res), -ESRCH);
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_int_equal(td_region_begin(td, &r), -EALREADY);
	assert_int_equal(td_region_end(other, &r, &res), -EXDEV);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_int_equal(td_region_end(td, &r, &res), -ESRCH);
	/*
	 * A region begun on a handle since closed, ended on another live
	 * handle (at another address): -EXDEV.  The closed handle is never
	 * dereferenced, only its address compared.
	 */
	assert_int_equal(td_region_begin(other, &r), 0);
	td_close(other);
	assert_int_equal(td_region_end(td, &r, &res), -EXDEV);
	td_close(td);
}

/*
 * The same misuse on this thread's fast handle of every fast path: the
 * inlined one (Sapphire Rapids), the hybrid source's guarded reads
 * (Alder Lake, whose end reads before it checks the region), the
 * metrics-clear one, unguarded (Lunar Lake) and guarded (the hybrid
 * profile offering it), and ordinary counters (Zen 4).  The thread's
 * first open handle is its fast one (owner.c td_fast_claim): each begin
 * and end goes from the entry point to that path at once, so the
 * region's checks there are the only ones.
 */
static void misuse_on_fast_handle(enum emu_profile prof, bool offer_clear,
				  bool two_fit)
{
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td, *other = NULL;
	struct td_region r = { { 0 } }, fresh = { { 0 } };
	struct td_result res;

	emu_setup(prof);
	if (offer_clear)
		emu_offer_metrics_clear();
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	if (two_fit)
		assert_int_equal(td_open(&other, &o), 0);
	for (int i = 0; i < 3; i++) { /* metrics-clear: its probe first */
		assert_int_equal(td_region_begin(td, &r), 0);
		emu_run(100000, &MIX_CHAIN);
		assert_int_equal(td_region_end(td, &r, &res), 0);
	}
	assert_int_equal(td_region_begin(td, NULL), -EINVAL);
	assert_int_equal(td_region_end(td, NULL, &res), -EINVAL);
	assert_int_equal(td_region_end(td, NULL, NULL), -EINVAL);
	assert_int_equal(td_region_end(td, &fresh, &res), -ESRCH);
	assert_int_equal(td_region_end(td, &fresh, NULL), -ESRCH);
	if (other) {
		assert_int_equal(td_region_begin(other, &fresh), 0);
		assert_int_equal(td_region_end(td, &fresh, &res), -EXDEV);
		assert_int_equal(td_region_end(td, &fresh, NULL), -EXDEV);
		assert_int_equal(td_region_end(other, &fresh, NULL), 0);
	}
	assert_int_equal(td_region_begin(td, &r), 0);
	assert_int_equal(td_region_begin(td, &r), -EALREADY);
	if (other)
		assert_int_equal(td_region_end(other, &r, &res), -EXDEV);
	emu_run(1000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &r, &res), 0);
	assert_true(res.slots > 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	assert_int_equal(td_region_end(td, &r, &res), -ESRCH);
	assert_int_equal(td_region_end(td, &r, NULL), -ESRCH);
	td_close(other);
	td_close(td);
	emu_teardown();
}

/* Zen 4's counters hold one handle's events: no second handle there. */
static void test_misuse_on_each_fast_path(void **state)
{
	(void)state;
	misuse_on_fast_handle(EMU_SPR, false, true);
	misuse_on_fast_handle(EMU_ADL, false, true);
	misuse_on_fast_handle(EMU_LNL, false, true);
	misuse_on_fast_handle(EMU_ADL, true, true);
	misuse_on_fast_handle(EMU_ZEN4, false, false);
}

/* Regions carry their own snapshot: nesting depth is unlimited. */
#define DEPTH 10000
static void test_deep_nesting(void **state)
{
	struct td_region *r = calloc(DEPTH, sizeof(*r));
	struct emu_truth *at = calloc(DEPTH, sizeof(*at));
	struct td_options o = TD_OPTIONS_INIT;
	struct td_result res;
	struct emu_truth end;
	struct td *td;

	(void)state;
	assert_non_null(r);
	assert_non_null(at);
	emu_setup(EMU_SPR);
	o.reset_policy = TD_RESET_NEVER;
	assert_int_equal(td_open(&td, &o), 0);
	emu_run(1000000, &MIX_STREAM);
	for (int i = 0; i < DEPTH; i++) {
		assert_int_equal(td_region_begin(td, &r[i]), 0);
		emu_truth(&at[i]);
		emu_run(10000, i % 2 ? &MIX_CHAIN : &MIX_DRAM);
	}
	for (int i = DEPTH - 1; i >= 0; i--) {
		struct truth_frac t;

		emu_truth(&end);
		assert_int_equal(td_region_end(td, &r[i], &res), 0);
		assert_true(res.slots == end.slots - at[i].slots);
		t = truth_between(&at[i], &end);
		if (!(res.flags & TD_RESULT_SHORT))
			assert_within(&res, &t, 1.0);
	}
	td_close(td);
	free(r);
	free(at);
}

static void test_fork_child_refused(void **state)
{
	struct td *td;
	struct td_region r = { { 0 } }, open_in_parent = { { 0 } };
	struct td_result res;
	int status;
	pid_t pid;

	(void)state;
	emu_setup(EMU_SPR);
	assert_int_equal(td_open(&td, NULL), 0);
	emu_run(1000000, &MIX_STREAM);
	assert_int_equal(td_region_begin(td, &open_in_parent), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct td *fresh;
		int code = 0;

		if (td_region_begin(td, &r) != -ESTALE)
			code |= 1;
		if (td_region_end(td, &open_in_parent, &res) != -ESTALE)
			code |= 2;
		td_close(td); /* the child's copies of the fds and memory */
		if (td_open(&fresh, NULL) != 0) /* a new handle works */
			code |= 4;
		else if (td_region_begin(fresh, &r) != 0 ||
			 td_region_end(fresh, &r, &res) != 0)
			code |= 8;
		_exit(code);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(td_strerror(-ESTALE), "fork"));
	/* the parent is unaffected */
	emu_run(20000000, &MIX_CHAIN);
	assert_int_equal(td_region_end(td, &open_in_parent, &res), 0);
	assert_false(res.flags & TD_RESULT_UNRELIABLE);
	td_close(td);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* The k-th (from 0) lowest unused descriptor number. */
static int nth_free_fd(int k)
{
	for (int fd = 0;; fd++)
		if (fcntl(fd, F_GETFD) < 0 && k-- == 0)
			return fd;
}

/* Every descriptor td_open creates is close-on-exec. */
static void test_fds_cloexec(void **state)
{
	char seen[1024] = { 0 };
	struct td *td;
	int fresh = 0;

	(void)state;
	emu_setup(EMU_SPR);
	for (int fd = 0; fd < 1024; fd++)
		seen[fd] = fcntl(fd, F_GETFD) >= 0;
	assert_int_equal(td_open(&td, NULL), 0);
	for (int fd = 0; fd < 1024; fd++) {
		if (seen[fd] || fcntl(fd, F_GETFD) < 0)
			continue;
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		fresh++;
	}
	/* SLOTS + 8 metrics, INT_MISC.UOP_DROPPING (pm_uop.c) */
	assert_int_equal(fresh, 10);
	td_close(td);
}

/*
 * EMFILE at every point of td_open (the k-th descriptor fails for each
 * k), then 10,000 open/close cycles: no descriptor, mapping or heap
 * memory left behind.
 */
static void test_emfile_and_no_leaks(void **state)
{
	struct rlimit old, lim;
	struct emu_stats s;
	struct td *td;
	int base;
	size_t heap;

	(void)state;
	emu_setup(EMU_SPR);
	base = count_fds();
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	for (int k = 0; k < 9; k++) { /* k = 9 would succeed */
		lim = old;
		lim.rlim_cur = (rlim_t)nth_free_fd(k); /* room for k more */
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
		td = (struct td *)0x1;
		assert_int_equal(td_open(&td, NULL), -EMFILE);
		assert_null(td);
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
		emu_stats(&s);
		assert_int_equal(s.open_fds, 0);
		assert_int_equal(s.maps, 0);
		assert_int_equal(count_fds(), base);
	}
	assert_non_null(strstr(td_strerror(-EMFILE), "RLIMIT_NOFILE"));
	/* warm up malloc's arenas, then measure */
	assert_int_equal(td_open(&td, NULL), 0);
	td_close(td);
	heap = mallinfo2().uordblks;
	for (int i = 0; i < 10000; i++) {
		assert_int_equal(td_open(&td, NULL), 0);
		td_close(td);
	}
	emu_stats(&s);
	assert_int_equal(s.open_fds, 0);
	assert_int_equal(s.maps, 0);
	assert_int_equal(count_fds(), base);
	assert_true(mallinfo2().uordblks <= heap + 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_null_arguments, teardown),
		cmocka_unit_test_teardown(test_options_wrong_size, teardown),
		cmocka_unit_test_teardown(test_region_sequence_misuse, teardown),
		cmocka_unit_test_teardown(test_misuse_on_each_fast_path,
					  teardown),
		cmocka_unit_test_teardown(test_deep_nesting, teardown),
		cmocka_unit_test_teardown(test_fork_child_refused, teardown),
		cmocka_unit_test_teardown(test_fds_cloexec, teardown),
		cmocka_unit_test_teardown(test_emfile_and_no_leaks, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
