/* SPDX-License-Identifier: MIT */
/*
 * Taking a reading and turning it into monotonic counts (struct td_counts).
 *
 * RDPMC path, following the kernel's semantics (research note sections 1-4):
 * - SLOTS and PERF_METRICS are read raw.  The user page's offset and
 *   pmc_width are meaningless for them (the kernel never sets prev_count
 *   for TopDown events; sign-extending at 48 bits would corrupt bytes 6-7),
 *   so neither is applied.  The page serves only to prove validity:
 *   cap_user_rdpmc, index != 0, and lock unchanged around the reads.
 * - A context switch saves and restores both registers: raw values carry on.
 * - A read(2) on the group or a PMI zeroes both registers without touching
 *   the page's lock (inference in the note), so the only sign of such a
 *   reset is SLOTS going backwards.  When that is seen the last reading is
 *   folded as if the reset had come right after it, the event is counted,
 *   and regions spanning it are flagged.  A foreign reset followed by more
 *   slots than were seen before it cannot be told from normal counting.
 *
 * read(2) path: the kernel returns per-category slot counts it accumulated
 * itself (slots x field / 255 per read interval) and zeroes the hardware on
 * each read, so counts are monotonic and need no folding.
 */
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "barrier.h"
#include "internal.h"

/* cap_user_rdpmc is bit 2 of perf_event_mmap_page.capabilities. */
#define TD_CAP_USER_RDPMC (UINT64_C(1) << 2)

static inline void add_metric_slots(struct td_counts *c, uint64_t slots,
				    uint64_t metrics)
{
	for (unsigned i = 0; i < TD_NR_METRICS; i++)
		c->cat[i] += ((metrics >> (8 * i)) & 0xff) * slots;
	c->slots += slots;
}

struct raw_reading {
	uint64_t slots;
	uint64_t metrics;
	uint64_t unsched;
};

/*
 * Hybrid parts: RDPMC only on a P-core, inside an rseq critical section
 * (hybrid.c).  An abort (preempted or migrated mid-section) retries; an
 * E-core makes the reading invalid, which flags the region.
 */
static bool hybrid_rdpmc(const struct td *td, uint32_t sidx, uint32_t midx,
			 struct raw_reading *r)
{
#if TD_HAVE_RSEQ_GUARD
	enum td_guard g;

	do
		g = td_rdpmc_guarded(td->rseq, td->pcores, td->nr_cpus,
				     sidx - 1, midx - 1, &r->slots,
				     &r->metrics);
	while (g == TD_GUARD_ABORTED);
	return g == TD_GUARD_OK;
#else
	(void)td, (void)sidx, (void)midx, (void)r;
	return false;
#endif
}

/*
 * The seqlock read of linux/perf_event.h's UAPI comment, reduced to what
 * TopDown needs.  Only the slots page's lock is checked: both pages are
 * rewritten together when the group is scheduled in (inference: the kernel
 * updates every member's page from the same schedule-in).
 */
static inline bool rdpmc_read(const struct td *td, struct raw_reading *r)
{
	const struct perf_event_mmap_page *spc = td->slots_pc;
	const struct perf_event_mmap_page *mpc = td->metric_pc;
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
		if (TD_UNLIKELY(td->pcores)) {
			if (!hybrid_rdpmc(td, sidx, midx, r))
				return false;
		} else {
			r->slots = td_rdpmc(sidx - 1);
			r->metrics = td_rdpmc(midx - 1);
		}
		r->slots &= TD_SLOTS_MASK;
		td_compiler_barrier();
	} while (td_load_once(spc->lock) != seq);
	return true;
}

/* SLOTS went backwards: someone else zeroed the registers. */
static void fold_foreign_reset(struct td *td)
{
	add_metric_slots(&td->base, td->last_raw_slots, td->last_raw_metrics);
	td->qerr_base += td->last_raw_slots;
	td->foreign_resets++;
}

static int rdpmc_sample(struct td *td, struct td_sample *s)
{
	struct raw_reading r;

	if (TD_UNLIKELY(!rdpmc_read(td, &r))) {
		td->unreadable++;
		s->valid = false;
		s->c = td->base;
		s->raw_slots = 0;
		s->unsched = 0;
		return 0;
	}
	if (TD_UNLIKELY(r.slots < td->last_raw_slots))
		fold_foreign_reset(td);
	td->last_raw_slots = r.slots;
	td->last_raw_metrics = r.metrics;
	s->c = td->base;
	add_metric_slots(&s->c, r.slots, r.metrics);
	s->raw_slots = r.slots;
	s->unsched = r.unsched;
	s->valid = true;
	return 0;
}

/*
 * read(2) of the group: {nr, time_enabled, time_running, value[nr]}, the
 * leader's value first.  Each interval's category count carries up to
 * slots/255 + 1 slots of quantisation (the kernel's integer
 * mul_u64_u32_div), added to qerr_base in 1/255-slot units.
 */
static int read_sample(struct td *td, struct td_sample *s)
{
	uint64_t buf[3 + 1 + TD_NR_METRICS];
	size_t len = (3 + 1 + td->pmu.nr_metrics) * sizeof(uint64_t);
	int n = td_sys_read(td->leader_fd, buf, len);

	if (n != (int)len || buf[0] != 1 + td->pmu.nr_metrics)
		return n < 0 ? n : -EIO;
	memset(&s->c, 0, sizeof(s->c));
	s->c.slots = buf[3];
	for (unsigned i = 0; i < td->pmu.nr_metrics; i++)
		s->c.cat[i] = buf[4 + i] * 255;
	td->qerr_base += (s->c.slots - td->last_raw_slots) + 255;
	td->last_raw_slots = s->c.slots;
	s->raw_slots = 0;
	s->unsched = buf[1] - buf[2];
	s->valid = true;
	return 0;
}

int td_take_sample(struct td *td, struct td_sample *s)
{
	int err = TD_LIKELY(td->path == TD_PATH_RDPMC) ? rdpmc_sample(td, s)
						       : read_sample(td, s);

	s->qerr_base = td->qerr_base;
	return err;
}

/*
 * Fold the reading s into the user-space counters and zero the hardware.
 * Only after the kernel has reset are the counters switched over, so a
 * failed ioctl leaves the state consistent (and no reset counted).
 */
int td_fold_and_reset(struct td *td, const struct td_sample *s)
{
	int err = td_group_reset(td);

	if (err < 0)
		return err;
	td->base = s->c;
	td->qerr_base += s->raw_slots;
	td->last_raw_slots = 0;
	td->last_raw_metrics = 0;
	td->resets++;
	return 0;
}
