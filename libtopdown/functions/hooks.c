/* SPDX-License-Identifier: MIT */
/*
 * The -finstrument-functions hooks.  GCC and Clang call
 * __cyg_profile_func_enter(fn, call_site) after an instrumented
 * function's prologue and __cyg_profile_func_exit(fn, call_site) before
 * its epilogue (GCC manual, "Program Instrumentation Options").
 *
 * Each call is a libtopdown region, begun at entry and ended at exit on
 * the thread's own handle with a record buffer attached: ending appends
 * the call's raw counts (td_records_attach), and which call path (node)
 * it was goes into a parallel array.  When the buffer fills, it is
 * detached (its records turned into counts), folded into the nodes, and
 * attached again.  Counts add up, so a node's self counts are its calls'
 * counts minus those of the calls made from it, on counts, never shares.
 *
 * After a function's first call on a thread nothing here allocates or
 * makes a system call: the thread's tables are mapped once, with a fixed
 * capacity, and the shadow stack grows by mapped chunks only when a
 * thread goes deeper than ever before.  A hook inside a hook (a signal
 * handler that interrupted one) counts and returns.
 *
 * The shadow stack is resynchronised by the stack address of each hook
 * (the hook's canonical frame address, the instrumented function's stack
 * pointer): longjmp, C++ exceptions and thread cancellation leave
 * functions without their exit hook; the next hook finds their frames
 * below the stack pointer (the stack grows down), or an exit names a call
 * deeper in the stack, and ends them as abandoned.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "func.h"

#define FN_CHUNK_SHIFT 6
#define FN_CHUNK (1u << FN_CHUNK_SHIFT)
#define FN_CHUNKS 1024                /* 65536 calls deep */
#define FN_RECORDS 1024

/* A call in progress. */
struct fn_frame {
	void *fn, *site;
	uintptr_t sp;
	uint32_t node;         /* FN_NONE: not attributed */
	uint32_t saved_top;    /* the thread's top before this call */
	bool measured;         /* its region is open */
	struct td_region region;
};

/* The hooks are never instrumented, nor is anything they call here. */
void __cyg_profile_func_enter(void *fn, void *site) FN_NOINSTR TD_API;
void __cyg_profile_func_exit(void *fn, void *site) FN_NOINSTR TD_API;

pthread_mutex_t fn_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct fn_thread *fn_threads;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static atomic_bool stopped;     /* the exit report is out */

/* Initial-exec: the hooks read these without a __tls_get_addr call. */
#define FN_TLS __thread __attribute__((tls_model("initial-exec")))
static FN_TLS struct fn_thread *me;
/*
 * The hooks' fast test: the thread's state while it is measured and no
 * hook of it runs (NULL inside a hook, so a signal handler's hooks take
 * the slow path and count as re-entered), before its first call, after
 * its exit or the report.
 */
static FN_TLS struct fn_thread *ready;
static FN_TLS int in_hook;
static FN_TLS bool setting_up;

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

static size_t hash_size(const struct fn_thread *t)
{
	return ((size_t)1 << t->hash_bits) * sizeof(*t->hash);
}

/* ---- the tree of call paths ---------------------------------------------- */

static size_t slot_of(const struct fn_thread *t, uint32_t parent, void *fn)
{
	uint64_t k = (uint64_t)(uintptr_t)fn * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)parent * 0xc2b2ae3d27d4eb4full;

	return (size_t)(k >> (64 - t->hash_bits));
}

/* The node of fn called from parent: its index, or FN_NONE (full). */
static uint32_t node_of(struct fn_thread *t, uint32_t parent, void *fn)
{
	size_t mask = ((size_t)1 << t->hash_bits) - 1;
	size_t i = slot_of(t, parent, fn);
	struct fn_node *n;

	for (;; i = (i + 1) & mask) {
		uint32_t v = t->hash[i];

		if (!v)
			break;
		n = &t->nodes[v - 1];
		if (n->fn == fn && n->parent == parent)
			return v - 1;
	}
	/* the cold path: a call path first taken on this thread */
	if (t->n_nodes == t->cap_nodes) {
		t->lost[FN_LOST_NODES]++;
		return FN_NONE;
	}
	n = &t->nodes[t->n_nodes];
	n->fn = fn;
	n->parent = parent;
	if (fn_config.filter && !fn_filter_allows(fn))
		n->flags |= FN_NODE_EXCLUDED;
	t->hash[i] = ++t->n_nodes;
	return t->n_nodes - 1;
}

