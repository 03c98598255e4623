# Lumen — build, test and run.
#
#   make            build lumend, the tools and lumenbench into build/
#   make deps       install missing Debian packages (no-op when all present)
#   make test       deps + build + unit + integration tests, then all again
#                   under AddressSanitizer + UndefinedBehaviorSanitizer
#   make run        deps + build + start lumend on ldap://127.0.0.1:3389
#   make fuzz-smoke run each libFuzzer target for a bounded time
#   make test-fuzz-replay  replay the fuzz seeds and fixed reproducers (in make test)
#   make fuzz-campaign SECONDS=N   each target N s, with a summary
#                   (FUZZ_MERGE=1 keeps new seeds; tests/fuzz/README.md)
#   make netfuzz    the network fuzzer against the sanitizer build for
#                   NETFUZZ_MINUTES (30); NETFUZZ_SEED=N replays a run,
#                   NETFUZZ_OUT=DIR collects findings there (tests/netfuzz/)
#   make install    install under PREFIX (/usr/local), DESTDIR for staging;
#                   make uninstall removes it again (install.mk)
#
# Sources are found by layer (src/<layer>/*.c), so adding a module is adding
# its files; each layer becomes a static library, linked lowest last.

SHELL      := /bin/bash
CC         ?= gcc
BUILD      ?= build
PKGS       := lmdb libevent libevent_pthreads libssl libcrypto
OPT        ?= -O2
SANFLAGS   ?=
CFLAGS     := -std=gnu11 -Wall -Wextra -Werror $(OPT) -g -pthread \
              -D_GNU_SOURCE $(SANFLAGS) $(EXTRA_CFLAGS)
# Headers are grouped by layer (include/<layer>/); a layer's sources see
# only their own layer's headers and those below, so an upward #include
# does not compile. Tests, fuzz targets and the tools see what they need.
INCLUDES_proto   := -Iinclude/proto
INCLUDES_model   := $(INCLUDES_proto) -Iinclude/model
INCLUDES_backmdb := $(INCLUDES_model) -Iinclude/backmdb
INCLUDES_config  := $(INCLUDES_backmdb) -Iinclude/config
INCLUDES_server  := $(INCLUDES_config) -Iinclude/server
INCLUDES_tools   := $(INCLUDES_config) -Iinclude/tools
INCLUDES_ALL     := $(INCLUDES_server) -Iinclude/tools
INCLUDES          = $(INCLUDES_ALL)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS      = $(PKG_LIBS) -largon2 -lcrypt -lm -pthread
CHECK_LIBS  = $(shell pkg-config --libs check 2>/dev/null)

# The release: every program's -V, the root DSE's vendorVersion, cn=Monitor,
# the metrics and the Debian package show this one string (include/proto/version.h;
# debian/changelog's version must start with it: tests/integration/t_deb.sh).
VERSION    := 0.1.0
CFLAGS     += -DLUMEN_VERSION='"$(VERSION)"'

