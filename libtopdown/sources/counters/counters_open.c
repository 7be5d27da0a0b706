/* SPDX-License-Identifier: MIT */
/*
 * Opening a group of ordinary counters within the counter budget: the
 * full event set, else the smallest exact one, else -ENOSPC; and Intel
 * V4.5's AnyThread form when SMT is on.  Reading is counters_read.c's
 * job.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "x86_formulas.h"
#include "source.h"
#include "sources.h"

void td_gen_close_group(struct td *td, struct td_gen *g)
{
	for (unsigned i = 0; i < TD_GEN_MAX; i++) {
		if (g->pc[i])
			td_sys_unmap(g->pc[i], td->page_size);
		if (g->fd[i] >= 0)
			td_sys_close(g->fd[i]);
		g->pc[i] = NULL;
		g->fd[i] = -1;
	}
	g->nr = 0;
}

/* The model's events, but for the derived one, in model order. */
static void choose_events(struct td_gen *g, unsigned derived)
{
	g->nr = 0;
	g->derived = derived;
	for (unsigned i = 0; i < g->m.nr; i++)
		if (i != derived || !derived)
			g->ev[g->nr++] = (uint8_t)i;
}

/*
 * Arm asks for EL0 access with config1 bit 1 and a 64-bit counter with
 * bit 0; without FEAT_PMUv3p5 the kernel refuses 64-bit event counters
 * (EOPNOTSUPP): then 32 bits, pmc_width says which (drivers/perf/
 * arm_pmuv3.c __armv8_pmuv3_map_event; Documentation/arch/arm64/perf.rst;
 * retrying with 2 is an inference from perf.rst, not a documented
 * recipe).  CPU_CYCLES is the exception: 64 bits on
 * PMCCNTR_EL0 only, so armv8pmu_get_event_idx returns EAGAIN for it when
 * that counter is not free, which validate_group turns into EINVAL at
 * open (a PMU whose cntr_mask lacks PMCCNTR) and which at schedule time
 * leaves the group unscheduled (the perf hard-lockup detector holding
 * PMCCNTR: an inference): the cycles event then
 * retries with 2 too, here at open and in td_gen_group_open after a
 * group that never got scheduled.  cyc32: the cycles event asks for 32
 * bits from the start.
 */
static int open_event(bool arm, bool cycles, bool cyc32,
		      struct perf_event_attr *attr, int group)
{
	int fd;

	if (!arm)
		return td_sys_perf_open(attr, group);
	attr->config1 = cycles && cyc32 ? 2 : 3;
	fd = td_sys_perf_open(attr, group);
	if (attr->config1 == 3 &&
	    (fd == -EOPNOTSUPP || fd == -EAGAIN || (cycles && fd == -EINVAL))) {
		attr->config1 = 2;
		fd = td_sys_perf_open(attr, group);
	}
	return fd;
}

/* Is event k of the open set Arm's CPU_CYCLES (PMCCNTR's candidate)? */
static bool is_arm_cycles(const struct td_gen *g, unsigned k)
{
	return g->ev[k] == g->m.cycles_at;
}

static int open_group(struct td_gen *g, uint32_t type, bool arm,
		      bool include_kernel)
{
	struct perf_event_attr attr;

	for (unsigned k = 0; k < g->nr; k++) {
		int fd;

		td_fill_attr(&attr, type, g->m.config[g->ev[k]], k == 0,
			     include_kernel);
		fd = open_event(arm, is_arm_cycles(g, k), g->cyc32, &attr,
				k ? g->fd[0] : -1);
		if (fd < 0)
			return td_open_error(fd);
		g->fd[k] = fd;
	}
	return 0;
}

static int map_pages(struct td *td, struct td_gen *g)
{
	for (unsigned k = 0; k < g->nr; k++) {
		g->pc[k] = td_sys_map(g->fd[k], td->page_size);
		if (!g->pc[k])
			return errno ? -errno : -ENOMEM;
	}
	return 0;
}

