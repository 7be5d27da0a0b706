/* SPDX-License-Identifier: MIT */
/*
 * Hybrid parts (Alder Lake and later): the core PMU, cpu_core, exists only
 * on P-cores.  While the thread runs on an E-core the group is not
 * scheduled (index 0, time_running stops), and RDPMC of fixed counter 3 or
 * PERF_METRICS there would #GP (an inference from the Intel SDM: those
 * registers do not exist on E-cores).  The
 * seqlock's index check does not protect: the thread can migrate between
 * it and the RDPMC.
 *
 * The guard (arch_x86.h td_rdpmc_guarded): the RDPMCs run in an rseq
 * critical section of glibc's registered rseq area (glibc >= 2.35,
 * __rseq_offset from the thread pointer), after checking the area's cpu_id
 * against the P-core bitmap read here from sysfs cpu_core/cpus.  Cost on
 * the hot path: a store, two loads, a compare and a bit test; none at all
 * on non-hybrid parts (another source).
 *
 * Trade-off: when glibc has no registered rseq area (older glibc,
 * GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind) or the cpus list cannot
 * be read, no guard is possible with libc alone, and the handle uses the
 * read(2) path instead: correct, never faults, one syscall per reading.
 * The alternative, catching SIGSEGV, would take over a process-wide signal
 * the application (or its runtime) may own.  A reading that finds the
 * thread on an E-core takes cpu_core's saved counts with read(2) instead
 * (pm_reading.c ecore_p_sample) and the E group's with RDPMC; when that
 * cannot be trusted the region is flagged TD_RESULT_UNRELIABLE, not lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "x86_formulas.h"
#include "hybrid.h"

#define TD_CPULIST_MAX 4096 /* "0-4095" patterns: plenty for one list */

/* The bitmap's size in bits: every CPU number the guard may test. */
static uint32_t guard_bits(uint32_t n)
{
#ifdef TD_GUARD_CPUS
	return n > TD_GUARD_CPUS ? n : TD_GUARD_CPUS;
#else
	return n;
#endif
}

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
#ifdef TD_GUARD_CPUS
	/* the fast path's bit test covers TD_GUARD_CPUS bits (arch_x86.h) */
	if (err >= 0 && n > TD_GUARD_CPUS)
		err = -ERANGE;
#endif
	if (err >= 0) {
		uint64_t *map = calloc((guard_bits(n) + 63) / 64,
				       sizeof(uint64_t));

		err = map ? td_cpulist_parse(list, map, n, &n) : -ENOMEM;
		td_hybrid_of(td)->pcores = map;
		td_hybrid_of(td)->nr_cpus = n;
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
	td_hybrid_of(td)->rseq = TD_HAVE_RSEQ_GUARD ? td_sys_rseq_area() : NULL;
	if (!td_hybrid_of(td)->rseq || pcore_bitmap(td) < 0) {
		free((void *)td_hybrid_of(td)->pcores);
		td_hybrid_of(td)->pcores = NULL;
		td_hybrid_of(td)->rseq = NULL;
		td->path = TD_PATH_READ;
	}
}

void td_hybrid_close(struct td *td)
{
	struct td_hybrid *h = td_hybrid_of(td);

	free((void *)h->pcores);
	h->pcores = NULL;
	td_gen_free(td, h->ecore);
	h->ecore = NULL;
	td_hybrid_quiet_update(td);
}

/*
 * The E-cores of a hybrid part.  cpu_core's group counts only on P-cores;
 * on E-cores TopDown comes from ordinary counters of cpu_atom (Atom V2
 * formula, encodings from cpu_atom's events/), in a second group: the
 * kernel refuses one group across hybrid PMUs (arch/x86/events/core.c
 * validate_group).  Exactly one of the two counts at any moment.  No counter
 * budget check here: on a P-core this group is rightly not running.
 * Any failure leaves the handle P-core only, as before.
 */
