/* SPDX-License-Identifier: MIT */
/*
 * The perf_event system calls of the emulated kernel: the checks of
 * intel_pmu_hw_config and perf_event_open for TopDown groups, read(2),
 * the ioctls, mmap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"

#define EMU_SLOTS_CONFIG   0x0400u
#define EMU_METRIC_BASE    0x8000u
/* X86_ALL_EVENT_FLAGS: edge, pc, any, inv, cmask, in_tx, in_tx_cp. */
#define EMU_EVENT_FLAGS    (0xff000000ull | (1ull << 18) | (1ull << 19) | \
			    (1ull << 21) | (1ull << 23) | (3ull << 32))

struct emu_event *emu_event_of(int fd)
{
	if (fd < 0 || fd >= EMU_MAX_FD)
		return NULL;
	return emu.fds[fd];
}

static unsigned nr_metrics(void)
{
	return emu.l2 ? 8 : 4;
}

/* is_topdown_event: on INTEL_ARCH_EVENT_MASK (event + umask) only, so
 * that a TopDown config with filter bits still meets the EINVAL rules. */
static bool is_topdown_config(uint64_t config)
{
	uint64_t ev = config & 0xffff;

	return ev == EMU_SLOTS_CONFIG ||
	       (ev >= EMU_METRIC_BASE && ev <= 0x8700 && (ev & 0xff) == 0);
}

/* intel_pmu_hw_config's TopDown rules; every failure is EINVAL. */
static int check_topdown_attr(const struct perf_event_attr *a,
			      const struct emu_event *leader)
{
	if (a->config2 || (a->config & EMU_EVENT_FLAGS))
		return -EINVAL;
	if (a->config == EMU_SLOTS_CONFIG) /* config1 bit 0: metrics clear */
		return a->config1 & ~(uint64_t)emu.has_metrics_clear ? -EINVAL
								      : 0;
	if (a->config1)
		return -EINVAL;
	if (a->sample_period)
		return -EINVAL;
	if (!leader || leader->kind != EMU_EV_SLOTS ||
	    leader->attr.sample_period)
		return -EINVAL;
	return 0;
}

static int alloc_fd(unsigned long flags)
{
	int fd = emu_real_open("/dev/null",
			       O_RDONLY | (flags & PERF_FLAG_FD_CLOEXEC
						   ? O_CLOEXEC : 0), 0);

	if (fd < 0)
		return -errno;
	if (fd >= EMU_MAX_FD) {
		emu_real_close(fd);
		return -EMFILE;
	}
	return fd;
}

static struct emu_event *new_event(const struct perf_event_attr *attr, int fd)
{
	struct emu_event *e = calloc(1, sizeof(*e));
	uint64_t c = attr->config;

	e->fd = fd;
	e->attr = *attr;
	e->kind = EMU_EV_RAW;
	if (c == EMU_SLOTS_CONFIG)
		e->kind = EMU_EV_SLOTS;
	else if (c >= EMU_METRIC_BASE &&
		 ((c - EMU_METRIC_BASE) >> 8) < nr_metrics() &&
		 (c & 0xff) == 0) {
		/* is_available_metric_event: else scheduled as a raw event */
		e->kind = EMU_EV_METRIC;
		e->idx = (int)((c - EMU_METRIC_BASE) >> 8);
	}
	e->rdpmc_flag = emu.rdpmc_knob != 0;
	return e;
}

static bool same_exclude(const struct perf_event_attr *a,
			 const struct perf_event_attr *b)
{
	return a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv &&
	       a->exclude_idle == b->exclude_idle &&
	       a->exclude_host == b->exclude_host &&
	       a->exclude_guest == b->exclude_guest;
}

