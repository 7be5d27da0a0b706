/* SPDX-License-Identifier: MIT */
/* Check 4: the report, as text for people and JSON to attach to a bug. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "validate.h"

static const char *status_name(enum v_status s)
{
	static const char *const names[] = { "PASS", "FAIL", "SKIP", "INFO" };

	return names[s];
}

struct v_check *v_add(struct v_report *r, const char *name,
		      enum v_status st, const char *fmt, ...)
{
	struct v_check *c;
	va_list ap;

	if (r->nchecks == V_MAX_CHECKS)
		return NULL;
	c = &r->checks[r->nchecks++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

void v_figure(struct v_report *r, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!r->json_figures)
		r->json_figures = open_memstream(&r->fig_buf, &r->fig_len);
	if (!r->json_figures)
		return;
	fprintf(r->json_figures, "%s\n    \"%s\": ", r->figures++ ? "," : "",
		name);
	va_start(ap, fmt);
	vfprintf(r->json_figures, fmt, ap);
	va_end(ap);
}

int v_failures(const struct v_report *r)
{
	int n = 0;

	for (int i = 0; i < r->nchecks; i++)
		n += r->checks[i].status == V_FAIL;
	return n;
}

void v_print_summary(const struct v_report *r, FILE *f)
{
	int pass = 0, skip = 0;

	fprintf(f, "topdown validate%s: libtopdown %d.%d, PMU %s (%s), %s\n",
		r->emulated ? " [EMULATED]" : "", td_version_major(),
		td_version_minor(), r->info.pmu_name,
		r->info.uarch[0] ? r->info.uarch : "uarch not named",
		r->perf_metrics ? "PERF_METRICS" : "ordinary counters");
	if (r->emulated)
		fprintf(f, "EMULATED (profile %s): every breakdown below is the "
			"emulator's synthetic answer; this run checks the "
			"library's arithmetic and fault handling, not the "
			"hardware.\n", r->profile);
	for (int i = 0; i < r->nchecks; i++) {
		const struct v_check *c = &r->checks[i];

		fprintf(f, "%-4s %-26s %s\n", status_name(c->status), c->name,
			c->detail);
		pass += c->status == V_PASS;
		skip += c->status == V_SKIP;
	}
	fprintf(f, "%d passed, %d failed, %d skipped\n", pass, v_failures(r),
		skip);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void proc_line(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)n, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

void v_machine_json(FILE *f, const struct v_report *r)
{
	struct utsname u;
	char paranoid[32], wd[32];

	memset(&u, 0, sizeof(u));
	uname(&u);
	proc_line("/proc/sys/kernel/perf_event_paranoid", paranoid,
		  sizeof(paranoid));
	proc_line("/proc/sys/kernel/nmi_watchdog", wd, sizeof(wd));
	fprintf(f, "  \"machine\": {\n    \"emulated\": %s,\n    \"profile\": ",
		r->emulated ? "true" : "false");
	json_str(f, r->emulated ? r->profile : "");
	fprintf(f, ",\n    \"model\": ");
	json_str(f, r->machine_model);
	fprintf(f, ",\n    \"kernel\": ");
	json_str(f, u.release);
	fprintf(f, ",\n    \"kernel_version\": ");
	json_str(f, u.version);
	fprintf(f, ",\n    \"arch\": ");
	json_str(f, u.machine);
	fprintf(f, ",\n    \"perf_event_paranoid\": ");
	json_str(f, paranoid);
	fprintf(f, ",\n    \"nmi_watchdog\": ");
	json_str(f, wd);
	fprintf(f, ",\n    \"pmu_name\": ");
	json_str(f, r->info.pmu_name);
	fprintf(f, ",\n    \"uarch\": ");
	json_str(f, r->info.uarch);
	fprintf(f, ",\n    \"source\": \"%s\",\n    \"path\": \"%s\",\n"
		"    \"levels\": %u,\n    \"pmu_type\": %u,\n"
		"    \"info_flags\": %u,\n    \"resets\": %llu,\n"
		"    \"foreign_resets\": %llu,\n    \"library\": \"%d.%d\"\n  }",
		r->perf_metrics ? "perf_metrics" : "ordinary_counters",
		r->info.path == TD_PATH_RDPMC ? "rdpmc" : "read",
		r->info.levels, r->info.pmu_type, r->info.flags,
		(unsigned long long)r->info.resets,
		(unsigned long long)r->info.foreign_resets,
		td_version_major(), td_version_minor());
}

int v_write_json(const struct v_report *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\n");
	v_machine_json(f, r);
	fprintf(f, ",\n  \"checks\": [");
	for (int i = 0; i < r->nchecks; i++) {
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_str(f, r->checks[i].name);
		fprintf(f, ", \"status\": \"%s\", \"detail\": ",
			status_name(r->checks[i].status));
		json_str(f, r->checks[i].detail);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"figures\": {");
	if (r->json_figures) {
		fflush(r->json_figures);
		fwrite(r->fig_buf, 1, r->fig_len, f);
	}
	fprintf(f, "\n  },\n  \"failed\": %d\n}\n", v_failures(r));
	return fclose(f) == 0 ? 0 : -1;
}
