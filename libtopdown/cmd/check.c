/* SPDX-License-Identifier: MIT */
/*
 * topdown check: what this machine can measure, and for each blocker its
 * fix.  The verdict is the library's own: td_open on this thread, then
 * td_query; the rest (PMUs, sysctls, the CPU) is read here from sysfs and
 * procfs to explain it.  Sources: the kernel's sysfs ABI for event_source
 * devices (Documentation/ABI/testing/sysfs-bus-event_source-devices*),
 * Documentation/admin-guide/sysctl/kernel.rst (perf_event_paranoid,
 * perf_user_access, nmi_watchdog).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <topdown.h>

#include "cmd.h"

#define PMUS "/sys/bus/event_source/devices"

struct check {
	int blockers;
	int core_pmus;
	bool hybrid_core, hybrid_atom;
};

static void line(const char *label, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-22s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void blocker(struct check *c, const char *what, const char *fix)
{
	c->blockers++;
	printf("  BLOCKER: %s\n           fix: %s\n", what, fix);
}

static void pmu_file(const char *pmu, const char *file, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), PMUS "/%s/%s", pmu, file);
	if (cmd_read_file(path, buf, len) < 0)
		buf[0] = '\0';
}

static bool pmu_has(const char *pmu, const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), PMUS "/%s/%s", pmu, file);
	return cmd_exists(path);
}

/* The core PMUs the kernel names (x86 cpu, cpu_core, cpu_atom; Arm PMUv3). */
static bool is_core_pmu(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "cpu_core") ||
	       !strcmp(name, "cpu_atom") || !strncmp(name, "armv8_", 6) ||
	       !strncmp(name, "armv9_", 6);
}

static void describe_pmu(struct check *c, const char *name)
{
	char type[16], caps[64], cpus[128];
	const char *source;

	pmu_file(name, "type", type, sizeof(type));
	pmu_file(name, "caps/pmu_name", caps, sizeof(caps));
	pmu_file(name, "cpus", cpus, sizeof(cpus));
	if (pmu_has(name, "events/slots") &&
	    pmu_has(name, "events/topdown-retiring"))
		source = "PERF_METRICS (slots + topdown-* events)";
	else if (!strncmp(name, "arm", 3))
		source = "Arm PMUv3 events (Arm's TopDown formulas)";
	else
		source = "ordinary counters (libtopdown's formula table)";
	line("core PMU", "%s (type %s%s%s%s%s): %s", name, type,
	     caps[0] ? ", " : "", caps, cpus[0] ? ", CPUs " : "", cpus, source);
	c->core_pmus++;
	c->hybrid_core |= !strcmp(name, "cpu_core");
	c->hybrid_atom |= !strcmp(name, "cpu_atom");
}

