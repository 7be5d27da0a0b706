/* SPDX-License-Identifier: MIT */
/*
 * test_functions' workloads, built with -finstrument-functions: nested
 * calls of contrasting mixes, recursion, a longjmp across instrumented
 * frames.  Static functions are named from the executable's .symtab
 * (dladdr sees only exported ones).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include "func_work.h"
#include "truth.h"

static jmp_buf jump;

/* Pointer chase (memory bound). */
static __attribute__((noinline)) void leaf(void)
{
	work(W_LEAF, 600000, &MIX_DRAM);
}

/* Branchy, calling leaf between its own two parts. */
static __attribute__((noinline)) void inner(void)
{
	work(W_INNER, 300000, &MIX_BRANCHY);
	leaf();
	work(W_INNER, 200000, &MIX_BRANCHY);
}

/* Compute bound, around inner. */
void outer(void)
{
	work(W_OUTER, 500000, &MIX_STREAM);
	inner();
	work(W_OUTER, 400000, &MIX_STREAM);
}

void recurse(int depth)
{
	work(W_REC, 250000, &MIX_CHAIN);
	if (depth > 1)
		recurse(depth - 1);
}

static __attribute__((noinline)) void jumped(void)
{
	work(W_JUMPED, 300000, &MIX_DRAM);
	longjmp(jump, 1);
}

static __attribute__((noinline)) void jumped_outer(void)
{
	work(W_JUMPED, 100000, &MIX_DRAM);
	jumped();
}

void after_jump(void)
{
	work(W_AFTER, 700000, &MIX_BRANCHY);
}

/* longjmp out of two instrumented calls, then a measured one. */
void jumper(void)
{
	work(W_JUMPER, 200000, &MIX_STREAM);
	if (!setjmp(jump))
		jumped_outer();
	after_jump();
	work(W_JUMPER, 200000, &MIX_STREAM);
}

/* longjmp out of two calls, then this function's exit: no entry between. */
void jump_and_return(void)
{
	work(W_RETURNER, 200000, &MIX_STREAM);
	if (!setjmp(jump))
		jumped_outer();
}

/* A short function called often, from a longer one. */
static __attribute__((noinline)) void tiny(void)
{
	work(W_TINY, 1000, &MIX_BRANCHY);
}

void host(int tiny_calls)
{
	work(W_HOST, 100000, &MIX_STREAM);
	for (int i = 0; i < tiny_calls; i++)
		tiny();
}

/* A signal handler's work: memory bound. */
static __attribute__((noinline)) void handled(void)
{
	work(W_HANDLED, 400000, &MIX_DRAM);
}

void on_signal(int sig)
{
	(void)sig;
	handled();
}

/* Interrupted between its two parts by a signal it raises (delivered
 * before raise returns: a thread's own signal, unblocked). */
void interrupted(void)
{
	work(W_INTERRUPTED, 300000, &MIX_STREAM);
	raise(SIGUSR1);
	work(W_INTERRUPTED, 200000, &MIX_STREAM);
}

/* Two calls deep at a cancellation point, a cancellation pending: the
 * thread ends there, neither exit hook runs (C, no cleanups). */
static __attribute__((noinline)) void cancel_point(void)
{
	work(W_CANCELLED, 100000, &MIX_BRANCHY);
	pthread_testcancel();
	work(W_CANCELLED, 100000, &MIX_BRANCHY);
}

void cancelled(void)
{
	work(W_CANCELLED, 100000, &MIX_BRANCHY);
	cancel_point();
}
