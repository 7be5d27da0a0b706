/* SPDX-License-Identifier: MIT */
/*
 * Taking a reading through the handle's source (the slow path of begin
 * and end), and publishing what it changed: the handle's folded state
 * (struct td_snap), its version, and the untrusted-event count that flags
 * regions spanning a descheduling or an unreadable reading.
 */
#include <string.h>

#include "source.h"

/* Versions of struct td_snap, process-wide (see td->epoch_hi); never 0. */
static uint64_t next_epoch_hi(void)
{
	static uint32_t counter;
	uint32_t e;

	do
		e = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	while (e == 0);
	return (uint64_t)e << 32;
}

void td_snap_new_version(struct td *td)
{
	td->epoch_hi = next_epoch_hi();
}

void td_snap_publish(struct td *td, const struct td_snap *before)
{
	td->snap.resets = (uint32_t)td->resets & TD_SNAP_RESETS_MASK;
	td->snap.untrusted = (uint32_t)td->untrusted;
	if (!td->epoch_hi || memcmp(before, &td->snap, sizeof(*before)) != 0)
		td->epoch_hi = next_epoch_hi();
	td_end_key_refresh(td);
}

/*
 * A region begun before a descheduling (time_enabled - time_running grew:
 * multiplexed out, or on a core the source's group does not count on)
 * and ended after it did not count
 * all of its time; so does one spanning an unreadable reading.
 */
static void note_schedule(struct td *td, const struct td_sample *s)
{
	if (!s->valid) {
		td->untrusted++;
	} else if (s->unsched != td->last_unsched) {
		td->untrusted++;
		td->last_unsched = s->unsched;
	}
}

int td_take_sample(struct td *td, struct td_sample *s)
{
	struct td_snap before = td->snap;
	int err;

	s->qself = 0;
	s->raw_at_last = 0;
	s->aux = TD_AUX_NONE;
	s->aux2 = TD_AUX_NONE;
	err = td->src->sample(td, s);
	if (err == 0)
		note_schedule(td, s);
	if (td->snap.base.slots > before.base.slots) /* folded beyond raw SLOTS */
		td_policy_folded(&td->policy,
				 td->snap.base.slots - before.base.slots);
	td_snap_publish(td, &before);
	s->qerr_base = td->snap.qerr_base;
	return err;
}

