/* SPDX-License-Identifier: MIT */
/*
 * topdown run: run a program linked with libtopdown with TOPDOWN_REPORT
 * pointing at a temporary file, so that the library writes the process's
 * one report (every thread) at exit, then hand it on in the format asked
 * for.  Every output says which PMU counted: a last column `pmu`
 * ("hardware", or "emulated:<profile>") in CSV and JSON Lines, a banner in
 * the table, the flag in the picture.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"

enum fmt { F_TABLE, F_CSV, F_JSONL, F_SVG };

struct run {
	const char *out;         /* -o FILE, or NULL: stderr */
	enum fmt fmt;
	bool emulate;
	const char *profile;
	const char *view;        /* -f compact|full: the table's view */
	bool functions;          /* --functions: preload the hooks */
	bool memory;             /* --memory: TOPDOWN_MEMORY=1 */
	char **prog;             /* PROG ARGS..., NULL-terminated */
	char pmu[40];            /* the pmu column's value */
	bool rows;               /* the report has a region or a record */
};

static int usage(FILE *f, int status)
{
	fprintf(f,
		"usage: topdown run [-o FILE] [-f FORMAT] [--emulate] [--profile P]\n"
		"                   [--functions] [--memory] -- PROG [ARGS...]\n"
		"\n"
		"Runs PROG, a program linked with libtopdown that measures named\n"
		"regions, and collects its report for the whole process (every\n"
		"thread: per-thread rows and an all-threads row per region).\n"
		"\n"
		"  -o FILE       write the report to FILE (default: stderr)\n"
		"  -f FORMAT     table (default), compact, full, csv, jsonl or svg\n"
		"                (svg needs -o); table is compact (one line per\n"
		"                region: calls, slots, level 1, err) above 4\n"
		"                regions, else full (every thread, level 2);\n"
		"                csv and jsonl get a last column pmu: hardware or\n"
		"                emulated:<profile>\n"
		"  --emulate     run PROG on the emulated PMU installed with the\n"
		"                library (synthetic counts; every output says EMULATED)\n"
		"  --profile P   the emulated CPU: %s\n"
		"                (spr, the default, and icl have PERF_METRICS)\n"
		"  --functions   PROG built with -finstrument-functions: a row per\n"
		"                function and per call path (libtopdown-functions\n"
		"                preloaded; PROG need not be linked with libtopdown)\n"
		"  --memory      the memory drill-down (TOPDOWN_MEMORY=1, which\n"
		"                PROG's environment also passes through): L1, L2,\n"
		"                L3, DRAM and store bound under memory bound\n"
		"\n"
		"Exit status: PROG's (128 + N when killed by signal N), or\n"
		"topdown run's own, 124 to 127: 124 a bad argument; 125 no\n"
		"report (PROG not linked with libtopdown, no handle opened, no\n"
		"named region measured), an I/O error, or PROG cannot be\n"
		"emulated; 126 PROG not executable; 127 PROG not found.  PROG\n"
		"stopped by SIGINT or SIGTERM (Ctrl-C or kill reach it) leaves a\n"
		"partial report, marked so; topdown run itself waits for PROG's\n"
		"report on Ctrl-C and passes SIGTERM on.\n",
		cmd_profiles);
	return status;
}

static int parse_format(const char *s, struct run *r)
{
	static const char *const names[] = { "table", "csv", "jsonl", "svg" };

	for (int i = 0; i < 4; i++) {
		if (!strcmp(s, names[i])) {
			r->fmt = (enum fmt)i;
			return 0;
		}
	}
	/* the library's table, one line per region or every share */
	if (!strcmp(s, "compact") || !strcmp(s, "full")) {
		r->fmt = F_TABLE;
		r->view = s;
		return 0;
	}
	cmd_error("run: bad format '%s' (want table, compact, full, csv, "
		  "jsonl or svg)", s);
	return -EINVAL;
}

