/* SPDX-License-Identifier: MIT */
/*
 * The environment's opt-in report (TOPDOWN_REPORT, TOPDOWN_FORMAT): one
 * report per process, written at exit, with a thread column, per-thread
 * rows and an all-threads row per region name; bad settings that leave
 * measurement on.  The report is written at process exit, so every
 * scenario runs in a forked child and the parent parses what it wrote.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "report_parse.h"

#define NR_THREADS 4
#define CALLS 3
#define MAX_LINES 64
#define MAX_FIELDS 40

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 65535, f) < 65535);
	fclose(f);
	return buf;
}

static void temp_path(char *path)
{
	int fd;

	strcpy(path, "/tmp/td-report-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

/*
 * Run child(arg) in a fork with the report settings; it exits with 0, or
 * is ended by signal sig when sig is not 0.
 */
static void in_child_ends(void (*child)(void *), void *arg,
			  const char *report, const char *format,
			  const char *stderr_path, int sig)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (stderr_path) {
			int fd = open(stderr_path, O_WRONLY | O_TRUNC);

			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(3);
		}
		emu_setup(EMU_SPR);
		setenv("TOPDOWN_REPORT", report, 1);
		if (format)
			setenv("TOPDOWN_FORMAT", format, 1);
		child(arg);
		exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (sig) {
		if (!WIFSIGNALED(status))
			fail_msg("child exited %d, want killed by %d",
				 WEXITSTATUS(status), sig);
		assert_int_equal(WTERMSIG(status), sig);
		return;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void in_child(void (*child)(void *), void *arg, const char *report,
		     const char *format, const char *stderr_path)
{
	in_child_ends(child, arg, report, format, stderr_path, 0);
}

/* ---- a 4-thread program ------------------------------------------------- */

static struct td_named common[NR_THREADS + 1];
static struct td_named own[NR_THREADS + 1];
static char own_names[NR_THREADS + 1][16];

/*
 * Thread i: CALLS calls of "common" and one of its own region, of
 * (i + 1) million slots each, a different mix per thread.  Threads 0 and
 * 1 close their handle and end before the process; 2 and 3 end without
 * closing it (the handle reports at exit); the main thread (i = 4)
 * measures too and never closes.
 */
static void *thread_work(void *arg)
{
	const struct emu_mix *mixes[] = { &MIX_CHAIN, &MIX_BRANCHY,
					   &MIX_STREAM, &MIX_DRAM, &MIX_CHAIN };
	long i = (long)arg;
	char name[16];
	struct td *td;

	snprintf(name, sizeof(name), "worker-%ld", i);
	if (i < NR_THREADS && i % 2 == 0) /* 0 and 2 named, 1 and 3 not */
		pthread_setname_np(pthread_self(), name);
	if (td_open(&td, NULL) < 0)
		exit(10);
	for (int c = 0; c < CALLS; c++) {
		if (td_named_begin(td, &common[i]) < 0)
			exit(11);
		emu_run((uint64_t)(i + 1) * 1000000, mixes[i]);
		if (td_named_end(td, &common[i], NULL) < 0)
			exit(12);
	}
	if (td_named_begin(td, &own[i]) < 0)
		exit(13);
	emu_run(2000000, mixes[i]);
	if (td_named_end(td, &own[i], NULL) < 0)
		exit(14);
	if (i < 2)
		td_close(td);
	return NULL;
}

static void threads_child(void *arg)
{
	pthread_t t[NR_THREADS];

	(void)arg;
	for (long i = 0; i <= NR_THREADS; i++) {
		common[i] = (struct td_named)TD_NAMED_INIT("common");
		snprintf(own_names[i], sizeof(own_names[i]), "own_%ld", i);
		own[i] = (struct td_named)TD_NAMED_INIT(own_names[i]);
	}
	for (long i = 0; i < NR_THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_work, (void *)i))
			exit(20);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	thread_work((void *)(long)NR_THREADS);
}

struct table {
	int lines, nkeys;
	char keys[MAX_FIELDS][64];
	char f[MAX_LINES][MAX_FIELDS][64];
};

static int col(const struct table *t, const char *key)
{
	for (int i = 0; i < t->nkeys; i++)
		if (!strcmp(t->keys[i], key))
			return i;
	fail_msg("no column %s", key);
	return -1;
}