bool td_gen_rdpmc_offered(const struct td *td, const struct td_gen *g)
{
	if (!TD_HAVE_USER_READ || td->pmu.rdpmc_knob == 0)
		return false;
	for (unsigned k = 0; k < g->nr; k++)
		if (!g->pc[k]->cap_user_rdpmc)
			return false;
	return true;
}

/*
 * Counter budget: a group of more events than this machine's free
 * counters.  x86 validate_group (arch/x86/events/core.c) refuses at open a
 * group larger than the PMU's counters (EINVAL on a member); a group that
 * fits the PMU but not the counters left free (the NMI watchdog pins a
 * cycles event on a GP counter on AMD, arch/x86/events/amd/core.c) is
 * accepted and then never scheduled: right after the enable, with time
 * enabled, time_running is still 0.  Either way the group is too big for
 * this machine now.  Another perf user's group crowding it out at this
 * moment looks the same; the smaller set is exact too, so that costs
 * nothing (the failure message names both causes).  The Arm PMU driver
 * refuses alike a group member that no free counter can take
 * (validate_group: EINVAL); VMs often expose fewer counters than the
 * hardware's six (Arm's telemetry-solution topdown_tool README): there
 * STALL_SLOT is the event derived, as frontend + backend.
 */
static bool too_big(int err, unsigned opened)
{
	return err == -EINVAL && opened > 0;
}

static int group_scheduled(struct td_gen *g)
{
	uint64_t v[TD_GEN_MAX], t[2];
	int err = td_gen_read_group(g, v, t);

	if (err < 0)
		return err;
	/* exact: the first reference of counters_read.c's plausibility guard */
	td_gen_model_values(g, v, g->last);
	g->have_last = true;
	return t[0] > 0 && t[1] == 0 ? -ENOSPC : 0;
}

/* Open, enable, map and check one set of events; -ENOSPC: too big. */
static int try_set(struct td *td, struct td_gen *g, uint32_t type,
		   bool include_kernel, bool check)
{
	int err = open_group(g, type, td->src == &td_source_arm,
			     include_kernel);

	if (err < 0) {
		unsigned opened = 0;

		while (opened < g->nr && g->fd[opened] >= 0)
			opened++;
		return too_big(err, opened) ? -ENOSPC : err;
	}
	err = td_sys_ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE,
			   PERF_IOC_FLAG_GROUP);
	if (err == 0)
		err = map_pages(td, g);
	if (err == 0 && check)
		err = group_scheduled(g);
	return err;
}

/*
 * The full set, else the smallest exact set (one term derived, see
 * td_formula_derive), else -ENOSPC.  On Arm each set is tried with a
 * 64-bit cycles event, then a 32-bit one (open_event): a set that fits
 * only because cycles leaves PMCCNTR_EL0 for an event counter is
 * preferred to deriving a term.  check: the thread runs on a CPU of
 * this PMU now, so that not being scheduled means no counters.
 */
int td_gen_group_open(struct td *td, struct td_gen *g, uint32_t type,
		      bool include_kernel, bool check)
{
	bool arm_cycles = td->src == &td_source_arm && g->m.cycles_at >= 0;
	int err = -ENOSPC;

	for (unsigned pass = 0; pass < 2 && err == -ENOSPC; pass++) {
		unsigned derived = pass ? g->m.derivable : 0;

		if (pass && !derived)
			break;
		for (unsigned c32 = 0; c32 <= arm_cycles && err == -ENOSPC;
		     c32++) {
			td_gen_close_group(td, g);
			choose_events(g, derived);
			g->cyc32 = c32;
			err = try_set(td, g, type, include_kernel, check);
		}
	}
	return err;
}

/* /sys/devices/system/cpu/smt/active: "1" with SMT on; absent: off. */
static bool smt_active(void)
{
	char buf[8];

	return td_sys_read_file("/sys/devices/system/cpu/smt/active", buf,
				sizeof(buf)) > 0 && buf[0] == '1';
}

