/* SPDX-License-Identifier: MIT */
/*
 * Rows of the overhead benchmark: from what was counted of a section to
 * its figures, its targets, a table line and a machine-readable line
 *   overhead,<profile>,<sequence>,<instructions>,<window>,<syscalls>,<reads>,
 *   <met or MISSED> (<targets>)
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

/*
 * Targets (report-only, see README, Overhead), per profile: instructions
 * of a pair and of a pair with a result (0: none), the window, and what
 * records may add to a pair.  PERF_METRICS (spr) keeps its earlier,
 * tighter ones; every other source must reach these.
 */
struct ovh_targets {
	const char *profile;
	unsigned long pair, result, window;
	unsigned long records_abs; /* pair+records, absolute (0: none) */
	/* where a row misses: the key of the measured reason (struct
	   ovh_why), for its instructions and for its window */
	const char *why_instr, *why_window;
};

#define RECORDS_OVER_PAIR 60 /* records store readings, every profile */
#define ORD_PER_READ_MAX  20 /* ordinary counters: per counter read */
#define DEFAULT_WINDOW    20

/*
 * Ordinary counters' pair+records: a pair's end reads nothing (nothing is
 * asked of it), where a record needs the end's values, read as the
 * begin reads them: the target is the pair, plus the end's reads at the
 * pair's own allowance per counter read, plus the records' 60.
 */
static unsigned long ord_records_target(unsigned long pair,
					unsigned long reads)
{
	return pair + ORD_PER_READ_MAX * reads + RECORDS_OVER_PAIR;
}

/*
 * Ordinary counters' window, where it stays above DEFAULT_WINDOW: the
 * instructions that must stay inside, counted on zen4's pair+result and
 * n2's at this writing (bench/overhead single-steps them, make
 * bench-arm64 counts qemu's log; make bench prints the figures).  Every
 * one of them is a check a reading needs or the way to the source's end.
 */
static const char ord_window_why[] =
	"ordinary counters' window (zen4/zen5/skl/grt 28, records 30; n2 "
	"42, records 45) stays: after the begin's last read, the leader's "
	"(x86 15), its page lock compared after the read (2: the seqlock's "
	"validation, the view's words loaded before the read), its 48-bit "
	"value (3), the guard's step against the last accepted value (3: "
	"a page still naming a counter another context owns), the offset "
	"added, the region's store and the return (4), the guard's next "
	"base and the pointer that commits it (2 stores: a stale page "
	"read below the last whole reading) and a register restored (1); "
	"the entry's fast-handle compare (3, the PERF_METRICS entry's) and "
	"the jump to the handle's end (3: this thread's source fast handle "
	"compared at the first one's address, its end entry); before the "
	"end's "
	"first read (7), the arguments RDPMC's registers clobber saved (3), "
	"whether a result is wanted (2: an end asked for nothing reads "
	"nothing; records and named regions 2 more), the group and the "
	"leader's selector (2).  The region's owner, the records' and "
	"widths' tests and the leader page's lock before the read follow "
	"the end's first read on x86 (a reading for a region that is not "
	"the handle's is discarded); n2 keeps that lock before its MRS (a "
	"trap where the group is not counting here), and adds the MRS stub's "
	"call (its frame; a BTI landing pad too where the library is built "
	"with branch protection) and the entries' "
	"thread-pointer loads.  Not moved out: the begin's checks of its "
	"last value, which a deferral to the end would lose where the page "
	"is rewritten between (a region spanning a context switch)";

/*
 * The hybrid source's window (adl-pcore), counted on its pair the same
 * way (hybrid_fast.c): the begin reads SLOTS and INT_MISC.UOP_DROPPING
 * in one rseq section, makes its checks and opens the region, and reads
 * PERF_METRICS alone in a second section, so that none runs on an
 * E-core; the end reads all three in one section, its checks after.
 */
