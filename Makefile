# libtopdown: plain make, no configure.
#   make                 static and shared libraries
#   make test            unit + emulator tests, against both libraries, in
#                        parallel (-jN or TEST_JOBS, 2); ends "N passed, M failed"
#   make demo            build and run the demo (emulated when no PMU)
#   make harness         build and run the microbenchmark harness (same)
#   make validate        build and run topdown-validate on this machine
#                        (VALIDATE_ARGS, e.g. "--emulate -o report.json")
#   make gbench          the Google Benchmark example, if libbenchmark-dev
#   make install         PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, MANDIR honoured
#   make test-man        the manual pages render without a groff warning
#   make examples/harness.svg   the README's picture (emulated harness run)
#   make WERROR=1 ...    warnings are errors, the assembler's too (CI)
#   make test-asan       the tests under ASan+UBSan (build/asan)
#   make test-tsan       the thread and per-function tests under TSan (build/tsan)
#   make test-valgrind   the tests under valgrind memcheck
#   make test-fastslow   the fast paths against a build without them (in
#                        make test too)
#   make fuzz            libFuzzer targets, FUZZ_TIME seconds each (20)
#   make test-arm64      cross-built arm64 suite under qemu-aarch64 (build/arm64)
#   make bench           accuracy (targets enforced), overhead, timing
#   make bench-arm64     Arm's overhead rows, counted under qemu-aarch64
#   make bench-table     the README's overhead table from the overhead rows

VERSION_MAJOR := 0
VERSION_MINOR := 3
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	    -Wpointer-arith -Wformat=2
ifeq ($(WERROR),1)
WARNINGS += -Werror -Wa,--fatal-warnings
endif
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif
override CPPFLAGS += -Iinclude -D_GNU_SOURCE
override CFLAGS += -std=c11 $(WARNINGS) -MMD -MP

