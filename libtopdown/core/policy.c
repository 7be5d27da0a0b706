/* SPDX-License-Identifier: MIT */
/*
 * When the library resets the counters (README.md, "Precision and resets").
 *
 * Error side.  A region read at S_b slots after the last reset and
 * lasting R slots ends at about S_b + R, so the bound of decode.c predicts
 * an error of k (2 S_b + R) / (255 R), k = 2 when level 2 is reported
 * (derived categories), 1 otherwise.  A reset is wanted when that exceeds
 * err_target, R being the region's previous length (or the handle's last
 * region's, for a region never ended).
 *
 * Budget side, which wins.  Resets may cost at most reset_budget of the
 * measured slots, the slots of the regions ended, by the cost model
 * (reset_cost_slots each).  A wanted reset is made only when the credit
 * (budget x measured slots - cost x resets so far, at most one reset's
 * worth) plus what the coming region will earn (budget x R) covers it:
 * charged against the region it serves, a reset is affordable for a
 * region of at least reset_cost / reset_budget slots (800,000 by
 * default), and shorter regions earn one in turn.  A region whose reset
 * the budget refused keeps its honest err: large when it is short next to
 * the slots since the last reset.  In particular the first region of a new
 * handle (no measured slots, length unknown) never resets.
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

	if (td_env_choice("TOPDOWN_RESET", names, 3, &i) < 0)
		return -EINVAL;
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
void td_policy_setup(struct td_policy *p, bool level2)
{
	double k = level2 ? 2 : 1;
	double factor = (p->err_x255 / k - 1) / 2;

	p->k_q16 = factor > 0 ? (uint64_t)(factor * 65536) : 0;
	p->measured = p->measured_q16 = p->measured_seen = 0;
	p->credit = 0;
	p->recent_len = 0;
	p->budget_at = (uint64_t)((double)p->cost / p->budget);
	if (p->kind == TD_RESET_NEVER) /* never reached */
		p->budget_at = UINT64_MAX;
}

/* budget x the slots measured since the last update, capped. */
static void credit_update(struct td_policy *p)
{
	uint64_t measured = p->measured + (p->measured_q16 << 16);

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
 * that read raw_slots since the last reset?  Its length is taken as the
 * handle's last region's (none: a short one).  When the error side wants
 * a reset the budget cannot pay for, budget_at moves to where it might.
 */
bool td_policy_reset_due(struct td_policy *p, uint64_t raw_slots)
{
	uint64_t expect = p->recent_len;

	if (raw_slots <= td_policy_by_err(p, expect ? expect : TD_SHORT_SLOTS))
		return false;
	return td_policy_budget_allows(p, raw_slots, expect);
}

/*
 * Can the budget pay for a reset now, for a region expected to last len
 * slots?  When not, budget_at moves to where it might.
 */
bool td_policy_budget_allows(struct td_policy *p, uint64_t raw_slots,
			     uint64_t len)
{
	credit_update(p);
	if (p->credit + p->budget * (double)len >= (double)p->cost)
		return true;
	p->budget_at = budget_threshold(p, raw_slots);
	return false;
}

/* A reset was made: pay for it (SLOTS restarts from 0). */
void td_policy_charge(struct td_policy *p)
{
	credit_update(p);
	p->credit -= (double)p->cost;
	p->budget_at = budget_threshold(p, 0);
}

/* A reset turned out not to have happened (the group was switched out). */
void td_policy_refund(struct td_policy *p)
{
	p->credit += (double)p->cost;
	p->budget_at = 0;
}
