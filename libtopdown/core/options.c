/* SPDX-License-Identifier: MIT */
/* The caller's td_options, validated and copied (pure: fuzzed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TD_KNOWN_OPTS \
	(TD_OPT_INCLUDE_KERNEL | TD_OPT_NO_RDPMC | TD_OPT_NO_METRICS_CLEAR | \
	 TD_OPT_L2_MULTIPLEX | TD_OPT_MEMORY)

/*
 * Copy the caller's options, whatever their size (libbpf's OPTS_VALID
 * rule): fields past our struct must be zero, fields past theirs default.
 */
int td_options_copy(struct td_options *dst, const struct td_options *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->size = sizeof(*dst);
	if (!src)
		return 0;
	if (src->size < sizeof(src->size))
		return -EINVAL;
	if (src->size > sizeof(*dst)) {
		const unsigned char *tail = (const unsigned char *)src;

		for (size_t i = sizeof(*dst); i < src->size; i++)
			if (tail[i])
				return -EINVAL;
	}
	memcpy(dst, src, src->size < sizeof(*dst) ? src->size : sizeof(*dst));
	dst->size = sizeof(*dst);
	return dst->flags & ~TD_KNOWN_OPTS ? -EINVAL : 0;
}

/*
 * An environment variable holding one of n words: its index in *choice
 * (untouched when unset), or -EINVAL for anything else.  Never a silent
 * default: a typo in TOPDOWN_RESET must not measure with another policy.
 */
int td_env_choice(const char *var, const char *const *words, int n,
		  int *choice)
{
	const char *v = getenv(var);

	if (!v)
		return 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(v, words[i]) == 0) {
			*choice = i;
			return 0;
		}
	}
	return -EINVAL;
}
