/* SPDX-License-Identifier: MIT */
/*
 * The PERF_METRICS source's readings, turned into monotonic counts
 * (struct td_counts).
 *
 * RDPMC path, following the kernel's semantics (arch/x86/events/intel/core.c
 * intel_update_topdown_event, icl_set_topdown_event_period; arch/x86/events/
 * core.c x86_pmu_event_idx; tools/perf/Documentation/topdown.txt):
 * - SLOTS and PERF_METRICS are read raw.  The user page's offset and
 *   pmc_width are meaningless for them (the kernel never sets prev_count
 *   for TopDown events; sign-extending at 48 bits would corrupt bytes 6-7),
 *   so neither is applied.  The page serves only to prove validity:
 *   cap_user_rdpmc, index != 0, and lock unchanged around the reads.
 * - A context switch saves and restores both registers: raw values carry
 *   on, unless SLOTS was 0 at the schedule-out (nothing saved, nothing
 *   restored: registers_not_ours).
 * - A read(2) on the group or a PMI zeroes both registers without touching
 *   the page's lock (inference: neither path calls
 *   perf_event_update_userpage), so the only sign of such a
 *   reset is SLOTS going backwards.  When that is seen the last reading is
 *   folded as if the reset had come right after it, the event is counted,
 *   and regions spanning it are flagged.  A foreign reset followed by more
 *   slots than were seen before it cannot be told from normal counting.
 *
 * read(2) path: the kernel returns per-category slot counts it accumulated
 * itself (slots x field / 255 at each update) and zeroes the hardware at
 * each read of the active group, so counts are monotonic and need no
 * folding; their 8-bit error is that of every slot since the registers
 * were last zeroed (read_sample).
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "perf_metrics.h"

struct raw_reading {
	uint64_t slots;
	uint64_t metrics;
	uint64_t unsched;
	uint64_t count;   /* the page's offset: the kernel's SLOTS count */
	uint32_t lock;
	/* metrics-clear mode: the page's lock and offset after the reads */
	uint32_t lock_after;
	uint64_t count_after;
};

/*
 * Every schedule-in rewrites SLOTS and PERF_METRICS from the values saved
 * at schedule-out (icl_set_topdown_event_period: wrmsr of saved_slots and
 * saved_metric), and PERF_METRICS only holds 8-bit fractions, so the
 * hardware carries on from a re-quantised state: each one adds up to
 * S_switch/255 slots of error per category, S_switch <= the SLOTS seen
 * now (inference: the kernel restores the saved values; that the
 * restore of an 8-bit word re-quantises is our reading of it).  The
 * page's lock since the previous reading bounds the number of restores
 * (td_pm_restores: a switch writes the page three times).
 */
static inline uint64_t restore_error(struct td *td, uint32_t lock,
				     uint64_t slots)
{
	uint32_t restores = td_pm_restores(td->last_lock, lock);

	td->last_lock = lock;
	return (uint64_t)restores * slots;
}

/*
 * The seqlock read of linux/perf_event.h's UAPI comment, reduced to what
 * TopDown needs.  Only the slots page's lock is checked: both pages are
 * rewritten together when the group is scheduled in (inference: the kernel
 * updates every member's page from the same schedule-in).
 */
static inline bool rdpmc_read(const struct td *td, struct raw_reading *r)
{
	const struct perf_event_mmap_page *spc = td_pm_of(td)->slots_pc;
	const struct perf_event_mmap_page *mpc = td_pm_of(td)->metric_pc;
	uint32_t seq, sidx, midx;

	do {
		seq = td_load_once(spc->lock);
		td_compiler_barrier();
		sidx = td_load_once(spc->index);
		midx = td_load_once(mpc->index);
		if (!(td_load_once(spc->capabilities) & TD_CAP_USER_RDPMC) ||
		    !sidx || !midx)
			return false;
		r->unsched = td_load_once(spc->time_enabled) -
			     td_load_once(spc->time_running);
		r->count = (uint64_t)td_load_once(spc->offset);
		if (TD_UNLIKELY(td_pm_of(td)->pm.guarded_read)) {
			if (!td_pm_of(td)->pm.guarded_read(td, sidx, midx, &r->slots,
						 &r->metrics))
				return false;
		} else {
			r->slots = td_rdpmc(sidx - 1);
			r->metrics = td_rdpmc(midx - 1);
		}
		r->slots &= TD_SLOTS_MASK;
		td_compiler_barrier();
	} while (td_load_once(spc->lock) != seq);
	r->lock = seq;
	return true;
}

/* A reset by someone else: counted, and regions spanning it are flagged. */
static void note_foreign_reset(struct td *td)
{
	td->foreign_resets++;
	td->untrusted++;
}

/*
 * SLOTS went backwards: someone else zeroed the registers.  The last
 * reading of both registers is folded whole; the slots a later reading
 * of SLOTS alone saw beyond it (a fast end without output) are folded as
 * slots of no known category: each category may lack all of them.
 */
static void fold_foreign_reset(struct td *td)
{
	uint64_t pair = td_pm_of(td)->last_pair_slots, raw = td_pm_of(td)->last_raw_slots;
	uint64_t unpaired = raw > pair ? raw - pair : 0;

	td_counts_add(&td->snap.base, pair, td_pm_of(td)->last_raw_metrics);
	td->snap.base.slots += unpaired;
	td->snap.qerr_base += pair + 255 * unpaired;
	td_pm_of(td)->pm.kcount_ok = false; /* the kernel's counts hold these slots too */
	td_pm_of(td)->pm.saved_kept = false; /* read(2) zeroed the saved ones */
	note_foreign_reset(td);
}

static void unreadable_sample(struct td *td, struct td_sample *s)
{
	td->last_lock = 1; /* odd: never a settled lock, no fast path */
	s->valid = false;
	s->c = td->snap.base;
	s->raw_slots = 0;
	s->unsched = 0;
}

