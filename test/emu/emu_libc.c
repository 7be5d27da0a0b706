/* SPDX-License-Identifier: MIT */
/*
 * The seam: definitions of the libc wrappers libtopdown calls.  Being in
 * the executable (or LD_PRELOADed), they take precedence over libc's for
 * the library, static or shared.  Calls on emulated perf fds and paths
 * under the PMU sysfs directory are served by the emulator; everything
 * else goes to the real libc function (dlsym RTLD_NEXT).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu_internal.h"

#define REAL(name) real_##name
#define DEFINE_REAL(ret, name, ...)                                      \
	static ret (*real_##name)(__VA_ARGS__);                          \
	static void resolve_##name(void)                                 \
	{                                                                \
		if (!real_##name)                                        \
			real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, \
								 #name); \
	}

DEFINE_REAL(long, syscall, long, long, long, long, long, long, long)
DEFINE_REAL(int, ioctl, int, unsigned long, unsigned long)
DEFINE_REAL(ssize_t, read, int, void *, size_t)
DEFINE_REAL(void *, mmap, void *, size_t, int, int, int, off_t)
DEFINE_REAL(int, munmap, void *, size_t)
DEFINE_REAL(int, close, int)
DEFINE_REAL(int, open, const char *, int, int)
DEFINE_REAL(DIR *, opendir, const char *)
DEFINE_REAL(int, sched_getcpu, void)
DEFINE_REAL(int, sched_getaffinity, pid_t, size_t, cpu_set_t *)

/*
 * Before emu_setup (and inside sanitizer runtimes starting up, which call
 * mmap before they can take a lock) every call goes straight to libc.
 */
static bool emu_active(void)
{
	return emu.sysfs_root[0] != '\0';
}

static void count_call(void)
{
	__atomic_fetch_add(&emu.stats.syscalls, 1, __ATOMIC_RELAXED);
}

static long fail(long err)
{
	errno = (int)-err;
	return -1;
}

long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	count_call();
	if (nr == SYS_perf_event_open && emu.sysfs_root[0]) {
		long r;
		emu_lock_acquire();
		r = emu_sys_perf_event_open((struct perf_event_attr *)a[0],
					    (pid_t)a[1], (int)a[2], (int)a[3],
					    (unsigned long)a[4]);
		emu_lock_release();
		return r < 0 ? fail(r) : r;
	}
	resolve_syscall();
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	unsigned long arg;
	struct emu_event *e;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	count_call();
	if (!emu_active()) {
		resolve_ioctl();
		return REAL(ioctl)(fd, req, arg);
	}
	emu_lock_acquire();
	e = emu_event_of(fd);
	if (e) {
		int r = emu_sys_ioctl(e, req, arg);
		emu_lock_release();
		return r < 0 ? (int)fail(r) : r;
	}
	emu_lock_release();
	resolve_ioctl();
	return REAL(ioctl)(fd, req, arg);
}

