/* SPDX-License-Identifier: MIT */
/* libtopdown: per-region TopDown breakdowns read straight from the CPU.
 * A thread opens a handle (td_open), brackets hot regions with
 * td_region_begin/td_region_end and gets each region's level-1 (where the
 * CPU has it, level-2) breakdown as fractions of its pipeline slots.  The
 * fast path is RDPMC (arm64: MRS): no system call, allocation or file
 * access, but for a counted reset the reset policy may schedule at a begin.
 * Every int function returns 0 or a negative errno; td_strerror() names the
 * cause and the fix.  The library never prints, but for TOPDOWN_REPORT.
 * README.md: what each CPU measures ("Supported CPUs"), resets and err
 * ("Precision and resets"), report formats ("Harnesses and reports"), what
 * the ABI promises ("ABI").  Every function has a manual page. */
#ifndef TOPDOWN_H
#define TOPDOWN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TD_API
#define TD_API __attribute__((visibility("default")))
#endif

#define TD_VERSION_MAJOR 0
#define TD_VERSION_MINOR 3

/* Level-1 categories, indices into td_result.l1. */
enum td_l1 {
	TD_RETIRING, TD_BAD_SPEC, TD_FE_BOUND, TD_BE_BOUND, TD_L1_COUNT
};

/* Level-2 categories, indices into td_result.l2.  The first of each pair is
 * measured, the second is its parent minus it, clamped at 0 (perf's
 * formulas).  AMD Zen and Arm N3/V3 mappings: README "Supported CPUs". */
enum td_l2 {
	TD_HEAVY_OPS, TD_LIGHT_OPS,          /* children of retiring */
	TD_BR_MISPREDICT, TD_MACHINE_CLEARS, /* of bad speculation */
	TD_FETCH_LAT, TD_FETCH_BW,           /* of frontend bound */
	TD_MEM_BOUND, TD_CORE_BOUND,         /* of backend bound */
	TD_L2_COUNT
};

/* Memory drill-down (TD_OPT_MEMORY): the level-3 nodes under memory
 * bound, indices into td_result.mem, shares of the region's slots that
 * sum to l2[TD_MEM_BOUND] (Ice Lake, without level 2: to perf's memory
 * bound from the drill-down's counters; README "Memory drill-down"). */
enum td_mem {
	TD_L1_BOUND, TD_L2_BOUND, TD_L3_BOUND, TD_DRAM_BOUND, TD_STORE_BOUND,
	TD_MEM_COUNT
};

/* td_result.flags */
#define TD_RESULT_L2          (1u << 0) /* l2[] measured (else all 0) */
#define TD_RESULT_UNRELIABLE  (1u << 1) /* counts not trusted: fractions 0 */
#define TD_RESULT_SHORT       (1u << 2) /* fewer than TD_SHORT_SLOTS slots */
#define TD_RESULT_READ_PATH   (1u << 3) /* measured with read(2), not RDPMC */
#define TD_RESULT_CYCLES      (1u << 4) /* Arm N1: cycle stalls, not slots */
#define TD_RESULT_MULTIPLEXED (1u << 5) /* estimated by multiplexing */
#define TD_RESULT_L2_FE_BE    (1u << 6) /* Arm N3/V3: L2 of FE and BE only */
#define TD_RESULT_NESTED      (1u << 7) /* inner end of a recursive named
					   region: no figures (td_named_end) */
#define TD_RESULT_MEMORY      (1u << 8) /* mem[] measured (else unset) */
#define TD_RESULT_FE_UNREFINED (1u << 9) /* frontend bound and fetch
					    latency as PERF_METRICS gives
					    them: perf subtracts INT_MISC.
					    UOP_DROPPING on this CPU, which
					    could not be counted (README
					    "Frontend refinement") */
#define TD_RESULT_BE_UNREFINED (1u << 10) /* backend bound and bad
					    speculation as PERF_METRICS
					    gives them: perf adds 5 x
					    INT_MISC.CLEARS_COUNT to backend
					    bound on this CPU, which could
					    not be counted (README
					    "Frontend refinement") */

