/* SPDX-License-Identifier: MIT */
/*
 * The independent reference on ordinary counters: the kernel's counts of
 * the library's group, turned into TopDown level 1 here, with perf's
 * metric formulas written out anew (none of the library's formula code).
 *
 * Why the library's own group again (kref.c explains it for
 * PERF_METRICS): a second group of the same events would need as many
 * counters again, which these PMUs do not have (Zen 4: 6 general-purpose
 * counters, the library's level 1 takes 6).  On ordinary counters a
 * read(2) of the group is exact and resets nothing: perf_event_read ->
 * x86_perf_event_update (arch/x86/events/core.c) adds the 48-bit
 * difference since the last update to the count and remembers the
 * register; the counter runs on, so the library's RDPMC readings (count
 * = page offset + register) are not disturbed.  The validator reads the
 * group right before each region begins and right after it ends.
 *
 * Which events, in which order: no system call reads an event's attr
 * back, so the model is decided here, independently, from /proc/cpuinfo
 * (vendor, family, model, as perf's tools/perf/pmu-events/arch/x86/
 * mapfile.csv picks a directory) and checked against the group's member
 * count.  The member order is the library's group order, level 1's
 * events in the order of the terms below (the one thing taken from the
 * library: it cannot be read back); a wrong order gives a breakdown
 * that disagrees with the library's and fails the check, never a pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate.h"

/* The terms of the formulas. */
enum v_term { T_CYC, T_FE, T_BE, T_SMT, T_DISP, T_RET, T_ISSUED, T_RECOV,
	      T_BAD, T_NONE };

/* Member order of each group: full, then with its one term left out. */
static const enum v_term zen_full[] = { T_CYC, T_FE, T_BE, T_SMT, T_DISP,
					T_RET };
static const enum v_term zen_short[] = { T_CYC, T_FE, T_BE, T_DISP, T_RET };
static const enum v_term v45_full[] = { T_CYC, T_FE, T_ISSUED, T_RET,
					T_RECOV };
static const enum v_term atom_full[] = { T_CYC, T_FE, T_BAD, T_RET, T_BE };
static const enum v_term atom_short[] = { T_CYC, T_FE, T_BAD, T_RET };

#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

/* The first processor's line "key<blanks>: value" of /proc/cpuinfo. */
static bool cpuinfo_field(const char *text, const char *key, char *out,
			  size_t n)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *q = p + kl;

		if (strncmp(p, key, kl) != 0)
			continue;
		q += strspn(q, " \t");
		if (*q != ':')
			continue;
		q += 1 + strspn(q + 1, " ");
		snprintf(out, n, "%.*s", (int)strcspn(q, "\n"), q);
		return true;
	}
	return false;
}

/* open/read, not stdio: the emulator serves its CPU's cpuinfo there. */
static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	return 0;
}

static void set_model(struct v_model *m, enum v_formula f, unsigned width,
		      const char *name, const char *source)
{
	m->formula = f;
	m->width = width;
	m->name = name;
	m->source = source;
}

/*
 * AMD (mapfile.csv): family 25 is amdzen3 for models 0x00-0x0f,
 * 0x20-0x5f and amdzen4 for the rest; family 26 amdzen5.  Zen 3 has no
 * PipelineL1 metrics: no reference.
 */
static bool amd_model(unsigned family, unsigned model, struct v_model *m)
{
	unsigned hi = model >> 4;

	if (family == 25 && !(hi == 0 || (hi >= 2 && hi <= 5)))
		set_model(m, V_F_ZEN, 6, "zen4",
			  "perf amdzen4/recommended.json PipelineL1");
	else if (family == 26)
		set_model(m, V_F_ZEN, 8, "zen5",
			  "perf amdzen5/recommended.json PipelineL1");
	return m->formula != V_F_NONE;
}

/*
 * Intel family 6 (mapfile.csv, model numbers as the kernel's
 * asm/intel-family.h names them): the V4.5 cores' TopdownL1 (skylake,
 * skylakex, cascadelakex, haswell, haswellx, broadwell*: the same four
 * metrics); the standalone Atom cores with TOPDOWN_*.ALL events whose
 * metric files perf has: Gracemont (alderlaken, adln-metrics.json, 5
 * wide) and Crestmont (sierraforest srf-metrics.json, grandridge
 * grr-metrics.json, 6 wide).
 */
