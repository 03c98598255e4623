# Lumen — build, test and run.
#
#   make            build lumend, the tools and lumenbench into build/
#   make deps       install missing Debian packages (no-op when all present)
#   make test       deps + build + unit + integration tests, then all again
#                   under AddressSanitizer + UndefinedBehaviorSanitizer
#   make run        deps + build + start lumend on ldap://127.0.0.1:3389
#   make fuzz-smoke run each libFuzzer target for a bounded time
#   make fuzz-campaign SECONDS=N   each target N s, with a summary
#                   (FUZZ_MERGE=1 keeps new seeds; tests/fuzz/README.md)
#
# Sources are found by layer (src/<layer>/*.c), so adding a module is adding
# its files; each layer becomes a static library, linked lowest last.

SHELL      := /bin/bash
CC         ?= gcc
BUILD      ?= build
PKGS       := lmdb libevent libevent_pthreads libssl libcrypto
OPT        ?= -O2
SANFLAGS   ?=
CFLAGS     := -std=gnu11 -Wall -Wextra -Werror $(OPT) -g -pthread -Iinclude \
              -D_GNU_SOURCE $(SANFLAGS) $(EXTRA_CFLAGS)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS      = $(PKG_LIBS) -largon2 -lcrypt -lm -pthread
CHECK_LIBS  = $(shell pkg-config --libs check 2>/dev/null)

# Layers, lowest first (DESIGN.md): a layer links only against those before it.
LAYERS     := proto model backmdb config server
define layer_objs
$(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/$(1)/main.c,$(wildcard src/$(1)/*.c)))
endef
$(foreach l,$(LAYERS),$(eval OBJS_$(l) := $(call layer_objs,$(l))))
LIBS_ALL   := $(foreach l,server config backmdb model proto,$(if $(OBJS_$(l)),$(BUILD)/lib$(l).a))

PROGRAMS   := $(BUILD)/lumend
TOOLS      := $(patsubst src/tools/%.c,$(BUILD)/%,$(wildcard src/tools/lumen*.c))
TOOL_OBJS  := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/tools/lumen%.c,$(wildcard src/tools/*.c)))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# bench/bench.mk adds lumenbench & co. to bench-build, and its own unit
# suites (tests/unit/test_bench_*.c) to UNIT_BINS.
-include bench/bench.mk

.PHONY: bench-build all deps test test-unit test-integration test-san run clean fuzz fuzz-smoke fuzz-campaign bench bench-quick
all: $(PROGRAMS) $(TOOLS) bench-build
bench-build:

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(foreach l,$(LAYERS),$(eval $(BUILD)/lib$(l).a: $(OBJS_$(l)) ; @mkdir -p $$(dir $$@); rm -f $$@; ar rcs $$@ $$^))

$(BUILD)/lumend: $(BUILD)/obj/server/main.o $(LIBS_ALL)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lumen%: $(BUILD)/obj/tools/lumen%.o $(TOOL_OBJS) $(LIBS_ALL)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check_main.h $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(LIBS_ALL) $(CHECK_LIBS) $(LDLIBS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

deps:
	@./tests/deps.sh

test: deps
	$(MAKE) all
	$(MAKE) test-unit test-integration
	$(MAKE) test-san

test-unit: $(UNIT_BINS)
	@./tests/run-unit.sh $(UNIT_BINS)

test-integration: all
	@BUILD=$(BUILD) ./tests/integration/run.sh

# Same tests, separate build tree, sanitizers on.
test-san:
	$(MAKE) BUILD=build-san OPT=-O1 \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  all test-unit test-integration

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

# SECONDS on the command line (not the shell's own $SECONDS), else FUZZ_SECONDS.
fuzz-campaign:
	@$(if $(filter command line,$(origin SECONDS)),FUZZ_SECONDS=$(SECONDS)) ./tests/fuzz/run.sh campaign

clean:
	rm -rf build build-san build-fuzz
