/* SPDX-License-Identifier: MIT */
/* td_strerror and the other constant lookups of the API. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"

struct td_message {
	int err;
	const char *text;
};

static const struct td_message messages[] = {
	{ 0, "success" },
	{ -ENODEV, "no hardware PMU: the kernel exposes no core PMU (a VM "
		   "without a virtual PMU has no counters); run on bare "
		   "metal or enable the guest PMU (e.g. KVM -cpu host,pmu=on)" },
	{ -EACCES, "perf_event_open not permitted: set sysctl "
		   "kernel.perf_event_paranoid=2 (user-mode self-monitoring; "
		   "1 for TD_OPT_INCLUDE_KERNEL) or grant CAP_PERFMON" },
	{ -EINVAL, "invalid argument: a NULL pointer, a bad td_options field "
		   "or size, or the environment's TOPDOWN_RESET not one of "
		   "auto|always|never (unset it or pick one)" },
	{ -EALREADY, "region already begun: end it before beginning it again" },
	{ -ESRCH, "region not in progress: td_region_end without a matching "
		  "td_region_begin, or ended twice" },
	{ -EXDEV, "region belongs to another handle: end it on the handle "
		  "that began it" },
	{ -EPERM, "handle used from a thread other than the one that opened "
		  "it: open one handle per thread" },
	{ -ESTALE, "handle inherited across fork(): its counters belong to "
		   "the parent; td_close it and td_open a new one in the "
		   "child" },
	{ -ENFILE, "system file table full: close descriptors and retry" },
	{ -ENOMEM, "out of memory" },
	{ -EIO, "reading the counter group with read(2) failed, or writing a "
		"report failed" },
	{ -ENOENT, "not attached: no record buffer on the handle, or the "
		   "named region was not begun on it (or unlinked since)" },
	{ -EBUSY, "named region in progress: end it before unlinking it" },
	{ -ERANGE, "raw readings out of order: SLOTS went backwards between "
		   "them (a reset in between)" },
};

/*
 * The CPU td_open found no TopDown source for, on this thread: the
 * -ENOSYS line names it.  Thread-local so that the line stays valid and
 * unshared; the library never prints it.
 */
static __thread char unknown_cpu[96];
static __thread char enosys_line[256];

void td_set_unknown_cpu(const char *desc)
{
	snprintf(unknown_cpu, sizeof(unknown_cpu), "%s", desc);
}

static const char *enosys_text(void)
{
	snprintf(enosys_line, sizeof(enosys_line),
		 "no TopDown source for this CPU (%s): %s; see the README's "
		 "supported CPUs", unknown_cpu[0] ? unknown_cpu : "unidentified",
		 td_source_message(-ENOSYS));
	return enosys_line;
}

/*
 * The setting of the environment the calling thread's last td_open
 * refused (-EINVAL), quoted with its value and the accepted ones; cleared
 * at each td_open.  Thread-local like the -ENOSYS line.
 */
static __thread char setting_line[256];

void td_clear_bad_setting(void)
{
	setting_line[0] = '\0';
}

void td_set_bad_setting(const char *var, const char *value,
			const char *const *words, int n)
{
	size_t len = sizeof(setting_line);
	int at = snprintf(setting_line, len, "td_open: %s=\"%s\" is not one "
			  "of ", var, value);

	for (int i = 0; i < n && at > 0 && (size_t)at < len; i++)
		at += snprintf(setting_line + at, len - (size_t)at, "%s%s",
			       i ? ", " : "", words[i]);
	if (at > 0 && (size_t)at < len)
		snprintf(setting_line + at, len - (size_t)at,
			 " (unset it or pick one)");
}

/*
 * Why td_open refused TD_OPT_MEMORY on this thread (its -EOPNOTSUPP or
 * -ENOSPC line then names it), or "" when it did not.
 */
static __thread char mem_refusal[200];
static __thread char mem_line[320];

void td_set_mem_refusal(const char *why)
{
	snprintf(mem_refusal, sizeof(mem_refusal), "%s", why ? why : "");
}

static const char *mem_refusal_text(void)
{
	snprintf(mem_line, sizeof(mem_line),
		 "no memory drill-down (TD_OPT_MEMORY, TOPDOWN_MEMORY=1) on "
		 "this CPU: %s; open without it (README \"Memory "
		 "drill-down\")", mem_refusal);
	return mem_line;
}

const char *td_strerror(int err)
{
	if (err == -ENOSYS)
		return enosys_text();
	if (err == -EINVAL && setting_line[0])
		return setting_line;
	if ((err == -EOPNOTSUPP || err == -ENOSPC) && mem_refusal[0])
		return mem_refusal_text();
	if (td_source_message(err))
		return td_source_message(err);
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
		if (messages[i].err == err)
			return messages[i].text;
	return err < 0 ? strerror(-err) : "not an error code";
}

const char *td_l1_name(int idx)
{
	static const char *const names[TD_L1_COUNT] = {
		"retiring", "bad_speculation", "frontend_bound",
		"backend_bound",
	};

	return idx >= 0 && idx < TD_L1_COUNT ? names[idx] : NULL;
}

const char *td_l2_name(int idx)
{
	static const char *const names[TD_L2_COUNT] = {
		"heavy_operations", "light_operations", "branch_mispredicts",
		"machine_clears", "fetch_latency", "fetch_bandwidth",
		"memory_bound", "core_bound",
	};

	return idx >= 0 && idx < TD_L2_COUNT ? names[idx] : NULL;
}

int td_version_major(void)
{
	return TD_VERSION_MAJOR;
}

int td_version_minor(void)
{
	return TD_VERSION_MINOR;
}
