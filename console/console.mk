# The web console (console/, console/README.md): built by npm from its
# lockfile into console/dist, which the gateway serves under /ui/ (config key
# console_dir). Included from the top-level Makefile. Node and npm come from
# `make deps`; nothing else is fetched but the locked npm packages.

CONSOLE_NPM_STAMP := console/node_modules/.deps-stamp
CONSOLE_TYPES     := console/src/api/schema.d.ts
CONSOLE_SRC       := $(filter-out $(CONSOLE_TYPES),$(shell find console/src console/public -type f 2>/dev/null)) \
                     console/index.html console/vite.config.ts console/tsconfig.json console/scripts/compress.mjs
CONSOLE_DIST      := console/dist/index.html

.PHONY: console test-console

$(CONSOLE_NPM_STAMP): console/package.json console/package-lock.json
	cd console && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The typed client's types come from the contract: a change to openapi.yaml
# that breaks the console fails `tsc` below.
$(CONSOLE_TYPES): openapi.yaml $(wildcard schema/*.json) $(CONSOLE_NPM_STAMP)
	cd console && node_modules/.bin/openapi-typescript ../openapi.yaml -o src/api/schema.d.ts --silent

$(CONSOLE_DIST): $(CONSOLE_SRC) $(CONSOLE_TYPES) $(CONSOLE_NPM_STAMP)
	cd console && node_modules/.bin/tsc --noEmit -p . && node_modules/.bin/vite build --logLevel warn && node scripts/compress.mjs dist

console: $(CONSOLE_DIST)

# The browser suite: Debian's chromium against the real gateway + kubesim +
# PostgreSQL (console/tests/stack.py starts them with tests/harness); each
# test file has its own stack (console/tests/lib/suite.mjs). test-console
# runs every file, one after another. `make test` splits it:
# test-console-shared (the files that measure no time) runs after the
# integration tests, two files at once (one file drives one page at a time
# and leaves a core idle: 1 min 44 s one after the other), and
# test-console-budget (the time budgets of tests/budget.test.mjs) alone
# last, on an idle machine.
CONSOLE_NODE_TEST     := cd console && TAUGATE_BUILD=$(abspath $(BUILD)) node --test
CONSOLE_BUDGET_TESTS  := tests/budget.test.mjs
CONSOLE_SHARED_TESTS  := $(filter-out $(CONSOLE_BUDGET_TESTS),$(patsubst console/%,%,$(wildcard console/tests/*.test.mjs)))

.PHONY: test-console-shared test-console-budget

test-console: console all $(KUBESIM_BIN)
	$(CONSOLE_NODE_TEST) --test-concurrency=1 tests/

test-console-shared: console all $(KUBESIM_BIN)
	$(CONSOLE_NODE_TEST) --test-concurrency=2 $(CONSOLE_SHARED_TESTS)

test-console-budget: console all $(KUBESIM_BIN)
	$(CONSOLE_NODE_TEST) --test-concurrency=1 $(CONSOLE_BUDGET_TESTS)
