/* SPDX-License-Identifier: MIT */
/* The emulator for test_gbench.cc, from C (test/emu/emu.h is C only). */
#include <stdint.h>

#include "emu.h"
#include "gbench_emu.h"

void gbench_emu_setup(bool pmu)
{
	emu_setup(pmu ? EMU_SPR : EMU_NO_PMU);
}

void gbench_emu_teardown(void)
{
	emu_teardown();
}

/* slots of work whose level-1 shares are exact bytes of 255. */
void gbench_emu_work(uint64_t slots, const unsigned bytes[4])
{
	struct emu_mix mix = emu_mix_l1(bytes[0] / 255.0, bytes[1] / 255.0,
					bytes[2] / 255.0, bytes[3] / 255.0);

	emu_run(slots, &mix);
}
