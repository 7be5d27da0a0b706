/* SPDX-License-Identifier: MIT */
/*
 * The sysfs CPU-list parser on arbitrary input: never crashes or writes
 * outside the bitmap; an accepted list sets only bits below its max.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	uint32_t n, m;
	uint64_t *map;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (td_cpulist_parse(s, NULL, 0, &n) == 0) {
		map = calloc((n + 63) / 64 + 1, sizeof(uint64_t));
		if (!map || td_cpulist_parse(s, map, n, &m) != 0 || m != n)
			abort();
		if (n % 64 && (map[n / 64] >> (n % 64)))
			abort(); /* a bit at or past max */
		if (map[(n + 63) / 64])
			abort();
		free(map);
	}
	free(s);
	return 0;
}