/* ---- folding records into nodes ----------------------------------------- */

static void counts_add(struct fn_counts *c, const struct td_record *r, int s)
{
	c->slots += s * (int64_t)r->slots;
	for (int i = 0; i < TD_CAT_COUNT; i++)
		c->cat[i] += s * r->cat[i];
	c->qerr += r->qerr; /* bounds add up, subtracted or not */
	c->flags |= r->flags & (TD_RESULT_L2 | TD_RESULT_CYCLES |
				TD_RESULT_L2_FE_BE);
	c->l1_call |= !(r->flags & TD_RESULT_L2);
}

static void extremes(struct fn_node *n, const struct td_record *r)
{
	int64_t den = r->cat[0] + r->cat[1] + r->cat[2] + r->cat[3] +
		      r->cat[TD_CAT_SMT_CONTENTION];

	if (den <= 0)
		return;
	for (int i = 0; i < TD_L1_COUNT; i++) {
		double f = (double)(r->cat[i] < 0 ? 0 : r->cat[i]) /
			   (double)den;

		if (n->measured == 1 || f < n->min[i])
			n->min[i] = f;
		if (n->measured == 1 || f > n->max[i])
			n->max[i] = f;
	}
}

/* Fewer slots per call than asked: later calls counted, not measured. */
static void check_threshold(struct fn_node *n)
{
	enum { ENOUGH_CALLS = 8 };

	if (fn_config.min_slots && n->measured >= ENOUGH_CALLS &&
	    (uint64_t)n->incl.slots < fn_config.min_slots * n->measured)
		n->flags |= FN_NODE_SKIP;
}

#define FN_ABANDONED (1u << 31) /* rec_node: the call's exit never came */

static void fold_one(struct fn_thread *t, const struct td_record *r,
		     uint32_t v)
{
	struct fn_node *n = &t->nodes[v & ~FN_ABANDONED];
	struct fn_node *parent = n->parent == FN_NONE ? NULL
						       : &t->nodes[n->parent];

	if (v & FN_ABANDONED) {
		n->abandoned++;
		if (parent)
			parent->tainted++;
		return;
	}
	if (r->flags & TD_RESULT_UNRELIABLE) {
		n->unreliable++;
		if (parent)
			parent->tainted++;
		return;
	}
	counts_add(&n->incl, r, 1);
	counts_add(&n->self, r, 1);
	if (parent)
		counts_add(&parent->self, r, -1);
	n->measured++;
	extremes(n, r);
	check_threshold(n);
}

static void fold(struct fn_thread *t)
{
	size_t count = 0;

	pthread_mutex_lock(&t->lock);
	if (td_records_detach(t->td, &count, NULL) == 0) {
		if (count > t->n_recs)
			count = t->n_recs;
		for (size_t i = 0; i < count; i++)
			fold_one(t, &t->recs[i], t->rec_node[i]);
		t->lost[FN_LOST_FAILED_END] += t->n_recs - count;
	}
	t->n_recs = 0;
	td_records_attach(t->td, t->recs, t->cap_recs);
	pthread_mutex_unlock(&t->lock);
}

/* ---- the shadow stack ------------------------------------------------------ */

static struct fn_frame *frame_at(struct fn_thread *t, uint32_t d)
{
	return &t->chunks[d >> FN_CHUNK_SHIFT][d & (FN_CHUNK - 1)];
}

/* A frame for depth t->depth: NULL past the capacity. */
static struct fn_frame *frame_push(struct fn_thread *t)
{
	uint32_t c = t->depth >> FN_CHUNK_SHIFT;

	if (t->depth & (FN_CHUNK - 1)) /* in the top frame's chunk */
		return t->topf = frame_at(t, t->depth++);
	if (c >= FN_CHUNKS)
		return NULL;
	if (!t->chunks[c]) { /* deeper than ever before on this thread */
		t->chunks[c] = map(FN_CHUNK * sizeof(struct fn_frame));
		if (!t->chunks[c])
			return NULL;
	}
	return t->topf = frame_at(t, t->depth++);
}

