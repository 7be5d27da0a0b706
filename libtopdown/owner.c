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
 * generation that every handle remembers from td_open; begin/end compare
 * the two (no getpid(2) on the hot path).  The parent never writes the
 * generation, so reading it there is race-free.
 */
#include <errno.h>
#include <pthread.h>

#include "arch.h"
#include "internal.h"

unsigned long td_fork_generation;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	td_fork_generation++;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

void td_owner_init(struct td *td)
{
	pthread_once(&atfork_once, register_atfork);
	td->owner = td_thread_self();
	td->fork_gen = td_fork_generation;
}

int td_owner_error(const struct td *td)
{
	return td->fork_gen != td_fork_generation ? -ESTALE : -EPERM;
}

#ifndef TD_HAVE_THREAD_POINTER
__thread char td_tls_anchor __attribute__((tls_model("initial-exec")));
#endif
