/* SPDX-License-Identifier: MIT */
/*
 * The emulated PMU and the kernel's TopDown event logic (see emu.h for the
 * behaviour modelled and the kernel code it follows).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"

struct emu_state emu;
__thread struct emu_cpu emu_cpu;

/* Recursive: the emulator itself calls the interposed mmap/munmap/open. */
static pthread_mutex_t emu_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

struct emu_mix emu_mix_l1(double ret, double bad, double fe, double be)
{
	struct emu_mix m = { { ret, bad, fe, be, 0, 0, 0, 0 } };
	return m;
}

struct emu_mix emu_mix_l2(double ret, double bad, double fe, double be,
			  double heavy, double br, double fetch_lat, double mem)
{
	struct emu_mix m = { { ret, bad, fe, be, heavy, br, fetch_lat, mem } };
	return m;
}

/* ---- hardware registers ------------------------------------------------ */

/*
 * PERF_METRICS as the hardware derives it from its internal per-category
 * counts: level-1 bytes are 8-bit fractions summing to 0xff (kernel
 * document), rounded by largest remainder; level-2 bytes are each rounded
 * to the nearest 8-bit fraction.  Either way every byte is within one step.
 */
uint64_t emu_hw_metrics(const struct emu_hw *hw)
{
	uint64_t word = 0, q[4], total = 0;
	double rem[4];

	if (!hw->slots)
		return 0;
	for (int i = 0; i < 4; i++) {
		double x = (double)hw->acc[i] * 255.0 / (double)hw->slots;
		q[i] = (uint64_t)x;
		rem[i] = x - (double)q[i];
		total += q[i];
	}
	while (total < 255) {
		int best = 0;
		for (int i = 1; i < 4; i++)
			if (rem[i] > rem[best])
				best = i;
		q[best]++;
		rem[best] = -1;
		total++;
	}
	for (int i = 0; i < 4; i++)
		word |= (q[i] & 0xff) << (8 * i);
	if (emu.l2) {
		for (int i = 4; i < 8; i++) {
			double x = (double)hw->acc[i] * 255.0 / (double)hw->slots;
			uint64_t b = (uint64_t)llround(x);
			word |= (b > 255 ? 255 : b) << (8 * i);
		}
	}
	return word;
}

static void hw_zero(struct emu_hw *hw)
{
	memset(hw, 0, sizeof(*hw));
}

/* What another context leaves in the registers. */
static void hw_scribble(struct emu_hw *hw)
{
	hw->slots = 0x123456789ull + (uint64_t)rand();
	for (int i = 0; i < 4; i++)
		hw->acc[i] = hw->slots / 4;
	for (int i = 4; i < 8; i++)
		hw->acc[i] = hw->slots / 16;
}

/* ---- user pages --------------------------------------------------------- */

static uint32_t event_index(const struct emu_event *e)
{
	const struct emu_group *g = e->group;

	if (!e->rdpmc_flag || !g->enabled || !g->scheduled || e->stopped)
		return 0;
	if (e->kind == EMU_EV_SLOTS)
		return EMU_RDPMC_SLOTS + 1;
	if (e->kind == EMU_EV_METRIC)
		return EMU_RDPMC_METRICS + 1;
	return 1 + 1; /* a general-purpose counter: not TopDown */
}

/* perf_event_update_userpage(): the only writer of lock. */
void emu_page_update(struct emu_event *e)
{
	struct perf_event_mmap_page *pc = e->page;

	if (!pc)
		return;
	pc->lock++;
	__asm__ __volatile__("" ::: "memory");
	pc->index = event_index(e);
	pc->offset = (int64_t)e->count; /* meaningless for TopDown */
	pc->time_enabled = e->group->time_enabled;
	pc->time_running = e->group->time_running;
	pc->cap_user_rdpmc = e->rdpmc_flag;
	pc->pmc_width = 48;
	if (e->kind == EMU_EV_GP)
		emu_gen_page(e, pc);
	__asm__ __volatile__("" ::: "memory");
	pc->lock++;
}

static void group_pages_update(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++)
		emu_page_update(g->members[i]);
}

