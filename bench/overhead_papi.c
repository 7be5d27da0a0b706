/* SPDX-License-Identifier: MIT */
/*
 * The peer row of the overhead benchmark: PAPI 7 reading the counters
 * libtopdown reads for a profile, under the same emulated kernel and PMU.
 *
 * The counted process opens libtopdown once to learn which events it
 * uses (the emulator lists the attributes it was given), closes it, then
 * adds the same raw configs to one PAPI event set (libpfm4's perf_raw
 * PMU: "perf_raw::r<config>"), starts it and reads it twice around the
 * same emulated work as libtopdown's pair: PAPI_read at the region's
 * start and at its end, the peer's equivalent of a begin/end pair (PAPI
 * computes no TopDown: libtopdown's pair+result does that work too).
 *
 * A profile PAPI cannot measure this way is reported with its reason:
 * events of a hybrid PMU's dynamic type (perf_raw names PERF_TYPE_RAW
 * only) and events that need config1/config2 (metrics-clear mode, Arm's
 * user-access bit) cannot be named through perf_raw.
 */
#include <linux/perf_event.h>
#include <papi.h>
#include <stdio.h>
#include <string.h>

#include "overhead.h"
#include "topdown.h"

#define PEER_WORK_SLOTS 20000 /* as overhead_seq.c's regions */
#define PEER_MAX_EVENTS 16

static int learn_events(const struct ovh_profile *prof,
			struct perf_event_attr *attrs, unsigned *n,
			char *why, size_t len)
{
	struct td *td;
	int err = td_open(&td, NULL);

	if (err < 0) {
		snprintf(why, len, "libtopdown's td_open: %s", td_strerror(err));
		return -1;
	}
	*n = emu_open_attrs(attrs, PEER_MAX_EVENTS);
	td_close(td);
	if (*n > PEER_MAX_EVENTS) {
		snprintf(why, len, "%u events, more than %d", *n,
			 PEER_MAX_EVENTS);
		return -1;
	}
	for (unsigned i = 0; i < *n; i++) {
		if (attrs[i].type != PERF_TYPE_RAW) {
			snprintf(why, len, "%s: libtopdown's events have the "
				 "PMU type %u; libpfm4's perf_raw names type "
				 "%u only", prof->name, attrs[i].type,
				 PERF_TYPE_RAW);
			return -1;
		}
		if (attrs[i].config1 || attrs[i].config2) {
			snprintf(why, len, "%s: an event needs config1 %#llx "
				 "(e.g. metrics-clear), which perf_raw cannot "
				 "set", prof->name,
				 (unsigned long long)attrs[i].config1);
			return -1;
		}
	}
	return 0;
}

static int papi_event_set(const struct perf_event_attr *attrs, unsigned n,
			  int *es, char *why, size_t len)
{
	int rc = PAPI_library_init(PAPI_VER_CURRENT);

	if (rc != PAPI_VER_CURRENT) {
		snprintf(why, len, "PAPI_library_init: %s", PAPI_strerror(rc));
		return -1;
	}
	*es = PAPI_NULL;
	rc = PAPI_create_eventset(es);
	for (unsigned i = 0; rc == PAPI_OK && i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "perf_raw::r%llx",
			 (unsigned long long)attrs[i].config);
		rc = PAPI_add_named_event(*es, name);
		if (rc != PAPI_OK)
			snprintf(why, len, "PAPI_add_named_event(%s): %s", name,
				 PAPI_strerror(rc));
	}
	if (rc == PAPI_OK && (rc = PAPI_start(*es)) != PAPI_OK)
		snprintf(why, len, "PAPI_start: %s", PAPI_strerror(rc));
	return rc == PAPI_OK ? 0 : -1;
}

static unsigned long emulated_syscalls(void)
{
	struct emu_stats s;

	emu_stats(&s);
	return s.syscalls;
}

static int papi_pair(int es, const struct emu_mix *mix)
{
	long long v[PEER_MAX_EVENTS];
	int rc = PAPI_read(es, v);

	emu_run(PEER_WORK_SLOTS, mix);
	return rc | PAPI_read(es, v);
}

int ovh_papi_run_sections(const struct ovh_profile *prof, ovh_mark_fn mark,
			  char *why, size_t len)
{
	struct perf_event_attr attrs[PEER_MAX_EVENTS];
	struct emu_mix mix = emu_mix_l2(0.4, 0.1, 0.2, 0.3, 0.05, 0.05, 0.1,
					0.15);
	unsigned long before;
	unsigned n;
	int es, rc = 0;

	emu_setup(prof->emu);
	if (prof->offer_clear)
		emu_offer_metrics_clear();
	if (learn_events(prof, attrs, &n, why, len) < 0 ||
	    papi_event_set(attrs, n, &es, why, len) < 0)
		return -1;
	for (int i = 0; i < 2; i++) /* warm-up, as libtopdown's sections */
		rc |= papi_pair(es, &mix);
	mark(0, 0);
	before = emulated_syscalls();
	rc |= papi_pair(es, &mix);
	mark(1, emulated_syscalls() - before);
	if (rc != PAPI_OK) {
		snprintf(why, len, "PAPI_read failed");
		return -1;
	}
	PAPI_shutdown();
	emu_teardown();
	return 0;
}