B ?= build
# The ABI policy (README.md "ABI"): before 1.0 any minor release may
# change the ABI, so the soname carries the minor (libtopdown.so.0.3) and
# libtopdown.map has the one version node TOPDOWN_0.3; test/check-abi.sh
# holds the three together.
ifeq ($(VERSION_MAJOR),0)
SONAME := libtopdown.so.$(VERSION_MAJOR).$(VERSION_MINOR)
else
SONAME := libtopdown.so.$(VERSION_MAJOR)
endif
# The library: libtopdown/ but its command (cmd/) and manual (man/).
# core/     the handle, the region's general route, the reset policy
# sources/  the TopDown source interface (source.h) and one folder per
#           family: perf_metrics (with the entry points and their fixed-
#           selector fast path, pm_fast.c), hybrid, counters (x86, and
#           the ordinary-counter fast path), arm
# kernel/   syscalls, sysfs discovery, event strings, CPU-specific asm
# output/   records, named regions, reports; td_open (core's handle with
#           output's hooks, open.c)
LIB_DIRS := core sources sources/perf_metrics sources/hybrid \
	    sources/counters sources/arm kernel output
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard libtopdown/$(d)/*.c))
LIB_HDRS := $(foreach d,$(LIB_DIRS),$(wildcard libtopdown/$(d)/*.h))
LIB_INCS := $(foreach d,$(LIB_DIRS),-Ilibtopdown/$(d))
LIB_STATIC_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/static/%.o)
LIB_SHARED_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/shared/%.o)
STATIC_LIB := $(B)/libtopdown.a
SHARED_LIB := $(B)/libtopdown.so.$(VERSION)

EMU_SRCS := $(wildcard test/emu/*.c)
EMU_OBJS := $(EMU_SRCS:test/emu/%.c=$(B)/emu/%.o)
TESTS := test_decode test_open test_region test_harness test_misuse \
	 test_hybrid test_threads test_live test_generic test_fastpath \
	 test_budget test_hybrid_ecore test_smt_v1 test_arm test_zen_l2 \
	 test_env_report test_counters_fast test_policy test_guards \
	 test_fastslow test_functions test_intel_l2 test_memory \
	 test_uopdrop test_read_path test_hybrid_cmt test_v45_servers \
	 test_named_mix
TEST_BINS := $(foreach t,$(TESTS),$(B)/test/$(t)-static) \
	     $(foreach t,$(filter-out test_decode test_generic test_arm \
		test_fastslow test_intel_l2,$(TESTS)),$(B)/test/$(t)-shared)

# The Google Benchmark helper run for real (test/test_gbench.cc), where
# Debian's libbenchmark-dev (or an equivalent) installed its header;
# native builds only (no aarch64 libbenchmark for test-arm64).
GBENCH_HEADER := /usr/include/benchmark/benchmark.h
ifneq ($(wildcard $(GBENCH_HEADER)),)
ifeq ($(TEST_RUN),)
TEST_BINS += $(B)/test/test_gbench-static
endif
endif

all: $(STATIC_LIB) $(B)/libtopdown.so $(B)/topdown.pc $(B)/topdown \
     $(B)/libtdemu.so $(FN_STATIC_LIB) $(B)/libtopdown-functions.so \
     $(B)/topdown-functions.pc

$(B)/static/%.o: libtopdown/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_INCS) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

$(B)/shared/%.o: libtopdown/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_INCS) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

# Built afresh: ar would keep the member of a source file since moved.
$(STATIC_LIB): $(LIB_STATIC_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_SHARED_OBJS) libtopdown/libtopdown.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=libtopdown/libtopdown.map -Wl,-z,defs \
		-o $@ $(LIB_SHARED_OBJS) -lm

$(B)/libtopdown.so: $(SHARED_LIB)
	ln -sf libtopdown.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $@

# Regenerated every time: PREFIX/LIBDIR may differ from the last run.
$(B)/topdown.pc: pkgconfig/topdown.pc.in FORCE
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

# ---- libtopdown-functions: the -finstrument-functions hooks ----------------
# Its own library on libtopdown's public API (libtopdown/functions/): a
# program built with -finstrument-functions links it, or topdown run
# --functions preloads it.  Never instrumented itself.
FN_SRCS := $(wildcard libtopdown/functions/*.c)
FN_STATIC_OBJS := $(FN_SRCS:libtopdown/%.c=$(B)/static/%.o)
FN_SHARED_OBJS := $(FN_SRCS:libtopdown/%.c=$(B)/shared/%.o)
FN_STATIC_LIB := $(B)/libtopdown-functions.a
FN_SONAME := $(subst libtopdown,libtopdown-functions,$(SONAME))
FN_SHARED_LIB := $(B)/libtopdown-functions.so.$(VERSION)
# The hooks call libtopdown through its GOT entry, not a PLT stub: one
# instruction less per call on every instrumented call's path.
$(FN_STATIC_OBJS) $(FN_SHARED_OBJS): CFLAGS += -fno-plt

$(FN_STATIC_LIB): $(FN_STATIC_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FN_SHARED_LIB): $(FN_SHARED_OBJS) libtopdown/functions/functions.map \
		  $(B)/libtopdown.so
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(FN_SONAME) \
		-Wl,--version-script=libtopdown/functions/functions.map \
		-Wl,-z,defs -o $@ $(FN_SHARED_OBJS) -L$(B) -ltopdown \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(B)/libtopdown-functions.so: $(FN_SHARED_LIB)
	ln -sf libtopdown-functions.so.$(VERSION) $(B)/$(FN_SONAME)
	ln -sf $(FN_SONAME) $@

$(B)/topdown-functions.pc: pkgconfig/topdown-functions.pc.in FORCE
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

# ---- the topdown command (libtopdown/cmd: not part of the library) -------
# Linked with the static library: it runs from any prefix without rpath.
# It finds the emulated PMU in $(LIBDIR)/topdown/ under its own install
# root (its directory less $(BINDIR): DESTDIR and moved trees too), else
# in LIBDIR, else the build tree's libtdemu.so beside it (util.c).  The
# paths are compiled in: $(B)/cmd/paths changes, and util.o is rebuilt,
# when make install is given others.
CMD_SRCS := $(wildcard libtopdown/cmd/*.c)
CMD_OBJS := $(CMD_SRCS:libtopdown/cmd/%.c=$(B)/cmd/%.o)
$(B)/cmd/%.o: libtopdown/cmd/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DTOPDOWN_LIBDIR='"$(LIBDIR)"' \
		-DTOPDOWN_BINDIR='"$(BINDIR)"' $(CFLAGS) -c -o $@ $<

$(B)/cmd/paths: FORCE
	@mkdir -p $(@D)
	@echo '$(BINDIR) $(LIBDIR)' | cmp -s - $@ 2>/dev/null || \
		echo '$(BINDIR) $(LIBDIR)' > $@
$(B)/cmd/util.o: $(B)/cmd/paths

VALIDATE_SRCS := $(wildcard libtopdown/cmd/validate/*.c)
VALIDATE_OBJS := $(VALIDATE_SRCS:libtopdown/cmd/validate/%.c=$(B)/validate/%.o)
# topdown validate: the validator's objects but its standalone main.
VALIDATE_IN_CMD = $(filter-out $(B)/validate/main.o,$(VALIDATE_OBJS))
$(B)/topdown: $(CMD_OBJS) $(VALIDATE_IN_CMD) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(VALIDATE_IN_CMD) $(STATIC_LIB) \
		-lm -ldl

# ---- emulator and tests ----------------------------------------------------
# The libc interposers run before a sanitizer runtime has initialised
# (its own mmap calls land in them): not instrumented for TSan.
$(B)/emu/%.o: test/emu/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(if $(filter emu_libc,$*),$(filter-out \
		-fsanitize=thread,$(CFLAGS)),$(CFLAGS)) -fPIC -c -o $@ $<

$(B)/test/%.o: test/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_INCS) -Itest/emu $(CFLAGS) -c -o $@ $<

TEST_LIBS := -lcmocka -lm -ldl -lpthread
GBENCH_TEST_FLAGS := $(filter-out -std=c11 -Wstrict-prototypes \
	-Wmissing-prototypes,$(CFLAGS)) -std=c++17
$(B)/test/%.o: test/%.cc
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) -Itest/emu $(GBENCH_TEST_FLAGS) -c -o $@ $<

$(B)/test/test_gbench-static: $(B)/test/test_gbench.o $(B)/test/gbench_emu.o \
			      $(EMU_OBJS) $(STATIC_LIB)
	$(CXX) $(LDFLAGS) -rdynamic -o $@ $^ -lbenchmark $(TEST_LIBS)

# test_live talks to the real kernel: no emulator linked in.
emu_for = $(if $(filter test_live,$(1)),,$(EMU_OBJS))
$(B)/test/%-static: $(B)/test/%.o $(EMU_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(call emu_for,$*) $(STATIC_LIB) \
		$(TEST_LIBS)

$(B)/test/%-shared: $(B)/test/%.o $(EMU_OBJS) $(B)/libtopdown.so
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(call emu_for,$*) -L$(B) \
		-ltopdown -Wl,-rpath,'$$ORIGIN/..' $(TEST_LIBS)

# libtopdown-functions: the driver (not instrumented) and its workloads,
# C and C++, built with -finstrument-functions.
FN_TEST_OBJS := $(B)/test/test_functions.o $(B)/test/func_work.o \
		$(B)/test/func_cxx.o
$(B)/test/func_work.o: test/func_work.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itest/emu $(CFLAGS) -finstrument-functions -c -o $@ $<

$(B)/test/func_cxx.o: test/func_cxx.cc test/func_work.h
	@mkdir -p $(@D)
	$(CXX) -Iinclude -Itest -Itest/emu $(CXXWARN) -O2 -g \
		$(filter -fsanitize=%,$(CFLAGS)) -finstrument-functions -c -o $@ $<

$(B)/test/test_functions-static: $(FN_TEST_OBJS) $(EMU_OBJS) \
				 $(FN_STATIC_LIB) $(STATIC_LIB)
	$(CXX) $(LDFLAGS) -rdynamic -o $@ $(FN_TEST_OBJS) $(EMU_OBJS) \
		$(FN_STATIC_LIB) $(STATIC_LIB) $(TEST_LIBS)

$(B)/test/test_functions-shared: $(FN_TEST_OBJS) $(EMU_OBJS) \
				 $(B)/libtopdown-functions.so
	$(CXX) $(LDFLAGS) -rdynamic -o $@ $(FN_TEST_OBJS) $(EMU_OBJS) -L$(B) \
		-ltopdown-functions -ltopdown -Wl,-rpath,'$$ORIGIN/..' \
		$(TEST_LIBS)

# The fast paths against the general route (test/test_fastslow.c): the
# library once more with every fast path compiled out (TD_NO_FAST_PATHS,
# core/handle.c), linked into test_fastslow-nofast, whose traces of the
# same operation sequences test_fastslow-static compares with its own.
NOFAST_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/nofast/%.o)
NOFAST_LIB := $(B)/libtopdown-nofast.a
$(B)/nofast/%.o: libtopdown/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DTD_NO_FAST_PATHS $(LIB_INCS) $(CFLAGS) \
		-fvisibility=hidden -c -o $@ $<

$(NOFAST_LIB): $(NOFAST_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/test/test_fastslow-nofast: $(B)/test/test_fastslow.o $(EMU_OBJS) \
				$(NOFAST_LIB)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(EMU_OBJS) $(NOFAST_LIB) \
		$(TEST_LIBS)

$(B)/test/test_fastslow-static: $(B)/test/test_fastslow-nofast

# make test-fastslow: that comparison alone.
test-fastslow: $(B)/test/test_fastslow-static
	@sh test/run-tests.sh -l $(B)/test $<

# The emulator as an LD_PRELOAD object, for running programs emulated.
# Without emu_rseq.o: a preloaded emulator must not take over a real
# program's rseq area (__rseq_offset).
$(B)/libtdemu.so: $(filter-out $(B)/emu/emu_rseq.o,$(EMU_OBJS))
	$(CC) $(LDFLAGS) -shared -o $@ $^ -ldl -lpthread -lm

# The test binaries run in parallel (test/run-tests.sh), as many at once as
# make's -jN, else TEST_JOBS; each one's output goes to LOGDIR/<name>.log,
# printed when it fails; the last line adds up cmocka's counts.
TEST_JOBS ?= 2
test_jobs = $(if $(filter command line environment,$(origin TEST_JOBS)),$\
	$(TEST_JOBS),$(or $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))),$(TEST_JOBS)))
run_tests = sh test/run-tests.sh -j $(test_jobs) -l $(1) $(TEST_BINS)

test: $(TEST_BINS) test/cxx_header.cc test-cxx-benchmark test-man test-abi
	$(CXX) -Iinclude $(CXXWARN) -fsyntax-only test/cxx_header.cc
	$(if $(VALIDATE_TEST),@$(MAKE) -s $(VALIDATE_TEST))
	$(if $(SANITIZE)$(TSAN)$(TEST_RUN),,@$(MAKE) -s test-cmd)
	$(if $(SANITIZE)$(TSAN)$(TEST_RUN),,@$(MAKE) -s test-pool)
	@$(if $(TD_STRESS_REGIONS),TD_STRESS_REGIONS=$(TD_STRESS_REGIONS)) \
		TEST_RUN="$(TEST_RUN)" $(call run_tests,$(B)/test)

# Every page renders without a groff warning; every public function and
# struct of the header has one (test/check-man.sh).
MAN_PAGES := $(wildcard libtopdown/man/man*/*.[137])
test-man: $(MAN_PAGES) include/topdown.h test/check-man.sh
	@sh test/check-man.sh include/topdown.h libtopdown/man