/*
 * How often, and in which order, the kernel writes a group's pages when
 * it moves the group on and off the PMU.  One write per event at the
 * schedule-out, after the event stopped: x86_pmu_del calls
 * perf_event_update_userpage after x86_pmu_stop set PERF_HES_STOPPED
 * (arch/x86/events/core.c; AMD shares it), armpmu_del after armpmu_stop
 * (drivers/perf/arm_pmu.c), so the page shows index 0
 * (kernel/events/core.c perf_event_index) with the times of the
 * schedule-out.  A kernel whose schedule-outs leave GP pages stale
 * (emu_stale_pages) skips it.
 */
static void pages_at_del(struct emu_group *g)
{
	if (emu.stale_pages && !g->topdown)
		return;
	for (int i = 0; i < g->nr; i++) {
		g->members[i]->stopped = true;
		emu_page_update(g->members[i]);
	}
}

/*
 * Two writes per event at the schedule-in, event after event in list
 * order (x86_pmu_enable starts each with x86_pmu_start(PERF_EF_RELOAD)):
 * x86's set_period writes the page (x86_perf_event_set_period, and for
 * TopDown events icl_set_topdown_event_period after restoring SLOTS and
 * PERF_METRICS) while the event is still stopped, index 0, and
 * x86_pmu_start writes it again once started.  Arm: armpmu_add ->
 * armpmu_start clears the state before armpmu_event_set_period's write,
 * index already valid, and armpmu_add writes again.  So a context switch
 * is three writes per event, lock + 6, and a reading racing the
 * schedule-in may find the page between the two (lock even, index 0 on
 * x86).
 */
static void pages_at_start(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		e->stopped = !emu.arm;
		emu_page_update(e);
		e->stopped = false;
		emu_page_update(e);
	}
}

/*
 * A flexible group that could not go on: merge_sched_in
 * (kernel/events/core.c) writes each member's page once
 * (group_update_userpage): index 0, times moving on.
 */
static void pages_not_scheduled(struct emu_group *g)
{
	group_pages_update(g);
}

/* ---- the kernel's topdown update (intel_update_topdown_event) ---------- */

static uint64_t metric_slots(uint64_t slots, uint64_t metrics, int idx)
{
	uint64_t field = (metrics >> (8 * idx)) & 0xff;

	/* mul_u64_u32_div(slots, field, 0xff) */
	return (uint64_t)(((unsigned __int128)slots * field) / 0xff);
}

static uint64_t topdown_value(const struct emu_event *e, uint64_t slots,
			      uint64_t metrics)
{
	return e->kind == EMU_EV_SLOTS ? slots
				       : metric_slots(slots, metrics, e->idx);
}

/*
 * Fold the registers into the counts with the kernel's rule (a drop is
 * discarded, not subtracted), then either zero the registers (reset) or
 * remember them for the next schedule-in (save).
 */
void emu_topdown_update(struct emu_group *g, bool reset)
{
	struct emu_hw *hw = &g->owner->hw;
	uint64_t slots, metrics;

	if (!g->topdown || !g->scheduled || !g->enabled)
		return;
	slots = hw->slots;
	if (!slots)
		return;
	metrics = emu_hw_metrics(hw);
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];
		uint64_t delta, last = 0;

		if (e->kind == EMU_EV_RAW)
			continue;
		delta = topdown_value(e, slots, metrics);
		if (g->saved_slots)
			last = topdown_value(e, g->saved_slots,
					     g->saved_metrics);
		if (delta > last)
			e->count += delta - last;
	}
	if (reset) {
		hw_zero(hw);
		g->saved_slots = g->saved_metrics = 0;
	} else {
		g->saved_slots = slots;
		g->saved_metrics = metrics;
	}
}

/* ---- scheduling ------------------------------------------------------- */

static void schedule_out(struct emu_group *g)
{
	emu_topdown_update(g, false);
	emu_gen_stop(g);
	pages_at_del(g);
	g->scheduled = false;
	if (g->topdown) /* the next context uses fixed counter 3 */
		hw_scribble(&g->owner->hw);
}

/*
 * The hardware after wrmsr(FIXED_CTR3, saved_slots) and
 * wrmsr(PERF_METRICS, saved_metric): its per-category state can only be
 * what the 8-bit word says, field x slots / 255 (level 1 made to add up).
 */