/* Fewer slots: TD_RESULT_SHORT (the kernel's TopDown document). */
#define TD_SHORT_SLOTS 20000u

/* TD_RESULT_UNRELIABLE: reset by another (a read(2), a PMI), the group not
 * counting, or a reading failed. */
struct td_result {
	uint64_t slots;              /* pipeline slots in the region */
	double l1[TD_L1_COUNT];      /* fractions of the region's slots, sum 1 */
	double l2[TD_L2_COUNT];      /* fractions of the region's slots */
	double err;                  /* bound on |reported - true|, each */
	unsigned flags;              /* TD_RESULT_* */
	unsigned resets;             /* library resets inside the region */
	double smt_contention;       /* other SMT thread's share (AMD), or 0 */
	double mem[TD_MEM_COUNT];    /* with TD_RESULT_MEMORY: fractions of
					the region's slots, within err;
					without it not written (the hot
					path stores nothing more) */
};

/* td_options.reset_policy: README "Precision and resets". */
enum td_reset_policy {
	TD_RESET_DEFAULT = 0, /* TOPDOWN_RESET if set, else auto */
	TD_RESET_AUTO,        /* err_target exceeded, reset_budget can pay */
	TD_RESET_ALWAYS,      /* reset at every region begin */
	TD_RESET_NEVER        /* the caller resets, or accepts the error */
};

/* td_options.flags */
#define TD_OPT_INCLUDE_KERNEL   (1u << 0) /* count kernel mode too */
#define TD_OPT_NO_RDPMC         (1u << 1) /* force the read(2) path */
#define TD_OPT_NO_METRICS_CLEAR (1u << 2) /* never RDPMC metrics-clear mode */
#define TD_OPT_L2_MULTIPLEX     (1u << 3) /* L2 multiplexed if no room (AMD) */
#define TD_OPT_MEMORY           (1u << 4) /* memory drill-down (td_result.mem) */
#define TD_OPT_FE_UNREFINED     (1u << 5) /* no INT_MISC.UOP_DROPPING
					     counter: frontend unrefined
					     (and backend, which needs it) */
#define TD_OPT_BE_UNREFINED     (1u << 6) /* no INT_MISC.CLEARS_COUNT
					     counter: backend unrefined */

/* Options for td_open(): size first, zero fields mean the defaults. */
struct td_options {
	size_t size;                      /* sizeof(struct td_options) */
	unsigned flags;                   /* TD_OPT_* */
	enum td_reset_policy reset_policy;
	double err_target;                /* auto: default 0.01 (1 pp) */
	double reset_budget;              /* auto: default 0.05 (5%) */
	uint64_t reset_cost_slots;        /* cost model: default 40000 */
};
#define TD_OPTIONS_INIT { .size = sizeof(struct td_options) }

/* Caller-owned, valid zeroed, nests and interleaves; contents private. */
struct td_region {
	uint64_t opaque[32];
};

/* How a handle reads the counters (td_info.path). */
enum td_path {
	TD_PATH_RDPMC = 1,   /* user-space RDPMC (arm64: MRS), no syscall */
	TD_PATH_READ  = 2    /* read(2) of the group: one syscall per reading */
};

struct td_info {
	size_t size;                 /* set to sizeof(struct td_info) */
	enum td_path path;
	unsigned levels;             /* 1, or 2 when L2 is measured */
	unsigned pmu_type;           /* perf_event_attr.type of the core PMU */
	char pmu_name[32];           /* "cpu", "cpu_core", "armv8_pmuv3_0" */
	uint32_t reserved0;          /* 0 (explicit padding) */
	uint64_t resets;             /* resets issued by the library */
	uint64_t foreign_resets;     /* resets by others, detected */
	unsigned flags;              /* TD_INFO_* */
	char uarch[32];              /* "zen4", "sapphire_rapids", ... or "" */
	uint32_t reserved1;          /* 0 (explicit padding) */
};

