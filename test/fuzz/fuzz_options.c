/* SPDX-License-Identifier: MIT */
/*
 * Option parsing on arbitrary input: a td_options of any size and
 * content, and any TOPDOWN_RESET value.  Never crashes; accepted options
 * give a sane policy; TOPDOWN_RESET other than auto|always|never is
 * always refused.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char buf[256] = { 0 };
	struct td_options o;
	struct td_policy p;
	char env[32] = { 0 };
	size_t envlen, n;
	int err;

	if (size < 2)
		return 0;
	envlen = data[0] % sizeof(env);
	if (envlen > size - 1)
		envlen = size - 1;
	memcpy(env, data + 1, envlen);
	data += 1 + envlen;
	size -= 1 + envlen;
	n = size < sizeof(buf) ? size : sizeof(buf);
	memcpy(buf, data, n);
	/* the size field tells how far the caller's struct reaches */
	((struct td_options *)(void *)buf)->size %= sizeof(buf) + 1;
	if (envlen && env[0] != '-')
		setenv("TOPDOWN_RESET", env, 1);
	else
		unsetenv("TOPDOWN_RESET");
	err = td_options_copy(&o, (const struct td_options *)(void *)buf);
	if (err == 0)
		err = td_policy_init(&p, &o);
	if (err == 0) {
		if (p.kind < TD_RESET_AUTO || p.kind > TD_RESET_NEVER ||
		    !(p.err_x255 > 0 && p.err_x255 < 255) ||
		    !(p.budget > 0 && p.budget <= 1) || !p.cost)
			abort();
		if (envlen && env[0] != '-' && strcmp(env, "auto") &&
		    strcmp(env, "always") && strcmp(env, "never"))
			abort();
	}
	return 0;
}
