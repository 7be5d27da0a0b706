/* SPDX-License-Identifier: MIT */
/*
 * The counted process of make bench-arm64, run under qemu-aarch64 (see
 * bench/overhead-arm64.sh): it runs the same sections as the x86 child
 * (overhead_seq.c) and calls ovh_guest_mark between them, whose first
 * instruction qemu's execution log shows, so that the log can be split
 * into sections.  It prints where libtopdown.so's text and its entry
 * points are (qemu's emulated /proc/self/maps gives guest addresses), and
 * the emulated system calls of each section.
 *   overhead-guest layout           the layout line only
 *   overhead-guest run PROFILE      layout, then the sections
 *   overhead-guest fnlayout         libtopdown-functions.so's text
 *   overhead-guest run-function PROFILE
 *                                   layout, fnlayout, then one
 *                                   instrumented call (the hooks'
 *                                   function-call row)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "overhead.h"

__attribute__((noinline, used)) void ovh_guest_mark(unsigned next,
						    unsigned long syscalls);

void ovh_guest_mark(unsigned next, unsigned long syscalls)
{
	if (next > 0)
		printf("syscalls,%u,%lu\n", next - 1, syscalls);
}

/* The executable mapping of the library named lib: its range, its path. */
static int text_of(const char *lib, unsigned long *lo, unsigned long *hi,
		   char *so)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	*lo = *hi = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, z;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399s", &a, &z, perms,
			   so) == 4 &&
		    perms[2] == 'x' && strstr(so, lib)) {
			*lo = a;
			*hi = z;
			break;
		}
	}
	fclose(f);
	return *hi ? 0 : -1;
}

static int print_fn_layout(void)
{
	char so[400] = "";
	unsigned long lo, hi;

	if (text_of("libtopdown-functions.so", &lo, &hi, so) < 0)
		return -1;
	printf("fnlayout,%#lx,%#lx\n", lo, hi);
	return fflush(stdout);
}

static int print_layout(void)
{
	char so[400] = "";
	unsigned long lo = 0, hi = 0;
	void *h, *b, *e;

	text_of("libtopdown.so", &lo, &hi, so);
	h = hi ? dlopen(so, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!h)
		return -1;
	b = dlsym(h, "td_region_begin");
	e = dlsym(h, "td_region_end");
	dlclose(h);
	if (!b || !e)
		return -1;
	printf("layout,%#lx,%#lx,%#lx,%#lx,%#lx\n", lo, hi, (unsigned long)b,
	       (unsigned long)e, (unsigned long)ovh_guest_mark);
	return fflush(stdout);
}

int main(int argc, char **argv)
{
	const struct ovh_profile *prof;

	if (argc == 2 && strcmp(argv[1], "layout") == 0)
		return print_layout() < 0;
	if (argc == 2 && strcmp(argv[1], "fnlayout") == 0)
		return print_fn_layout() < 0;
	if (argc != 3 || !(prof = ovh_profile_by_name(argv[2]))) {
		fprintf(stderr, "usage: overhead-guest layout|fnlayout|"
				"run PROFILE|run-function PROFILE\n");
		return 2;
	}
	if (print_layout() < 0)
		return 1;
	if (strcmp(argv[1], "run-function") == 0)
		return print_fn_layout() < 0 ||
		       ovh_run_function(prof, ovh_guest_mark) < 0;
	return ovh_run_sections(prof, ovh_guest_mark) < 0;
}
