# qconform: every command a newcomer or CI needs. `make run` and `make test` do all set-up themselves.
VENV ?= .venv
PY := $(VENV)/bin/python
QC := $(VENV)/bin/qconform
PYTHON ?= python3

.PHONY: setup run test test-python vectors-check docs-check burn burn-conformance bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

## The main job: the whole golden suite against the built-in reference backend, with the report.
run: setup
	$(QC) run --backend oracle

## Everything CI gates on: the golden-vector check, real burn against its profiles, then the Python test-suite.
test: vectors-check docs-check burn-conformance test-python

test-python: setup
	$(PY) -m pytest -q -n 2

vectors-check: setup
	$(QC) generate --check

## docs/upgrading.md is generated from the suite (qconform profiles --upgrading); ~10 s.
docs-check: setup
	$(QC) profiles --upgrading --check

## Build the Rust harness on burn's crates (cargo target cached outside the checkout).
burn:
	bash adapters/burn/build.sh

burn-conformance: setup burn
	bash scripts/burn-conformance.sh

bench: setup
	$(PY) bench/bench_oracle.py
	$(PY) bench/bench_adapters.py

clean:
	rm -rf $(VENV) build *.egg-info