/* One header (the first line), then rows of as many fields. */
static void parse_csv(char *text, struct table *t)
{
	char *line, *save = NULL;

	memset(t, 0, sizeof(*t));
	line = strtok_r(text, "\n", &save);
	assert_non_null(line);
	t->nkeys = csv_split(line, t->keys, MAX_FIELDS);
	assert_string_equal(t->keys[0], "kind");
	assert_string_equal(t->keys[2], "thread");
	while ((line = strtok_r(NULL, "\n", &save))) {
		assert_true(t->lines < MAX_LINES);
		assert_int_equal(csv_split(line, t->f[t->lines], MAX_FIELDS),
				 t->nkeys);
		assert_string_equal(t->f[t->lines][0], "region");
		t->lines++;
	}
}

static double num(const struct table *t, int row, const char *key)
{
	return strtod(t->f[row][col(t, key)], NULL);
}

/* The all row of `name` against its thread rows, recomputed here. */
static void check_all_row(const struct table *t, const char *name,
			  int want_threads)
{
	double calls = 0, slots = 0, ret = 0, min = 1, max = 0;
	int threads = 0, all = -1;

	for (int r = 0; r < t->lines; r++) {
		if (strcmp(t->f[r][1], name))
			continue;
		if (!strcmp(t->f[r][2], "all")) {
			assert_int_equal(all, -1);
			all = r;
			continue;
		}
		assert_int_equal(all, -1); /* thread rows come first */
		assert_true(atoi(t->f[r][2]) > 0);
		threads++;
		calls += num(t, r, "calls");
		slots += num(t, r, "slots");
		ret += num(t, r, "retiring") * num(t, r, "slots");
		if (num(t, r, "min_retiring") < min)
			min = num(t, r, "min_retiring");
		if (num(t, r, "max_retiring") > max)
			max = num(t, r, "max_retiring");
	}
	assert_int_equal(threads, want_threads);
	assert_true(all >= 0);
	assert_true(num(t, all, "calls") == calls);
	assert_true(num(t, all, "slots") == slots);
	/* slot-weighted, to the 6 decimals written */
	assert_true(fabs(num(t, all, "retiring") - ret / slots) < 2e-6);
	assert_true(num(t, all, "min_retiring") == min);
	assert_true(num(t, all, "max_retiring") == max);
}

static void test_threads_csv(void **state)
{
	char path[32];
	struct table *t = calloc(1, sizeof(*t));
	char *text;
	int named = 0;

	(void)state;
	assert_non_null(t);
	temp_path(path);
	in_child(threads_child, NULL, path, "csv", NULL);
	text = slurp(path);
	parse_csv(text, t);
	/* common: 5 threads + all; own_i: 1 thread + all, 5 times */
	assert_int_equal(t->lines, (5 + 1) + 5 * 2);
	check_all_row(t, "common", NR_THREADS + 1);
	check_all_row(t, "own_3", 1);
	for (int r = 0; r < t->lines; r++)
		if (strstr(t->f[r][2], ":worker-"))
			named++;
	/* workers 0 and 2: their common and own rows */
	assert_int_equal(named, 4);
	assert_true(num(t, 0, "slots") > 0);
	free(text);
	free(t);
	unlink(path);
}

static void test_threads_jsonl(void **state)
{
	char path[32], keys[MAX_FIELDS][32];
	char *text, *line, *save = NULL;
	int lines = 0, all = 0, nkeys = -1;

	(void)state;
	temp_path(path);
	in_child(threads_child, NULL, path, "jsonl", NULL);
	text = slurp(path);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int n = json_flat(line, keys, MAX_FIELDS);

		assert_true(n > 0);
		assert_true(nkeys < 0 || n == nkeys);
		nkeys = n;
		assert_string_equal(keys[2], "thread");
		if (strstr(line, "\"thread\":\"all\""))
			all++;
		lines++;
	}
	assert_int_equal(lines, (5 + 1) + 5 * 2);
	assert_int_equal(all, 6);
	free(text);
	unlink(path);
}

/* ---- one static region, a thread per job, handles never closed -------- */

#define NR_JOBS 4
#define JOB_SLOTS 1500000

/*
 * Job j: a thread of its own that makes j + 1 calls of one static named
 * region (10 calls in all) and forgets td_close; job 0 also begins
 * "leak" and never ends it.
 */