/* End the top frame's region; its record is the node's, or abandoned. */
static void frame_end(struct fn_thread *t, struct fn_frame *f, bool abandoned)
{
	if (!f->measured)
		return;
	t->top = f->saved_top;
	if (td_region_end(t->td, &f->region, NULL) == 0)
		t->rec_node[t->n_recs++] = f->node |
					   (abandoned ? FN_ABANDONED : 0);
	else
		t->lost[FN_LOST_FAILED_END]++;
	/* full: folded now, so that the next end has room */
	if (t->n_recs == t->cap_recs)
		fold(t);
}

static void frame_pop(struct fn_thread *t, bool abandoned)
{
	struct fn_frame *f = t->topf;

	t->depth--;
	t->topf = t->depth ? frame_at(t, t->depth - 1) : NULL;
	frame_end(t, f, abandoned);
}

/*
 * Has the call of frame f left, seen from a call of site at sp?  A frame
 * below sp has (the stack grows down).  One at sp is a function inlined
 * into the caller (GCC instruments inline copies: they share the host's
 * frame and its return address, so the same site), or one that left and
 * whose caller now calls another function from another site.  The same
 * function called again from the same site after a longjmp looks like an
 * inlined call: it stays, and goes when its caller's exit comes.
 */
static bool has_left(const struct fn_frame *f, uintptr_t sp, void *site)
{
	return f->sp < sp || (f->sp == sp && f->site != site);
}

static void drop_dead(struct fn_thread *t, uintptr_t sp, void *site)
{
	while (t->topf && has_left(t->topf, sp, site))
		frame_pop(t, true);
	if (!t->depth)
		t->over = 0;
}

/* ---- thread state ------------------------------------------------------- */

static void thread_stack(struct fn_thread *t)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	t->stack_lo = 0;
	t->stack_hi = UINTPTR_MAX;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &lo, &size) == 0) {
		t->stack_lo = (uintptr_t)lo;
		t->stack_hi = (uintptr_t)lo + size;
	}
	pthread_attr_destroy(&a);
}

static bool tables_map(struct fn_thread *t)
{
	unsigned bits = 1;

	while (((size_t)1 << bits) < 2 * (size_t)t->cap_nodes)
		bits++;
	t->hash_bits = bits;
	t->nodes = map(t->cap_nodes * sizeof(*t->nodes));
	t->hash = map(hash_size(t));
	t->chunks = map(FN_CHUNKS * sizeof(*t->chunks));
	t->cap_recs = FN_RECORDS;
	t->recs = map(t->cap_recs * sizeof(*t->recs));
	t->rec_node = map(t->cap_recs * sizeof(*t->rec_node));
	return t->nodes && t->hash && t->chunks && t->recs && t->rec_node;
}

/* The tables a thread's report needs no more (it has exited). */
static void tables_trim(struct fn_thread *t)
{
	for (unsigned c = 0; t->chunks && c < FN_CHUNKS; c++)
		unmap(t->chunks[c], FN_CHUNK * sizeof(struct fn_frame));
	unmap(t->chunks, FN_CHUNKS * sizeof(*t->chunks));
	unmap(t->hash, t->hash ? hash_size(t) : 0);
	unmap(t->recs, t->cap_recs * sizeof(*t->recs));
	unmap(t->rec_node, t->cap_recs * sizeof(*t->rec_node));
	t->chunks = NULL;
	t->hash = NULL;
	t->recs = NULL;
	t->rec_node = NULL;
}

static int handle_open(struct fn_thread *t)
{
	int err = td_open(&t->td, NULL);

	if (err < 0)
		return err;
	return td_records_attach(t->td, t->recs, t->cap_recs);
}