static const char hybrid_window_why[] =
	"adl-pcore's window (pair 28) stays: after the begin's last read "
	"(12), the rseq section left (1: rseq_cs cleared, no pointer into "
	"the library outlives the section), PERF_METRICS stored in the "
	"region as RDPMC gave it (2), cpu_core's page lock after the read "
	"(3: a trip to an E-core or a switch before or between the "
	"sections shows there, outside them nothing aborts), the handle's "
	"last readings (4: the pair a foreign reset folds, stored once the "
	"lock stands) and the return (2); before the end's first read "
	"(16), the entry's compares with this thread's two fast handles "
	"and the jump to the source's end entry (6), the result pointer "
	"out of RDPMC's registers and a register saved (2), the rseq "
	"section armed (3: the area, the descriptor registered), the CPU's "
	"bit tested in the P-cores' bitmap (4: RDPMC of a fixed counter on "
	"an E-core is a #GP) and the first selector (1).  The region's "
	"owner and every check of the readings follow the reads (a reading "
	"for a region that is not the handle's is discarded).  Not moved "
	"out: the entry's dispatch (6), which would need the guarded end "
	"inlined in the library's entry (pm_fast.c td_region_end)";

/*
 * PERF_METRICS' own rows (spr), where they stay above its targets: what
 * its pair and pair+result hold beyond the reads, counted on spr's rows
 * at this writing the same way.
 */
static const char spr_why[] =
	"spr's pair (77) and pair+result (239) stay above 60 and 200: beyond "
	"the entries' checks, the reads and the stores of the readings, the "
	"begin reads INT_MISC.UOP_DROPPING next to PERF_METRICS (7: its test, "
	"selector, halves joined, base added, store; perf's frontend refinement "
	"on Sapphire Rapids), and both ends keep the reset policy's accounts "
	"(core's: the budget's threshold compared at the begin, 4, the stretch "
	"of open regions opened, 5, and closed, 3 or 4, the region's length "
	"learnt, 6); the end with a result reads the counter again (4), takes "
	"the drop's difference and whether the begin read it (5) and moves its "
	"share in the decode (about 15: a product, a quotient and a truncation, "
	"the general route's arithmetic bit for bit, then its bounds); its "
	"window (14) holds the entry's test for a result and its jump (3) and "
	"the register that keeps the result across RDPMC (1).  pair+records "
	"(124) stores the readings as well as the drop's difference and its "
	"flags in the record.  function-call (186) is that pair with records "
	"(124: the hooks attach a record buffer) and the hooks around it (62: "
	"the entry hook 34, the thread's state, the shadow stack's test and "
	"push, the call path's node; the exit hook 28), against 2 pairs "
	"(154)";

/*
 * Metrics-clear mode's window (pm_clear_fast.c), counted on lnl's and
 * arl-pcore's pair at this writing, the same way.  Every RDPMC of the
 * trigger clears both registers, so no read may run before the checks
 * that the registers are this thread's.
 */
static const char clear_window_why[] =
	"metrics-clear window (lnl 30, arl-pcore 41) stays: after the "
	"begin's last read (lnl 13, arl-pcore 14: the rseq section left, "
	"1), PERF_METRICS' halves joined (2), the "
	"page's lock after the reads (3, its page's address loaded before "
	"them: a schedule-in during them may have restored another "
	"context's registers, which the slow path must judge), the reading "
	"kept for the next fold and the region's begin and error scale (6: "
	"values the reads give; who owns the pending reading is stored "
	"before them), the return (2); before the end's first read (lnl "
	"17, arl-pcore 27), the entry's compares with this thread's two "
	"fast handles and the jump to the end entry of the trigger's copy "
	"(6), the region's checks (4: a clearing read for a region that "
	"is not the handle's would take its interval from the region that "
	"is), the region and result "
	"pointers out of RDPMC's registers (lnl 2, arl-pcore 1), the "
	"page's lock before any read (4: a clearing read while a "
	"schedule-in since the last reading may have handed the registers "
	"to another context would destroy what the slow path must judge) "
	"and the selector (1); arl-pcore adds the source's check that its "
	"E-cores stayed quiet (4: its lock's address, the lock, compared "
	"with the value it must hold, struct td_pm quiet_lock) and the "
	"rseq guard's section armed (7: the area, the descriptor "
	"registered, the CPU's bit tested in the P-cores' bitmap: no RDPMC "
	"of a fixed selector on an E-core).  Below 20 would take a clearing "
	"read before the region's checks (the reading a misused end took "
	"folded later: a reading the general route never takes, its error "
	"scale in the results), and a begin that keeps only the raw "
	"reading, the region's fields made from it later: the fold would "
	"then write into a region its caller may have dropped unended";