static void *job_work(void *arg)
{
	static struct td_named hot = TD_NAMED_INIT("hot");
	static struct td_named leak = TD_NAMED_INIT("leak");
	long j = (long)arg;
	struct td *td;

	if (td_open(&td, NULL) < 0)
		exit(10);
	/* return codes ignored, as often: the report must be right anyway */
	for (long c = 0; c <= j; c++) {
		td_named_begin(td, &hot);
		emu_run(JOB_SLOTS, &MIX_DRAM);
		td_named_end(td, &hot, NULL);
	}
	if (j == 0)
		td_named_begin(td, &leak);
	emu_run(JOB_SLOTS, &MIX_CHAIN); /* no call: in leak only */
	return NULL;
}

static void jobs_child(void *arg)
{
	pthread_t t;

	(void)arg;
	for (long j = 0; j < NR_JOBS; j++) {
		if (pthread_create(&t, NULL, job_work, (void *)j) ||
		    pthread_join(t, NULL))
			exit(20);
	}
}

/* A row's value, by column name, as a number. */
static double row_num(const struct table *t, const char *name,
		      const char *thread, int thread_rank, const char *key)
{
	int seen = 0;

	for (int r = 0; r < t->lines; r++) {
		if (strcmp(t->f[r][1], name))
			continue;
		if (thread ? !strcmp(t->f[r][2], thread)
			   : strcmp(t->f[r][2], "all") && seen++ == thread_rank)
			return num(t, r, key);
	}
	fail_msg("no row %s %s %d", name, thread ? thread : "", thread_rank);
	return -1;
}

/*
 * Each job's thread row has its own calls (j + 1), the all row the 10
 * calls made and their slots exactly, the fractions the mix's within
 * err; "leak" says it is still open, in its thread row and in the all row,
 * with no call and the same err in both.
 */
static void test_jobs_forgotten_close(void **state)
{
	char path[32];
	struct table *t = calloc(1, sizeof(*t));
	char *text;

	(void)state;
	assert_non_null(t);
	temp_path(path);
	in_child(jobs_child, NULL, path, "csv", NULL);
	text = slurp(path);
	parse_csv(text, t);
	assert_int_equal(t->lines, (NR_JOBS + 1) + 2);
	for (int j = 0; j < NR_JOBS; j++) {
		assert_true(row_num(t, "hot", NULL, j, "calls") == j + 1);
		assert_true(row_num(t, "hot", NULL, j, "slots") ==
			    (j + 1) * (double)JOB_SLOTS);
		assert_true(row_num(t, "hot", NULL, j, "open") == 0);
	}
	check_all_row(t, "hot", NR_JOBS);
	assert_true(row_num(t, "hot", "all", 0, "calls") == 10);
	assert_true(row_num(t, "hot", "all", 0, "slots") == 10.0 * JOB_SLOTS);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_true(fabs(row_num(t, "hot", "all", 0, td_l1_name(i)) -
				 MIX_DRAM.f[i]) <=
			    row_num(t, "hot", "all", 0, "err") + 1e-6);
	assert_true(row_num(t, "hot", "all", 0, "max_depth") == 1);
	assert_true(row_num(t, "leak", NULL, 0, "calls") == 0);
	assert_true(row_num(t, "leak", NULL, 0, "open") == 1);
	assert_true(row_num(t, "leak", "all", 0, "calls") == 0);
	assert_true(row_num(t, "leak", "all", 0, "open") == 1);
	assert_true(row_num(t, "leak", "all", 0, "err") ==
		    row_num(t, "leak", NULL, 0, "err"));
	free(text);
	free(t);
	unlink(path);
}

/*
 * The table says so in words, on the region's line: once, since one
 * thread measured it (its all row would say the same again).
 */
static void test_jobs_table(void **state)
{
	char path[32];
	char *text, *leak;

	(void)state;
	temp_path(path);
	in_child(jobs_child, NULL, path, "table", NULL);
	text = slurp(path);
	leak = strstr(text, "\nleak ");
	assert_non_null(leak);
	assert_non_null(strstr(leak, "still open: 1"));
	assert_true(strstr(leak, "still open: 1") < strchr(leak + 1, '\n'));
	assert_null(strstr(leak + 1, "\nleak "));
	/* hot: 4 threads, so 4 thread rows and the all row */
	assert_non_null(strstr(text, "\nhot                      all "));
	free(text);
	unlink(path);
}



