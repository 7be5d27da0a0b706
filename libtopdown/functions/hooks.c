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
 * capacity, and the shadow stack's reserved mapping is made writable a
 * chunk at a time only when a thread goes deeper than ever before.  A
 * hook inside a hook (a signal handler that interrupted one) counts and
 * returns.
 *
 * The hooks' fast paths (a call whose caller called the same function
 * last time, and the exit of the innermost call) test, push or pop, and
 * call the library; everything else (resynchronisation, a new call path,
 * a call not measured, the first call of a thread) takes the general
 * path.
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
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "func.h"

#define FN_MAX_DEPTH 65536           /* calls in progress per thread */
#define FN_GROW 64                   /* frames made writable at a time */
#define FN_RECORDS 1024

/*
 * A call in progress.  A call not measured (filtered, under the
 * threshold, no node) keeps its site complemented, so that its exit
 * never matches on the fast path, and its caller's node as its node (the
 * parent of the calls it makes).  A real site never has its top bit set
 * (user-space addresses), its complement always has.
 */
struct fn_frame {
	void *fn, *site;
	uintptr_t sp;
	struct fn_node *node;
	struct td_region region;
};

/* The top while past the stack's capacity: no fast path matches it (no
 * function is at address 0, no stack pointer at 0). */
static struct fn_frame over_mark;

/* The hooks are never instrumented, nor is anything they call here. */
void __cyg_profile_func_enter(void *fn, void *site) FN_NOINSTR TD_API;
void __cyg_profile_func_exit(void *fn, void *site) FN_NOINSTR TD_API;

pthread_mutex_t fn_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct fn_thread *fn_threads;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static atomic_bool stopped;     /* the exit report is out */

/* Initial-exec: the hooks read these without a __tls_get_addr call. */
#define FN_TLS __thread __attribute__((tls_model("initial-exec")))
static FN_TLS struct fn_thread *me;
/*
 * The hooks' fast test: the thread's state while it is measured, else
 * idle (before its first call, after its exit or the report, inside a
 * report).  Its busy flag is set while a hook runs, so that a signal
 * handler's hooks take the slow path and count as re-entered; idle's
 * stays set.
 */
static struct fn_thread idle = { .busy = true };
static FN_TLS struct fn_thread *cur = &idle;
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

static struct fn_node *parent_of(struct fn_thread *t, const struct fn_node *n)
{
	return n->parent == FN_NONE ? &t->root : &t->nodes[n->parent];
}

static uint32_t index_of(const struct fn_thread *t, const struct fn_node *n)
{
	return n == &t->root ? FN_NONE : (uint32_t)(n - t->nodes);
}

/* Fewer slots per call than asked: later calls counted, not measured
 * (and no longer found by the fast path, which measures). */
static void check_threshold(struct fn_thread *t, struct fn_node *n)
{
	enum { ENOUGH_CALLS = 8 };
	struct fn_node *parent;

	if (fn_config.min_slots && n->measured >= ENOUGH_CALLS &&
	    (uint64_t)n->incl.slots < fn_config.min_slots * n->measured) {
		n->flags |= FN_NODE_SKIP;
		parent = parent_of(t, n);
		if (parent->child == n)
			parent->child_fn = NULL;
	}
}

#define FN_ABANDONED ((uintptr_t)1) /* rec_node: the exit never came */

static void fold_one(struct fn_thread *t, const struct td_record *r,
		     struct fn_node *tagged)
{
	uintptr_t v = (uintptr_t)tagged;
	struct fn_node *n = (struct fn_node *)(v & ~FN_ABANDONED);
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
	check_threshold(t, n);
}

static void fold(struct fn_thread *t)
{
	uint32_t n_recs = fn_pending(t);
	size_t count = 0;

	pthread_mutex_lock(&t->lock);
	if (td_records_detach(t->td, &count, NULL) == 0) {
		if (count > n_recs)
			count = n_recs;
		for (size_t i = 0; i < count; i++)
			fold_one(t, &t->recs[i], t->rec_node[i]);
		t->lost[FN_LOST_FAILED_END] += n_recs - count;
	}
	t->rec_next = t->rec_node;
	t->rec_left = t->cap_recs;
	td_records_attach(t->td, t->recs, t->cap_recs);
	pthread_mutex_unlock(&t->lock);
}

/* ---- the shadow stack ------------------------------------------------------ */

static bool measured(const struct fn_frame *f)
{
	return f->node != f[-1].node;
}