# The ABI policy on the built library (soname, version node, exports) and
# the public structs' layout without implicit holes, with the target's
# compiler (test-arm64: aarch64).
test-abi: $(B)/libtopdown.so test/abi_layout.c test/check-abi.sh
	$(CC) -std=c11 $(WARNINGS) -Iinclude -fsyntax-only test/abi_layout.c
	@sh test/check-abi.sh include/topdown.h libtopdown/libtopdown.map \
		$(SHARED_LIB)

# The command end to end, on the emulator: check, run, plot (rendered by
# rsvg-convert and checked pixel by pixel), help and bad arguments.
test-cmd: $(B)/topdown $(B)/libtdemu.so $(B)/examples/harness \
	  $(B)/examples/threads $(B)/examples/functions \
	  $(B)/libtopdown-functions.so $(B)/test/report_prog
	@echo "== test/test_cmd.sh"
	@sh test/test_cmd.sh $(B)
	@echo "== test/test_functions_cmd.sh"
	@sh test/test_functions_cmd.sh $(B)
	@echo "== test/test_labels.sh"
	@sh test/test_labels.sh $(B)

# What a user's program does under topdown run (test/test_cmd.sh).
$(B)/test/report_prog: test/report_prog.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC_LIB) -lm -lpthread

# examples/pool under topdown run --emulate, its report against the truth
# kept by test/truth_shim.c, which wraps the named-region calls of the
# example linked with libtopdown.so (test/test_pool.sh).
$(B)/test/pool-shared: examples/pool.c $(B)/libtopdown.so
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(B) -ltopdown \
		-Wl,-rpath,'$$ORIGIN/..' -lpthread
