/* SPDX-License-Identifier: MIT */
#ifndef TD_BENCH_OVERHEAD_QEMU_H
#define TD_BENCH_OVERHEAD_QEMU_H

/*
 * Rows of one profile counted from qemu-aarch64's execution log (LOG,
 * -singlestep -d in_asm,exec,nochain) and the guest's output (GUEST_OUT:
 * its layout line and per-section system calls).  Returns the exit
 * status: 0, or 1 when the log cannot be used.
 */
int ovh_qemu_report(const char *log, const char *guest_out,
		    const char *profile);
/* The function-call row of the guest's run-function (its fnlayout line
 * too). */
int ovh_qemu_report_function(const char *log, const char *guest_out,
			     const char *profile);

#endif
