/* SPDX-License-Identifier: MIT */
/*
 * libtopdown-functions under the emulator: the workloads of func_work.c
 * and func_cxx.cc, built with -finstrument-functions, run known mixes;
 * the driver (this file, not instrumented) keeps the truth of each
 * function's own work, so that every function's inclusive figures (its
 * own work and its callees') and self figures (its own) are checked
 * against the truth, each within the err the report states.  Every
 * scenario runs in a forked child (the library reads its settings at the
 * first instrumented call) that writes td_functions_report as JSON Lines.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "func_work.h"
#include "topdown_functions.h"

#define MAX_LINE 8192

static struct emu_truth own[W_NR];  /* each function's own work */
/* threads of one scenario add to own[] at once (test_threads) */
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

void work(enum who who, uint64_t slots, const struct emu_mix *mix)
{
	struct emu_truth a, b;

	emu_truth(&a);
	emu_run(slots, mix);
	emu_truth(&b);
	pthread_mutex_lock(&own_lock);
	own[who].slots += b.slots - a.slots;
	for (int i = 0; i < 9; i++)
		own[who].cat[i] += b.cat[i] - a.cat[i];
	pthread_mutex_unlock(&own_lock);
}

/* ---- the report, read back -------------------------------------------- */

static char report_path[64];

/* The value of "key": in a JSON line, or NAN. */
static double value(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* The row of kind and name (thread "all" unless given), or fail. */
static void row(const char *kind, const char *name, const char *thread,
		char *out)
{
	FILE *f = fopen(report_path, "r");
	char want[256], line[MAX_LINE];

	assert_non_null(f);
	snprintf(want, sizeof(want),
		 "{\"kind\":\"%s\",\"name\":\"%s\",\"thread\":\"%s\",", kind,
		 name, thread ? thread : "all");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want))) {
			strcpy(out, line);
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no row %s", want);
}

static bool has_row(const char *kind, const char *name)
{
	FILE *f = fopen(report_path, "r");
	char want[256], line[MAX_LINE];
	bool found = false;

	assert_non_null(f);
	snprintf(want, sizeof(want), "{\"kind\":\"%s\",\"name\":\"%s\",",
		 kind, name);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, want, strlen(want));
	fclose(f);
	return found;
}

/* The truth of a sum of functions' own work. */
static struct emu_truth sum(const int *who, int n, const struct emu_truth *t)
{
	struct emu_truth s = { 0 };

	for (int k = 0; k < n; k++) {
		s.slots += t[who[k]].slots;
		for (int i = 0; i < 9; i++)
			s.cat[i] += t[who[k]].cat[i];
	}
	return s;
}

/*
 * A region of 10^5 slots and more is within 2 pp (its err, decode.c's
 * quantisation bound with a reset or two).  Self counts are a function's
 * regions minus its callees': their bounds add up, over fewer slots.
 */
#define REGION_ERR 0.02

/*
 * The figures under prefix ("" inclusive, "self_") against the truth:
 * the slots exactly, every level-1 and level-2 fraction within the err
 * reported, and that err within REGION_ERR scaled by the slots of the
 * regions it comes from (covered) over the figure's own.
 */
static void check_covered(const char *line, const char *prefix,
			  const struct emu_truth *t, uint64_t covered)
{
	struct emu_truth zero = { 0 };
	struct truth_frac tf = truth_between(&zero, t);
	char k[64];
	double err;

	snprintf(k, sizeof(k), "%sslots", prefix);
	assert_true(value(line, k) == (double)t->slots);
	snprintf(k, sizeof(k), "%serr", prefix);
	err = value(line, k);
	if (!(err >= 0 &&
	      err <= REGION_ERR * (double)covered / (double)t->slots))
		fail_msg("%s %serr %f", line, prefix, err);
	for (int i = 0; i < TD_L1_COUNT; i++) {
		snprintf(k, sizeof(k), "%s%s", prefix, td_l1_name(i));
		if (fabs(value(line, k) - tf.l1[i]) > err + 1e-6)
			fail_msg("%s %s: %f, truth %f, err %f", line, k,
				 value(line, k), tf.l1[i], err);
	}
	for (int i = 0; i < TD_L2_COUNT; i++) {
		snprintf(k, sizeof(k), "%s%s", prefix, td_l2_name(i));
		if (fabs(value(line, k) - tf.l2[i]) > err + 1e-6)
			fail_msg("%s %s: %f, truth %f, err %f", line, k,
				 value(line, k), tf.l2[i], err);
	}
}