static int join_group(struct emu_event *e, struct emu_event *leader)
{
	struct emu_group *g;

	if (!leader) {
		g = calloc(1, sizeof(*g));
		g->owner = &emu_cpu;
		g->metrics_clear = e->kind == EMU_EV_SLOTS && (e->attr.config1 & 1);
		g->atom = e->attr.type == EMU_ATOM_TYPE;
		e->group = g;
		g->members[g->nr++] = e;
		if (e->kind == EMU_EV_GP && emu_cpu.gen_group)
			emu_cpu.gen_group2 = g; /* Arm level 2, Zen's mux */
		else if (e->kind == EMU_EV_GP)
			emu_cpu.gen_group = g;
		if (e->kind == EMU_EV_GP)
			emu_gen_add_group(g);
		if (!e->attr.disabled)
			emu_group_enable(g);
		return 0;
	}
	g = leader->group;
	if (g->nr == EMU_MAX_MEMBERS)
		return -EINVAL;
	if (e->kind == EMU_EV_GP && emu_gen_validate(g, e) < 0)
		return -EINVAL;
	if (e->kind == EMU_EV_METRIC) {
		unsigned n = 0;
		for (int i = 0; i < g->nr; i++)
			n += g->members[i]->kind == EMU_EV_METRIC;
		if (n == 8) /* add_nr_metric_event */
			return -EINVAL;
		g->topdown = true;
		emu_cpu.group = g;
	}
	if (!same_exclude(&e->attr, &leader->attr))
		emu.stats.exclude_mismatch = true;
	e->group = g;
	g->members[g->nr++] = e;
	if (g->enabled)
		emu_page_update(e);
	return 0;
}

static long open_generic(const struct perf_event_attr *attr, pid_t pid,
			 int cpu, int group_fd, unsigned long flags);

long emu_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			     int group_fd, unsigned long flags)
{
	struct emu_event *leader = NULL, *e;
	int fd, err;

	emu.stats.perf_opens++;
	emu.stats.last_open_flags = (unsigned)flags;
	emu.stats.last_open_pid = pid;
	emu.stats.last_open_cpu = cpu;
	if (attr->type == PERF_TYPE_SOFTWARE)
		return -EOPNOTSUPP; /* not emulated */
	if (attr->type == PERF_TYPE_HARDWARE && emu.has_pmu && !emu.arm)
		return open_generic(attr, pid, cpu, group_fd, flags);
	if (!emu.has_pmu || (attr->type != emu.core_type &&
			     !(emu.atom_width && attr->type == EMU_ATOM_TYPE)))
		return -ENOENT;
	if (emu.paranoid)
		return -EACCES;
	if (pid != 0 || cpu != -1)
		return -EINVAL; /* only self-monitoring is emulated */
	if (emu.gen_width && (attr->config & EMU_ANY)) {
		if (!emu.anythread_ok)
			return -EACCES; /* perf_allow_cpu */
		emu.stats.anythread_opens++;
	}
	if (group_fd != -1) {
		leader = emu_event_of(group_fd);
		if (!leader || leader->closed)
			return -EBADF;
	}
	if (leader && (leader->attr.type == EMU_ATOM_TYPE) !=
			      (attr->type == EMU_ATOM_TYPE))
		return -EINVAL; /* "Reject events from different hybrid PMUs" */
	if (emu.arm) {
		err = emu_arm_check_open(attr, leader);
		if (err)
			return err;
	}
	if (emu.has_topdown && attr->type == emu.core_type &&
	    is_topdown_config(attr->config)) {
		err = check_topdown_attr(attr, leader);
		if (err)
			return err;
	}
	fd = alloc_fd(flags);
	if (fd < 0)
		return fd;
	e = new_event(attr, fd);
	if (!emu.has_topdown && e->kind != EMU_EV_RAW)
		e->kind = EMU_EV_RAW; /* no perf metrics: plain raw event */
	if (emu.gen_width || attr->type == EMU_ATOM_TYPE ||
	    emu_mem_signal(attr->config) != SIG_NONE) { /* emu_generic.c */
		e->kind = EMU_EV_GP;
		e->sig = attr->type == EMU_ATOM_TYPE || emu.gen_width
				 ? emu_gen_signal(attr->config & ~EMU_ANY)
				 : emu_mem_signal(attr->config);
		e->any = attr->config & EMU_ANY;
		e->counter = -1;
		e->last_counter = -1;
		e->width = emu.arm ? emu_arm_width(attr) : 48;
		/* Arm: user access is asked for (config1 bit 1) per event */
		if (emu.arm)
			e->rdpmc_flag = attr->config1 & 2;
	}
	err = join_group(e, leader);
	if (err) {
		free(e);
		emu_real_close(fd);
		return err;
	}
	emu.fds[fd] = e;
	emu.stats.open_fds++;
	return fd;
}