$(B)/test/libtruthshim.so: test/truth_shim.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< -ldl -lpthread
$(B)/test/pool_check: test/pool_check.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lm
test-pool: $(B)/topdown $(B)/libtdemu.so $(B)/examples/pool \
	   $(B)/test/pool-shared $(B)/test/libtruthshim.so $(B)/test/pool_check
	@echo "== test/test_pool.sh"
	@sh test/test_pool.sh $(B)

# ---- arm64: cross-built, run under qemu-aarch64 ----------------------------
# EL0 MRS of a PMU register raises SIGILL under qemu-user; the emulator
# answers it (emu_trap.c).  Left out: the suites of x86 PERF_METRICS
# (fixed RDPMC selectors; test_fastpath: the fast path is x86-only), the
# hybrid rseq guard and E-core group (test_hybrid, test_hybrid_ecore) and
# test_live (the host kernel); every Arm scenario is in test_arm, which
# runs natively too.  The counter budget (genopen.c) serves Arm as well:
# test_budget and test_smt_v1 (ordinary counters) run here too.
# test_fastslow compares the Arm profiles' fast paths with the general
# route; it runs its reference build through ARM64_RUN (TD_FASTSLOW_RUN).
#
# The runner's loader and libc must come from one glibc build (ld.so and
# libc.so.6 share GLIBC_PRIVATE internals).  With -L, qemu finds a guest
# path under the prefix first, else on the host: the cross loader
# (libc6-arm64-cross) searches the multiarch directories before its own,
# and where libc6:arm64 is installed (libcmocka0:arm64 needs it) it loads
# that libc.so.6, from another build (Debian 12: ld.so 2.36-8cross1,
# libc.so.6 2.36-9+deb12u14): a forked child then spins in glibc's fork,
# before it can exec.  LD_LIBRARY_PATH puts the loader's own directory
# first; cmocka is still found in the multiarch one.
ARM64_CROSS ?= aarch64-linux-gnu-
ARM64_SYSROOT ?= /usr/aarch64-linux-gnu
ARM64_RUN ?= qemu-aarch64 -L $(ARM64_SYSROOT) \
	-E LD_LIBRARY_PATH=$(ARM64_SYSROOT)/lib