/*
 * TD_OPT_L2_MULTIPLEX on E-cores whose level 2 does not fit beside level
 * 1 (Gracemont: the model's config2): its groups on cpu_atom
 * too (counters_open.c td_gen_open_mux_groups), which the kernel rotates
 * with the level-1 group while the thread is on an E-core
 * (perf_rotate_context).  The two never count together: each counts
 * CPU_CLK_UNHALTED.CORE, on fixed counter 1 or, that taken, a general
 * counter (arch/x86/events/intel/core.c intel_grt_event_constraints,
 * FIXED_EVENT_CONSTRAINT(0x003c, 1), which
 * intel_pmu_check_event_constraints extends to the general counters),
 * and the groups' general-counter events, four and five with those
 * clocks, exceed Gracemont's 6 (intel_pmu_init, case INTEL_ALDERLAKE:
 * cpu_atom keeps the boot CPU's counters, cpu_core gets two more).
 * (Crestmont's 8 would hold both: its level 2 goes in the level-1
 * group, cpumodel.c hybrid_l2_in_group.)  So the E-cores' time is the
 * sum of the groups' times running (ecore_mux_fold); should they ever
 * count together, that sum exceeds it and pair_times' account flags the
 * regions, not skews them.
 * Not with the memory drill-down, whose nodes take
 * the entries the level-2 values would (hybrid.h TD_C_ECORE_L2).  A
 * failure leaves the E-cores at level 1.
 */
static void ecore_mux_open(struct td *td, struct td_gen *g, uint32_t type,
			   bool include_kernel)
{
	if (!g->m.nr2 || g->m.l2_in_group)
		return;
	if (td_gen_open_mux_groups(td, g, type, include_kernel) == 0)
		return;
	for (int k = 0; k < TD_GEN_L2_GROUPS; k++) {
		td_gen_free(td, g->mux[k]);
		g->mux[k] = NULL;
	}
}

void td_hybrid_ecore_open(struct td *td, bool include_kernel,
			  bool l2_multiplex)
{
	char buf[32];
	struct td_gen *g;
	uint32_t type;

	if (strcmp(td->pmu.name, "cpu_core") != 0 ||
	    td_sys_read_file("/sys/bus/event_source/devices/cpu_atom/type",
			     buf, sizeof(buf)) <= 0)
		return;
	g = td_gen_new();
	if (!g)
		return;
	type = (uint32_t)strtoul(buf, NULL, 10);
	if (td_cpu_model_atom("cpu_atom", &g->m) < 0 ||
	    td_gen_group_open(td, g, type, include_kernel, false) < 0) {
		td_gen_free(td, g);
		return;
	}
	if (l2_multiplex)
		ecore_mux_open(td, g, type, include_kernel);
	g->rdpmc_ok = td_gen_rdpmc_offered(td, g);
	/* The E page's first update from here is a schedule-in (the thread
	 * opens on a P-core, E index 0); else never match (odd). */
	g->cached_lock = td_load_once(g->pc[0]->lock) -
			 (td_load_once(g->pc[0]->index) ? 1 : 0);
	td_hybrid_of(td)->ecore = g;
	td_hybrid_quiet_update(td);
	td_hybrid_of(td)->p_lock = td_load_once(td_pm_of(td)->slots_pc->lock);
	td_pm_of(td)->pm.kcount_ok = true; /* base 0, the P group's counts 0 since enable */
}

static void counts_delta(struct td_counts *d, const struct td_counts *now,
			 const struct td_counts *last)
{
	d->slots = now->slots - last->slots;
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		d->cat[i] = now->cat[i] - last->cat[i];
}

static void counts_add(struct td_counts *c, const struct td_counts *d)
{
	c->slots += d->slots;
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		c->cat[i] += d->cat[i];
}

/*
 * The E group's values while the thread is on a P-core (the P reading
 * just succeeded there), where the group does not run.  x86 rewrites its
 * user page at schedule-out (x86_pmu_del: perf_event_update_userpage
 * after x86_pmu_stop, index 0; see counters.c), so RDPMC would only find
 * index 0 and fall back to read(2) anyway: read(2) straight away, exact
 * and resetting nothing for ordinary counters, and keep its result while
 * the page's lock says no schedule-in or -out came since: one read per
 * stint on the E-cores, not per reading.  The result is kept only when
 * two reads agree on time_running (the group did not run around them).
 */
static int ecore_values_off(struct td_gen *g, uint64_t *v, uint64_t *t)
{
	uint32_t lock = td_load_once(g->pc[0]->lock);
	uint64_t v2[TD_GEN_MAX], t2[2];
	int err;

	if (td_hybrid_ecore_cached(g, lock)) {
		memcpy(v, g->cv, sizeof(g->cv));
		memcpy(t, g->ct, sizeof(g->ct));
		return 0;
	}
	err = td_gen_values(g, false, v, t);
	if (err >= 0) {
		int err2 = td_gen_values(g, false, v2, t2);

		err = err2 < 0 ? err2 : err | err2;
	}
	if (err < 0)
		return err;
	g->cached = t2[1] == t[1];
	g->cached_lock = lock;
	memcpy(g->cv, v2, sizeof(g->cv));
	memcpy(g->ct, t2, sizeof(g->ct));
	memcpy(v, v2, sizeof(v2));
	memcpy(t, t2, sizeof(t2));
	return err;
}

