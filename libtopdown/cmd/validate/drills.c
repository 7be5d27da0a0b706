/* SPDX-License-Identifier: MIT */
/*
 * Check 3: fault drills on the real kernel.  Each drill region runs the
 * retiring workload, then the event, then the memory workload, so that a
 * reading that lost track of the event gives a visibly wrong mix; each
 * region must agree with the kernel's counts of the same stretch (and,
 * emulated, with the emulator's truth) within its tolerance, or be
 * flagged TD_RESULT_UNRELIABLE.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "validate.h"

#define V_DRILL_REGIONS 3

enum v_drill { V_D_SLEEP, V_D_MIGRATE, V_D_FOREIGN_READ, V_D_WATCHDOG };

struct v_drill_ctx {
	const struct v_kref *k;
	const struct v_opts *o;
	int cpus[2];            /* migration: from, to */
	double watchdog_s;      /* seconds a watchdog region must last */
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The event in the middle of a drill region; false: could not happen. */
static bool drill_event(enum v_drill d, const struct v_drill_ctx *c)
{
	switch (d) {
	case V_D_SLEEP:
		sleep_ms(2);
		return true;
	case V_D_MIGRATE:
		pin(c->cpus[1]);
		return sched_getcpu() == c->cpus[1];
	case V_D_FOREIGN_READ:
		return v_foreign_read(c->k) == 0;
	case V_D_WATCHDOG:
		if (c->o->emulated)
			return v_emu_pmi();
		/* span the watchdog's period: its counter overflows */
		for (double t0 = now_s(); now_s() - t0 < c->watchdog_s;)
			v_kernel_run(V_K_RETIRING);
		return true;
	}
	return false;
}

struct v_drill_out {
	unsigned right, flagged, wrong, missed;
	double worst;
	char first_bad[200];
};

/*
 * max_err: V_MAX_ERR for the outer region, which begins right after the
 * reference's read zeroed the registers; the inner one begins after two
 * thirds of the stretch, so its err is about three times larger
 * ((S_begin + S_end + S per schedule-in) / (255 x its slots)).
 */
static void judge(const struct v_kref *k, const struct td_result *res,
		  const struct v_ref *ref, double max_err,
		  struct v_drill_out *out)
{
	double kl1[4], tl1[4], dev = 0, tol = 0;
	uint64_t ks = 0, ts = 0;
	bool bad = false;

	if (res->flags & TD_RESULT_UNRELIABLE) {
		out->flagged++;
		return;
	}
	if (ref->kern_ok &&
	    v_kref_fractions(k, &ref->kern0, &ref->kern1, kl1, &ks)) {
		tol = v_tolerance(k, res, ks, ref->switches1 - ref->switches0);
		for (int i = 0; i < 4; i++) {
			double x = res->l1[i] - kl1[i];
			x = x < 0 ? -x : x;
			dev = x > dev ? x : dev;
		}
		bad = dev > tol || res->slots > ks ||
		      (double)(ks - res->slots) > V_MAX_OUTSIDE * (double)ks;
	}
	if (ref->truth_ok && v_ref_fractions(&ref->truth0, &ref->truth1, tl1, &ts)) {
		double out_share = ts > res->slots
			? (double)(ts - res->slots) / (double)ts : 0;
		/* one 8-bit step per schedule-in is inside res->err */
		tol = res->err + out_share + 0.002;
		bad |= out_share > V_MAX_OUTSIDE;
		for (int i = 0; i < 4; i++) {
			double x = res->l1[i] - tl1[i];
			x = x < 0 ? -x : x;
			if (x > tol)
				bad = true;
			dev = x > dev ? x : dev;
		}
	}
	bad |= res->err > max_err;
	out->worst = dev > out->worst ? dev : out->worst;
	if (getenv("TD_VALIDATE_DEBUG"))
		fprintf(stderr, "drill: slots %llu err %.4f flags %#x l1 %.3f "
			"%.3f %.3f %.3f kern %llu truth %llu dev %.4f tol %.4f\n",
			(unsigned long long)res->slots, res->err, res->flags,
			res->l1[0], res->l1[1], res->l1[2], res->l1[3],
			(unsigned long long)ks, (unsigned long long)ts, dev, tol);
	if (!bad) {
		out->right++;
		return;
	}
	out->wrong++;
	if (!out->first_bad[0])
		snprintf(out->first_bad, sizeof(out->first_bad),
			 "unflagged region off by %.4f (err %.4f, slots %llu, "
			 "kernel %llu)", dev, res->err,
			 (unsigned long long)res->slots,
			 (unsigned long long)ks);
}

/*
 * A drill region O, bracketed by the kernel's reads (kref.c), begins with
 * the counters just reset by the first read; a reset right after a reset
 * that is then followed by more slots than were counted before it cannot
 * be told from normal counting (README, Known limits), so O first runs
 * twice the work of the rest (both workloads of the drill, twice), as a
 * program that has counted for a while would, and the drill happens
 * inside an inner region I nested in it.  O is judged against the references; I, which no reference
 * brackets, against the emulator's truth where there is one.
 */
