/* SPDX-License-Identifier: MIT */
/*
 * Whether the counters are the test emulator's (test/emu), so that every
 * output made from them can say so.  The emulator defines
 * libtopdown_emulated_pmu(), which no real program does: looked up in the
 * process's global scope (dlsym(3), RTLD_DEFAULT: the program, its
 * libraries and an LD_PRELOAD object), it answers the emulated profile's
 * name while the emulator runs.  On a real machine the name is absent and
 * the answer is NULL: nothing in the environment can make it otherwise.
 * Cold path only (td_query, reports).
 */
#include <dlfcn.h>

#include "kernel.h"

const char *td_emulated_pmu(void)
{
	const char *(*profile)(void);

	*(void **)&profile = dlsym(RTLD_DEFAULT, "libtopdown_emulated_pmu");
	return profile ? profile() : NULL;
}
