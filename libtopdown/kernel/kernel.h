/* SPDX-License-Identifier: MIT */
/*
 * The kernel interface: every system call (through libc's wrappers, so
 * that tests can interpose them), the sysfs core-PMU discovery, the sysfs
 * event grammar and CPU lists, and the CPU instructions that read
 * counters (arch.h).  Knows nothing of handles or sources.  Not installed.
 */
#ifndef TD_KERNEL_H
#define TD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "arch.h"

#define TD_HIDDEN __attribute__((visibility("hidden")))
#define TD_LIKELY(x)   __builtin_expect(!!(x), 1)
#define TD_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* PERF_METRICS holds one byte per metric; byte i is topdown config 0x8000+(i<<8). */
#define TD_NR_METRICS   8
#define TD_NR_L1        4 /* the level-1 metrics, the first four */

/*
 * Where the core PMU lives, read from sysfs: what every source uses.
 * What a source needs besides (PERF_METRICS' events, Arm's CPU) its own
 * discovery finds.
 */
struct td_pmu {
	char name[32];        /* "cpu", "cpu_core", "armv8_*"... */
	uint32_t type;        /* perf_event_attr.type */
	int rdpmc_knob;       /* sysfs rdpmc: 0, 1, 2; -1 if absent (Arm:
				 /proc/sys/kernel/perf_user_access) */
};

/* sys.c: every kernel interaction, through libc's wrappers. */
TD_HIDDEN int td_sys_perf_open(struct perf_event_attr *attr, int group_fd);
TD_HIDDEN int td_sys_ioctl(int fd, unsigned long req, unsigned long arg);
TD_HIDDEN int td_sys_read(int fd, void *buf, size_t len);
TD_HIDDEN void *td_sys_map(int fd, size_t len);
TD_HIDDEN void td_sys_unmap(void *addr, size_t len);
TD_HIDDEN void td_sys_close(int fd);
TD_HIDDEN int td_sys_read_file(const char *path, char *buf, size_t len);
struct rseq;
TD_HIDDEN struct rseq *td_sys_rseq_area(void);
TD_HIDDEN int td_sys_list_dir(const char *path,
			      int (*fn)(void *ctx, const char *name),
			      void *ctx);
TD_HIDDEN int td_sys_current_cpu(void);
TD_HIDDEN int td_sys_affinity(uint64_t *map, uint32_t nr_bits);

/* emulated.c: the test emulator's profile name when it counts, else NULL. */
TD_HIDDEN const char *td_emulated_pmu(void);

/* cpulist.c: a kernel CPU list ("0-3,8") as a bitmap. */
#define TD_MAX_CPUS 65536u
TD_HIDDEN int td_cpulist_parse(const char *s, uint64_t *map, uint32_t nr_bits,
			       uint32_t *max_cpu);

/* evparse.c: the sysfs event grammar, pure; fmt fills buf with a term's
 * format string or returns a negative errno. */
typedef int (*td_format_fn)(void *ctx, const char *term, char *buf,
			    size_t len);
TD_HIDDEN int td_event_parse(const char *spec, td_format_fn fmt, void *ctx,
			     uint64_t *config);
TD_HIDDEN int td_format_apply(const char *format, uint64_t value,
			      uint64_t *config);

/* sysfs_pmu.c: discovery from sysfs. */
TD_HIDDEN int td_pmu_discover(struct td_pmu *pmu);
/* sysfs file of PMU pmu ("type", "format/x"...): td_sys_read_file's result */
TD_HIDDEN int td_pmu_read_file(const char *pmu, const char *file, char *buf,
			       size_t len);
/* config of the PMU's events/<name>, or a negative errno (-ENOENT: unlisted) */
TD_HIDDEN int td_pmu_event_config(const char *pmu, const char *name,
				  uint64_t *config);
TD_HIDDEN int td_pmu_parse_event(const char *pmu, const char *spec,
				 uint64_t *config);

#endif
