/* SPDX-License-Identifier: MIT */
/*
 * The truth of a program's named regions, kept apart from the library:
 * preloaded after the emulator (topdown run --emulate puts it first), it
 * wraps td_named_begin/end and their _str forms, so that an unmodified
 * program linked with libtopdown.so runs on work the test knows.
 *
 * Each thread's work is declared (emu_preload_run, test/emu/
 * emu_preload.c): its CPU time is not counted, so nothing depends on the
 * machine's speed or load.  Every end first runs a chunk of work whose
 * length and mix follow from the region's name and the thread's count of
 * ends, inside the region being ended and every region around it.  The
 * emulator's truth is taken right after an outermost begin and right
 * before its end: between them lies the region's work and nothing else.
 * Counted here, by the wrapper's own bookkeeping: each thread's outermost
 * activations of each name, the deepest recursion, the truth summed.
 *
 * At exit, with TD_TRUTH_OUT set, one line per thread and region:
 *   name,tid,calls,max_depth,slots,cat0,...,cat8
 * (the categories in emu_truth's order); test/pool_check.c compares them
 * with the report.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topdown.h"

#define NR_TRUTH 10 /* slots, then the 9 categories */
#define MAX_NAMES 32

struct entry {
	char name[48];
	pid_t tid;
	uint64_t depth, calls, max_depth;
	uint64_t t0[NR_TRUTH], sum[NR_TRUTH];
	struct entry *next;
};

static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;

static __thread struct entry *mine[MAX_NAMES];
static __thread unsigned nr_mine;
static __thread bool declared;
static __thread uint64_t ends;

static void (*emu_run)(uint64_t slots);
static void (*emu_fractions)(const double *f);
static void (*emu_truth)(uint64_t out[NR_TRUTH]);

static void *must(void *handle, const char *sym)
{
	void *p = dlsym(handle, sym);

	if (!p) {
		fprintf(stderr, "truth_shim: %s not found: run under "
			"topdown run --emulate\n", sym);
		abort();
	}
	return p;
}

#define REAL(fn) \
	static __typeof__(fn) *real; \
	if (!real) \
		real = (__typeof__(fn) *)must(RTLD_NEXT, #fn)

/* The thread's entry for name, made at its first use. */
static struct entry *entry_of(const char *name)
{
	struct entry *e;

	for (unsigned i = 0; i < nr_mine; i++)
		if (!strcmp(mine[i]->name, name))
			return mine[i];
	e = calloc(1, sizeof(*e));
	if (!e || nr_mine == MAX_NAMES || strlen(name) >= sizeof(e->name))
		abort();
	strcpy(e->name, name);
	e->tid = gettid();
	mine[nr_mine++] = e;
	pthread_mutex_lock(&entries_lock);
	e->next = entries;
	entries = e;
	pthread_mutex_unlock(&entries_lock);
	return e;
}

/* From here on the thread's work is what this file declares. */
static void declare(void)
{
	if (declared)
		return;
	if (!emu_run) {
		emu_run = (void (*)(uint64_t))must(RTLD_DEFAULT,
						    "emu_preload_run");
		emu_fractions = (void (*)(const double *))must(
			RTLD_DEFAULT, "emu_preload_set_fractions");
		emu_truth = (void (*)(uint64_t *))must(RTLD_DEFAULT,
						       "emu_preload_truth");
	}
	emu_run(0);
	declared = true;
}

static uint64_t hash(const char *s, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h * 0x9e3779b97f4a7c15ull;
}

/* A byte of h as a fraction in [lo, lo + span). */
static double part(uint64_t h, int byte, double lo, double span)
{
	return lo + span * (double)((h >> (8 * byte)) & 0xff) / 256;
}

/* The work an end runs: its length and mix from the name and the count. */
static void work(const char *name)
{
	uint64_t h = hash(name, ++ends);
	double f[8];

	f[0] = part(h, 0, 0.1, 0.5);
	f[1] = part(h, 1, 0.02, 0.2);
	f[2] = part(h, 2, 0.05, 0.2);
	f[3] = 1 - f[0] - f[1] - f[2];
	for (int i = 0; i < 4; i++)
		f[4 + i] = f[i] * part(h, 3 + i, 0.1, 0.8);
	emu_fractions(f);
	emu_run(30000 + (h >> 40) % 90000);
}

static void begun(const char *name)
{
	struct entry *e = entry_of(name);

	if (e->depth++ == 0)
		emu_truth(e->t0);
	if (e->depth > e->max_depth)
		e->max_depth = e->depth;
}

static void ending(const char *name)
{
	struct entry *e = entry_of(name);
	uint64_t t1[NR_TRUTH];

	work(name);
	if (e->depth == 0 || --e->depth > 0)
		return;
	emu_truth(t1);
	for (int i = 0; i < NR_TRUTH; i++)
		e->sum[i] += t1[i] - e->t0[i];
	e->calls++;
}

int td_named_begin(struct td *td, struct td_named *n)
{
	REAL(td_named_begin);
	int err;

	declare();
	err = real(td, n);
	if (err == 0)
		begun(n->name);
	return err;
}

int td_named_end(struct td *td, struct td_named *n, struct td_result *res)
{
	REAL(td_named_end);

	declare();
	ending(n->name);
	return real(td, n, res);
}

int td_named_begin_str(struct td *td, const char *name)
{
	REAL(td_named_begin_str);
	int err;

	declare();
	err = real(td, name);
	if (err == 0)
		begun(name);
	return err;
}

int td_named_end_str(struct td *td, const char *name, struct td_result *res)
{
	REAL(td_named_end_str);

	declare();
	ending(name);
	return real(td, name, res);
}

__attribute__((destructor)) static void write_truth(void)
{
	const char *path = getenv("TD_TRUTH_OUT");
	FILE *f;

	if (!path || !entries)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	for (const struct entry *e = entries; e; e = e->next) {
		fprintf(f, "%s,%d,%llu,%llu", e->name, (int)e->tid,
			(unsigned long long)e->calls,
			(unsigned long long)e->max_depth);
		for (int i = 0; i < NR_TRUTH; i++)
			fprintf(f, ",%llu", (unsigned long long)e->sum[i]);
		fputc('\n', f);
	}
	fclose(f);
}
