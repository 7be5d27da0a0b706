/* SPDX-License-Identifier: MIT */
/* td_open, td_close, td_query: the cold path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generic.h"

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
		err = td_pmu_discover(&td->pmu);
	td->clear_mode = td->pmu.metrics_clear_config1 &&
			 !(o.flags & (TD_OPT_NO_METRICS_CLEAR | TD_OPT_NO_RDPMC));
	if (err == -EOPNOTSUPP) /* no PERF_METRICS: ordinary counters */
		err = td_generic_open(td, o.flags & TD_OPT_INCLUDE_KERNEL,
				      !(o.flags & TD_OPT_NO_RDPMC),
				      o.flags & TD_OPT_L2_MULTIPLEX);
	else if (err == 0)
		err = td_group_open(td, o.flags & TD_OPT_INCLUDE_KERNEL,
				    !(o.flags & TD_OPT_NO_RDPMC));
	if (err < 0) {
		td_close(td);
		return err;
	}
	td_hybrid_ecore_open(td, o.flags & TD_OPT_INCLUDE_KERNEL);
	td_hybrid_init(td);
	td_owner_init(td);
	td_policy_setup(&td->policy, td->pmu.nr_metrics == TD_NR_METRICS);
	td_fast_path_setup(td);
	td_env_report_register(td);
	*out = td;
	return 0;
}

void td_close(struct td *td)
{
	if (!td)
		return;
	td_env_report_close(td);
	td_named_unlink_all(td);
	td_generic_close(td);
	if (td->leader_fd >= 0)
		td_group_close(td);
	td_hybrid_close(td);
	td_owner_free(td);
}

/* The microarchitecture's name (struct td_info.uarch). */
static void uarch_name(const struct td *td, char *out, size_t len)
{
	char path[96], caps[32] = "";
	int n;

	if (td->gen) {
		snprintf(out, len, "%s", td->gen->m.name);
		return;
	}
	snprintf(path, sizeof(path),
		 "/sys/bus/event_source/devices/%s/caps/pmu_name",
		 td->pmu.name);
	n = td_sys_read_file(path, caps, sizeof(caps));
	caps[n > 0 ? strcspn(caps, "\n") : 0] = '\0';
	if (td->ecore)
		snprintf(out, len, "%s+%s", caps, td->ecore->m.name);
	else
		snprintf(out, len, "%s", caps);
}

int td_query(const struct td *td, struct td_info *info)
{
	struct td_info i;

	if (!td || !info || info->size < offsetof(struct td_info, levels))
		return -EINVAL;
	memset(&i, 0, sizeof(i));
	i.size = info->size < sizeof(i) ? info->size : sizeof(i);
	i.path = td->path;
	i.levels = td->pmu.nr_metrics == TD_NR_METRICS ||
			   (td->gen && (td->gen->l2 || td->gen->mux[0])) ? 2 : 1;
	i.pmu_type = td->pmu.type;
	memcpy(i.pmu_name, td->pmu.name, sizeof(i.pmu_name));
	i.resets = td->resets;
	i.foreign_resets = td->foreign_resets;
	i.flags = td->clear_mode ? TD_INFO_METRICS_CLEAR : 0;
	if (td->pmu.arm && td->pmu.rdpmc_knob == 0)
		i.flags |= TD_INFO_USER_ACCESS_OFF;
	if (td->gen && td->gen->derived)
		i.flags |= TD_INFO_DERIVED;
	if (td->ecore)
		i.flags |= TD_INFO_HYBRID_ECORE;
	if (td->gen && td->gen->smt_per_thread)
		i.flags |= TD_INFO_SMT_PER_THREAD;
	if (td->gen && td->gen->m.nr2 && td->gen->m.formula == TD_F_ZEN)
		i.flags |= td->gen->mux[0] ? TD_INFO_MULTIPLEXED
					   : TD_INFO_L2_NEEDS_MULTIPLEX;
	if (td->gen && td->gen->l2_unfit)
		i.flags |= TD_INFO_L2_NO_COUNTERS;
	uarch_name(td, i.uarch, sizeof(i.uarch));
	memcpy(info, &i, i.size);
	return 0;
}
