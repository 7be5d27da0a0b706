/* SPDX-License-Identifier: MIT */
/*
 * Ordinary (general-purpose) counters of the emulated PMU, for the
 * profiles without PERF_METRICS, modelled on the kernel's x86 code
 * (intel-kernel-topdown.md section 4, arm-amd-topdown.md section 4):
 * - x86_perf_event_set_period at start: counter = -left (48 bits),
 *   prev_count = -left (64 bits), so that offset = count - prev_count
 *   plus the sign-extended register is the count;
 * - x86_perf_event_update (read(2), schedule-out, PMI): count += the
 *   48-bit difference, prev_count = register; the page is not rewritten;
 * - the register wraps at 2^48; the overflow PMI comes later (at the next
 *   emu_run), updates, restarts the period and rewrites the page;
 * - schedule-in may assign other counters (gp_rotate): index changes.
 * Workloads: true fractions in, the counts each formula expects out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

#define MASK48 ((UINT64_C(1) << 48) - 1)
#define ARM_CYCLE_COUNTER 31 /* PMCCNTR_EL0: user index 32 */

static uint64_t mask_of(const struct emu_event *e)
{
	return e->width >= 64 ? UINT64_MAX : (UINT64_C(1) << e->width) - 1;
}

struct map {
	uint64_t config;
	int sig;
};

static const struct map zen_map[] = {
	{ 0x76, SIG_CYCLES }, { 0x1000001a0ull, SIG_FE },
	{ 0x100001ea0ull, SIG_BE }, { 0x1000060a0ull, SIG_SMT },
	{ 0x7aa, SIG_DISP }, { 0xc1, SIG_RET }, { 0, 0 },
};
static const struct map skl_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x19c, SIG_FE }, { 0x10e, SIG_ISSUED },
	{ 0x2c2, SIG_RET }, { 0x100010dull, SIG_RECOVERY }, { 0, 0 },
};
/* Gracemont retiring as its sysfs lists it here (0x72): see emu_sysfs.c. */
static const struct map grt_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x73, SIG_BAD },
	{ 0x72, SIG_RET }, { 0x74, SIG_BE }, { 0, 0 },
};

/* Silvermont V1: cycle counts for FE and bad speculation. */
static const struct map slm_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x50ca, SIG_FE_CYC }, { 0x04ca, SIG_BAD_CYC },
	{ 0x10c2, SIG_RET }, { 0, 0 },
};

/* Alder Lake's cpu_atom (Gracemont) with the kernel's adl strings. */
static const struct map adl_atom_map[] = {
	{ 0x3c, SIG_CYCLES }, { 0x71, SIG_FE }, { 0x73, SIG_BAD },
	{ 0xc2, SIG_RET }, { 0x74, SIG_BE }, { 0, 0 },
};

struct emu_mix emu_mix_amd(double ret, double bad, double fe, double smt)
{
	struct emu_mix m = { { ret, bad, fe, 0, smt, 0, 0, 0 } };
	return m;
}

void emu_gp_set_period(uint64_t left)
{
	emu.gp_left = left;
}

const char *emu_cpuinfo(void)
{
	if (emu.arm)
		return emu_arm_cpuinfo();
	switch (emu.profile) {
	case EMU_ZEN4:
		return "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC 9654\n";
	case EMU_ZEN5:
		return "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC 9965\n";
	case EMU_SKL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 94\nmodel name\t: Intel(R) Core(TM) i7-6700K\n";
	case EMU_GRT:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 190\nmodel name\t: Intel(R) N100\n";
	case EMU_SLM:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 77\nmodel name\t: Intel(R) Atom(TM) CPU C2750\n";
	case EMU_NO_TOPDOWN: /* Core 2 (Merom): no TopDown of any kind */
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 15\n";
	case EMU_ICL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 126\n";
	case EMU_ADL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\n";
	case EMU_LNL:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 189\n";
	default:
		return "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n";
	}
}

int emu_gen_signal(uint64_t config)
{
	const struct map *m = emu.profile == EMU_SKL ? skl_map
			      : emu.profile == EMU_GRT ? grt_map
			      : emu.profile == EMU_ADL ? adl_atom_map
			      : emu.profile == EMU_SLM ? slm_map : zen_map;

	if (emu.arm)
		return emu_arm_signal(config);
	for (; m->sig; m++)
		if (m->config == config)
			return m->sig;
	return SIG_NONE;
}

