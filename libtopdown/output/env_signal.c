/* SPDX-License-Identifier: MIT */
/*
 * The TOPDOWN_REPORT report of a process stopped by SIGINT or SIGTERM.
 * The report is written at exit, and a signal whose action is to
 * terminate ends the process without exit handlers (signal(7)): a Ctrl-C
 * or a kill(1) would lose everything measured.  So, with a report asked
 * for, the library catches both signals, has the report written (marked
 * partial, with the signal's name) and then hands the signal on to what
 * it would have done without the library.
 *
 * Why a thread writes it, not the handler: the report takes the report's
 * mutex, allocates (its rows) and formats with stdio, and none of these
 * may be called from a signal handler (signal-safety(7): a handler that
 * interrupted malloc or fprintf and calls it again deadlocks or corrupts
 * their state).  A thread of the library, started with the first handle
 * that will report, waits in read(2) on a pipe; the handler only writes a
 * byte to that pipe and waits in poll(2) for the thread's byte on a
 * second pipe.  The wait is bounded (WRITE_WAIT_MS): the thread may block
 * on a lock held by the very code the signal interrupted (malloc's, a
 * FILE's), and a process must not hang on its way out because of that.
 * Where the interrupted thread holds the report's own mutex the handler
 * does not wait at all.  Everything the handler calls is on the list of
 * async-signal-safe functions of signal-safety(7): write, read, poll,
 * getpid, sigaction, raise, and the previous handler (the program's own,
 * which had to be callable from a signal anyway).
 *
 * The program's own handling is kept: a signal the program ignores
 * (SIG_IGN, e.g. under nohup) is not caught; a handler the program had
 * installed before is called after the report, with the same arguments;
 * the default action is restored and the signal raised again, so that the
 * process ends as the signal ends it (a shell sees 128 + N).  A handler the
 * program installs after td_open replaces the library's: that program
 * decides, and its report is written if it exits.  A process that goes on
 * after the signal writes its whole report at exit, in place of the
 * partial one (env_report.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

#define WRITE_WAIT_MS 10000

static const int caught[] = { SIGINT, SIGTERM };
#define NR_CAUGHT (sizeof(caught) / sizeof(caught[0]))

static struct {
	int pid;                 /* the process the thread and pipes are of */
	int wake[2];             /* handler -> thread: the signal's number */
	int done[2];             /* thread -> handler: the report is out */
	pthread_t thread;
	bool running;
	bool installed[NR_CAUGHT];
	struct sigaction prev[NR_CAUGHT];
} watch = { .wake = { -1, -1 }, .done = { -1, -1 } };

/*
 * Set while this thread holds the report's mutex (env_report.c).  The
 * initial-exec model makes the handler's read one load relative to the
 * thread pointer: a dynamic TLS access may allocate (__tls_get_addr).
 */
static __thread volatile sig_atomic_t holds_report_lock
	__attribute__((tls_model("initial-exec")));

void td_env_signal_lock_held(bool held)
{
	holds_report_lock = held;
}

const char *td_env_signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

static int caught_index(int sig)
{
	for (unsigned i = 0; i < NR_CAUGHT; i++)
		if (caught[i] == sig)
			return (int)i;
	return -1;
}

/* ---- the thread that writes the report ---------------------------------- */

static void *reporter(void *arg)
{
	unsigned char sig;
	ssize_t n;

	(void)arg;
	for (;;) {
		n = read(watch.wake[0], &sig, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || sig == 0) /* 0: td_env_signal_stop */
			return NULL;
		td_env_report_partial(sig);
		while (write(watch.done[1], &sig, 1) < 0 && errno == EINTR)
			;
	}
}

/* ---- the handler: async-signal-safe calls only -------------------------- */

static void wait_for_report(void)
{
	struct pollfd p = { .fd = watch.done[0], .events = POLLIN };
	unsigned char b;
	int n;

	do
		n = poll(&p, 1, WRITE_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		(void)!read(watch.done[0], &b, 1);
}

/* What the signal would have done without the library. */
static void chain(int sig, siginfo_t *info, void *ctx)
{
	const struct sigaction *prev = &watch.prev[caught_index(sig)];
	struct sigaction dfl;

	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, info, ctx);
	} else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	} else {
		/* pending until the handler returns and unblocks it */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sigaction(sig, &dfl, NULL);
		raise(sig);
	}
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	/* a fork child has neither the thread nor a report of its own yet */
	if (getpid() == watch.pid && !holds_report_lock &&
	    write(watch.wake[1], &b, 1) == 1)
		wait_for_report();
	chain(sig, info, ctx);
	errno = saved;
}

/* ---- start and stop (cold path, under the report's mutex) --------------- */

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 0)
			close(p[i]);
		p[i] = -1;
	}
}

static int start_thread(void)
{
	sigset_t block, old;
	int err;

	if (pipe2(watch.wake, O_CLOEXEC) < 0 ||
	    pipe2(watch.done, O_CLOEXEC) < 0)
		return -errno;
	/* the thread never takes the signals it is there to answer */
	sigemptyset(&block);
	for (unsigned i = 0; i < NR_CAUGHT; i++)
		sigaddset(&block, caught[i]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(&watch.thread, NULL, reporter, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	watch.running = true;
	return 0;
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < NR_CAUGHT; i++)
		sigaddset(&sa.sa_mask, caught[i]);
	for (unsigned i = 0; i < NR_CAUGHT; i++) {
		if (sigaction(caught[i], NULL, &watch.prev[i]) < 0 ||
		    watch.prev[i].sa_handler == SIG_IGN)
			continue;
		sa.sa_flags = SA_SIGINFO | SA_RESTART |
			      (watch.prev[i].sa_flags & SA_ONSTACK);
		watch.installed[i] = sigaction(caught[i], &sa, NULL) == 0;
	}
}

/*
 * The process's first handle that will report: the thread, then the
 * handlers.  A fork child inherits the handlers and the parent's pipes,
 * not the thread: it starts its own.  Without the thread (no memory, no
 * descriptor) the report is written at exit only, as before.
 */
void td_env_signal_start(void)
{
	int pid = getpid();

	if (watch.pid == pid)
		return;
	if (watch.pid) { /* the parent's, inherited across fork */
		close_pair(watch.wake);
		close_pair(watch.done);
		watch.running = false;
	}
	watch.pid = pid;
	if (start_thread() < 0) {
		close_pair(watch.wake);
		close_pair(watch.done);
		return;
	}
	install();
}

/* Exit or unload: the handlers as they were, the thread ended. */
void td_env_signal_stop(void)
{
	struct sigaction now;
	unsigned char stop = 0;

	if (watch.pid != getpid())
		return;
	for (unsigned i = 0; i < NR_CAUGHT; i++) {
		if (!watch.installed[i])
			continue;
		/* only if still ours: the program may have replaced it */
		if (sigaction(caught[i], NULL, &now) == 0 &&
		    (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_signal)
			sigaction(caught[i], &watch.prev[i], NULL);
		watch.installed[i] = false;
	}
	watch.pid = 0; /* a handler from now on only chains */
	if (watch.running) {
		while (write(watch.wake[1], &stop, 1) < 0 && errno == EINTR)
			;
		pthread_join(watch.thread, NULL);
		watch.running = false;
	}
	close_pair(watch.wake);
	close_pair(watch.done);
}
