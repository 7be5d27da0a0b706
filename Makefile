# libtopdown: plain make, no configure.
#   make                 static and shared libraries
#   make test            unit + emulator tests, against both libraries
#   make demo            build and run the demo (emulated when no PMU)
#   make harness         build and run the microbenchmark harness (same)
#   make gbench          the Google Benchmark example, if libbenchmark-dev
#   make install         PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR honoured
#   make examples/harness.svg   the README's picture (emulated harness run)
#   make WERROR=1 ...    warnings are errors (CI)
#   make test-asan       the tests under ASan+UBSan (build/asan)
#   make test-tsan       the thread tests under ThreadSanitizer (build/tsan)
#   make test-valgrind   the tests under valgrind memcheck
#   make fuzz            libFuzzer targets, FUZZ_TIME seconds each (20)
#   make test-arm64      cross-built arm64 suite under qemu-aarch64 (build/arm64)

VERSION_MAJOR := 0
VERSION_MINOR := 3
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	    -Wpointer-arith -Wformat=2
ifeq ($(WERROR),1)
WARNINGS += -Werror
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
# Before 1.0 every minor release may change the ABI (0.3 grew struct
# td_region), so the soname carries the minor: libtopdown.so.0.3.
ifeq ($(VERSION_MAJOR),0)
SONAME := libtopdown.so.$(VERSION_MAJOR).$(VERSION_MINOR)
else
SONAME := libtopdown.so.$(VERSION_MAJOR)
endif
LIB_SRCS := $(wildcard libtopdown/*.c)
LIB_STATIC_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/static/%.o)
LIB_SHARED_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/shared/%.o)
STATIC_LIB := $(B)/libtopdown.a
SHARED_LIB := $(B)/libtopdown.so.$(VERSION)

EMU_SRCS := $(wildcard test/emu/*.c)
EMU_OBJS := $(EMU_SRCS:test/emu/%.c=$(B)/emu/%.o)
TESTS := test_decode test_open test_region test_harness test_misuse \
	 test_hybrid test_threads test_live test_generic test_fastpath \
	 test_budget test_hybrid_ecore test_smt_v1 test_arm test_zen_l2 \
	 test_env_report
TEST_BINS := $(foreach t,$(TESTS),$(B)/test/$(t)-static) \
	     $(foreach t,$(filter-out test_decode test_generic test_arm,$(TESTS)),$(B)/test/$(t)-shared)

all: $(STATIC_LIB) $(B)/libtopdown.so $(B)/topdown.pc $(B)/topdown \
     $(B)/libtdemu.so

$(B)/static/%.o: libtopdown/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

$(B)/shared/%.o: libtopdown/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(STATIC_LIB): $(LIB_STATIC_OBJS)
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

# ---- the topdown command (libtopdown/cmd: not part of the library) -------
# Linked with the static library: it runs from any prefix without rpath.
# It finds the emulated PMU from its own location (../lib/topdown/), else
# LIBDIR, else the build tree's libtdemu.so beside it.
CMD_SRCS := $(wildcard libtopdown/cmd/*.c)
CMD_OBJS := $(CMD_SRCS:libtopdown/cmd/%.c=$(B)/cmd/%.o)
$(B)/cmd/%.o: libtopdown/cmd/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DTOPDOWN_LIBDIR='"$(LIBDIR)"' $(CFLAGS) -c -o $@ $<

$(B)/topdown: $(CMD_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(STATIC_LIB) -lm

# ---- emulator and tests ----------------------------------------------------
# The libc interposers run before a sanitizer runtime has initialised
# (its own mmap calls land in them): not instrumented for TSan.
$(B)/emu/%.o: test/emu/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(if $(filter emu_libc,$*),$(filter-out \
		-fsanitize=thread,$(CFLAGS)),$(CFLAGS)) -fPIC -c -o $@ $<

$(B)/test/%.o: test/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilibtopdown -Itest/emu $(CFLAGS) -c -o $@ $<

TEST_LIBS := -lcmocka -lm -ldl -lpthread
# test_live talks to the real kernel: no emulator linked in.
emu_for = $(if $(filter test_live,$(1)),,$(EMU_OBJS))
$(B)/test/%-static: $(B)/test/%.o $(EMU_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(call emu_for,$*) $(STATIC_LIB) \
		$(TEST_LIBS)

$(B)/test/%-shared: $(B)/test/%.o $(EMU_OBJS) $(B)/libtopdown.so
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(call emu_for,$*) -L$(B) \
		-ltopdown -Wl,-rpath,'$$ORIGIN/..' $(TEST_LIBS)

# The emulator as an LD_PRELOAD object, for running programs emulated.
# Without emu_rseq.o: a preloaded emulator must not take over a real
# program's rseq area (__rseq_offset).
$(B)/libtdemu.so: $(filter-out $(B)/emu/emu_rseq.o,$(EMU_OBJS))
	$(CC) $(LDFLAGS) -shared -o $@ $^ -ldl -lpthread -lm

test: $(TEST_BINS) test/cxx_header.cc
	$(CXX) -Iinclude $(CXXWARN) -fsyntax-only test/cxx_header.cc
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; \
		$(if $(TD_STRESS_REGIONS),TD_STRESS_REGIONS=$(TD_STRESS_REGIONS)) \
		$(TEST_RUN) $$t; done
	$(if $(SANITIZE)$(TSAN)$(TEST_RUN),,@$(MAKE) -s test-cmd)

# The command end to end, on the emulator: check, run, plot (rendered by
# rsvg-convert and checked pixel by pixel), help and bad arguments.
test-cmd: $(B)/topdown $(B)/libtdemu.so $(B)/examples/harness \
	  $(B)/examples/threads
	@echo "== test/test_cmd.sh"
	@sh test/test_cmd.sh $(B)

# ---- arm64: cross-built, run under qemu-aarch64 ----------------------------
# EL0 MRS of a PMU register raises SIGILL under qemu-user; the emulator
# answers it (emu_trap.c).  Left out: the suites of x86 PERF_METRICS
# (fixed RDPMC selectors; test_fastpath: the fast path is x86-only), the
# hybrid rseq guard and E-core group (test_hybrid, test_hybrid_ecore) and
# test_live (the host kernel); every Arm scenario is in test_arm, which
# runs natively too.  The counter budget (genopen.c) serves Arm as well:
# test_budget and test_smt_v1 (ordinary counters) run here too.
ARM64_CROSS ?= aarch64-linux-gnu-
ARM64_RUN ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
ARM64_TESTS := test_decode test_open test_generic test_budget test_smt_v1 \
	       test_arm test_zen_l2
test-arm64:
	$(MAKE) B=build/arm64 CC=$(ARM64_CROSS)gcc AR=$(ARM64_CROSS)ar \
		TESTS="$(ARM64_TESTS)" TEST_RUN="$(ARM64_RUN)" test

# ---- demo and examples -----------------------------------------------------
$(B)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC_LIB) -lm -lpthread

# The README's picture: the harness on the emulated PMU, its totals
# through topdown run, its per-iteration records from its own output.
examples/harness.svg: $(B)/topdown $(B)/libtdemu.so $(B)/examples/harness
	$(B)/topdown run --emulate -f jsonl -o $(B)/harness-run.jsonl -- \
		$(B)/examples/harness jsonl > $(B)/harness-out.txt
	grep '^{"kind":"record"' $(B)/harness-out.txt | \
		sed 's/}$$/,"pmu":"emulated:spr"}/' > $(B)/harness-plot.jsonl
	cat $(B)/harness-run.jsonl >> $(B)/harness-plot.jsonl
	$(B)/topdown plot $(B)/harness-plot.jsonl -o $@ \
		-t "examples/harness on the emulated PMU (make examples/harness.svg)"

demo: $(B)/examples/demo $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/demo $(B)/libtdemu.so

# ---- benchmarks (not unit tests: targets are checked here) ---------------
$(B)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilibtopdown -Itest -Itest/emu $(CFLAGS) -c -o $@ $<

$(B)/bench/accuracy: $(B)/bench/accuracy.o $(EMU_OBJS) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -rdynamic -o $@ $^ -lm -ldl -lpthread

$(B)/bench/overhead: $(B)/bench/overhead.o $(EMU_OBJS) $(B)/libtopdown.so
	$(CC) $(LDFLAGS) -rdynamic -o $@ $< $(EMU_OBJS) -L$(B) -ltopdown \
		-Wl,-rpath,'$$ORIGIN/..' -lm -ldl -lpthread

$(B)/bench/timing: $(B)/bench/timing.o $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ -lm -lpthread

bench: $(B)/bench/accuracy $(B)/bench/overhead $(B)/bench/timing \
       $(B)/libtdemu.so
	$(B)/bench/accuracy
	$(B)/bench/overhead
	@sh examples/run-demo.sh $(B)/bench/timing $(B)/libtdemu.so

# HARNESS_ARGS: table, csv or jsonl for one format (default: all three).
harness: $(B)/examples/harness $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/harness $(B)/libtdemu.so \
		$(HARNESS_ARGS)

# Google Benchmark integration: built only where Debian's libbenchmark-dev
# (or an equivalent) installed its header.  GBENCH_ARGS go to the binary.
GBENCH_HEADER := /usr/include/benchmark/benchmark.h
GBENCH_ARGS ?= --benchmark_min_time=0.05
CXXWARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
ifneq ($(wildcard $(GBENCH_HEADER)),)
$(B)/examples/gbench: examples/gbench.cc $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) -Iinclude -std=c++17 -O2 -g $(CXXWARN) -o $@ $< $(STATIC_LIB) \
		-lbenchmark -lpthread -lm

gbench: $(B)/examples/gbench $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/gbench $(B)/libtdemu.so \
		$(GBENCH_ARGS)
else
gbench:
	@echo "gbench: $(GBENCH_HEADER) not found (apt install libbenchmark-dev); skipped"
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
	install -m 644 include/topdown.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(B)/topdown.pc $(DESTDIR)$(PKGCONFIGDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtopdown.a \
	      $(DESTDIR)$(LIBDIR)/libtopdown.so* \
	      $(DESTDIR)$(INCLUDEDIR)/topdown.h \
	      $(DESTDIR)$(PKGCONFIGDIR)/topdown.pc \
	      $(DESTDIR)$(BINDIR)/topdown \
	      $(DESTDIR)$(LIBDIR)/topdown/libtopdown-emulated-pmu.so
	-rmdir $(DESTDIR)$(LIBDIR)/topdown 2>/dev/null

clean:
	rm -rf $(B)

# ---- sanitizers, valgrind, fuzzing -----------------------------------------
# Separate build trees, so that instrumented objects never mix with plain.
# The thread stress runs fewer regions where instrumentation makes each
# trapped RDPMC slow; the default (100,000 per thread) runs in make test.
test-asan:
	$(MAKE) B=build/asan SANITIZE=1 TD_STRESS_REGIONS=20000 test

test-tsan:
	$(MAKE) B=build/tsan TSAN=1 build/tsan/test/test_threads-static \
		build/tsan/test/test_threads-shared
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 TD_STRESS_REGIONS=20000 \
		build/tsan/test/test_threads-static
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 TD_STRESS_REGIONS=2000 \
		build/tsan/test/test_threads-shared

VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --track-fds=no
test-valgrind: $(TEST_BINS)
	@set -e; for t in $(TEST_BINS); do echo "== valgrind $$t"; \
		TD_STRESS_REGIONS=300 TD_UNDER_VALGRIND=1 $(VALGRIND) $$t; done

FUZZ_CC ?= clang
FUZZ_TIME ?= 20
FUZZ_TARGETS := fuzz_decode fuzz_event fuzz_cpulist fuzz_options
FUZZ_FLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Ilibtopdown \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(B)/fuzz/%: test/fuzz/%.c $(LIB_SRCS) libtopdown/internal.h
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

.PHONY: all test test-cmd test-arm64 demo bench harness gbench install uninstall clean FORCE \
	test-asan test-tsan \
	test-valgrind fuzz
FORCE:
.SECONDARY:
-include $(wildcard $(B)/*/*.d)
