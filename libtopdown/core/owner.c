/* SPDX-License-Identifier: MIT */
/*
 * Who may use a handle: the thread that opened it, in the process that
 * opened it.  Both checks are made on the hot path without a system call.
 *
 * Thread.  The events count the opening thread only (pid 0 at
 * perf_event_open), and the handle's user pages and rseq area belong to
 * it, so another thread would read someone else's registers.  The owner is
 * the thread pointer (x86-64: %fs:0, the TCB self pointer of the TLS ABI),
 * unique among live threads: one load and a compare.  A handle that
 * outlives its thread could be reused undetected by a new thread whose TCB
 * lands at the same address; the API forbids that use.
 *
 * fork.  The kernel does not copy perf mappings into a child (perf_mmap
 * sets VM_DONTCOPY), and the inherited fds still name the parent's
 * per-thread events: a child touching the handle would fault on the page
 * or read the parent's counters.  A pthread_atfork child handler bumps a
 * generation that every handle remembers from td_open; the slow path
 * compares the two (no getpid(2) on the hot path).  The parent never
 * writes the generation, so reading it there is race-free.
 *
 * The fast path's check is cheaper still: a thread-local pointer to the
 * one handle this thread may use on the fast path (td_fast.td for the
 * path the entry points inline, td_fast.src_td for a source's own; never
 * NULL: TD_NO_FAST when there is none, and at most one of the two set),
 * compared with the handle passed in.  It answers "not NULL, fast-capable,
 * this thread, this process" in one compare: it is set only by td_open in
 * the opening thread and cleared in a fork child.  The one way it could go
 * stale is a handle closed by another thread while its owner lives: its
 * memory could then be reused by a new handle of a third thread, which the
 * owner's stale pointer would accept.  So such a handle's memory is kept
 * until the owner no longer points at it (its next td_open, or its exit,
 * through a thread-specific key's destructor), and freed then.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "arch.h"
#include "internal.h"

unsigned long td_fork_generation;
const uint64_t td_no_fast_anchor;
__thread struct td_fast_handles td_fast = { TD_NO_FAST, TD_NO_FAST };

/* The pointer that names this thread's fast handle, if it has one. */
static const struct td **claimed_slot(void)
{
	return td_fast.td != TD_NO_FAST ? &td_fast.td
	       : td_fast.src_td != TD_NO_FAST ? &td_fast.src_td : NULL;
}

enum fast_life {
	FAST_NONE,       /* no thread-local pointer to this handle */
	FAST_CLAIMED,    /* its owner's td_fast.td or td_fast.src_td may
			    point here */
	FAST_CLOSED,     /* closed by another thread: the owner frees it */
	FAST_OWNER_GONE  /* owner exited: whoever closes it frees it */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool have_exit_key;

static void on_fork_child(void)
{
	td_fork_generation++;
	td_fast.td = TD_NO_FAST; /* the child has no perf mappings */
	td_fast.src_td = TD_NO_FAST;
	/* ... and its handles are freed by td_close, not at thread exit */
	if (have_exit_key)
		pthread_setspecific(exit_key, NULL);
}

/* The owner thread exits: its pointer dies with it. */
static void on_thread_exit(void *arg)
{
	struct td *td = arg;

	if (__atomic_exchange_n(&td->fast_life, FAST_OWNER_GONE,
				__ATOMIC_ACQ_REL) == FAST_CLOSED)
		free(td);
}

static void init_once(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
	have_exit_key = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

void td_owner_init(struct td *td)
{
	pthread_once(&once, init_once);
	td->owner = td_thread_self();
	td->fork_gen = td_fork_generation;
}

int td_owner_error(const struct td *td)
{
	return td->fork_gen != td_fork_generation ? -ESTALE : -EPERM;
}

/* A handle this thread's pointer still names after another thread closed it. */
static void drop_closed(void)
{
	const struct td **slot = claimed_slot();
	struct td *old;

	if (!slot)
		return;
	old = (struct td *)*slot;
	*slot = TD_NO_FAST;
	if (have_exit_key)
		pthread_setspecific(exit_key, NULL);
	if (__atomic_load_n(&old->fast_life, __ATOMIC_ACQUIRE) == FAST_CLOSED)
		free(old);
}

/*
 * Called by td_open in the opening thread for a handle that may take the
 * fast path.  One fast handle per thread: a second one keeps working on
 * the slow path.
 */
void td_fast_claim(struct td *td)
{
	const struct td **slot = claimed_slot();

	if (slot && __atomic_load_n(&(*slot)->fast_life, __ATOMIC_ACQUIRE) ==
			    FAST_CLOSED)
		drop_closed();
	if (claimed_slot() || !have_exit_key ||
	    pthread_setspecific(exit_key, td) != 0)
		return;
	td->fast_life = FAST_CLAIMED;
	if (td->fast)
		td_fast.td = td;
	else
		td_fast.src_td = td;
}

/* td_close, after the handle's resources are gone: free its memory. */
void td_owner_free(struct td *td)
{
	bool here = td->owner == td_thread_self() &&
		    td->fork_gen == td_fork_generation;

	if (__atomic_load_n(&td->fast_life, __ATOMIC_ACQUIRE) == FAST_NONE ||
	    td->fork_gen != td_fork_generation) {
		free(td);
	} else if (here) {
		const struct td **slot = claimed_slot();

		if (slot && *slot == td) {
			*slot = TD_NO_FAST;
			pthread_setspecific(exit_key, NULL);
		}
		free(td);
	} else if (__atomic_exchange_n(&td->fast_life, FAST_CLOSED,
				       __ATOMIC_ACQ_REL) == FAST_OWNER_GONE) {
		free(td);
	}
}

/*
 * Unloaded (dlclose): no thread-exit destructor may run in unmapped code.
 * Handles closed by other threads while their owners live stay allocated.
 */
__attribute__((destructor)) static void unload(void)
{
	if (have_exit_key)
		pthread_key_delete(exit_key);
	have_exit_key = false;
}

#ifndef TD_HAVE_THREAD_POINTER
__thread char td_tls_anchor __attribute__((tls_model("initial-exec")));
#endif
