# qconform: every command a newcomer or CI needs. `make run` and `make test` do all set-up themselves.
VENV ?= .venv
PY := $(VENV)/bin/python
QC := $(VENV)/bin/qconform
PYTHON ?= python3

# Python's bytecode cache on for everything make runs, whatever the environment says (some CI images set
# PYTHONDONTWRITEBYTECODE): the tests start hundreds of Python processes (CLI runs, backends, pytest inside pytest),
# and without the cache each one compiles every module again and has pytest rewrite its asserts again, about half
# of such a process's CPU time (docs/burn-harness.md, "CI time").
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup run test checks test-python vectors-check docs-check errors-check upgrading-check recipe-check rust-example burn burn-conformance burn-all burn-gpu lavapipe bench mutation clean

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

## The main job: the whole golden suite against the built-in reference backend, with the report.
run: setup
	$(QC) run --backend oracle

## Everything CI gates on: the golden-vector check, the generated docs (errors.md, upgrading.md), README's CI recipe
## from a wheel, the Rust protocol crate and its example backend, real burn against its profiles, then pytest.
## The checks are one process each (one core), so they run two at a time, each one's output printed whole; burn and
## pytest use both cores themselves.
test: setup
	$(MAKE) --no-print-directory -j2 --output-sync=target checks
	$(MAKE) --no-print-directory burn-conformance
	$(MAKE) --no-print-directory test-python

checks: vectors-check docs-check recipe-check rust-example

## worksteal: a worker that runs out of tests takes some of the other's, so the slowest tests do not end the run
## on one core.
test-python: setup
	$(PY) -m pytest -q -n 2 --dist worksteal

vectors-check: setup
	$(QC) generate --check

## Generated docs must match their sources: docs/errors.md (the panic catalogue and the suite) and
## docs/upgrading.md (qconform profiles --upgrading); fail if either is stale.
docs-check: errors-check upgrading-check

errors-check: setup
	$(PY) -m conformance.errors_doc --check

upgrading-check: setup
	$(QC) profiles --upgrading --check

## README's CI recipe, verbatim, from a wheel installed into a fresh virtualenv outside the checkout (~1 min warm).
recipe-check: setup
	$(PY) scripts/readme_recipe.py

## The qconform-protocol crate's tests, and examples/rust-backend (built on it) through the whole suite. `+`: cargo
## takes its jobs from make's job slots when `test` runs the checks two at a time.
rust-example: setup
	+bash scripts/rust-example.sh

## Build the Rust harness on burn's crates (cargo targets cached outside the checkout): the CPU builds of
## 0.22.0-pre.3, 0.22.1 and 0.23.0-pre.1, and burn-wgpu's two shader routes (WGSL, SPIR-V) for 0.22.0-pre.3 and 0.22.1.
burn:
	bash adapters/burn/build.sh

## The script installs lavapipe and runs build.sh itself (it needs the binaries' paths), so neither is a prerequisite.
burn-conformance: setup
	bash scripts/burn-conformance.sh

## Every build of adapters/burn/releases.toml that runs on this machine (all but CUDA): the CI rows plus the ones CI
## leaves out for time (burn-wgpu's default-feature builds, 0.23.0-pre.1's GPU route; docs/burn-harness.md "Measured").
burn-all: setup
	QCONFORM_BUILDS="$$(python3 scripts/releases.py names --without-feature cuda | tr '\n' ' ')" bash scripts/burn-conformance.sh

## Mesa's software Vulkan driver, for burn's GPU kernels without a GPU (apt-get as root; no-op when installed).
lavapipe:
	bash scripts/install-lavapipe.sh

## burn's real GPU kernels on lavapipe, only the GPU binaries (WGSL and SPIR-V, both releases), against the profile
## given (PROFILE=..., default: the one each claims). `test` runs them too, through burn-conformance. Reports in out/burn-gpu/.
burn-gpu: setup
	bash scripts/burn-gpu.sh

bench: setup
	$(PY) bench/bench_oracle.py
	$(PY) bench/bench_adapters.py

## The project's own mutation check (not in CI, tens of minutes): small realistic bugs of the project's code, each
## applied alone in a scratch copy under /tmp, its targeted tests run; caught/missed in out/mutation.json and
## docs/verification.md.
mutation: setup
	nice $(PY) scripts/mutation.py

clean:
	rm -rf $(VENV) build *.egg-info