/*
 * td_hybrid_ecore_cached, as the fast paths test it (hybrid.h
 * quiet_lock): after every change of the E group's cache.
 */
void td_hybrid_quiet_update(struct td *td)
{
	const struct td_gen *g = td_hybrid_of(td)->ecore;
	struct td_pm *pm = &td_pm_of(td)->pm;

	if (!g) {
		pm->quiet_lock = &pm->quiet_want;
	} else if (g->cached) {
		pm->quiet_want = g->cached_lock;
		pm->quiet_lock = &g->pc[0]->lock;
	} else {
		pm->quiet_not = ~pm->quiet_want;
		pm->quiet_lock = &pm->quiet_not;
	}
}

/*
 * The E group's values: on the RDPMC path with the P reading valid, the
 * thread is on a P-core (ecore_values_off); when the P reading failed it
 * is most likely on an E-core, where RDPMC of the group's general-purpose
 * counters is the fast read (they exist on both core types: no fault
 * either way; a value read after a migration there can be another
 * context's, but only readings whose P half failed use it, and regions
 * ending or beginning on those are flagged; cumulative counts telescope
 * at the next good reading).  The read(2) path reads it with read(2).
 */
static int ecore_values(struct td *td, const struct td_sample *s,
			uint64_t *v, uint64_t *t)
{
	struct td_gen *g = td_hybrid_of(td)->ecore;

	if (td->path != TD_PATH_RDPMC || g->mux[0]) /* mux: times now */
		return td_gen_values(g, false, v, t);
	if (s->valid && !td_pm_of(td)->pm.saved.used) {
		int err = ecore_values_off(g, v, t);

		td_hybrid_quiet_update(td);
		return err;
	}
	g->cached = false;
	td_hybrid_quiet_update(td);
	return td_gen_values(g, g->rdpmc_ok, v, t);
}

/*
 * Time no group counted.  Both groups' time_enabled follow the task's
 * context clock T, their time_running only while scheduled in
 * (kernel/events/core.c perf_event_update_time, __perf_update_times;
 * cpu_core's and cpu_atom's events share the task's hardware context),
 * so N = T - running(P) - running(E) moves exactly when neither counted.
 * A reading measures N up to a constant, on one group's clock:
 * - cpu_core's group active (a P reading): its page's enabled - running
 *   holds (both move while it runs), and the E group's running does not
 *   move while it is off: u = (enabled - running)(P) - running(E)
 *   = N + enabled(P) - T;
 * - cpu_core's group inactive (pm.saved.used): its page's running holds,
 *   and the E group's enabled - running, from its page while it runs or
 *   from read(2): u = (enabled - running)(E) - running(P)
 *   = N + enabled(E) - T.
 * Two readings of one kind compare as they are; across kinds
 * c = enabled(P) - enabled(E) converts them, and until c is known such
 * a pair cannot be vouched for.
 */

/*
 * c, at an E reading.  When the E group was read with read(2), from both
 * groups' current time_enabled (read(2) brings an inactive event's times
 * up to date: perf_event_read, update_context_time): cpu_core's was read
 * first, so the clock's move between the two reads makes this c smaller
 * than the true one, never larger.  Else, at an E reading whose E page
 * was written by the group's schedule-in on the switch from the P-cores
 * (its two writes, set_period's and x86_pmu_start's, the only ones since
 * the last P reading) while cpu_core's page holds its schedule-out from
 * that switch (x86_pmu_del's, its one write since), from
 * the two pages: the context clock stops at switch-out and
 * cpu_core's times are taken then, at T1 (ctx_sched_out:
 * update_context_time before the events go out); at switch-in the E
 * events go active at T1 too (event_sched_in: perf_event_set_state takes
 * the context's time, which has not moved), but their page is written a
 * moment e later (x86_pmu_start, the clock running again), e = running(E)
 * on the page - running(E) at the last P reading (it did not run in
 * between).  So enabled(E) at T1 = the page's enabled - e.  A group that
 * could not go in at that switch (multiplexed) is written later, giving a
 * c smaller by the time lost: the largest value seen is kept (never more
 * than the true c), so that a loss at a switch shows at any later one.
 */
