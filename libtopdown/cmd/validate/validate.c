/* SPDX-License-Identifier: MIT */
/*
 * topdown validate [--emulate[=PROFILE]] [--profile PROFILE]
 *                  [-o REPORT.json] [--long] [--regions N]
 *
 * Runs the contrasting workloads, the cross-checks, the fault drills
 * and the memory drill-down's pair of pointer chases on this machine
 * and prints PASS/FAIL per check; -o writes the JSON
 * report (machine description and every figure) to attach to bug
 * reports.  Exit status: 0 all passed, 1 a check failed, 2 usage or
 * setup error, 77 skipped (no usable PMU: the reason and fix printed are
 * td_strerror's for td_open's error).
 *
 * --emulate re-executes this program on the test emulator
 * (LD_PRELOAD: the one topdown run --emulate finds, libtdemu.so next to
 * the standalone binary, or $TOPDOWN_EMULATOR;
 * TD_EMULATE=<profile>), labelled EMULATED throughout.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate.h"

#define V_EXIT_SKIP 77


struct v_args {
	bool emulate, long_drills, workload_only;
	const char *profile, *json;
	int regions;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: topdown validate [--emulate[=PROFILE]] "
		"[--profile PROFILE] [-o REPORT.json] [--long] "
		"[--regions N]\n"
		"  PROFILE (emulator): spr (default), icl; ordinary counters: "
		"zen4, zen5, skl, hsw, grt, cmt, tnt\n");
}

/*
 * The emulator's profiles (test/emu/emu_preload.c): PERF_METRICS (spr,
 * icl) and ordinary counters (zen4, zen5, skl, hsw, grt, cmt, tnt).
 */
static bool known_profile(const char *p)
{
	static const char *const names[] = { "spr", "icl", "zen4", "zen5",
		"skl", "hsw", "grt", "cmt", "tnt" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(p, names[i]) == 0)
			return true;
	return false;
}

