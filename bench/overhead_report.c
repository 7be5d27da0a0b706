/* SPDX-License-Identifier: MIT */
/*
 * Rows of the overhead benchmark: from what was counted of a section to
 * its figures, its targets, a table line and a machine-readable line
 *   overhead,<profile>,<sequence>,<instructions>,<window>,<syscalls>,<reads>
 * (bench/overhead-table.sh turns those into the README's table).
 *
 * The window of a region is the library instructions after its begin's
 * last counter read and before the first read of the reading its end
 * uses: every region pays them as if they were its own work.  An end that
 * reads more often than the begin (PERF_METRICS with records attached
 * reads SLOTS, then both registers again for the record) uses its last
 * reads: as many as the begin made.  Nested: the inner region's window.
 */
#include <stdio.h>
#include <string.h>

#include "overhead.h"

/* Issue targets (report-only, see README, Overhead). */
#define PM_PAIR_MAX       60  /* PERF_METRICS begin+end, no result */
#define PM_RESULT_MAX    200  /* ... with a td_result */
#define PM_RECORDS_MAX    80  /* ... with records attached */
#define WINDOW_MAX        12
#define ORD_PER_READ_MAX  20  /* ordinary counters: per counter read */

static const char *const seq_names[OVH_NR_SECTIONS] = {
	[OVH_PAIR] = "pair",
	[OVH_PAIR_RESULT] = "pair+result",
	[OVH_NESTED] = "nested",
	[OVH_NAMED] = "named",
	[OVH_NAMED_STR] = "named-str",
	[OVH_PAIR_RECORDS] = "pair+records",
};

#define MAX_LINES 64
static char lines[MAX_LINES][96];
static unsigned nr_lines;

struct row {
	unsigned long instr, window, spread, syscalls, reads;
	unsigned long begin_reads; /* reads of the region's begin */
	bool known;                /* the window could be placed */
	bool end_unread;           /* the end read nothing: no window */
};

static unsigned reads_of(const struct ovh_section_count *c, unsigned call,
			 unsigned *first)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->reads && i < OVH_MAX_READS; i++)
		if (c->read_call[i] == call) {
			if (!n)
				*first = i;
			n++;
		}
	return n;
}

static struct row make_row(const struct ovh_section_count *c, unsigned s)
{
	unsigned b = s == OVH_NESTED ? 1 : 0, e = b + 1;
	unsigned bfirst = 0, efirst = 0;
	unsigned nb = reads_of(c, b, &bfirst), ne = reads_of(c, e, &efirst);
	struct row r = { c->lib, 0, 0, c->syscalls, c->reads, nb, false,
			 nb && !ne && !c->overflow };

	if (nb && ne && !c->overflow) {
		unsigned blast = bfirst + nb - 1;
		unsigned eread = efirst + (ne > nb ? ne - nb : 0);

		r.window = c->read_lib[eread] - c->read_lib[blast];
		r.spread = c->read_lib[blast] - c->read_lib[bfirst];
		r.known = true;
	}
	return r;
}

/* The targets of a row, as text; *met says whether they hold. */
static void targets(const struct ovh_profile *p, unsigned s,
		    const struct row *r, char *buf, size_t len, bool *met)
{
	unsigned long imax = 0, wmax = WINDOW_MAX;

	/*
	 * Named regions: a pair plus finding the handle's slot and the
	 * totals at the end (a record to a named region takes the end's
	 * slow path): figures reported, only "no syscall" a target.  So
	 * for the memory drill-down, whose every boundary takes the general
	 * route and reads its events too.
	 */
	if (s == OVH_NAMED || s == OVH_NAMED_STR || p->kind == OVH_MEMORY) {
		*met = r->syscalls == 0;
		snprintf(buf, len, "s=0");
		return;
	}
	if (p->kind == OVH_PERF_METRICS)
		imax = s == OVH_PAIR ? PM_PAIR_MAX
		       : s == OVH_PAIR_RESULT ? PM_RESULT_MAX
		       : s == OVH_PAIR_RECORDS ? PM_RECORDS_MAX : 0;
	else if (s == OVH_PAIR || s == OVH_NESTED) /* each counter at both
						      ends of each region */
		imax = ORD_PER_READ_MAX * r->begin_reads * 2 *
		       (s == OVH_NESTED ? 2 : 1);
	if (p->kind == OVH_ORDINARY)
		wmax += r->begin_reads;
	*met = (r->end_unread || (r->known && r->window <= wmax)) &&
	       r->syscalls == 0 && (!imax || r->instr <= imax);
	if (imax)
		snprintf(buf, len, "i<=%lu w<=%lu s=0", imax, wmax);
	else
		snprintf(buf, len, "w<=%lu s=0", wmax);
}

