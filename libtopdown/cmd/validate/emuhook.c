/* SPDX-License-Identifier: MIT */
/*
 * The test emulator's hooks, when this process runs on it (--emulate
 * re-executes under LD_PRELOAD=libtdemu.so; test/emu/emu_preload.c).
 * Found with dlsym: a build without the emulator has none, and then
 * every hook reports that it is absent.  Under the emulator the
 * breakdown of each workload is the emulator's synthetic answer, set by
 * v_emu_set_mix before it runs, and its length is declared (v_emu_run):
 * the checks then validate the library's arithmetic and fault handling,
 * not the hardware, and no verdict depends on how long the emulator's
 * traps took on a loaded machine.
 */
#include <dlfcn.h>
#include <string.h>

#include "validate.h"

static void *hook(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

bool v_emulated(void)
{
	return hook("emu_preload_set_fractions") != NULL;
}

void v_emu_set_mix(const double *f8)
{
	void (*set)(const double *) =
		(void (*)(const double *))hook("emu_preload_set_fractions");

	if (set)
		set(f8);
}

void v_emu_set_mem_shares(const double *f5)
{
	void (*set)(const double *) =
		(void (*)(const double *))hook("emu_preload_set_mem_shares");

	if (set)
		set(f5);
}

bool v_emu_truth(struct v_counts *c)
{
	void (*truth)(uint64_t *) =
		(void (*)(uint64_t *))hook("emu_preload_truth");
	uint64_t out[10];

	if (!truth)
		return false;
	truth(out);
	memset(c, 0, sizeof(*c));
	c->slots = out[0];
	memcpy(c->cat, out + 1, sizeof(c->cat));
	return true;
}

bool v_emu_pmi(void)
{
	void (*pmi)(void) = (void (*)(void))hook("emu_preload_pmi");

	if (!pmi)
		return false;
	pmi();
	return true;
}

void v_emu_run(uint64_t slots)
{
	void (*run)(uint64_t) = (void (*)(uint64_t))hook("emu_preload_run");

	if (run)
		run(slots);
}