static int need_value(int i, int argc, const char *opt)
{
	if (i + 1 < argc)
		return 0;
	cmd_error("run: %s needs a value (topdown run --help)", opt);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct run *r)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (cmd_is_help(a))
			return 1;
		if (!strcmp(a, "--emulate")) {
			r->emulate = true;
		} else if (!strcmp(a, "--functions")) {
			r->functions = true;
		} else if (!strcmp(a, "--memory")) {
			r->memory = true;
		} else if (!strcmp(a, "-o") || !strcmp(a, "-f") ||
			   !strcmp(a, "--profile")) {
			if (need_value(i, argc, a) < 0)
				return -EINVAL;
			if (a[1] == 'o')
				r->out = argv[++i];
			else if (a[1] == 'f' && parse_format(argv[++i], r) < 0)
				return -EINVAL;
			else if (a[1] == '-')
				r->profile = argv[++i];
		} else {
			cmd_error("run: unknown option '%s' (topdown run --help)", a);
			return -EINVAL;
		}
	}
	if (i >= argc) {
		cmd_error("run: no program given (topdown run [OPTIONS] -- PROG "
			  "[ARGS...])");
		return -EINVAL;
	}
	if (!cmd_profile_ok(r->profile)) {
		cmd_error("run: bad --profile '%s' (want one of %s)", r->profile,
			  cmd_profiles);
		return -EINVAL;
	}
	if (r->fmt == F_SVG && !r->out) {
		cmd_error("run: -f svg needs -o FILE.svg");
		return -EINVAL;
	}
	r->prog = argv + i;
	return 0;
}

static volatile sig_atomic_t child_pid;

/* kill(1) of topdown run reaches PROG, which writes what it has. */
static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/*
 * While PROG runs, a Ctrl-C (SIGINT to the terminal's whole process
 * group, PROG included) does not end topdown run, which still has PROG's
 * report to hand on (as system(3) ignores SIGINT while it waits);
 * SIGTERM is passed on to PROG.  PROG starts with both as they were.
 */
static void watch_signals(struct sigaction old[2])
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward };

	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, &ign, &old[0]);
	sigaction(SIGTERM, &fwd, &old[1]);
}

static void restore_signals(const struct sigaction old[2])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
}

/* PROG's exit status, as a shell reports it; -1 when it could not run. */
static int run_child(char **prog)
{
	struct sigaction old[2];
	int status;
	pid_t pid;

	watch_signals(old);
	pid = fork();
	if (pid < 0) {
		cmd_error("run: fork: %s", strerror(errno));
		restore_signals(old);
		return -1;
	}
	if (pid == 0) {
		restore_signals(old);
		execvp(prog[0], prog);
		cmd_error("run: cannot run '%s': %s", prog[0], strerror(errno));
		_exit(errno == ENOENT ? CMD_NOTFOUND : CMD_NOEXEC);
	}
	child_pid = pid;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			restore_signals(old);
			return -1;
		}
	}
	child_pid = 0;
	restore_signals(old);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * One line of the library's CSV or JSONL report, with the pmu column
 * unless the library wrote it (it does on the emulator), or a comment.
 */
static void put_line(FILE *out, const struct run *r, char *l, bool header,
		     bool labelled)
{
	size_t n = strlen(l);

	if (labelled || (r->fmt == F_CSV && l[0] == '#'))
		fprintf(out, "%s\n", l); /* as is: labelled, or partial */
	else if (r->fmt == F_CSV)
		fprintf(out, "%s,%s\n", l, header ? "pmu" : r->pmu);
	else if (n > 0 && l[n - 1] == '}' && !strstr(l, "\"pmu\":"))
		fprintf(out, "%.*s,\"pmu\":\"%s\"}\n", (int)(n - 1), l, r->pmu);
	else
		fprintf(out, "%s\n", l); /* not a row, or labelled: as is */
}

/*
 * The library's own label: a CSV header's last column (each section's),
 * a table's banner.
 */