/* td_info.flags */
#define TD_INFO_METRICS_CLEAR   (1u << 0) /* hardware clears: no resets */
#define TD_INFO_DERIVED         (1u << 1) /* counters short: a term derived */
#define TD_INFO_HYBRID_ECORE    (1u << 2) /* hybrid: an E-core group too */
#define TD_INFO_SMT_PER_THREAD  (1u << 3) /* Intel V4.5 SMT: approximate */
#define TD_INFO_USER_ACCESS_OFF (1u << 4) /* Arm: perf_user_access is 0 */
#define TD_INFO_L2_NEEDS_MULTIPLEX (1u << 5) /* L2 fits only multiplexed */
#define TD_INFO_MULTIPLEXED     (1u << 6) /* opened with TD_OPT_L2_MULTIPLEX */
#define TD_INFO_L2_NO_COUNTERS  (1u << 7) /* Arm N3/V3: no counters for L2 */
#define TD_INFO_EMULATED        (1u << 8) /* the test emulator's counters:
					     synthetic, not a measurement */

struct td;

/* Open a handle for the calling thread, the only one that may use it.
 * opts may be NULL.  Returns 0 and sets *out, or:
 * -EINVAL      out NULL; bad opts; bad TOPDOWN_RESET, TOPDOWN_L2 or
 *              TOPDOWN_MEMORY (td_strerror in this thread then quotes
 *              the setting, its value and the accepted ones; a bad
 *              TOPDOWN_REPORT or TOPDOWN_FORMAT does not fail);
 * -ENODEV      no hardware PMU (e.g. a VM without a virtual PMU);
 * -EOPNOTSUPP  the kernel refused the TopDown events it listed, or
 *              TD_OPT_MEMORY (TOPDOWN_MEMORY=1) on a CPU without a memory
 *              drill-down (td_strerror names it);
 * -ENOSYS      no TopDown source for this CPU (td_strerror names it);
 * -EACCES      perf_event_paranoid or a security policy forbids it;
 * -ENOSPC      too few free counters (NMI watchdog, VM);
 * -ENXIO       Arm, mixed cores: thread not pinned to one PMU's CPUs;
 * -EMFILE, -ENFILE, -ENOMEM   out of descriptors or memory;
 * or another negative errno of perf_event_open(2) or mmap(2). */
TD_API int td_open(struct td **out, const struct td_options *opts);

/* Close (NULL: no-op) and free td.  Named regions are unlinked (their
 * totals added to their struct td_named) (with TOPDOWN_REPORT, handed to the process's report, written at
 * exit); an attached record buffer is finished as by td_records_detach.
 * Any thread, not concurrently with use; a fork() child too. */
TD_API void td_close(struct td *td);

/* Start a region.  Returns 0, or:
 * -EINVAL    td or r is NULL;
 * -EALREADY  r is already open;
 * -EPERM     not the thread that opened td;
 * -ESTALE    td inherited across fork(): open a new one in the child;
 * -EIO       the read(2) path failed.
 * A reading that cannot be taken flags the result TD_RESULT_UNRELIABLE. */
TD_API int td_region_begin(struct td *td, struct td_region *r);

/* End a region; fill *res unless res is NULL.  Returns 0, or:
 * -EINVAL  td or r is NULL;
 * -ESRCH   r is not open;
 * -EXDEV   r was begun on another handle;
 * -EPERM, -ESTALE, -EIO   as for td_region_begin. */
TD_API int td_region_end(struct td *td, struct td_region *r,
			 struct td_result *res);

/* Describe a handle; set info->size first (a smaller, older struct gets
 * the fields it has).  Returns 0, or -EINVAL for a NULL argument or a
 * size smaller than the first two fields. */
TD_API int td_query(const struct td *td, struct td_info *info);

/* One line naming the cause and the fix; never NULL.  For -EINVAL after
 * td_open refused a setting of the environment, in the same thread until
 * its next td_open: the setting, its value and the accepted ones. */
TD_API const char *td_strerror(int err);

/* Names of the categories, e.g. "retiring"; NULL for a bad index. */
TD_API const char *td_l1_name(int idx);
TD_API const char *td_l2_name(int idx);