static void hw_restore_from_word(struct emu_hw *hw, uint64_t slots,
				 uint64_t word)
{
	uint64_t sum = 0;
	int big = 0;

	hw->slots = slots;
	for (int i = 0; i < 8; i++)
		hw->acc[i] = (((word >> (8 * i)) & 0xff) * slots) / 255;
	for (int i = 0; i < 4; i++) {
		sum += hw->acc[i];
		if (hw->acc[i] > hw->acc[big])
			big = i;
	}
	hw->acc[big] += slots - sum;
	for (int i = 4; i < 8; i++)
		if (hw->acc[i] > hw->acc[i - 4])
			hw->acc[i] = hw->acc[i - 4];
}

/*
 * icl_set_topdown_event_period: restore if something was saved (else the
 * registers keep what the previous context left: "if (hwc->saved_slots
 * ...)"), then the pages' writes (pages_at_start).
 */
static void schedule_in(struct emu_group *g)
{
	g->scheduled = true;
	emu_gen_start(g);
	if (!g->scheduled) {
		pages_not_scheduled(g);
		return;
	}
	if (g->saved_slots) {
		uint64_t w = g->saved_metrics;

		if (emu.faults & EMU_FAULT_SWITCH_SCRAMBLE) /* rotate bytes 0-3 */
			w = (w & ~UINT64_C(0xffffffff)) |
			    ((w << 8 | w >> 24) & 0xffffffff);
		hw_restore_from_word(&g->owner->hw, g->saved_slots, w);
	}
	pages_at_start(g);
}

/* The enable itself takes time: 1 ns, counted as running if it runs. */
static void enable_time(struct emu_group *g)
{
	g->time_enabled++;
	g->time_running += g->scheduled;
}

void emu_group_enable(struct emu_group *g)
{
	if (g->enabled)
		return;
	g->enabled = true;
	if (!g->started) {
		/* First start: left == max_period, registers zeroed. */
		g->started = true;
		hw_zero(&g->owner->hw);
		g->saved_slots = g->saved_metrics = 0;
		g->scheduled = emu_group_runnable(g);
		if (g->scheduled)
			emu_gen_start(g);
		enable_time(g);
		if (g->scheduled)
			pages_at_start(g);
		else if (emu_group_runnable(g))
			pages_not_scheduled(g);
		return;
	}
	if (emu_group_runnable(g))
		schedule_in(g);
	enable_time(g);
}

void emu_group_disable(struct emu_group *g)
{
	if (!g->enabled)
		return;
	/* __perf_event_disable: group_sched_out (its del writes), no more */
	if (g->scheduled)
		schedule_out(g);
	g->enabled = false;
	g->scheduled = false;
}

/* ---- thread-side events ------------------------------------------------ */

static void split(uint64_t slots, const struct emu_mix *m, uint64_t out[8])
{
	uint64_t used = 0;

	for (int i = 0; i < 3; i++) {
		out[i] = (uint64_t)((double)slots * m->f[i]);
		used += out[i];
	}
	out[3] = used <= slots ? slots - used : 0;
	for (int i = 4; i < 8; i++) {
		out[i] = (uint64_t)((double)slots * m->f[i]);
		if (out[i] > out[i - 4])
			out[i] = out[i - 4];
	}
}

void emu_run(uint64_t slots, const struct emu_mix *mix)
{
	struct emu_cpu *c = &emu_cpu;
	struct emu_group *g = c->group;
	uint64_t part[8], drop, clears;
	uint64_t ns = slots / 4; /* a 4-slot-per-ns core */

	if (emu.gen_width) { /* ordinary counters: emu_generic.c */
		emu_gen_run(slots, mix);
		return;
	}
	if (emu_is_ecore(c->cpu)) { /* hybrid: the cpu_atom group counts */
		emu_gen_run(slots, mix);
		if (g && g->enabled)
			g->time_enabled += ns;
		return;
	}
	for (int j = 0; j < c->gen_nr; j++) /* cpu_atom's, not running here */
		if (c->gen_list[j]->atom && c->gen_list[j]->enabled)
			c->gen_list[j]->time_enabled += ns;
	split(slots, mix, part);
	c->truth.slots += slots;
	for (int i = 0; i < 8; i++)
		c->truth.cat[i] += part[i];
	drop = emu_uop_drop(slots, part);
	c->truth.uop_drop += drop;
	clears = emu_int_misc_clears(slots, part);
	/* the core's ordinary counters */
	emu_mem_run(slots, part, drop, clears);
	if (!g || !g->enabled)
		return;
	g->time_enabled += ns;
	if (!g->scheduled)
		return;
	g->time_running += ns;
	c->hw.slots += slots;
	if (emu_drop_in_frontend()) { /* what the core's fields then say */
		part[2] += drop;
		part[6] += drop;
		part[1] -= drop;
	}
	if (emu_clears_in_bad_spec()) { /* 5 slots a clear, Sunny Cove's */
		part[3] -= 5 * clears;
		part[1] += 5 * clears;
	}
	for (int i = 0; i < 8; i++)
		c->hw.acc[i] += part[i];
	/*
	 * Fixed counter 3 is 48 bits: its overflow PMI zeroes (K-new), and
	 * handle_pmi_common's intel_pmu_save_and_restart ends in the slots
	 * event's set_period, icl_set_topdown_event_period: one write of its
	 * page (arch/x86/events/intel/core.c).
	 */
	if (c->hw.slots >= (UINT64_C(1) << 48)) {
		emu_topdown_update(g, true);
		emu_page_update(g->members[0]);
	}
}