/* ---- per-iteration records in the same report --------------------------- */

static struct td_named rec_region = TD_NAMED_INIT("rec");

static void *records_worker(void *arg)
{
	static struct td_record buf[4];
	struct td *td;

	(void)arg;
	if (td_open(&td, NULL) < 0 || td_records_attach(td, buf, 4) < 0)
		exit(10);
	for (uint64_t k = 7; k <= 8; k++) {
		td_named_begin(td, &rec_region);
		emu_run(k * 1000000, &MIX_DRAM);
		td_named_end(td, &rec_region, NULL);
	}
	td_close(td); /* its records with it */
	return NULL;
}

/*
 * Records detached, records of a handle closed in another thread, and
 * records still attached at exit (of an unnamed region): every one a row
 * of kind "record" under the report's one header, with its thread, in
 * the order each thread made them.
 */
static void records_child(void *arg)
{
	static struct td_record a[8], b[8];
	struct td_region r = { { 0 } };
	struct td *td;
	pthread_t t;
	size_t n;

	(void)arg;
	if (td_open(&td, NULL) < 0 || td_records_attach(td, a, 8) < 0)
		exit(10);
	for (uint64_t k = 1; k <= 3; k++) {
		td_named_begin(td, &rec_region);
		emu_run(k * 1000000, &MIX_STREAM);
		td_named_end(td, &rec_region, NULL);
	}
	if (td_records_detach(td, &n, NULL) < 0 || n != 3)
		exit(11);
	if (pthread_create(&t, NULL, records_worker, NULL) ||
	    pthread_join(t, NULL))
		exit(12);
	if (td_records_attach(td, b, 8) < 0)
		exit(13);
	for (uint64_t k = 5; k <= 6; k++) {
		td_region_begin(td, &r);
		emu_run(k * 1000000, &MIX_CHAIN);
		td_region_end(td, &r, NULL);
	}
}

static void test_records_in_report(void **state)
{
	static const double want_slots[] = { 1, 2, 3, 7, 8, 5, 6 };
	char path[32], *text, *line, *save = NULL, main_thread[64] = "";
	char f[MAX_FIELDS][64], keys[MAX_FIELDS][64];
	int nkeys, recs = 0, regions = 0;

	(void)state;
	temp_path(path);
	in_child(records_child, NULL, path, "csv", NULL);
	text = slurp(path);
	line = strtok_r(text, "\n", &save);
	assert_non_null(line);
	nkeys = csv_split(line, keys, MAX_FIELDS);
	assert_string_equal(keys[0], "kind");
	assert_string_equal(keys[5], "slots");
	while ((line = strtok_r(NULL, "\n", &save))) {
		assert_int_equal(csv_split(line, f, MAX_FIELDS), nkeys);
		if (!strcmp(f[0], "region")) {
			assert_int_equal(recs, 0); /* regions first */
			regions++;
			continue;
		}
		assert_string_equal(f[0], "record");
		assert_true(recs < 7);
		assert_true(strtod(f[5], NULL) == want_slots[recs] * 1e6);
		assert_string_equal(f[1], recs < 5 ? "rec" : "");
		assert_string_equal(f[3], "1"); /* calls */
		if (recs == 0)
			strcpy(main_thread, f[2]);
		if (recs < 3 || recs >= 5) /* the main thread's */
			assert_string_equal(f[2], main_thread);
		else /* the worker's, its thread id */
			assert_true(atoi(f[2]) > 0 && strcmp(f[2], main_thread));
		recs++;
	}
	assert_int_equal(regions, 3); /* rec: main, worker, all */
	assert_int_equal(recs, 7);
	free(text);
	unlink(path);
}

/* ---- the table: compact above a few regions, full on request --------- */

#define MANY 6

static void many_child(void *arg)
{
	struct td *td;
	char name[16];

	(void)arg;
	if (td_open(&td, NULL) < 0)
		exit(10);
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "many_%d", i);
		for (int c = 0; c < 2; c++) {
			td_named_begin_str(td, name);
			emu_run(1000000 * (uint64_t)(i + 1), &MIX_BRANCHY);
			td_named_end_str(td, name, NULL);
		}
	}
}

/* Lines of text that start with prefix. */
static int lines_starting(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		n += !strncmp(l, prefix, strlen(prefix));
	return n;
}