ARM64_TESTS := test_decode test_open test_generic test_budget test_smt_v1 \
	       test_arm test_zen_l2 test_intel_l2 test_fastslow
test-arm64:
	TD_FASTSLOW_RUN="$(ARM64_RUN)" \
	$(MAKE) B=build/arm64 CC=$(ARM64_CROSS)gcc AR=$(ARM64_CROSS)ar \
		TESTS="$(ARM64_TESTS)" TEST_RUN="$(ARM64_RUN)" VALIDATE_TEST= test

# ---- topdown validate --------------------------------------------------------
# Its own program until the topdown command takes it in (td_cmd_validate).
$(B)/validate/%.o: libtopdown/cmd/validate/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/topdown-validate: $(VALIDATE_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ -lm -ldl

validate: $(B)/topdown-validate $(B)/libtdemu.so
	$(B)/topdown-validate $(VALIDATE_ARGS)

# In make test: validate --emulate must pass, and each fault the emulator
# injects must make its check fail (test/test_validate.sh).
VALIDATE_TEST ?= test-validate
# Under ASan the emulator is preloaded ahead of the ASan runtime.
test-validate: $(B)/topdown-validate $(B)/libtdemu.so
	$(if $(filter 1,$(SANITIZE)),ASAN_OPTIONS=$${ASAN_OPTIONS:+$$ASAN_OPTIONS:}verify_asan_link_order=0) \
		sh test/test_validate.sh $(B)/topdown-validate

# ---- demo and examples -----------------------------------------------------
$(B)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC_LIB) -lm -lpthread