static int parse_args(int argc, char **argv, struct v_args *a)
{
	a->profile = "spr";
	a->regions = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (strcmp(s, "--emulate") == 0) {
			a->emulate = true;
		} else if (strncmp(s, "--emulate=", 10) == 0) {
			a->emulate = true;
			a->profile = s + 10;
			if (!known_profile(a->profile))
				return -EINVAL;
		} else if (strcmp(s, "--profile") == 0 && i + 1 < argc) {
			a->profile = argv[++i];
			if (!known_profile(a->profile))
				return -EINVAL;
		} else if (strcmp(s, "-o") == 0 && i + 1 < argc) {
			a->json = argv[++i];
		} else if (strcmp(s, "--long") == 0) {
			a->long_drills = true;
		} else if (strcmp(s, "--regions") == 0 && i + 1 < argc) {
			a->regions = atoi(argv[++i]);
			if (a->regions < 1 || a->regions > 100000)
				return -EINVAL;
		} else if (strcmp(s, "--workload-only") == 0) {
			a->workload_only = true; /* under perf stat */
		} else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* Re-execute on the emulator; returns only on failure. */
static int reexec_emulated(char **argv, const char *profile,
			   const char *emulator)
{
	char self[PATH_MAX], emu[PATH_MAX + 16];
	const char *env = emulator ? emulator : getenv("TOPDOWN_EMULATOR");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (getenv("TD_VALIDATE_REEXEC")) {
		fprintf(stderr, "topdown validate: the emulator did not load "
			"(LD_PRELOAD=%s)\n", getenv("LD_PRELOAD"));
		return 2;
	}
	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (env)
		snprintf(emu, sizeof(emu), "%s", env);
	else
		snprintf(emu, sizeof(emu), "%s/libtdemu.so", dirname(self));
	if (access(emu, R_OK) != 0) {
		fprintf(stderr, "topdown validate: the emulated PMU was not "
			"found (not installed with the library, no %s); set "
			"TOPDOWN_EMULATOR=<its path>\n", emu);
		return 2;
	}
	setenv("LD_PRELOAD", emu, 1);
	setenv("TD_EMULATE", profile, 1);
	setenv("TD_VALIDATE_REEXEC", "1", 1);
	execv("/proc/self/exe", argv);
	perror("topdown validate: execv");
	return 2;
}

static bool sysfs_exists(const char *pmu, const char *rel)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/%s",
		 pmu, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* PERF_METRICS metric events the library opens: 8 when all listed. */
static unsigned sysfs_metrics(const char *pmu)
{
	static const char *const l2[] = { "events/topdown-heavy-ops",
		"events/topdown-br-mispredict", "events/topdown-fetch-lat",
		"events/topdown-mem-bound" };

	for (int i = 0; i < 4; i++)
		if (!sysfs_exists(pmu, l2[i]))
			return 4;
	return 8;
}

static void cpu_model(char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, n, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (c && (strncmp(line, "model name", 10) == 0 ||
			  strncmp(line, "CPU part", 8) == 0)) {
			snprintf(out, n, "%s", c + 2);
			out[strcspn(out, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

static int skipped(struct v_report *r, const struct v_args *a, int err)
{
	printf("topdown validate: SKIP (exit %d): %s\n", V_EXIT_SKIP,
	       td_strerror(err));
	printf("topdown validate: `topdown validate --emulate` runs the same "
	       "checks on the test emulator (library arithmetic and fault "
	       "handling only).\n");
	v_add(r, "open", V_SKIP, "%s", td_strerror(err));
	if (a->json)
		v_write_json(r, a->json);
	return V_EXIT_SKIP;
}

static void run_checks(struct td *td, const struct v_opts *o,
		       struct v_report *r, const int *before, int nbefore)
{
	struct v_kref k;
	char self[PATH_MAX];
	ssize_t n;

	memset(&k, 0, sizeof(k));
	k.leader = k.any_fd = k.uop_fd = -1;
	if (r->perf_metrics &&
	    v_kref_find(&k, before, nbefore,
			sysfs_metrics(r->info.pmu_name)) == 0)
		v_kref_open_uop(&k, &r->info);
	else if (v_kref_find_counters(&k, before, nbefore, &r->info) == 0)
		v_add(r, "reference", V_INFO, "ordinary counters: %s, %u "
		      "events read with read(2) around each region, level 1 "
		      "by %s%s", k.model.name, k.members, k.model.source,
		      k.model.smt_any ? " (SMT form)" : "");
	v_check_kernels(td, &k, o, r);
	v_check_drills(td, &k, o, r);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	v_check_perf_stat(o, r, self);
}

const char *v_subcommand = "";

int td_cmd_validate(int argc, char **argv, char **exec_argv,
		    const char *emulator)
{
	static struct v_report r;
	struct v_args a = { 0 };
	struct td_options opts = TD_OPTIONS_INIT;
	struct td *td = NULL;
	struct v_opts o = { 0 };
	int before[64], nbefore, err;

	if (parse_args(argc, argv, &a) < 0) {
		usage(stderr);
		return 2;
	}
	if (a.workload_only)
		return v_workload_only(a.regions ? a.regions : 40, false);
	if (a.emulate && !v_emulated())
		return reexec_emulated(exec_argv, a.profile, emulator);
	r.emulated = v_emulated();
	r.profile = getenv("TD_EMULATE") ? getenv("TD_EMULATE") : "";
	cpu_model(r.machine_model, sizeof(r.machine_model));
	nbefore = v_perf_fds(before, 64);
	/* No library resets: the kernel's counts then run from the open
	 * (whole-thread check); the validator's reads reset the registers
	 * between regions (kref.c), so err stays small without them. */
	opts.reset_policy = TD_RESET_NEVER;
	err = td_open(&td, &opts);
	if (err < 0)
		return skipped(&r, &a, err);
	r.info.size = sizeof(r.info);
	td_query(td, &r.info);
	r.perf_metrics = sysfs_exists(r.info.pmu_name, "events/slots");
	if (v_workloads_init(r.emulated) < 0) {
		fprintf(stderr, "topdown validate: out of memory\n");
		td_close(td);
		return 2;
	}
	o.emulated = o.small = r.emulated;
	o.long_drills = a.long_drills;
	o.regions = a.regions ? a.regions : r.emulated ? 12 : 40;
	run_checks(td, &o, &r, before, nbefore > 0 ? nbefore : 0);
	td_query(td, &r.info);
	td_close(td);
	/* its own handle, alone: two TopDown groups would share SLOTS */
	v_check_memory(&o, &r);
	v_workloads_free();
	v_print_summary(&r, stdout);
	if (a.json && v_write_json(&r, a.json) < 0) {
		fprintf(stderr, "topdown validate: cannot write %s\n", a.json);
		return 2;
	}
	return v_failures(&r) ? 1 : 0;
}
