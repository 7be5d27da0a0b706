/* SPDX-License-Identifier: MIT */
/* The handle's open (td_open's work), td_close, td_query: the cold path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "begin_state.h"
#include "source.h"

/*
 * What td_open sets up in the handle before its source opens: the reset
 * policy, the layers above core (td_source_open's prepare).
 */
static int prepare(struct td *td, const struct td_options *o, void *ctx)
{
	const struct td_handle_hooks *hooks = ctx;
	int err;

	td->leader_fd = -1;
	td->hooks = hooks;
	err = td_policy_init(&td->policy, o);
	if (err == 0 && hooks->open)
		err = hooks->open(td);
	return err;
}

int td_handle_open(struct td **out, const struct td_options *opts,
		   const struct td_handle_hooks *hooks)
{
	struct td_options o;
	struct td *td;
	int err;

	td_clear_bad_setting();
	if (!out)
		return -EINVAL;
	*out = NULL;
	err = td_options_copy(&o, opts);
	if (err < 0)
		return err;
	err = td_source_open(&o, prepare, (void *)hooks, &td);
	if (!td)
		return err;
	if (err < 0) {
		td_close(td);
		return err;
	}
	td_owner_init(td);
	td->levels = td_levels(td);
	td_policy_setup(&td->policy, td->levels == 2, td->src->reset != NULL);
	td_snap_publish(td, &td->snap); /* the handle's first version */
	if (td->src->ready)
		td->src->ready(td);
#ifdef TD_NO_FAST_PATHS
	/*
	 * The reference build of test_fastslow: every begin and end on the
	 * general route (region_slow.c), whatever the source offers.
	 */
	td->fast = false;
	td->src_fast = false;
#endif
	td->src_begin = td->src->fast_begin;
	td->src_end = td->src->fast_end;
	td->end_entry = td->src->fast_end_first ? td->src->fast_end_first
						: td_fast_end_checked;
	if (td->fast || td->src_fast)
		td_fast_claim(td);
	if (hooks->opened)
		hooks->opened(td);
	*out = td;
	return 0;
}

void td_close(struct td *td)
{
	if (!td)
		return;
	if (td->hooks->close)
		td->hooks->close(td);
	if (td->src)
		td->src->close(td);
	td_owner_free(td);
}

/* Levels the handle measures: 1, or 2 where its source has level 2. */
unsigned td_levels(const struct td *td)
{
	struct td_info i = { .levels = 1 };

	td->src->info(td, &i);
	return i.levels;
}

int td_query(const struct td *td, struct td_info *info)
{
	struct td_info i;

	if (!td || !info || info->size < offsetof(struct td_info, levels))
		return -EINVAL;
	memset(&i, 0, sizeof(i));
	i.size = info->size < sizeof(i) ? info->size : sizeof(i);
	i.path = td->path;
	i.levels = 1;
	i.pmu_type = td->pmu.type;
	memcpy(i.pmu_name, td->pmu.name, sizeof(i.pmu_name));
	i.resets = td->resets;
	i.foreign_resets = td->foreign_resets;
	td->src->info(td, &i);
	if (td_emulated_pmu())
		i.flags |= TD_INFO_EMULATED;
	memcpy(info, &i, i.size);
	return 0;
}
