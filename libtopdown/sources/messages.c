/* SPDX-License-Identifier: MIT */
/*
 * td_strerror's texts that depend on what the sources need of the
 * machine: the kernel each source's events need, the descriptors each
 * source's groups take, what holds counters on each architecture, how a
 * core type is chosen.  core/errors.c keeps the texts every source shares
 * and asks here first (source.h, td_source_message).
 */
#include <errno.h>
#include <stddef.h>

#include "source.h"

struct td_source_message {
	int err;
	const char *text;
};

static const struct td_source_message messages[] = {
	{ -EOPNOTSUPP, "the kernel refused the TopDown events: sysfs lists "
		       "them but perf_event_open returned ENOENT; update the "
		       "kernel (Linux 5.9 or later for PERF_METRICS)" },
	{ -EMFILE, "out of file descriptors: a handle needs 5 (level 1) or 9 "
		   "(level 2), 3 to 7 on ordinary-counter CPUs (11 with Arm "
		   "level 2), 5 more on "
		   "hybrid parts; raise RLIMIT_NOFILE or close handles" },
	{ -ENOSPC, "too few free performance counters for the TopDown "
		   "events: the event group was refused or never got "
		   "scheduled (x86: even with one formula term derived). "
		   "x86/AMD: the NMI watchdog holds one counter (echo 0 > "
		   "/proc/sys/kernel/nmi_watchdog, or boot with "
		   "nmi_watchdog=0); a VM may expose fewer than the "
		   "hardware's (give the guest the full PMU; Arm VMs: use a "
		   "larger instance type or bare metal); or another perf "
		   "user holds them" },
	{ -ENXIO, "heterogeneous cores (Arm big.LITTLE): EL0 counter access "
		  "needs the thread pinned to one core type; pin it to the "
		  "CPUs of one core PMU (e.g. taskset -c <that PMU's sysfs "
		  "cpus list>) before td_open" },
	/* Not a whole line: why no source serves the CPU td_strerror(-ENOSYS)
	 * names (the sources choose by these two: sources.c) */
	{ -ENOSYS, "no PERF_METRICS and the model is not in libtopdown's "
		   "formula table" },
};

const char *td_source_message(int err)
{
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
		if (messages[i].err == err)
			return messages[i].text;
	return NULL;
}
