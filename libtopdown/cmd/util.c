/* SPDX-License-Identifier: MIT */
/* The topdown command's small helpers: files, its own location, the emulator. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

/* Where make install puts the command and the library (Makefile). */
#ifndef TOPDOWN_LIBDIR
#define TOPDOWN_LIBDIR "/usr/local/lib"
#endif
#ifndef TOPDOWN_BINDIR
#define TOPDOWN_BINDIR "/usr/local/bin"
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
 * Where this executable was installed from: its directory with BINDIR cut
 * off its end (so a DESTDIR staging tree, or a whole tree moved, still
 * finds its LIBDIR), else "".
 */
static bool install_root(const char *dir, char *root, size_t len)
{
	size_t n = strlen(dir), b = strlen(TOPDOWN_BINDIR);

	if (b == 0 || n < b || strcmp(dir + n - b, TOPDOWN_BINDIR) != 0)
		return false;
	snprintf(root, len, "%.*s", (int)(n - b), dir);
	return true;
}

/* dir/name into buf; whether it can be read. */
static bool readable(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return access(buf, R_OK) == 0;
}

/*
 * The emulated PMU: $TOPDOWN_EMULATOR, else where make install put it
 * ($(LIBDIR)/topdown/, under this executable's install root, then as
 * configured), else the build tree's libtdemu.so beside this executable.
 */
int cmd_find_emulator(char *buf, size_t len)
{
	const char *env = getenv("TOPDOWN_EMULATOR");
	char dir[4096], root[4096];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) == 0 ? 0 : -ENOENT;
	}
	if (cmd_self_dir(dir, sizeof(dir)) < 0)
		return -ENOENT;
	if (install_root(dir, root, sizeof(root))) {
		strncat(root, TOPDOWN_LIBDIR "/topdown",
			sizeof(root) - strlen(root) - 1);
		if (readable(buf, len, root, EMULATOR_NAME))
			return 0;
	}
	if (readable(buf, len, TOPDOWN_LIBDIR "/topdown", EMULATOR_NAME))
		return 0;
	return readable(buf, len, dir, "libtdemu.so") ? 0 : -ENOENT;
}

/* The emulator's profiles for unmodified programs (test/emu/emu_preload.c). */
const char cmd_profiles[] = "spr, icl, zen4, zen5, skl, hsw, grt, cmt, tnt";

bool cmd_profile_ok(const char *profile)
{
	size_t n = strlen(profile);
	const char *p = strstr(cmd_profiles, profile);

	return n > 0 && p && (p == cmd_profiles || p[-1] == ' ') &&
	       (p[n] == ',' || p[n] == '\0');
}

/* prog as execvp(3) finds it: with a '/' as is, else along PATH. */
static bool find_program(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		snprintf(buf, len, "%s", prog);
		return true;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", prog);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* Whether an ELF file asks for a dynamic loader (PT_INTERP); -1 unknown. */
static int elf_has_interp(int fd)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;
	uint64_t off;
	unsigned num, size;

	if (pread(fd, id, sizeof(id), 0) != sizeof(id) ||
	    memcmp(id, ELFMAG, SELFMAG) != 0)
		return -1;
	if (id[EI_CLASS] == ELFCLASS64 &&
	    pread(fd, &e64, sizeof(e64), 0) == sizeof(e64)) {
		off = e64.e_phoff, num = e64.e_phnum, size = e64.e_phentsize;
	} else if (id[EI_CLASS] == ELFCLASS32 &&
		   pread(fd, &e32, sizeof(e32), 0) == sizeof(e32)) {
		off = e32.e_phoff, num = e32.e_phnum, size = e32.e_phentsize;
	} else {
		return -1;
	}
	for (unsigned i = 0; i < num; i++) {
		uint32_t type; /* p_type leads both Elf32_Phdr and Elf64_Phdr */

		if (pread(fd, &type, sizeof(type), (off_t)(off + i * size)) !=
		    sizeof(type))
			return -1;
		if (type == PT_INTERP)
			return 1;
	}
	return 0;
}

/*
 * --emulate preloads the emulator (LD_PRELOAD, ld.so(8)): a program with
 * no dynamic loader (linked -static, or -static-pie) never loads it and
 * would run unemulated.  Refuse it, saying why; anything else (a script,
 * a file not found) is left to exec.
 */
int cmd_dynamic_elf(const char *prog)
{
	char path[4096];
	int fd, interp;

	if (!find_program(prog, path, sizeof(path)))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	interp = elf_has_interp(fd);
	close(fd);
	if (interp != 0)
		return 0;
	cmd_error("run: '%s' is statically linked (no ELF program interpreter, "
		  "PT_INTERP): --emulate preloads the emulated PMU through the "
		  "dynamic loader, which it does not have; link it dynamically "
		  "(libtopdown.a inside is fine) to run it emulated", prog);
	return -ENOEXEC;
}

/* LD_PRELOAD the emulator (ahead of any preload already set), TD_EMULATE. */
int cmd_emulate_env(const char *profile)
{
	const char *old = getenv("LD_PRELOAD");
	char emu[4096], preload[8192];

	if (cmd_find_emulator(emu, sizeof(emu)) < 0) {
		cmd_error("the emulated PMU (%s) was not found in %s/topdown/ "
			  "(where make install puts it), nor as libtdemu.so "
			  "beside this program (a build tree); set "
			  "TOPDOWN_EMULATOR=<its path>",
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
