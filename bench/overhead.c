/* SPDX-License-Identifier: MIT */
/*
 * Overhead benchmark, deterministic: counts the instructions the library
 * executes for a begin/end pair (and a pair with a result, a nested pair,
 * a pair with records attached) on every source's emulator profile.
 *
 * x86 (this program): a forked child runs the real libtopdown.so against
 * the emulated kernel (overhead_seq.c) and is single-stepped with ptrace.
 * Each counter read (RDPMC) faults as on these VMs and the emulator's
 * trap handler answers it, as in every test: the values are the emulated
 * PMU's, consistent with its user pages.  Only instructions inside
 * libtopdown.so's text are counted (not the caller's call/PLT, not the
 * emulator's handler or its emulated work), the RDPMCs apart as reads.
 * System calls: those the emulator's interposed libc wrappers received
 * (each would enter the kernel), plus any real syscall instruction
 * stepped (the emulator's rt_sigreturn apart).
 *
 * Arm: ptrace cannot single-step guest code under qemu-user (the tracer
 * would step qemu itself), so `overhead --qemu-log LOG GUEST_OUT PROFILE`
 * counts from qemu's own execution log instead (overhead_qemu.c and
 * bench/overhead-arm64.sh); the rows are made the same way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "overhead.h"
#include "overhead_qemu.h"
#include "topdown.h"

#if defined(__x86_64__)
/*
 * The code whose instructions are counted: libtopdown.so's text, or a
 * peer's libraries (PAPI: libpapi and libpfm).  A peer that calls into
 * libc (a read(2) wrapper, memcpy) has those instructions counted too
 * while the call came from its own text ("follow"); the emulator's
 * handler, in this executable, ends such a stretch.
 */
#define MAX_TEXTS 4
struct lib_text {
	unsigned long lo[MAX_TEXTS], hi[MAX_TEXTS];
	unsigned n;
	unsigned long follow_lo, follow_hi; /* libc, for a peer */
	unsigned long entry[2];      /* td_region_begin/end, or PAPI_read */
	bool following;              /* inside libc, called from counted */
};

static bool in_text(const struct lib_text *t, unsigned long rip)
{
	for (unsigned i = 0; i < t->n; i++)
		if (rip >= t->lo[i] && rip < t->hi[i])
			return true;
	return false;
}

/* Counted now: own text, or libc entered from it. */
static bool counted(struct lib_text *t, unsigned long rip)
{
	if (in_text(t, rip)) {
		t->following = t->follow_hi != 0;
		return true;
	}
	if (rip >= t->follow_lo && rip < t->follow_hi)
		return t->following;
	t->following = false;
	return false;
}

static bool names_any(const char *so, const char *const *libs)
{
	for (; *libs; libs++)
		if (strstr(so, *libs))
			return true;
	return false;
}

/* Executable mappings of the child whose path names one of libs. */
static int map_texts(pid_t pid, const char *const *libs,
		     const char *follow, struct lib_text *t, char *first,
		     size_t first_len)
{
	char path[64], line[512], so[400];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	memset(t, 0, sizeof(*t));
	*first = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		so[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399s", &a, &b, perms,
			   so) != 4 || perms[2] != 'x')
			continue;
		if (names_any(so, libs) && t->n < MAX_TEXTS) {
			if (!*first && strstr(so, libs[0]))
				snprintf(first, first_len, "%s", so);
			t->lo[t->n] = a;
			t->hi[t->n++] = b;
		} else if (follow && strstr(so, follow)) {
			t->follow_lo = a;
			t->follow_hi = b;
		}
	}
	fclose(f);
	return *first ? 0 : -1;
}

/* The child is a fork: a library sits at the same address here. */
static unsigned long entry_of(const char *so, const char *sym)
{
	void *h = dlopen(so, RTLD_LAZY | RTLD_NOLOAD);
	unsigned long a;

	if (!h)
		return 0;
	a = (unsigned long)dlsym(h, sym);
	dlclose(h);
	return a;
}

