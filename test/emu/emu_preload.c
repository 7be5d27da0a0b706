/* SPDX-License-Identifier: MIT */
/*
 * Running an unmodified program on the emulator (LD_PRELOAD=libtdemu.so
 * TD_EMULATE=icl|spr).  With no test driving it, the emulated thread's
 * work is its real CPU time: at every emulated RDPMC the slots elapsed
 * since the previous one (4 per ns of thread CPU time) are run with a
 * synthetic mix that changes every millisecond.  The breakdown is
 * therefore made up; only the plumbing is real.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"

static bool preload_mode;
static __thread uint64_t last_ns;

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct emu_mix synthetic_mix(uint64_t ns)
{
	uint64_t h = (ns / 1000000) * 0x9e3779b97f4a7c15ull;
	double a = 0.1 + (double)((h >> 8) & 0xff) / 400;
	double b = 0.02 + (double)((h >> 16) & 0xff) / 1000;
	double c = 0.05 + (double)((h >> 24) & 0xff) / 1000;
	double d = 1 - a - b - c;

	return emu_mix_l2(a, b, c, d, a / 5, b / 2, c / 2, d / 2);
}

void emu_preload_advance(void)
{
	uint64_t now;
	struct emu_mix mix;

	if (!preload_mode)
		return;
	now = thread_ns();
	if (last_ns && now > last_ns) {
		mix = synthetic_mix(now);
		emu_run((now - last_ns) * 4, &mix);
	}
	last_ns = now;
}

__attribute__((constructor)) static void emu_preload_init(void)
{
	const char *p = getenv("TD_EMULATE");

	if (!p)
		return;
	emu_setup(strcmp(p, "icl") == 0 ? EMU_ICL : EMU_SPR);
	preload_mode = true;
}

__attribute__((destructor)) static void emu_preload_fini(void)
{
	if (preload_mode)
		emu_teardown();
}