# Per-function TopDown: built with -finstrument-functions, not linked with
# libtopdown (topdown run --functions preloads the hooks).
$(B)/examples/functions: examples/functions.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -finstrument-functions -o $@ $< -ldl

# The README's picture: the harness on the emulated PMU, its totals and
# per-iteration records in the one report topdown run collects.
examples/harness.svg: $(B)/topdown $(B)/libtdemu.so $(B)/examples/harness
	$(B)/topdown run --emulate -f jsonl -o $(B)/harness-run.jsonl -- \
		$(B)/examples/harness jsonl > $(B)/harness-out.txt
	$(B)/topdown plot $(B)/harness-run.jsonl -o $@ \
		-t "examples/harness on the emulated PMU (make examples/harness.svg)"

# The README's flame graph: examples/functions on the emulated PMU.
examples/functions.svg: $(B)/topdown $(B)/libtdemu.so \
			$(B)/libtopdown-functions.so $(B)/examples/functions
	$(B)/topdown run --emulate --functions -f jsonl \
		-o $(B)/functions-run.jsonl -- $(B)/examples/functions
	$(B)/topdown plot $(B)/functions-run.jsonl -o $@ \
		-t "examples/functions on the emulated PMU (make examples/functions.svg)"

demo: $(B)/examples/demo $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/demo $(B)/libtdemu.so

# ---- benchmarks (not unit tests: targets are checked here) ---------------
$(B)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_INCS) -Itest -Itest/emu $(CFLAGS) -c -o $@ $<

$(B)/bench/accuracy: $(B)/bench/accuracy.o $(EMU_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ -lm -ldl -lpthread

OVERHEAD_OBJS := $(addprefix $(B)/bench/,overhead.o overhead_seq.o \
		 overhead_report.o overhead_qemu.o)
# The peer row (PAPI 7 reading the same counters), where Debian's
# libpapi-dev installed its header; without it the bench says so.
PAPI_HEADER := /usr/include/papi.h
ifneq ($(wildcard $(PAPI_HEADER)),)
OVERHEAD_OBJS += $(B)/bench/overhead_papi.o
OVERHEAD_LIBS := -lpapi
$(B)/bench/overhead.o: CPPFLAGS += -DTD_BENCH_PAPI
endif
# Linked with libtopdown-functions: its hooks are the function-call rows'.
$(B)/bench/overhead: $(OVERHEAD_OBJS) $(EMU_OBJS) $(B)/libtopdown.so \
		     $(B)/libtopdown-functions.so
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(OVERHEAD_OBJS) $(EMU_OBJS) -L$(B) \
		-ltopdown-functions -ltopdown -Wl,-rpath,'$$ORIGIN/..' \
		$(OVERHEAD_LIBS) -lm -ldl -lpthread

# The arm64 counted process (built with the cross compiler, B=build/arm64).
GUEST_OBJS := $(addprefix $(B)/bench/,overhead_guest.o overhead_seq.o)
# Linked with libtopdown-functions too: its hooks are the function-call row's.
$(B)/bench/overhead-guest: $(GUEST_OBJS) $(EMU_OBJS) $(B)/libtopdown.so \
			   $(B)/libtopdown-functions.so
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(GUEST_OBJS) $(EMU_OBJS) -L$(B) \
		-ltopdown-functions -ltopdown -Wl,-rpath,'$$ORIGIN/..' \
		-lm -ldl -lpthread

$(B)/bench/timing: $(B)/bench/timing.o $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ -lm -lpthread

bench: $(B)/bench/accuracy $(B)/bench/overhead $(B)/bench/timing \
       $(B)/libtdemu.so
	$(B)/bench/accuracy
	$(B)/bench/overhead
	@$(MAKE) -s bench-arm64-if-possible
	@sh examples/run-demo.sh $(B)/bench/timing $(B)/libtdemu.so

# Arm's overhead rows: the guest cross-built like test-arm64, run under
# qemu-aarch64 and counted from qemu's log by the host's overhead.
ARM64_PROFILES := n2
bench-arm64: $(B)/bench/overhead
	$(MAKE) B=build/arm64 CC=$(ARM64_CROSS)gcc AR=$(ARM64_CROSS)ar \
		build/arm64/bench/overhead-guest
	@set -e; for p in $(ARM64_PROFILES); do \
		sh bench/overhead-arm64.sh build/arm64/bench/overhead-guest \
			$(B)/bench/overhead $$p build/arm64/bench $(ARM64_RUN); \
	done

bench-arm64-if-possible:
	@if command -v $(ARM64_CROSS)gcc >/dev/null && \
	    command -v $(firstword $(ARM64_RUN)) >/dev/null; then \
		$(MAKE) -s bench-arm64; \
	else \
		echo "=== overhead on arm64: SKIPPED, needs $(ARM64_CROSS)gcc" \
		     "and $(firstword $(ARM64_RUN)) (apt install" \
		     "gcc-aarch64-linux-gnu qemu-user)"; \
	fi

# The README's overhead table (markdown) from the overhead,... lines.
bench-table: $(B)/bench/overhead
	@{ $(B)/bench/overhead; $(MAKE) -s bench-arm64-if-possible; } | \
		sh bench/overhead-table.sh

# HARNESS_ARGS: table, csv or jsonl for one format (default: all three).
harness: $(B)/examples/harness $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/harness $(B)/libtdemu.so \
		$(HARNESS_ARGS)

# Google Benchmark integration: built only where Debian's libbenchmark-dev
# (or an equivalent) installed its header.  GBENCH_ARGS go to the binary.
GBENCH_ARGS ?= --benchmark_min_time=0.05
CXXWARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
ifneq ($(wildcard $(GBENCH_HEADER)),)
$(B)/examples/gbench: examples/gbench.cc include/topdown_benchmark.hpp $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) -Iinclude -std=c++17 -O2 -g $(CXXWARN) -o $@ $< $(STATIC_LIB) \
		-lbenchmark -lpthread -lm

