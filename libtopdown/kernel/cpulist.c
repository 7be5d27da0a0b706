/* SPDX-License-Identifier: MIT */
/*
 * Parse a kernel CPU list such as "0-7,16-23" (sysfs cpus files,
 * Documentation/ABI "cpulist" format) into a bitmap.  Pure: no I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

static int parse_uint(const char **p, uint32_t *out)
{
	uint32_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (uint32_t)(*s++ - '0');
		if (v >= TD_MAX_CPUS)
			return -EINVAL;
	}
	*p = s;
	*out = v;
	return 0;
}

/*
 * Sets the bits of every listed CPU below nr_bits in map (which the caller
 * zeroed; map may be NULL to only validate).  *max_cpu gets the highest
 * CPU listed + 1.  Returns 0 or -EINVAL for anything malformed.
 */
int td_cpulist_parse(const char *s, uint64_t *map, uint32_t nr_bits,
		     uint32_t *max_cpu)
{
	uint32_t lo, hi, top = 0;

	if (!*s)
		return -EINVAL;
	while (*s) {
		if (parse_uint(&s, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*s == '-') {
			s++;
			if (parse_uint(&s, &hi) < 0 || hi < lo)
				return -EINVAL;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
		if (hi + 1 > top)
			top = hi + 1;
		for (uint32_t c = lo; map && c <= hi && c < nr_bits; c++)
			map[c / 64] |= UINT64_C(1) << (c % 64);
	}
	*max_cpu = top;
	return 0;
}
