/* SPDX-License-Identifier: MIT */
/*
 * libtopdown: per-region TopDown breakdowns read straight from the CPU.
 *
 * A thread opens a handle with td_open(), brackets hot regions with
 * td_region_begin()/td_region_end(), and gets each region's level-1 (and,
 * where the CPU has it, level-2) TopDown breakdown as fractions of the
 * region's pipeline slots.  On the fast path begin/end execute RDPMC and a
 * little arithmetic: no system call, allocation or file access, except a
 * deliberate, counted PERF_EVENT_IOC_RESET that the reset policy schedules
 * at a region begin (see "Resets" below).
 *
 * Conventions: every int function returns 0 or a negative errno value;
 * td_strerror() turns it into one line naming the cause and the fix.
 * The library never prints.
 *
 * Resets.  Intel's PERF_METRICS register holds 8-bit fractions of the slots
 * counted since the last reset, so a category estimate from one reading is
 * off by up to S/255 slots, S being the slots since that reset.  A region
 * read at begin (S_b) and end (S_e) can therefore be off by
 * (S_b + S_e) / (255 * R) of its R slots.  The default policy (TD_RESET_AUTO)
 * resets the counters at a region begin when the error predicted for the
 * coming region (from that region object's previous length, else the
 * handle's recent region lengths) exceeds err_target, and only while the
 * time spent in resets stays within reset_budget of the slots counted
 * (one reset costs reset_cost_slots by the model).  Short regions therefore
 * get fewer resets than they would like, and their result's err says so.
 * The environment variable TOPDOWN_RESET=auto|always|never overrides the
 * option.  Every reset folds the current reading into user-space counters
 * first, so regions that enclose or overlap the reset stay correct.
 */
#ifndef TOPDOWN_H
#define TOPDOWN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TD_API
#define TD_API __attribute__((visibility("default")))
#endif

#define TD_VERSION_MAJOR 0
#define TD_VERSION_MINOR 1

/* Level-1 categories, indices into td_result.l1. */
enum td_l1 {
	TD_RETIRING,
	TD_BAD_SPEC,
	TD_FE_BOUND,
	TD_BE_BOUND,
	TD_L1_COUNT
};

/*
 * Level-2 categories, indices into td_result.l2.  Heavy ops, branch
 * mispredicts, fetch latency and memory bound are measured; light ops,
 * machine clears, fetch bandwidth and core bound are their parent minus the
 * measured child, clamped at 0 (the kernel document's and perf's formulas).
 */
enum td_l2 {
	TD_HEAVY_OPS,
	TD_LIGHT_OPS,
	TD_BR_MISPREDICT,
	TD_MACHINE_CLEARS,
	TD_FETCH_LAT,
	TD_FETCH_BW,
	TD_MEM_BOUND,
	TD_CORE_BOUND,
	TD_L2_COUNT
};

/* td_result.flags */
#define TD_RESULT_L2         (1u << 0) /* l2[] was measured (else all 0) */
#define TD_RESULT_UNRELIABLE (1u << 1) /* counts cannot be trusted: see below */
#define TD_RESULT_SHORT      (1u << 2) /* fewer than TD_SHORT_SLOTS slots */
#define TD_RESULT_READ_PATH  (1u << 3) /* measured with read(2), not RDPMC */

/*
 * Regions shorter than this many slots are flagged TD_RESULT_SHORT: about
 * 3,300 cycles of a 6-wide core, a few times the reorder window, which the
 * kernel's TopDown document warns makes the breakdown meaningless.
 */
#define TD_SHORT_SLOTS 20000u

/*
 * TD_RESULT_UNRELIABLE is set when, during the region, the counters were
 * reset by someone other than this library (a read(2) on the group, a PMI),
 * the group was not counting (multiplexed out, thread on a core type without
 * TopDown), or a reading could not be taken.  Fractions are then 0.
 */
struct td_result {
	uint64_t slots;              /* pipeline slots in the region */
	double l1[TD_L1_COUNT];      /* fractions of the region's slots, sum 1 */
	double l2[TD_L2_COUNT];      /* fractions of the region's slots */
	double err;                  /* bound on |reported - true| of every
	                                fraction, from 8-bit quantisation */
	unsigned flags;              /* TD_RESULT_* */
	unsigned resets;             /* library resets inside the region */
	uint64_t reserved[6];
};

/* Reset policies, td_options.reset_policy (see "Resets" above). */
enum td_reset_policy {
	TD_RESET_DEFAULT = 0, /* TOPDOWN_RESET if set, else auto */
	TD_RESET_AUTO,
	TD_RESET_ALWAYS,      /* reset at every region begin */
	TD_RESET_NEVER        /* the caller resets, or accepts the error */
};

/* td_options.flags */
#define TD_OPT_INCLUDE_KERNEL (1u << 0) /* count kernel mode too (needs
                                           perf_event_paranoid <= 1) */