/*
 * A generic hardware event (PERF_TYPE_HARDWARE), as other libraries open
 * one (PAPI's rdpmc detection opens instructions): x86_pmu_event_init
 * maps it through the vendor's event map to a raw config of the core PMU;
 * instructions is 0x00c0 in both intel_perfmon_event_map and
 * amd_perfmon_event_map (arch/x86/events/{intel,amd}/core.c).  Only
 * instructions is emulated.
 */
static long open_generic(const struct perf_event_attr *attr, pid_t pid,
			 int cpu, int group_fd, unsigned long flags)
{
	struct perf_event_attr raw = *attr;

	if (attr->config != PERF_COUNT_HW_INSTRUCTIONS)
		return -ENOENT;
	raw.type = emu.core_type;
	raw.config = 0x00c0;
	return emu_sys_perf_event_open(&raw, pid, cpu, group_fd, flags);
}

/* _perf_event_reset: read (folds and zeroes), count = 0, page update. */
static void reset_event(struct emu_event *e)
{
	emu_topdown_update(e->group, true);
	emu_gen_fold(e->group);
	e->count = 0;
	emu_page_update(e);
}

/* IOC_RESET of one event, or (PERF_IOC_FLAG_GROUP) of its group. */
static void reset_one(void *ctx)
{
	reset_event(ctx);
}

static void reset_group(void *ctx)
{
	struct emu_group *g = ((struct emu_event *)ctx)->group;

	for (int i = 0; i < g->nr; i++)
		reset_event(g->members[i]);
}

static long ioctl_return(long ret)
{
	if (emu.ioctl_tail) /* the wrapper's user-mode tail, in SLOTS */
		emu_run(emu.ioctl_tail, &emu.ioctl_tail_mix);
	return ret;
}

