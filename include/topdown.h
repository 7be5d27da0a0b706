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
 * The library never prints, except the named-region report the caller
 * opts into with TOPDOWN_REPORT (see "Reports" below).
 *
 * Resets.  Intel's PERF_METRICS register holds 8-bit fractions of the slots
 * counted since the last reset, so a category estimate from one reading is
 * off by up to S/255 slots, S being the slots since that reset.  A region
 * read at begin (S_b) and end (S_e) can therefore be off by
 * (S_b + S_e) / (255 * R) of its R slots.  The default policy (TD_RESET_AUTO)
 * resets the counters at a region begin when the error predicted for the
 * coming region (from that region object's previous length, else the
 * handle's last region) exceeds err_target, and only when the budget can
 * pay: resets cost at most reset_budget of the measured slots (the slots
 * of the regions ended; one reset costs reset_cost_slots by the model).
 * Short regions therefore get fewer resets than they would like, the
 * first region of a new handle none, and their result's err says so.
 * The environment variable TOPDOWN_RESET=auto|always|never overrides the
 * option.  Every reset folds the current reading into user-space counters
 * first, so regions that enclose or overlap the reset stay correct.
 */
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
 * AMD Zen 4/5 (perf's PipelineL2) maps onto the same eight: heavy ops =
 * retiring from microcode, light ops = fast-path retiring; branch
 * mispredicts = bad speculation's mispredicts share, machine clears =
 * pipeline restarts; fetch latency/bandwidth = frontend latency/bandwidth;
 * memory bound = backend memory, core bound = backend CPU.  (Reported only
 * where its six extra counters are free besides level 1's: see README.)
 * Arm Neoverse N3/V3 measure fetch latency and memory bound only, from
 * Arm's stall-cycle events, and leave the children of retiring and bad
 * speculation 0: see TD_RESULT_L2_FE_BE.
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
 * Not slot-based TopDown (Arm Neoverse N1, which has no slot events):
 * l1[TD_FE_BOUND] and l1[TD_BE_BOUND] are the fractions of cycles the
 * frontend and backend stalled (Arm's Cycle_Accounting), l1[TD_RETIRING]
 * the cycles with neither stalled, l1[TD_BAD_SPEC] 0; slots counts cycles.
 */
#define TD_RESULT_CYCLES     (1u << 4)
/*
 * Estimated from time-multiplexed groups (TD_OPT_L2_MULTIPLEX): slots
 * scaled by the level-1 group's time_enabled / time_running, level 1
 * from the part of the region its group counted, level 2 from the parts
 * the level-2 groups counted (none: no TD_RESULT_L2).  err bounds only
 * the counting, not this sampling.
 */
#define TD_RESULT_MULTIPLEXED (1u << 5)
/*
 * Level 2 below frontend and backend only (Arm Neoverse N3, V3: Arm
 * defines no split of retiring or bad speculation): l2[TD_HEAVY_OPS],
 * [TD_LIGHT_OPS], [TD_BR_MISPREDICT] and [TD_MACHINE_CLEARS] are 0, not
 * measured.  l2[TD_FETCH_LAT] is the frontend-bound slots times Arm's
 * frontend_mem_bound (STALL_FRONTEND_MEMBOUND / STALL_FRONTEND: fetch
 * stalled on the instruction side's caches and TLB), l2[TD_MEM_BOUND]
 * the backend-bound slots times backend_mem_bound
 * (STALL_BACKEND_MEMBOUND / STALL_BACKEND); fetch bandwidth and core
 * bound are the rest of their parents (Arm's frontend and backend core
 * bound, backend busy, and any stall cycles Arm's events leave
 * unattributed).  Scaling stall-cycle shares onto slots assumes stalled
 * cycles and stalled slots split alike, which Arm does not state (an
 * inference); Arm counts branch resteers (flush recovery) as frontend
 * core bound, so here under fetch bandwidth, where Intel's fetch latency
 * has them.
 */
#define TD_RESULT_L2_FE_BE   (1u << 6)

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
	/*
	 * Fraction of the region's slots given to the other SMT thread of
	 * the core (AMD Zen 4/5: de_no_dispatch_per_slot.smt_contention).
	 * Where it is measured, l1[] and it sum to 1; elsewhere 0.
	 */
	double smt_contention;
	uint64_t reserved[5];
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
#define TD_OPT_NO_METRICS_CLEAR (1u << 2) /* do not use RDPMC metrics-clear
                                             mode even where available */
/*
 * Where level 2's events do not fit in the counters beside level 1's
 * (AMD Zen 4/5: 6 counters, 6 + 8 events; td_info.flags then has
 * TD_INFO_L2_NEEDS_MULTIPLEX), open them anyway as further groups and let
 * the kernel time-multiplex the groups, as perf stat does.  Results become
 * estimates, flagged TD_RESULT_MULTIPLEXED: meaningful for regions (or
 * named totals) much longer than the kernel's rotation interval
 * (perf_event_mux_interval_ms, a few ms).  Uses the read(2) path: 3
 * syscalls per reading.  No effect where there is nothing to multiplex.
 */
#define TD_OPT_L2_MULTIPLEX   (1u << 3)

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
 * contents are private; its size is ABI (256 bytes since 0.3: room for
 * the begin counts of level-2 events read from ordinary counters).
 */
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
	uint64_t resets;             /* IOC_RESETs issued by the library */
	uint64_t foreign_resets;     /* resets by others, detected */
	unsigned flags;              /* TD_INFO_* */
	/*
	 * The microarchitecture: the formula table's name on ordinary-
	 * counter CPUs ("zen4", "skylake", "gracemont", ...), else the
	 * kernel's caps/pmu_name ("sapphire_rapids", "alderlake_hybrid");
	 * on hybrid parts with the E-core group "+" its name (e.g.
	 * "alderlake_hybrid+gracemont"); "" when the kernel does not say.
	 */
	char uarch[32];
	uint32_t reserved1;          /* 0 (explicit padding) */
};

/* td_info.flags */
#define TD_INFO_METRICS_CLEAR (1u << 0) /* RDPMC metrics-clear mode: the
                                           hardware zeroes the counters at
                                           each reading; no resets needed */
#define TD_INFO_DERIVED       (1u << 1) /* ordinary counters short (NMI
                                           watchdog, VM): one formula term
                                           is derived from the others
                                           instead of counted (README) */
#define TD_INFO_HYBRID_ECORE  (1u << 2) /* hybrid part: an E-core group on
                                           cpu_atom too; regions that ran
                                           on both report the slot-weighted
                                           combination (README) */
#define TD_INFO_SMT_PER_THREAD (1u << 3) /* Intel V4.5 with SMT on, the
                                           kernel refused AnyThread: the
                                           per-thread form, approximate */
#define TD_INFO_USER_ACCESS_OFF (1u << 4) /* Arm: the read(2) path because
                                           /proc/sys/kernel/perf_user_access
                                           is 0; for EL0 counter reads:
                                           sysctl kernel.perf_user_access=1 */
#define TD_INFO_L2_NEEDS_MULTIPLEX (1u << 5) /* the CPU defines level 2 but
                                           its events do not fit beside
                                           level 1's: levels is 1; open
                                           with TD_OPT_L2_MULTIPLEX for
                                           estimates */
#define TD_INFO_MULTIPLEXED   (1u << 6) /* opened with TD_OPT_L2_MULTIPLEX:
                                           level-2 groups time-multiplexed,
                                           results TD_RESULT_MULTIPLEXED */
#define TD_INFO_L2_NO_COUNTERS (1u << 7) /* the CPU has level 2 (Arm N3,
                                           V3) but its second event group
                                           did not fit the counters left
                                           beside level 1's: levels is 1
                                           (README "Arm level 2") */

struct td;

/*
 * Open a handle for the calling thread: a perf_event group of SLOTS (leader)
 * and the TopDown metric events, user mode only unless asked otherwise,
 * mapped for RDPMC.  opts may be NULL.  The handle must be used only by the
 * thread that opened it.
 *
 * Returns 0 and sets *out, or:
 *  -EINVAL      out is NULL, opts has a bad size or value, TOPDOWN_RESET
 *               holds something other than auto|always|never,
 *               TOPDOWN_REPORT is empty, or TOPDOWN_FORMAT holds something
 *               other than table|csv|jsonl (see "Reports" below);
 *  -ENODEV      no hardware PMU (e.g. a VM without a virtual PMU);
 *  -EOPNOTSUPP  the kernel refused the TopDown events it listed;
 *  -ENOSYS      no TopDown source for this CPU: no PERF_METRICS (sysfs
 *               events/slots) and the model is not in the formula table
 *               (README "Supported CPUs"); td_strerror names the CPU;
 *  -EACCES      perf_event_paranoid (or a security policy) forbids it;
 *  -ENOSPC      ordinary-counter CPUs: too few free counters for the
 *               smallest exact event set (the NMI watchdog holds one on
 *               x86/AMD, a VM may expose fewer: on Arm VMs a larger
 *               instance type); td_strerror says the fix;
 *  -ENXIO       Arm with heterogeneous cores: the thread is not pinned
 *               to the CPUs of one core PMU (EL0 counter reads need it);
 *  -EMFILE, -ENFILE, -ENOMEM   out of descriptors or memory;
 *  any other negative errno perf_event_open(2) or mmap(2) returned.
 */
TD_API int td_open(struct td **out, const struct td_options *opts);

/*
 * Close a handle; NULL is ignored.  Open regions become invalid.  Named
 * regions are unlinked (their totals are kept).  With TOPDOWN_REPORT set,
 * first writes the handle's named-region report there.  May be called
 * from any thread (not concurrently with the handle's use), and in a
 * fork() child on an inherited handle, where it releases the child's
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
 * The thread and fork checks cost one compare on the fast path (a
 * thread-local pointer to the thread's first handle) and a few loads
 * otherwise; no system call.
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


/* ---- Harness support (TOPDOWN_0.2) ------------------------------------ */

/*
 * Category slot counts in PERF_METRICS byte order, indices into
 * td_record.cat: the four level-1 categories (same order as enum td_l1),
 * then the four measured level-2 ones (0 in a record without
 * TD_RESULT_L2), then SMT contention.
 */
enum td_cat {
	TD_CAT_RETIRING,
	TD_CAT_BAD_SPEC,
	TD_CAT_FE_BOUND,
	TD_CAT_BE_BOUND,
	TD_CAT_HEAVY_OPS,
	TD_CAT_BR_MISPREDICT,
	TD_CAT_FETCH_LAT,
	TD_CAT_MEM_BOUND,
	/* SMT contention slots x 255 (AMD Zen 4/5), else 0 (since 0.3) */
	TD_CAT_SMT_CONTENTION,
	TD_CAT_COUNT
};

/*
 * Named regions.  A caller-owned region object that carries a name and
 * accumulates, over every call, totals for reports.  Valid when
 * zero-initialised apart from the name: declare it static (or make sure it
 * outlives its link, below) with TD_NAMED_INIT("name").  name is not
 * copied.  The first begin walks the handle's list once; every later
 * begin and end costs what td_region_begin/end cost, plus a few additions
 * and multiplications at the end (no division, no allocation).
 *
 * The first td_named_begin() links it into the handle's list of named
 * regions (intrusive: no allocation); it stays linked, and must stay
 * valid, until td_named_unlink() or td_close().  It then belongs to that
 * handle: beginning it on another handle fails with -EXDEV (one named
 * region per thread, like handles).  Nested named regions report inclusive
 * figures: an outer region's totals include its inner regions' slots.
 */
struct td_named {
	const char *name;
	uint64_t opaque[96];        /* private (768 bytes since 0.3) */
};
#define TD_NAMED_INIT(n) { (n), { 0 } } /* C and C++, -Wextra clean */

/*
 * Totals of a named region.  total is slot-weighted over the reliable
 * calls (per-category slots summed, then divided: never an average of
 * ratios), with its err bounding every fraction of it; min and max are
 * the extremes of each level-1 fraction over those calls.  Calls flagged
 * TD_RESULT_UNRELIABLE are counted in unreliable and left out of the rest.
 */
struct td_totals {
	uint64_t calls;             /* td_named_end calls that succeeded */
	uint64_t unreliable;        /* of which flagged TD_RESULT_UNRELIABLE */
	struct td_result total;     /* total.flags: TD_RESULT_L2, _SHORT */
	double min[TD_L1_COUNT];
	double max[TD_L1_COUNT];
	uint64_t reserved[4];
};

/*
 * td_region_begin/td_region_end on a named region, accumulating its totals
 * at the end.  Returns 0 or what td_region_begin/td_region_end return, and
 *  -EINVAL  td or n is NULL;
 *  -EXDEV   n is linked into another handle;
 *  -ESRCH   (end) n not begun.
 */
TD_API int td_named_begin(struct td *td, struct td_named *n);
TD_API int td_named_end(struct td *td, struct td_named *n,
			struct td_result *res);

/* Fill *t from n's totals.  Returns 0, or -EINVAL for a NULL argument. */
TD_API int td_named_totals(const struct td_named *n, struct td_totals *t);

/*
 * The named regions linked into td, in the order of their first begin: pass NULL
 * for the first, the previous one for the next.  Returns NULL at the end,
 * for a NULL td, or for a prev not linked into td.
 */
TD_API struct td_named *td_named_next(const struct td *td,
				      const struct td_named *prev);

/*
 * Unlink n from td (totals are kept; zero the object to clear them).
 * Returns 0, or -EINVAL for a NULL argument, -ENOENT when n is not linked
 * into td, -EBUSY when n is begun and not ended.
 */
TD_API int td_named_unlink(struct td *td, struct td_named *n);

/*
 * Per-iteration records.  With a buffer attached, every successful
 * td_region_end (named or not) appends one record: the region's deltas,
 * no division, no allocation.  Decode later with td_record_decode().
 * cat[] is in 1/255-slot units (PERF_METRICS fields times slots, exact)
 * and signed: a small category's estimate can shrink between readings.
 */
struct td_record {
	uint64_t slots;             /* pipeline slots of the region */
	int64_t cat[TD_CAT_COUNT];  /* category slots x 255, enum td_cat */
	uint64_t qerr;              /* quantisation scale, 1/255-slot units */
	unsigned flags;             /* TD_RESULT_L2, _UNRELIABLE, _READ_PATH,
	                               _CYCLES, _L2_FE_BE */
	unsigned resets;            /* library resets inside the region */
	const char *name;           /* the named region's name, else NULL */
	uint64_t reserved[3];       /* 0; room to grow (128 bytes in all) */
};

/*
 * Attach a caller-owned buffer of cap records to td, replacing any
 * previous one; records are written from buf[0] on.  When it is full,
 * further records are dropped and counted.  Returns 0, or -EINVAL for a
 * NULL td or buf or a cap of 0.
 */
TD_API int td_records_attach(struct td *td, struct td_record *buf,
			     size_t cap);

/*
 * Detach the buffer; *count (if not NULL) gets the records written,
 * *dropped (if not NULL) the records lost to a full buffer.  Returns 0,
 * -EINVAL for a NULL td, or -ENOENT when no buffer is attached.
 */
TD_API int td_records_detach(struct td *td, size_t *count,
			     uint64_t *dropped);

/*
 * Pure: the td_result of one record, exactly what td_region_end returned
 * for it.  Returns 0, or -EINVAL for a NULL argument.
 */
TD_API int td_record_decode(const struct td_record *rec,
			    struct td_result *res);

/*
 * Pure: the td_result of the stretch between two raw readings of the
 * SLOTS counter and the PERF_METRICS register (e.g. taken by hand with
 * RDPMC, or logged), both since the same reset.  levels is 1 or 2.
 * Returns 0, or -EINVAL for a NULL res or levels not 1 or 2, -ERANGE when
 * slots1 < slots0 (a reset between the readings).
 */
TD_API int td_decode_readings(uint64_t slots0, uint64_t metrics0,
			      uint64_t slots1, uint64_t metrics1,
			      unsigned levels, struct td_result *res);

/*
 * Reports.  The library writes only to the FILE * it is given (and, when
 * the caller opts in with TOPDOWN_REPORT, at td_close or process exit).
 *
 * TD_FORMAT_TABLE: aligned text for people.  For named regions one block
 *   per region: calls, slots, err, each level-1 fraction with its min/max,
 *   level 2 indented under its parent when measured, smt_contention when
 *   not 0.  For records one line each, level 1 and smt_contention.
 * TD_FORMAT_CSV: a header row, then one row per region or record.
 * TD_FORMAT_JSONL: one JSON object per line, per region or record.
 *
 * CSV columns and JSON keys are the same, in this order, and stable:
 *   kind        "region" (named-region totals) or "record"
 *   name        the region's name ("" for an unnamed record)
 *   calls       calls (1 for a record)
 *   unreliable  calls flagged unreliable (0 or 1 for a record)
 *   slots       pipeline slots (reliable calls only, for a region)
 *   err         error bound of every fraction
 *   levels      1, or 2 when level 2 was measured
 *   retiring bad_speculation frontend_bound backend_bound
 *               level-1 fractions (td_l1_name)
 *   heavy_operations light_operations branch_mispredicts machine_clears
 *   fetch_latency fetch_bandwidth memory_bound core_bound
 *               level-2 fractions (td_l2_name), 0 when levels is 1
 *   min_<l1 name>, max_<l1 name>
 *               extremes of each level-1 fraction over the calls (a
 *               record's own value)
 *   smt_contention
 *               td_result.smt_contention (AMD Zen 4/5; else 0)
 *   basis       "slots", or "cycles" for results flagged TD_RESULT_CYCLES
 *               (Arm Neoverse N1: cycle stall fractions, not TopDown;
 *               the table marks them too)
 * Fractions are in [0, 1].  All but kind, name and basis are numbers.
 *
 * Zero-code-change reports: with TOPDOWN_REPORT=stderr or a file path
 * (appended to) in the environment of td_open, td_close writes
 * td_report_named of the handle there, in TOPDOWN_FORMAT=table (default),
 * csv or jsonl; handles still open at process exit report then.
 */
enum td_format {
	TD_FORMAT_TABLE = 1,
	TD_FORMAT_CSV,
	TD_FORMAT_JSONL
};

/*
 * Write the totals of every named region linked into td.  Returns 0, or
 * -EINVAL for a NULL argument or bad format, -EIO when writing failed.
 */
TD_API int td_report_named(FILE *f, const struct td *td,
			   enum td_format fmt);

/*
 * Write n records (e.g. the buffer of td_records_attach).  n may be 0
 * (CSV still gets its header).  Returns 0, or -EINVAL for a NULL f, a NULL
 * recs with n > 0, or a bad format, -EIO when writing failed.
 */
TD_API int td_report_records(FILE *f, const struct td_record *recs,
			     size_t n, enum td_format fmt);

#ifdef __cplusplus
}
#endif

#endif /* TOPDOWN_H */