static bool intel_model(unsigned family, unsigned model, struct v_model *m)
{
	if (family != 6)
		return false;
	switch (model) {
	case 0x4e: case 0x5e: case 0x8e: case 0x9e: case 0xa5: case 0xa6:
	case 0x55:
		set_model(m, V_F_V45, 4, "skylake",
			  "perf skylake/skl-metrics.json TopdownL1");
		break;
	case 0x3c: case 0x45: case 0x46: case 0x3f:
		set_model(m, V_F_V45, 4, "haswell",
			  "perf haswell/hsw-metrics.json TopdownL1");
		break;
	case 0x3d: case 0x47: case 0x4f: case 0x56:
		set_model(m, V_F_V45, 4, "broadwell",
			  "perf broadwell/bdw-metrics.json TopdownL1");
		break;
	case 0xbe:
		set_model(m, V_F_ATOM, 5, "gracemont",
			  "perf alderlaken/adln-metrics.json TopdownL1");
		break;
	case 0xaf: case 0xb6:
		set_model(m, V_F_ATOM, 6, "crestmont",
			  "perf sierraforest/srf-metrics.json TopdownL1");
		break;
	default:
		return false;
	}
	return true;
}

/* /sys/devices/system/cpu/smt/active: "1" with SMT on. */
static bool smt_active(void)
{
	char buf[8];

	return read_text("/sys/devices/system/cpu/smt/active", buf,
			 sizeof(buf)) == 0 && buf[0] == '1';
}

int v_model_detect(struct v_model *m, char *why, size_t n)
{
	static char text[8192];
	char vendor[32] = "", fam[16] = "", mod[16] = "";
	unsigned family, model;

	memset(m, 0, sizeof(*m));
	if (read_text("/proc/cpuinfo", text, sizeof(text)) < 0 ||
	    !cpuinfo_field(text, "vendor_id", vendor, sizeof(vendor)) ||
	    !cpuinfo_field(text, "cpu family", fam, sizeof(fam)) ||
	    !cpuinfo_field(text, "model", mod, sizeof(mod))) {
		snprintf(why, n, "ordinary counters: no x86 vendor, family and "
			 "model in /proc/cpuinfo (Arm Neoverse: the "
			 "cross-check is not implemented there yet)");
		return -ENOSYS;
	}
	family = (unsigned)strtoul(fam, NULL, 10);
	model = (unsigned)strtoul(mod, NULL, 10);
	if (strcmp(vendor, "AuthenticAMD") == 0)
		amd_model(family, model, m);
	else if (strcmp(vendor, "GenuineIntel") == 0)
		intel_model(family, model, m);
	if (m->formula == V_F_NONE) {
		snprintf(why, n, "ordinary counters: no independent formula "
			 "here for %s family %u model %#x (implemented: Zen 4/5, "
			 "V4.5 Haswell..Cascade Lake, Gracemont, Crestmont)",
			 vendor, family, model);
		return -ENOSYS;
	}
	return 0;
}

/* The member order of a group of nr members, or NULL: not this model's. */
static const enum v_term *order(const struct v_model *m, unsigned nr)
{
	switch (m->formula) {
	case V_F_ZEN:
		return nr == N(zen_full) ? zen_full
		       : nr == N(zen_short) ? zen_short : NULL;
	case V_F_V45:
		return nr == N(v45_full) ? v45_full : NULL;
	case V_F_ATOM:
		return nr == N(atom_full) ? atom_full
		       : nr == N(atom_short) ? atom_short : NULL;
	default:
		return NULL;
	}
}

int v_model_members(struct v_model *m, unsigned nr, const struct td_info *i)
{
	if (!order(m, nr))
		return -EPROTO;
	m->members = nr;
	/* skl-metrics.json's #SMT_on form: CPU_CLK_UNHALTED.THREAD_ANY / 2
	 * and INT_MISC.RECOVERY_CYCLES_ANY / 2, which the library opens
	 * unless the kernel refused AnyThread (then it flags itself
	 * approximate with TD_INFO_SMT_PER_THREAD and counts per thread). */
	m->smt_any = m->formula == V_F_V45 && smt_active() &&
		     !(i->flags & TD_INFO_SMT_PER_THREAD);
	return 0;
}

/* Delta of term t between two readings; false when not counted. */
static bool term(const struct v_model *m, const struct v_counts *a,
		 const struct v_counts *b, enum v_term t, double *out)
{
	const enum v_term *ord = order(m, m->members);

	for (unsigned i = 0; ord && i < m->members; i++)
		if (ord[i] == t) {
			*out = (double)(b->raw[i] - a->raw[i]);
			return true;
		}
	*out = 0;
	return false;
}

static double delta(const struct v_model *m, const struct v_counts *a,
		    const struct v_counts *b, enum v_term t)
{
	double v;

	term(m, a, b, t, &v);
	return v;
}

#define TERM(t) delta(m, a, b, (t))

/*
 * Each formula in slots: *slots and cat[] (td_l1 order: retiring, bad
 * speculation, frontend, backend), from a delta of two readings.
 */
