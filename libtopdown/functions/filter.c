/* SPDX-License-Identifier: MIT */
/*
 * The environment's settings, read once at the first instrumented call:
 *   TOPDOWN_FUNCTIONS_FILTER     comma-separated fnmatch(3) patterns of
 *                                function names: "-PAT" excludes, "PAT"
 *                                (or "+PAT") includes; with an include,
 *                                only included functions are measured
 *   TOPDOWN_FUNCTIONS_MIN_SLOTS  a call path whose first calls average
 *                                fewer slots is then counted, not measured
 *   TOPDOWN_FUNCTIONS_MAX_NODES  call paths kept per thread (65536)
 * An excluded function's calls are counted; its time is its caller's.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "func.h"

struct fn_config fn_config;

static uint64_t number(const char *name, uint64_t dflt, uint64_t lo,
		       uint64_t hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	n = strtoull(v, &end, 0);
	if (*end || n < lo || n > hi)
		return dflt;
	return n;
}

void fn_config_read(void)
{
	const char *filter = getenv("TOPDOWN_FUNCTIONS_FILTER");

	fn_config.min_slots = number("TOPDOWN_FUNCTIONS_MIN_SLOTS", 0, 0,
				     UINT32_MAX);
	fn_config.max_nodes = (uint32_t)number("TOPDOWN_FUNCTIONS_MAX_NODES",
					       65536, 16, 1u << 24);
	/* the environment's own string (no copy: this may run in a signal
	 * handler, where malloc is not safe) */
	if (filter && *filter)
		fn_config.filter = filter;
}

/* Does name match pat, the pattern's first len bytes? */
static bool matches(const char *pat, size_t len, const char *name)
{
	char buf[256];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, pat, len);
	buf[len] = '\0';
	return fnmatch(buf, name, 0) == 0;
}

bool fn_filter_allows(void *fn)
{
	char buf[32];
	const char *name = fn_name(fn, buf, sizeof(buf));
	bool any_include = false, included = false;

	for (const char *p = fn_config.filter; *p;) {
		size_t len = strcspn(p, ",");
		bool exclude = *p == '-';
		const char *pat = p + (*p == '-' || *p == '+');
		size_t plen = len - (size_t)(pat - p);

		if (plen && exclude && matches(pat, plen, name))
			return false;
		if (plen && !exclude) {
			any_include = true;
			included |= matches(pat, plen, name);
		}
		p += len + (p[len] == ',');
	}
	return !any_include || included;
}