/*
 * V4.5 with SMT on: the _ANY form (exact per core, halved per thread as
 * perf's skl-metrics.json does).  The kernel lets AnyThread only through
 * perf_allow_cpu (EACCES otherwise) and PMUs before version 3 refuse it
 * (EINVAL; arch/x86/events/intel/core.c intel_pmu_hw_config): then the
 * per-thread form, flagged approximate (TD_INFO_SMT_PER_THREAD).  1: not
 * this case.
 */
int td_gen_open_v45_smt(struct td *td, struct td_gen *g, bool include_kernel)
{
	struct td_gen_model per_thread = g->m;
	int err;

	if (g->m.formula != TD_F_V45 || !smt_active())
		return 1;
	td_model_anythread(&g->m);
	err = td_gen_group_open(td, g, td->pmu.type, include_kernel, true);
	if (err != -EACCES && err != -EINVAL)
		return err;
	td_gen_close_group(td, g);
	g->m = per_thread;
	g->smt_per_thread = true;
	return td_gen_group_open(td, g, td->pmu.type, include_kernel, true);
}

struct td_gen *td_gen_new(void)
{
	struct td_gen *g = calloc(1, sizeof(*g));

	for (unsigned i = 0; g && i < TD_GEN_MAX; i++)
		g->fd[i] = -1;
	return g;
}

void td_gen_free(struct td *td, struct td_gen *g)
{
	if (!g)
		return;
	for (int k = 0; k < TD_GEN_L2_GROUPS; k++)
		td_gen_free(td, g->mux[k]);
	td_gen_free(td, g->l2);
	td_gen_close_group(td, g);
	free(g);
}

/*
 * A further group of g's model: nr events of config, nothing derived,
 * no cycles event (Arm: no PMCCNTR preference), none of level 1's
 * positions.
 */
struct td_gen *td_gen_sub(const struct td_gen *g, const uint64_t *config,
			  unsigned nr)
{
	struct td_gen *h = td_gen_new();

	if (!h)
		return NULL;
	h->m.formula = g->m.formula;
	h->m.family = g->m.family;
	h->m.width = g->m.width;
	h->m.name = g->m.name;
	h->m.nr = nr;
	memcpy(h->m.config, config, nr * sizeof(h->m.config[0]));
	memset(h->m.arm.at, -1, sizeof(h->m.arm.at));
	h->m.cycles_at = -1;
	return h;
}

/*
 * TD_OPT_L2_MULTIPLEX: the model's level-2 events as more groups
 * (l2_group[]: Zen's PipelineL2 two of 4, each fitting alone even
 * beside the NMI watchdog's counter; Skylake's three, each fitting the
 * 4 general counters of a thread with SMT on; Atom's one).  Not checked
 * for scheduling: with level 1 holding the counters they wait for the
 * kernel's rotation (perf_rotate_context), which gives each group of the
 * flexible list its turn; a group the PMU could never hold is refused
 * here (EINVAL, -ENOSPC).
 */
int td_gen_open_l2_mux(struct td *td, bool include_kernel)
{
	return td_gen_open_mux_groups(td, td_gen_of(td)->gen, td->pmu.type,
				      include_kernel);
}

/*
 * The same for any level-1 group g of such a model on PMU type (the
 * hybrid E-cores' on cpu_atom too: hybrid.c).
 */
int td_gen_open_mux_groups(struct td *td, struct td_gen *g, uint32_t type,
			   bool include_kernel)
{
	unsigned at = 0;

	for (int k = 0; k < TD_GEN_L2_GROUPS && g->m.l2_group[k]; k++) {
		unsigned n = g->m.l2_group[k];
		struct td_gen *h = td_gen_sub(g, g->m.config2 + at, n);
		int err;

		if (!h)
			return -ENOMEM;
		g->mux[k] = h;
		at += n;
		err = td_gen_group_open(td, h, type, include_kernel, false);
		if (err < 0)
			return err;
	}
	return 0;
}
