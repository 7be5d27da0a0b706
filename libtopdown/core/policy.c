/* SPDX-License-Identifier: MIT */
/*
 * When the library resets the counters (README.md, "Precision and resets").
 *
 * Error side.  A region read at S_b slots after the last reset and
 * lasting R slots ends at about S_b + R, so the bound of decode.c predicts
 * an error of k (2 S_b + R) / (255 R), k = 2 when level 2 is reported
 * (derived categories), 1 otherwise.  A reset is wanted when that exceeds
 * err_target for the length the region is expected to have: its last
 * length, but at most the accuracy domain D (TD_POLICY_DOMAIN, 1e6
 * slots), and D for a region never ended.  So every region of at least D
 * slots meets the target whatever its history: with the defaults (1 pp,
 * k = 2) a reset is wanted once S_b > D (2.55 / 2 - 1) / 2 = 137,500.
 *
 * Budget side.  Resets may cost at most reset_budget B of the measured
 * slots, by the cost model (reset_cost_slots C each).  Measured slots are
 * those during which at least one region of the handle is open, counted
 * as they accrue (open regions included, nested ones once), so an inner
 * region's reset is paid by the outer region it lies in.  A wanted reset
 * is made when the credit (B x measured - C x resets so far, capped at C
 * so that a quiet stretch cannot pay for a burst) plus what the coming
 * region will earn (B x its expected length: its last one, or D for a
 * region never ended) covers C.
 *
 * The arithmetic with the defaults (B = 5%, C = 40,000): a region never
 * ended earns B x D = 50,000 >= C, so the first region of a handle, or the
 * first call of any region after any run, always gets the reset it
 * needs.  A region that ended before earns B x R: one of R >= C / B =
 * 800,000 slots pays for its own reset; shorter ones wait for credit,
 * one reset per 800,000 measured slots.  Over a series of regions of one
 * object the cost is then at most B x (measured slots) once its last
 * region has ended: the one advance taken for a first call of unknown
 * length (50,000, at most C of it spent) is repaid before the next reset,
 * which needs credit >= C - B x R again.  A series of 2e6 slots of
 * 1,000-slot regions after a long run gets 2 resets (80,000, 4%).  The
 * one pattern that can exceed the budget: many distinct region objects,
 * each begun once and shorter than D (each asks for D's advance).  Its
 * cost stays below B x measured + B x D: one reset per 800,000 measured
 * slots, plus 50,000 slots once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TD_DEFAULT_ERR_TARGET  0.01
#define TD_DEFAULT_BUDGET      0.05
#define TD_DEFAULT_RESET_COST  40000u /* ~2 us of a 6-wide core at 3 GHz */

/* TOPDOWN_RESET, if set, overrides the option; a bad value is an error. */
static int policy_from_env(enum td_reset_policy *kind)
{
	static const char *const names[] = { "auto", "always", "never" };
	int i = -1;

	if (td_env_choice("TOPDOWN_RESET", names, 3, &i) < 0) {
		td_set_bad_setting("TOPDOWN_RESET", getenv("TOPDOWN_RESET"),
				   names, 3);
		return -EINVAL;
	}
	if (i >= 0)
		*kind = (enum td_reset_policy)(TD_RESET_AUTO + i);
	return 0;
}

int td_policy_init(struct td_policy *p, const struct td_options *o)
{
	double target = o->err_target ? o->err_target : TD_DEFAULT_ERR_TARGET;
	double budget = o->reset_budget ? o->reset_budget : TD_DEFAULT_BUDGET;

	if (o->reset_policy > TD_RESET_NEVER || !(target > 0 && target < 1) ||
	    !(budget > 0 && budget <= 1))
		return -EINVAL;
	p->kind = o->reset_policy == TD_RESET_DEFAULT ? TD_RESET_AUTO
						      : o->reset_policy;
	if (policy_from_env(&p->kind) < 0)
		return -EINVAL;
	p->err_x255 = target * 255;
	p->budget = budget;
	p->cost = o->reset_cost_slots ? o->reset_cost_slots
				      : TD_DEFAULT_RESET_COST;
	return 0;
}