/*
 * A schedule-in restores SLOTS and PERF_METRICS only if the schedule-out
 * saved a non-zero SLOTS (icl_set_topdown_event_period: "if
 * ((hwc->saved_slots) && is_slots_event(event))"; intel_update_topdown_event
 * returns before saving when it reads SLOTS as 0).  Switched out before
 * counting a slot since a reset (ours, or the open's first start), the
 * group comes back to whatever another context left in both registers.
 * The user page tells: a schedule-in bumps its lock, and its offset is
 * the slots event's kernel count (perf_event_update_userpage: count -
 * prev_count, which TopDown events never set), which IOC_RESET zeroes
 * (_perf_event_reset) and which only grows by what a schedule-out, a
 * read(2) or a PMI saw in SLOTS (__icl_update_topdown_event): still 0
 * after a page update, nothing was saved.  (The same page after a
 * schedule-in that restored nothing and found the registers still ours,
 * or after a page update that was no schedule-in, is taken for it too:
 * conservative.)  The group's first start zeroes both registers
 * ("if (left == x86_pmu.max_period)"): a group never seen active before
 * (opened on a hybrid part's E-core) holds our counts at its first
 * schedule-in.
 */
static inline bool registers_not_ours(const struct td *td,
				      const struct raw_reading *r)
{
	return r->lock != td->last_lock && r->count == 0 &&
	       td_pm_of(td)->pm.started && !td_pm_of(td)->pm.saved_kept;
}

/*
 * The registers hold another context's values plus what this thread
 * counted since the schedule-in: the base is moved so that this reading
 * counts as the last one did (its pair folded as a foreign reset's is),
 * and the next readings add only what they see beyond this one.  The
 * slots counted between the schedule-in and this reading are lost:
 * regions spanning it are flagged, but where this reading is the one
 * right after the library's own reset (only the library's instructions
 * ran since the reading it folded).  The kernel's counts still pair
 * with the base (ecore_p_sample): they had nothing since the reset, and
 * the next schedule-out adds the registers whole (last = saved_slots,
 * 0), as this base does.
 */
static void rebase_foreign_registers(struct td *td, const struct raw_reading *r)
{
	struct td_pm_handle *h = td_pm_of(td);
	uint64_t unpaired = h->last_raw_slots > h->last_pair_slots ?
			    h->last_raw_slots - h->last_pair_slots : 0;

	td_counts_add(&td->snap.base, h->last_pair_slots, h->last_raw_metrics);
	td->snap.base.slots += unpaired;
	/* minus this reading, modulo 2^64 (only differences are used),
	 * whose 8-bit error every region spanning it carries */
	td->snap.qerr_base += h->last_pair_slots + 255 * unpaired + r->slots;
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		td->snap.base.cat[i] -= ((r->metrics >> (8 * i)) & 0xff) * r->slots;
	td->snap.base.slots -= r->slots;
	h->pm.rebases++;
	if (!h->pm.after_reset)
		td->untrusted++;
}

/* A reading of registers that count from the last reset. */
static void cumulative_sample(struct td *td, const struct raw_reading *r,
			      struct td_sample *s)
{
	if (TD_UNLIKELY(registers_not_ours(td, r)))
		rebase_foreign_registers(td, r);
	else if (TD_UNLIKELY(r->slots < td_pm_of(td)->last_raw_slots))
		fold_foreign_reset(td);
	td_pm_of(td)->pm.after_reset = false;
	td_pm_of(td)->pm.started = true;
	td->snap.qerr_base += restore_error(td, r->lock, r->slots);
	td_pm_of(td)->last_raw_slots = r->slots;
	td_pm_of(td)->last_pair_slots = r->slots;
	td_pm_of(td)->last_raw_metrics = r->metrics;
	s->raw = r->metrics;
	s->c = td->snap.base;
	td_counts_add(&s->c, r->slots, r->metrics);
	s->raw_slots = r->slots;
	s->unsched = r->unsched;
	s->valid = true;
}

/*
 * Hybrid, the P half of a reading the P RDPMC could not take: the thread
 * is on an E-core (or cpu_core's group is switched out).  The kernel
 * saved the group's counts at schedule-out (x86_pmu_del -> x86_pmu_stop
 * -> intel_update_topdown_event's save branch), so read(2)
 * returns them, and on an inactive group it touches no register
 * (perf_event_read calls pmu->read, which resets, only for an active
 * event: an inference from kernel/events/core.c; the zeroing path is
 * pmu->read, intel_pmu_read_event).  The page's lock brackets the
 * read (x86 writes the page at every schedule-in and -out, see
 * counters.c): unchanged, with index 0,
 * the group stayed inactive throughout.  Changed: a schedule-in raced
 * the read, which, if it came after it, zeroed SLOTS and PERF_METRICS:
 * the reading is void, and base pairs with the kernel's counts again
 * only after our next reset.
 * Units: since our last reset (which zeroes both) the kernel has summed,
 * per interval, slots x field / 255 per category ("delta > last"), so
 * base + 255 x count is this reading in ours, within the 8-bit scale of
 * the SLOTS at schedule-out, the kernel's rounding (255) and the drops
 * "delta > last" discards at each schedule-out (twice the restore
 * error, as read_sample counts them).
 */
