/* SPDX-License-Identifier: MIT */
/*
 * The independent reference on PERF_METRICS: the kernel's own counts of
 * the library's group.
 *
 * Why not a second group: fixed counter 3 (SLOTS) and PERF_METRICS exist
 * once per core, so a second TopDown group of the thread would be
 * multiplexed with the library's, never counting at the same time; and
 * a read(2) of an active TopDown group makes the kernel fold the
 * registers into the events' counts and zero them (arch/x86/events/
 * intel/core.c, intel_update_topdown_event via intel_pmu_read_topdown_
 * event).  So the validator reads the library's group itself, right
 * before each region begins and right after it ends: the kernel's
 * per-event counts (slots, and each metric as slots x field / 0xff, its
 * own arithmetic, mul_u64_u32_div) over exactly that stretch, and
 * nothing of the library's arithmetic.  No region spans these reads;
 * the library sees each as a foreign reset between regions (counted in
 * td_info.foreign_resets) and must not flag regions for it.
 *
 * libtopdown does not expose its descriptors, so the library's are found
 * as the perf_event descriptors (/proc/self/fd links to
 * "anon_inode:[perf_event]") that td_open created; its SLOTS leader is
 * the lowest of them (opened first: descriptors are allocated lowest
 * first), read with the library's read_format (PERF_FORMAT_GROUP |
 * TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING; group.c), whose member order
 * is SLOTS then the metric events in PERF_METRICS byte order.  The
 * member count is checked against sysfs before any figure is trusted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "validate.h"

static bool is_perf_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[perf_event]") == 0;
}

/* Sorted list of this process's perf_event descriptors. */
int v_perf_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' &&
		    fd != dirfd(d) && is_perf_fd(fd))
			fds[n++] = fd;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort: a handful */
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	return n;
}

static bool in(const int *a, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (a[i] == x)
			return true;
	return false;
}

/* The library's first descriptor: the lowest one new since td_open. */
static int first_new_fd(const int *before, int nbefore)
{
	int fds[64], n = v_perf_fds(fds, 64);

	for (int i = 0; i < n; i++)
		if (!in(before, nbefore, fds[i]))
			return fds[i];
	return -1;
}

static int no_fd(struct v_kref *k)
{
	snprintf(k->why, sizeof(k->why), "no perf_event descriptor of the "
		 "library found in /proc/self/fd");
	return -ENOENT;
}

int v_kref_find(struct v_kref *k, const int *before, int nbefore,
		unsigned nr_metrics)
{
	struct v_counts c;

	k->nr_metrics = nr_metrics;
	k->members = 1 + nr_metrics;
	k->leader = k->any_fd = first_new_fd(before, nbefore);
	if (k->leader < 0)
		return no_fd(k);
	if (v_kref_read(k, &c) < 0) {
		k->leader = -1;
		return -EIO;
	}
	return 0;
}

int v_kref_read(const struct v_kref *k, struct v_counts *c)
{
	uint64_t buf[3 + 16];
	ssize_t n;
	struct v_kref *mk = (struct v_kref *)k;

	memset(c, 0, sizeof(*c));
	if (k->leader < 0)
		return -ENOENT;
	n = read(k->leader, buf, sizeof(buf));
	if (n < (ssize_t)(4 * sizeof(uint64_t)) ||
	    buf[0] != k->members ||
	    (size_t)n != (3 + buf[0]) * sizeof(uint64_t)) {
		snprintf(mk->why, sizeof(mk->why),
			 "the library's group read back %zd bytes, %llu "
			 "members, expected %u", n,
			 n >= 8 ? (unsigned long long)buf[0] : 0ull,
			 k->members);
		return -EIO;
	}
	c->enabled = buf[1];
	c->running = buf[2];
	if (k->uop_fd >= 0)
		c->uop_ok = read(k->uop_fd, &c->uop, sizeof(c->uop)) ==
			    (ssize_t)sizeof(c->uop);
	if (k->model.formula != V_F_NONE) {
		for (unsigned i = 0; i < k->members && i < 8; i++)
			c->raw[i] = buf[3 + i];
		v_model_totals(&k->model, c);
		return 0;
	}
	c->slots = buf[3];
	for (unsigned i = 0; i < k->nr_metrics && i < 8; i++)
		c->cat[i] = buf[4 + i];
	return 0;
}

/*
 * The members a read(2) of the first new perf descriptor returns, which
 * must be a group this CPU's model knows: else no reference (SKIP with
 * the reason), never a guess.
 */
int v_kref_find_counters(struct v_kref *k, const int *before, int nbefore,
			 const struct td_info *info)
{
	uint64_t buf[3 + 16];
	struct v_counts c;
	ssize_t n;

	k->leader = k->any_fd = -1;
	if (v_model_detect(&k->model, k->why, sizeof(k->why)) < 0)
		return -ENOSYS;
	k->any_fd = first_new_fd(before, nbefore);
	if (k->any_fd < 0)
		return no_fd(k);
	n = read(k->any_fd, buf, sizeof(buf));
	if (n < (ssize_t)(4 * sizeof(uint64_t)) ||
	    v_model_members(&k->model, (unsigned)buf[0], info) < 0) {
		snprintf(k->why, sizeof(k->why), "the library's group read "
			 "back %llu members, not a %s group of %s",
			 n >= 8 ? (unsigned long long)buf[0] : 0ull,
			 k->model.name, k->model.source);
		return -EPROTO;
	}
	k->members = k->model.members;
	k->leader = k->any_fd;
	if (v_kref_read(k, &c) < 0) {
		k->leader = -1;
		return -EIO;
	}
	return 0;
}

