/* SPDX-License-Identifier: MIT */
#ifndef TD_TEST_GBENCH_EMU_H
#define TD_TEST_GBENCH_EMU_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
void gbench_emu_setup(bool pmu);
void gbench_emu_teardown(void);
void gbench_emu_work(uint64_t slots, const unsigned bytes[4]);
#ifdef __cplusplus
}
#endif

#endif
