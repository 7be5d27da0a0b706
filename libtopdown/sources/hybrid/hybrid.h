/* SPDX-License-Identifier: MIT */
/*
 * The hybrid source's own state and entries: the E-core group and the
 * rseq guard of hybrid parts (hybrid.c), composed with the PERF_METRICS
 * source (hybrid_source.c).  Not installed.
 */
#ifndef TD_HYBRID_H
#define TD_HYBRID_H

#include "internal.h"

/*
 * The E-cores' slots (plain slots, cumulative) in an entry of struct
 * td_counts that PERF_METRICS leaves free, so that a region's own delta
 * says whether any of its slots came from an E-core (level 2 per
 * region).  The hybrid source's alone.
 */
#define TD_C_ECORE_SLOTS (TD_NR_COUNTS - 1)
_Static_assert(TD_C_ECORE_SLOTS > TD_M_SMT,
	       "the E-cores' slots must not be a result category");

TD_HIDDEN void td_hybrid_init(struct td *td);
TD_HIDDEN void td_hybrid_close(struct td *td);
TD_HIDDEN void td_hybrid_ecore_open(struct td *td, bool include_kernel);
TD_HIDDEN void td_hybrid_fold(struct td *td, struct td_sample *s);

#endif
