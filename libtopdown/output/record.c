/* SPDX-License-Identifier: MIT */
/*
 * Per-iteration records: the buffer a harness attaches (the region end
 * puts records there: core/result.c td_sink_put), and the pure function
 * that turns a record into a result.
 */
#include <errno.h>
#include <string.h>

#include "output.h"
#include "source.h"

/*
 * A record a source's fast end wrote raw (TD_RECORD_READINGS), finished
 * by what it names, which outlives its handle (internal.h).
 */
static void finish_record(struct td_record *rec)
{
	const struct td_record_finisher *f =
		(const struct td_record_finisher *)(uintptr_t)rec->reserved[0];

	f->finish(f, rec);
}

int td_records_attach(struct td *td, struct td_record *buf, size_t cap)
{
	if (!td || !buf || !cap)
		return -EINVAL;
	if (td->sink.buf) { /* replaced: the old buffer's records are done */
		td_records_finish(td);
		td_env_report_records(td);
	}
	td->sink.buf = buf;
	td->sink.next = buf;
	td->sink.end = buf + cap;
	td->sink.dropped = 0;
	td->sink.readings_flags = TD_RECORD_READINGS |
				  (td->levels == 2 ? TD_RESULT_L2 : 0);
	td_end_key_refresh(td);
	return 0;
}

/* Every record of readings in the attached buffer turned into counts. */
void td_records_finish(struct td *td)
{
	for (struct td_record *rec = td->sink.buf; rec && rec < td->sink.next;
	     rec++)
		if (rec->flags & TD_RECORD_READINGS)
			finish_record(rec);
}

int td_records_detach(struct td *td, size_t *count, uint64_t *dropped)
{
	if (!td)
		return -EINVAL;
	if (!td->sink.buf)
		return -ENOENT;
	td_records_finish(td);
	td_env_report_records(td); /* TOPDOWN_REPORT: in the report */
	if (count)
		*count = (size_t)(td->sink.next - td->sink.buf);
	if (dropped)
		*dropped = td->sink.dropped;
	td->sink.buf = NULL;
	td->sink.next = td->sink.end = NULL;
	td->sink.dropped = 0;
	td_end_key_refresh(td);
	return 0;
}

/* The memory drill-down's nodes of a record: its parts of memory bound. */
static void td_record_mem(const struct td_record *rec, struct td_result *res)
{
	double part[TD_MEM_COUNT];
	double mb = res->flags & TD_RESULT_L2 ? res->l2[TD_MEM_BOUND]
					      : td_mem_bound_of(rec->cat);

	td_mem_parts_unpack(rec->reserved, part);
	for (unsigned i = 0; i < TD_MEM_COUNT; i++)
		res->mem[i] = mb * part[i];
	res->flags |= TD_RESULT_MEMORY;
}

int td_record_decode(const struct td_record *rec, struct td_result *res)
{
	struct td_record finished;
	struct td_delta d;

	if (!rec || !res)
		return -EINVAL;
	if (rec->flags & TD_RECORD_READINGS) { /* still attached */
		finished = *rec;
		finish_record(&finished);
		rec = &finished;
	}
	memset(&d, 0, sizeof(d));
	d.slots = (int64_t)rec->slots;
	memcpy(d.cat, rec->cat, sizeof(rec->cat));
	d.qerr = rec->qerr;
	td_decode_src(&d, rec->flags & TD_RESULT_L2, rec->flags, res);
	res->resets = rec->resets;
	res->flags |= rec->flags & (TD_RESULT_READ_PATH | TD_RESULT_CYCLES |
				    TD_RESULT_MULTIPLEXED |
				    TD_RESULT_FE_UNREFINED |
				    TD_RESULT_BE_UNREFINED);
	if (rec->flags & TD_RESULT_MEMORY)
		td_record_mem(rec, res);
	if (rec->flags & TD_RESULT_UNRELIABLE)
		td_record_mark_unreliable(res);
	return 0;
}
