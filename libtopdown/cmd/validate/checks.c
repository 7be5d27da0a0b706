/* SPDX-License-Identifier: MIT */
/*
 * Checks 1 and 2: each contrasting workload as many regions, its measured
 * breakdown against the category expected to dominate (workloads.c), and
 * every region against the kernel's own counts of the same stretch
 * (kref.c) and, emulated, the emulator's truth; then the library's region
 * totals against the whole thread's counts.
 */
#include <stdio.h>
#include <string.h>

#include "validate.h"

struct v_agg {
	double l1[TD_L1_COUNT], l2[TD_L2_COUNT]; /* slot-weighted sums */
	double ref_l1[TD_L1_COUNT];
	uint64_t slots, ref_slots;
	unsigned regions, flagged, with_l2, disagree, truth_disagree;
	double max_dev, max_truth_dev, max_err, max_outside;
	char first_bad[200];
};

/* Sums over every kernel, for the whole-thread check. */
struct v_sums {
	uint64_t slots;
	double cat[TD_L1_COUNT];
	double err_slots;
};

static double max_dev(const double a[4], const double b[4])
{
	double m = 0;

	for (int i = 0; i < 4; i++) {
		double d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
		m = d > m ? d : m;
	}
	return m;
}

/* One region against its references; returns false on disagreement. */
static bool compare(const struct v_kref *k, const struct td_result *res,
		    const struct v_ref *ref, struct v_agg *a)
{
	double kl1[4], tl1[4];
	uint64_t ks = 0, ts = 0;
	bool ok = true;

	if (ref->kern_ok &&
	    v_kref_fractions(k, &ref->kern0, &ref->kern1, kl1, &ks)) {
		double tol = v_tolerance(k, res, ks,
					 ref->switches1 - ref->switches0);
		double dev = max_dev(res->l1, kl1);
		double out = ks > res->slots ? (double)(ks - res->slots) / (double)ks
					     : 0;

		a->max_dev = dev > a->max_dev ? dev : a->max_dev;
		a->max_outside = out > a->max_outside ? out : a->max_outside;
		for (int i = 0; i < 4; i++)
			a->ref_l1[i] += kl1[i] * (double)ks;
		a->ref_slots += ks;
		/* the region lies inside the stretch: never more slots, and
		 * not much fewer (the library's own code between the reads) */
		if (dev > tol || res->slots > ks || out > V_MAX_OUTSIDE ||
		    res->err > V_MAX_ERR) {
			ok = false;
			a->disagree++;
			if (!a->first_bad[0])
				snprintf(a->first_bad, sizeof(a->first_bad),
					 "region slots %llu vs kernel %llu, "
					 "max |diff| %.4f, tolerance %.4f, "
					 "err %.4f",
					 (unsigned long long)res->slots,
					 (unsigned long long)ks, dev, tol,
					 res->err);
		}
	}
	if (ref->truth_ok && v_ref_fractions(&ref->truth0, &ref->truth1, tl1, &ts)) {
		double out = ts > res->slots ? (double)(ts - res->slots) / (double)ts
					     : 0;
		double dev = max_dev(res->l1, tl1);

		a->max_truth_dev = dev > a->max_truth_dev ? dev : a->max_truth_dev;
		if (dev > res->err + out + 0.002 || res->err > V_MAX_ERR) {
			ok = false;
			a->truth_disagree++;
		}
	}
	return ok;
}

static void add_region(const struct td_result *res, struct v_agg *a,
		       struct v_sums *s)
{
	double w = (double)res->slots;

	for (int i = 0; i < TD_L1_COUNT; i++) {
		a->l1[i] += res->l1[i] * w;
		s->cat[i] += res->l1[i] * w;
	}
	for (int i = 0; i < TD_L2_COUNT; i++)
		a->l2[i] += res->l2[i] * w;
	a->with_l2 += !!(res->flags & TD_RESULT_L2);
	a->slots += res->slots;
	a->max_err = res->err > a->max_err ? res->err : a->max_err;
	s->slots += res->slots;
	s->err_slots += res->err * w;
}

