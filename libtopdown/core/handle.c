/* SPDX-License-Identifier: MIT */
/* td_open, td_close, td_query: the cold path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

int td_open(struct td **out, const struct td_options *opts)
{
	struct td_options o;
	struct td *td;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = td_options_copy(&o, opts);
	if (err < 0)
		return err;
	td = calloc(1, sizeof(*td));
	if (!td)
		return -ENOMEM;
	td->leader_fd = -1;
	err = td_policy_init(&td->policy, &o);
	if (err == 0)
		err = td_env_report_init(td);
	if (err == 0)
		err = td_source_open(td, &o);
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
	if (td->fast || td->src_fast)
		td_fast_claim(td);
	td_env_report_register(td);
	*out = td;
	return 0;
}

void td_close(struct td *td)
{
	if (!td)
		return;
	td_env_report_close(td);
	td_records_finish(td);
	td_named_unlink_all(td);
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
	memcpy(info, &i, i.size);
	return 0;
}