#define TD_OPT_NO_RDPMC       (1u << 1) /* force the read(2) path */

/*
 * Options for td_open().  Starts with its size so that it can grow: set
 * size = sizeof(struct td_options) (TD_OPTIONS_INIT does), leave unknown
 * fields zero.  Zero fields mean the defaults.
 */
struct td_options {
	size_t size;
	unsigned flags;                   /* TD_OPT_* */
	enum td_reset_policy reset_policy;
	double err_target;                /* auto: default 0.01 (1 pp) */
	double reset_budget;              /* auto: default 0.05 (5%) */
	uint64_t reset_cost_slots;        /* cost model: default 40000 */
};
#define TD_OPTIONS_INIT { .size = sizeof(struct td_options) }

/*
 * A region: caller-owned, no allocation, valid when zero-initialised.  May
 * be nested in or interleaved with other regions of the same handle.  Its
 * contents are private; its size is ABI.
 */
struct td_region {
	uint64_t opaque[16];
};

/* How a handle reads the counters (td_info.path). */
enum td_path {
	TD_PATH_RDPMC = 1,   /* user-space RDPMC, no syscall */
	TD_PATH_READ  = 2    /* read(2) of the group: one syscall per reading */
};

struct td_info {
	size_t size;                 /* set to sizeof(struct td_info) */
	enum td_path path;
	unsigned levels;             /* 1, or 2 when L2 is measured */
	unsigned pmu_type;           /* perf_event_attr.type of the core PMU */
	char pmu_name[32];           /* "cpu" or "cpu_core" */
	uint64_t resets;             /* IOC_RESETs issued by the library */
	uint64_t foreign_resets;     /* resets by others, detected */
};

struct td;

/*
 * Open a handle for the calling thread: a perf_event group of SLOTS (leader)
 * and the TopDown metric events, user mode only unless asked otherwise,
 * mapped for RDPMC.  opts may be NULL.  The handle must be used only by the
 * thread that opened it.
 *
 * Returns 0 and sets *out, or:
 *  -EINVAL      out is NULL, opts has a bad size or value, or TOPDOWN_RESET
 *               holds something other than auto|always|never;
 *  -ENODEV      no hardware PMU (e.g. a VM without a virtual PMU);
 *  -EOPNOTSUPP  the core PMU has no TopDown metrics (sysfs events/slots);
 *  -EACCES      perf_event_paranoid (or a security policy) forbids it;
 *  -EMFILE, -ENFILE, -ENOMEM   out of descriptors or memory;
 *  any other negative errno perf_event_open(2) or mmap(2) returned.
 */
TD_API int td_open(struct td **out, const struct td_options *opts);

/*
 * Close a handle; NULL is ignored.  Open regions become invalid.  May be
 * called from any thread (not concurrently with the handle's use), and in
 * a fork() child on an inherited handle, where it releases the child's
 * copies.  Using td after td_close is undefined (it is freed).
 */
TD_API void td_close(struct td *td);

/*
 * Start a region.  Returns 0, or:
 *  -EINVAL    td or r is NULL;
 *  -EALREADY  r is already open (begun and not ended);
 *  -EPERM     called from a thread other than the one that opened td;
 *  -ESTALE    td was inherited across fork(): it counts the parent's
 *             thread; td_close it and td_open a new handle in the child;
 *  -EIO       the read(2) path failed.
 * Both thread and fork checks cost a few loads, no system call.
 * A reading that cannot be taken (group not scheduled) does not fail: the
 * region is completed but its result is flagged TD_RESULT_UNRELIABLE.
 */
TD_API int td_region_begin(struct td *td, struct td_region *r);

/*
 * End a region and, if res is not NULL, fill it.  Returns 0, or:
 *  -EINVAL  td or r is NULL;
 *  -ESRCH   r is not open (never begun, or already ended);
 *  -EXDEV   r was begun on another handle;
 *  -EPERM, -ESTALE   as for td_region_begin (checked first);
 *  -EIO     the read(2) path failed.
 */
TD_API int td_region_end(struct td *td, struct td_region *r,
			 struct td_result *res);

/*
 * Describe a handle.  info->size must be set.  Returns 0, or -EINVAL for a
 * NULL argument or a size smaller than the first two fields.
 */
TD_API int td_query(const struct td *td, struct td_info *info);

/* One line naming the cause and the fix; never NULL. */
TD_API const char *td_strerror(int err);

/* Names of the categories, e.g. "retiring"; NULL for a bad index. */
TD_API const char *td_l1_name(int idx);
TD_API const char *td_l2_name(int idx);

/* The library's version, TD_VERSION_MAJOR/MINOR of the loaded object. */
TD_API int td_version_major(void);
TD_API int td_version_minor(void);

#ifdef __cplusplus
}
#endif

#endif /* TOPDOWN_H */
