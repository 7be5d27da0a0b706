/* SPDX-License-Identifier: MIT */
/*
 * Counting an arm64 run from qemu's log.  With -singlestep every
 * translation block is one guest instruction; with -d exec,nochain qemu
 * logs every block it executes ("Trace N: host [flags/PC/...]"), and with
 * -d in_asm each block's instruction when it is translated (before it
 * first runs): "0xPC:  WORD  mnemonic".  -dfilter limits both to
 * libtopdown.so's text and ovh_guest_mark's first instruction, so
 * the emulator (its SIGILL handler answering each MRS, its emulated work)
 * and the caller never appear.  An MRS of a PMU counter raises SIGILL
 * under qemu-user: it is logged once, as executed, and counted as a read,
 * not as a library instruction; the emulator's handler resumes after it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overhead.h"
#include "overhead_qemu.h"

struct layout {
	unsigned long lo, hi, begin, end, mark;
	unsigned long fn_lo, fn_hi; /* libtopdown-functions.so's text, or 0 */
};

/*
 * MRS Xt, PMCCNTR_EL0 or PMEVCNTR<n>_EL0 (Arm ARM, op0 3, op1 3, CRn 9
 * CRm 13 op2 0; CRn 14, CRm 0b10xx); also PMXEVCNTR_EL0 (CRn 9 CRm 13
 * op2 2) should a reader select first.
 */
static int is_pmu_read(uint32_t insn)
{
	unsigned crn = (insn >> 12) & 15, crm = (insn >> 8) & 15;
	unsigned op2 = (insn >> 5) & 7;

	if ((insn & 0xfff80000u) != 0xd5380000u || ((insn >> 16) & 7) != 3)
		return 0;
	return (crn == 9 && crm == 13 && (op2 == 0 || op2 == 2)) ||
	       (crn == 14 && (crm >> 2) == 2);
}

static int read_guest_out(const char *path, struct layout *l,
			  unsigned long *syscalls)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int have = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned i;
		unsigned long n;

		if (sscanf(line, "layout,%lx,%lx,%lx,%lx,%lx", &l->lo, &l->hi,
			   &l->begin, &l->end, &l->mark) == 5)
			have = 1;
		else if (sscanf(line, "fnlayout,%lx,%lx", &l->fn_lo,
				&l->fn_hi) == 2)
			;
		else if (sscanf(line, "syscalls,%u,%lu", &i, &n) == 2 &&
			 i < OVH_NR_SECTIONS)
			syscalls[i] = n;
	}
	fclose(f);
	return have ? 0 : -1;
}

struct walk {
	const struct layout *l;
	uint32_t *insn;   /* by (pc - lo) / 4, from in_asm */
	uint32_t *fn_insn; /* by (pc - fn_lo) / 4: the hooks' library */
	int section;      /* -1 before the first mark */
	int sections;     /* marks after the first */
	struct ovh_section_count *sec;
};

/* The instruction word at pc in a counted text, or NULL outside them. */
static uint32_t *word_at(const struct walk *w, unsigned long pc)
{
	if (pc >= w->l->lo && pc < w->l->hi)
		return &w->insn[(pc - w->l->lo) / 4];
	if (w->fn_insn && pc >= w->l->fn_lo && pc < w->l->fn_hi)
		return &w->fn_insn[(pc - w->l->fn_lo) / 4];
	return NULL;
}

static void executed(struct walk *w, unsigned long pc)
{
	struct ovh_section_count *c;
	uint32_t *word = word_at(w, pc), insn;

	if (pc == w->l->mark) {
		w->section++;
		return;
	}
	if (w->section < 0 || w->section >= w->sections || !word)
		return;
	c = &w->sec[w->section];
	insn = *word;
	if (pc == w->l->begin || pc == w->l->end)
		ovh_count_call(c);
	if (is_pmu_read(insn)) {
		ovh_count_read(c);
		return;
	}
	c->lib++;
	if ((insn & 0xffe0001fu) == 0xd4000001u) /* svc #imm */
		c->syscalls++;
}