static bool ecore_p_sample(struct td *td, struct td_sample *s)
{
	const struct perf_event_mmap_page *pc = td_pm_of(td)->slots_pc;
	uint64_t buf[3 + 1 + TD_NR_METRICS], en, run;
	size_t len = (3 + 1 + td_pm_of(td)->pm.pmu.nr_metrics) * sizeof(uint64_t);
	uint32_t lock = td_load_once(pc->lock);
	int n;

	td_compiler_barrier();
	if (!td_pm_of(td)->pm.kcount_ok || td_pm_of(td)->pm.clear_mode || (lock & 1) ||
	    td_load_once(pc->index))
		return false;
	en = td_load_once(pc->time_enabled);
	run = td_load_once(pc->time_running);
	if (run)
		td_pm_of(td)->pm.started = true; /* it ran: started before */
	n = td_sys_read(td->leader_fd, buf, len);
	td_compiler_barrier();
	if (td_load_once(pc->lock) != lock) {
		td_pm_of(td)->pm.kcount_ok = false; /* the read may have reset: void */
		return false;
	}
	if (n != (int)len || buf[0] != 1 + td_pm_of(td)->pm.pmu.nr_metrics)
		return false;
	s->c = td->snap.base;
	s->c.slots += buf[3];
	for (unsigned i = 0; i < td_pm_of(td)->pm.pmu.nr_metrics; i++)
		s->c.cat[i] += 255 * buf[4 + i];
	s->qself = buf[3] + 255;
	td->snap.qerr_base += s->qself + 2 * restore_error(td, lock, s->qself);
	/*
	 * raw_slots 0: no policy reset here (IOC_RESET of the switched-out
	 * group would zero the kernel's counts, not the saved registers).
	 */
	s->raw_slots = 0;
	s->raw = 0;
	s->unsched = en - run; /* hybrid.c pairs it with the E group's */
	td_pm_of(td)->pm.saved.en = en;
	td_pm_of(td)->pm.saved.run = run;
	td_pm_of(td)->pm.saved.en_now = buf[1];
	s->valid = true;
	td_pm_of(td)->pm.saved.used = true;
	return true;
}

static int rdpmc_sample(struct td *td, struct td_sample *s)
{
	struct raw_reading r;

	if (TD_LIKELY(rdpmc_read(td, &r)))
		cumulative_sample(td, &r, s);
	else if (!(td_pm_of(td)->pm.saved_read_fallback && ecore_p_sample(td, s)))
		unreadable_sample(td, s);
	return 0;
}

/*
 * Metrics-clear mode (tools/perf/Documentation/topdown.txt; the slots
 * event's config1 bit 0): the hardware zeroes SLOTS
 * and PERF_METRICS after a user RDPMC, so every reading is the delta since
 * the previous one and is folded at once.  The kernel leaves open which of
 * the two reads triggers the clear (Intel's ISE specifies it), and reading
 * the trigger first would destroy the other register.  Until it is known,
 * a reading probes: SLOTS twice (if the second is smaller, reading SLOTS
 * clears: that reading's categories are lost and counted as a foreign
 * reset), then PERF_METRICS, then SLOTS again (smaller: reading
 * PERF_METRICS clears).  If neither clears, the mode is not in effect and
 * the handle goes back to ordinary cumulative readings.  Readings that
 * find SLOTS at 0 teach nothing and lose nothing.
 * Context switches are harmless here too: the kernel saves and restores
 * with ring-0 RDPMC/MSR accesses, which do not clear; but not one whose
 * schedule-out came before a slot was counted after our clearing read
 * (clear_judge_restores), which a reset after each schedule-in seen
 * makes exact to tell (clear_zero_saved).
 * Resets by others (read(2), PMI) cannot be seen in this mode: every
 * reading is a delta.
 *
 * Where the fixed selectors exist on some CPUs only (the hybrid source's
 * rseq guard, pm.guarded_read), the reads go by pairs inside the guard,
 * the one that may clear last: the guard's second RDPMC is its commit
 * instruction (arch_x86.h td_rdpmc_guarded), so an abort comes before it
 * ran, nothing it would clear is lost, and the guard's retry reads the
 * same interval again.  The probe's pairs are SLOTS twice, SLOTS and
 * PERF_METRICS, SLOTS twice: only its very first read may clear before
 * an abort, in which case SLOTS is the trigger and the probe counts a
 * foreign reset anyway.
 */

/* Two RDPMCs, first then second (user-page indices); false: off the CPUs having them. */
static inline bool clear_pass_read(const struct td *td, uint32_t first,
				   uint32_t second, uint64_t *a, uint64_t *b)
{
	if (TD_UNLIKELY(td_pm_of(td)->pm.guarded_read))
		return td_pm_of(td)->pm.guarded_read(td, first, second, a, b);
	*a = td_rdpmc(first - 1);
	*b = td_rdpmc(second - 1);
	return true;
}

/* PERF_METRICS, then SLOTS again: s3 (guarded: SLOTS before it is r's). */
static bool probe_metrics_then_slots(struct td *td, uint32_t sidx,
				     uint32_t midx, struct raw_reading *r,
				     uint64_t *s3)
{
	uint64_t unused;

	if (!td_pm_of(td)->pm.guarded_read) {
		r->metrics = td_rdpmc(midx - 1);
		*s3 = td_rdpmc(sidx - 1) & TD_SLOTS_MASK;
		return true;
	}
	if (!clear_pass_read(td, sidx, midx, &r->slots, &r->metrics))
		return false;
	r->slots &= TD_SLOTS_MASK;
	if (!clear_pass_read(td, sidx, sidx, s3, &unused)) {
		note_foreign_reset(td); /* PERF_METRICS may have cleared */
		return false;
	}
	*s3 &= TD_SLOTS_MASK;
	return true;
}

static bool probe_clear_trigger(struct td *td, uint32_t sidx, uint32_t midx,
				struct raw_reading *r)
{
	uint64_t s1, s2, s3;