void ovh_report_header(const char *method)
{
	printf("# instructions per sequence inside libtopdown's text, the "
	       "counter reads (RDPMC, MRS) excluded; %s\n", method);
	printf("%-13s %-13s %6s %6s %6s %8s %5s  %-22s %s\n", "profile",
	       "sequence", "instr", "window", "spread", "syscalls", "reads",
	       "target", "");
	nr_lines = 0;
}

bool ovh_report_profile(const struct ovh_profile *prof,
			const struct ovh_section_count *sec)
{
	bool all = true;

	for (unsigned s = 0; s < OVH_NR_SECTIONS; s++) {
		struct row r;
		char tgt[48];
		bool met;

		if (s == OVH_SETUP)
			continue;
		r = make_row(&sec[s], s);
		targets(prof, s, &r, tgt, sizeof(tgt), &met);
		all = all && met;
		if (r.known)
			printf("%-13s %-13s %6lu %6lu %6lu %8lu %5lu  %-22s %s\n",
			       prof->name, seq_names[s], r.instr, r.window,
			       r.spread, r.syscalls, r.reads, tgt,
			       met ? "met" : "MISSED");
		else if (r.end_unread)
			printf("%-13s %-13s %6lu %6s %6s %8lu %5lu  %-22s %s\n",
			       prof->name, seq_names[s], r.instr, "-", "-",
			       r.syscalls, r.reads, tgt,
			       met ? "met (the end reads nothing)"
				   : "MISSED (the end reads nothing)");
		else
			printf("%-13s %-13s %6lu %6s %6s %8lu %5lu  %-22s %s\n",
			       prof->name, seq_names[s], r.instr, "?", "?",
			       r.syscalls, r.reads, tgt,
			       "MISSED (reads not placed)");
		if (nr_lines < MAX_LINES) {
			char w[24] = "-";

			if (r.known)
				snprintf(w, sizeof(w), "%lu", r.window);
			snprintf(lines[nr_lines++], sizeof(lines[0]),
				 "overhead,%s,%s,%lu,%s,%lu,%lu", prof->name,
				 seq_names[s], r.instr, w, r.syscalls, r.reads);
		}
	}
	return all;
}

void ovh_report_footer(void)
{
	printf("# window: library instructions between the begin's last "
	       "counter read and the end's reading (nested: the inner "
	       "region's); spread: between the begin's first and last "
	       "read; '-': the end took no reading (ordinary counters, "
	       "nothing asked of it)\n");
	printf("# targets (reported, not enforced): PERF_METRICS pair <= %d, "
	       "pair+result <= %d, pair+records <= %d instructions; "
	       "ordinary counters <= %d per counter and region end (pair, "
	       "nested: 2 x the counters x regions); "
	       "window <= %d (+ the begin's reads on ordinary counters); "
	       "no system call\n",
	       PM_PAIR_MAX, PM_RESULT_MAX, PM_RECORDS_MAX, ORD_PER_READ_MAX,
	       WINDOW_MAX);
	for (unsigned i = 0; i < nr_lines; i++)
		puts(lines[i]);
}
