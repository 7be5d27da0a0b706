/* SPDX-License-Identifier: MIT */
/*
 * The output layer's own entries: records, named regions, the
 * environment's report and the report rows.  Above core and the sources:
 * they call into output only through the hooks output hands them
 * (open.c, struct td_sink's to_named).  Not installed.
 */
#ifndef TD_OUTPUT_H
#define TD_OUTPUT_H

#include <stdio.h>

#include "internal.h"

/* record.c: a record buffer's readings turned into counts (td_close). */
TD_HIDDEN void td_records_finish(struct td *td);
/* named.c */
TD_HIDDEN void td_named_unlink_all(struct td *td);
/* td's named regions, in order of first begin: the name, and in *t the
 * totals of the calls on td alone (reports' rows). */
TD_HIDDEN size_t td_named_count(const struct td *td);
TD_HIDDEN const char *td_named_at(const struct td *td, size_t i,
				  struct td_totals *t);

/* env_report.c */
TD_HIDDEN int td_env_report_init(struct td *td);
TD_HIDDEN void td_env_report_register(struct td *td);
TD_HIDDEN void td_env_report_close(struct td *td);
/* td's attached records, before the buffer goes back to the caller. */
TD_HIDDEN void td_env_report_records(struct td *td);
/* The report so far, marked partial: sig stopped the process. */
TD_HIDDEN void td_env_report_partial(int sig);

/* env_signal.c: the report written on SIGINT and SIGTERM. */
TD_HIDDEN void td_env_signal_start(void);
TD_HIDDEN void td_env_signal_stop(void);
TD_HIDDEN void td_env_signal_lock_held(bool held);
TD_HIDDEN const char *td_env_signal_name(int sig);

/* report.c: the rows of named-region totals, one line each; pmu is
 * td_report_label's answer (NULL on hardware), which also writes the
 * table's first line on the emulator. */
TD_HIDDEN const char *td_report_label(FILE *f, enum td_format fmt, char *buf,
				      size_t len);
TD_HIDDEN void td_report_totals_header(FILE *f, enum td_format fmt,
				       const char *pmu);
TD_HIDDEN void td_report_totals_row(FILE *f, enum td_format fmt,
				    const char *pmu, const char *name,
				    const char *thread,
				    const struct td_totals *t);

/* One record's row: kind "record", of thread (name may be NULL). */
TD_HIDDEN void td_report_record_row(FILE *f, enum td_format fmt,
				    const char *pmu,
				    const struct td_record *rec,
				    const char *name, const char *thread,
				    size_t idx);
TD_HIDDEN void td_report_records_header(FILE *f);

/* thread_report.c: totals per (thread, region name), merged. */
struct td_report_row {
	char *name;              /* the region's name, owned */
	char thread[48];         /* struct td_env_report.thread */
	struct td_totals t;
};
/* A per-iteration record, in the order its thread made them. */
struct td_report_record {
	struct td_record rec;    /* rec.name not used: name */
	char *name;              /* owned; "" for an unnamed region */
	char thread[48];
};
struct td_report_rows {
	struct td_report_row *v;
	size_t n, cap;
	struct td_report_record *rec;
	size_t nrec, caprec;
};
/* A handle's records (attached buffer) and named regions. */
TD_HIDDEN int td_rows_add_records(struct td_report_rows *rows,
				  const struct td_record *recs, size_t n,
				  const char *thread);
TD_HIDDEN void td_totals_merge(struct td_totals *into,
			       const struct td_totals *t);
TD_HIDDEN int td_rows_add_handle(struct td_report_rows *rows,
				 const struct td *td);
TD_HIDDEN int td_rows_copy(struct td_report_rows *dst,
			   const struct td_report_rows *src);
TD_HIDDEN void td_rows_free(struct td_report_rows *rows);
/* The table of a report with no row (topdown run looks for it). */
#define TD_NO_NAMED_REGION \
	"no named region was measured: results of td_region_begin/" \
	"td_region_end go to the caller only; name the regions to report " \
	"them (td_named_begin, td_named_begin_str), or attach records " \
	"(td_records_attach)"
/*
 * The table of the process's report: every share of every thread (full),
 * or one line per region (compact: name, thread, calls, slots, level 1,
 * err); auto: compact above TD_COMPACT_ABOVE region names.
 */
enum td_table_view { TD_VIEW_AUTO, TD_VIEW_COMPACT, TD_VIEW_FULL };
#define TD_COMPACT_ABOVE 4
#define TD_COMPACT_RECORDS 40    /* auto: compact above this many records */
TD_HIDDEN int td_rows_write(FILE *f, const struct td_report_rows *rows,
			    enum td_format fmt, enum td_table_view view);

#endif /* TD_OUTPUT_H */
