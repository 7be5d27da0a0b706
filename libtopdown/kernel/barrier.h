/* SPDX-License-Identifier: MIT */
/*
 * Named memory-ordering helpers for the perf_event user page.
 *
 * The kernel writes the page on the same CPU the reading thread runs on
 * (from NMI or interrupt context, preemption disabled), bracketed by
 * ++lock; barrier(); ... barrier(); ++lock (perf_event_update_userpage).
 * A reader on that CPU therefore needs compiler barriers and single loads,
 * not CPU fences: the UAPI comment in linux/perf_event.h and libperf's
 * perf_mmap__read_self() use exactly that.
 */
#ifndef TD_BARRIER_H
#define TD_BARRIER_H

#include <stdint.h>

/* Stop the compiler from moving memory accesses across this point. */
#define td_compiler_barrier() __asm__ __volatile__("" ::: "memory")

/* One load the compiler may neither tear, repeat nor elide. */
#define td_load_once(x) (*(const volatile __typeof__(x) *)&(x))
#define td_store_once(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif /* TD_BARRIER_H */