void emu_truth(struct emu_truth *t)
{
	*t = emu_cpu.truth;
}

void emu_note_foreign_reset(void)
{
	if (!(emu.faults & EMU_FAULT_HIDE_RESET) || !emu_cpu.hw.slots)
		return;
	if (!emu.frozen)
		emu.frozen_metrics = emu_hw_metrics(&emu_cpu.hw);
	emu.frozen = true;
	emu.hidden_slots += emu_cpu.hw.slots;
}

void emu_foreign_read(void)
{
	if (emu_cpu.group)
		emu_topdown_update(emu_cpu.group, true);
}

void emu_pmi(void)
{
	emu_foreign_read(); /* same effect: fold, zero, page untouched */
}

/*
 * May g run now?  Not while the thread is descheduled, and on a hybrid
 * part only on its own core type (intel_pmu_filter: a cpu_core group is
 * skipped on E-cores, a cpu_atom group on P-cores).
 */
bool emu_group_runnable(const struct emu_group *g)
{
	if (g->owner->descheduled)
		return false;
	if (emu.profile != EMU_ADL)
		return true;
	return g->atom == emu_is_ecore(g->owner->cpu);
}

/* Schedule g in or out to match emu_group_runnable. */
static void resched(struct emu_group *g)
{
	if (!g || !g->enabled)
		return;
	if (emu_group_runnable(g) && !g->scheduled) {
		schedule_in(g);
	} else if (!emu_group_runnable(g) && g->scheduled) {
		schedule_out(g);
	}
}

/*
 * Out and in again: the thread's running groups, around other work.
 * All out first, then in, in creation order (ctx_sched_in: the older
 * flexible group picks counters first); an enabled group that did not
 * fit before tries again.
 */
void emu_context_switch(uint64_t other_slots)
{
	struct emu_group *gs[3] = { emu_cpu.group, emu_cpu.gen_group,
				    emu_cpu.gen_group2 };

	for (int i = 0; i < 3; i++) {
		struct emu_group *g = gs[i];

		if (!g || !g->enabled || !g->scheduled)
			continue;
		schedule_out(g);
		if (g->topdown)
			emu_cpu.hw.slots += other_slots; /* the other task */
	}
	for (int i = 0; i < 3; i++)
		if (gs[i] && gs[i]->enabled && emu_group_runnable(gs[i]))
			schedule_in(gs[i]);
}

/*
 * perf_rotate_context, for the thread's ordinary-counter groups: when
 * one is waiting, all go out, the first moves to the end of the list,
 * and they go back in order; at the first that does not fit, the rest
 * wait too (merge_sched_in clears can_add_hw; group_can_go_on).
 */
void emu_gen_rotate(void)
{
	struct emu_cpu *c = &emu_cpu;
	struct emu_group *first;
	bool waiting = false, can_add = true;

	for (int j = 0; j < c->gen_nr; j++) {
		struct emu_group *g = c->gen_list[j];

		waiting |= g->enabled && !g->scheduled && emu_group_runnable(g);
	}
	if (!waiting || c->gen_nr < 2)
		return;
	for (int j = 0; j < c->gen_nr; j++)
		if (c->gen_list[j]->scheduled)
			schedule_out(c->gen_list[j]);
	first = c->gen_list[0];
	memmove(c->gen_list, c->gen_list + 1,
		(size_t)(c->gen_nr - 1) * sizeof(c->gen_list[0]));
	c->gen_list[c->gen_nr - 1] = first;
	for (int j = 0; j < c->gen_nr; j++) {
		struct emu_group *g = c->gen_list[j];

		if (!g->enabled || !emu_group_runnable(g))
			continue;
		if (can_add)
			schedule_in(g);
		else
			pages_not_scheduled(g);
		can_add = g->scheduled;
	}
}