static void list_pmus(struct check *c)
{
	DIR *d = opendir(PMUS);
	struct dirent *e;
	char others[512] = "";

	if (!d) {
		line("PMUs", "%s unreadable (%s)", PMUS, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (is_core_pmu(e->d_name))
			describe_pmu(c, e->d_name);
		else if (strlen(others) + strlen(e->d_name) + 2 <
			 sizeof(others))
			snprintf(others + strlen(others),
				 sizeof(others) - strlen(others), "%s%s",
				 others[0] ? " " : "", e->d_name);
	}
	closedir(d);
	if (!c->core_pmus)
		line("core PMU", "none (the kernel lists only: %s)",
		     others[0] ? others : "nothing");
	if (c->hybrid_core && c->hybrid_atom)
		line("hybrid", "P-cores (cpu_core) and E-cores (cpu_atom): "
		     "regions on E-cores use the E-core group");
}

/* The CPU from /proc/cpuinfo (x86: vendor, family, model; Arm: part). */
static void describe_cpu(void)
{
	static const char *const keys[] = { "vendor_id", "cpu family", "model",
					     "model name", "CPU implementer",
					     "CPU part", "CPU variant" };
	char info[65536], out[512] = "", *save = NULL;
	bool vm = false;
	int n = cmd_read_file("/proc/cpuinfo", info, sizeof(info));

	if (n <= 0) {
		line("CPU", "unknown (/proc/cpuinfo unreadable)");
		return;
	}
	for (char *l = strtok_r(info, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');

		if (!colon)
			continue;
		if (!strncmp(l, "flags", 5) && strstr(colon, " hypervisor"))
			vm = true;
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t kl = strlen(keys[k]);

			if (strncmp(l, keys[k], kl) || (l[kl] != ' ' &&
							l[kl] != '\t') ||
			    strstr(out, keys[k]))
				continue;
			snprintf(out + strlen(out), sizeof(out) - strlen(out),
				 "%s%s%s", out[0] ? ", " : "", keys[k], colon);
		}
	}
	line("CPU", "%s", out[0] ? out : "unknown");
	if (vm)
		line("virtual machine", "yes (cpuinfo hypervisor flag): the "
		     "hypervisor decides which counters the guest gets");
}

static long sysctl(const char *name, bool *present)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	*present = cmd_read_file(path, buf, sizeof(buf)) > 0;
	return *present ? strtol(buf, NULL, 10) : 0;
}

static void describe_sysctls(void)
{
	bool have;
	long v = sysctl("perf_event_paranoid", &have);

	if (have)
		line("perf_event_paranoid", "%ld (%s)", v,
		     v <= 2 ? "user-mode self-monitoring allowed"
			    : "perf_event_open forbidden to unprivileged "
			      "users: sysctl kernel.perf_event_paranoid=2");
	else
		line("perf_event_paranoid", "absent (kernel without perf events?)");
	v = sysctl("perf_user_access", &have);
	if (have)
		line("perf_user_access", "%ld (%s)", v,
		     v ? "EL0 counter reads allowed"
		       : "Arm EL0 counter reads off: the read(2) path; "
			 "sysctl kernel.perf_user_access=1 for MRS");
	v = sysctl("nmi_watchdog", &have);
	if (have)
		line("NMI watchdog", "%ld (%s)", v,
		     v ? "holds one counter: fewer free for ordinary-counter "
			 "CPUs; echo 0 > /proc/sys/kernel/nmi_watchdog"
		       : "off: it holds no counter");
}

static const char *path_name(const struct td_info *i)
{
	return i->path == TD_PATH_RDPMC ? "RDPMC (arm64: MRS), no system call"
					: "read(2), one system call per reading";
}

static void describe_flags(unsigned f)
{
	if (f & TD_INFO_METRICS_CLEAR)
		line("metrics-clear", "yes: the hardware zeroes the counters "
		     "at each reading");
	if (f & TD_INFO_DERIVED)
		line("derived term", "too few free counters: one formula term "
		     "derived (free one: the NMI watchdog, see above)");
	if (f & TD_INFO_HYBRID_ECORE)
		line("hybrid", "E-core group open too: regions on both core "
		     "types combine");
	if (f & TD_INFO_SMT_PER_THREAD)
		line("SMT", "per-thread form (AnyThread refused): approximate");
	if (f & TD_INFO_USER_ACCESS_OFF)
		line("user access", "off: read(2) path; sysctl "
		     "kernel.perf_user_access=1");
	if (f & TD_INFO_L2_NEEDS_MULTIPLEX)
		line("level 2", "does not fit beside level 1: estimates with "
		     "TD_OPT_L2_MULTIPLEX");
	if (f & TD_INFO_L2_NO_COUNTERS)
		line("level 2", "its events did not fit the free counters");
}