static void *site_of(const struct fn_frame *f)
{
	return measured(f) ? f->site : (void *)~(uintptr_t)f->site;
}

static void not_measured(struct fn_frame *f, void *site)
{
	f->site = (void *)~(uintptr_t)site;
	f->node = f[-1].node;
}

/* Deeper than ever before on this thread: the next frames made usable. */
static bool frames_grow(struct fn_thread *t)
{
	struct fn_frame *end = t->frames + FN_MAX_DEPTH + 1;
	size_t n = (size_t)(end - t->limit) < FN_GROW ? (size_t)(end - t->limit)
						      : FN_GROW;

	if (!n || mprotect(t->limit, n * sizeof(*t->limit),
			   PROT_READ | PROT_WRITE) != 0)
		return false;
	t->limit += n;
	return true;
}

/* A frame above the top (the thread not over): NULL past the capacity. */
static struct fn_frame *frame_push(struct fn_thread *t)
{
	struct fn_frame *f = t->topf + 1;

	if (f == t->limit && !frames_grow(t))
		return NULL;
	return t->topf = f;
}

/* End a frame's region; its record is the node's, or abandoned. */
static void frame_end(struct fn_thread *t, struct fn_frame *f, bool abandoned)
{
	*t->rec_next = (struct fn_node *)((uintptr_t)f->node |
					  (abandoned ? FN_ABANDONED : 0));
	if (td_region_end(t->td, &f->region, NULL) != 0) {
		t->lost[FN_LOST_FAILED_END]++;
		return;
	}
	t->rec_next++;
	/* full: folded now, so that the next end has room */
	if (--t->rec_left == 0)
		fold(t);
}

static void frame_pop(struct fn_thread *t, bool abandoned)
{
	struct fn_frame *f = t->topf;

	t->topf = f - 1;
	if (measured(f))
		frame_end(t, f, abandoned);
}

/* Calls past the capacity have all left with the frame under them. */
static void over_clear(struct fn_thread *t)
{
	if (t->over) {
		t->over = 0;
		t->topf = t->over_top;
	}
}

/*
 * Has the call of frame f left, seen from a call of site at sp?  A frame
 * below sp has (the stack grows down).  One at sp is a function inlined
 * into the caller (GCC instruments inline copies: they share the host's
 * frame and its return address, so the same site), or one that left and
 * whose caller now calls another function from another site.  The same
 * function called again from the same site after a longjmp looks like an
 * inlined call: it stays, and goes when its caller's exit comes.  The
 * root frame (at the highest address) never leaves.
 */
static bool has_left(const struct fn_frame *f, uintptr_t sp, void *site)
{
	return f->sp < sp || (f->sp == sp && site_of(f) != site);
}

static void drop_dead(struct fn_thread *t, uintptr_t sp, void *site)
{
	struct fn_frame *top = t->over ? t->over_top : t->topf;

	if (top == t->frames || !has_left(top, sp, site))
		return;
	over_clear(t);
	while (t->topf != t->frames && has_left(t->topf, sp, site))
		frame_pop(t, true);
}

/* ---- thread state ------------------------------------------------------- */

static void thread_stack(struct fn_thread *t)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	t->stack_lo = 0;
	t->stack_size = UINTPTR_MAX;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &lo, &size) == 0) {
		t->stack_lo = (uintptr_t)lo;
		t->stack_size = size;
	}
	pthread_attr_destroy(&a);
}

static size_t frames_size(void)
{
	return (FN_MAX_DEPTH + 1) * sizeof(struct fn_frame);
}

/* The shadow stack: reserved whole (no memory committed), made usable
 * FN_GROW frames at a time; frames[0] is the root, above every call. */
