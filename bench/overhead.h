/* SPDX-License-Identifier: MIT */
/*
 * Overhead benchmark, shared parts: the measured sections (run by the
 * traced child on x86, by the guest under qemu-aarch64 on Arm), what a
 * counting method records of one section, and the rows made from it.
 */
#ifndef TD_BENCH_OVERHEAD_H
#define TD_BENCH_OVERHEAD_H

#include <stdbool.h>
#include <stdio.h>

#include "emu.h"

/* The measured sections, in the order the runner executes them. */
enum ovh_section {
	OVH_PAIR,         /* begin+end, no result */
	OVH_PAIR_RESULT,  /* begin+end with a td_result */
	OVH_NESTED,       /* begin outer, begin inner, end inner, end outer */
	OVH_NAMED,        /* td_named_begin+end of a struct, no result */
	OVH_NAMED_STR,    /* td_named_begin_str+end_str, no result */
	OVH_SETUP,        /* td_records_attach + one warm pair: not a row */
	OVH_PAIR_RECORDS, /* begin+end with records attached */
	OVH_NR_SECTIONS
};

enum ovh_kind {
	OVH_PERF_METRICS, /* SLOTS + PERF_METRICS: two reads a boundary */
	OVH_ORDINARY,     /* ordinary counters, each under its seqlock */
	OVH_MEMORY        /* PERF_METRICS with the memory drill-down's
			     events (TD_OPT_MEMORY): the general route */
};

struct ovh_profile {
	const char *name; /* the machine-readable lines' <profile> */
	const char *what;
	enum emu_profile emu;
	enum ovh_kind kind;
	unsigned opts;    /* td_options.flags: TD_OPT_MEMORY, or 0 */
	bool offer_clear; /* the core PMU offers metrics-clear (hybrid) */
};

extern const struct ovh_profile ovh_profiles[];
extern const unsigned ovh_nr_profiles;
const struct ovh_profile *ovh_profile_by_name(const char *name);

/*
 * What a counting method saw of one section: library instructions (the
 * counter reads themselves excluded), system calls, and for each counter
 * read, the library instructions before it and the library call (begin
 * or end, in call order) it belongs to.
 */
#define OVH_MAX_READS 64
#define OVH_MAX_CALLS 8
struct ovh_section_count {
	unsigned long lib, syscalls, reads;
	unsigned calls; /* td_region_begin / td_region_end entries */
	unsigned long read_lib[OVH_MAX_READS];
	unsigned read_call[OVH_MAX_READS];
	bool overflow; /* more reads or calls than recorded */
};

void ovh_count_call(struct ovh_section_count *c);
void ovh_count_read(struct ovh_section_count *c);

/*
 * Run by the counted process: set the profile up, warm every region
 * object up, then the sections.  mark(i, syscalls) is called before
 * section 0 (i = 0, syscalls 0) and after each section i (i + 1 and the
 * emulated system calls that section made): the counting method's
 * boundaries.  Returns 0, or the negative errno of td_open.
 */
typedef void (*ovh_mark_fn)(unsigned next, unsigned long syscalls);
int ovh_run_sections(const struct ovh_profile *prof, ovh_mark_fn mark);

/*
 * x86: one instrumented call (libtopdown-functions' hooks around the
 * work, its call path known), in a process of its own, whose first
 * handle is the hooks' (a thread's first handle is its fast one, as in
 * a program that uses no other): mark(0, 0) before it, mark(1, syscalls)
 * after.
 */
int ovh_run_function(const struct ovh_profile *prof, ovh_mark_fn mark);

/*
 * The peer (PAPI) counted process: the same counters read by PAPI_read at
 * a region's start and end (overhead_papi.c, built where papi.h is).  mark
 * as above, with one section; on failure, -1 and the reason in why.
 */
int ovh_papi_run_sections(const struct ovh_profile *prof, ovh_mark_fn mark,
			  char *why, size_t len);

/* Print the rows of one profile: table (human) and overhead,... lines. */
void ovh_report_header(const char *method);
/* Returns false when a target of a row was missed. */
bool ovh_report_profile(const struct ovh_profile *prof,
			const struct ovh_section_count *sec);
/* The function-call row, against the profile's bare pair. */
bool ovh_report_function(const struct ovh_profile *prof,
			 const struct ovh_section_count *pair,
			 const struct ovh_section_count *fn);
/* A peer's pair (overhead_papi.c) beside libtopdown's rows. */
void ovh_report_peer(const char *peer, const struct ovh_profile *prof,
		     const struct ovh_section_count *sec,
		     const struct ovh_section_count *own);
void ovh_report_footer(void);

#endif /* TD_BENCH_OVERHEAD_H */
