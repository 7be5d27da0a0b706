/* SPDX-License-Identifier: MIT */
/*
 * TOPDOWN_REPORT=stderr|stdout|-|<path> and TOPDOWN_FORMAT=table|csv|jsonl
 * (or compact and full: the table, one line per region or every share): the
 * caller's opt-in to one named-region report per process, written at
 * process exit.  Only here does the library write anywhere the caller did
 * not hand it, and only when asked to by the environment.
 *
 * One report whatever the number of handles and threads: handles that
 * will report are kept on a process-wide list; a handle closed before
 * exit hands its totals, per thread and region name, to the process's
 * list of closed totals; at exit the open handles' totals join them and
 * the report is written once (thread_report.c).  A mutex guards both
 * lists (cold path only: td_open, td_close, exit).
 *
 * A process stopped by SIGINT or SIGTERM writes the report it has so far,
 * marked partial (env_signal.c); one that goes on and exits writes its
 * whole report in place of it (a file is cut back to where the partial
 * one began; stderr gets both).
 *
 * A bad report setting never stops measurement: an unknown TOPDOWN_FORMAT
 * gives the table, and an unwritable TOPDOWN_REPORT gives stderr, each
 * with a line naming the bad value and the accepted ones.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

/* compact and full: the table, one line per region or every share */
static const char *const format_names[] = { "table", "csv", "jsonl",
					    "compact", "full" };

static struct {
	pthread_mutex_t lock;
	int pid;                  /* the process the rest belongs to */
	char *path;               /* of the first handle that asked */
	enum td_format format;
	enum td_table_view view;
	char *bad_format;
	bool written;             /* the exit report is out */
	long long start;          /* offset of the report in its file, or -1 */
	struct td *open;          /* open handles that will report */
	struct td_report_rows closed; /* totals of closed handles */
} proc = { .lock = PTHREAD_MUTEX_INITIALIZER, .start = -1 };

/* The mutex, known to the signal handler when this thread holds it. */
static void lock(void)
{
	pthread_mutex_lock(&proc.lock);
	td_env_signal_lock_held(true);
}

static void unlock(void)
{
	td_env_signal_lock_held(false);
	pthread_mutex_unlock(&proc.lock);
}

/*
 * The report's thread column: the thread id, with its name (comm, set by
 * pthread_setname_np or prctl PR_SET_NAME) where it differs from the
 * process's; proc(5) /proc/[pid]/task/[tid]/comm.
 */
static void thread_label(struct td *td)
{
	char path[64], comm[32] = "", main_comm[32] = "";

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", td->env.tid);
	if (td->env.tid != td->env.pid &&
	    td_sys_read_file(path, comm, sizeof(comm)) > 0 &&
	    td_sys_read_file("/proc/self/comm", main_comm,
			     sizeof(main_comm)) >= 0 &&
	    strcmp(comm, main_comm) != 0)
		snprintf(td->env.thread, sizeof(td->env.thread), "%d:%s",
			 td->env.tid, comm);
	else
		snprintf(td->env.thread, sizeof(td->env.thread), "%d",
			 td->env.tid);
}

static int format_from_env(struct td_env_report *env)
{
	const char *v = getenv("TOPDOWN_FORMAT");
	int i = 0;

	env->format = TD_FORMAT_TABLE;
	env->view = TD_VIEW_AUTO;
	if (td_env_choice("TOPDOWN_FORMAT", format_names, 5, &i) == 0) {
		if (i < 3)
			env->format = (enum td_format)(TD_FORMAT_TABLE + i);
		else
			env->view = i == 3 ? TD_VIEW_COMPACT : TD_VIEW_FULL;
		return 0;
	}
	env->bad_format = strdup(v);
	return env->bad_format ? 0 : -ENOMEM;
}

/* At td_open, in the opening thread: who opens, and what was asked. */
int td_env_report_init(struct td *td)
{
	const char *path = getenv("TOPDOWN_REPORT");

	td->env.pid = getpid();
	td->env.tid = gettid();
	thread_label(td);
	if (!path)
		return 0;
	td->env.path = strdup(path);
	if (!td->env.path)
		return -ENOMEM;
	return format_from_env(&td->env);
}

static void free_settings(struct td_env_report *env)
{
	free(env->path);
	free(env->bad_format);
	env->path = NULL;
	env->bad_format = NULL;
}

/*
 * A fork child inherits the parent's lists: they are the parent's to
 * report.  The child's first handle that asks starts its own.
 */
static void adopt_process(void)
{
	int pid = getpid();

	if (proc.pid == pid)
		return;
	td_rows_free(&proc.closed);
	free(proc.path);
	free(proc.bad_format);
	proc.path = proc.bad_format = NULL;
	proc.open = NULL;
	proc.written = false;
	proc.start = -1;
	proc.pid = pid;
}

