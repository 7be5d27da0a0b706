/* SPDX-License-Identifier: MIT */
/*
 * topdown: ask what this machine can measure (check), run a program
 * linked with libtopdown and collect its report (run), draw a report
 * (plot).  A command built on the library; the library itself never
 * prints.
 */
#include <string.h>

#include <topdown.h>

#include "cmd.h"
#include "validate/validate.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: topdown COMMAND [ARGS...]\n"
		"\n"
		"  check                 what this machine can measure, and why not\n"
		"  run [OPTIONS] -- PROG [ARGS...]\n"
		"                        run PROG (linked with libtopdown) and collect\n"
		"                        its report, every thread of it\n"
		"  plot REPORT -o FILE.svg\n"
		"                        draw a report (JSON Lines or CSV) as an SVG\n"
		"  validate [--emulate [--profile P]] [-o REPORT.json]\n"
		"                        check on this machine that the numbers are\n"
		"                        right (exit 77: skipped, no PMU)\n"
		"\n"
		"  topdown COMMAND --help   the command's options\n"
		"  topdown --version        libtopdown's version\n"
		"\n"
		"Exit status: 0 success; 1 check: TopDown cannot be measured here;\n"
		"2 a bad argument; 125 topdown itself failed (e.g. PROG wrote no\n"
		"report); 126 PROG not executable; 127 PROG not found; otherwise\n"
		"run exits with PROG's status (128 + N when killed by signal N).\n");
}

/* The validator, on the emulator the command finds for run --emulate. */
static int validate(int argc, char **argv, char **whole)
{
	char emu[4096];

	v_subcommand = "validate";
	return td_cmd_validate(argc, argv, whole,
			       cmd_find_emulator(emu, sizeof(emu)) == 0 ? emu
								       : NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CMD_USAGE;
	}
	if (cmd_is_help(argv[1])) {
		usage(stdout);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("topdown (libtopdown %d.%d)\n", td_version_major(),
		       td_version_minor());
		return CMD_OK;
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "plot"))
		return cmd_plot(argc - 1, argv + 1);
	if (!strcmp(argv[1], "validate"))
		return validate(argc - 1, argv + 1, argv);
	cmd_error("unknown command '%s' (want check, run, plot or "
		  "validate; topdown --help)", argv[1]);
	return CMD_USAGE;
}
