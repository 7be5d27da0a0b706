/* SPDX-License-Identifier: MIT */
/*
 * Where perf is installed: the same workloads, without the library, under
 * `perf stat` of the same events, printed beside the library's breakdown
 * of the validator's own run.  Two runs, and perf's includes the
 * workloads' setup (the 256 MiB pointer chase's construction): an
 * informative comparison, not a pass/fail check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate.h"

int v_workload_only(int regions, bool small)
{
	if (v_workloads_init(small) < 0)
		return 1;
	for (int k = 0; k < V_K_COUNT; k++)
		for (int i = 0; i <= regions; i++)
			v_kernel_run((enum v_kernel)k);
	v_workloads_free();
	return 0;
}

static const char *const metric_events[4] = {
	"topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
	"topdown-be-bound"
};

/* perf stat -x, lines: value,unit,event,...; *got gets what was found. */
static void parse(FILE *f, double v[4], int *got)
{
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ','), *c2;

		if (!c1 || !(c2 = strchr(c1 + 1, ',')))
			continue;
		for (int i = 0; i < 4; i++)
			if (strstr(c2 + 1, metric_events[i])) {
				v[i] = strtod(line, NULL);
				*got |= 1 << i;
			}
	}
}

void v_check_perf_stat(const struct v_opts *o, struct v_report *r,
		       const char *self)
{
	char cmd[1024], out[] = "/tmp/topdown-validate-perf-XXXXXX";
	double v[4] = { 0 }, sum = 0, dev = 0;
	const char *p = r->info.pmu_name;
	int got = 0, fd;
	FILE *f;

	if (o->emulated) {
		v_add(r, "perf stat", V_SKIP, "perf stat counts the real PMU, "
		      "not the emulated one");
		return;
	}
	if (!r->perf_metrics) {
		v_add(r, "perf stat", V_SKIP, "compared on PERF_METRICS "
		      "sources only");
		return;
	}
	if (system("command -v perf >/dev/null 2>&1") != 0) {
		v_add(r, "perf stat", V_SKIP, "perf is not installed");
		return;
	}
	fd = mkstemp(out);
	if (fd < 0)
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "perf stat -x, -o %s -e '{%s/slots/,"
		 "%s/%s/,%s/%s/,%s/%s/,%s/%s/}' -- '%s' %s--workload-only %d "
		 ">/dev/null 2>&1", out, p, p, metric_events[0], p,
		 metric_events[1], p, metric_events[2], p, metric_events[3],
		 self, v_subcommand[0] ? "validate " : "", o->regions);
	if (system(cmd) == 0 && (f = fopen(out, "r"))) {
		parse(f, v, &got);
		fclose(f);
	}
	unlink(out);
	for (int i = 0; i < 4; i++)
		sum += v[i];
	if (got != 15 || sum <= 0) {
		v_add(r, "perf stat", V_SKIP, "perf stat gave no TopDown "
		      "counts (%s)", cmd);
		return;
	}
	for (int i = 0; i < 4; i++) {
		double d = v[i] / sum - r->whole_l1[i];
		d = d < 0 ? -d : d;
		dev = d > dev ? d : dev;
	}
	v_add(r, "perf stat", V_INFO, "perf stat: retiring %.3f bad_spec "
	      "%.3f frontend %.3f backend %.3f; library: %.3f %.3f %.3f "
	      "%.3f (max |diff| %.3f; separate runs, perf's with setup)",
	      v[0] / sum, v[1] / sum, v[2] / sum, v[3] / sum, r->whole_l1[0],
	      r->whole_l1[1], r->whole_l1[2], r->whole_l1[3], dev);
	v_figure(r, "perf stat", "{\"retiring\": %.5f, \"bad_speculation\": "
		 "%.5f, \"frontend_bound\": %.5f, \"backend_bound\": %.5f, "
		 "\"library_retiring\": %.5f, \"library_bad_speculation\": "
		 "%.5f, \"library_frontend_bound\": %.5f, "
		 "\"library_backend_bound\": %.5f}", v[0] / sum, v[1] / sum,
		 v[2] / sum, v[3] / sum, r->whole_l1[0], r->whole_l1[1],
		 r->whole_l1[2], r->whole_l1[3]);
}
