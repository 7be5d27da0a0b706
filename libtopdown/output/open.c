/* SPDX-License-Identifier: MIT */
/*
 * td_open: core's handle (td_handle_open) with output's part in its life,
 * the environment's report (env_report.c) and, at td_close, the records
 * still to finish and the named regions to unlink.  Here rather than
 * registered with core from a constructor: a static link takes only the
 * archive members something references, and td_open references these.
 */
#include "output.h"

/* The order td_close always had: report, records, named regions. */
static void output_close(struct td *td)
{
	td_env_report_close(td);
	td_records_finish(td);
	td_named_unlink_all(td);
}

static const struct td_handle_hooks output_hooks = {
	.open = td_env_report_init,
	.opened = td_env_report_register,
	.close = output_close,
};

int td_open(struct td **out, const struct td_options *opts)
{
	return td_handle_open(out, opts, &output_hooks);
}
