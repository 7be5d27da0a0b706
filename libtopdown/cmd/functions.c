/* SPDX-License-Identifier: MIT */
/*
 * topdown run --functions: PROG, built with -finstrument-functions, runs
 * with libtopdown-functions preloaded, whose hooks then replace glibc's
 * empty __cyg_profile_func_enter/exit (ld.so(8): LD_PRELOAD objects come
 * before the program's libraries in symbol lookup).  A program linked
 * with the library itself keeps its own copy, which reports the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#ifndef TOPDOWN_LIBDIR
#define TOPDOWN_LIBDIR "/usr/local/lib"
#endif

#define FUNCTIONS_LIB "libtopdown-functions.so"

/*
 * $TOPDOWN_FUNCTIONS_LIB, else beside this executable's prefix
 * (bin/../lib/), the configured LIBDIR, the build tree (build/topdown
 * beside build/libtopdown-functions.so).
 */
static int find_functions_lib(char *buf, size_t len)
{
	const char *env = getenv("TOPDOWN_FUNCTIONS_LIB");
	char dir[2048];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -ENOENT;
	}
	if (cmd_self_dir(dir, sizeof(dir)) < 0)
		return -ENOENT;
	snprintf(buf, len, "%s/../lib/%s", dir, FUNCTIONS_LIB);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/%s", TOPDOWN_LIBDIR, FUNCTIONS_LIB);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/%s", dir, FUNCTIONS_LIB);
	return access(buf, R_OK) == 0 ? 0 : -ENOENT;
}

/* LD_PRELOAD the functions library after any preload already set (the
 * emulator, with --emulate, must come first). */
int cmd_functions_env(void)
{
	const char *old = getenv("LD_PRELOAD");
	char lib[4096], preload[8192];

	if (find_functions_lib(lib, sizeof(lib)) < 0) {
		cmd_error("%s was not found (../lib/ beside this program, %s, "
			  "or beside it in the build tree); reinstall with "
			  "make install, or set TOPDOWN_FUNCTIONS_LIB=<path>",
			  FUNCTIONS_LIB, TOPDOWN_LIBDIR);
		return -ENOENT;
	}
	if (old && *old)
		snprintf(preload, sizeof(preload), "%s:%s", old, lib);
	else
		snprintf(preload, sizeof(preload), "%s", lib);
	return setenv("LD_PRELOAD", preload, 1) < 0 ? -errno : 0;
}

/* A CSV header row: the function report's follows the regions'. */
bool cmd_csv_header(const char *line)
{
	return !strncmp(line, "kind,", 5);
}