/*
 * Above TOPDOWN_FORMAT=table's few regions, one line per region: its
 * calls, slots, the four level-1 shares and err, as the CSV has them.
 */
static void test_many_regions_compact(void **state)
{
	char path[32], csv_path[32], want[160];
	struct table *t = calloc(1, sizeof(*t));
	char *text, *csv;

	(void)state;
	assert_non_null(t);
	temp_path(path);
	temp_path(csv_path);
	in_child(many_child, NULL, path, "table", NULL);
	in_child(many_child, NULL, csv_path, "csv", NULL);
	text = slurp(path);
	csv = slurp(csv_path);
	parse_csv(csv, t);
	assert_int_equal(lines_starting(text, "region "), 1);
	assert_int_equal(lines_starting(text, "many_"), MANY);
	assert_int_equal(lines_starting(text, "  "), 0); /* no category lines */
	for (int i = 0; i < MANY; i++) {
		char name[16], *line;

		snprintf(name, sizeof(name), "many_%d ", i);
		line = strstr(text, name);
		assert_non_null(line);
		name[strlen(name) - 1] = '\0';
		/* the same figures as the CSV's all row, in the table's units */
		snprintf(want, sizeof(want), " %8.0f %16.0f %8.1f%% %8.1f%% "
			 "%8.1f%% %8.1f%% %7.2fpp\n",
			 row_num(t, name, "all", 0, "calls"),
			 row_num(t, name, "all", 0, "slots"),
			 100 * row_num(t, name, "all", 0, "retiring"),
			 100 * row_num(t, name, "all", 0, "bad_speculation"),
			 100 * row_num(t, name, "all", 0, "frontend_bound"),
			 100 * row_num(t, name, "all", 0, "backend_bound"),
			 100 * row_num(t, name, "all", 0, "err"));
		assert_non_null(strstr(line, want));
		assert_true(strstr(line, want) < strchr(line, '\n'));
	}
	assert_non_null(strstr(text, "TOPDOWN_FORMAT=full"));
	free(text);
	free(csv);
	free(t);
	unlink(path);
	unlink(csv_path);
}

/* TOPDOWN_FORMAT=full: every share of every region, whatever their number. */
static void test_many_regions_full(void **state)
{
	char path[32];
	char *text;

	(void)state;
	temp_path(path);
	in_child(many_child, NULL, path, "full", NULL);
	text = slurp(path);
	assert_int_equal(lines_starting(text, "many_"), MANY);
	assert_int_equal(lines_starting(text, "  retiring "), MANY);
	assert_int_equal(lines_starting(text, "    memory_bound "), MANY);
	free(text);
	unlink(path);
}

/* Compact, several threads: the all row, with their number. */
static void test_threads_compact(void **state)
{
	char path[32];
	char *text;

	(void)state;
	temp_path(path);
	in_child(threads_child, NULL, path, "compact", NULL);
	text = slurp(path);
	assert_int_equal(lines_starting(text, "common "), 1);
	assert_int_equal(lines_starting(text, "common                   all (5) "), 1);
	assert_int_equal(lines_starting(text, "own_"), NR_THREADS + 1);
	free(text);
	unlink(path);
}

/* ---- written once, at exit ---------------------------------------------- */

static void close_then_check_child(void *arg)
{
	static struct td_named n = TD_NAMED_INIT("env_region");
	const char *path = arg;
	struct td *td;
	FILE *f;

	if (td_open(&td, NULL) < 0)
		exit(10);
	for (int i = 0; i < 4; i++) {
		td_named_begin(td, &n);
		emu_run(2000000, &MIX_STREAM);
		td_named_end(td, &n, NULL);
	}
	td_close(td);
	f = fopen(path, "r");
	if (!f || fgetc(f) != EOF) /* nothing before exit */
		exit(11);
	fclose(f);
}

static void test_close_reports_at_exit(void **state)
{
	char path[32], want[96];
	char *text;

	(void)state;
	temp_path(path);
	in_child(close_then_check_child, path, path, "csv", NULL);
	text = slurp(path);
	assert_memory_equal(text, "kind,name,thread,calls,", 23);
	assert_non_null(strstr(text, "\nregion,env_region,all,4,0,8000000,"));
	/* one header: no second "kind," anywhere */
	assert_null(strstr(text + 1, "kind,"));
	snprintf(want, sizeof(want), "\nregion,env_region,");
	assert_non_null(strstr(text, want));
	free(text);
	unlink(path);
}