/* The library's verdict: td_open here, td_query, or the error's fix. */
static void verdict(struct check *c)
{
	struct td_info info = { .size = sizeof(info) };
	struct td *td = NULL;
	int err = td_open(&td, NULL);

	if (err < 0) {
		line("td_open", "failed (%s)", strerror(-err));
		blocker(c, err == -ENODEV ? "no hardware PMU: the kernel "
					    "exposes no core PMU"
					  : "td_open cannot measure TopDown",
			td_strerror(err));
		return;
	}
	td_query(td, &info);
	line("td_open", "works");
	line("measures", "level 1%s, on %s", info.levels > 1 ? " and 2" : "",
	     info.pmu_name);
	line("microarchitecture", "%s", info.uarch[0] ? info.uarch : "(not named)");
	line("reading path", "%s", path_name(&info));
	describe_flags(info.flags);
	td_close(td);
}

static int usage(FILE *f, int status)
{
	fprintf(f,
		"usage: topdown check [--emulate [--profile spr|icl]]\n"
		"\n"
		"What this machine can measure and why not: the core PMU and the\n"
		"TopDown source found, levels, microarchitecture, RDPMC or read(2),\n"
		"perf_event_paranoid, Arm perf_user_access, the NMI watchdog,\n"
		"hybrid core types; each blocker with its fix.\n"
		"\n"
		"  --emulate         check the emulated PMU instead (labelled EMULATED)\n"
		"  --profile NAME    the emulated CPU: spr (default) or icl\n"
		"\n"
		"Exit status: 0 TopDown can be measured, 1 it cannot (the\n"
		"blockers are listed), 2 a bad argument.\n");
	return status;
}

/* --emulate: this same command again, on the emulated PMU. */
static int reexec_emulated(const char *profile)
{
	char *const args[] = { "topdown", "check", NULL };

	if (cmd_emulate_env(profile) < 0)
		return CMD_FAILED;
	execv("/proc/self/exe", args);
	cmd_error("cannot re-run itself on the emulator: %s", strerror(errno));
	return CMD_FAILED;
}

/*
 * The emulated PMU's profile when it answers in this process, else NULL:
 * the emulator's own word (libtopdown/kernel/emulated.c), never a
 * variable of the environment, which a real machine may have set too.
 */
static const char *emulated_profile(void)
{
	const char *(*profile)(void);

	*(void **)&profile = dlsym(RTLD_DEFAULT, "libtopdown_emulated_pmu");
	return profile ? profile() : NULL;
}

int cmd_check(int argc, char **argv)
{
	const char *profile = "spr";
	bool emulate = false;
	struct check c = { 0 };

	for (int i = 1; i < argc; i++) {
		if (cmd_is_help(argv[i]))
			return usage(stdout, CMD_OK);
		if (!strcmp(argv[i], "--emulate")) {
			emulate = true;
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
			profile = argv[++i];
			if (!cmd_profile_ok(profile)) {
				cmd_error("check: bad --profile '%s' (want one "
					  "of %s)", profile, cmd_profiles);
				return CMD_USAGE;
			}
		} else {
			cmd_error("check: unknown argument '%s' (topdown "
				  "check --help)", argv[i]);
			return CMD_USAGE;
		}
	}
	if (emulate)
		return reexec_emulated(profile);
	if (emulated_profile())
		printf("EMULATED PMU (profile %s): the test emulator answers, "
		       "not this machine\n", emulated_profile());
	printf("topdown check: can this machine measure TopDown?\n");
	describe_cpu();
	list_pmus(&c);
	describe_sysctls();
	verdict(&c);
	if (c.blockers) {
		printf("topdown check: NO, TopDown cannot be measured here "
		       "(%d blocker%s above)\n", c.blockers,
		       c.blockers > 1 ? "s" : "");
		if (!c.core_pmus)
			printf("topdown check: without a PMU, try libtopdown "
			       "on the emulated one: topdown check --emulate, "
			       "topdown run --emulate -- PROG (synthetic "
			       "counts, labelled EMULATED)\n");
		return CMD_BLOCKED;
	}
	printf("topdown check: YES, TopDown can be measured here%s\n",
	       emulated_profile() ? " (EMULATED)" : "");
	return CMD_OK;
}
