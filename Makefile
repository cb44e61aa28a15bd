# Newcomer entry points: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.frictionkit-installed

# Shared 2-core machines: multithreaded BLAS is several times slower here (measured).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: install demo test bench codegen clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/frictionkit demo

# CI sets FRICTIONKIT_REQUIRE_COMPILED=1 so that a broken Cython build fails loudly.
test: install
	$(PY) -m pytest -q -n 2 tests

bench: install
	$(PY) benchmarks/run.py

codegen: install
	$(VENV)/bin/frictionkit codegen --all

clean:
	rm -rf $(VENV) build *.egg-info
