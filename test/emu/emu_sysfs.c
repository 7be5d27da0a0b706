/* SPDX-License-Identifier: MIT */
/*
 * A fake /sys/bus/event_source/devices tree in a temporary directory, with
 * the files the kernel publishes for each profile (strings from the kernel:
 * EVENT_ATTR_STR(slots, "event=0x00,umask=0x4"), topdown-* umask 0x80-0x87,
 * format/event "config:0-7", format/umask "config:8-15").
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"

#define PMUS "/sys/bus/event_source/devices/"
#define CPUS "/sys/devices/system/cpu/"

static const char *const td_events[8] = {
	"topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
	"topdown-be-bound", "topdown-heavy-ops", "topdown-br-mispredict",
	"topdown-fetch-lat", "topdown-mem-bound",
};

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", emu.sysfs_root, rel);
	for (char *p = path + strlen(emu.sysfs_root) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", text);
		fclose(f);
	}
}

static void core_pmu(const char *name, unsigned type, bool topdown, bool l2)
{
	char rel[128], val[64];

	snprintf(rel, sizeof(rel), "%s/type", name);
	snprintf(val, sizeof(val), "%u", type);
	put(rel, val);
	snprintf(rel, sizeof(rel), "%s/format/event", name);
	put(rel, "config:0-7");
	snprintf(rel, sizeof(rel), "%s/format/umask", name);
	put(rel, "config:8-15");
	snprintf(rel, sizeof(rel), "%s/format/edge", name);
	put(rel, "config:18");
	snprintf(rel, sizeof(rel), "%s/rdpmc", name);
	snprintf(val, sizeof(val), "%d", emu.rdpmc_knob);
	put(rel, val);
	snprintf(rel, sizeof(rel), "%s/events/cycles", name);
	put(rel, "event=0x3c");
	if (!topdown)
		return;
	if (emu.has_metrics_clear) {
		snprintf(rel, sizeof(rel), "%s/format/metrics_clear", name);
		put(rel, "config1:0");
	}
	snprintf(rel, sizeof(rel), "%s/events/slots", name);
	put(rel, "event=0x00,umask=0x4");
	for (int i = 0; i < (l2 ? 8 : 4); i++) {
		snprintf(rel, sizeof(rel), "%s/events/%s", name, td_events[i]);
		snprintf(val, sizeof(val), "event=0x00,umask=0x%x", 0x80 + i);
		put(rel, val);
	}
}

/*
 * The topdown-* aliases arch/x86/events/intel/core.c publishes for a
 * standalone Atom (intel_pmu_init: td_attr of its case): fe, bad spec,
 * retiring, be strings.
 */
static void atom_aliases(const char *fe, const char *bad, const char *ret,
			 const char *be)
{
	put("cpu/events/topdown-fe-bound", fe);
	put("cpu/events/topdown-bad-spec", bad);
	put("cpu/events/topdown-retiring", ret);
	put("cpu/events/topdown-be-bound", be);
}

/*
 * Each Atom profile as the kernel presents it: its case's td_attr and
 * name (caps/pmu_name).  Alder Lake-N (INTEL_ATOM_GRACEMONT) gets
 * Tremont's tnt_events_attrs, bad speculation umask 0x6 included.
 */
static void atom_pmu(void)
{
	static const char *const tnt_bad = "event=0x73,umask=0x6";
	static const char *const cmt_bad = "event=0x73,umask=0x0";

	switch (emu.profile) {
	case EMU_TNT:
	case EMU_GRT:
		put("cpu/caps/pmu_name",
		    emu.profile == EMU_TNT ? "Tremont" : "gracemont");
		atom_aliases("event=0x71,umask=0x0", tnt_bad,
			     "event=0xc2,umask=0x0", "event=0x74,umask=0x0");
		break;
	case EMU_CMT:
		put("cpu/caps/pmu_name", "crestmont");
		atom_aliases("event=0x71,umask=0x0", cmt_bad,
			     "event=0x72,umask=0x0", "event=0x74,umask=0x0");
		break;
	case EMU_SKT:
		put("cpu/caps/pmu_name", "darkmont");
		atom_aliases("event=0x9c,umask=0x01", cmt_bad,
			     "event=0xc2,umask=0x02", "event=0xa4,umask=0x02");
		break;
	default:
		break;
	}
}