/* Does the expected category dominate?  why gets the figures. */
static bool dominates(const struct v_kernel_desc *d, const double l1[4],
		      const double l2[8], bool has_l2, char *why, size_t n)
{
	double v = l1[d->expect_l1];

	if (!(v > d->threshold)) {
		snprintf(why, n, "%s %.3f not above perf's threshold %.2f",
			 td_l1_name(d->expect_l1), v, d->threshold);
		return false;
	}
	for (int c = TD_BAD_SPEC; c <= TD_BE_BOUND; c++)
		if (d->expect_l1 != TD_RETIRING && c != d->expect_l1 &&
		    l1[c] >= v) {
			snprintf(why, n, "%s %.3f not above %s %.3f",
				 td_l1_name(d->expect_l1), v, td_l1_name(c),
				 l1[c]);
			return false;
		}
	if (has_l2 && d->expect_l2 >= 0) {
		double c = l2[d->expect_l2];
		int sib = d->expect_l2 ^ 1; /* mem/core, lat/bw, ... */

		if (!(c > d->l2_threshold) ||
		    (d->expect_l1 == TD_BE_BOUND && l2[sib] >= c)) {
			snprintf(why, n, "level 2 %s %.3f (threshold %.2f), "
				 "%s %.3f", td_l2_name(d->expect_l2), c,
				 d->l2_threshold, td_l2_name(sib), l2[sib]);
			return false;
		}
	}
	snprintf(why, n, "%s %.3f > %.2f", td_l1_name(d->expect_l1), v,
		 d->threshold);
	return true;
}

static void report_kernel(const struct v_kernel_desc *d, struct v_agg *a,
			  struct v_report *r, const struct v_kref *k)
{
	double l1[4] = { 0 }, l2[8] = { 0 }, rl1[4] = { 0 };
	char why[200], name[48];
	bool has_l2 = a->with_l2 && a->with_l2 == a->regions - a->flagged;
	bool ok;

	for (int i = 0; a->slots && i < 4; i++)
		l1[i] = a->l1[i] / (double)a->slots;
	for (int i = 0; a->slots && i < 8; i++)
		l2[i] = a->l2[i] / (double)a->slots;
	for (int i = 0; a->ref_slots && i < 4; i++)
		rl1[i] = a->ref_l1[i] / (double)a->ref_slots;
	ok = a->slots && dominates(d, l1, l2, has_l2, why, sizeof(why));
	snprintf(name, sizeof(name), "kernel %s", d->name);
	v_add(r, name, ok ? V_PASS : V_FAIL,
	      "%s%s; library: retiring %.3f bad_spec %.3f frontend %.3f "
	      "backend %.3f over %u regions (%u flagged)",
	      r->emulated ? "[EMULATED: the emulator's synthetic mix] " : "",
	      a->slots ? why : "no unflagged region", l1[0], l1[1], l1[2],
	      l1[3], a->regions, a->flagged);
	v_figure(r, name,
		 "{\"regions\": %u, \"flagged\": %u, \"slots\": %llu, "
		 "\"retiring\": %.5f, \"bad_speculation\": %.5f, "
		 "\"frontend_bound\": %.5f, \"backend_bound\": %.5f, "
		 "\"levels\": %d, \"heavy_operations\": %.5f, "
		 "\"light_operations\": %.5f, \"branch_mispredicts\": %.5f, "
		 "\"machine_clears\": %.5f, \"fetch_latency\": %.5f, "
		 "\"fetch_bandwidth\": %.5f, \"memory_bound\": %.5f, "
		 "\"core_bound\": %.5f, \"expected\": \"%s\", "
		 "\"threshold\": %.2f, \"max_err\": %.5f, "
		 "\"kernel_ref\": {\"slots\": %llu, \"retiring\": %.5f, "
		 "\"bad_speculation\": %.5f, \"frontend_bound\": %.5f, "
		 "\"backend_bound\": %.5f}, \"max_dev_kernel\": %.5f, "
		 "\"max_dev_truth\": %.5f, \"max_outside\": %.5f}",
		 a->regions, a->flagged, (unsigned long long)a->slots, l1[0],
		 l1[1], l1[2], l1[3], has_l2 ? 2 : 1, l2[0], l2[1], l2[2],
		 l2[3], l2[4], l2[5], l2[6], l2[7], td_l1_name(d->expect_l1),
		 d->threshold, a->max_err, (unsigned long long)a->ref_slots,
		 rl1[0], rl1[1], rl1[2], rl1[3], a->max_dev, a->max_truth_dev,
		 a->max_outside);
	snprintf(name, sizeof(name), "crosscheck %s", d->name);
	if (k->leader < 0) {
		v_add(r, name, V_SKIP, "%s", k->why);
		return;
	}
	v_add(r, name, a->disagree || a->truth_disagree || !a->ref_slots
		       ? V_FAIL : V_PASS,
	      "%u/%u regions disagree with the kernel's counts%s%s "
	      "(max |diff| %.4f, max err %.4f, max share outside the region "
	      "%.4f)%s%s; kernel: retiring %.3f bad_spec %.3f frontend %.3f "
	      "backend %.3f",
	      a->disagree, a->regions - a->flagged,
	      r->emulated ? ", with the emulator's truth " : "",
	      r->emulated ? (a->truth_disagree ? "disagree too" : "agree") : "",
	      a->max_dev, a->max_err, a->max_outside,
	      a->first_bad[0] ? ": first " : "", a->first_bad, rl1[0], rl1[1],
	      rl1[2], rl1[3]);
}

