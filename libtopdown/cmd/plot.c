/* SPDX-License-Identifier: MIT */
/* topdown plot REPORT -o FILE.svg: a report drawn as one SVG. */
#include <errno.h>
#include <string.h>

#include "cmd.h"

static int usage(FILE *f, int status)
{
	fprintf(f,
		"usage: topdown plot REPORT -o FILE.svg [-t TITLE]\n"
		"\n"
		"Draws a libtopdown report (JSON Lines or CSV, as TOPDOWN_FORMAT or\n"
		"td_report_named/td_report_records write it, or topdown run -f\n"
		"jsonl|csv) as one self-contained SVG: per named region a stacked\n"
		"level-1 bar with its level-2 split, the err band, calls, slots and\n"
		"flags in words, its threads under it; per record name a strip\n"
		"with one column per iteration, as wide as its share of the\n"
		"slots, err as whiskers.  REPORT - reads standard input.\n"
		"A per-function report (topdown run --functions) is drawn as a\n"
		"TopDown flame graph: a frame per call path, as wide as its\n"
		"inclusive slots, its own (self) part in its level-1 shares.\n"
		"\n"
		"  -o FILE.svg   where to write the picture (required)\n"
		"  -t TITLE      the picture's title (default: REPORT's name)\n"
		"\n"
		"Exit status: 0 written; 2 a bad argument or an unreadable\n"
		"report; 125 the picture could not be written.\n");
	return status;
}

static int parse_args(int argc, char **argv, const char **in,
		      const char **out, const char **title)
{
	for (int i = 1; i < argc; i++) {
		if (cmd_is_help(argv[i]))
			return 1;
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "-t")) {
			if (i + 1 == argc) {
				cmd_error("plot: %s needs a value", argv[i]);
				return -EINVAL;
			}
			if (argv[i][1] == 'o')
				*out = argv[++i];
			else
				*title = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_error("plot: unknown option '%s' (topdown plot "
				  "--help)", argv[i]);
			return -EINVAL;
		} else if (*in) {
			cmd_error("plot: one report only, got '%s' and '%s'",
				  *in, argv[i]);
			return -EINVAL;
		} else {
			*in = argv[i];
		}
	}
	if (!*in || !*out) {
		cmd_error("plot: %s (topdown plot REPORT -o FILE.svg)",
			  !*in ? "no report given" : "no -o FILE.svg given");
		return -EINVAL;
	}
	return 0;
}

static int plot_flame(const char *in, const char *out, const char *title)
{
	FILE *f = fopen(out, "w");
	int err;

	if (!f) {
		cmd_error("plot: cannot write '%s': %s", out, strerror(errno));
		return CMD_FAILED;
	}
	err = cmd_flame_write(f, in, title);
	if (fclose(f) != 0 && !err)
		err = -EIO;
	if (err < 0) {
		cmd_error("plot: writing '%s' failed: %s", out, strerror(-err));
		return CMD_FAILED;
	}
	return CMD_OK;
}

int cmd_plot(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *title = NULL;
	struct cmd_report rep;
	FILE *f;
	int err = parse_args(argc, argv, &in, &out, &title);

	if (err)
		return err > 0 ? usage(stdout, CMD_OK) : CMD_USAGE;
	if (strcmp(in, "-") && cmd_flame_has_paths(in))
		return plot_flame(in, out, title ? title : in);
	f = strcmp(in, "-") ? fopen(in, "r") : stdin;
	if (!f) {
		cmd_error("plot: cannot read '%s': %s", in, strerror(errno));
		return CMD_USAGE;
	}
	err = cmd_report_read(f, in, &rep);
	if (f != stdin)
		fclose(f);
	if (err < 0)
		return CMD_USAGE;
	f = fopen(out, "w");
	if (!f) {
		cmd_error("plot: cannot write '%s': %s", out, strerror(errno));
		cmd_report_free(&rep);
		return CMD_FAILED;
	}
	err = cmd_svg_write(f, &rep, title ? title : in);
	if (fclose(f) != 0 && !err)
		err = -EIO;
	cmd_report_free(&rep);
	if (err < 0) {
		cmd_error("plot: writing '%s' failed: %s", out, strerror(-err));
		return CMD_FAILED;
	}
	return CMD_OK;
}