/* Every ordinary-counter group of the thread (gen_group among them). */
static void resched_gen(void)
{
	for (int j = 0; j < emu_cpu.gen_nr; j++)
		resched(emu_cpu.gen_list[j]);
}

void emu_deschedule(void)
{
	emu_cpu.descheduled = true;
	resched(emu_cpu.group);
	resched_gen();
}

void emu_reschedule(void)
{
	emu_cpu.descheduled = false;
	resched(emu_cpu.group);
	resched_gen();
}

void emu_set_metrics_clear_trigger(enum emu_clear_trigger which)
{
	emu.clear_trigger = which;
}

/* ---- hybrid: CPUs and migration ---------------------------------------- */

bool emu_is_ecore(int cpu)
{
	return emu.profile == EMU_ADL && cpu >= 8;
}

/*
 * The scheduler moves this thread to cpu.  Onto an E-core the cpu_core
 * group is filtered out (intel_pmu_filter): scheduled out, index 0.
 * Back on a P-core it is scheduled in with its saved registers.  The
 * kernel updates rseq cpu_id before the thread runs again.
 */
void emu_migrate(int cpu)
{
	bool was_e = emu_is_ecore(emu_cpu.cpu), to_e = emu_is_ecore(cpu);

	emu_cpu.cpu = cpu;
	if (emu_rseq_self) {
		struct emu_rseq *rs = emu_rseq_self();
		rs->cpu_id = rs->cpu_id_start = (uint32_t)cpu;
	}
	if (was_e == to_e) {
		emu_context_switch(0);
		return;
	}
	resched(emu_cpu.group);
	resched_gen();
}

void emu_migrate_at_rdpmc(int cpu)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = cpu };

	emu_schedule(EMU_AT_RDPMC, &ev);
}

void emu_migrate_at_next_read(int cpu)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_MIGRATE, .cpu = cpu };

	emu_schedule(EMU_AT_READ, &ev);
}

void emu_switch_out_at_next_reset(void)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_SWITCH_OUT };

	emu_schedule(EMU_AT_RESET, &ev);
}

void emu_ecore_stint_at_next_reset(uint64_t slots, const struct emu_mix *mix)
{
	struct emu_sched_event ev = { .kind = EMU_SCHED_STINT, .cpu = 8,
				      .slots = slots, .mix = *mix };

	emu_schedule(EMU_AT_RESET, &ev);
}

void emu_set_read_work(uint64_t slots, const struct emu_mix *mix)
{
	emu.read_work = slots;
	emu.read_work_mix = *mix;
}

void emu_read_work(void)
{
	if (emu.read_work)
		emu_run(emu.read_work, &emu.read_work_mix);
}

void emu_set_ioctl_tail(uint64_t slots, const struct emu_mix *mix)
{
	emu.ioctl_tail = slots;
	emu.ioctl_tail_mix = *mix;
}

void emu_set_ioctl_work(uint64_t slots, const struct emu_mix *mix)
{
	emu.ioctl_work = slots;
	emu.ioctl_work_mix = *mix;
}

void emu_stale_pages(bool on, uint64_t foreign)
{
	emu.stale_pages = on;
	emu.foreign = foreign;
	emu.stale_counting = false;
}

void emu_stale_counting(const uint64_t *steps, unsigned n)
{
	emu.stale_pages = true;
	emu.stale_counting = true;
	memset(emu.stale_steps, 0, sizeof(emu.stale_steps));
	for (unsigned c = 0; c < n && c < EMU_MAX_MEMBERS; c++)
		emu.stale_steps[c] = steps[c];
}

void emu_set_rdpmc_knob(int value)
{
	emu.rdpmc_knob = value;
	emu_sysfs_write_knob(value);
}

void emu_stats(struct emu_stats *s)
{
	pthread_mutex_lock(&emu_lock);
	*s = emu.stats;
	pthread_mutex_unlock(&emu_lock);
}

void emu_lock_acquire(void)
{
	pthread_mutex_lock(&emu_lock);
}

void emu_lock_release(void)
{
	pthread_mutex_unlock(&emu_lock);
}
