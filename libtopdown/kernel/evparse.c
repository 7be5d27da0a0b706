/* SPDX-License-Identifier: MIT */
/*
 * The sysfs event-string grammar, pure (no I/O, fuzzed): an events/ string
 * is comma-separated "term=value" or bare "term" (value 1) items, and each
 * term's format/ file says which config bits hold it, e.g.
 * "config:0-7,32-35" (kernel Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-format).  The caller supplies the format
 * lookup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

/* Place value into config along a format such as "config:0-7,32-35". */
int td_format_apply(const char *format, uint64_t value, uint64_t *config)
{
	const char *p;
	unsigned lo, hi;
	int used;

	if (strncmp(format, "config:", 7) != 0)
		return -EOPNOTSUPP; /* config1/config2 terms: not for TopDown */
	for (p = format + 7; *p; p += used) {
		if (sscanf(p, "%u-%u%n", &lo, &hi, &used) != 2) {
			if (sscanf(p, "%u%n", &lo, &used) != 1)
				return -EINVAL;
			hi = lo;
		}
		if (hi < lo || hi > 63)
			return -EINVAL;
		for (unsigned bit = lo; bit <= hi; bit++, value >>= 1)
			*config |= (value & 1) << bit;
		if (p[used] == ',')
			used++;
	}
	return value ? -EINVAL : 0; /* value wider than its field */
}

static int apply_term(char *term, td_format_fn fmt, void *ctx,
		      uint64_t *config)
{
	char format[64];
	char *eq = strchr(term, '=');
	uint64_t value = 1;
	int err;

	if (eq) {
		*eq = '\0';
		value = strtoull(eq + 1, NULL, 0);
	}
	err = fmt(ctx, term, format, sizeof(format));
	if (err < 0)
		return err;
	return td_format_apply(format, value, config);
}

int td_event_parse(const char *spec, td_format_fn fmt, void *ctx,
		   uint64_t *config)
{
	char buf[128];
	char *term, *save = NULL;
	int err;

	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	*config = 0;
	for (term = strtok_r(buf, ",", &save); term;
	     term = strtok_r(NULL, ",", &save)) {
		err = apply_term(term, fmt, ctx, config);
		if (err < 0)
			return err;
	}
	return 0;
}