gbench: $(B)/examples/gbench $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/gbench $(B)/libtdemu.so \
		$(GBENCH_ARGS)

# The installed helper header, compiled as the oldest and a recent C++.
test-cxx-benchmark: test/cxx_benchmark.cc include/topdown_benchmark.hpp
	$(CXX) -Iinclude -std=c++11 -Wpedantic $(CXXWARN) -fsyntax-only $<
	$(CXX) -Iinclude -std=c++17 -Wpedantic $(CXXWARN) -fsyntax-only $<
else
gbench:
	@echo "gbench: $(GBENCH_HEADER) not found (apt install libbenchmark-dev); skipped"

test-cxx-benchmark:
	@echo "test-cxx-benchmark: $(GBENCH_HEADER) not found (apt install libbenchmark-dev); skipped"
endif

# ---- install ---------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(LIBDIR)/topdown
	install -m 755 $(B)/topdown $(DESTDIR)$(BINDIR)/topdown
	install -m 755 $(B)/libtdemu.so \
		$(DESTDIR)$(LIBDIR)/topdown/libtopdown-emulated-pmu.so
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtopdown.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtopdown.so
	install -m 644 include/topdown.h include/topdown_benchmark.hpp \
		$(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(B)/topdown.pc $(DESTDIR)$(PKGCONFIGDIR)/
	install -m 644 $(FN_STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(FN_SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtopdown-functions.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/$(FN_SONAME)
	ln -sf $(FN_SONAME) $(DESTDIR)$(LIBDIR)/libtopdown-functions.so
	install -m 644 include/topdown_functions.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(B)/topdown-functions.pc $(DESTDIR)$(PKGCONFIGDIR)/
	@# a page that is one ".so manN/page.N" line goes in as a symlink to
	@# that page, so that man -l renders it from anywhere
	for sec in 1 3 7; do \
		install -d $(DESTDIR)$(MANDIR)/man$$sec || exit 1; \
		for p in libtopdown/man/man$$sec/*.$$sec; do \
			to=$$(sed -n '1s|^\.so man[0-9]/||p' $$p); \
			if [ -n "$$to" ] && [ $$(wc -l < $$p) -le 1 ]; then \
				ln -sf $$to $(DESTDIR)$(MANDIR)/man$$sec/$${p##*/}; \
			else \
				install -m 644 $$p $(DESTDIR)$(MANDIR)/man$$sec/; \
			fi || exit 1; \
		done; \
	done

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtopdown.a \
	      $(DESTDIR)$(LIBDIR)/libtopdown.so* \
	      $(DESTDIR)$(LIBDIR)/libtopdown-functions.a \
	      $(DESTDIR)$(LIBDIR)/libtopdown-functions.so* \
	      $(DESTDIR)$(INCLUDEDIR)/topdown_functions.h \
	      $(DESTDIR)$(PKGCONFIGDIR)/topdown-functions.pc \
	      $(DESTDIR)$(INCLUDEDIR)/topdown.h \
	      $(DESTDIR)$(INCLUDEDIR)/topdown_benchmark.hpp \
	      $(DESTDIR)$(PKGCONFIGDIR)/topdown.pc \
	      $(MAN_PAGES:libtopdown/man/%=$(DESTDIR)$(MANDIR)/%) \
	      $(DESTDIR)$(BINDIR)/topdown \
	      $(DESTDIR)$(LIBDIR)/topdown/libtopdown-emulated-pmu.so
	-rmdir $(DESTDIR)$(LIBDIR)/topdown 2>/dev/null

clean:
	rm -rf $(B)

# ---- sanitizers, valgrind, fuzzing -----------------------------------------
# Separate build trees, so that instrumented objects never mix with plain.
# The thread stress runs fewer regions where instrumentation makes each
# trapped RDPMC slow, and the fast/slow comparison fewer sequences; the
# defaults (100,000 regions per thread, 16 sequences) run in make test.
# LeakSanitizer checks every process at its exit.  GCC 12's ASan runtime
# does not hold its allocator's locks across fork: a test forks only while
# its other threads are quiescent (test_env_report: wait_others_in_read),
# else the child can deadlock on a lock another thread held.
test-asan:
	TD_FASTSLOW_SEQUENCES=4 $(MAKE) B=build/asan SANITIZE=1 \
		TD_STRESS_REGIONS=20000 test

test-tsan:
	$(MAKE) B=build/tsan TSAN=1 build/tsan/test/test_threads-static \
		build/tsan/test/test_threads-shared \
		build/tsan/test/test_functions-static
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 TD_STRESS_REGIONS=20000 \
		build/tsan/test/test_threads-static
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 TD_STRESS_REGIONS=2000 \
		build/tsan/test/test_threads-shared
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
		build/tsan/test/test_functions-static

VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --track-fds=no
# Its watchdog waits longer: test_fastslow alone took 547 s under valgrind
# on a loaded 2-core machine, where the default (900 s) leaves too little.
test-valgrind: $(TEST_BINS)
	@TD_STRESS_REGIONS=300 TD_FASTSLOW_SEQUENCES=3 TD_UNDER_VALGRIND=1 \
		TEST_RUN="$(VALGRIND)" TEST_TIMEOUT=2400 \
		$(call run_tests,$(B)/test/valgrind)

FUZZ_CC ?= clang
FUZZ_TIME ?= 20
FUZZ_TARGETS := fuzz_decode fuzz_event fuzz_cpulist fuzz_options
FUZZ_FLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude $(LIB_INCS) \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(B)/fuzz/%: test/fuzz/%.c $(LIB_SRCS) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRCS) -lm

# Bounded run (CI); a long one: make fuzz FUZZ_TIME=3600
fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/%)
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(B)/fuzz/corpus/$$t; echo "== fuzz $$t"; \
		$(B)/fuzz/$$t -max_total_time=$(FUZZ_TIME) -timeout=10 \
			-print_final_stats=1 -artifact_prefix=$(B)/fuzz/ \
			$(B)/fuzz/corpus/$$t test/fuzz/seeds/$$t \
			>$(B)/fuzz/$$t.log 2>&1 || \
			{ tail -40 $(B)/fuzz/$$t.log; exit 1; }; \
		grep -E '^(stat::number_of_executed_units|stat::peak_rss|#[0-9]+ *DONE)' \
			$(B)/fuzz/$$t.log; \
	done

.PHONY: all test test-abi test-cmd test-pool test-cxx-benchmark test-man test-arm64 \
	validate test-validate demo bench bench-arm64 bench-arm64-if-possible \
	bench-table harness gbench install uninstall clean FORCE test-fastslow \
	test-asan test-tsan \
	test-valgrind fuzz
FORCE:
.SECONDARY:
-include $(wildcard $(B)/*/*.d $(B)/*/*/*.d $(B)/*/*/*/*.d)