	if (!clear_pass_read(td, sidx, sidx, &s1, &s2))
		return false;
	s1 &= TD_SLOTS_MASK;
	s2 &= TD_SLOTS_MASK;
	if (s1 && s2 < s1) {
		/* Both reads cleared: the categories of s1 + s2 are lost. */
		td_pm_of(td)->pm.clear_trigger = TD_CLEAR_BY_SLOTS;
		note_foreign_reset(td);
		td->snap.base.slots += s1 + s2;
		r->slots = 0;
		r->metrics = 0;
		return true;
	}
	r->slots = s2;
	if (!probe_metrics_then_slots(td, sidx, midx, r, &s3))
		return false;
	if (!r->slots)
		return true;
	if (s3 < r->slots) {
		td_pm_of(td)->pm.clear_trigger = TD_CLEAR_BY_METRICS;
		return true;
	}
	td_pm_of(td)->pm.clear_mode = false; /* counters kept counting: not in effect */
	return true;
}

/* The reading, the trigger read last; false: off the CPUs having them. */
static bool clear_mode_read(struct td *td, uint32_t sidx, uint32_t midx,
			    struct raw_reading *r)
{
	bool ok;

	if (TD_LIKELY(td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_METRICS))
		ok = clear_pass_read(td, sidx, midx, &r->slots, &r->metrics);
	else if (td_pm_of(td)->pm.clear_trigger == TD_CLEAR_BY_SLOTS)
		ok = clear_pass_read(td, midx, sidx, &r->metrics, &r->slots);
	else
		return probe_clear_trigger(td, sidx, midx, r);
	r->slots &= TD_SLOTS_MASK;
	return ok;
}

/*
 * One pass, no seqlock retry: a retry would read (and clear) twice.  A
 * schedule-in between the reads restores exactly what was saved, so the
 * values stay consistent; only losing the counter (index 0) voids them.
 */
static bool clear_read(struct td *td, struct raw_reading *r)
{
	const struct perf_event_mmap_page *spc = td_pm_of(td)->slots_pc;
	const struct perf_event_mmap_page *mpc = td_pm_of(td)->metric_pc;
	uint32_t sidx, midx;

	r->lock = td_load_once(spc->lock);
	td_compiler_barrier();
	sidx = td_load_once(spc->index);
	midx = td_load_once(mpc->index);
	if (!(td_load_once(spc->capabilities) & TD_CAP_USER_RDPMC) || !sidx ||
	    !midx)
		return false;
	r->unsched = td_load_once(spc->time_enabled) -
		     td_load_once(spc->time_running);
	r->count = (uint64_t)td_load_once(spc->offset);
	if (!clear_mode_read(td, sidx, midx, r))
		return false;
	td_pm_of(td)->pm.clear_sel_slots = sidx - 1; /* the fast path's */
	td_pm_of(td)->pm.clear_sel_metrics = midx - 1;
	td_compiler_barrier();
	r->lock_after = td_load_once(spc->lock);
	td_compiler_barrier();
	r->count_after = (uint64_t)td_load_once(spc->offset);
	return td_load_once(spc->index) != 0;
}

/*
 * A schedule-in since the last reading (the page's lock moved) restored
 * the registers only if its schedule-out found SLOTS above 0
 * (intel_update_topdown_event returns on "if (!slots)" before it saves;
 * icl_set_topdown_event_period restores "if (hwc->saved_slots ...)").
 * Our clearing read left both at 0, so a schedule-out before the thread
 * counted a slot saved nothing, and the schedule-in wrote back the values
 * saved at an earlier schedule-out, which an earlier reading already
 * took, or, none saved since, left another context's values.  Either
 * way this reading's registers are not ours.
 * What proves the schedule-out found slots: the slots event's kernel
 * count, the page's offset (perf_event_update_userpage: count -
 * prev_count, which TopDown events never set), grew.  At a schedule-out
 * __icl_update_topdown_event adds "delta - last", SLOTS less the saved
 * SLOTS, only where SLOTS exceeds it: growth means SLOTS was above 0.
 * Where the saved SLOTS are 0 (clear_zero_saved), the converse holds
 * too: SLOTS above 0 at the schedule-out makes the count grow, so a
 * count that did not grow says the schedule-out saved nothing and the
 * registers are another context's (RESTORE_FOREIGN).  Where they may
 * not be 0 (no reset since the last schedule-in judged), a schedule-out
 * whose SLOTS did not exceed them leaves the count as it was: that good
 * restore cannot be told from a bad one, and is flagged.
 * It proves it for one schedule-out only: after a bad restore the next
 * schedule-out saves the wrong values and the count grows.  A switch
 * writes the page at most three times (x86_pmu_del at schedule-out;
 * icl_set_topdown_event_period and x86_pmu_start at schedule-in), lock +
 * 6: more than that may be more than one switch, and nothing proves the
 * first.  A group never seen active has its first start to come, which
 * zeroes both registers ("if (left == x86_pmu.max_period)"): ours.  (A
 * read(2) or a PMI by another also makes the count grow, and zeroes the
 * registers: this mode cannot see those.)
 */
#define TD_CLEAR_ONE_SWITCH_LOCK \
	(2 * (TD_PAGE_WRITES_SCHED_OUT + TD_PAGE_WRITES_SCHED_IN))

enum clear_restore { RESTORE_OURS, RESTORE_UNPROVEN, RESTORE_FOREIGN };

/* What the page's move from (lock0, count0) to (lock1, count1) restored. */
static inline enum clear_restore judge_restore(bool saved_zero, uint32_t lock0,
					       uint64_t count0, uint32_t lock1,
					       uint64_t count1)
{
	if (lock1 - lock0 > TD_CLEAR_ONE_SWITCH_LOCK)
		return RESTORE_UNPROVEN;
	if (count1 > count0)
		return RESTORE_OURS;
	return saved_zero ? RESTORE_FOREIGN : RESTORE_UNPROVEN;
}