/*
 * Whether thread tid of this process sleeps in read(2).  The first field
 * of /proc/self/task/<tid>/syscall is the number of the system call the
 * thread is blocked in; it is "running" while the thread runs and -1
 * while it sleeps outside a system call (fs/proc/base.c,
 * proc_pid_syscall; lib/syscall.c, task_current_syscall).  A thread that
 * has ended since the directory was listed has no file: not running.
 */
static bool sleeps_in_read(pid_t tid)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			exit(20);
		return true;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		exit(21);
	buf[n] = 0;
	return buf[0] >= '0' && buf[0] <= '9' && atol(buf) == SYS_read;
}

/*
 * Return once every other thread of this process sleeps in read(2): the
 * report's signal watcher thread waits there for a signal.  A thread on
 * its way there may hold a lock of the allocator (under ASan, its own
 * start calls pthread_getattr_np, which allocates), and GCC 12's ASan
 * runtime does not take its allocator's locks around fork: a child
 * forked then finds that lock held forever and hangs in its next
 * allocation or in LeakSanitizer's check at exit.  The state is observed,
 * not waited for by time.
 */
static void wait_others_in_read(void)
{
	pid_t self = gettid(), tid;
	struct dirent *e;
	bool all;
	DIR *d;

	do {
		sched_yield();
		d = opendir("/proc/self/task");
		if (!d)
			exit(22);
		all = true;
		while ((e = readdir(d))) {
			tid = atoi(e->d_name); /* 0: "." and ".." */
			if (tid && tid != self && !sleeps_in_read(tid))
				all = false;
		}
		closedir(d);
	} while (!all);
}

/*
 * A fork child that exits does not write its parent's report.  The fork
 * waits for the watcher thread to be in its read(2) (see above).
 */
static void fork_child_child(void *arg)
{
	static struct td_named n = TD_NAMED_INIT("parent_only");
	struct td *td;
	pid_t pid;
	int status;

	(void)arg;
	if (td_open(&td, NULL) < 0)
		exit(10);
	td_named_begin(td, &n);
	emu_run(2000000, &MIX_STREAM);
	td_named_end(td, &n, NULL);
	wait_others_in_read();
	pid = fork();
	if (pid == 0)
		exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		exit(11);
}

static void test_fork_child_silent(void **state)
{
	char path[32];
	char *text;

	(void)state;
	temp_path(path);
	in_child(fork_child_child, NULL, path, "jsonl", NULL);
	text = slurp(path);
	assert_non_null(strstr(text, "\"name\":\"parent_only\""));
	/* one thread row and one all row: written once */
	assert_int_equal(strchr(strchr(text, '\n') + 1, '\n')[1], 0);
	free(text);
	unlink(path);
}

/* ---- a report that survives SIGINT and SIGTERM ------------------------ */

#define SIG_CALLS 3
#define SIG_SLOTS 2000000

/* SIG_CALLS calls of "ended", then "running" begun and never ended. */
static struct td *measure_then_begin(void)
{
	static struct td_named ended = TD_NAMED_INIT("ended");
	static struct td_named running = TD_NAMED_INIT("running");
	struct td *td;

	if (td_open(&td, NULL) < 0)
		exit(10);
	for (int c = 0; c < SIG_CALLS; c++) {
		if (td_named_begin(td, &ended) < 0)
			exit(11);
		emu_run(SIG_SLOTS, &MIX_DRAM);
		if (td_named_end(td, &ended, NULL) < 0)
			exit(12);
	}
	if (td_named_begin(td, &running) < 0)
		exit(13);
	emu_run(SIG_SLOTS, &MIX_CHAIN);
	return td;
}

static void killed_child(void *arg)
{
	/* at its default, as in a terminal: a shell without job control
	 * starts background commands with SIGINT ignored (bash(1)) */
	signal(*(int *)arg, SIG_DFL);
	measure_then_begin();
	raise(*(int *)arg);
	exit(30); /* not reached: the default action ends the process */
}

/*
 * Killed by the signal, as without the library, and the report has
 * every call ended before it, says it is partial and why, and shows the
 * region that was running as open.
 */