static bool gp(const struct emu_event *e)
{
	return e->kind == EMU_EV_GP;
}

/*
 * x86_perf_event_set_period / armpmu_event_set_period for a counting
 * event: at most half the counter's range (Arm's max_period >> 1).
 */
static void set_period(struct emu_event *e)
{
	uint64_t left = emu.gp_left < mask_of(e) >> 1 ? emu.gp_left
						      : mask_of(e) >> 1;

	e->prev = (uint64_t)0 - left;
	e->hw = e->prev & mask_of(e);
	e->overflowed = false;
}

void emu_gp_set_counters(unsigned n)
{
	emu.gp_counters = n;
}

void emu_gp_reserve(unsigned n)
{
	emu.gp_reserved = n;
}

void emu_set_smt(bool active, bool anythread_ok)
{
	emu.anythread_ok = anythread_ok;
	emu_sysfs_smt(active);
}

/* Silvermont counts clocks on fixed counter 1, not a GP counter. */
static bool on_fixed(const struct emu_event *e)
{
	return emu.profile == EMU_SLM && e->sig == SIG_CYCLES;
}

/* Arm: the first cycles event of a group always goes to PMCCNTR_EL0. */
static bool takes_cycle_counter(const struct emu_group *g, int i,
				const struct emu_event *e)
{
	if (!emu.arm || e->sig != SIG_CYCLES)
		return false;
	for (int j = 0; j < i; j++)
		if (g->members[j]->sig == SIG_CYCLES)
			return false;
	return true;
}

/* Does e, member i of g (i == g->nr: joining), need an event counter? */
static bool needs_gp(const struct emu_group *g, int i,
		     const struct emu_event *e)
{
	return e->kind == EMU_EV_GP && !on_fixed(e) &&
	       !takes_cycle_counter(g, i, e);
}

static unsigned gp_members(const struct emu_group *g)
{
	unsigned n = 0;

	for (int i = 0; i < g->nr; i++)
		n += needs_gp(g, i, g->members[i]);
	return n;
}

/* validate_group (x86 core.c, arm_pmuv3's alike): a group must fit the
 * PMU's counters, whoever else holds them; checked when a member joins. */
int emu_gen_validate(const struct emu_group *g, const struct emu_event *e)
{
	return gp_members(g) + needs_gp(g, g->nr, e) > emu.gp_counters
		       ? -EINVAL
		       : 0;
}

/*
 * Schedule-in: every member on a free counter, or the whole group stays
 * out (group_sched_in's all-or-nothing transaction).  False: not
 * scheduled; its pages then show index 0 and time_running stops.
 */
bool emu_gen_start(struct emu_group *g)
{
	unsigned k = emu.gp_rotate++, n = 0;

	if (gp_members(g) > emu.gp_counters - emu.gp_reserved) {
		g->scheduled = false;
		return false;
	}
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e))
			continue;
		if (takes_cycle_counter(g, i, e))
			e->counter = ARM_CYCLE_COUNTER;
		else
			e->counter = (int)((n++ + k) % emu.gp_counters);
		set_period(e);
	}
	return true;
}

/* x86_perf_event_update: the 48-bit difference, page untouched. */
static void update(struct emu_event *e)
{
	if (e->counter < 0)
		return;
	e->count += (e->hw - e->prev) & mask_of(e);
	e->prev = e->hw;
}

void emu_gen_fold(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++)
		if (gp(g->members[i]))
			update(g->members[i]);
}

void emu_gen_stop(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e))
			continue;
		update(e);
		e->counter = -1;
	}
}

void emu_gen_page(const struct emu_event *e, struct perf_event_mmap_page *pc)
{
	const struct emu_group *g = e->group;
	bool on = e->rdpmc_flag && g->enabled && g->scheduled &&
		  e->counter >= 0;

	/* armv8pmu_user_event_idx: 0 while perf_user_access is 0 */
	if (emu.arm && !emu.arm->user_access)
		on = false;
	pc->pmc_width = (uint16_t)e->width;
	pc->index = on ? (uint32_t)e->counter + 1 : 0;
	pc->offset = (int64_t)(on ? e->count - e->prev : e->count);
}

/* The overflow PMI: update, restart the period, rewrite the page. */
static void deliver_pmis(struct emu_group *g)
{
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];

		if (!gp(e) || !e->overflowed)
			continue;
		update(e);
		set_period(e);
		emu_page_update(e);
	}
}