static void zen(const struct v_model *m, const struct v_counts *a,
		const struct v_counts *b, double *slots, double cat[4])
{
	/* total_dispatch_slots = W * ls_not_halted_cyc (W 6 on Zen 4, 8 on
	 * Zen 5); frontend_bound =
	 * de_no_dispatch_per_slot.no_ops_from_frontend / slots; backend_bound
	 * = de_no_dispatch_per_slot.backend_stalls / slots; retiring =
	 * ex_ret_ops / slots; bad_speculation = (de_src_op_disp.all -
	 * ex_ret_ops) / slots.  smt_contention is a fifth share, not one of
	 * these four. */
	*slots = m->width * TERM(T_CYC);
	cat[TD_RETIRING] = TERM(T_RET);
	cat[TD_BAD_SPEC] = TERM(T_DISP) - cat[TD_RETIRING];
	cat[TD_FE_BOUND] = TERM(T_FE);
	cat[TD_BE_BOUND] = TERM(T_BE);
}

static void v45(const struct v_model *m, const struct v_counts *a,
		const struct v_counts *b, double *slots, double cat[4])
{
	double div = m->smt_any ? 2 : 1;

	/* SLOTS = 4 * CORE_CLKS; CORE_CLKS = CPU_CLK_UNHALTED.THREAD (SMT
	 * off) or THREAD_ANY / 2; tma_frontend_bound =
	 * IDQ_UOPS_NOT_DELIVERED.CORE / SLOTS; tma_bad_speculation =
	 * (UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + 4 *
	 * Recovery_Cycles) / SLOTS; tma_retiring = RETIRE_SLOTS / SLOTS;
	 * tma_backend_bound = 1 - the other three. */
	*slots = m->width * (TERM(T_CYC) / div);
	cat[TD_FE_BOUND] = TERM(T_FE);
	cat[TD_RETIRING] = TERM(T_RET);
	cat[TD_BAD_SPEC] = TERM(T_ISSUED) - cat[TD_RETIRING] +
			   m->width * (TERM(T_RECOV) / div);
	cat[TD_BE_BOUND] = *slots - cat[TD_FE_BOUND] - cat[TD_BAD_SPEC] -
			   cat[TD_RETIRING];
}

static void atom(const struct v_model *m, const struct v_counts *a,
		 const struct v_counts *b, double *slots, double cat[4])
{
	/* SLOTS = W * CPU_CLK_UNHALTED.CORE; tma_<category> =
	 * TOPDOWN_<CATEGORY>.ALL / SLOTS.  Without TOPDOWN_BE_BOUND.ALL
	 * (counters short), backend as the rest of the slots: an
	 * inference (the four events classify every slot once). */
	*slots = m->width * TERM(T_CYC);
	cat[TD_FE_BOUND] = TERM(T_FE);
	cat[TD_BAD_SPEC] = TERM(T_BAD);
	cat[TD_RETIRING] = TERM(T_RET);
	if (!term(m, a, b, T_BE, &cat[TD_BE_BOUND]))
		cat[TD_BE_BOUND] = *slots - cat[TD_FE_BOUND] -
				   cat[TD_BAD_SPEC] - cat[TD_RETIRING];
}

void v_model_slots(const struct v_model *m, const struct v_counts *a,
		   const struct v_counts *b, double *slots, double cat[4])
{
	*slots = 0;
	memset(cat, 0, 4 * sizeof(cat[0]));
	if (m->formula == V_F_ZEN)
		zen(m, a, b, slots, cat);
	else if (m->formula == V_F_V45)
		v45(m, a, b, slots, cat);
	else if (m->formula == V_F_ATOM)
		atom(m, a, b, slots, cat);
}

/* Cumulative slots and categories since the group was opened. */
void v_model_totals(const struct v_model *m, struct v_counts *c)
{
	struct v_counts zero;
	double s, cat[4];

	memset(&zero, 0, sizeof(zero));
	v_model_slots(m, &zero, c, &s, cat);
	c->slots = s > 0 ? (uint64_t)s : 0;
	for (int i = 0; i < 4; i++)
		c->cat[i] = cat[i] > 0 ? (uint64_t)cat[i] : 0;
}

bool v_model_fractions(const struct v_model *m, const struct v_counts *a,
		       const struct v_counts *b, double l1[4], uint64_t *slots)
{
	double s, cat[4];

	v_model_slots(m, a, b, &s, cat);
	*slots = s > 0 ? (uint64_t)s : 0;
	if (!(s > 0))
		return false;
	/* perf's d_ratio(category, slots): no renormalisation */
	for (int i = 0; i < 4; i++)
		l1[i] = cat[i] / s;
	return true;
}