static void check(const char *line, const char *prefix,
		  const struct emu_truth *t)
{
	check_covered(line, prefix, t, t->slots);
}

/* Self figures: covered by the function's regions and its callees'. */
static void check_self(const char *line, const struct emu_truth *t,
		       const struct emu_truth *incl)
{
	check_covered(line, "self_", t, 2 * incl->slots - t->slots);
}

/* Run child in a fork with env NAME=VALUE pairs; it writes the report
 * and the truth (to a pipe) and exits. */
static struct emu_truth truth[W_NR];
static pid_t child_pid;

static void in_child(void (*child)(void), const char *const *env)
{
	int fd[2], status;
	pid_t pid;

	strcpy(report_path, "/tmp/td-functions-XXXXXX");
	assert_true(mkstemp(report_path) >= 0);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	child_pid = pid;
	if (pid == 0) {
		FILE *f;

		close(fd[0]);
		for (; env && *env; env += 2)
			setenv(env[0], env[1], 1);
		emu_setup(EMU_SPR);
		child();
		f = fopen(report_path, "w");
		if (!f || td_functions_report(f, TD_FORMAT_JSONL) < 0)
			_exit(3);
		fclose(f);
		if (write(fd[1], own, sizeof(own)) != (ssize_t)sizeof(own))
			_exit(4);
		_exit(0);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], truth, sizeof(truth)),
			 (ssize_t)sizeof(truth));
	close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int cleanup(void **state)
{
	(void)state;
	if (getenv("TD_KEEP_REPORT"))
		return 0;
	unlink(report_path);
	return 0;
}

/* ---- nested calls: outer (stream) > inner (branchy) > leaf (DRAM) ------- */

static void nested_child(void)
{
	for (int i = 0; i < 3; i++)
		outer();
}

/*
 * A function's inclusive and self rows against the truth.  Its self
 * counts come from its regions and its callees': covered, their slots,
 * or 0 for no recursion (its inclusive slots and its callees').
 */
static void check_recursive(const char *name, double calls,
			    const int *incl, int n_incl, const int *self,
			    int n_self, uint64_t covered)
{
	char line[MAX_LINE];
	struct emu_truth ti = sum(incl, n_incl, truth);
	struct emu_truth ts = sum(self, n_self, truth);

	row("function", name, NULL, line);
	if (value(line, "calls") != calls)
		fail_msg("%s: calls %f, want %f", name, value(line, "calls"),
			 calls);
	check(line, "", &ti);
	if (covered)
		check_covered(line, "self_", &ts, covered);
	else
		check_self(line, &ts, &ti);
}

static void check_function(const char *name, double calls,
			   const int *incl, int n_incl, const int *self,
			   int n_self)
{
	check_recursive(name, calls, incl, n_incl, self, n_self, 0);
}

static const int OUTER_ALL[] = { W_OUTER, W_INNER, W_LEAF },
		 INNER_ALL[] = { W_INNER, W_LEAF }, LEAF[] = { W_LEAF },
		 OUTER[] = { W_OUTER }, INNER[] = { W_INNER };

static void test_nested(void **state)
{
	char line[MAX_LINE];
	struct emu_truth t;

	(void)state;
	in_child(nested_child, NULL);
	check_function("outer", 3, OUTER_ALL, 3, OUTER, 1);
	check_function("inner", 3, INNER_ALL, 2, INNER, 1); /* .symtab */
	check_function("leaf", 3, LEAF, 1, LEAF, 1);
	row("function", "outer", NULL, line);
	assert_true(value(line, "measured") == 3);
	row("path", "outer;inner;leaf", NULL, line);
	assert_true(value(line, "calls") == 3);
	t = sum(LEAF, 1, truth);
	check(line, "", &t);
}