/*
 * The guarded metrics-clear pair (arl-pcore) against the unguarded one
 * (lnl), counted the same way: what the hybrid source adds.
 */
static const char arl_pair_why[] =
	"arl-pcore's pair (131) stays above 120: lnl's (103) plus the rseq "
	"guard's two sections (16: each armed, 7, and left, 1; no RDPMC of "
	"a fixed selector on an E-core), the E-cores' check at the begin "
	"and the end (8: a reading stands only while the E group has not "
	"run since its values were cached) and the begin's copy of the "
	"handle's state whole (7 more than lnl's: the hybrid source's "
	"E-core counts follow its categories; made once per version of the "
	"state, here the one the warm-up's nested and named regions left), "
	"less 3 (the first read joined in the section, a register)";

/*
 * The hybrid source's pair (adl-pcore) against PERF_METRICS' inlined one
 * (spr), counted per function on both (the bench's pair, single-stepped
 * at this writing).
 */
static const char hybrid_pair_why[] =
	"adl-pcore's pair (156) and pair+result (300) stay above 60 and 200 "
	"(spr's targets; spr's own pair is 77): the hybrid source reads in "
	"three rseq sections, not by the entries' inlined RDPMCs (48 with "
	"the readings' halves joined: each section armed, the CPU's bit "
	"tested in the P-cores' bitmap and left, since RDPMC of a fixed "
	"counter on an E-core is a #GP and a migration must abort the "
	"reads), checks after each section that both pages still name the "
	"fixed selectors (16: the group scheduled in on this P-core), that "
	"the E-cores stayed quiet (4), is reached out of the entries (16: "
	"their test and jump, the region's checks) and hands the end's "
	"reading to PERF_METRICS' end (30) where spr's inlined end keeps it "
	"in registers; pair+result adds the exact decode (144), as spr's";

/*
 * A row that misses a target names the reason (its key) after its
 * verdict; the footer prints each reason once, as "# why <key>: <text>",
 * which bench/overhead-table.sh copies into the README under the table.
 */
struct ovh_why {
	const char *key, *text;
};

static const struct ovh_why whys[] = {
	{ "spr", spr_why },
	{ "hybrid-window", hybrid_window_why },
	{ "clear-window", clear_window_why },
	{ "arl-pair", arl_pair_why },
	{ "hybrid-pair", hybrid_pair_why },
	{ "ordinary-window", ord_window_why },
};

static const struct ovh_targets profile_targets[] = {
	{ "spr", 60, 200, 12, 80, "spr", "spr" },
	{ "lnl", 120, 300, DEFAULT_WINDOW, 0, NULL, "clear-window" },
	{ "adl-pcore", 60, 200, DEFAULT_WINDOW, 0, "hybrid-pair",
	  "hybrid-window" },
	{ "arl-pcore", 120, 300, DEFAULT_WINDOW, 0, "arl-pair",
	  "clear-window" },
	{ "zen4", 0, 450, DEFAULT_WINDOW, 0, NULL, "ordinary-window" },
	{ "zen5", 0, 450, DEFAULT_WINDOW, 0, NULL, "ordinary-window" },
	{ "skl", 0, 450, DEFAULT_WINDOW, 0, NULL, "ordinary-window" },
	{ "grt", 0, 450, DEFAULT_WINDOW, 0, NULL, "ordinary-window" },
	{ "n2", 0, 600, DEFAULT_WINDOW, 0, NULL, "ordinary-window" },
};

static const struct ovh_targets *targets_of(const struct ovh_profile *p)
{
	static const struct ovh_targets none = { NULL, 0, 0, DEFAULT_WINDOW,
						  0, NULL, NULL };
	unsigned n = sizeof(profile_targets) / sizeof(profile_targets[0]);

	for (unsigned i = 0; i < n; i++)
		if (strcmp(profile_targets[i].profile, p->name) == 0)
			return &profile_targets[i];
	return &none;
}

static const char *const seq_names[OVH_NR_SECTIONS] = {
	[OVH_PAIR] = "pair",
	[OVH_PAIR_RESULT] = "pair+result",
	[OVH_NESTED] = "nested",
	[OVH_NAMED] = "named",
	[OVH_NAMED_STR] = "named-str",
	[OVH_PAIR_RECORDS] = "pair+records",
};

