/* SPDX-License-Identifier: MIT */
/*
 * A program linked with libtopdown for test/test_cmd.sh, run under
 * topdown run: what a user's program does, one way per argument.
 *   signal INT|TERM|KILL   3 calls of "ended", "running" begun, then the
 *                          signal sent to itself
 *   wait FILE              the same, but FILE created and a signal
 *                          awaited
 *   unnamed                3 calls of an unnamed region (td_region_*)
 *   records N              N iterations of "iter", widths 1..N of work,
 *                          recorded in an attached buffer (left attached)
 *   unnamed-records N      the same of an unnamed region
 *   named N                one call of each of N named regions
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <topdown.h>

static volatile unsigned long sink;

static void work(unsigned long n)
{
	for (unsigned long i = 0; i < n * 200000; i++)
		sink += i ^ (sink >> 3);
}

static int sig_of(const char *s)
{
	if (!strcmp(s, "INT"))
		return SIGINT;
	return !strcmp(s, "TERM") ? SIGTERM : SIGKILL;
}

/* sig sent to itself, or (0) ready_file created and a signal awaited */
static void killed(struct td *td, int sig, const char *ready_file)
{
	static struct td_named ended = TD_NAMED_INIT("ended");
	static struct td_named running = TD_NAMED_INIT("running");

	for (int c = 0; c < 3; c++) {
		td_named_begin(td, &ended);
		work(2);
		td_named_end(td, &ended, NULL);
	}
	td_named_begin(td, &running);
	work(1);
	if (sig)
		kill(getpid(), sig);
	else
		fclose(fopen(ready_file, "w"));
	for (;;)
		pause();
}

static void unnamed(struct td *td)
{
	struct td_region r = { { 0 } };

	for (int c = 0; c < 3; c++) {
		td_region_begin(td, &r);
		work(1);
		td_region_end(td, &r, NULL);
	}
}

static void records(struct td *td, int n, bool named)
{
	static struct td_named iter = TD_NAMED_INIT("iter");
	struct td_record *buf = calloc((size_t)n, sizeof(*buf));
	struct td_region r = { { 0 } };

	if (!buf || td_records_attach(td, buf, (size_t)n) < 0)
		exit(3);
	for (int i = 0; i < n; i++) {
		if (named)
			td_named_begin(td, &iter);
		else
			td_region_begin(td, &r);
		work((unsigned long)i + 1);
		if (named)
			td_named_end(td, &iter, NULL);
		else
			td_region_end(td, &r, NULL);
	}
}

static void named(struct td *td, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "region_%02d", i);
		td_named_begin_str(td, name);
		work(1);
		td_named_end_str(td, name, NULL);
	}
}

int main(int argc, char **argv)
{
	struct td *td;
	int err;

	if (argc < 2)
		return 2;
	/*
	 * The signal cases need SIGINT and SIGTERM at their default, as in a
	 * terminal; a shell without job control starts background commands
	 * with SIGINT ignored (bash(1), "SIGNALS"), and an ignored SIGINT
	 * would leave the program paused for ever.  Before td_open: the
	 * library keeps an ignored signal ignored.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	err = td_open(&td, NULL);
	if (err < 0) {
		fprintf(stderr, "report_prog: td_open: %s\n", td_strerror(err));
		return 1;
	}
	if (!strcmp(argv[1], "signal") && argc > 2)
		killed(td, sig_of(argv[2]), NULL);
	else if (!strcmp(argv[1], "wait") && argc > 2)
		killed(td, 0, argv[2]);
	else if (!strcmp(argv[1], "unnamed"))
		unnamed(td);
	else if (!strcmp(argv[1], "records") && argc > 2)
		records(td, atoi(argv[2]), true);
	else if (!strcmp(argv[1], "unnamed-records") && argc > 2)
		records(td, atoi(argv[2]), false);
	else if (!strcmp(argv[1], "named") && argc > 2)
		named(td, atoi(argv[2]));
	else
		return 2;
	return 0;
}