/* ---- recursion: counted once per outermost activation ------------------- */

static void recursion_child(void)
{
	recurse(4);
	recurse(2);
}

static void test_recursion(void **state)
{
	static const int r[] = { W_REC };
	char line[MAX_LINE];

	(void)state;
	in_child(recursion_child, NULL);
	/*
	 * Inclusive: the work once, not 4 + 3 + 2 + 1 times; self alike.
	 * Every activation is a region (4 + 3 + 2 + 1 + 2 + 1 times 250000
	 * slots), its callee's subtracted (3 + 2 + 1 + 1 times).
	 */
	check_recursive("recurse", 6, r, 1, r, 1, 250000 * (13 + 7));
	row("function", "recurse", NULL, line);
	assert_true(value(line, "max_depth") == 4);
	row("path", "recurse;recurse;recurse;recurse", NULL, line);
	assert_true(value(line, "calls") == 1);
	assert_true(value(line, "slots") == 250000);
	assert_false(has_row("function", "(unattributed:stray_exit)"));
}

/* ---- longjmp and C++ exceptions across instrumented frames -------------- */

static void jump_child(void)
{
	jumper();
	after_jump();
	jump_and_return();
}

static void test_longjmp(void **state)
{
	static const int a[] = { W_AFTER };
	char line[MAX_LINE];
	struct emu_truth ta, th;

	(void)state;
	in_child(jump_child, NULL);
	/* measured right after the longjmp, as from main */
	check_function("after_jump", 2, a, 1, a, 1);
	/* the calls left by longjmp: counted, abandoned, no figures */
	row("function", "jumped", NULL, line);
	assert_true(value(line, "calls") == 2);
	assert_true(value(line, "abandoned") == 2);
	assert_true(value(line, "measured") == 0);
	row("function", "jumped_outer", NULL, line);
	assert_true(value(line, "abandoned") == 2);
	/* left by longjmp and then by its own exit, no entry between */
	row("function", "jump_and_return", NULL, line);
	assert_true(value(line, "measured") == 1);
	assert_true(value(line, "slots") == 200000 + 100000 + 300000);
	/* jumper ended normally: inclusive holds its work, the jumped
	 * functions' and one of the two after_jump calls; its self may hold
	 * the abandoned calls' (tainted) */
	row("function", "jumper", NULL, line);
	assert_true(value(line, "measured") == 1);
	assert_true(value(line, "tainted") == 1);
	{
		/* jumped and after_jump ran twice alike: half is jumper's */
		static const int own_work[] = { W_JUMPER },
				 halves[] = { W_JUMPED, W_AFTER };

		ta = sum(own_work, 1, truth);
		th = sum(halves, 2, truth);
		ta.slots += th.slots / 2;
		for (int i = 0; i < 9; i++)
			ta.cat[i] += th.cat[i] / 2;
		check(line, "", &ta);
	}
	row("path", "jumper;after_jump", NULL, line);
	assert_true(value(line, "calls") == 1);
	assert_false(has_row("function", "(unattributed:stray_exit)"));
}

static void cxx_child(void)
{
	cxx_catcher();
}

static void test_cxx_exception(void **state)
{
	static const int th[] = { W_THROWER }, ca[] = { W_CATCHER, W_THROWER,
							W_AFTER },
			 ca_self[] = { W_CATCHER }, af[] = { W_AFTER };
	char line[MAX_LINE];

	(void)state;
	in_child(cxx_child, NULL);
	check_function("after_jump", 1, af, 1, af, 1);
	row("function", "cxx_catcher", NULL, line);
	assert_true(value(line, "measured") == 1);
	/* whether the unwinder ran the exit hooks (GCC: a cleanup) or not
	 * (the stack resynchronised), thrower's 3 calls are accounted */
	row("function", "thrower(int)", NULL, line);
	assert_true(value(line, "calls") == 3);
	assert_true(value(line, "measured") + value(line, "abandoned") == 3);
	if (value(line, "abandoned") == 0) {
		/* regions 3 + 2 + 1 times 300000, callees 2 + 1 */
		check_recursive("thrower(int)", 3, th, 1, th, 1,
				300000 * (6 + 3));
		check_function("cxx_catcher", 1, ca, 3, ca_self, 1);
	}
	assert_false(has_row("function", "(unattributed:stray_exit)"));
}

