# libtopdown: plain make, no configure.
#   make                 static and shared libraries
#   make test            unit + emulator tests, against both libraries
#   make demo            build and run the demo (emulated when no PMU)
#   make install         PREFIX, DESTDIR, LIBDIR, INCLUDEDIR honoured
#   make WERROR=1 ...    warnings are errors (CI)

VERSION_MAJOR := 0
VERSION_MINOR := 1
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX ?= /usr/local
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
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
override CPPFLAGS += -Iinclude -D_GNU_SOURCE
override CFLAGS += -std=c11 $(WARNINGS) -MMD -MP

B := build
SONAME := libtopdown.so.$(VERSION_MAJOR)
LIB_SRCS := $(wildcard libtopdown/*.c)
LIB_STATIC_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/static/%.o)
LIB_SHARED_OBJS := $(LIB_SRCS:libtopdown/%.c=$(B)/shared/%.o)
STATIC_LIB := $(B)/libtopdown.a
SHARED_LIB := $(B)/libtopdown.so.$(VERSION)

EMU_SRCS := $(wildcard test/emu/*.c)
EMU_OBJS := $(EMU_SRCS:test/emu/%.c=$(B)/emu/%.o)
TESTS := test_decode test_open test_region test_misuse test_hybrid \
	 test_threads test_live
TEST_BINS := $(foreach t,$(TESTS),$(B)/test/$(t)-static) \
	     $(foreach t,$(filter-out test_decode,$(TESTS)),$(B)/test/$(t)-shared)

all: $(STATIC_LIB) $(B)/libtopdown.so $(B)/topdown.pc

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

# ---- emulator and tests ----------------------------------------------------
$(B)/emu/%.o: test/emu/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

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
	$(CXX) -Iinclude -Wall -Wextra -fsyntax-only test/cxx_header.cc
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; $$t; done

# ---- demo and examples -----------------------------------------------------
$(B)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC_LIB) -lm

demo: $(B)/examples/demo $(B)/libtdemu.so
	@sh examples/run-demo.sh $(B)/examples/demo $(B)/libtdemu.so

# ---- install ---------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR)
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
	      $(DESTDIR)$(PKGCONFIGDIR)/topdown.pc

clean:
	rm -rf $(B)

.PHONY: all test demo install uninstall clean FORCE
FORCE:
.SECONDARY:
-include $(wildcard $(B)/*/*.d)
