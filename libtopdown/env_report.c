/* SPDX-License-Identifier: MIT */
/*
 * TOPDOWN_REPORT=stderr|<path> and TOPDOWN_FORMAT=table|csv|jsonl: the
 * caller's opt-in to a named-region report at td_close, and at process
 * exit for handles still open.  Only here does the library write anywhere
 * the caller did not hand it, and only when asked to by the environment.
 *
 * Handles that will report are kept on one list, under a spinlock (cold
 * path, no libpthread needed), for the exit-time destructor.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static atomic_flag list_lock = ATOMIC_FLAG_INIT;
static struct td *reporting;

static void lock_list(void)
{
	while (atomic_flag_test_and_set_explicit(&list_lock,
						 memory_order_acquire))
		;
}

static void unlock_list(void)
{
	atomic_flag_clear_explicit(&list_lock, memory_order_release);
}

static int format_from_env(enum td_format *fmt)
{
	static const char *const names[] = { "table", "csv", "jsonl" };
	int i = 0;

	if (td_env_choice("TOPDOWN_FORMAT", names, 3, &i) < 0)
		return -EINVAL;
	*fmt = (enum td_format)(TD_FORMAT_TABLE + i);
	return 0;
}

/* Parse the environment into td->env; the handle is not listed yet. */
int td_env_report_init(struct td *td)
{
	const char *path = getenv("TOPDOWN_REPORT");
	int err = format_from_env(&td->env.format);

	if (err < 0)
		return err;
	if (!path)
		return 0;
	if (!*path)
		return -EINVAL;
	td->env.path = strdup(path);
	return td->env.path ? 0 : -ENOMEM;
}

/* td_open succeeded: report at td_close or exit. */
void td_env_report_register(struct td *td)
{
	if (!td->env.path)
		return;
	lock_list();
	td->env.next = reporting;
	reporting = td;
	unlock_list();
}

static void write_report(struct td *td)
{
	FILE *f;

	if (strcmp(td->env.path, "stderr") == 0) {
		td_report_named(stderr, td, td->env.format);
		return;
	}
	f = fopen(td->env.path, "ae");
	if (!f)
		return;
	td_report_named(f, td, td->env.format);
	fclose(f);
}

static bool unlist(struct td *td)
{
	struct td **link;
	bool found = false;

	lock_list();
	for (link = &reporting; *link; link = &(*link)->env.next) {
		if (*link == td) {
			*link = td->env.next;
			found = true;
			break;
		}
	}
	unlock_list();
	return found;
}

void td_env_report_close(struct td *td)
{
	if (!td->env.path)
		return;
	if (unlist(td) && !td->env.done)
		write_report(td);
	free(td->env.path);
	td->env.path = NULL;
}

/* Process exit (or unload): handles never closed report now. */
__attribute__((destructor)) static void report_at_exit(void)
{
	lock_list();
	for (struct td *td = reporting; td; td = td->env.next) {
		if (!td->env.done)
			write_report(td);
		td->env.done = true;
	}
	unlock_list();
}