/*
 * The schedule-ins this reading's registers may have come through: any
 * before the page was first looked at (since the reference, the page as
 * the last reading left it), and one during the reads (the page moved
 * under them; an abort's retry on another CPU inside the hybrid
 * source's guard), which may have come before the RDPMCs or after, so
 * that a count that did not grow across it proves nothing either way.
 * One proven good moves the reference past it; one not proven flags
 * this reading and stays beyond the reference, judged again at the next
 * reading: if it came after the RDPMCs, right after the clear, it
 * restored what is not ours for that reading to take.  Returns the
 * reference's lock; *foreign: this reading's registers are another
 * context's.
 */
static uint32_t clear_judge_restores(struct td *td, const struct raw_reading *r,
				     bool *foreign)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	enum clear_restore before = RESTORE_OURS;

	if (pm->started && r->lock != td->last_lock)
		before = judge_restore(pm->clear_saved_zero, td->last_lock,
				       pm->clear_count, r->lock, r->count);
	pm->started = true;
	pm->clear_saved_zero = false; /* a schedule-out since may have saved */
	*foreign = before == RESTORE_FOREIGN;
	if (before != RESTORE_OURS)
		td->untrusted++; /* regions spanning the schedule-in */
	pm->clear_count = r->count;
	if (r->lock_after == r->lock)
		return r->lock;
	if (before == RESTORE_OURS &&
	    judge_restore(false, r->lock, r->count, r->lock_after,
			  r->count_after) == RESTORE_OURS) {
		pm->clear_count = r->count_after;
		return r->lock_after;
	}
	if (before == RESTORE_OURS)
		td->untrusted++;
	return r->lock;
}

/*
 * After a reading that judged a schedule-in, zero what the kernel saved,
 * so that the next schedule-in is judged exactly (judge_restore's
 * RESTORE_FOREIGN): PERF_EVENT_IOC_RESET of the group reaches
 * intel_update_topdown_event's reset branch through pmu->read of the
 * active event (_perf_event_reset -> perf_event_read), which zeroes both
 * registers and the saved ones (update_saved_topdown_regs(event, 0, 0,
 * ...)), and _perf_event_reset zeroes the count.  That branch runs only
 * if SLOTS is above 0 when the kernel reads it ("if (!slots) return 0");
 * it is taken that the user-mode instructions from the reading to the
 * syscall counted some (inference: SLOTS counts every slot of every
 * cycle in user mode).  Were it 0, the saved registers would stay, and a
 * good restore not above them would be flagged and its registers
 * dropped (RESTORE_FOREIGN): flagged, never wrong.  The reading was
 * folded whole already; the slots from it to the kernel's reset are
 * lost, as at the policy's resets (region_slow.c reset_due).  The reset
 * is the policy's: counted, paid from its budget, none under
 * TD_RESET_NEVER.  The same holds if the group was switched out between
 * the reading and the ioctl (_perf_event_reset then zeroes the kernel's
 * count only, the saved registers come back): flagged, never wrong.
 * The page's lock before the ioctl plus the reset's own
 * update (perf_event_update_userpage) is the new reference: a switch
 * between the two shows as one more, judged at the next reading.
 */
static void clear_zero_saved(struct td *td)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	uint32_t lock;

	if (td->policy.kind == TD_RESET_NEVER ||
	    (td->policy.kind != TD_RESET_ALWAYS &&
	     !td_policy_budget_allows(&td->policy, td->snap.base.slots, 0,
				      TD_POLICY_DOMAIN)))
		return;
	lock = td_load_once(td_pm_of(td)->slots_pc->lock);
	td_compiler_barrier();
	if (td_group_reset(td) < 0)
		return;
	td_policy_charge(&td->policy);
	td->resets++;
	td->last_lock = lock + 2;
	pm->clear_count = 0;
	pm->clear_saved_zero = true;
}

static int clear_sample(struct td *td, struct td_sample *s)
{
	struct raw_reading r;
	uint32_t lock;
	bool judged, foreign = false;

	if (TD_UNLIKELY(!clear_read(td, &r))) {
		unreadable_sample(td, s);
		return 0;
	}
	if (TD_UNLIKELY(!td_pm_of(td)->pm.clear_mode)) { /* the probe found no clearing */
		cumulative_sample(td, &r, s);
		return 0;
	}
	lock = r.lock;
	/* a group never seen active has its first start's zeroes to come */
	judged = (r.lock != td->last_lock || r.lock_after != r.lock) &&
		 td_pm_of(td)->pm.started;
	if (TD_UNLIKELY(r.lock != td->last_lock || r.lock_after != r.lock))
		lock = clear_judge_restores(td, &r, &foreign);
	if (TD_UNLIKELY(foreign)) {
		/* not ours: dropped, as rebase_foreign_registers does */
		td_pm_of(td)->pm.rebases++;
		td->last_lock = lock;
	} else {
		td_counts_add(&td->snap.base, r.slots, r.metrics);
		td->snap.qerr_base += r.slots + restore_error(td, lock, r.slots);
	}
	if (TD_UNLIKELY(judged))
		clear_zero_saved(td);
	s->c = td->snap.base;
	s->raw_slots = 0;
	s->unsched = r.unsched;
	s->valid = true;
	return 0;
}