static void run_drill(struct td *td, enum v_drill d,
		      const struct v_drill_ctx *c, struct v_drill_out *out)
{
	for (int i = 0; i < V_DRILL_REGIONS; i++) {
		struct td_region outer, inner;
		struct td_result res, ires;
		struct v_ref ref, iref;
		bool happened;

		memset(&outer, 0, sizeof(outer));
		memset(&inner, 0, sizeof(inner));
		if (d == V_D_MIGRATE)
			pin(c->cpus[0]);
		v_emu_set_mix(v_kernels[V_K_BE_CORE].emu_mix);
		v_ref_begin(c->k, &ref);
		if (td_region_begin(td, &outer) < 0)
			continue;
		for (int j = 0; j < 2; j++) {
			v_kernel_run(V_K_RETIRING);
			v_kernel_run(V_K_BE_MEMORY);
		}
		v_emu_set_mix(v_kernels[V_K_RETIRING].emu_mix);
		memset(&iref, 0, sizeof(iref));
		iref.truth_ok = v_emu_truth(&iref.truth0);
		td_region_begin(td, &inner);
		v_kernel_run(V_K_RETIRING);
		happened = drill_event(d, c);
		v_emu_set_mix(v_kernels[V_K_BE_MEMORY].emu_mix);
		v_kernel_run(V_K_BE_MEMORY);
		if (td_region_end(td, &inner, &ires) < 0 ||
		    td_region_end(td, &outer, &res) < 0)
			continue;
		iref.truth_ok = iref.truth_ok && v_emu_truth(&iref.truth1);
		v_ref_end(c->k, &ref);
		if (!happened) {
			out->missed++;
			continue;
		}
		judge(c->k, &res, &ref, V_MAX_ERR, out);
		if (iref.truth_ok)
			judge(c->k, &ires, &iref, 3 * V_MAX_ERR, out);
	}
	v_emu_set_mix(NULL);
}

static void report(struct v_report *r, const char *name,
		   const struct v_drill_out *out)
{
	v_add(r, name, out->wrong || !(out->right + out->flagged)
		       ? V_FAIL : V_PASS,
	      "%u right, %u flagged, %u wrong and unflagged, %u where the "
	      "event did not happen (max |diff| of unflagged %.4f)%s%s",
	      out->right, out->flagged, out->wrong, out->missed, out->worst,
	      out->first_bad[0] ? ": " : "", out->first_bad);
	v_figure(r, name, "{\"right\": %u, \"flagged\": %u, \"wrong\": %u, "
		 "\"missed\": %u, \"max_dev\": %.5f}", out->right,
		 out->flagged, out->wrong, out->missed, out->worst);
}

static int read_int_file(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* Two CPUs this thread may run on: the current one and another. */
static bool two_cpus(int cpus[2], cpu_set_t *orig)
{
	int cur = sched_getcpu();

	if (sched_getaffinity(0, sizeof(*orig), orig) < 0)
		return false;
	cpus[0] = cur >= 0 && CPU_ISSET(cur, orig) ? cur : -1;
	cpus[1] = -1;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, orig))
			continue;
		if (cpus[0] < 0)
			cpus[0] = i;
		else if (i != cpus[0] && cpus[1] < 0)
			cpus[1] = i;
	}
	return cpus[0] >= 0 && cpus[1] >= 0;
}

void v_check_drills(struct td *td, const struct v_kref *k,
		    const struct v_opts *o, struct v_report *r)
{
	struct v_drill_ctx c = { .k = k, .o = o };
	struct v_drill_out out;
	cpu_set_t orig;
	int wd;

	if (k->leader < 0) {
		v_add(r, "drill", V_SKIP, "no reference: %s", k->why);
		return;
	}
	memset(&out, 0, sizeof(out));
	run_drill(td, V_D_SLEEP, &c, &out);
	report(r, "drill sleep", &out);

	memset(&out, 0, sizeof(out));
	if (!two_cpus(c.cpus, &orig)) {
		v_add(r, "drill migration", V_SKIP,
		      "this thread may run on one CPU only");
	} else if (strcmp(r->info.pmu_name, "cpu_core") == 0) {
		/* hybrid: the reference group counts P-cores only */
		v_add(r, "drill migration", V_SKIP, "hybrid part: CPU %d to "
		      "%d only; between core types no kernel reference "
		      "covers both", c.cpus[0], c.cpus[1]);
	} else {
		run_drill(td, V_D_MIGRATE, &c, &out);
		sched_setaffinity(0, sizeof(orig), &orig);
		report(r, "drill migration", &out);
	}

	memset(&out, 0, sizeof(out));
	run_drill(td, V_D_FOREIGN_READ, &c, &out);
	report(r, "drill foreign read", &out);

	memset(&out, 0, sizeof(out));
	wd = read_int_file("/proc/sys/kernel/nmi_watchdog", 0);
	c.watchdog_s = read_int_file("/proc/sys/kernel/watchdog_thresh", 10) + 1;
	if (o->emulated) {
		run_drill(td, V_D_WATCHDOG, &c, &out);
		report(r, "drill watchdog PMI", &out);
	} else if (!wd) {
		v_add(r, "drill watchdog PMI", V_SKIP,
		      "/proc/sys/kernel/nmi_watchdog is 0: no watchdog counter");
	} else if (!o->long_drills) {
		v_add(r, "drill watchdog PMI", V_SKIP, "the watchdog's counter "
		      "overflows every %.0f s; rerun with --long to span it",
		      c.watchdog_s - 1);
	} else {
		run_drill(td, V_D_WATCHDOG, &c, &out);
		report(r, "drill watchdog PMI", &out);
	}
}