static void killed_by(int sig, const char *name)
{
	char path[32], mark[64];
	struct table *t = calloc(1, sizeof(*t));
	char *text, *body;

	assert_non_null(t);
	temp_path(path);
	in_child_ends(killed_child, &sig, path, "csv", NULL, sig);
	text = slurp(path);
	snprintf(mark, sizeof(mark), "# partial: %s stopped the process", name);
	assert_memory_equal(text, mark, strlen(mark));
	body = strchr(text, '\n') + 1;
	parse_csv(body, t);
	assert_int_equal(t->lines, 4); /* ended, running: thread and all */
	assert_true(row_num(t, "ended", "all", 0, "calls") == SIG_CALLS);
	assert_true(row_num(t, "ended", "all", 0, "slots") ==
		    (double)SIG_CALLS * SIG_SLOTS);
	for (int i = 0; i < TD_L1_COUNT; i++)
		assert_true(fabs(row_num(t, "ended", "all", 0, td_l1_name(i)) -
				 MIX_DRAM.f[i]) <=
			    row_num(t, "ended", "all", 0, "err") + 1e-6);
	assert_true(row_num(t, "running", "all", 0, "calls") == 0);
	assert_true(row_num(t, "running", "all", 0, "open") == 1);
	free(text);
	free(t);
	unlink(path);
}

static void test_sigterm_partial(void **state)
{
	(void)state;
	killed_by(SIGTERM, "SIGTERM");
}

static void test_sigint_partial(void **state)
{
	(void)state;
	killed_by(SIGINT, "SIGINT");
}

static volatile sig_atomic_t own_handler_ran;

static void own_handler(int sig)
{
	(void)sig;
	own_handler_ran++;
}

/*
 * The program's own SIGINT handler, installed before td_open, still runs
 * (once); the program goes on, and its report at exit is the whole one,
 * in place of the partial one: every call, one header, no partial mark.
 */
static void own_handler_child(void *arg)
{
	static struct td_named after = TD_NAMED_INIT("after");
	struct td *td;

	(void)arg;
	if (signal(SIGINT, own_handler) == SIG_ERR)
		exit(20);
	td = measure_then_begin();
	raise(SIGINT);
	if (own_handler_ran != 1)
		exit(21);
	td_named_begin(td, &after);
	emu_run(SIG_SLOTS, &MIX_STREAM);
	td_named_end(td, &after, NULL);
}

static void test_own_handler_kept(void **state)
{
	char path[32];
	struct table *t = calloc(1, sizeof(*t));
	char *text;

	(void)state;
	assert_non_null(t);
	temp_path(path);
	in_child(own_handler_child, NULL, path, "csv", NULL);
	text = slurp(path);
	assert_null(strstr(text, "partial"));
	parse_csv(text, t); /* one header, the first line */
	assert_int_equal(t->lines, 6);
	assert_true(row_num(t, "ended", "all", 0, "calls") == SIG_CALLS);
	assert_true(row_num(t, "after", "all", 0, "calls") == 1);
	free(text);
	free(t);
	unlink(path);
}

/* A signal the program ignores (nohup) stays ignored: no partial report. */
static void ignored_child(void *arg)
{
	(void)arg;
	if (signal(SIGTERM, SIG_IGN) == SIG_ERR)
		exit(20);
	measure_then_begin();
	raise(SIGTERM);
}

static void test_ignored_stays_ignored(void **state)
{
	char path[32];
	struct table *t = calloc(1, sizeof(*t));
	char *text;

	(void)state;
	assert_non_null(t);
	temp_path(path);
	in_child(ignored_child, NULL, path, "csv", NULL);
	text = slurp(path);
	assert_null(strstr(text, "partial"));
	parse_csv(text, t);
	assert_true(row_num(t, "ended", "all", 0, "calls") == SIG_CALLS);
	assert_true(row_num(t, "running", "all", 0, "open") == 1);
	free(text);
	free(t);
	unlink(path);
}

/* Threads' handles too, in JSON Lines: the mark is an object of its own. */
static void threads_killed_child(void *arg)
{
	threads_child(arg);
	raise(SIGTERM);
	exit(30);
}

