/* SPDX-License-Identifier: MIT */
/*
 * Every interaction with the kernel, and nothing else.  Each call goes
 * through libc's own wrapper (syscall(3), ioctl(2), read(2), mmap(2),
 * open(2)), never an inline syscall instruction, so that LD_PRELOAD
 * interposers, valgrind and seccomp policies see every call.  The test
 * suite's emulated kernel interposes on exactly these wrappers.  Errors
 * come back as negative errno values, converted here and only here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "kernel.h"

static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* This thread (pid 0), any CPU (-1), close-on-exec. */
int td_sys_perf_open(struct perf_event_attr *attr, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, 0, -1, group_fd,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? neg_errno() : (int)fd;
}

int td_sys_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return ioctl(fd, req, arg) < 0 ? neg_errno() : 0;
}

/* Returns the byte count read, or a negative errno. */
int td_sys_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? neg_errno() : (int)n;
}

/* Read-only shared mapping of a perf fd; NULL on failure, errno kept. */
void *td_sys_map(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

void td_sys_unmap(void *addr, size_t len)
{
	if (addr)
		munmap(addr, len);
}

void td_sys_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * Read a small sysfs file into buf (NUL-terminated, trailing newline cut).
 * Returns the length, or a negative errno (-ENOENT when it does not exist).
 */
int td_sys_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int n;

	if (fd < 0)
		return neg_errno();
	n = td_sys_read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return n;
}

/* fn(ctx, name) for every entry of a directory but . and ..; stops on
 * fn's first non-zero return, which it returns. */
int td_sys_list_dir(const char *path, int (*fn)(void *ctx, const char *name),
		    void *ctx)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int r = 0;

	if (!d)
		return neg_errno();
	while (r == 0 && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			r = fn(ctx, e->d_name);
	closedir(d);
	return r;
}

/* The CPU this thread runs on now, or a negative errno. */
int td_sys_current_cpu(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? neg_errno() : cpu;
}

/* This thread's allowed CPUs as a bitmap of nr_bits (zeroed by caller). */
int td_sys_affinity(uint64_t *map, uint32_t nr_bits)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return neg_errno();
	for (uint32_t c = 0; c < nr_bits && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			map[c / 64] |= UINT64_C(1) << (c % 64);
	return 0;
}

#if TD_HAVE_RSEQ_GUARD && __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
/*
 * The calling thread's rseq area registered by glibc (>= 2.35), or NULL.
 * __rseq_offset is its distance from the thread pointer.  The kernel
 * writes cpu_id on registration and on every return to user space; glibc
 * leaves RSEQ_CPU_ID_REGISTRATION_FAILED (-2) there when registration
 * failed, and cpu_id is -1 before registration, so a CPU number proves
 * the area is live.  (__rseq_size is not consulted: the test emulator
 * supplies its own area through __rseq_offset.)
 */
struct rseq *td_sys_rseq_area(void)
{
	struct rseq *rs = (struct rseq *)(void *)((char *)td_thread_self() +
						  __rseq_offset);

	return (int32_t)td_load_once(rs->cpu_id) >= 0 ? rs : NULL;
}
#else
struct rseq *td_sys_rseq_area(void)
{
	return NULL;
}
#endif