/* td_open succeeded: the handle's totals will be in the report. */
void td_env_report_register(struct td *td)
{
	struct td **link;

	if (!td->env.path)
		return;
	lock();
	adopt_process();
	if (!proc.path) { /* the first handle's settings are the report's */
		proc.path = td->env.path;
		proc.bad_format = td->env.bad_format;
		proc.format = td->env.format;
		proc.view = (enum td_table_view)td->env.view;
		td->env.path = td->env.bad_format = NULL;
		td_env_signal_start();
	}
	link = &proc.open; /* in the order opened */
	while (*link)
		link = &(*link)->env.next;
	td->env.next = NULL;
	*link = td;
	td->env.listed = true;
	unlock();
}

static void unlist(struct td *td)
{
	for (struct td **link = &proc.open; *link; link = &(*link)->env.next) {
		if (*link == td) {
			*link = td->env.next;
			return;
		}
	}
}

/* The thread may have been named after td_open: read its name again. */
static void refresh_label(struct td *td)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", td->env.tid);
	if (access(path, F_OK) == 0)
		thread_label(td);
}

/* td_close: the handle's totals go to the process's list. */
void td_env_report_close(struct td *td)
{
	free_settings(&td->env);
	if (!td->env.listed)
		return;
	lock();
	if (proc.pid == td->env.pid && proc.pid == getpid()) {
		unlist(td);
		if (!proc.written) {
			refresh_label(td);
			td_rows_add_handle(&proc.closed, td);
		}
	}
	td->env.listed = false;
	unlock();
}

/*
 * A file's report starts where the file ended when the process first
 * wrote to it; written again (the whole report after a partial one), the
 * file is cut back there.
 */
static void position(FILE *f)
{
	if (proc.start < 0) {
		if (fseeko(f, 0, SEEK_END) == 0)
			proc.start = ftello(f);
	} else if (ftruncate(fileno(f), (off_t)proc.start) == 0) {
		fseeko(f, 0, SEEK_END);
	}
}

/*
 * A buffer goes back to its caller (td_records_detach, or replaced by
 * td_records_attach): its records to the process's report.
 */
void td_env_report_records(struct td *td)
{
	if (!td->env.listed || !td->sink.buf)
		return;
	lock();
	if (proc.pid == td->env.pid && proc.pid == getpid() && !proc.written) {
		refresh_label(td);
		td_rows_add_records(&proc.closed, td->sink.buf,
				    (size_t)(td->sink.next - td->sink.buf),
				    td->env.thread);
	}
	unlock();
}

/* Where the report goes; stderr, with the reason, when it cannot. */
static FILE *open_report(void)
{
	FILE *f;

	if (strcmp(proc.path, "stderr") == 0)
		return stderr;
	if (strcmp(proc.path, "stdout") == 0 || strcmp(proc.path, "-") == 0)
		return stdout;
	f = *proc.path ? fopen(proc.path, "ae") : NULL;
	if (f) {
		position(f);
		return f;
	}
	fprintf(stderr,
		"libtopdown: TOPDOWN_REPORT=\"%s\" cannot be written (%s); "
		"accepted: stderr, stdout (or -) or a writable file path; "
		"the report "
		"follows on stderr\n",
		proc.path, *proc.path ? strerror(errno) : "empty");
	return stderr;
}

/*
 * A report the process did not finish says so first, in its format's
 * own terms: a line of the table, a CSV comment, a JSON object of its
 * own kind.
 */
static void partial_mark(FILE *f, const char *why)
{
	if (proc.format == TD_FORMAT_JSONL)
		fprintf(f, "{\"kind\":\"partial\",\"reason\":\"%s\"}\n", why);
	else
		fprintf(f, "%spartial: %s stopped the process before it "
			"exited; calls it had ended are counted, a region "
			"still running shows under open\n",
			proc.format == TD_FORMAT_CSV ? "# " : "", why);
}

static void write_report(const struct td_report_rows *rows, const char *why)
{
	FILE *f = open_report();

	if (proc.bad_format)
		fprintf(f,
			"libtopdown: TOPDOWN_FORMAT=\"%s\" is not one of "
			"table, csv, jsonl, compact, full: the report follows "
			"as a table\n",
			proc.bad_format);
	if (why)
		partial_mark(f, why);
	td_rows_write(f, rows, proc.format, proc.view);
	if (f != stderr && f != stdout)
		fclose(f);
	else
		fflush(f);
}

/* The closed handles' totals and the open ones' (lock held). */
static void write_now(const char *why)
{
	struct td_report_rows rows = { 0 };
	int err = td_rows_copy(&rows, &proc.closed);

	for (struct td *td = proc.open; td && !err; td = td->env.next) {
		refresh_label(td);
		err = td_rows_add_handle(&rows, td);
	}
	write_report(&rows, why);
	td_rows_free(&rows);
}

/* A signal stops the process (env_signal.c's thread): the report so far. */
void td_env_report_partial(int sig)
{
	lock();
	if (proc.path && !proc.written && proc.pid == getpid())
		write_now(td_env_signal_name(sig));
	unlock();
}

/* Process exit (or unload): the one report, open handles included. */
__attribute__((destructor)) static void report_at_exit(void)
{
	td_env_signal_stop(); /* its thread takes the mutex */
	lock();
	if (proc.path && !proc.written && proc.pid == getpid()) {
		write_now(NULL);
		proc.written = true;
	}
	td_rows_free(&proc.closed);
	unlock();
}
