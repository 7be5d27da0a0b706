/* SPDX-License-Identifier: MIT */
/* Picks the counter-access helpers of the architecture being built. */
#ifndef TD_ARCH_H
#define TD_ARCH_H

#if defined(__x86_64__) || defined(__i386__)
#include "arch_x86.h"
#define TD_HAVE_USER_READ 1
#else
#include <stdint.h>
#define TD_HAVE_USER_READ 0
/* No user-space counter read on this architecture yet: read(2) only. */
static inline uint64_t td_rdpmc(uint32_t counter)
{
	(void)counter;
	return 0;
}
#endif

#endif /* TD_ARCH_H */