/* The loaded library's version (TD_VERSION_* are the header's). */
TD_API int td_version_major(void);
TD_API int td_version_minor(void);

/* ---- Harness support: named regions, records, reports ----------------- */

/* Indices into td_record.cat: level 1, the measured level 2, SMT. */
enum td_cat {
	TD_CAT_RETIRING, TD_CAT_BAD_SPEC, TD_CAT_FE_BOUND, TD_CAT_BE_BOUND,
	TD_CAT_HEAVY_OPS, TD_CAT_BR_MISPREDICT, TD_CAT_FETCH_LAT,
	TD_CAT_MEM_BOUND,      /* 0 without TD_RESULT_L2 (Ice Lake:
				  with TD_RESULT_MEMORY, its memory bound) */
	TD_CAT_SMT_CONTENTION, /* AMD Zen 4/5, else 0 */
	TD_CAT_COUNT
};

/* A region that adds up totals over its calls: TD_NAMED_INIT("name") (not
 * copied), declared once (static or at file scope) and used from any
 * thread's handle and any recursion depth.  Each handle keeps its own
 * totals of it in a slot allocated at its first begin on that handle (the
 * cold path: later begins and ends allocate nothing); the library writes
 * to the struct only in td_named_unlink() and td_close(), which add the
 * handle's totals to it (under a lock), so it must stay valid until then.
 * Nested named regions report inclusive figures. */
struct td_named {
	const char *name;
	uint64_t opaque[96];        /* private */
};
#define TD_NAMED_INIT(n) { (n), { 0 } } /* C and C++, -Wextra clean */

/* Totals over the reliable calls: total slot-weighted (slots summed, then
 * divided), min/max the extremes of each level-1 fraction. */
struct td_totals {
	uint64_t calls;             /* outermost td_named_end calls that
				       succeeded */
	uint64_t unreliable;        /* of which flagged TD_RESULT_UNRELIABLE */
	struct td_result total;     /* total.flags: TD_RESULT_L2, _SHORT */
	double min[TD_L1_COUNT];
	double max[TD_L1_COUNT];
	uint64_t open;              /* activations begun and not ended (a
				       handle each) when the totals were taken */
	uint64_t max_depth;         /* deepest recursion reached: 1 if never
				       begun again while open, 0 if never begun */
	uint64_t reserved[2];       /* 0 */
};

/* td_region_begin/end on td's slot of n, adding to its totals at the end.
 * Begun again while open (recursion) it only counts the depth: the
 * outermost activation is measured, and an inner end returns 0 with a
 * result flagged TD_RESULT_NESTED | TD_RESULT_UNRELIABLE, figures 0.
 * Returns what td_region_begin/end return, or:
 * -EINVAL  td or n is NULL;
 * -ENOMEM  (begin) no memory for td's slot of n (first begin on td);
 * -ESRCH   (end) n not begun on td. */
TD_API int td_named_begin(struct td *td, struct td_named *n);
TD_API int td_named_end(struct td *td, struct td_named *n,
			struct td_result *res);

/* The same by name: the region named name (copied at its first begin in
 * the process, so a name built at run time needs no storage).  A name
 * begun as a string is not the same region as a struct td_named of that
 * name (reports merge rows of one name).  Errors as above, -EINVAL for a
 * NULL name. */
TD_API int td_named_begin_str(struct td *td, const char *name);
TD_API int td_named_end_str(struct td *td, const char *name,
			    struct td_result *res);

/* Fill *t from n's totals: those td_named_unlink() and td_close() added
 * to it, and those of the calling thread's open handles (another thread's
 * open handles are its own until it closes them; the TOPDOWN_REPORT
 * report has every thread's).  Returns 0, or -EINVAL for a NULL
 * argument. */
TD_API int td_named_totals(const struct td_named *n, struct td_totals *t);

/* The same for the region begun by name with td_named_begin_str().
 * Returns 0, -EINVAL for a NULL argument, or -ENOENT when no handle of
 * the process has begun name. */