# Layers, lowest first (DESIGN.md): a layer links only against those before it.
LAYERS     := proto model backmdb config server
define layer_objs
$(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/$(1)/main.c,$(wildcard src/$(1)/*.c)))
endef
$(foreach l,$(LAYERS),$(eval OBJS_$(l) := $(call layer_objs,$(l))))
LIBS_ALL   := $(foreach l,server config backmdb model proto,$(if $(OBJS_$(l)),$(BUILD)/lib$(l).a))
# The tools may use config and what is below it (DESIGN.md), never the server.
LIBS_TOOLS := $(filter-out $(BUILD)/libserver.a,$(LIBS_ALL))

PROGRAMS   := $(BUILD)/lumend
TOOLS      := $(patsubst src/tools/%.c,$(BUILD)/%,$(wildcard src/tools/lumen*.c))
TOOL_OBJS  := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/tools/lumen%.c,$(wildcard src/tools/*.c)))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# bench/bench.mk adds lumenbench & co. to bench-build, and its own unit
# suites (tests/unit/test_bench_*.c) to UNIT_BINS.
-include bench/bench.mk

# install.mk: make install/uninstall, the install paths compiled into
# lumend and the config loader, and the stamps that rebuild on their change.
include install.mk

# Fault builds (tests/fault/fault_inject.c): every allocation and LMDB call
# of Lumen's own code goes through the linker's --wrap, so a test can fail
# the Nth one; the production binaries are linked without it.
FAULT_WRAPS   := malloc calloc realloc strdup strndup posix_memalign \
                 mdb_txn_begin mdb_txn_commit mdb_txn_renew mdb_dbi_open mdb_get mdb_put \
                 mdb_del mdb_drop mdb_cursor_open mdb_cursor_get mdb_cursor_put \
                 mdb_cursor_count mdb_env_sync
FAULT_LDFLAGS := $(foreach s,$(FAULT_WRAPS),-Wl,--wrap=$(s))
FAULT_PROGRAMS := $(BUILD)/lumend-faults $(BUILD)/lumenadd-faults

.PHONY: bench-build all deps test test-build test-unit test-fuzz-replay test-integration test-san run clean fuzz fuzz-smoke fuzz-campaign bench bench-quick check-layers netfuzz test-netfuzz-smoke
all: $(PROGRAMS) $(TOOLS) $(FAULT_PROGRAMS) bench-build check-layers
bench-build:

# The build fails when a lower layer's library uses a higher layer's symbol.
check-layers: $(LIBS_ALL)
	@./tests/build/check-layers.sh $(BUILD)

$(foreach l,$(LAYERS) tools,$(eval $(BUILD)/obj/$(l)/%.o: INCLUDES = $(INCLUDES_$(l))))
$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INCLUDES) -MMD -MP -c $< -o $@

$(foreach l,$(LAYERS),$(eval $(BUILD)/lib$(l).a: $(OBJS_$(l)) ; @mkdir -p $$(dir $$@); rm -f $$@; ar rcs $$@ $$^))

$(BUILD)/lumend: $(BUILD)/obj/server/main.o $(LIBS_ALL)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lumen%: $(BUILD)/obj/tools/lumen%.o $(TOOL_OBJS) $(LIBS_TOOLS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/fault/fault_inject.o: tests/fault/fault_inject.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INCLUDES) -MMD -MP -c $< -o $@

$(BUILD)/lumend-faults: $(BUILD)/obj/server/main.o $(BUILD)/obj/fault/fault_inject.o $(LIBS_ALL)
	$(CC) $(CFLAGS) $(FAULT_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lumenadd-faults: $(BUILD)/obj/tools/lumenadd.o $(TOOL_OBJS) \
                          $(BUILD)/obj/fault/fault_inject.o $(LIBS_TOOLS)
	$(CC) $(CFLAGS) $(FAULT_LDFLAGS) -o $@ $^ $(LDLIBS)

# A unit suite tests/unit/test_<module>.c links only the layers up to its
# module's (src/<layer>/<module>.c); suites of no single module link all.
LIBS_UP_TO_proto   := $(BUILD)/libproto.a
LIBS_UP_TO_model   := $(BUILD)/libmodel.a $(LIBS_UP_TO_proto)
LIBS_UP_TO_backmdb := $(BUILD)/libbackmdb.a $(LIBS_UP_TO_model)
LIBS_UP_TO_config  := $(BUILD)/libconfig.a $(LIBS_UP_TO_backmdb)
LIBS_UP_TO_server  := $(LIBS_ALL)
unit_layer = $(firstword $(patsubst src/%/$(1).c,%,$(wildcard $(foreach l,$(LAYERS),src/$(l)/$(1).c))))
unit_libs = $(if $(call unit_layer,$(1)),$(LIBS_UP_TO_$(call unit_layer,$(1))),$(LIBS_ALL))
# A suite may run its module against fakes (tests/unit/fake_<name>.c) that
# stand in for the modules it talks to: UNIT_FAKES_<module> names them.
# Linked before the libraries, a fake's symbols win over the real module's.
UNIT_FAKES_ops := conn database
unit_fakes = $(patsubst %,$(BUILD)/obj/tests/fake_%.o,$(UNIT_FAKES_$(1)))
$(BUILD)/obj/tests/fake_%.o: tests/unit/fake_%.c tests/unit/fake_%.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INCLUDES) -Itests/unit -MMD -MP -c $< -o $@
# A suite may make a call of the libraries fail where it chooses (the
# seam of the fault builds, on one function): UNIT_WRAPS_<module> names
# functions whose calls from the libraries go to the suite's
# __wrap_<name>, which calls __real_<name> when nothing is to fail.
UNIT_WRAPS_ops := arena_alloc
unit_wraps = $(foreach s,$(UNIT_WRAPS_$(1)),-Wl,--wrap=$(s))
define unit_rule
$(BUILD)/tests/test_$(1): tests/unit/test_$(1).c tests/unit/check_main.h $(call unit_fakes,$(1)) $(call unit_libs,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $(call unit_wraps,$(1)) $$(INCLUDES) -Itests/unit -o $$@ $$< $(call unit_fakes,$(1)) $(call unit_libs,$(1)) $$(CHECK_LIBS) $$(LDLIBS)
endef
$(foreach t,$(patsubst tests/unit/test_%.c,%,$(filter-out tests/unit/test_bench_%,$(UNIT_SRCS))),$(eval $(call unit_rule,$(t))))

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Every fuzz target, built with the project's compiler and flags and a small
# driver instead of libFuzzer, replays its seeds and fixed reproducers.
# A target's "fuzz-fakes: a b" line links tests/unit/fake_a.c ... before the
# layers, as its libFuzzer build does (tests/fuzz/run.sh).
FUZZ_SRCS   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz-replay/%,$(FUZZ_SRCS))
fuzz_fakes_of = $(patsubst %,$(BUILD)/obj/tests/fake_%.o,$(shell sed -n 's/^.*fuzz-fakes: *//p' tests/fuzz/$(1).c))
define fuzz_replay_rule
$(BUILD)/fuzz-replay/$(1): tests/fuzz/$(1).c tests/fuzz/replay_main.c $(call fuzz_fakes_of,$(1)) $(LIBS_ALL)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(INCLUDES) -Itests/unit -o $$@ $$< tests/fuzz/replay_main.c $(call fuzz_fakes_of,$(1)) $(LIBS_ALL) $$(LDLIBS)
endef
$(foreach t,$(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS)),$(eval $(call fuzz_replay_rule,$(t))))

test-fuzz-replay: $(FUZZ_REPLAY)
	@./tests/fuzz/replay.sh $(BUILD)

deps:
	@./tests/deps.sh

# What the tests run, built one job per core first; the tests themselves
# then run one at a time (timing-sensitive scripts share the machine with
# nothing else).
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test-build: all $(UNIT_BINS) $(FUZZ_REPLAY)

test: deps
	$(MAKE) -j$(BUILD_JOBS) test-build
	$(MAKE) test-unit test-fuzz-replay test-integration
	$(MAKE) test-san

test-unit: $(UNIT_BINS)
	@./tests/run-unit.sh $(UNIT_BINS)

test-integration: all
	@BUILD=$(BUILD) SANITIZED=$(if $(SANFLAGS),1) ./tests/integration/run.sh

# Same tests, separate build tree, sanitizers on.
# Under the sanitizers with clang (tests/deps.sh installs it for the fuzz
# targets): a second compiler's warnings, and a stricter UBSan (it reports a
# pointer formed out of bounds by unsigned index arithmetic, which gcc's
# accepts), on every unit suite, fuzz replay and integration test.
SAN_CC ?= clang
SAN_MAKE = $(MAKE) BUILD=build-san CC=$(SAN_CC) OPT=-O1 \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
test-san:
	$(SAN_MAKE) -j$(BUILD_JOBS) test-build
	$(SAN_MAKE) test-unit test-fuzz-replay test-integration test-netfuzz-smoke

# The network fuzzer (tests/netfuzz/netfuzz.py) drives a real lumend with
# hostile clients; what it finds (hangs, crashes, sanitizer reports) shows
# best in the sanitizer build. The smoke, in test-san: every category
# briefly and the fixed regression cases, one fixed seed, about a minute.
# The campaign: rounds of every category for NETFUZZ_MINUTES, its seed
# printed (NETFUZZ_SEED=N runs the same cases again), findings and the
# bytes behind them in the directory it prints; it fails on any finding.
PYTHON     ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
NETFUZZ_MINUTES ?= 30
test-netfuzz-smoke: all
	@BUILD=$(BUILD) $(PYTHON) tests/netfuzz/netfuzz.py --smoke --seed 1
netfuzz:
	$(SAN_MAKE) -j$(BUILD_JOBS) all
	@BUILD=build-san $(PYTHON) tests/netfuzz/netfuzz.py --minutes $(NETFUZZ_MINUTES) \
	  $(if $(NETFUZZ_SEED),--seed $(NETFUZZ_SEED)) $(if $(NETFUZZ_OUT),--out $(NETFUZZ_OUT))

# Loads a small example directory (300 people, groups) on first use, then
# runs lumend in the foreground with logs on stderr; Ctrl-C stops it.
EXAMPLE_DB := run/example-db
run: deps all
	@mkdir -p $(EXAMPLE_DB)
	@if [ ! -s $(EXAMPLE_DB)/data.mdb ]; then \
	  ./$(BUILD)/lumengen -n 300 --groups 10 --password password -o run/example.ldif && \
	  ./$(BUILD)/lumenadd -f slapd.conf.example -l run/example.ldif; \
	fi
	./$(BUILD)/lumend -f slapd.conf.example -h ldap://127.0.0.1:3389/ -d stats

fuzz fuzz-smoke:
	@./tests/fuzz/run.sh $(if $(filter fuzz-smoke,$@),smoke,long)

# SECONDS on the command line (not the shell's own $SECONDS), else FUZZ_SECONDS;
# CPU_SECONDS=N budgets each target in CPU seconds instead (shared machines).
fuzz-campaign:
	@$(if $(filter command line,$(origin SECONDS)),FUZZ_SECONDS=$(SECONDS)) \
	  $(if $(CPU_SECONDS),FUZZ_CPU_SECONDS=$(CPU_SECONDS)) ./tests/fuzz/run.sh campaign

clean:
	rm -rf build build-san build-fuzz
