# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

# Python's byte-code cache is kept even where the environment turns it off: the tests
# start the portal's processes (web, worker, CLI) again and again, and pytest rewrites
# every test module; without the cache each of them compiles everything anew.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast coverage install install-test lint migrate worker check clean vendor-plotly

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Pinned: requirements.lock holds the whole dependency tree.
$(VENV)/.installed: pyproject.toml requirements.lock | $(BIN)/python
	$(PIP) install -q -c requirements.lock -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install -q -c requirements.lock -e '.[test]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

## Start the portal on its embedded defaults (SQLite, embedded broker, one worker).
run: install
	$(BIN)/endpoints-portal serve --host 127.0.0.1 --port 8000

# Test processes (pytest-xdist): one more than the cores, since the tests spend a third
# of their time waiting on portals, workers, browsers and timed loads. At most six: each
# takes two of Redis's sixteen databases for its portals' queues
# (tests/support/services.py). One test at a time to whichever process is free, except
# the deployed portal's tests, which share one process and its one portal
# (tests/support/scheduling.py); the heaviest first (tests/conftest.py), so that no
# process is left with a minute-long test at the end while the others sit idle.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
XDIST := -n $(TEST_WORKERS) --maxprocesses 6

## Install everything and run the whole test suite (lint and format, layering contracts,
## mypy --strict); it prints the 25 slowest tests.
# mypy runs beside the tests (its report follows theirs): it reads while they wait on
# portals, workers and browsers, and the run fails if either fails.
test: install-test
	$(BIN)/ruff check app worker harness tests migrations bench
	$(BIN)/ruff format --check app worker harness tests migrations bench
	$(BIN)/lint-imports
	@$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(BIN)/python -m pytest $(XDIST) --durations=25; tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 -a $$typed -eq 0

## The same suite under coverage (about twice as slow: Python 3.11 traces every line),
## reported per file; CI runs it after `make test`.
coverage: install-test
	$(BIN)/python -m pytest -q $(XDIST) --cov=app --cov=worker --cov=harness \
		--cov-report=term:skip-covered

## A quick answer while working: SQLite only, no browser, no portal or worker processes,
## no whole-app search (the lifecycle model, schemathesis).
test-fast: install-test
	$(BIN)/ruff check app worker harness tests migrations bench
	$(BIN)/python -m pytest -q $(XDIST) -m "not browser and not slow and not exhaustive" \
		-k "not postgresql"

lint: install-test
	$(BIN)/ruff check app worker harness tests migrations bench
	$(BIN)/ruff format --check app worker harness tests migrations bench
	$(BIN)/lint-imports
	$(BIN)/mypy

migrate: install
	$(BIN)/endpoints-portal migrate

worker: install
	$(BIN)/endpoints-portal worker

clean:
	rm -rf $(VENV) var .pytest_cache

## Fetch again the Plotly bundle the pages load (checked in): plotly.js's published
## "basic" partial bundle (scatter, bar and pie: every trace the portal draws, a fifth of
## the full bundle), pinned by version and by the digest of the file it holds.
PLOTLY_BASIC := plotly.js-basic-dist-min@3.1.0
PLOTLY_BASIC_SHA256 := 80d756297ee4b5e701cee4e5c88aa52ec822c3ed84fd23bda6e20b03d10492a6
vendor-plotly:
	dir=$$(mktemp -d) && cd $$dir && npm pack -q $(PLOTLY_BASIC) >/dev/null && tar xzf *.tgz && \
	  cp package/plotly-basic.min.js $(CURDIR)/static/plotly-basic-3.1.0.min.js
	echo "$(PLOTLY_BASIC_SHA256)  static/plotly-basic-3.1.0.min.js" | sha256sum -c