static bool library_labelled(const struct run *r, const char *first)
{
	size_t n = strlen(first);

	if (r->fmt == F_TABLE)
		return !strncmp(first, "EMULATED PMU", 12);
	return r->fmt == F_CSV && n >= 4 && !strcmp(first + n - 4, ",pmu");
}

/* A line before the report proper: the partial mark (any format). */
static bool is_mark(const char *l)
{
	return l[0] == '#' || !strncmp(l, "partial:", 8) ||
	       !strncmp(l, "{\"kind\":\"partial\"", 17);
}

/* A line of a region or record: the table's, or a CSV or JSONL row. */
static bool is_row(const char *l, enum fmt f)
{
	if (f == F_TABLE) /* the library's line for a report without one */
		return strncmp(l, "no named region", 15) != 0;
	return !strncmp(l, "region,", 7) || !strncmp(l, "record,", 7) ||
	       !strncmp(l, "function,", 9) ||
	       !strncmp(l, "{\"kind\":\"region\"", 16) ||
	       !strncmp(l, "{\"kind\":\"record\"", 16) ||
	       !strncmp(l, "{\"kind\":\"function\"", 18);
}

static void convert(FILE *in, FILE *out, struct run *r)
{
	char line[8192];
	bool first = true, header, labelled = false;

	r->rows = r->fmt == F_TABLE;
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (r->fmt == F_TABLE)
			r->rows = r->rows && is_row(line, r->fmt);
		else
			r->rows = r->rows || is_row(line, r->fmt);
		/* a CSV header starts a section (the functions' report, then
		 * the regions'): each says whether the library labelled it */
		header = !is_mark(line) &&
			 (first || (r->fmt == F_CSV && cmd_csv_header(line)));
		if (header)
			labelled = library_labelled(r, line);
		if (header && first && r->fmt == F_TABLE && r->emulate &&
		    !labelled)
			fprintf(out, "EMULATED PMU (profile %s): synthetic "
				"counts from the test emulator, not a "
				"measurement of %s\n", r->profile, r->prog[0]);
		if (r->fmt == F_TABLE)
			fprintf(out, "%s\n", line);
		else
			put_line(out, r, line, header, labelled);
		first = first && is_mark(line);
	}
}

static int write_svg(FILE *in, struct run *r)
{
	struct cmd_report rep = { 0 };
	FILE *tmp = tmpfile(), *out;
	int err;

	if (!tmp)
		return -errno;
	convert(in, tmp, r); /* the pmu column marks it emulated */
	if (!r->rows) { /* nothing to draw: cmd_run says why */
		fclose(tmp);
		return 0;
	}
	rewind(tmp);
	err = cmd_report_read(tmp, "the report", &rep);
	fclose(tmp);
	if (err < 0)
		return err;
	out = fopen(r->out, "w");
	if (!out) {
		err = -errno;
		cmd_error("run: cannot write '%s': %s", r->out, strerror(errno));
		cmd_report_free(&rep);
		return err;
	}
	err = cmd_svg_write(out, &rep, r->prog[0]);
	if (fclose(out) != 0 && !err)
		err = -EIO;
	cmd_report_free(&rep);
	return err;
}

static int deliver(const char *tmp, struct run *r)
{
	FILE *in = fopen(tmp, "r"), *out;
	int err = 0;

	/* the library creates the file when a handle reports at exit */
	if (!in)
		return errno == ENOENT ? -ENODATA : -errno;
	if (r->fmt == F_SVG) {
		err = write_svg(in, r);
		fclose(in);
		return err;
	}
	out = r->out ? fopen(r->out, "w") : stderr;
	if (!out) {
		err = -errno;
		cmd_error("run: cannot write '%s': %s", r->out, strerror(errno));
		fclose(in);
		return err;
	}
	convert(in, out, r);
	if (out != stderr && fclose(out) != 0)
		err = -EIO;
	fclose(in);
	return err;
}

static int set_report_env(const char *tmp, const struct run *r)
{
	static const char *const lib_fmt[] = { "table", "csv", "jsonl", "jsonl" };

	if (setenv("TOPDOWN_REPORT", tmp, 1) < 0 ||
	    setenv("TOPDOWN_FORMAT", r->view ? r->view : lib_fmt[r->fmt], 1) < 0)
		return -errno;
	return 0;
}