/*
 * read(2) of the group: {nr, time_enabled, time_running, value[nr]}, the
 * leader's value first.
 *
 * The kernel's counts and their 8-bit error (arch/x86/events/intel/
 * core.c).  Each update of an active group (intel_update_topdown_event,
 * reached by a schedule-out through x86_pmu_stop, by read(2) through
 * intel_pmu_read_event, by a PMI) adds per category
 * __icl_update_topdown_event's "delta - last", where delta is
 * icl_get_metrics_event_value of SLOTS and PERF_METRICS now
 * (mul_u64_u32_div(slots, field, 0xff)) and last the same of the values
 * saved at the last schedule-out (0 after a zeroing), a drop being
 * discarded ("if (delta > last)").  A zeroing (the update of a read(2) or
 * PMI with SLOTS above 0, IOC_RESET of an active group) starts the
 * registers from 0; a schedule-out saves them (update_saved_topdown_regs)
 * and the schedule-in writes them back (icl_set_topdown_event_period).
 * From one zeroing to the next, SLOTS counts on, so an update's fields
 * are 8-bit fractions of every slot since that zeroing, S, not of the
 * slots since the last update: its delta is within S/255 + 1 slots of
 * the true count since the zeroing, its last likewise of the restored
 * state (the restore re-quantises: up to S/255 more), and a discarded
 * drop is no larger than those two together.  Each update thus adds to
 * the kernel's count the true increment within 2 x (S/255 + 1), the
 * first one after a zeroing within S/255 + 1.  Between two of our
 * readings come at most one update per schedule-out and the reading's
 * own: with R schedule-ins seen since (the page's lock, td_pm_restores),
 * the error the reading adds is within (S + 255)(1 + 2R) in 1/255-slot
 * units, S counted from the last zeroing we know of (read_epoch_start),
 * not from our last reading: a read(2) of a switched-out group zeroes
 * nothing (perf_event_read, kernel/events/core.c, calls pmu->read only
 * for an active event), so the updates after it are fractions of the
 * slots before it too.  Errors of the updates before a region's begin
 * are in both of its readings and cancel.
 */

/* The slots event's page right before a read(2) (read_page). */
struct td_read_page {
	uint32_t lock;
	uint32_t index;
	uint64_t caps;
	uint64_t count; /* offset: the kernel's slots count at its last write */
	bool ran;
};

/*
 * Did our read(2) leave SLOTS, PERF_METRICS and the saved ones as they
 * were?  Only if the group was off the PMU throughout: the page's lock
 * unchanged and even around the read, and the page written last by a
 * schedule-out or for a group that could not go on.  Where the page
 * offers RDPMC its index says so (x86_pmu_event_idx: 0 for a stopped
 * event; x86_pmu_del writes the page after x86_pmu_stop).  Where it does
 * not (the index is always 0), the slots count the read returned is
 * still the page's offset (the kernel's count at the page's last write,
 * perf_event_update_userpage; TopDown events never set prev_count): no
 * update folded a slot since, whereas on an active group the user-mode
 * instructions from the schedule-in to the syscall would have counted
 * some, which the read's update folds (inference: SLOTS counts every
 * slot of every cycle in user mode).  Otherwise the read zeroed them
 * (or, the lock having moved during it, may have).
 */
static inline bool read_left_registers(const struct td_read_page *pg,
				       uint32_t lock, uint64_t kcount)
{
	if (lock != pg->lock || (lock & 1))
		return false;
	if (pg->caps & TD_CAP_USER_RDPMC)
		return pg->index == 0;
	return kcount == pg->count;
}

/*
 * After a read(2), the kernel's saved registers: if the read zeroed
 * nothing and the schedule-out before it saved slots since the last
 * zeroing (SLOTS is then above 0: intel_update_topdown_event saves
 * unless "!slots"), the next schedule-in writes them back and the
 * registers carry on as ours, whatever count the page shows.  If the
 * read zeroed them, a schedule-out before the thread counts a slot saves
 * nothing (rebase_foreign_read).  The start of the registers' current
 * run from 0 (read_epoch_start) moves only where the read is known to
 * have zeroed them.
 */
static void note_read_effect(struct td *td, bool left, bool settled,
			     uint64_t kcount)
{
	struct td_pm *pm = &td_pm_of(td)->pm;

	pm->read_kept_saved = left && kcount > pm->read_epoch_start;
	if (!left && settled) { /* and what the restores re-quantised */
		pm->read_epoch_start = kcount;
		pm->read_restores = 0;
	}
}

/*
 * read(2) zeroes both registers (intel_update_topdown_event's reset
 * branch, saved_slots 0 too), so a schedule-out before the thread counts
 * a slot saves nothing and the schedule-in restores nothing
 * (registers_not_ours): the kernel then counts another context's values
 * as ours at its next update.  The page shows it as on the RDPMC path:
 * its lock moved since our last reading and its offset, the kernel's
 * count at that schedule-in, is still the count our last read(2)
 * returned.  The counts are then re-based so that this reading counts as
 * the last one did: what the thread ran since the schedule-in is lost,
 * and regions spanning it are flagged.  Not where our last read(2) found
 * the group switched out with saved registers and left them
 * (read_kept_saved): the schedule-in wrote those back.
 */
static void rebase_foreign_read(struct td *td, struct td_sample *s)
{
	const struct td_counts *last = &td_pm_of(td)->pm.last_read;

	td->snap.base.slots -= s->c.slots - last->slots;
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		td->snap.base.cat[i] -= s->c.cat[i] - last->cat[i];
	s->c = *last;
	td_pm_of(td)->pm.rebases++;
	td->untrusted++;
}

/* The slots page before a read(2), under one settled lock. */
static bool read_page(const struct perf_event_mmap_page *pc,
		      struct td_read_page *pg)
{
	pg->lock = td_load_once(pc->lock);
	td_compiler_barrier();
	pg->count = (uint64_t)td_load_once(pc->offset);
	pg->index = td_load_once(pc->index);
	pg->caps = td_load_once(pc->capabilities);
	pg->ran = td_load_once(pc->time_running) != 0;
	td_compiler_barrier();
	return td_load_once(pc->lock) == pg->lock;
}

/*
 * The 8-bit error this reading adds (see above), in 1/255-slot units:
 * none if the kernel's counts are those of our last read(2) (no update
 * folded anything: an E-core stint of a hybrid part, a group kept off
 * the PMU), the schedule-ins seen then left for the next reading that
 * finds counts moved.
 */
