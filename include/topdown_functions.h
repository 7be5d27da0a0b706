/* SPDX-License-Identifier: MIT */
/* libtopdown-functions: a TopDown breakdown of every function of the files
 * built with -finstrument-functions (GCC, Clang), from a recompile alone.
 * The library defines __cyg_profile_func_enter/exit: link it (pkg-config
 * topdown-functions) or preload it (topdown run --functions).  Each thread
 * opens its own libtopdown handle at its first instrumented call; each
 * call is a region, folded into per-thread totals per call path.  With
 * TOPDOWN_REPORT set, the report (every thread) is written at exit.
 * README.md "Per-function TopDown": rows, columns, environment. */
#ifndef TOPDOWN_FUNCTIONS_H
#define TOPDOWN_FUNCTIONS_H

#include <stdio.h>

#include "topdown.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write the per-function report of every thread so far: rows of kind
 * "function" (per thread, then "all") and of kind "path" (call paths,
 * all threads; name "main;f;g"), inclusive figures in the usual columns,
 * self figures in self_ columns.  The calling thread's open calls are
 * measured up to now.  Returns 0, or -EINVAL for a NULL f or a bad fmt,
 * -ENOMEM, -EIO when writing failed. */
TD_API int td_functions_report(FILE *f, enum td_format fmt);

#ifdef __cplusplus
}
#endif

#endif /* TOPDOWN_FUNCTIONS_H */