static void learn_ecore_c(struct td *td, const uint64_t *t, bool by_read)
{
	const struct td_pm_saved_read *sr = &td_pm_of(td)->pm.saved;
	struct td_hybrid *h = td_hybrid_of(td);
	const struct td_gen *g = h->ecore;
	int64_t c;

	if (by_read)
		c = (int64_t)(sr->en_now - t[0]);
	else if (g->times_lock ==
			 g->cached_lock + 2 * TD_PAGE_WRITES_SCHED_IN &&
		 td->last_lock == h->p_lock + 2 * TD_PAGE_WRITES_SCHED_OUT)
		c = (int64_t)(sr->en - (t[0] - (t[1] - g->ct[1])));
	else
		return;
	if (!h->ecore_c_ok || c > h->ecore_c) {
		h->ecore_c = c;
		h->ecore_c_ok = true;
	}
}

/*
 * c still unknown after an E reading from the E page (no schedule-in
 * from the P-cores to pair it with: a switch between E-cores came
 * first, or the handle was opened on an E-core): one read(2) of the E
 * group teaches it.  Once, as a rule, in a handle's life.
 */
static void learn_ecore_c_by_read(struct td *td)
{
	uint64_t v[TD_GEN_MAX], t[2];
	int err = td_gen_values(td_hybrid_of(td)->ecore, false, v, t);

	if (err < 0)
		return;
	if (err & TD_GEN_SUSPECT)
		td->untrusted++; /* the RDPMC values just folded were wrong */
	learn_ecore_c(td, t, true);
}

/* Did N stay as the last valid reading measured it? */
static bool counted_throughout(const struct td_hybrid *h, uint64_t u,
			       bool ecore)
{
	if (ecore == h->last_u_ecore)
		return u == h->last_u;
	if (!h->ecore_c_ok)
		return false;
	if (ecore)
		return u + (uint64_t)h->ecore_c == h->last_u;
	return u == h->last_u + (uint64_t)h->ecore_c;
}

/*
 * The valid reading s's time, t[] the E group's times (from its page
 * unless by_read): s->unsched becomes a count of the moves of N (and of
 * pairs that could not be compared), which is what note_schedule looks
 * at.
 */
static void pair_times(struct td *td, struct td_sample *s, const uint64_t *t,
		       bool by_read)
{
	const struct td_pm_saved_read *sr = &td_pm_of(td)->pm.saved;
	struct td_hybrid *h = td_hybrid_of(td);
	uint64_t u;

	if (sr->used) {
		u = t[0] - t[1] - sr->run;
		learn_ecore_c(td, t, by_read);
		if (!h->ecore_c_ok)
			learn_ecore_c_by_read(td);
	} else {
		u = s->unsched - t[1];
		h->p_lock = td->last_lock;
	}
	if (h->have_last_u && !counted_throughout(h, u, sr->used))
		h->uncounted++;
	h->last_u = u;
	h->last_u_ecore = sr->used;
	h->have_last_u = true;
	s->unsched = h->uncounted;
}

/*
 * The E-cores' level 2 where their group counts it (a Skymont model's
 * l2_in_group: cpumodel.c), in the categories PERF_METRICS' level 2
 * takes, in the same units (slots x 255): fetch latency, and in the
 * memory-bound entry the backend's part that is not core bound, as
 * td_formula_atom_l2 maps them.  hybrid_delta keeps them for a region
 * all of whose slots came from E-cores.
 */
static void ecore_l2_counts(const struct td_gen_model *m, const uint64_t *v,
			    struct td_counts *c)
{
	if (!m->l2_in_group)
		return;
	c->cat[TD_M_FETCH_LAT] = 255 * v[TD_V2_FE_LAT];
	c->cat[TD_M_MEM_BOUND] = 255 * (v[TD_V2_BE] - v[TD_V2_ALLOC]);
}

/* x scaled by f: a count's delta (modulo 2^64, read signed). */
static uint64_t scaled(uint64_t x, double f)
{
	return (uint64_t)(int64_t)((double)(int64_t)x * f);
}