static void test_threads_sigterm_jsonl(void **state)
{
	char path[32];
	char *text, *line, *save = NULL;
	int lines = 0, all = 0;

	(void)state;
	temp_path(path);
	in_child_ends(threads_killed_child, NULL, path, "jsonl", NULL, SIGTERM);
	text = slurp(path);
	line = strtok_r(text, "\n", &save);
	assert_non_null(line);
	assert_string_equal(line, "{\"kind\":\"partial\",\"reason\":\"SIGTERM\"}");
	while ((line = strtok_r(NULL, "\n", &save))) {
		if (strstr(line, "\"thread\":\"all\""))
			all++;
		lines++;
	}
	/* as test_threads_jsonl: closed handles, open ones and the main's */
	assert_int_equal(lines, (5 + 1) + 5 * 2);
	assert_int_equal(all, 6);
	free(text);
	unlink(path);
}

/* ---- bad settings ------------------------------------------------------- */

static void measure_child(void *arg)
{
	static struct td_named n = TD_NAMED_INIT("still_measured");
	struct td *td;

	(void)arg;
	if (td_open(&td, NULL) < 0) /* a bad report setting: still opens */
		exit(10);
	td_named_begin(td, &n);
	emu_run(3000000, &MIX_DRAM);
	if (td_named_end(td, &n, NULL) < 0)
		exit(11);
}

static void test_bad_format(void **state)
{
	char path[32];
	char *text;

	(void)state;
	temp_path(path);
	in_child(measure_child, NULL, path, "json", NULL);
	text = slurp(path);
	assert_non_null(strstr(text, "TOPDOWN_FORMAT=\"json\""));
	assert_non_null(strstr(text, "table, csv, jsonl"));
	/* the table follows, with the region measured */
	assert_non_null(strstr(text, "\nregion "));
	assert_non_null(strstr(text, "\nstill_measured "));
	free(text);
	unlink(path);
}

static void unwritable(const char *report, const char *want)
{
	char err_path[32];
	char *text;

	temp_path(err_path);
	in_child(measure_child, NULL, report, "csv", err_path);
	text = slurp(err_path);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "accepted: stderr, stdout (or -) or a writable file"));
	/* the report itself, on stderr */
	assert_non_null(strstr(text, "\nkind,name,thread,"));
	assert_non_null(strstr(text, "\nregion,still_measured,all,1,0,"));
	free(text);
	unlink(err_path);
}

static void test_unwritable_path(void **state)
{
	(void)state;
	unwritable("/nonexistent-dir/r.csv",
		   "TOPDOWN_REPORT=\"/nonexistent-dir/r.csv\" cannot be "
		   "written (No such file or directory)");
}

static void test_empty_path(void **state)
{
	(void)state;
	unwritable("", "TOPDOWN_REPORT=\"\" cannot be written (empty)");
}

/* A setting that changes the numbers still stops td_open. */
static void test_bad_reset(void **state)
{
	struct td *td = NULL;
	const char *msg = td_strerror(-EINVAL);

	(void)state;
	emu_setup(EMU_SPR);
	setenv("TOPDOWN_RESET", "sometimes", 1);
	assert_int_equal(td_open(&td, NULL), -EINVAL);
	assert_null(td);
	unsetenv("TOPDOWN_RESET");
	assert_non_null(strstr(msg, "TOPDOWN_RESET"));
	assert_non_null(strstr(msg, "auto|always|never"));
	assert_int_equal(td_open(&td, NULL), 0);
	td_close(td);
	emu_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_csv),
		cmocka_unit_test(test_threads_jsonl),
		cmocka_unit_test(test_jobs_forgotten_close),
		cmocka_unit_test(test_jobs_table),
		cmocka_unit_test(test_records_in_report),
		cmocka_unit_test(test_many_regions_compact),
		cmocka_unit_test(test_many_regions_full),
		cmocka_unit_test(test_threads_compact),
		cmocka_unit_test(test_close_reports_at_exit),
		cmocka_unit_test(test_fork_child_silent),
		cmocka_unit_test(test_sigterm_partial),
		cmocka_unit_test(test_sigint_partial),
		cmocka_unit_test(test_own_handler_kept),
		cmocka_unit_test(test_ignored_stays_ignored),
		cmocka_unit_test(test_threads_sigterm_jsonl),
		cmocka_unit_test(test_bad_format),
		cmocka_unit_test(test_unwritable_path),
		cmocka_unit_test(test_empty_path),
		cmocka_unit_test(test_bad_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