/*
 * k (2 S + R) > 255 target R  <=>  S > R (255 target / k - 1) / 2, with
 * k = 2 when level 2 is reported (derived categories), else 1.  Computed
 * once here; the hot path multiplies.
 */
void td_policy_setup(struct td_policy *p, bool level2, bool track)
{
	double k = level2 ? 2 : 1;
	double factor = (p->err_x255 / k - 1) / 2;

	p->k_q16 = factor > 0 ? (uint64_t)(factor * 65536) : 0;
	p->track = track;
	p->measured_less = p->measured_seen = 0;
	p->open_less1 = -1;
	p->open_since = 0;
	p->credit = 0;
	p->budget_at = (uint64_t)((double)p->cost / p->budget);
	if (p->kind == TD_RESET_NEVER) /* never reached */
		p->budget_at = UINT64_MAX;
}

/*
 * The measured slots up to folded SLOTS now: the stretches closed, plus
 * the one still open.
 */
static uint64_t measured_until(const struct td_policy *p, uint64_t now)
{
	if (p->open_less1 < 0)
		return p->measured_less;
	if (now > p->open_since) /* measured_less + open_since + (now - it) */
		return p->measured_less + now;
	return p->measured_less + p->open_since;
}

/* budget x the slots measured since the last update, capped. */
static void credit_update(struct td_policy *p, uint64_t now)
{
	uint64_t measured = measured_until(p, now);

	if (measured <= p->measured_seen)
		return;
	p->credit += p->budget * (double)(measured - p->measured_seen);
	p->measured_seen = measured;
	if (p->credit > (double)p->cost)
		p->credit = (double)p->cost;
}

/* The raw SLOTS the budget needs before credit can cover a reset. */
static uint64_t budget_threshold(const struct td_policy *p, uint64_t now)
{
	double missing = (double)p->cost - p->credit;

	return missing <= 0 ? now : now + (uint64_t)(missing / p->budget);
}

/*
 * Slow path, auto policy, a region never ended: is a reset due at a begin
 * that read raw_slots since the last reset (folded SLOTS now)?  It is
 * expected to last the domain, on both sides.
 */
bool td_policy_reset_due(struct td_policy *p, uint64_t raw_slots,
			 uint64_t now)
{
	if (raw_slots <= td_policy_by_err(p, TD_POLICY_DOMAIN))
		return false;
	return td_policy_budget_allows(p, now, raw_slots, TD_POLICY_DOMAIN);
}

/*
 * Can the budget pay for a reset now (folded SLOTS now, raw_slots since
 * the last reset), for a region expected to last len slots?  When not,
 * budget_at moves to where it might.
 */
bool td_policy_budget_allows(struct td_policy *p, uint64_t now,
			     uint64_t raw_slots, uint64_t len)
{
	credit_update(p, now);
	if (p->credit + p->budget * (double)len >= (double)p->cost)
		return true;
	p->budget_at = budget_threshold(p, raw_slots);
	return false;
}

/* A reset was made: pay for it (SLOTS restarts from 0). */
void td_policy_charge(struct td_policy *p)
{
	p->credit -= (double)p->cost;
	p->budget_at = budget_threshold(p, 0);
}

/* A reset turned out not to have happened (the group was switched out). */
void td_policy_refund(struct td_policy *p)
{
	p->credit += (double)p->cost;
	p->budget_at = 0;
}

/*
 * A reading added slots to the folded base that raw SLOTS does not hold
 * (a reset by someone else folded: the PMI handler's or a read(2)'s
 * zeroing, intel_pmu_update_topdown_event -> MSR_CORE_PERF_FIXED_CTR3
 * and MSR_PERF_METRICS written 0 in arch/x86/events/intel/core.c; the
 * E-cores' counts of a hybrid part): the measured slots, which the
 * credit follows, may have grown by them too, so budget_at, a raw SLOTS
 * threshold, comes down as much.  Only down: the fast begin stays on
 * the safe side, the slow path sets it again where the budget refuses.
 */
void td_policy_folded(struct td_policy *p, uint64_t slots)
{
	if (p->kind == TD_RESET_NEVER) /* never reached: keep it so */
		return;
	p->budget_at = p->budget_at > slots ? p->budget_at - slots : 0;
}