static void charge_read_error(struct td *td, const uint64_t *kcounts,
			      unsigned nr, uint32_t lock)
{
	struct td_pm *pm = &td_pm_of(td)->pm;
	uint64_t scale;

	pm->read_restores += td_pm_restores(td->last_lock, lock);
	td->last_lock = lock;
	if (kcounts[0] == td_pm_of(td)->last_raw_slots &&
	    !memcmp(&kcounts[1], pm->read_last, nr * sizeof(kcounts[0])))
		return;
	memcpy(pm->read_last, &kcounts[1], nr * sizeof(kcounts[0]));
	scale = kcounts[0] - pm->read_epoch_start + 255;
	td->snap.qerr_base += scale + 2 * (uint64_t)pm->read_restores * scale;
	pm->read_restores = 0;
}

static int read_sample(struct td *td, struct td_sample *s)
{
	const struct perf_event_mmap_page *pc = td_pm_of(td)->slots_pc;
	struct td_pm *pm = &td_pm_of(td)->pm;
	uint64_t buf[3 + 1 + TD_NR_METRICS];
	struct td_read_page pg;
	uint32_t lock;
	size_t len = (3 + 1 + pm->pmu.nr_metrics) * sizeof(uint64_t);
	bool not_ours, settled, left;
	int n;

	settled = read_page(pc, &pg);
	not_ours = settled && pg.lock != td->last_lock &&
		   pg.count == td_pm_of(td)->last_raw_slots &&
		   pm->started && !pm->read_kept_saved;
	n = td_sys_read(td->leader_fd, buf, len);
	if (n != (int)len || buf[0] != 1 + pm->pmu.nr_metrics)
		return n < 0 ? n : -EIO;
	td_compiler_barrier();
	lock = td_load_once(pc->lock);
	pm->started |= pg.ran; /* not its first start from now */
	/* Someone's IOC_RESET zeroed the kernel counts: continue from base. */
	if (TD_UNLIKELY(buf[3] < td_pm_of(td)->last_raw_slots)) {
		td->snap.base = pm->last_read;
		td_pm_of(td)->last_raw_slots = 0;
		pm->read_epoch_start = 0;
		note_foreign_reset(td);
		not_ours = false;
	}
	s->c = td->snap.base;
	s->c.slots += buf[3];
	for (unsigned i = 0; i < pm->pmu.nr_metrics; i++)
		s->c.cat[i] += buf[4 + i] * 255;
	if (TD_UNLIKELY(not_ours))
		rebase_foreign_read(td, s);
	charge_read_error(td, &buf[3], pm->pmu.nr_metrics, lock);
	left = settled && read_left_registers(&pg, lock, buf[3]);
	note_read_effect(td, left, settled && lock == pg.lock, buf[3]);
	td_pm_of(td)->last_raw_slots = buf[3];
	pm->last_read = s->c;
	s->raw_slots = 0;
	s->unsched = buf[1] - buf[2];
	s->valid = true;
	return 0;
}

/* The PERF_METRICS source's reading: metrics-clear, RDPMC or read(2). */
static int sample_by_path(struct td *td, struct td_sample *s)
{
	td_pm_of(td)->pm.saved.used = false;
	td_pm_fold_pending(td); /* a fast begin's reading, kept raw */
	if (TD_UNLIKELY(td_pm_of(td)->pm.clear_mode))
		return clear_sample(td, s);
	if (TD_LIKELY(td->path == TD_PATH_RDPMC))
		return rdpmc_sample(td, s);
	return read_sample(td, s);
}

int td_pm_sample(struct td *td, struct td_sample *s)
{
	int err = sample_by_path(td, s);

	s->raw_at_last = td_pm_of(td)->last_raw_slots;
	td_pm_uop_sample(td, s);
	return err;
}


/*
 * Fold the reading s into the user-space counters and zero the hardware.
 * Only after the kernel has reset are the counters switched over, so a
 * failed ioctl leaves the state consistent (and no reset counted).
 */
static int td_fold_and_reset(struct td *td, const struct td_sample *s)
{
	const struct perf_event_mmap_page *pc = td_pm_of(td)->slots_pc;
	struct td_snap before = td->snap;
	int err;

	td_pm_of(td)->pm.reset_lock = td_load_once(pc->lock);
	td_compiler_barrier();
	td_pm_of(td)->pm.reset_inactive = !td_load_once(pc->index);
	td_compiler_barrier();
	err = td_group_reset(td);
	if (err < 0)
		return err;
	td_pm_of(td)->pm.saved_kept = false;
	td->snap.base = s->c;
	td->snap.qerr_base += s->raw_slots;
	td_pm_of(td)->last_raw_slots = 0;
	td_pm_of(td)->last_pair_slots = 0;
	td_pm_of(td)->last_raw_metrics = 0;
	td_pm_of(td)->pm.kcount_ok = true; /* IOC_RESET zeroed the kernel's counts too */
	/*
	 * IOC_RESET updates the page itself once (_perf_event_reset):
	 * not a restore.  Any other update since the folded reading is
	 * left for the next reading to see (registers_not_ours).
	 */
	td->last_lock += 2;
	td_pm_of(td)->pm.after_reset = true;
	td->resets++;
	td_snap_publish(td, &before);
	return 0;
}

/*
 * The reading right after our reset found a schedule-in that restored
 * nothing (rebase_foreign_registers): whether the reset zeroed the
 * registers before it or found the group switched out, they do not hold
 * a small count now.  The reset is not counted (and the policy refunds
 * it), so that the next begin that wants one gets it.
 */
static int reset_came_to_nothing(struct td *td)
{
	struct td_snap before = td->snap;

	td->resets--;
	td_snap_publish(td, &before);
	return 0;
}

