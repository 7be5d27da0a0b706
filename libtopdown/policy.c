/* SPDX-License-Identifier: MIT */
/*
 * When the library resets the counters (see "Resets" in topdown.h).
 *
 * A region read at S_b slots after the last reset and lasting R slots ends
 * at about S_b + R, so the bound of decode.c predicts an error of
 * k (2 S_b + R) / (255 R), k = 2 when level 2 is reported (derived
 * categories), 1 otherwise.  auto resets when that exceeds err_target and
 * the budget allows it: at least reset_cost / reset_budget slots (800,000
 * by default) have been counted since the previous reset, so that resets
 * never take more than reset_budget of the slots the handle counts,
 * whatever the region lengths.  S_b is exactly that count, so the rule
 * needs no state beyond the reading.  Both tests are multiplications: no
 * division on the hot path.
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
	p->recent_reset_at = 0;
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
	p->floor = (uint64_t)((double)p->cost / p->budget);
	if (p->kind == TD_RESET_NEVER) { /* threshold never reached */
		p->k_q16 = 0;
		p->floor = UINT64_MAX - 1;
	}
}