static bool frames_map(struct fn_thread *t)
{
	void *p = mmap(NULL, frames_size(), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return false;
	t->frames = p;
	t->limit = t->frames;
	if (!frames_grow(t))
		return false;
	t->frames[0].node = &t->root;
	t->topf = t->frames;
	return true;
}

static bool tables_map(struct fn_thread *t)
{
	unsigned bits = 1;

	while (((size_t)1 << bits) < 2 * (size_t)t->cap_nodes)
		bits++;
	t->hash_bits = bits;
	t->root.parent = FN_NONE;
	t->nodes = map(t->cap_nodes * sizeof(*t->nodes));
	t->hash = map(hash_size(t));
	t->cap_recs = FN_RECORDS;
	t->recs = map(t->cap_recs * sizeof(*t->recs));
	t->rec_node = map(t->cap_recs * sizeof(*t->rec_node));
	t->rec_next = t->rec_node;
	t->rec_left = t->cap_recs;
	return frames_map(t) && t->nodes && t->hash && t->recs && t->rec_node;
}

/* The tables a thread's report needs no more (it has exited). */
static void tables_trim(struct fn_thread *t)
{
	unmap(t->frames, t->frames ? frames_size() : 0);
	unmap(t->hash, t->hash ? hash_size(t) : 0);
	unmap(t->recs, t->cap_recs * sizeof(*t->recs));
	unmap(t->rec_node, t->cap_recs * sizeof(*t->rec_node));
	t->frames = NULL;
	t->topf = NULL;
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

/* Published with a compare-and-swap, no lock: a thread's first hook may
 * run in a signal handler that interrupted the lock's holder. */
static void registry_push(struct fn_thread *t)
{
	t->next = __atomic_load_n(&fn_threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&fn_threads, &t->next, t, true,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/*
 * The thread's state, at its first instrumented call, which may run in a
 * signal handler that interrupted malloc or a lock's holder: only
 * async-signal-safe calls here (mmap, gettid; signal-safety(7)), no
 * malloc, lock or dlsym.  pthread_setspecific stores into the thread's
 * own array for the first PTHREAD_KEY_2NDLEVEL_SIZE keys (glibc,
 * nptl/pthread_setspecific.c), which the key made at load time is.
 */
static struct fn_thread *thread_new(void)
{
	struct fn_thread *t = map(sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->tid = gettid();
	t->cap_nodes = fn_config.max_nodes;
	if (!tables_map(t))
		t->failed = true;
	pthread_setspecific(thread_key, t);
	registry_push(t);
	return t;
}

/*
 * Inside a signal handler?  Its signal is blocked while it runs (unless
 * the handler asked SA_NODEFER; sigaction(2)), so a blocked signal that
 * has a handler says it may be.  pthread_sigmask and sigaction are
 * async-signal-safe (signal-safety(7)).
 */
static bool maybe_in_handler(void)
{
	sigset_t blocked;

	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
		return false;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigismember(&blocked, sig) != 1 ||
		    sigaction(sig, NULL, &sa) != 0)
			continue;
		if (sa.sa_flags & SA_SIGINFO || (sa.sa_handler != SIG_DFL &&
						 sa.sa_handler != SIG_IGN))
			return true;
	}
	return false;
}

/*
 * Opening the handle allocates (td_open), which a signal handler that
 * interrupted malloc must not do: while the thread may be in a handler,
 * its calls are counted as in_signal and the handle waits.  Past
 * FN_DEFER_MAX such calls a signal kept blocked is taken as the
 * thread's own mask, not a handler's, and the handle is opened.
 */
#define FN_DEFER_MAX 256

static bool handle_waits(struct fn_thread *t, bool entering)
{
	if (t->deferred >= FN_DEFER_MAX || !maybe_in_handler())
		return false;
	t->deferred++;
	t->lost[FN_LOST_IN_SIGNAL] += entering; /* calls, not hooks */
	return true;
}

/* The handle and the stack's range, at the thread's first call outside
 * a signal handler. */
static bool thread_activate(struct fn_thread *t, bool entering)
{
	uintptr_t hi;

	if (handle_waits(t, entering))
		return false;
	in_hook++; /* a hook inside td_open counts as re-entered */
	thread_stack(t);
	/* the root frame at the stack's top: a hook above it is on another
	 * stack */
	hi = t->stack_lo + t->stack_size;
	t->frames[0].sp = hi < t->stack_lo ? UINTPTR_MAX : hi;
	if (handle_open(t) < 0)
		t->failed = true;
	in_hook--;
	return !t->failed;
}

/* Calls still in progress at a thread's (or the process's) end: measured
 * up to now, since they ran until now. */
static void end_open_calls(struct fn_thread *t)
{
	over_clear(t);
	while (t->topf && t->topf != t->frames)
		frame_pop(t, false);
}

/* Calls in progress when the thread exits (pthread_exit, cancellation):
 * their exits never come, they are abandoned. */
static void abandon_open_calls(struct fn_thread *t)
{
	over_clear(t);
	while (t->topf && t->topf != t->frames)
		frame_pop(t, true);
}

/* pthread key destructor: thread exit or cancellation. */
static void FN_NOINSTR thread_gone(void *p)
{
	struct fn_thread *t = p;

	in_hook++;
	cur = &idle; /* for good: later hooks count as lost */
	if (!t->failed && t->td) {
		abandon_open_calls(t);
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
		cur = &idle;
		pthread_setspecific(thread_key, NULL);
	}
}

static void init_once(void)
{
	pthread_key_create(&thread_key, thread_gone);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* At load: the key and the fork handlers (they may allocate), so that no
 * thread's first hook makes them in a signal handler; hooks before this
 * (other constructors') make them then.  The settings are read at the
 * first instrumented call (getenv only). */
__attribute__((constructor)) static void FN_NOINSTR init_at_load(void)
{
	pthread_once(&once, init_once);
}

/* The calling thread's state, made at its first instrumented call. */
static struct fn_thread *thread_get(void)
{
	if (me || setting_up)
		return me;
	setting_up = true;
	pthread_once(&once, init_once);
	pthread_once(&config_once, fn_config_read);
	me = thread_new();
	setting_up = false;
	return me;
}

/* ---- the hooks ------------------------------------------------------------ */

/* Outside the thread's stack: a signal's alternate stack, a context. */
static bool other_stack(const struct fn_thread *t, uintptr_t sp)
{
	return sp - t->stack_lo >= t->stack_size;
}

/* Not measured here (the slow path): why, counted; NULL, or the state. */
static struct fn_thread *usable(uintptr_t sp, bool entering)
{
	struct fn_thread *t;

	/* inside a hook (busy) or a report (in_hook) */
	if (in_hook || (me && cur == me && me->busy)) {
		if (me)
			me->lost[FN_LOST_REENTERED]++;
		return NULL;
	}
	t = me ? me : thread_get();
	if (!t || t->exited)
		return NULL;
	if (!t->failed && !t->td && !thread_activate(t, entering))
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

/* The node of fn called from parent, NULL when the table is full. */
static struct fn_node *callee_node(struct fn_thread *t, struct fn_node *parent,
				   void *fn)
{
	uint32_t v;

	if (parent->child_fn == fn)
		return parent->child;
	v = node_of(t, index_of(t, parent), fn);
	return v == FN_NONE ? NULL : &t->nodes[v];
}

static void enter(struct fn_thread *t, void *fn, void *site, uintptr_t sp)
{
	struct fn_node *parent, *n;
	struct fn_frame *f;

	drop_dead(t, sp, site);
	if (t->over || !(f = frame_push(t))) {
		if (!t->over++) {
			t->over_top = t->topf;
			t->topf = &over_mark;
		}
		t->lost[FN_LOST_DEPTH]++;
		return;
	}
	parent = f[-1].node;
	n = callee_node(t, parent, fn);
	f->fn = fn;
	f->sp = sp;
	if (!n) {
		not_measured(f, site);
		return;
	}
	n->calls++;
	if (n->flags & (FN_NODE_EXCLUDED | FN_NODE_SKIP)) {
		not_measured(f, site);
		return;
	}
	parent->child_fn = fn; /* measured: the fast path's from now on */
	parent->child = n;
	f->site = site;
	f->node = n;
	if (td_region_begin(t->td, &f->region) < 0) {
		t->lost[FN_LOST_FAILED_END]++;
		not_measured(f, site);
	}
}

/* The frame of the call fn made from site, searched down from the top. */
static struct fn_frame *find_call(struct fn_thread *t, void *fn, void *site)
{
	for (struct fn_frame *f = t->topf; f != t->frames; f--)
		if (f->fn == fn && site_of(f) == site)
			return f;
	return NULL;
}

static void leave(struct fn_thread *t, void *fn, void *site)
{
	struct fn_frame *f;

	if (t->over) {
		if (!--t->over)
			t->topf = t->over_top;
		return;
	}
	/* calls above it left without an exit: abandoned */
	f = find_call(t, fn, site);
	if (!f) {
		t->lost[FN_LOST_STRAY_EXIT]++;
		return;
	}
	while (t->topf != f)
		frame_pop(t, true);
	frame_pop(t, false);
}

/* A hook runs: a signal handler's hooks from here on take the slow path
 * (the fences keep the compiler from moving the state's accesses across
 * the flag's changes). */
static void hook_busy(struct fn_thread *t)
{
	t->busy = true;
	atomic_signal_fence(memory_order_seq_cst);
}

static void hook_done(struct fn_thread *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = false;
}

/*
 * The general path's guard: the thread ready and on its own stack, or
 * usable() finds why not (counted), or makes it ready at its first call.
 */
static struct fn_thread *hook_begin(uintptr_t sp, bool entering)
{
	struct fn_thread *t = cur;

	if (t->busy || other_stack(t, sp)) {
		t = usable(sp, entering);
		if (!t)
			return NULL;
		cur = t;
	}
	hook_busy(t);
	return t;
}

static __attribute__((noinline)) void enter_slow(void *fn, void *site,
						 uintptr_t sp)
{
	struct fn_thread *t = hook_begin(sp, true);

	if (!t)
		return;
	enter(t, fn, site, sp);
	hook_done(t);
}

static __attribute__((noinline)) void exit_slow(void *fn, void *site,
						uintptr_t sp)
{
	struct fn_thread *t = hook_begin(sp, false);

	if (!t)
		return;
	leave(t, fn, site);
	hook_done(t);
}

/* td_region_begin failed on the fast path: the call is not measured. */
static __attribute__((noinline)) void begin_failed(struct fn_thread *t)
{
	t->lost[FN_LOST_FAILED_END]++;
	not_measured(t->topf, t->topf->site);
}

static __attribute__((noinline)) void end_failed(struct fn_thread *t)
{
	t->lost[FN_LOST_FAILED_END]++;
}

/*
 * The fast path: the thread ready (then busy, so that a signal
 * handler's hooks from here on take the slow path), on its own stack
 * (under the top frame, itself under the stack's top, and above the
 * stack's bottom), nothing to resynchronise (the top frame above sp),
 * room above it, and fn the measured callee its caller's node called
 * last.
 */
void __cyg_profile_func_enter(void *fn, void *site)
{
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
	struct fn_thread *t = cur;
	struct fn_frame *top, *f;
	struct fn_node *n;

	if (__builtin_expect(t->busy, 0))
		goto slow;
	hook_busy(t);
	top = t->topf;
	f = top + 1;
	n = top->node;
	if (__builtin_expect(top->sp <= sp || sp < t->stack_lo ||
			     f == t->limit || n->child_fn != fn, 0)) {
		hook_done(t);
		goto slow;
	}
	n = n->child;
	f->fn = fn;
	f->site = site;
	f->sp = sp;
	f->node = n;
	t->topf = f;
	n->calls++;
	if (__builtin_expect(td_region_begin(t->td, &f->region) < 0, 0))
		begin_failed(t);
	hook_done(t);
	return;
slow:
	enter_slow(fn, site, sp);
}

/*
 * The fast path: the thread ready, and the exit of its top frame,
 * measured (an unmeasured frame's complemented site never matches).  The
 * record's node is written before the end appends the record: only a
 * successful end counts it.
 */
void __cyg_profile_func_exit(void *fn, void *site)
{
	struct fn_thread *t = cur;
	struct fn_frame *f;

	if (__builtin_expect(t->busy, 0))
		goto slow;
	hook_busy(t);
	f = t->topf;
	if (__builtin_expect(f->fn != fn || f->site != site, 0)) {
		hook_done(t);
		goto slow;
	}
	t->topf = f - 1;
	*t->rec_next = f->node;
	if (__builtin_expect(td_region_end(t->td, &f->region, NULL) != 0, 0)) {
		end_failed(t);
	} else {
		t->rec_next++;
		if (__builtin_expect(--t->rec_left == 0, 0))
			fold(t);
	}
	hook_done(t);
	return;
slow:
	exit_slow(fn, site, (uintptr_t)__builtin_dwarf_cfa());
}

/* ---- the report's side ---------------------------------------------------- */

void fn_fold_self(bool end_open)
{
	struct fn_thread *t = me;

	struct fn_thread *was = cur;

	if (!t || t->failed || t->exited || in_hook)
		return;
	in_hook++;
	cur = &idle;
	if (end_open)
		end_open_calls(t);
	fold(t);
	cur = was;
	in_hook--;
}

int td_functions_report(FILE *f, enum td_format fmt)
{
	struct fn_thread *was = cur;
	int err;

	if (!f || (fmt != TD_FORMAT_TABLE && fmt != TD_FORMAT_CSV &&
		   fmt != TD_FORMAT_JSONL))
		return -EINVAL;
	in_hook++;
	cur = &idle;
	if (me && !me->failed && !me->exited)
		fold(me); /* its calls in progress are not in the report */
	err = fn_report_write(f, fmt);
	cur = was;
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
	cur = &idle; /* this thread's later hooks count as after it */
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
