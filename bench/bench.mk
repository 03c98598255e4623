# bench/bench.mk — lumenbench, lumengen, lumen-canned and their unit suites.
# Included by the top-level Makefile after its variables, before its rules.
# bench/ uses only the proto layer (DESIGN.md), so everything here links
# $(BUILD)/libproto.a and nothing above it.

# Included before the top-level rules: keep `make` meaning `make all`.
.DEFAULT_GOAL := all

BENCH_ENGINE := histogram template workload response bench_stats \
                procstat connection client report
BENCH_OBJS   := $(patsubst %,$(BUILD)/obj/bench/%.o,$(BENCH_ENGINE))
BENCH_PROGS  := $(BUILD)/lumenbench $(BUILD)/lumengen $(BUILD)/lumen-canned
BENCH_CFLAGS  = $(CFLAGS) $(INCLUDES_proto) -Ibench

bench-build: $(BENCH_PROGS)

$(BUILD)/obj/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/lumenbench: $(BUILD)/obj/bench/lumenbench.o $(BENCH_OBJS) $(BUILD)/libproto.a
	$(CC) $(BENCH_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lumengen: $(BUILD)/obj/bench/lumengen.o $(BUILD)/libproto.a
	$(CC) $(BENCH_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lumen-canned: $(BUILD)/obj/bench/canned.o $(BUILD)/libproto.a
	$(CC) $(BENCH_CFLAGS) -o $@ $^ $(LDLIBS)

# The top-level wildcard already lists tests/unit/test_bench_*.c; sort
# drops the duplicates while making sure they are there.
UNIT_BINS := $(sort $(UNIT_BINS) $(BUILD)/tests/test_bench_histogram \
                                 $(BUILD)/tests/test_bench_template)

$(BUILD)/tests/test_bench_%: tests/unit/test_bench_%.c tests/unit/check_main.h \
                             $(BENCH_OBJS) $(BUILD)/libproto.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -Itests/unit -o $@ $< $(BENCH_OBJS) \
	  $(BUILD)/libproto.a $(CHECK_LIBS) $(LDLIBS)

# make bench: the full comparison with OpenLDAP; make bench-quick: a few
# minutes on small data. Extra flags: make bench BENCH_FLAGS="--entries 1000000"
bench: bench-build
	BUILD=$(BUILD) bench/compare.sh $(BENCH_FLAGS)

# The 1M-entry matrix: a directory a hundred times the default entry cache.
bench-1m: bench-build
	BUILD=$(BUILD) bench/compare.sh --entries 1000000 --label 1m $(BENCH_FLAGS)

bench-quick: bench-build
	BUILD=$(BUILD) bench/compare.sh --quick $(BENCH_FLAGS)

# make bench-hostile: 10,000 connections (1,000 slowloris or non-reading)
# held on lumend while lumenbench measures; needs root (RLIMIT_NOFILE) and
# `make all`. Small run: make bench-hostile HOSTILE_FLAGS=--quick
.PHONY: bench-hostile bench-1m
bench-hostile: bench-build $(BUILD)/lumend $(BUILD)/lumenadd
	BUILD=$(BUILD) /usr/bin/python3 bench/hostile_load.py $(HOSTILE_FLAGS)