/*
 * Profiles without PERF_METRICS.  AMD's event format has bits 35:32
 * (arch/x86/events/amd/core.c).
 */
static void generic_pmu(void)
{
	core_pmu("cpu", 4, false, false);
	if (emu.profile == EMU_ZEN4 || emu.profile == EMU_ZEN5)
		put("cpu/format/event", "config:0-7,32-35");
	if (emu.profile == EMU_SKL)
		put("cpu/caps/pmu_name", "skylake");
	if (emu.profile == EMU_SLM)
		put("cpu/caps/pmu_name", "silvermont");
	atom_pmu();
}

void emu_sysfs_create(void)
{
	snprintf(emu.sysfs_root, sizeof(emu.sysfs_root), "/tmp/tdemu.XXXXXX");
	if (!mkdtemp(emu.sysfs_root))
		abort();
	put("software/type", "1");
	put("cpuinfo", emu_cpuinfo());
	if (!emu.has_pmu)
		return;
	if (emu.arm) {
		emu_arm_sysfs(put);
		return;
	}
	if (emu.gen_width) {
		generic_pmu();
		return;
	}
	if (emu.profile == EMU_ADL) {
		core_pmu("cpu_core", 4, true, true);
		core_pmu("cpu_atom", EMU_ATOM_TYPE, false, false);
		/* EVENT_ATTR_STR_HYBRID adl strings, arch/x86/events/intel/core.c */
		put("cpu_atom/events/topdown-fe-bound", "event=0x71,umask=0x0");
		put("cpu_atom/events/topdown-bad-spec", "event=0x73,umask=0x0");
		put("cpu_atom/events/topdown-retiring", "event=0xc2,umask=0x0");
		put("cpu_atom/events/topdown-be-bound", "event=0x74,umask=0x0");
		/* arch/x86/events/core.c intel_hybrid_get_attr_cpus */
		put("cpu_core/caps/pmu_name", "alderlake_hybrid");
		put("cpu_core/cpus", EMU_ADL_PCORES);
		put("cpu_atom/cpus", EMU_ADL_ECORES);
		return;
	}
	core_pmu("cpu", 4, emu.has_topdown, emu.l2);
	/* the kernel's pmu_name strings (arch/x86/events/intel/core.c) */
	if (emu.profile == EMU_ICL)
		put("cpu/caps/pmu_name", "icelake");
	else if (emu.profile == EMU_LNL)
		put("cpu/caps/pmu_name", "lunarlake_hybrid");
	else if (emu.has_topdown)
		put("cpu/caps/pmu_name", "sapphire_rapids");
}

/*
 * A hybrid part that offers metrics-clear too, as Lunar Lake and Arrow
 * Lake do on cpu_core (the kernel's format/metrics_clear of
 * arch/x86/events/intel/core.c): the file, and the mode when asked.
 */
/*
 * Meteor Lake: the kernel names the P-core PMU "meteorlake_hybrid"
 * (arch/x86/events/intel/core.c intel_pmu_init, INTEL_METEORLAKE);
 * Redwood Cove's PERF_METRICS and INT_MISC.UOP_DROPPING (0xad, 0x10:
 * perf's meteorlake pipeline.json) are Golden Cove's, which the Alder
 * Lake profile's P-cores emulate.
 */
void emu_name_meteor_lake(void)
{
	put("cpu_core/caps/pmu_name", "meteorlake_hybrid");
}

void emu_offer_metrics_clear(void)
{
	emu.has_metrics_clear = true;
	put(emu.profile == EMU_ADL ? "cpu_core/format/metrics_clear"
				   : "cpu/format/metrics_clear",
	    "config1:0");
}

/*
 * Lunar Lake's cpu_atom strings: the kernel's lnl_hybrid_events_attrs
 * (arch/x86/events/intel/core.c: td_retiring_lnl, td_bad_spec_adl,
 * td_fe_bound_lnl, td_be_bound_lnl, cpu_atom's half of each), and its
 * caps/pmu_name.
 */
/* That model in /proc/cpuinfo, its encodings (emu_generic.c). */
void emu_hsw_model(unsigned model)
{
	emu.v45_model = model;
	put("cpuinfo", emu_cpuinfo());
}

