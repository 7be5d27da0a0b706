/* SPDX-License-Identifier: MIT */
/* The topdown command's small helpers: files, its own location, the emulator. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#ifndef TOPDOWN_LIBDIR
#define TOPDOWN_LIBDIR "/usr/local/lib"
#endif

/* The installed name says what it is (Makefile: install). */
#define EMULATOR_NAME "libtopdown-emulated-pmu.so"

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	fputs("topdown: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A small file into buf, NUL-terminated, trailing newline cut; the length
 * or -errno.  open(2), not fopen: the emulator (--emulate) interposes on
 * open to serve its sysfs, as it does for the library.
 */
int cmd_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return (int)n;
}

bool cmd_exists(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno != ENOENT && errno != ENOTDIR;
	close(fd);
	return true;
}

/* The directory of this executable (proc(5): /proc/self/exe). */
int cmd_self_dir(char *buf, size_t len)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	snprintf(buf, len, "%s", dirname(exe));
	return 0;
}

/*
 * The emulated PMU: $TOPDOWN_EMULATOR, else next to this executable's
 * prefix (bin/../lib/topdown/), the configured LIBDIR's topdown/, and
 * the build tree's libtdemu.so (build/topdown beside build/libtdemu.so).
 */
int cmd_find_emulator(char *buf, size_t len)
{
	const char *env = getenv("TOPDOWN_EMULATOR");
	char dir[4096];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -ENOENT;
	}
	if (cmd_self_dir(dir, sizeof(dir)) < 0)
		return -ENOENT;
	snprintf(buf, len, "%s/../lib/topdown/%s", dir, EMULATOR_NAME);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/topdown/%s", TOPDOWN_LIBDIR, EMULATOR_NAME);
	if (access(buf, R_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/libtdemu.so", dir);
	return access(buf, R_OK) == 0 ? 0 : -ENOENT;
}

/* The emulator's profiles for unmodified programs (test/emu/emu_preload.c). */
bool cmd_profile_ok(const char *profile)
{
	return !strcmp(profile, "spr") || !strcmp(profile, "icl");
}

/* LD_PRELOAD the emulator (ahead of any preload already set), TD_EMULATE. */
int cmd_emulate_env(const char *profile)
{
	const char *old = getenv("LD_PRELOAD");
	char emu[4096], preload[8192];

	if (cmd_find_emulator(emu, sizeof(emu)) < 0) {
		cmd_error("the emulated PMU (%s) was not found next to this "
			  "program (../lib/topdown/), in %s/topdown/, or as "
			  "libtdemu.so beside it; reinstall with make install, "
			  "or set TOPDOWN_EMULATOR=<path>",
			  EMULATOR_NAME, TOPDOWN_LIBDIR);
		return -ENOENT;
	}
	if (old && *old)
		snprintf(preload, sizeof(preload), "%s:%s", emu, old);
	else
		snprintf(preload, sizeof(preload), "%s", emu);
	if (setenv("LD_PRELOAD", preload, 1) < 0 ||
	    setenv("TD_EMULATE", profile, 1) < 0)
		return -errno;
	return 0;
}

bool cmd_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}