static void split(uint64_t slots, const struct emu_mix *m,
		  struct emu_parts *p)
{
	struct emu_cpu *c = &emu_cpu;
	bool amd = emu.profile == EMU_ZEN4 || emu.profile == EMU_ZEN5;
	uint64_t w = emu.gen_width ? emu.gen_width : emu.atom_width, rb;

	memset(p, 0, sizeof(*p));
	c->gen_slot_rem += slots;
	p->cycles = c->gen_slot_rem / w;
	c->gen_slot_rem %= w;
	p->ret = (uint64_t)((double)slots * m->f[0]);
	p->bad = (uint64_t)((double)slots * m->f[1]);
	p->fe = (uint64_t)((double)slots * m->f[2]);
	p->smt = amd ? (uint64_t)((double)slots * m->f[4]) : 0;
	if (emu.profile == EMU_SLM) { /* V1 counts cycles: whole ones */
		p->fe -= p->fe % w;
		p->bad -= p->bad % w;
	}
	p->be = slots - p->ret - p->bad - p->fe - p->smt;
	/* V4.5: half the bad slots as recovery cycles, the rest as uops. */
	p->recovery_cycles = p->bad / 2 / w;
	rb = p->recovery_cycles * w;
	p->issued = p->ret + p->bad - rb;
	/* cycle-counted stalls (V1, Arm N1): whole cycles of their slots */
	p->fe_cyc = p->fe / w;
	p->be_cyc = p->be / w;
	p->bad_cyc = p->bad / w;
	if (emu.arm)
		emu_arm_parts(p);
	c->truth.slots += slots;
	c->truth.cat[0] += p->ret;
	c->truth.cat[1] += p->bad;
	c->truth.cat[2] += p->fe;
	c->truth.cat[3] += p->be;
	c->truth.cat[4] += p->smt;
}

static uint64_t increment(int sig, const struct emu_parts *p)
{
	switch (sig) {
	case SIG_CYCLES: return p->cycles;
	case SIG_FE: return p->fe;
	case SIG_BE: return p->be;
	case SIG_SMT: return p->smt;
	case SIG_DISP: return p->ret + p->bad;
	case SIG_RET: return p->ret;
	case SIG_BAD: return p->bad;
	case SIG_ISSUED: return p->issued;
	case SIG_RECOVERY: return p->recovery_cycles;
	case SIG_FE_SLOT: return p->fe_slot;
	case SIG_BE_SLOT: return p->be_slot;
	case SIG_STALL_SLOT: return p->stall_slot;
	case SIG_OP_SPEC: return p->op_spec;
	case SIG_X: return p->x;
	case SIG_FE_CYC: return p->fe_cyc;
	case SIG_BE_CYC: return p->be_cyc;
	case SIG_BAD_CYC: return p->bad_cyc;
	default: return 0;
	}
}

void emu_gen_run(uint64_t slots, const struct emu_mix *m)
{
	struct emu_group *g = emu_cpu.gen_group;
	struct emu_parts p;

	if (g && g->enabled && g->scheduled)
		deliver_pmis(g);
	split(slots, m, &p);
	if (!g || !g->enabled)
		return;
	g->time_enabled += slots / 4;
	if (!g->scheduled)
		return;
	g->time_running += slots / 4;
	for (int i = 0; i < g->nr; i++) {
		struct emu_event *e = g->members[i];
		uint64_t inc;

		if (!gp(e) || e->counter < 0)
			continue;
		/* AnyThread: the sibling ran the same (clocks, recovery) */
		inc = increment(e->sig, &p) * (e->any ? 2 : 1);
		if (inc > mask_of(e) - e->hw)
			e->overflowed = true;
		e->hw = (e->hw + inc) & mask_of(e);
	}
}

uint64_t emu_gen_rdpmc(uint32_t ecx)
{
	struct emu_group *g = emu_cpu.gen_group;

	if (g && g->scheduled)
		for (int i = 0; i < g->nr; i++)
			if (g->members[i]->counter == (int)ecx)
				return g->members[i]->hw;
	/* Another context's value (Arm zeroes unused counters instead). */
	if (emu.stale_pages)
		return emu.foreign & MASK48;
	return emu.arm ? 0 : 0x5a5a5a5a5aull & MASK48;
}