static int walk_log(const char *path, struct walk *w)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long pc, flags;
		unsigned word;
		char *b;

		if (strncmp(line, "Trace ", 6) == 0) {
			b = strchr(line, '[');
			if (b && sscanf(b, "[%lx/%lx", &flags, &pc) == 2)
				executed(w, pc);
		} else if (sscanf(line, "0x%lx: %x", &pc, &word) == 2 &&
			   word_at(w, pc)) {
			*word_at(w, pc) = word;
		}
	}
	fclose(f);
	return 0;
}

int ovh_qemu_report(const char *log, const char *guest_out,
		    const char *profile)
{
	static struct ovh_section_count sec[OVH_NR_SECTIONS];
	unsigned long syscalls[OVH_NR_SECTIONS] = { 0 };
	const struct ovh_profile *prof = ovh_profile_by_name(profile);
	struct layout l = { 0 };
	struct walk w = { &l, NULL, NULL, -1, OVH_NR_SECTIONS, sec };
	bool met;

	if (!prof || read_guest_out(guest_out, &l, syscalls) < 0 ||
	    l.hi <= l.lo) {
		fprintf(stderr, "overhead: no layout in %s\n", guest_out);
		return 1;
	}
	w.insn = calloc((l.hi - l.lo) / 4 + 1, sizeof(*w.insn));
	if (!w.insn || walk_log(log, &w) < 0 ||
	    w.section != OVH_NR_SECTIONS) {
		fprintf(stderr, "overhead: %s: %d of %d sections\n", log,
			w.section, OVH_NR_SECTIONS);
		free(w.insn);
		return 1;
	}
	free(w.insn);
	for (unsigned i = 0; i < OVH_NR_SECTIONS; i++)
		sec[i].syscalls += syscalls[i];
	ovh_report_header("arm64: counted from qemu-aarch64's log "
			  "(-singlestep -d in_asm,exec,nochain -dfilter "
			  "library text), each MRS answered by the "
			  "emulator's SIGILL handler");
	met = ovh_report_profile(prof, sec);
	ovh_report_footer();
	printf("# targets: %s (see README, Overhead)\n",
	       met ? "all met" : "some MISSED");
	return 0;
}

/*
 * The function-call row: the guest's run-function (one instrumented call
 * between two marks), the hooks' library counted with libtopdown's.
 */
int ovh_qemu_report_function(const char *log, const char *guest_out,
			     const char *profile)
{
	static struct ovh_section_count sec[1], no_pair;
	unsigned long syscalls[OVH_NR_SECTIONS] = { 0 };
	const struct ovh_profile *prof = ovh_profile_by_name(profile);
	struct layout l = { 0 };
	struct walk w = { &l, NULL, NULL, -1, 1, sec };

	if (!prof || read_guest_out(guest_out, &l, syscalls) < 0 ||
	    l.hi <= l.lo || l.fn_hi <= l.fn_lo) {
		fprintf(stderr, "overhead: no layouts in %s\n", guest_out);
		return 1;
	}
	w.insn = calloc((l.hi - l.lo) / 4 + 1, sizeof(*w.insn));
	w.fn_insn = calloc((l.fn_hi - l.fn_lo) / 4 + 1, sizeof(*w.fn_insn));
	if (!w.insn || !w.fn_insn || walk_log(log, &w) < 0 ||
	    w.section != 1) {
		fprintf(stderr, "overhead: %s: %d of 1 section\n", log,
			w.section);
		free(w.insn);
		free(w.fn_insn);
		return 1;
	}
	free(w.insn);
	free(w.fn_insn);
	sec[0].syscalls += syscalls[0];
	ovh_report_header("arm64: counted from qemu-aarch64's log, "
			  "libtopdown-functions.so's text with "
			  "libtopdown.so's");
	/* no pair target off PERF_METRICS: the row's is s=0 */
	ovh_report_function(prof, &no_pair, &sec[0]);
	ovh_report_footer();
	return 0;
}