/*
 * The reading right after our reset took cpu_core's counts by read(2)
 * (ecore_p_sample: the group switched out, the thread on an E-core) or
 * could not read at all (the page's index 0: switched out by the
 * scheduler): nothing confirms the reset zeroed the registers.  _perf_event_reset
 * (kernel/events/core.c) reaches the hardware only through
 * perf_event_read -> pmu->read of an ACTIVE event; that is the only way
 * to intel_update_topdown_event's reset branch (arch/x86/events/intel/
 * core.c), the one that zeroes the saved registers too
 * (update_saved_topdown_regs(event, 0, 0, ...)).  Of a switched-out
 * group it zeroes the kernel's count only: saved_slots and saved_metric
 * stay, and icl_set_topdown_event_period writes them back at the next
 * schedule-in, so the registers carry on from the folded reading as if
 * no reset had been made.  The reset is then undone (base and the
 * readings' references as before the fold, not counted, refunded by the
 * policy): right when the page shows the group switched out right
 * before the ioctl and nothing but the reset's own update
 * (perf_event_update_userpage) since, up to the read.  Otherwise a
 * schedule-in or -out came between and whether the hardware was zeroed
 * is unknown: undone as well, and the reading is not trusted (a region
 * begun on it is flagged, and regions open across it).  Had the
 * reset zeroed them after all, the next RDPMC finds SLOTS below the
 * folded reading and flags it as any foreign reset (fold_foreign_reset).
 * Either way the kernel's count (zeroed) pairs with the base no more.
 * A read(2) reading s keeps its values: it paired the kernel's count
 * since the reset with the folded reading, which is what the registers
 * restored plus that count are.  (Treating the reset as done instead
 * would count the restored registers a second time, unflagged.)
 */
static int reset_missed_saved(struct td *td, const struct td_snap *saved,
			      const struct td_counts *folded_base,
			      uint64_t folded_qerr, const struct td_sample *fold,
			      struct td_sample *s)
{
	struct td_pm_handle *h = td_pm_of(td);
	uint32_t lock = td_load_once(h->slots_pc->lock);
	bool clean = h->pm.reset_inactive && lock == h->pm.reset_lock + 2 &&
		     !(lock & 1);
	struct td_snap now = td->snap;

	td->snap.base = saved->base;
	td->snap.base.slots += now.base.slots - folded_base->slots;
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		td->snap.base.cat[i] += now.base.cat[i] - folded_base->cat[i];
	td->snap.qerr_base = saved->qerr_base + (now.qerr_base - folded_qerr);
	h->pm.kcount_ok = false;
	h->pm.after_reset = false;
	h->pm.saved_kept = clean && fold->raw_slots;
	h->last_raw_slots = fold->raw_slots;
	h->last_pair_slots = fold->raw_slots;
	h->last_raw_metrics = fold->raw;
	td->resets--;
	td_snap_publish(td, &now);
	if (!clean) {
		td->untrusted++; /* regions open across it */
		unreadable_sample(td, s);
	}
	return 0;
}

/*
 * The source's reset: fold the reading s and zero the hardware
 * (PERF_EVENT_IOC_RESET), then read again into s.  Returns 1 when the
 * reset stands, 0 when none was made or it was undone, a negative errno
 * when the ioctl failed.  None is made in metrics-clear mode (it needs
 * none for the error; its resets after a schedule-in are its readings'
 * own, clear_zero_saved) nor at a hybrid reading that found cpu_core's group inactive
 * (pm.saved.used: s is the last reading): there IOC_RESET would zero
 * only the kernel's counts,
 * which that reading pairs with the folded base, not the saved registers
 * the group's next schedule-in restores (_perf_event_reset reaches the
 * hardware only through pmu->read of an active event), and the reading
 * carries no raw SLOTS whose 8-bit error a reset would bound.
 *
 * _perf_event_reset (kernel/events/core.c) zeroes the hardware only
 * through pmu->read of an active event: if the group was switched out
 * between our reading and the ioctl, nothing was zeroed and the
 * schedule-in restored the old values.  SLOTS not below the fold reading
 * says so: the fold is undone, or those slots would be counted twice.
 * What the second reading itself added to the base stays: on hybrid
 * parts, the E-cores' counts of the stint that kept the group switched
 * out.
 */
int td_pm_reset(struct td *td, struct td_sample *s)
{
	struct td_snap saved = td->snap;
	uint64_t fold_slots = s->raw_slots, fold_metrics = s->raw;
	struct td_sample fold = *s;
	struct td_counts folded_base;
	uint64_t rebases, folded_qerr;
	int err;

	if (td_pm_of(td)->pm.clear_mode || td_pm_of(td)->pm.saved.used)
		return 0;
	err = td_fold_and_reset(td, s);
	if (err < 0)
		return err;
	folded_base = td->snap.base;
	folded_qerr = td->snap.qerr_base;
	rebases = td_pm_of(td)->pm.rebases;
	td_take_sample(td, s);
	if (td_pm_of(td)->pm.rebases != rebases)
		return reset_came_to_nothing(td);
	if (!s->valid || td_pm_of(td)->pm.saved.used)
		return reset_missed_saved(td, &saved, &folded_base, folded_qerr,
					  &fold, s);
	if (s->raw_slots < fold_slots)
		return 1;
	struct td_snap folded = td->snap;

	td->snap.base = saved.base;
	td->snap.base.slots += folded.base.slots - folded_base.slots;
	for (unsigned i = 0; i < TD_NR_COUNTS; i++)
		td->snap.base.cat[i] += folded.base.cat[i] - folded_base.cat[i];
	td->snap.qerr_base = saved.qerr_base;
	/* but the kernel's counts were zeroed: they pair no more */
	td_pm_of(td)->pm.kcount_ok = false;
	td_pm_of(td)->last_raw_slots = fold_slots;
	td_pm_of(td)->last_pair_slots = fold_slots;
	td_pm_of(td)->last_raw_metrics = fold_metrics;
	td->resets--;
	td_snap_publish(td, &folded);
	td_take_sample(td, s);
	return 0;
}