/* Executable range of libtopdown.so and its two entry points. */
static int lib_text(pid_t pid, struct lib_text *t)
{
	/* the hooks of libtopdown-functions count as the library */
	static const char *const libs[] = { "libtopdown.so",
					    "libtopdown-functions.so", NULL };
	char so[400];

	if (map_texts(pid, libs, NULL, t, so, sizeof(so)) < 0)
		return -1;
	t->entry[0] = entry_of(so, "td_region_begin");
	t->entry[1] = entry_of(so, "td_region_end");
	return t->entry[0] && t->entry[1] ? 0 : -1;
}

/* The child's section boundary: the tracer stops at the int3. */
static volatile unsigned long marked_syscalls;

static void child_mark(unsigned next, unsigned long syscalls)
{
	(void)next;
	marked_syscalls = syscalls;
	__asm__ __volatile__("int3" ::: "memory");
}

static void child(const struct ovh_profile *prof, bool function)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	if (function)
		_exit(ovh_run_function(prof, child_mark) < 0 ? 3 : 0);
	_exit(ovh_run_sections(prof, child_mark) < 0 ? 3 : 0);
}

/* Run freely (passing the emulator its RDPMC faults) until the int3. */
static int run_to_mark(pid_t pid)
{
	int status, sig = 0;

	for (;;) {
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			return -1;
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP)
			return 0;
	}
}

static bool native_rdpmc; /* an RDPMC did not fault: a host PMU answered */

/* Look at the instruction about to execute; false at the section's end. */
static bool account(pid_t pid, struct lib_text *t,
		    struct user_regs_struct *regs, struct ovh_section_count *c)
{
	unsigned long rip = regs->rip;
	unsigned long word = (unsigned long)ptrace(PTRACE_PEEKTEXT, pid,
						   (void *)rip, NULL);
	bool in_lib = counted(t, rip);

	if (!in_lib && (word & 0xff) == 0xcc) { /* child_mark's int3 */
		regs->rip++;
		ptrace(PTRACE_SETREGS, pid, NULL, regs);
		c->syscalls += (unsigned long)ptrace(
			PTRACE_PEEKDATA, pid, (void *)&marked_syscalls, NULL);
		return false;
	}
	if (rip == t->entry[0] || rip == t->entry[1])
		ovh_count_call(c);
	if (in_lib && (word & 0xffff) == 0x330f) /* rdpmc */
		ovh_count_read(c);
	else if (in_lib)
		c->lib++;
	if ((word & 0xffff) == 0x050f && regs->rax != SYS_rt_sigreturn)
		c->syscalls++;
	return true;
}

/* Single-step one section, up to the child's next mark. */
static int step_section(pid_t pid, struct lib_text *t,
			struct ovh_section_count *c)
{
	int status, sig = 0;

	memset(c, 0, sizeof(*c));
	for (;;) {
		struct user_regs_struct regs;
		unsigned long rip;

		ptrace(PTRACE_GETREGS, pid, NULL, &regs);
		rip = regs.rip;
		/* a fault stopped at the instruction: deliver it, no count */
		if (!sig && !account(pid, t, &regs, c))
			return 0;
		ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig);
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			return -1;
		sig = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
		if (!sig && in_text(t, rip)) {
			unsigned long w = (unsigned long)ptrace(
				PTRACE_PEEKTEXT, pid, (void *)rip, NULL);
			ptrace(PTRACE_GETREGS, pid, NULL, &regs);
			if ((w & 0xffff) == 0x330f && regs.rip == rip + 2)
				native_rdpmc = true;
		}
	}
}

/*
 * The function-call row: a child of its own, whose first handle is the
 * hooks' (libtopdown-functions, linked with this program).
 */
static bool trace_function(const struct ovh_profile *prof,
			   const struct ovh_section_count *pair)
{
	struct ovh_section_count fn;
	struct lib_text t;
	int status;
	bool ok;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(prof, true);
	if (pid < 0)
		return false;
	ok = waitpid(pid, &status, 0) == pid && WIFSTOPPED(status) &&
	     lib_text(pid, &t) == 0 && t.n > 1 && run_to_mark(pid) == 0 &&
	     step_section(pid, &t, &fn) == 0;
	if (ok) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		waitpid(pid, &status, 0);
		return ovh_report_function(prof, pair, &fn);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("%-10s function-call: the traced child stopped early\n",
	       prof->name);
	return false;
}

