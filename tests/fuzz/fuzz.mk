# libFuzzer harnesses, included by the Makefile.
#
# Every tests/fuzz/fuzz_<name>.c is a harness, built with clang
# (-fsanitize=fuzzer,address,undefined) into $(FUZZ_BUILD)/fuzz_<name>. It links
# with the gateway folders in FUZZ_DIRS_<name> (default: every folder), compiled
# with the same sanitizers plus coverage instrumentation. Seeds come from
# tests/fuzz/seeds-<name>/ (plus the YAML fixtures for spec); a dictionary
# tests/fuzz/<name>.dict is used when present.
#
#   make fuzz-smoke   every harness briefly (spec 30 s, others 10 s); run by `make test`
#   make fuzz         every harness for FUZZ_SECONDS (default 600) each
#   make bench-spec   tests/bench/spec_bench.c: pipeline specs/s vs a bare libyaml parse
#   make bench-policy tests/bench/policy_bench.c: policy evaluation vs the pipeline
#   make bench-pattern tests/bench/pattern_bench.c: schema pattern automaton vs regexec

FUZZ_BUILD         ?= build-fuzz
FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 600
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_SMOKE_OTHER_SECONDS ?= 10
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -Wno-unused-command-line-argument \
               -fno-strict-aliasing -D_GNU_SOURCE -Igateway $(PKG_CFLAGS) \
               -DTG_VERSION='"fuzz"' -MMD -MP
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS   := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)

FUZZ_DIRS_spec := core tauyaml render policy submit
FUZZ_DIRS_jwt  := core auth
FUZZ_DIRS_policy := core tauyaml render policy
FUZZ_DIRS_multipart := core http auth

fuzz_all_dirs = $(patsubst gateway/%/,%,$(sort $(dir $(wildcard gateway/*/*.c))))
fuzz_srcs = $(foreach d,$(or $(FUZZ_DIRS_$(1)),$(fuzz_all_dirs)),$(wildcard gateway/$(d)/*.c))

$(FUZZ_BUILD)/gateway/%.o: gateway/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -c -o $@ $<

define FUZZ_template
$(FUZZ_BUILD)/fuzz_$(1): $(FUZZ_BUILD)/tests/fuzz/fuzz_$(1).o $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(call fuzz_srcs,$(1)))
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $$@ $$^ $(PKG_LIBS) -lpthread -lm
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_template,$(n))))

FUZZ_SMOKE := fuzz-smoke
.PHONY: fuzz-smoke fuzz fuzz-build bench-spec bench-policy bench-pattern

fuzz-build: $(FUZZ_BINS)

# The smoke runs for a fixed time beside the integration tests (make test):
# at the lowest priority it takes the CPU they leave, so it slows nothing
# (it then tries fewer inputs on a busy machine, the same number alone).
fuzz-smoke: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do \
	  s=$(FUZZ_SMOKE_OTHER_SECONDS); [ $$n = spec ] && s=$(FUZZ_SMOKE_SECONDS); \
	  nice -n 19 tests/fuzz/run-fuzz.sh $$n $$s $(FUZZ_BUILD); done

fuzz: $(FUZZ_BINS)
	@set -e; for n in $(FUZZ_NAMES); do tests/fuzz/run-fuzz.sh $$n $(FUZZ_SECONDS) $(FUZZ_BUILD); done

-include $(wildcard $(FUZZ_BUILD)/gateway/*/*.d $(FUZZ_BUILD)/tests/fuzz/*.d)

# --- benchmarks ----------------------------------------------------------------------------
# Not timed tests: each prints its figures and a ratio against a reference
# measured in the same run (spec_bench: specs/s on one core against a bare
# libyaml parse of the same bytes; policy_bench: evaluation time against the
# pipeline's; pattern_bench: the schema patterns' automaton against glibc's
# regexec). `make test-unit` builds them, so they keep compiling.
BENCH_C_BINS := $(BUILD)/tests/bench/spec_bench $(BUILD)/tests/bench/policy_bench \
                $(BUILD)/tests/bench/pattern_bench

$(BENCH_C_BINS): $(BUILD)/tests/bench/%: tests/bench/%.c $(BUILD)/libtaugate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-spec: $(BUILD)/tests/bench/spec_bench
	$(BUILD)/tests/bench/spec_bench

bench-policy: $(BUILD)/tests/bench/policy_bench
	$(BUILD)/tests/bench/policy_bench

bench-pattern: $(BUILD)/tests/bench/pattern_bench
	$(BUILD)/tests/bench/pattern_bench
