/* SPDX-License-Identifier: MIT */
/* The topdown command: what its files share.  Not part of the library. */
#ifndef TD_CMD_H
#define TD_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "topdown.h"

/* Exit statuses (topdown --help lists them). */
#define CMD_OK       0
#define CMD_BLOCKED  1   /* check: TopDown cannot be measured here */
#define CMD_USAGE    2   /* a bad argument */
/*
 * run's own statuses lie in 124-127, above any a program usually exits
 * with, as env(1) and timeout(1) keep 125-127: a program's 2 is its own.
 */
#define CMD_RUN_USAGE 124 /* run: a bad argument */
#define CMD_FAILED   125 /* topdown itself failed (I/O, no report) */
#define CMD_NOEXEC   126 /* run: PROG found but not executable */
#define CMD_NOTFOUND 127 /* run: PROG not found */

int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_plot(int argc, char **argv);

/* util.c */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cmd_read_file(const char *path, char *buf, size_t len);
bool cmd_exists(const char *path);
int cmd_self_dir(char *buf, size_t len);
int cmd_find_emulator(char *buf, size_t len);
int cmd_emulate_env(const char *profile);
bool cmd_profile_ok(const char *profile);
extern const char cmd_profiles[];
int cmd_dynamic_elf(const char *prog);
bool cmd_is_help(const char *arg);

/* functions.c: topdown run --functions */
int cmd_functions_env(void);
bool cmd_csv_header(const char *line);

/* flame.c: the TopDown flame graph of a per-function report */
bool cmd_flame_has_paths(const char *path);
int cmd_flame_write(FILE *out, const char *report, const char *title);

/* A report read back (report_in.c): the columns the library writes. */
struct cmd_row {
	char kind[16];          /* "region" or "record" */
	char name[64];
	char thread[48];
	char basis[16];         /* "slots", "cycles", "estimated" */
	char pmu[32];           /* topdown run's column, else "" */
	double calls, unreliable, slots, err, levels, smt;
	double l1[4], l2[8], min[4], max[4];
	double mem[TD_MEM_COUNT]; /* l1_bound .. store_bound, if has_mem */
	bool has_mem;           /* the memory drill-down's columns had values */
};

struct cmd_report {
	struct cmd_row *v;
	size_t n, cap;
	bool emulated;          /* a pmu column said so */
};

int cmd_report_read(FILE *f, const char *what, struct cmd_report *rep);
void cmd_report_free(struct cmd_report *rep);

/* svg.c */
int cmd_svg_write(FILE *f, const struct cmd_report *rep, const char *title);

#endif