static struct fn_thread *thread_new(void)
{
	struct fn_thread *t = map(sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->tid = gettid();
	t->top = FN_NONE;
	t->cap_nodes = fn_config.max_nodes;
	thread_stack(t);
	if (!tables_map(t) || handle_open(t) < 0)
		t->failed = true;
	pthread_setspecific(thread_key, t);
	pthread_mutex_lock(&fn_reg_lock);
	t->next = fn_threads;
	fn_threads = t;
	pthread_mutex_unlock(&fn_reg_lock);
	return t;
}

/* Calls still in progress at a thread's (or the process's) end: measured
 * up to now, since they ran until now. */
static void end_open_calls(struct fn_thread *t)
{
	while (t->depth)
		frame_pop(t, false);
	t->over = 0;
}

/* pthread key destructor: thread exit or cancellation. */
static void FN_NOINSTR thread_gone(void *p)
{
	struct fn_thread *t = p;

	in_hook++;
	ready = NULL; /* for good: later hooks count as lost */
	if (!t->failed && t->td) {
		end_open_calls(t);
		fold(t);
		pthread_mutex_lock(&t->lock);
		td_close(t->td);
		t->td = NULL;
		t->exited = true;
		tables_trim(t);
		pthread_mutex_unlock(&t->lock);
	}
	t->exited = true;
	in_hook--;
}

/* ---- fork: the child starts afresh, the parent's figures are its own ---- */

static void before_fork(void)
{
	pthread_mutex_lock(&fn_reg_lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&fn_reg_lock);
}

static void after_fork_child(void)
{
	struct fn_thread *t = fn_threads, *next;

	pthread_mutex_init(&fn_reg_lock, NULL);
	fn_threads = NULL;
	for (; t; t = next) { /* other threads do not exist here */
		next = t->next;
		if (t == me)
			continue;
		tables_trim(t);
		unmap(t->nodes, t->cap_nodes * sizeof(*t->nodes));
		munmap(t, sizeof(*t));
	}
	if (me) {
		td_close(me->td); /* the parent's handle: closable here */
		tables_trim(me);
		unmap(me->nodes, me->cap_nodes * sizeof(*me->nodes));
		munmap(me, sizeof(*me));
		me = NULL;
		ready = NULL;
		pthread_setspecific(thread_key, NULL);
	}
}

static void init_once(void)
{
	fn_config_read();
	pthread_key_create(&thread_key, thread_gone);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* The calling thread's state, made at its first instrumented call. */
static struct fn_thread *thread_get(void)
{
	if (me || setting_up)
		return me;
	setting_up = true;
	pthread_once(&once, init_once);
	me = thread_new();
	setting_up = false;
	return me;
}

/* ---- the hooks ------------------------------------------------------------ */

/* Outside the thread's stack: a signal's alternate stack, a context. */
static bool other_stack(const struct fn_thread *t, uintptr_t sp)
{
	return sp < t->stack_lo || sp >= t->stack_hi;
}

/* Not measured here (the slow path): why, counted; NULL, or the state. */
static struct fn_thread *usable(uintptr_t sp)
{
	struct fn_thread *t;

	/* inside a hook (ready cleared) or a report (in_hook) */
	if (in_hook || (me && !ready && !me->exited && !me->failed &&
			!atomic_load_explicit(&stopped, memory_order_relaxed))) {
		if (me)
			me->lost[FN_LOST_REENTERED]++;
		return NULL;
	}
	t = me ? me : thread_get();
	if (!t || t->exited)
		return NULL;
	if (t->failed) {
		t->lost[FN_LOST_NO_HANDLE]++;
		return NULL;
	}
	if (atomic_load_explicit(&stopped, memory_order_relaxed)) {
		t->lost[FN_LOST_AFTER_EXIT]++;
		return NULL;
	}
	if (other_stack(t, sp)) {
		t->lost[FN_LOST_OTHER_STACK]++;
		return NULL;
	}
	return t;
}

static void enter(struct fn_thread *t, void *fn, void *site, uintptr_t sp)
{
	struct fn_frame *f;
	uint32_t v;

	if (t->topf && has_left(t->topf, sp, site))
		drop_dead(t, sp, site);
	if (t->over || !(f = frame_push(t))) {
		t->over++;
		t->lost[FN_LOST_DEPTH]++;
		return;
	}
	if (fn == t->last_fn && t->top == t->last_parent) {
		v = t->last_node;
	} else {
		v = node_of(t, t->top, fn);
		if (v != FN_NONE) {
			t->last_fn = fn;
			t->last_parent = t->top;
			t->last_node = v;
		}
	}
	f->fn = fn;
	f->site = site;
	f->sp = sp;
	f->node = v;
	f->saved_top = t->top;
	f->measured = false;
	if (v == FN_NONE)
		return;
	t->nodes[v].calls++;
	if (t->nodes[v].flags & (FN_NODE_EXCLUDED | FN_NODE_SKIP))
		return;
	if (td_region_begin(t->td, &f->region) < 0) {
		t->lost[FN_LOST_FAILED_END]++;
		return;
	}
	f->measured = true;
	t->top = v;
}

/* The depth of the call fn made from site, searched down from the top. */
static bool find_call(struct fn_thread *t, void *fn, void *site, uint32_t *d)
{
	for (uint32_t i = t->depth; i-- > 0;) {
		const struct fn_frame *f = frame_at(t, i);

		if (f->fn == fn && f->site == site) {
			*d = i;
			return true;
		}
	}
	return false;
}

static void leave(struct fn_thread *t, void *fn, void *site)
{
	const struct fn_frame *f;
	uint32_t d;

	if (t->over) {
		t->over--;
		return;
	}
	f = t->topf;
	if (f && f->fn == fn && f->site == site) {
		frame_pop(t, false);
		return;
	}
	/* calls above it left without an exit: abandoned */
	if (!find_call(t, fn, site, &d)) {
		t->lost[FN_LOST_STRAY_EXIT]++;
		return;
	}
	while (t->depth > d + 1)
		frame_pop(t, true);
	frame_pop(t, false);
}

/*
 * The hook's guard: ready is cleared while a hook runs (in_hook while a
 * report or a fold does), so that a hook inside one (a signal
 * handler's) takes the slow path and counts as re-entered.  The slow
 * path finds why the thread is not ready, or makes it so at its first
 * call.
 */
static struct fn_thread *hook_begin(uintptr_t sp)
{
	struct fn_thread *t = ready;

	if (__builtin_expect(t && !other_stack(t, sp), 1)) {
		ready = NULL;
		return t;
	}
	return usable(sp);
}

static void hook_end(struct fn_thread *t)
{
	ready = t;
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
	struct fn_thread *t = hook_begin(sp);

	if (!t)
		return;
	enter(t, fn, site, sp);
	hook_end(t);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
	struct fn_thread *t = hook_begin(sp);

	if (!t)
		return;
	leave(t, fn, site);
	hook_end(t);
}

/* ---- the report's side ---------------------------------------------------- */

void fn_fold_self(bool end_open)
{
	struct fn_thread *t = me;

	struct fn_thread *was = ready;

	if (!t || t->failed || t->exited || in_hook)
		return;
	in_hook++;
	ready = NULL;
	if (end_open)
		end_open_calls(t);
	fold(t);
	ready = was;
	in_hook--;
}

int td_functions_report(FILE *f, enum td_format fmt)
{
	struct fn_thread *was = ready;
	int err;

	if (!f || (fmt != TD_FORMAT_TABLE && fmt != TD_FORMAT_CSV &&
		   fmt != TD_FORMAT_JSONL))
		return -EINVAL;
	in_hook++;
	ready = NULL;
	if (me && !me->failed && !me->exited)
		fold(me); /* its calls in progress are not in the report */
	err = fn_report_write(f, fmt);
	ready = was;
	in_hook--;
	return err;
}

/*
 * Process exit: TOPDOWN_REPORT asked for the report.  Calls still in
 * progress on this thread are ended here (main's, when exit() is called
 * from it); later hooks count as after the report.
 */
__attribute__((destructor)) static void FN_NOINSTR report_at_exit(void)
{
	const char *path = getenv("TOPDOWN_REPORT");
	const char *format = getenv("TOPDOWN_FORMAT");
	enum td_format fmt = TD_FORMAT_TABLE;
	FILE *f;

	fn_fold_self(true);
	atomic_store(&stopped, true);
	ready = NULL; /* this thread's later hooks count as after it */
	if (!path || !fn_threads)
		return;
	if (format && !strcmp(format, "csv"))
		fmt = TD_FORMAT_CSV;
	else if (format && !strcmp(format, "jsonl"))
		fmt = TD_FORMAT_JSONL;
	f = strcmp(path, "stderr") ? fopen(path, "ae") : stderr;
	if (!f)
		f = stderr;
	in_hook++;
	fn_report_write(f, fmt);
	in_hook--;
	if (f != stderr)
		fclose(f);
	else
		fflush(f);
}