/* ---- threads: per-thread rows and all threads' ---------------------------- */

static void *thread_main(void *arg)
{
	(void)arg;
	outer();
	return NULL;
}

static void threads_child(void)
{
	pthread_t t[3];

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			_exit(5);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	outer();
}

static void test_threads(void **state)
{
	char line[MAX_LINE], tid[16];

	(void)state;
	in_child(threads_child, NULL);
	check_function("outer", 4, OUTER_ALL, 3, OUTER, 1);
	check_function("inner", 4, INNER_ALL, 2, INNER, 1);
	check_function("leaf", 4, LEAF, 1, LEAF, 1);
	/* one row per thread, each of one call */
	snprintf(tid, sizeof(tid), "%d", child_pid);
	row("function", "outer", tid, line);
	assert_true(value(line, "calls") == 1);
	row("path", "outer;inner;leaf", NULL, line);
	assert_true(value(line, "calls") == 4);
}

/* ---- fork: the child's report holds the child's calls only ------------- */

static void fork_child(void)
{
	int status;
	pid_t pid;

	outer();
	pid = fork();
	if (pid == 0) {
		/* the grandchild reports its own: one call of outer */
		memset(own, 0, sizeof(own));
		outer();
		recurse(1);
		return;
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		_exit(6);
	_exit(7); /* the grandchild writes the report and truth */
}

static void test_fork(void **state)
{
	static const int oil[] = { W_OUTER, W_INNER, W_LEAF };
	char line[MAX_LINE];
	struct emu_truth t;

	(void)state;
	strcpy(report_path, "/tmp/td-functions-XXXXXX");
	{
		int fd[2], status;
		pid_t pid;

		assert_true(mkstemp(report_path) >= 0);
		assert_int_equal(pipe(fd), 0);
		pid = fork();
		if (pid == 0) {
			FILE *f;

			close(fd[0]);
			emu_setup(EMU_SPR);
			fork_child();
			f = fopen(report_path, "w");
			if (!f || td_functions_report(f, TD_FORMAT_JSONL) < 0)
				_exit(3);
			fclose(f);
			if (write(fd[1], own, sizeof(own)) < 0)
				_exit(4);
			_exit(0);
		}
		close(fd[1]);
		assert_int_equal(read(fd[0], truth, sizeof(truth)),
				 (ssize_t)sizeof(truth));
		close(fd[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	}
	row("function", "outer", NULL, line);
	assert_true(value(line, "calls") == 1);
	t = sum(oil, 3, truth);
	check(line, "", &t);
	row("function", "recurse", NULL, line);
	assert_true(value(line, "calls") == 1);
}

/* ---- the filter: an excluded function's time is its caller's ----------- */

static void test_filter(void **state)
{
	static const char *const env[] = { "TOPDOWN_FUNCTIONS_FILTER",
					   "-inner", NULL };
	static const int oi[] = { W_OUTER, W_INNER };
	char line[MAX_LINE];
	struct emu_truth t;

	(void)state;
	in_child(nested_child, env);
	assert_false(has_row("function", "inner"));
	/* inner's own work is outer's now; leaf is outer's callee */
	check_function("outer", 3, OUTER_ALL, 3, oi, 2);
	check_function("leaf", 3, LEAF, 1, LEAF, 1);
	row("path", "outer;leaf", NULL, line);
	t = sum(LEAF, 1, truth);
	check(line, "", &t);
}

/* ---- the minimum-slots threshold: short calls counted, not measured --- */

static void threshold_child(void)
{
	host(2000);
}

static void test_threshold(void **state)
{
	static const char *const env[] = { "TOPDOWN_FUNCTIONS_MIN_SLOTS",
					   "5000", NULL };
	static const int all[] = { W_HOST, W_TINY };
	char line[MAX_LINE];
	struct emu_truth own_h, tiny_1, t;

	(void)state;
	in_child(threshold_child, env);
	/*
	 * The first buffer of records (1024 calls of tiny, 1000 slots each)
	 * is folded when full: tiny is then under the threshold, its later
	 * 976 calls counted, not measured, their work host's own.
	 */
	row("function", "tiny", NULL, line);
	assert_true(value(line, "calls") == 2000);
	assert_true(value(line, "measured") == 1024);
	assert_true(value(line, "slots") == 1024 * 1000);
	row("function", "host", NULL, line);
	t = sum(all, 2, truth);
	check(line, "", &t);
	/*
	 * Its self slots: its own and the unmeasured calls'.  (Its self
	 * shares are 1024 short regions' counts subtracted: their bounds
	 * add up to an err of 1, rightly; only the slots are exact.)
	 */
	own_h = truth[W_HOST];
	tiny_1 = truth[W_TINY];
	assert_true(value(line, "self_slots") ==
		    (double)(own_h.slots + tiny_1.slots / 2000 * 976));
}

/* ---- bounded tables: call paths past the limit counted as such ---------- */

static void deep_child(void)
{
	recurse(40);
}

static void test_max_nodes(void **state)
{
	static const char *const env[] = { "TOPDOWN_FUNCTIONS_MAX_NODES",
					   "16", NULL };
	static const int r[] = { W_REC };
	char line[MAX_LINE];
	struct emu_truth t;

	(void)state;
	in_child(deep_child, env);
	/* 16 call paths kept: the 24 deeper calls are the 16th's own work */
	row("function", "(unattributed:nodes_full)", NULL, line);
	assert_true(value(line, "calls") == 24);
	row("function", "recurse", NULL, line);
	assert_true(value(line, "calls") == 16);
	assert_true(value(line, "max_depth") == 16);
	t = sum(r, 1, truth);
	check(line, "", &t); /* the outermost call holds all 40 */
}

/* ---- signals: a handler's calls are the interrupted function's callees -- */

/*
 * ThreadSanitizer defers asynchronous signals and runs their handlers
 * later with every signal blocked (compiler-rt tsan_interceptors_posix.cpp
 * ProcessPendingSignalsImpl fills the mask before calling them), so the
 * emulator's trap of a RDPMC inside such a handler is a blocked SIGSEGV,
 * which the kernel turns into a kill (kernel/signal.c force_sig_info_to_task
 * unblocks it and resets the action).  Real RDPMC does not fault; the
 * handler cases run under every other build.
 */
#if defined(__SANITIZE_THREAD__)
#define TD_SKIP_HANDLER_RDPMC() skip()
#else
#define TD_SKIP_HANDLER_RDPMC() ((void)0)
#endif

static void signal_child(void)
{
	if (signal(SIGUSR1, on_signal) == SIG_ERR)
		_exit(8);
	interrupted();
}

static void test_signal_handler(void **state)
{
	static const int all[] = { W_INTERRUPTED, W_HANDLED },
			 own_work[] = { W_INTERRUPTED }, h[] = { W_HANDLED };
	char line[MAX_LINE];

	(void)state;
	TD_SKIP_HANDLER_RDPMC();
	in_child(signal_child, NULL);
	/* the handler ran inside interrupted, outside any hook: its calls
	 * are interrupted's callees, in its inclusive figures, not its self */
	check_function("interrupted", 1, all, 2, own_work, 1);
	check_function("handled", 1, h, 1, h, 1);
	row("path", "interrupted;on_signal;handled", NULL, line);
	assert_true(value(line, "calls") == 1);
	row("function", "interrupted", NULL, line);
	assert_true(value(line, "measured") == 1);
	assert_false(has_row("function", "(unattributed:stray_exit)"));
	assert_false(has_row("function", "(unattributed:reentered)"));
}

/*
 * A thread's first instrumented calls inside a signal handler (which
 * could have interrupted malloc): its handle (td_open allocates and
 * opens counters) waits until a call outside the handler.
 */
static void *first_in_handler(void *arg)
{
	struct emu_stats a, b;

	(void)arg;
	emu_stats(&a);
	pthread_kill(pthread_self(), SIGUSR1); /* delivered before it returns */
	emu_stats(&b);
	if (b.perf_opens != a.perf_opens)
		_exit(9); /* opened inside the handler */
	interrupted();
	return NULL;
}

static void first_in_handler_child(void)
{
	pthread_t t;

	if (signal(SIGUSR1, on_signal) == SIG_ERR ||
	    pthread_create(&t, NULL, first_in_handler, NULL) ||
	    pthread_join(t, NULL))
		_exit(8);
}

static void test_first_hook_in_handler(void **state)
{
	static const int own_work[] = { W_INTERRUPTED };
	char line[MAX_LINE];

	(void)state;
	TD_SKIP_HANDLER_RDPMC();
	in_child(first_in_handler_child, NULL);
	/* the first handler's two calls (on_signal, handled) counted, not
	 * measured; then interrupted and the handler it raises measured
	 * (handled ran twice: half its work is interrupted's callee's) */
	row("function", "(unattributed:in_signal)", NULL, line);
	assert_true(value(line, "calls") == 2);
	row("function", "interrupted", NULL, line);
	assert_true(value(line, "measured") == 1);
	{
		struct emu_truth ti = sum(own_work, 1, truth),
				 th = truth[W_HANDLED];

		ti.slots += th.slots / 2;
		for (int i = 0; i < 9; i++)
			ti.cat[i] += th.cat[i] / 2;
		check(line, "", &ti);
	}
	row("path", "interrupted;on_signal;handled", NULL, line);
	assert_true(value(line, "calls") == 1);
	assert_false(has_row("function", "(unattributed:reentered)"));
}

/* ---- cancellation: the calls it cut short are abandoned ----------------- */

static void *cancel_thread(void *arg)
{
	(void)arg;
	outer(); /* measured: the thread's handle is open */
	pthread_cancel(pthread_self()); /* pending until a cancellation point */
	cancelled();
	return NULL;
}

static void cancel_child(void)
{
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, cancel_thread, NULL) ||
	    pthread_join(t, &ret) || ret != PTHREAD_CANCELED)
		_exit(8);
}

static void test_cancel(void **state)
{
	char line[MAX_LINE];

	(void)state;
	in_child(cancel_child, NULL);
	/* the thread's report is there: its measured call */
	check_function("outer", 1, OUTER_ALL, 3, OUTER, 1);
	/* the two calls in progress at the cancellation: never returned,
	 * counted as abandoned, no figures */
	row("function", "cancelled", NULL, line);
	assert_true(value(line, "calls") == 1);
	assert_true(value(line, "abandoned") == 1);
	assert_true(value(line, "measured") == 0);
	row("function", "cancel_point", NULL, line);
	assert_true(value(line, "calls") == 1);
	assert_true(value(line, "abandoned") == 1);
	assert_true(value(line, "measured") == 0);
	assert_false(has_row("function", "(unattributed:stray_exit)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_nested, cleanup),
		cmocka_unit_test_teardown(test_recursion, cleanup),
		cmocka_unit_test_teardown(test_longjmp, cleanup),
		cmocka_unit_test_teardown(test_cxx_exception, cleanup),
		cmocka_unit_test_teardown(test_threads, cleanup),
		cmocka_unit_test_teardown(test_fork, cleanup),
		cmocka_unit_test_teardown(test_filter, cleanup),
		cmocka_unit_test_teardown(test_threshold, cleanup),
		cmocka_unit_test_teardown(test_max_nodes, cleanup),
		cmocka_unit_test_teardown(test_signal_handler, cleanup),
		cmocka_unit_test_teardown(test_first_hook_in_handler, cleanup),
		cmocka_unit_test_teardown(test_cancel, cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
