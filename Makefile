# Every target creates .venv when it is missing and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp

.PHONY: demo test compat bench clean codegen

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# One stamp per extra, remade when pyproject.toml changes. Editable installs use
# setuptools' compat mode (a .pth with the checkout's path), which mypy and pyright
# follow; the default mode's import hook is invisible to them (README: Type checking).
EDITABLE := --config-settings editable_mode=compat
$(STAMP)-base: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e .
	touch $@
$(STAMP)-dev: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[dev]'
	touch $@
$(STAMP)-compat: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[dev,compat]'
	touch $@
$(STAMP)-bench: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(EDITABLE) -e '.[dev,bench]'
	touch $@

demo: $(STAMP)-base
	$(PY) -m typedops.demo

# Tests marked compat (differential tests against torch) run in `make compat` only, also
# when torch is installed.
test: $(STAMP)-dev
	$(PY) -m pytest -q -m "not compat"
	$(PY) -m mypy
	$(VENV)/bin/pyright --pythonpath $(PY)
	$(VENV)/bin/lint-imports

compat: $(STAMP)-compat
	$(PY) -m pytest -q -m compat tests

bench: $(STAMP)-bench
	$(PY) -m benchmarks

# Regenerates the checked-in generated libraries (written only where they change): the
# bundled core library, the stubs of the tests' own ops and the code generator's demo library.
codegen: $(STAMP)-base
	$(PY) -m typedops.cli codegen typedops/core/native_functions.yaml --out typedops/core/_generated --namespace core --bundled
	$(PY) -m typedops.cli stubgen tests.data.user_ops --out tests/data/stubs
	$(PY) -m typedops.cli codegen tests/data/demo_ops.yaml --out tests/data/demo_generated --namespace demo --kernels tests.data.demo_kernels --stubs tests/data/stubs

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .hypothesis