ssize_t read(int fd, void *buf, size_t len)
{
	struct emu_event *e;

	count_call();
	if (!emu_active()) {
		resolve_read();
		return REAL(read)(fd, buf, len);
	}
	emu_lock_acquire();
	e = emu_event_of(fd);
	if (e) {
		ssize_t r = emu_sys_read(e, buf, len);
		emu_lock_release();
		emu_preload_leave();
		return r < 0 ? fail(r) : r;
	}
	emu_lock_release();
	resolve_read();
	return REAL(read)(fd, buf, len);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	(void)buflen;
	return read(fd, buf, len);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct emu_event *e;

	count_call();
	if (!emu_active() || (flags & MAP_ANONYMOUS)) {
		resolve_mmap();
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	}
	emu_lock_acquire();
	e = (flags & MAP_ANONYMOUS) ? NULL : emu_event_of(fd);
	if (e) {
		void *p = emu_sys_mmap(e, len, prot, flags);
		emu_lock_release();
		if (!p)
			errno = EINVAL;
		return p ? p : MAP_FAILED;
	}
	emu_lock_release();
	resolve_mmap();
	return REAL(mmap)(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	bool handled = false;
	int r;

	count_call();
	if (!emu_active()) {
		resolve_munmap();
		return REAL(munmap)(addr, len);
	}
	emu_lock_acquire();
	r = emu_sys_munmap(addr, len, &handled);
	emu_lock_release();
	if (handled)
		return r;
	resolve_munmap();
	return REAL(munmap)(addr, len);
}

int emu_real_close(int fd)
{
	resolve_close();
	return REAL(close)(fd);
}

int close(int fd)
{
	struct emu_event *e;

	count_call();
	if (!emu_active())
		return emu_real_close(fd);
	emu_lock_acquire();
	e = emu_event_of(fd);
	if (e)
		emu_sys_close(e);
	emu_lock_release();
	return emu_real_close(fd);
}

int emu_real_open(const char *path, int flags, int mode)
{
	resolve_open();
	return REAL(open)(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	char buf[512];
	const char *p;
	int mode = 0;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	count_call();
	p = emu_sysfs_redirect(path, buf, sizeof(buf));
	return emu_real_open(p ? p : path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

/* Directory listings of the PMU tree (Arm PMU discovery) are faked too. */
DIR *opendir(const char *path)
{
	char buf[512];
	const char *p;

	count_call();
	p = emu_sysfs_redirect(path, buf, sizeof(buf));
	resolve_opendir();
	return REAL(opendir)(p ? p : path);
}

/* The emulated CPU this thread runs on (emu_migrate). */
int sched_getcpu(void)
{
	if (emu_active())
		return emu_cpu.cpu;
	resolve_sched_getcpu();
	return REAL(sched_getcpu)();
}

/* Arm profiles: the affinity emu_arm_pin set (pid 0 only). */
int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	if (emu_active() && emu.arm && pid == 0) {
		CPU_ZERO_S(size, set);
		for (int c = 0; c < 64; c++)
			if (emu.allowed_cpus >> c & 1)
				CPU_SET_S(c, size, set);
		return 0;
	}
	resolve_sched_getaffinity();
	return REAL(sched_getaffinity)(pid, size, set);
}

/*
 * /proc/self/fd/N of an emulated perf fd names what the kernel's does
 * (an anonymous inode), so that a program scanning its descriptors for
 * perf events finds them (topdown-validate's foreign-read drill).
 */
ssize_t readlink(const char *path, char *buf, size_t len)
{
	static const char perf[] = "anon_inode:[perf_event]";
	static ssize_t (*real)(const char *, char *, size_t);
	const char *tail = "/proc/self/fd/";
	size_t n = strlen(tail);

	if (emu_active() && strncmp(path, tail, n) == 0) {
		char *end;
		long fd = strtol(path + n, &end, 10);

		if (*end == '\0' && end != path + n && fd >= 0 &&
		    fd < EMU_MAX_FD && emu_event_of((int)fd)) {
			size_t k = sizeof(perf) - 1 < len ? sizeof(perf) - 1
							  : len;
			memcpy(buf, perf, k);
			return (ssize_t)k;
		}
	}
	if (!real)
		real = (ssize_t (*)(const char *, char *, size_t))dlsym(
			RTLD_NEXT, "readlink");
	return real(path, buf, len);
}

/* ---- setup ------------------------------------------------------------- */

const char *emu_profile_name = "test";

void emu_setup(enum emu_profile profile)
{
	memset(&emu.stats, 0, sizeof(emu.stats));
	memset(&emu_cpu, 0, sizeof(emu_cpu));
	emu.profile = profile;
	emu.arm = emu_arm_profile(profile);
	emu.has_pmu = profile != EMU_NO_PMU;
	emu.gen_width = profile == EMU_ZEN4 ? 6 : profile == EMU_ZEN5 ? 8
			: profile == EMU_SKL ? 4 : profile == EMU_GRT ? 5
			: profile == EMU_HSW ? 4 : profile == EMU_TNT ? 4
			: profile == EMU_CMT ? 6 : profile == EMU_SKT ? 8
			: profile == EMU_SLM ? 2
			: emu.arm ? emu.arm->slots : 0;
	/* AMD: 6; ADL: the E-core's 6, a P-core's 8 (emu_generic.c
	 * counters_of) */
	emu.gp_counters = profile == EMU_ZEN4 || profile == EMU_ZEN5 ||
			  profile == EMU_ADL ? 6 : profile == EMU_SLM ? 2
			  : emu.arm ? emu.arm->counters : 8;
	emu.gp_core_counters = 8;
	emu.gp_core_held = 0;
	emu.anythread_ok = false;
	emu.gp_reserved = 0;
	emu.uop_share = 0.015; /* 1.5% of the slots, where clears allow */
	emu.clear_rate = 0.002; /* 1% of the slots, on Ice Lake */
	emu.atom_width = profile == EMU_ADL ? 5 : 0;
	emu.atom_skymont = false;
	emu.atom_crestmont = false;
	emu.v45_model = 0;
	/* x86 max_period, full width; Arm: half of each counter's range */
	emu.gp_left = emu.arm ? UINT64_MAX >> 1 : (UINT64_C(1) << 47) - 1;
	emu.allowed_cpus = 0xff;
	emu.gp_rotate = 0;
	emu.mux_interval = 0;
	emu.pmccntr = EMU_PMCCNTR_FREE;
	emu.has_topdown = emu.has_pmu && profile != EMU_NO_TOPDOWN &&
			  !emu.gen_width;
	emu.l2 = profile != EMU_ICL;
	emu.paranoid = profile == EMU_PARANOID;
	emu.rdpmc_knob = profile == EMU_SPR_NO_RDPMC ? 0 : 1;
	if (emu.arm) /* PMUSERENR_EL0 is set only with perf_user_access */
		emu.rdpmc_knob = emu.arm->user_access;
	emu.has_metrics_clear = profile == EMU_LNL;
	emu.clear_trigger = EMU_CLEAR_ON_METRICS;
	emu.stale_pages = false; /* the kernel rewrites pages at schedule-out */
	emu.stale_counting = false;
	emu.core_type = emu.arm ? 8 : 4;
	emu.rdpmc_maps = 0;
	emu.read_work = 0; /* the library's own work not counted */
	emu.ioctl_work = 0;
	emu.ioctl_tail = 0;
	if (emu_rseq_init) {
		emu_rseq_init();
		emu_rseq_set_cpu_raw(0);
	}
	emu_sysfs_create();
	if (profile == EMU_ARM_HETERO)
		emu_cpu.cpu = 4; /* on a big core */
	emu_trap_install();
}

void emu_teardown(void)
{
	emu_sysfs_remove();
}

/*
 * The library asks whether it runs here (libtopdown/kernel/emulated.c
 * finds this function with dlsym): the profile's name while the emulator
 * is set up, else NULL.  No real program defines a function of this
 * name, so a machine with a PMU can never be labelled emulated.
 */
const char *libtopdown_emulated_pmu(void);
const char *libtopdown_emulated_pmu(void)
{
	return emu_active() ? emu_profile_name : NULL;
}