#ifdef TD_BENCH_PAPI
/* The peer's counted process: PAPI_read around the same work. */
static void papi_child(const struct ovh_profile *prof)
{
	char why[256] = "";

	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	if (ovh_papi_run_sections(prof, child_mark, why, sizeof(why)) < 0) {
		printf("%-10s %-13s not measured: %s\n", prof->name,
		       "PAPI pair", why);
		fflush(stdout);
		_exit(4);
	}
	_exit(0);
}

/*
 * PAPI's row for a profile: instructions inside libpapi and libpfm (and
 * libc called from them) for two PAPI_read calls, beside libtopdown's.
 */
static void trace_papi(const struct ovh_profile *prof,
		       const struct ovh_section_count *own)
{
	static const char *const libs[] = { "libpapi.so", "libpfm.so", NULL };
	struct ovh_section_count sec;
	struct lib_text t;
	char so[400];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		papi_child(prof);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		return;
	if (map_texts(pid, libs, "libc.so", &t, so, sizeof(so)) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	t.entry[0] = t.entry[1] = (unsigned long)dlsym(RTLD_DEFAULT,
						       "PAPI_read");
	if (run_to_mark(pid) < 0 || step_section(pid, &t, &sec) < 0) {
		waitpid(pid, &status, 0); /* it said why, or was killed */
		return;
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &status, 0);
	ovh_report_peer("papi", prof, &sec, own);
}
#else
static void trace_papi(const struct ovh_profile *prof,
		       const struct ovh_section_count *own)
{
	(void)prof;
	(void)own;
}
#endif

/* One profile: fork, trace, count every section, report. */
static int trace_profile(const struct ovh_profile *prof, bool *met)
{
	struct ovh_section_count sec[OVH_NR_SECTIONS];
	struct lib_text t;
	int status, err = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(prof, false);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status) ||
	    lib_text(pid, &t) < 0) {
		if (pid > 0)
			kill(pid, SIGKILL);
		return -EPERM;
	}
	if (run_to_mark(pid) < 0)
		err = -EIO;
	for (unsigned s = 0; !err && s < OVH_NR_SECTIONS; s++)
		if (step_section(pid, &t, &sec[s]) < 0)
			err = -EIO;
	if (!err) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		waitpid(pid, &status, 0);
		*met = ovh_report_profile(prof, sec) && *met;
		/*
		 * The function-call and peer rows open handles of their own,
		 * without the profile's option or offer: only for the plain
		 * profiles, whose rows they would otherwise repeat.
		 */
		if (!prof->opts && !prof->offer_clear) {
			*met = trace_function(prof, &sec[OVH_PAIR]) && *met;
			trace_papi(prof, sec);
		}
	} else {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		printf("%-10s the traced child stopped early: no rows\n",
		       prof->name);
		*met = false;
	}
	return err;
}

static int trace_all(void)
{
	bool met = true;

	ovh_report_header("x86: single-stepped with ptrace, each RDPMC "
			  "answered by the emulator's trap handler");
	for (unsigned i = 0; i < ovh_nr_profiles; i++) {
		int err;

		if (ovh_profiles[i].emu >= EMU_ARM_N1)
			continue; /* make bench-arm64 */
		err = trace_profile(&ovh_profiles[i], &met);
		if (err == -EPERM) {
			printf("overhead: ptrace is not permitted here; "
			       "skipped\n");
			return 0;
		}
	}
	if (native_rdpmc)
		printf("# WARNING: an RDPMC did not fault: this host's PMU "
		       "answered it, not the emulator\n");
	ovh_report_footer();
	printf("# targets: %s (see README, Overhead)\n",
	       met ? "all met" : "some MISSED");
	return 0; /* reported, not enforced: see README, Overhead */
}
#else
static int trace_all(void)
{
	printf("overhead: the ptrace counter is x86-64 only; on arm64 "
	       "use make bench-arm64 (qemu's log)\n");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--qemu-log") == 0)
		return ovh_qemu_report(argv[2], argv[3], argv[4]);
	if (argc == 5 && strcmp(argv[1], "--qemu-function-log") == 0)
		return ovh_qemu_report_function(argv[2], argv[3], argv[4]);
	if (argc != 1) {
		fprintf(stderr, "usage: overhead\n"
				"       overhead --qemu-log LOG GUEST_OUT "
				"PROFILE\n");
		return 2;
	}
	return trace_all();
}