/* An instrumented call costs at most this many bare pairs (the goal). */
#define FUNCTION_PAIRS_MAX 2

#define MAX_LINES 160 /* every profile's rows, its function-call and peer */
static char lines[MAX_LINES][192];
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

/* The instruction target of a row (0: none). */
static unsigned long instr_target(const struct ovh_profile *p, unsigned s,
				  const struct row *r, unsigned long pair)
{
	const struct ovh_targets *t = targets_of(p);
	unsigned long rec = pair + RECORDS_OVER_PAIR;

	switch ((enum ovh_section)s) {
	case OVH_PAIR:
	case OVH_NESTED:
		if (p->kind == OVH_ORDINARY) /* each counter at both ends of
						each region */
			return ORD_PER_READ_MAX * r->begin_reads * 2 *
			       (s == OVH_NESTED ? 2 : 1);
		return s == OVH_PAIR ? t->pair : 0;
	case OVH_PAIR_RESULT:
		return t->result;
	case OVH_PAIR_RECORDS:
		if (p->kind == OVH_ORDINARY)
			return ord_records_target(pair, r->begin_reads);
		return t->records_abs && t->records_abs < rec ? t->records_abs
							       : rec;
	default:
		return 0;
	}
}

/*
 * After a row's targets, the keys of the reasons it misses them (the
 * same key once); a miss without a stated reason says so.
 */
static void append_why(char *buf, size_t len, const struct ovh_targets *t,
		       bool instr_ok, bool window_ok)
{
	const char *wi = instr_ok ? NULL : t->why_instr;
	const char *ww = window_ok ? NULL : t->why_window;

	if (instr_ok && window_ok)
		return;
	if ((!instr_ok && !wi) || (!window_ok && !ww))
		snprintf(buf, len, "; why: not stated");
	else if (wi && ww && strcmp(wi, ww) != 0)
		snprintf(buf, len, "; why: %s %s", wi, ww);
	else
		snprintf(buf, len, "; why: %s", wi ? wi : ww);
}

/* The targets of a row, as text; *met says whether they hold. */
static void targets(const struct ovh_profile *p, unsigned s,
		    const struct row *r, unsigned long pair, char *buf,
		    size_t len, bool *met)
{
	unsigned long imax = instr_target(p, s, r, pair);
	unsigned long wmax = targets_of(p)->window;

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
	bool window_ok = r->end_unread || (r->known && r->window <= wmax);
	bool instr_ok = !imax || r->instr <= imax;
	int n;

	*met = window_ok && instr_ok && r->syscalls == 0;
	if (imax)
		n = snprintf(buf, len, "i<=%lu w<=%lu s=0", imax, wmax);
	else
		n = snprintf(buf, len, "w<=%lu s=0", wmax);
	if (n >= 0 && (size_t)n < len)
		append_why(buf + n, len - (size_t)n, targets_of(p), instr_ok,
			   window_ok);
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
	unsigned long pair = sec[OVH_PAIR].lib;
	bool all = true;

	for (unsigned s = 0; s < OVH_NR_SECTIONS; s++) {
		struct row r;
		char tgt[96];
		bool met;

		if (s == OVH_SETUP)
			continue;
		r = make_row(&sec[s], s);
		targets(prof, s, &r, pair, tgt, sizeof(tgt), &met);
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
				 "overhead,%s,%s,%lu,%s,%lu,%lu,%s (%s)",
				 prof->name, seq_names[s], r.instr, w,
				 r.syscalls, r.reads, met ? "met" : "MISSED",
				 tgt);
		}
	}
	return all;
}

/*
 * An instrumented call: the hooks, the pair they make, its record and
 * the shadow stack; the goal, on PERF_METRICS, at most twice the bare
 * pair's instructions; elsewhere reported.  Its window: the region's.
 */