bool v_kref_fractions(const struct v_kref *k, const struct v_counts *a,
		      const struct v_counts *b, double l1[4], uint64_t *slots)
{
	if (k->model.formula != V_F_NONE)
		return v_model_fractions(&k->model, a, b, l1, slots);
	return v_ref_fractions(a, b, l1, slots);
}

int v_foreign_read(const struct v_kref *k)
{
	uint64_t buf[3 + 16];

	if (k->any_fd < 0)
		return -ENOENT;
	return read(k->any_fd, buf, sizeof(buf)) > 0 ? 0 : -errno;
}

/* Voluntary and involuntary context switches of this thread so far. */
static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

void v_ref_begin(const struct v_kref *k, struct v_ref *r)
{
	memset(r, 0, sizeof(*r));
	r->kern_ok = v_kref_read(k, &r->kern0) == 0;
	r->truth_ok = v_emu_truth(&r->truth0);
	r->switches0 = switches();
}

void v_ref_end(const struct v_kref *k, struct v_ref *r)
{
	r->switches1 = switches();
	r->kern_ok = r->kern_ok && v_kref_read(k, &r->kern1) == 0;
	r->truth_ok = r->truth_ok && v_emu_truth(&r->truth1);
}

/*
 * The cores whose perf lists subtract INT_MISC.UOP_DROPPING from
 * tma_frontend_bound (icelake/icl-metrics.json, sapphirerapids/
 * spr-metrics.json, alderlake/adl-metrics.json Unit cpu_core; not
 * lunarlake/lnl-metrics.json, arrowlake/arl-metrics.json, whose cores
 * offer format/metrics_clear): their caps/pmu_name.
 */
static uint64_t perf_refines(const struct td_info *info)
{
	static const char *const pmus[] = { "icelake", "sapphire_rapids",
					    "alderlake_hybrid" };
	/* INT_MISC.UOP_DROPPING: UMask 0x10, EventCode 0x0d on Ice Lake,
	 * 0xad on Golden Cove (each core's pipeline.json) */
	static const uint64_t config[] = { 0x0d | 0x10 << 8,
					   0xad | 0x10 << 8,
					   0xad | 0x10 << 8 };
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/"
		 "format/metrics_clear", info->pmu_name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (strncmp(info->uarch, pmus[i], strlen(pmus[i])) == 0)
			return config[i];
	return 0;
}

void v_kref_open_uop(struct v_kref *k, const struct td_info *info)
{
	struct perf_event_attr attr;
	uint64_t config = perf_refines(info);

	k->uop_fd = -1;
	if (k->leader < 0 || !config)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = info->pmu_type;
	attr.config = config;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	k->uop_fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
				 PERF_FLAG_FD_CLOEXEC);
}

bool v_ref_fractions(const struct v_counts *a, const struct v_counts *b,
		     double l1[4], uint64_t *slots)
{
	uint64_t s = b->slots - a->slots, sum = 0;

	*slots = s;
	for (int i = 0; i < 4; i++)
		sum += b->cat[i] - a->cat[i];
	if (!s || !sum)
		return false;
	/* A plain ratio; the level-1 counts sum to the slots within the
	 * kernel's rounding, so divide by their sum, as perf's metrics do. */
	for (int i = 0; i < 4; i++)
		l1[i] = (double)(b->cat[i] - a->cat[i]) / (double)sum;
	/*
	 * perf's tma_frontend_bound less INT_MISC.UOP_DROPPING /
	 * tma_info_thread_slots, and its tma_bad_speculation, max(1 -
	 * (frontend + backend + retiring), 0), taking it
	 */
	if (a->uop_ok && b->uop_ok) {
		double d = (double)(b->uop - a->uop) / (double)s;

		l1[2] -= d; /* PERF_METRICS byte order: frontend bound */
		l1[1] = fmax(1 - (l1[0] + l1[2] + l1[3]), 0);
	}
	return true;
}

/*
 * How far a region may be from a reference of the same stretch: its own
 * err; on PERF_METRICS one 8-bit step (1/255) for the kernel's
 * quantisation of the stretch, plus one per context switch (each
 * schedule-in writes the saved 8-bit PERF_METRICS back, then the
 * kernel's count resumes from that word), none on ordinary counters
 * (exact); and the share of the reference's slots outside the region
 * (the library's begin/end code and the read(2) wrappers), which may all
 * belong to one category.  0.002 more for skew: the fast path reads the
 * members one after another while the thread runs, a few instructions
 * apart, where a read(2) takes them all at once (user-mode counting
 * stopped in the kernel) - tens of slots against regions of at least
 * TD_SHORT_SLOTS (20,000).  On ordinary counters err also covers how
 * perf's formulas (divided by the slots) differ from the library's
 * normalisation by the sum of the categories: |slots - sum| / sum.
 */
double v_tolerance(const struct v_kref *k, const struct td_result *res,
		   uint64_t ref_slots, long sw)
{
	double outside = 0, quant = 0;

	if (ref_slots > res->slots)
		outside = (double)(ref_slots - res->slots) / (double)ref_slots;
	if (k->model.formula == V_F_NONE)
		quant = (1.0 + (double)sw) / 255.0;
	return res->err + quant + outside + 0.002;
}
