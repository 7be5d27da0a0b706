/* SPDX-License-Identifier: MIT */
/* test_functions: the instrumented workloads (func_work.c, built with
 * -finstrument-functions) and the driver's truth keeping. */
#ifndef TD_TEST_FUNC_WORK_H
#define TD_TEST_FUNC_WORK_H

#include <stdint.h>

#include "emu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who ran work: each workload function's own (self) work is kept apart. */
enum who { W_OUTER, W_INNER, W_LEAF, W_REC, W_JUMPER, W_JUMPED, W_AFTER,
	   W_THROWER, W_CATCHER, W_RETURNER, W_HOST, W_TINY, W_INTERRUPTED,
	   W_HANDLED, W_CANCELLED, W_NR };

/* Driver (not instrumented): run slots of mix as who's own work. */
void work(enum who who, uint64_t slots, const struct emu_mix *mix);

/* Workloads (instrumented). */
void outer(void);
void recurse(int depth);
void jumper(void);
void after_jump(void);
void jump_and_return(void);
void host(int tiny_calls);
void cxx_catcher(void);
void on_signal(int sig);
void interrupted(void);
void cancelled(void);

#ifdef __cplusplus
}
#endif

#endif
