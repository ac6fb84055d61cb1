# taugate — build, deps, run, test, sanitize, bench, fmt.
# Every library comes from pkg-config; nothing is installed by hand (see `make deps`).

BUILD   ?= build
CC      ?= cc
PYTHON  ?= /usr/bin/python3
PKGS    := libmicrohttpd libpq jansson yaml-0.1 libcurl openssl libjwt

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
# -fno-plt: calls into the shared libraries (jansson above all: a few
# hundred per tau.yaml) go through the GOT directly instead of a PLT stub;
# the pipeline benchmark gains about 2% against the same bare parse.
CFLAGS  ?= -O2 -g -fno-plt
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
           -fno-strict-aliasing -D_GNU_SOURCE -Igateway $(PKG_CFLAGS) \
           -MMD -MP
LDLIBS  += $(PKG_LIBS) -lpthread -lm

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS   += $(SANFLAGS) -O1 -DTG_ARENA_PLAIN_MALLOC
LDFLAGS  += $(SANFLAGS)
endif

GATEWAY_SRC := $(sort $(wildcard gateway/*/*.c))
GATEWAY_OBJ := $(GATEWAY_SRC:%.c=$(BUILD)/%.o)
# libtgcore.a leaves the version out: kubesim does not need it, so a new
# `git describe` relinks only the binaries that print it.
VERSION_OBJ := $(BUILD)/gateway/core/version.o
CORE_OBJ    := $(filter-out $(VERSION_OBJ),$(filter $(BUILD)/gateway/core/%,$(GATEWAY_OBJ)))
CLI_SRC     := $(sort $(wildcard cli/*.c))
CLI_OBJ     := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN    := $(UNIT_SRC:%.c=$(BUILD)/%)

.PHONY: all deps deps-run run test test-unit test-integration sanitize valgrind bench fmt format-check lint clean
.DEFAULT_GOAL := all

all: $(BUILD)/taugate $(BUILD)/tau

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The version is compiled into one object, rebuilt when `git describe`
# changes: the stamp file is rewritten only then, so an unchanged tree
# rebuilds and relinks nothing.
VERSION_STAMP := $(BUILD)/version.stamp
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(VERSION_STAMP) 2>/dev/null)" = '$(VERSION)' ] || \
          echo '$(VERSION)' > $(VERSION_STAMP); })

$(VERSION_OBJ): gateway/core/version.c $(VERSION_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTG_VERSION='"$(VERSION)"' -c -o $@ $<

$(BUILD)/libtaugate.a: $(GATEWAY_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libtgcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/taugate: $(BUILD)/gateway/main.o $(BUILD)/libtaugate.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tau: $(CLI_OBJ) $(VERSION_OBJ) $(BUILD)/libtgcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(BUILD)/libtaugate.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# tests/integration/test_render_schemas.py validates the manifests this
# unit test renders for the upstream corpus.
test-integration: $(BUILD)/tests/unit/test_submit_pipeline_upstream

-include tests/kubesim/kubesim.mk
-include tests/fuzz/fuzz.mk
-include console/console.mk

# deps: everything building, running and testing need; deps-run: what
# `make run` needs (no test tools).
deps:
	@deploy/dev/deps.sh test

deps-run:
	@deploy/dev/deps.sh run

# The console is built by npm from its lockfile (console/console.mk).
run: deps-run
	@$(MAKE) --no-print-directory all $(KUBESIM_BIN) console
	@BUILD=$(BUILD) deploy/dev/run.sh

test-unit: $(UNIT_BIN) $(BENCH_C_BINS)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

# The integration tests run in TEST_JOBS pytest-xdist workers (1: serially),
# a whole test file to a worker (--dist loadfile: a file's tests share one
# gateway and database), heaviest file first (tests/conftest.py orders them
# by tests/file_weights.txt, so that no long file starts last). Each worker
# has its own PostgreSQL, gateways and kubesims; the REST contract is checked
# once at the end (tests/harness/contract_check.py). The tests wait on facts
# as much as they use the CPU, so workers beyond the cores keep both busy
# (measured on two cores: 6 workers 3 min 7 s, 4 workers 3 min 22 s).
TEST_JOBS ?= 6
PYTEST_JOBS := $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)

test-integration: all $(KUBESIM_BIN)
	TAUGATE_BUILD=$(abspath $(BUILD)) TAUGATE_MAKE_ARGS="BUILD=$(BUILD) SAN=$(SAN)" TAUGATE_SANITIZED=$(SAN) $(PYTHON) -m pytest -q -p no:cacheprovider $(PYTEST_JOBS) tests/integration $(KUBESIM_TESTS)

# The unit tests and the fuzz smoke run beside the integration tests
# (--output-sync prints each suite's output whole, when it ends); the
# console's browser tests run after them, those that measure time budgets
# last and alone (console/console.mk). Running the browser tests that
# measure no time beside the integration tests gains nothing on two cores
# (both layouts measured 5 min 17 s): the cores are busy throughout.
test: deps
	@$(MAKE) --no-print-directory format-check lint
	@$(MAKE) --no-print-directory -j3 --output-sync=target test-unit $(FUZZ_SMOKE) test-integration
	@$(MAKE) --no-print-directory test-console-shared
	@$(MAKE) --no-print-directory test-console-budget

sanitize: deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 test-unit test-integration

# Every unit test under valgrind's memcheck: an error, or memory lost for
# good, fails it (17 min on two cores, so not in make test, which runs the
# gateway itself under memcheck through a run's life: test_valgrind.py).
valgrind: deps $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; \
	  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite $$t; done

bench: deps all
	@BUILD=$(BUILD) tests/bench/run.sh

fmt:
	clang-format -i $(GATEWAY_SRC) gateway/main.c $(wildcard gateway/*/*.h) $(CLI_SRC) $(wildcard cli/*.h) $(UNIT_SRC)

format-check:
	@clang-format --dry-run --Werror $(GATEWAY_SRC) gateway/main.c $(wildcard gateway/*/*.h) $(CLI_SRC) $(wildcard cli/*.h) $(UNIT_SRC)

# What the compiler cannot see: json_pack's arguments are read with va_arg,
# so one too few is a NULL at run time, not a warning.
lint:
	@$(PYTHON) tests/tools/json_pack_args.py gateway cli tests/kubesim tests/unit

clean:
	rm -rf build build-san build-fuzz

-include $(GATEWAY_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_BIN:=.d) $(BUILD)/gateway/main.d