static void run_kernel(struct td *td, const struct v_kref *k,
		       const struct v_opts *o, enum v_kernel kk,
		       struct v_report *r, struct v_sums *s)
{
	const struct v_kernel_desc *d = &v_kernels[kk];
	struct v_agg a;

	memset(&a, 0, sizeof(a));
	v_emu_set_mix(d->emu_mix);
	v_kernel_run(kk); /* warm caches and predictors */
	for (int i = 0; i < o->regions; i++) {
		struct td_region reg;
		struct td_result res;
		struct v_ref ref;

		memset(&reg, 0, sizeof(reg));
		v_ref_begin(k, &ref);
		if (td_region_begin(td, &reg) < 0)
			continue;
		v_kernel_run(kk);
		if (td_region_end(td, &reg, &res) < 0)
			continue;
		v_ref_end(k, &ref);
		a.regions++;
		if (res.flags & TD_RESULT_UNRELIABLE) {
			a.flagged++;
			continue;
		}
		add_region(&res, &a, s);
		compare(k, &res, &ref, &a);
	}
	report_kernel(d, &a, r, k);
}

/*
 * The library's regions, all inside the thread's counting, cannot hold
 * more slots, or more of any category, than the kernel counted for the
 * thread's group since it was opened (the validator's handle never
 * resets: TD_RESET_NEVER, so the kernel's counts run from the start).
 */
static void whole_thread(struct td *td, const struct v_kref *k,
			 const struct v_sums *s, struct v_report *r)
{
	struct v_counts c;
	struct td_info info = { .size = sizeof(info) };
	bool ok;
	int bad = -1;

	td_query(td, &info);
	if (k->leader < 0 || v_kref_read(k, &c) < 0) {
		v_add(r, "whole thread", V_SKIP, "%s", k->why);
		return;
	}
	if (info.resets) {
		v_add(r, "whole thread", V_SKIP, "the library reset the "
		      "counters %llu times: the kernel's counts restarted",
		      (unsigned long long)info.resets);
		return;
	}
	ok = s->slots <= c.slots;
	for (int i = 0; i < 4; i++)
		if (s->cat[i] > (double)c.cat[i] + s->err_slots + 1) {
			ok = false;
			bad = i;
		}
	v_add(r, "whole thread", ok ? V_PASS : V_FAIL,
	      "regions %llu slots of the thread's %llu%s%s",
	      (unsigned long long)s->slots, (unsigned long long)c.slots,
	      bad >= 0 ? "; more than the thread's " : "",
	      bad >= 0 ? td_l1_name(bad) : "");
	v_figure(r, "whole thread",
		 "{\"region_slots\": %llu, \"thread_slots\": %llu, "
		 "\"region_retiring\": %.0f, \"thread_retiring\": %llu, "
		 "\"region_bad_speculation\": %.0f, \"thread_bad_speculation\": %llu, "
		 "\"region_frontend_bound\": %.0f, \"thread_frontend_bound\": %llu, "
		 "\"region_backend_bound\": %.0f, \"thread_backend_bound\": %llu, "
		 "\"err_slots\": %.0f}",
		 (unsigned long long)s->slots, (unsigned long long)c.slots,
		 s->cat[0], (unsigned long long)c.cat[0], s->cat[1],
		 (unsigned long long)c.cat[1], s->cat[2],
		 (unsigned long long)c.cat[2], s->cat[3],
		 (unsigned long long)c.cat[3], s->err_slots);
}

void v_check_kernels(struct td *td, const struct v_kref *k,
		     const struct v_opts *o, struct v_report *r)
{
	struct v_sums s;

	memset(&s, 0, sizeof(s));
	for (int kk = 0; kk < V_K_COUNT; kk++)
		run_kernel(td, k, o, (enum v_kernel)kk, r, &s);
	whole_thread(td, k, &s, r);
	v_emu_set_mix(NULL);
	r->whole_slots = s.slots;
	for (int i = 0; i < TD_L1_COUNT; i++)
		r->whole_l1[i] = s.slots ? s.cat[i] / (double)s.slots : 0;
}