static int no_report(const struct run *r, int status)
{
	if (status > 128) {
		cmd_error("run: '%s' was killed by signal %d (%s) and wrote no "
			  "report: a report is written at exit, and on SIGINT "
			  "and SIGTERM, but no program can write one when "
			  "killed by SIGKILL or a crash", r->prog[0],
			  status - 128, strsignal(status - 128));
		return status;
	}
	cmd_error("run: '%s' wrote no report (exit status %d): it must be "
		  "linked with libtopdown, open a handle, and exit normally%s",
		  r->prog[0], status,
		  r->emulate ? "" : "; without a PMU here (topdown check) "
				    "try --emulate");
	return status ? status : CMD_FAILED;
}

/* Handles opened, no named region: the README's first example. */
static int no_rows(const struct run *r, int status)
{
	cmd_error("run: '%s' measured no named region, so its report has "
		  "no row: results of td_region_begin/td_region_end (and of "
		  "topdown_benchmark.hpp) go to the program only.  Name the "
		  "regions to report: td_named_begin/td_named_end with a "
		  "static struct td_named, or td_named_begin_str(td, "
		  "\"name\") (README \"Harnesses and reports\")", r->prog[0]);
	return status ? status : CMD_FAILED;
}

int cmd_run(int argc, char **argv)
{
	struct run r = { .fmt = F_TABLE, .profile = "spr" };
	const char *dir = getenv("TMPDIR");
	char tmpdir[4000], tmp[4096];
	int status, err = parse_args(argc, argv, &r);

	if (err)
		return err > 0 ? usage(stdout, CMD_OK) : CMD_RUN_USAGE;
	if (r.emulate && (cmd_dynamic_elf(r.prog[0]) < 0 ||
			  cmd_emulate_env(r.profile) < 0))
		return CMD_FAILED;
	if (r.functions && cmd_functions_env() < 0)
		return CMD_FAILED;
	if (r.memory && setenv("TOPDOWN_MEMORY", "1", 1) < 0)
		return CMD_FAILED;
	if (r.emulate)
		snprintf(r.pmu, sizeof(r.pmu), "emulated:%s", r.profile);
	else
		snprintf(r.pmu, sizeof(r.pmu), "hardware");
	/*
	 * The report's path in a directory of its own, not created: the
	 * file exists after PROG only if a handle reported (no named region
	 * measured gives an empty JSON Lines report, not no report).
	 */
	snprintf(tmpdir, sizeof(tmpdir), "%s/topdown-run-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	if (!mkdtemp(tmpdir)) {
		cmd_error("run: temporary directory %s: %s", tmpdir,
			  strerror(errno));
		return CMD_FAILED;
	}
	snprintf(tmp, sizeof(tmp), "%s/report", tmpdir);
	if (set_report_env(tmp, &r) < 0) {
		cmd_error("run: setting TOPDOWN_REPORT: %s", strerror(errno));
		rmdir(tmpdir);
		return CMD_FAILED;
	}
	status = run_child(r.prog);
	if (status < 0 || status == CMD_NOTFOUND || status == CMD_NOEXEC) {
		unlink(tmp);
		rmdir(tmpdir);
		return status < 0 ? CMD_FAILED : status;
	}
	err = deliver(tmp, &r);
	unlink(tmp);
	rmdir(tmpdir);
	if (err == -ENODATA)
		return no_report(&r, status);
	if (!err && !r.rows)
		return no_rows(&r, status);
	if (!err && status > 128) /* the report said so first: partial */
		cmd_error("run: '%s' was stopped by signal %d (%s): its "
			  "report%s%s is partial", r.prog[0], status - 128,
			  strsignal(status - 128), r.out ? " in " : "",
			  r.out ? r.out : "");
	return err < 0 ? CMD_FAILED : status;
}
