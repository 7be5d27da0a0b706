/* SPDX-License-Identifier: MIT */
/*
 * The sysfs event-string parser on arbitrary input: the data holds an
 * events/ string and, after a NUL, a format string that every term not in
 * the fixed table gets.  Never crashes; a config it accepts has only the
 * format's bits set.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *wild;

static int formats(void *ctx, const char *term, char *buf, size_t len)
{
	static const char *const known[][2] = {
		{ "event", "config:0-7" }, { "umask", "config:8-15" },
		{ "edge", "config:18" },   { "cmask", "config:24-31" },
		{ "split", "config:0-3,32-35" },
	};
	const char *f = wild;

	(void)ctx;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(term, known[i][0]) == 0)
			f = known[i][1];
	if (strlen(f) >= len)
		return -22;
	strcpy(buf, f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 2);
	uint64_t config = 0, c2 = 0;
	size_t n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = copy[size + 1] = '\0';
	n = strlen(copy);
	wild = copy + n + (n < size ? 1 : 0);
	td_event_parse(copy, formats, NULL, &config);
	td_format_apply(wild, config, &c2);
	free(copy);
	return 0;
}
