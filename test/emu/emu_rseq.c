/* SPDX-License-Identifier: MIT */
/*
 * An rseq area per emulated thread, published as glibc publishes its own:
 * __rseq_offset, the area's distance from the thread pointer.  The
 * definition here, in the test executable, takes precedence over ld.so's
 * for libtopdown (libc itself does not import __rseq_offset; checked with
 * nm -D on glibc 2.36).  The real kernel never sees this area, so the
 * emulator applies the rseq rules itself at its only preemption points:
 * emu_migrate() between instructions, and emu_migrate_at_rdpmc() at an
 * RDPMC (see emu_trap.c).  Not linked into the LD_PRELOAD emulator, which
 * must not hijack a real program's rseq.
 */
#include <stddef.h>

#include "emu_internal.h"

static __thread struct emu_rseq area = { 0, 0, 0, 0 };

ptrdiff_t __rseq_offset;

static const char *thread_pointer(void)
{
	const char *tp;

#if defined(__x86_64__)
	__asm__("movq %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = NULL; /* no rseq emulation here */
#endif
	return tp;
}

/* Static TLS of the executable: one offset for every thread. */
void emu_rseq_init(void)
{
	__rseq_offset = (const char *)&area - thread_pointer();
}

struct emu_rseq *emu_rseq_self(void)
{
	return &area;
}

void emu_rseq_set_cpu_raw(uint32_t v)
{
	area.cpu_id = area.cpu_id_start = v;
}
