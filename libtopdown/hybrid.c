/* SPDX-License-Identifier: MIT */
/*
 * Hybrid parts (Alder Lake and later): the core PMU, cpu_core, exists only
 * on P-cores.  While the thread runs on an E-core the group is not
 * scheduled (index 0, time_running stops), and RDPMC of fixed counter 3 or
 * PERF_METRICS there would #GP (research note section 6; the #GP is an
 * inference from the SDM, those registers do not exist on E-cores).  The
 * seqlock's index check does not protect: the thread can migrate between
 * it and the RDPMC.
 *
 * The guard (arch_x86.h td_rdpmc_guarded): the RDPMCs run in an rseq
 * critical section of glibc's registered rseq area (glibc >= 2.35,
 * __rseq_offset from the thread pointer), after checking the area's cpu_id
 * against the P-core bitmap read here from sysfs cpu_core/cpus.  Cost on
 * the hot path: a store, two loads, a compare and a bit test; none at all
 * on non-hybrid parts (td->pcores NULL).
 *
 * Trade-off: when glibc has no registered rseq area (older glibc,
 * GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind) or the cpus list cannot
 * be read, no guard is possible with libc alone, and the handle uses the
 * read(2) path instead: correct, never faults, one syscall per reading.
 * The alternative, catching SIGSEGV, would take over a process-wide signal
 * the application (or its runtime) may own.  A region whose reading found
 * the thread on an E-core is flagged TD_RESULT_UNRELIABLE, not lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TD_CPULIST_MAX 4096 /* "0-4095" patterns: plenty for one list */

static int pcore_bitmap(struct td *td)
{
	char path[96], *list;
	uint32_t n;
	int err;

	list = malloc(TD_CPULIST_MAX);
	if (!list)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpus",
		 td->pmu.name);
	err = td_sys_read_file(path, list, TD_CPULIST_MAX);
	if (err >= 0)
		err = td_cpulist_parse(list, NULL, 0, &n);
	if (err >= 0) {
		uint64_t *map = calloc((n + 63) / 64, sizeof(uint64_t));

		err = map ? td_cpulist_parse(list, map, n, &n) : -ENOMEM;
		td->pcores = map;
		td->nr_cpus = n;
	}
	free(list);
	return err;
}

/*
 * On a hybrid part with the RDPMC path, arm the guard or fall back to
 * read(2).  Called from td_open on the owner thread (the rseq area is
 * that thread's).
 */
void td_hybrid_init(struct td *td)
{
	if (td->path != TD_PATH_RDPMC || strcmp(td->pmu.name, "cpu_core") != 0)
		return;
	td->rseq = TD_HAVE_RSEQ_GUARD ? td_sys_rseq_area() : NULL;
	if (!td->rseq || pcore_bitmap(td) < 0) {
		free((void *)td->pcores);
		td->pcores = NULL;
		td->rseq = NULL;
		td->path = TD_PATH_READ;
	}
}

void td_hybrid_close(struct td *td)
{
	free((void *)td->pcores);
	td->pcores = NULL;
}