bool ovh_report_function(const struct ovh_profile *prof,
			 const struct ovh_section_count *pair,
			 const struct ovh_section_count *fn)
{
	struct row r = make_row(fn, OVH_PAIR);
	unsigned long imax = prof->kind == OVH_PERF_METRICS
				     ? FUNCTION_PAIRS_MAX * pair->lib : 0;
	bool met = r.syscalls == 0 && fn->calls == 2 &&
		   (!imax || r.instr <= imax);
	char w[24] = "-", tgt[96];
	int n;

	if (r.known)
		snprintf(w, sizeof(w), "%lu", r.window);
	if (imax)
		n = snprintf(tgt, sizeof(tgt), "i<=%lu (2 pairs) s=0", imax);
	else
		n = snprintf(tgt, sizeof(tgt), "s=0");
	if (n >= 0 && (size_t)n < sizeof(tgt))
		append_why(tgt + n, sizeof(tgt) - (size_t)n, targets_of(prof),
			   !imax || r.instr <= imax, true);
	printf("%-10s %-13s %6lu %6s %6s %8lu %5lu  %-22s %s\n", prof->name,
	       "function-call", r.instr, w, r.known ? "" : "-", r.syscalls,
	       r.reads, tgt, met ? "met" : "MISSED");
	if (nr_lines < MAX_LINES)
		snprintf(lines[nr_lines++], sizeof(lines[0]),
			 "overhead,%s,function-call,%lu,%s,%lu,%lu,%s (%s)",
			 prof->name, r.instr, w, r.syscalls, r.reads,
			 met ? "met" : "MISSED", tgt);
	return met;
}

/*
 * A peer library's pair (its read at a region's start and at its end,
 * around the same work) beside libtopdown's pair and pair+result.
 */
void ovh_report_peer(const char *peer, const struct ovh_profile *prof,
		     const struct ovh_section_count *sec,
		     const struct ovh_section_count *own)
{
	struct row r = make_row(sec, OVH_PAIR);
	struct row pair = make_row(&own[OVH_PAIR], OVH_PAIR);
	struct row res = make_row(&own[OVH_PAIR_RESULT], OVH_PAIR_RESULT);
	char w[24] = "?", sp[24] = "?", seq[24];

	if (r.known) {
		snprintf(w, sizeof(w), "%lu", r.window);
		snprintf(sp, sizeof(sp), "%lu", r.spread);
	}
	snprintf(seq, sizeof(seq), "%s pair", peer);
	printf("%-10s %-13s %6lu %6s %6s %8lu %5lu  %.1fx pair, %.1fx "
	       "pair+result\n", prof->name, seq, r.instr, w, sp, r.syscalls,
	       r.reads, pair.instr ? (double)r.instr / pair.instr : 0,
	       res.instr ? (double)r.instr / res.instr : 0);
	if (nr_lines < MAX_LINES)
		snprintf(lines[nr_lines++], sizeof(lines[0]),
			 "peer,%s,%s,pair,%lu,%s,%lu,%lu", peer, prof->name,
			 r.instr, w, r.syscalls, r.reads);
}

void ovh_report_footer(void)
{
	if (nr_lines == MAX_LINES)
		printf("# WARNING: %d machine-readable lines or more: later "
		       "ones were dropped (raise MAX_LINES)\n", MAX_LINES);
	printf("# window: library instructions between the begin's last "
	       "counter read and the end's reading (nested: the inner "
	       "region's); spread: between the begin's first and last "
	       "read; '-': the end took no reading (ordinary counters, "
	       "nothing asked of it)\n");
	printf("# targets (reported, not enforced): pair / pair+result "
	       "instructions spr 60/200, lnl (metrics-clear) 120/300, "
	       "adl-pcore 60/200, arl-pcore (metrics-clear) 120/300, zen4/zen5/skl/grt -/450, n2 -/600; "
	       "ordinary counters' pair and nested <= %d per counter and "
	       "region end; pair+records <= pair + %d (spr: <= 80; ordinary "
	       "counters: pair + %d per counter the end reads + %d, the "
	       "pair's end reading nothing); window "
	       "<= %d (spr 12); no system call; function-call (an "
	       "instrumented call: libtopdown-functions' hooks and the pair "
	       "they make) <= %d pairs on PERF_METRICS\n",
	       ORD_PER_READ_MAX, RECORDS_OVER_PAIR, ORD_PER_READ_MAX,
	       RECORDS_OVER_PAIR, DEFAULT_WINDOW, FUNCTION_PAIRS_MAX);
	for (unsigned i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		printf("# why %s: %s\n", whys[i].key, whys[i].text);
	for (unsigned i = 0; i < nr_lines; i++)
		puts(lines[i]);
}
