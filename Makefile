# The project's commands. `make run` and `make test` set everything up on a fresh
# machine (a virtualenv with the Python dependencies, the native module built by maturin).

PYTHON ?= python3
VENV   := .venv
BIN    := $(abspath $(VENV))/bin
STAMP  := $(VENV)/.maturin-installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(BIN):$(PATH)

.PHONY: setup build run test test-deps test-rust test-python bench identical lint fmt schema clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.5,<2"
	touch $(STAMP)

# Builds the native module in release mode and installs the package with its
# dependencies (from pyproject.toml) and the test extras into the virtualenv.
build: $(STAMP)
	@echo "building the simulator (the first build compiles every crate: a few minutes on 2 cores)"
	$(BIN)/maturin develop --release --extras test

setup: build

# The main job: the built-in default scenario, with a readable summary.
run: setup
	$(BIN)/manypath run

test: setup test-deps test-rust test-python

# The HTML report test renders a report in headless Chromium and the capture tests
# dissect pcapng files with tshark: Debian's packages, installed here when missing
# (tshark's setuid question preseeded so the install never prompts). That needs root and
# apt-get; without them (or when the install fails) this says so and carries on, and
# those tests are skipped, listed in pytest's summary ("needs chromium", "needs tshark").
test-deps:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "test-deps: chromium is missing and installing it needs root and apt-get: the report test will be skipped (needs chromium)"; \
	else \
	  echo "test-deps: installing chromium (apt-get install chromium)"; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } \
	    || echo "test-deps: installing chromium failed: the report test will be skipped (needs chromium)"; \
	fi
	@if command -v tshark >/dev/null; then :; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "test-deps: tshark is missing and installing it needs root and apt-get: the capture tests will be skipped (needs tshark)"; \
	else \
	  echo "test-deps: installing tshark (apt-get install tshark)"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tshark; } \
	    || echo "test-deps: installing tshark failed: the capture tests will be skipped (needs tshark)"; \
	fi

test-rust:
	cargo test --release -p manypath

# -rs: every skipped test is listed with its reason (e.g. "needs tshark").
test-python: setup
	$(BIN)/python -m pytest -q -rs tests

# Benchmarks: events/s, packet-hops/s, wall time, peak memory and goodput of the
# scenarios in bench/.
bench: setup
	cargo build --profile perf -p manypath --bin manypath-sim
	$(BIN)/python bench/run.py

# Bit-identical results against another revision: every shipped scenario and every
# registered experiment (reduced scale), e.g. `make identical BASE=main~3`.
identical: setup
	bench/identical.sh $(BASE)

lint:
	cargo fmt --all -- --check
	cargo clippy --release --all-targets -p manypath -p manypath-py -- -D warnings

fmt:
	cargo fmt --all

schema: setup
	$(BIN)/manypath schema > docs/scenario.schema.json

clean:
	rm -rf target $(VENV)