TD_API int td_named_totals_str(const char *name, struct td_totals *t);

/* td's named regions in order of first begin: prev NULL for the first.
 * NULL after the last, for a NULL td, or a prev not begun on td.  One
 * begun by name comes as the library's struct td_named of that name. */
TD_API struct td_named *td_named_next(const struct td *td,
				      const struct td_named *prev);

/* Free td's slot of n, adding its totals to n's.  Returns 0, or -EINVAL
 * for a NULL argument, -ENOENT when n was not begun on td (or was
 * unlinked since), -EBUSY when n is open on td. */
TD_API int td_named_unlink(struct td *td, struct td_named *n);

/* One region's raw counts: with a buffer attached, each successful
 * td_region_end (named or not) appends one; no division, no allocation.
 * While attached a record may hold the region's two readings instead:
 * read it with td_record_decode(), or after td_records_detach() or
 * td_close(), which turn every record into the counts below. */
struct td_record {
	uint64_t slots;             /* pipeline slots of the region */
	int64_t cat[TD_CAT_COUNT];  /* category slots x 255, signed */
	uint64_t qerr;              /* quantisation scale, 1/255-slot units */
	unsigned flags;             /* TD_RESULT_L2, _UNRELIABLE, _READ_PATH,
	                               _CYCLES, _L2_FE_BE, _MEMORY */
	unsigned resets;            /* library resets inside the region */
	const char *name;           /* the named region's name, else NULL */
	uint64_t reserved[3];       /* 0; with TD_RESULT_MEMORY the nodes'
				       parts of memory bound (128 bytes) */
};

/* Attach a caller-owned buffer of cap records (replacing any), filled from
 * buf[0]; records past cap are dropped and counted.  Returns 0, or -EINVAL
 * for a NULL td or buf or a cap of 0. */
TD_API int td_records_attach(struct td *td, struct td_record *buf,
			     size_t cap);

/* Detach it; *count and *dropped (either may be NULL) get the records
 * written and dropped.  Returns 0, -EINVAL for a NULL td, or -ENOENT when
 * no buffer is attached. */
TD_API int td_records_detach(struct td *td, size_t *count,
			     uint64_t *dropped);

/* Pure: the td_result td_region_end returned for rec.  Returns 0, or
 * -EINVAL for a NULL argument. */
TD_API int td_record_decode(const struct td_record *rec,
			    struct td_result *res);

/* Pure: the td_result between two raw SLOTS and PERF_METRICS readings
 * since one reset; levels 1 or 2.  Returns 0, -EINVAL for a NULL res or a
 * bad levels, or -ERANGE when slots1 < slots0. */
TD_API int td_decode_readings(uint64_t slots0, uint64_t metrics0,
			      uint64_t slots1, uint64_t metrics1,
			      unsigned levels, struct td_result *res);

/* Reports: written only to the FILE * given (or, with TOPDOWN_REPORT set,
 * once at process exit).  Formats, CSV columns and JSON keys, and
 * TOPDOWN_REPORT/TOPDOWN_FORMAT: README.md "Harnesses and reports". */
enum td_format {
	TD_FORMAT_TABLE = 1,  /* aligned text for people */
	TD_FORMAT_CSV,        /* a header row, one row per region or record */
	TD_FORMAT_JSONL       /* one JSON object per line */
};

/* Write the totals of every named region begun on td, of td's calls
 * alone.  Returns 0, or
 * -EINVAL for a NULL argument or bad fmt, -EIO when writing failed. */
TD_API int td_report_named(FILE *f, const struct td *td,
			   enum td_format fmt);

/* Write n records (n may be 0: CSV still gets its header).  Returns 0, or
 * -EINVAL for a NULL f, NULL recs with n > 0, or a bad fmt, -EIO when
 * writing failed. */
TD_API int td_report_records(FILE *f, const struct td_record *recs,
			     size_t n, enum td_format fmt);

#ifdef __cplusplus
}
#endif

#endif /* TOPDOWN_H */
