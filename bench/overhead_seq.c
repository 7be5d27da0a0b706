/* SPDX-License-Identifier: MIT */
/*
 * The measured sections of the overhead benchmark and the profiles they
 * run on.  Each region runs WORK_SLOTS of emulated work between its begin
 * and its end (emu_run: emulator code, never counted), so that its
 * readings are a real region's: short enough that no reset is due during
 * the sections (the fast path), long enough to be a region.  Each region
 * object is warmed up first, as in a loop: the first use of a region
 * takes the slow path to learn its length.
 */
#include <string.h>

#include "overhead.h"
#include "topdown.h"

#define WORK_SLOTS 20000

const struct ovh_profile ovh_profiles[] = {
	{ "spr", "Sapphire Rapids, PERF_METRICS", EMU_SPR, OVH_PERF_METRICS, 0,
	  false },
	{ "lnl", "Lunar Lake, PERF_METRICS metrics-clear", EMU_LNL,
	  OVH_PERF_METRICS, 0, false },
	{ "adl-pcore", "Alder Lake hybrid, thread on a P-core", EMU_ADL,
	  OVH_PERF_METRICS, 0, false },
	{ "arl-pcore", "Arrow Lake hybrid, metrics-clear, thread on a P-core",
	  EMU_ADL, OVH_PERF_METRICS, 0, true },
	{ "spr-mem", "Sapphire Rapids, memory drill-down (TD_OPT_MEMORY)",
	  EMU_SPR, OVH_MEMORY, TD_OPT_MEMORY, false },
	{ "adl-pcore-mem", "Alder Lake P-core, memory drill-down", EMU_ADL,
	  OVH_MEMORY, TD_OPT_MEMORY, false },
	{ "zen4", "AMD Zen 4, ordinary counters", EMU_ZEN4, OVH_ORDINARY, 0,
	  false },
	{ "zen5", "AMD Zen 5, ordinary counters", EMU_ZEN5, OVH_ORDINARY, 0,
	  false },
	{ "skl", "Intel Skylake, V4.5 ordinary counters", EMU_SKL,
	  OVH_ORDINARY, 0, false },
	{ "grt", "Intel Gracemont, ordinary counters", EMU_GRT,
	  OVH_ORDINARY, 0, false },
	{ "n2", "Arm Neoverse N2 r0p3, PMUv3 event counters",
	  EMU_ARM_N2_R0P3, OVH_ORDINARY, 0, false },
};
const unsigned ovh_nr_profiles = sizeof(ovh_profiles) / sizeof(ovh_profiles[0]);

const struct ovh_profile *ovh_profile_by_name(const char *name)
{
	for (unsigned i = 0; i < ovh_nr_profiles; i++)
		if (strcmp(ovh_profiles[i].name, name) == 0)
			return &ovh_profiles[i];
	return NULL;
}

void ovh_count_call(struct ovh_section_count *c)
{
	if (c->calls < OVH_MAX_CALLS)
		c->calls++;
	else
		c->overflow = true;
}

void ovh_count_read(struct ovh_section_count *c)
{
	if (c->reads < OVH_MAX_READS && c->calls > 0) {
		c->read_lib[c->reads] = c->lib;
		c->read_call[c->reads] = c->calls - 1;
	} else {
		c->overflow = true;
	}
	c->reads++;
}

static struct emu_mix mix;

static void work(void)
{
	emu_run(WORK_SLOTS, &mix);
}

static unsigned long emu_syscalls(void)
{
	struct emu_stats s;

	emu_stats(&s);
	return s.syscalls;
}

static void pair(struct td *td, struct td_region *r, struct td_result *res)
{
	td_region_begin(td, r);
	work();
	td_region_end(td, r, res);
}

static void nested(struct td *td, struct td_region *outer,
		   struct td_region *inner)
{
	td_region_begin(td, outer);
	td_region_begin(td, inner);
	work();
	td_region_end(td, inner, NULL);
	td_region_end(td, outer, NULL);
}

/* A named region known to the handle: its slot found, nothing allocated. */
static struct td_named named_region = TD_NAMED_INIT("bench");

static void named_pair(struct td *td)
{
	td_named_begin(td, &named_region);
	work();
	td_named_end(td, &named_region, NULL);
}

static void named_str_pair(struct td *td)
{
	td_named_begin_str(td, "bench by name");
	work();
	td_named_end_str(td, "bench by name", NULL);
}

/*
 * One call of an instrumented function, as GCC's -finstrument-functions
 * code makes it: the hooks around the function's work (GCC manual,
 * "Program Instrumentation Options").  The hooks are libtopdown-
 * functions' where the program links it, else glibc's empty ones.
 */
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static __attribute__((noinline)) void instrumented_call(void)
{
	__cyg_profile_func_enter((void *)instrumented_call, (void *)work);
	work();
	__cyg_profile_func_exit((void *)instrumented_call, (void *)work);
}

/* One section: run it, then tell the counting method where it ended. */
static void section(ovh_mark_fn mark, unsigned i, struct td *td,
		    struct td_region *r, struct td_region *outer,
		    struct td_record *recs, unsigned nrecs)
{
	struct td_result res;
	unsigned long before = emu_syscalls();

	switch ((enum ovh_section)i) {
	case OVH_PAIR:
	case OVH_PAIR_RECORDS:
		pair(td, r, NULL);
		break;
	case OVH_PAIR_RESULT:
		pair(td, r, &res);
		break;
	case OVH_NESTED:
		nested(td, outer, r);
		break;
	case OVH_NAMED:
		named_pair(td);
		break;
	case OVH_NAMED_STR:
		named_str_pair(td);
		break;
	case OVH_SETUP:
		td_records_attach(td, recs, nrecs);
		pair(td, r, NULL);
		break;
	case OVH_NR_SECTIONS:
		break;
	}
	mark(i + 1, emu_syscalls() - before);
}

int ovh_run_sections(const struct ovh_profile *prof, ovh_mark_fn mark)
{
	static struct td_record recs[64];
	struct td_region r, outer;
	struct td_result res;
	struct td_options o = TD_OPTIONS_INIT;
	struct td *td;
	int err;

	memset(&r, 0, sizeof(r));
	memset(&outer, 0, sizeof(outer));
	mix = emu_mix_l2(0.4, 0.1, 0.2, 0.3, 0.05, 0.05, 0.1, 0.15);
	emu_setup(prof->emu);
	if (prof->offer_clear)
		emu_offer_metrics_clear();
	o.flags = prof->opts;
	err = td_open(&td, &o);
	if (err < 0)
		return err;
	for (int i = 0; i < 2; i++) { /* warm-up: every sequence, twice */
		pair(td, &r, NULL);
		pair(td, &r, &res);
		nested(td, &outer, &r);
		named_pair(td); /* the first allocates the handle's slot */
		named_str_pair(td);
	}
	mark(0, 0);
	for (unsigned i = 0; i < OVH_NR_SECTIONS; i++)
		section(mark, i, td, &r, &outer, recs, 64);
	td_close(td);
	emu_teardown();
	return 0;
}

int ovh_run_function(const struct ovh_profile *prof, ovh_mark_fn mark)
{
	unsigned long before;

	mix = emu_mix_l2(0.4, 0.1, 0.2, 0.3, 0.05, 0.05, 0.1, 0.15);
	emu_setup(prof->emu);
	/* the first opens the hooks' handle and maps the thread's tables */
	for (int i = 0; i < 3; i++)
		instrumented_call();
	mark(0, 0);
	before = emu_syscalls();
	instrumented_call();
	mark(1, emu_syscalls() - before);
	emu_teardown();
	return 0;
}