static long ioctl_in_kernel(struct emu_event *e, unsigned long req,
			    unsigned long arg)
{
	struct emu_group *g = e->group;
	bool group = arg & PERF_IOC_FLAG_GROUP;

	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
		emu_group_enable(g);
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		emu_group_disable(g);
		return 0;
	case PERF_EVENT_IOC_RESET: {
		/* _perf_event_reset, wherever the scheduler has the thread */
		struct emu_sched_event ev = emu_sched_take(EMU_AT_RESET);

		emu.stats.resets++;
		emu.hidden_slots = 0;
		emu.frozen = false;
		emu_sched_around(&ev, group ? reset_group : reset_one, e);
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

int emu_sys_ioctl(struct emu_event *e, unsigned long req, unsigned long arg)
{
	if (emu.ioctl_work) /* the wrapper's user-mode head, in SLOTS */
		emu_run(emu.ioctl_work, &emu.ioctl_work_mix);
	return (int)ioctl_return(ioctl_in_kernel(e, req, arg));
}

/* perf_read: a group read folds once (PERF_PMU_TXN_READ), then zeroes. */
ssize_t emu_sys_read(struct emu_event *e, void *buf, size_t len)
{
	struct emu_group *g = e->group;
	uint64_t fmt = e->attr.read_format, out[3 + EMU_MAX_MEMBERS];
	size_t n = 0;

	emu.stats.reads++;
	emu_preload_advance();
	/* the scheduler moves the thread as the read enters the kernel */
	struct emu_sched_event ev = emu_sched_take(EMU_AT_READ);

	if (ev.kind == EMU_SCHED_MIGRATE)
		emu_migrate(ev.cpu);
	if (g->topdown)
		emu_note_foreign_reset();
	emu_topdown_update(g, true);
	emu_gen_fold(g); /* ordinary counters: updated, not reset */

	if (fmt & PERF_FORMAT_GROUP)
		out[n++] = (uint64_t)g->nr;
	if (!(fmt & PERF_FORMAT_GROUP))
		out[n++] = e->count;
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		out[n++] = g->time_enabled;
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		out[n++] = g->time_running;
	if (fmt & PERF_FORMAT_GROUP)
		for (int i = 0; i < g->nr; i++)
			out[n++] = g->members[i]->count;
	if (len < n * sizeof(uint64_t))
		return -ENOSPC;
	memcpy(buf, out, n * sizeof(uint64_t));
	return (ssize_t)(n * sizeof(uint64_t));
}

void *emu_sys_mmap(struct emu_event *e, size_t len, int prot, int flags)
{
	/*
	 * One page: the user page alone, no data pages (perf_mmap,
	 * kernel/events/core.c).  The kernel maps it writable when asked
	 * (the ring buffer's data_tail lives there), as other libraries do;
	 * libtopdown maps it read-only.  The emulated page is private to
	 * the process, so a write changes nothing the emulator reads.
	 */
	(void)prot;
	if (len != (size_t)sysconf(_SC_PAGESIZE) || !(flags & MAP_SHARED))
		return NULL;
	if (!e->page) {
		e->page = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		emu_page_update(e);
	}
	e->maps++;
	emu.stats.maps++;
	if (e->rdpmc_flag) /* x86_pmu_event_mapped: CR4.PCE on */
		__atomic_fetch_add(&emu.rdpmc_maps, 1, __ATOMIC_RELAXED);
	return e->page;
}

static void free_event_if_done(struct emu_event *e)
{
	if (!e->closed || e->maps)
		return;
	if (e->page)
		munmap(e->page, (size_t)sysconf(_SC_PAGESIZE));
	e->page = NULL;
}

int emu_sys_munmap(void *addr, size_t len, bool *handled)
{
	(void)len;
	*handled = false;
	for (int fd = 0; fd < EMU_MAX_FD; fd++) {
		struct emu_event *e = emu.fds[fd];
		if (!e || e->page != addr || !e->maps)
			continue;
		*handled = true;
		e->maps--;
		emu.stats.maps--;
		if (e->rdpmc_flag)
			__atomic_fetch_sub(&emu.rdpmc_maps, 1,
					   __ATOMIC_RELAXED);
		free_event_if_done(e);
		return 0;
	}
	return 0;
}

void emu_sys_close(struct emu_event *e)
{
	struct emu_group *g = e->group;

	e->closed = true;
	emu.fds[e->fd] = NULL;
	emu.stats.open_fds--;
	free_event_if_done(e);
	/* The group dies with its leader (simplified: members closed last). */
	bool all_closed = true;
	for (int i = 0; i < g->nr; i++)
		all_closed &= g->members[i]->closed;
	if (!all_closed)
		return;
	if (emu_cpu.group == g)
		emu_cpu.group = NULL;
	if (emu_cpu.gen_group == g)
		emu_cpu.gen_group = NULL;
	emu_gen_remove_group(g);
	if (emu_cpu.gen_group2 == g)
		emu_cpu.gen_group2 = NULL;
	for (int i = 0; i < g->nr; i++)
		if (!g->members[i]->maps)
			free(g->members[i]);
	free(g);
}

/*
 * The attributes of the perf events open now, in fd order, for a program
 * that opens the same counters through another library (the overhead
 * bench's peer rows).  Returns how many there are (at most max copied).
 */
unsigned emu_open_attrs(struct perf_event_attr *out, unsigned max)
{
	unsigned n = 0;

	for (int fd = 0; fd < EMU_MAX_FD; fd++) {
		struct emu_event *e = emu.fds[fd];

		if (!e || e->closed)
			continue;
		if (n < max)
			out[n] = e->attr;
		n++;
	}
	return n;
}

int emu_counter_of(uint64_t config)
{
	for (int fd = 0; fd < EMU_MAX_FD; fd++) {
		const struct emu_event *e = emu.fds[fd];

		if (e && !e->closed && e->attr.type == emu.core_type &&
		    e->attr.config == config)
			return e->group && e->group->scheduled ? e->counter
							       : -1;
	}
	return -1;
}