void emu_hybrid_skymont(void)
{
	emu.atom_skymont = true;
	emu.atom_width = 8;
	emu.gp_counters = 8;
	put("cpuinfo", emu_cpuinfo());
	put("cpu_atom/events/topdown-fe-bound", "event=0x9c,umask=0x01");
	put("cpu_atom/events/topdown-bad-spec", "event=0x73,umask=0x0");
	put("cpu_atom/events/topdown-retiring", "event=0xc2,umask=0x02");
	put("cpu_atom/events/topdown-be-bound", "event=0xa4,umask=0x02");
	put("cpu_core/caps/pmu_name", "lunarlake_hybrid");
}

/*
 * Meteor Lake (arch/x86/events/intel/core.c intel_pmu_init, case
 * INTEL_METEORLAKE_L: intel_pmu_init_hybrid(hybrid_big_small), cpu_core
 * by intel_pmu_init_glc, PERF_METRICS with level 2, num_topdown_events
 * 8, as the Alder Lake profile's P-cores; cpu_atom by intel_pmu_init_grt
 * with intel_cmt_extra_regs; td_attr = adl_hybrid_events_attrs, so
 * cpu_atom's topdown-* strings are the adl ones emu_sysfs_create wrote).
 * Each core type's counters from CPUID leaf 0x23 (update_pmu_cap,
 * added with Meteor Lake's support): 8 general counters on Crestmont as
 * on Redwood Cove.  Crestmont is 6 wide (perf's mtl-metrics.json,
 * cpu_atom: 6 * CPU_CLK_UNHALTED.CORE).
 */
void emu_hybrid_crestmont(void)
{
	emu.atom_crestmont = true;
	emu.atom_width = 6;
	emu.gp_counters = 8;
	put("cpuinfo", emu_cpuinfo());
	put("cpu_core/caps/pmu_name", "meteorlake_hybrid");
}

/* /sys/devices/system/cpu/smt/active, served from the fake tree. */
void emu_sysfs_smt(bool active)
{
	put("smt_active", active ? "1" : "0");
}

void emu_sysfs_write_knob(int value)
{
	char val[8];

	snprintf(val, sizeof(val), "%d", value);
	put(emu.profile == EMU_ADL ? "cpu_core/rdpmc" : "cpu/rdpmc", val);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* No system("rm"): a child would inherit LD_PRELOAD and TD_EMULATE. */
void emu_sysfs_remove(void)
{
	if (!emu.sysfs_root[0])
		return;
	nftw(emu.sysfs_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	emu.sysfs_root[0] = '\0';
}

/* Map a path under the PMU directory into the fake tree; else NULL. */
const char *emu_sysfs_redirect(const char *path, char *buf, size_t len)
{
	if (emu.sysfs_root[0] && strcmp(path, "/proc/cpuinfo") == 0) {
		snprintf(buf, len, "%s/cpuinfo", emu.sysfs_root);
		return buf;
	}
	if (emu.sysfs_root[0] &&
	    strcmp(path, "/sys/devices/system/cpu/smt/active") == 0) {
		snprintf(buf, len, "%s/smt_active", emu.sysfs_root);
		return buf;
	}
	if (emu.sysfs_root[0] && emu.arm &&
	    strcmp(path, "/proc/sys/kernel/perf_user_access") == 0) {
		snprintf(buf, len, "%s/perf_user_access", emu.sysfs_root);
		return buf;
	}
	/* Arm MIDR_EL1: /sys/devices/system/cpu/cpu<N>/regs/... only */
	if (emu.sysfs_root[0] && emu.arm &&
	    strncmp(path, CPUS "cpu", strlen(CPUS) + 3) == 0 &&
	    path[strlen(CPUS) + 3] >= '0' && path[strlen(CPUS) + 3] <= '9') {
		snprintf(buf, len, "%s/sys_cpu/%s", emu.sysfs_root,
			 path + strlen(CPUS));
		return buf;
	}
	if (emu.sysfs_root[0] && strlen(path) == strlen(PMUS) - 1 &&
	    strncmp(path, PMUS, strlen(path)) == 0) {
		snprintf(buf, len, "%s", emu.sysfs_root); /* the listing */
		return buf;
	}
	if (!emu.sysfs_root[0] || strncmp(path, PMUS, strlen(PMUS)) != 0)
		return NULL;
	snprintf(buf, len, "%s/%s", emu.sysfs_root, path + strlen(PMUS));
	return buf;
}