/*
 * TD_OPT_L2_MULTIPLEX on the E-cores (ecore_mux_open): the level-2
 * groups' counts since the last reading into now and inc (raw, for
 * hybrid_source.c's level 2 of a region all on E-cores), and inc's
 * level-1 counts scaled as perf stat scales a multiplexed count: by the
 * E-cores' time over the level-1 group's time running in the interval,
 * the E-cores' time being the groups' times running summed (they never
 * count together: ecore_mux_open).  Per interval, not per region: the
 * E-cores' counts join the P-cores' at every reading, each core type's
 * at its own weight.  t[1] becomes that time, for
 * pair_times' account of time neither core type counted.  An interval
 * with time on the E-cores but none of it level 1's lost its level-1
 * counts: regions spanning it are flagged.  Every group by read(2),
 * current: the handle's fast path is off in this mode.
 */
static int ecore_mux_fold(struct td *td, struct td_counts *now,
			  struct td_counts *inc, uint64_t *t)
{
	struct td_hybrid *h = td_hybrid_of(td);
	const struct td_gen *g = h->ecore;
	uint64_t r[TD_GEN_L2_MAX], run2 = 0, d1, d2;
	unsigned at = 0;
	double f;

	for (int k = 0; k < TD_GEN_L2_GROUPS && g->mux[k]; k++) {
		uint64_t tk[2];
		int err = td_gen_read_group(g->mux[k], r + at, tk);

		if (err < 0)
			return err;
		at += g->mux[k]->nr;
		run2 += tk[1];
	}
	for (unsigned i = 0; i < g->m.nr2; i++) {
		now->cat[TD_C_ECORE_L2 + i] = r[i];
		inc->cat[TD_C_ECORE_L2 + i] =
			r[i] - h->ecore_last.cat[TD_C_ECORE_L2 + i];
	}
	d1 = t[1] - h->mux_run1;
	d2 = run2 - h->mux_run2;
	h->mux_run1 = t[1];
	h->mux_run2 = run2;
	t[1] += run2;
	if (d2 == 0) /* level 1 counted all of the E-cores' time */
		return 0;
	if (d1 == 0) {
		td->untrusted++;
		return 0;
	}
	f = (double)(d1 + d2) / (double)d1;
	inc->slots = scaled(inc->slots, f);
	for (unsigned i = 0; i <= TD_M_SMT; i++)
		inc->cat[i] = scaled(inc->cat[i], f);
	inc->cat[TD_C_ECORE_SLOTS] = inc->slots;
	return 0;
}

/*
 * After the P-core reading s: add what the E-cores counted since the last
 * reading, to the folded base (so that region snapshots include it) and
 * to s.  Same units on both sides (slots, category slots x 255), so a
 * region's delta is the slot-weighted combination of both core types.
 * Time: while the thread is on an E-core, cpu_core's time_running stops
 * and cpu_atom's runs, so enabled - running(P) - running(E) moves only
 * when neither counts (pair_times).  (On the read(2) path the two groups
 * are read a few microseconds apart; a reading taken on an E-core then
 * sees cpu_core's enabled time move by that gap, which can flag the
 * region: conservative.)  pm_reading.c's undo of a reset that raced
 * a switch-out (typically: the thread was on an E-core at the ioctl)
 * keeps what this fold added at its second reading.
 */
void td_hybrid_fold(struct td *td, struct td_sample *s)
{
	struct td_gen *g = td_hybrid_of(td)->ecore;
	uint64_t v[TD_GEN_MAX], t[2];
	struct td_counts now, inc;
	int err = ecore_values(td, s, v, t);

	if (err < 0) {
		s->valid = false;
		return;
	}
	if (err & TD_GEN_SUSPECT)
		td->untrusted++; /* regions spanning the bad reading */
	td_formula_counts(&g->m, v, &now);
	ecore_l2_counts(&g->m, v, &now);
	now.cat[TD_C_ECORE_SLOTS] = now.slots; /* level 2 per region */
	counts_delta(&inc, &now, &td_hybrid_of(td)->ecore_last);
	if (g->mux[0] && ecore_mux_fold(td, &now, &inc, t) < 0) {
		s->valid = false;
		return;
	}
	counts_add(&td->snap.base, &inc);
	counts_add(&td_pm_of(td)->pm.last_read, &inc);
	counts_add(&s->c, &inc);
	td_hybrid_of(td)->ecore_last = now;
	if (s->valid)
		pair_times(td, s, t, err & TD_GEN_BY_READ);
}
