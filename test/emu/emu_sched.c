/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's model of an emulated thread: where the kernel may
 * preempt or move it (an interrupt just before an RDPMC, a read(2) or an
 * IOC_RESET entering the kernel), and what then happens to its groups
 * (kernel/sched/core.c: a context switch schedules the task's events out
 * and in; a migration to a CPU of another hybrid PMU leaves cpu_core's
 * group unscheduled there, arch/x86/events/intel/core.c intel_pmu_filter).
 * A test plans one event per point; the point applies it once.
 */
#include <string.h>

#include "emu_internal.h"

void emu_schedule(enum emu_sched_point at, const struct emu_sched_event *ev)
{
	if (at < EMU_SCHED_POINTS)
		emu_cpu.sched[at] = *ev;
}

bool emu_sched_pending(enum emu_sched_point at)
{
	return at < EMU_SCHED_POINTS &&
	       emu_cpu.sched[at].kind != EMU_SCHED_NONE;
}

struct emu_sched_event emu_sched_take(enum emu_sched_point at)
{
	struct emu_sched_event ev = emu_cpu.sched[at];

	if (ev.kind != EMU_SCHED_NONE && ev.skip) { /* not this time yet */
		emu_cpu.sched[at].skip--;
		memset(&ev, 0, sizeof(ev));
		return ev;
	}
	memset(&emu_cpu.sched[at], 0, sizeof(emu_cpu.sched[at]));
	return ev;
}

void emu_sched_around(const struct emu_sched_event *ev,
		      void (*act)(void *ctx), void *ctx)
{
	int home = emu_cpu.cpu;

	switch (ev->kind) {
	case EMU_SCHED_MIGRATE:
		emu_migrate(ev->cpu);
		act(ctx);
		return;
	case EMU_SCHED_SWITCH_OUT: /* the group inactive while the kernel acts */
		emu_deschedule();
		act(ctx);
		emu_reschedule();
		return;
	case EMU_SCHED_SWITCH_AFTER: /* preempted as the call returns */
		act(ctx);
		emu_context_switch(0);
		return;
	case EMU_SCHED_STINT: /* away on another core, work done there */
		emu_migrate(ev->cpu);
		emu_run(ev->slots, &ev->mix);
		act(ctx);
		emu_migrate(home);
		return;
	default:
		act(ctx);
		return;
	}
}
