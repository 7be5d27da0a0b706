/* SPDX-License-Identifier: MIT */
/* The caller's td_options, validated and copied (pure: fuzzed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TD_KNOWN_OPTS \
	(TD_OPT_INCLUDE_KERNEL | TD_OPT_NO_RDPMC | TD_OPT_NO_METRICS_CLEAR | \
	 TD_OPT_L2_MULTIPLEX | TD_OPT_MEMORY | TD_OPT_FE_UNREFINED | \
	 TD_OPT_BE_UNREFINED)

/*
 * TOPDOWN_L2=multiplex asks for TD_OPT_L2_MULTIPLEX from outside the
 * program (unmodified programs under the preloaded library, topdown
 * run): level 2 multiplexed where it does not fit beside level 1, as the
 * option does.  Any other value is an error (td_env_choice), never a
 * silent default.
 */
static int l2_from_env(struct td_options *o)
{
	static const char *const names[] = { "multiplex" };
	int i = -1;

	if (td_env_choice("TOPDOWN_L2", names, 1, &i) < 0) {
		td_set_bad_setting("TOPDOWN_L2", getenv("TOPDOWN_L2"), names,
				   1);
		return -EINVAL;
	}
	if (i == 0)
		o->flags |= TD_OPT_L2_MULTIPLEX;
	return 0;
}

/*
 * Copy the caller's options, whatever their size (libbpf's OPTS_VALID
 * rule): fields past our struct must be zero, fields past theirs default.
 */
int td_options_copy(struct td_options *dst, const struct td_options *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->size = sizeof(*dst);
	if (!src)
		return l2_from_env(dst);
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
	if (dst->flags & ~TD_KNOWN_OPTS)
		return -EINVAL;
	return l2_from_env(dst);
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
