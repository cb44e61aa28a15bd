# Newcomer entry points: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.frictionkit-installed

# Shared 2-core machines: multithreaded BLAS is several times slower here (measured).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: install browser demo test bench bench-peers codegen clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/frictionkit demo

# CI sets FRICTIONKIT_REQUIRE_COMPILED=1 so that a broken Cython build fails loudly.
# The browser test (tests/results/test_report_browser.py) needs Debian's chromium and
# chromium-driver: installed here when missing and run as root; otherwise that test fails and
# says what to install (never a silent skip).
browser:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || { \
	  test "$$(id -u)" = 0 && { apt-get install -y chromium chromium-driver || { apt-get update && apt-get install -y chromium chromium-driver; }; }; } || \
	  echo "make test: chromium/chromium-driver missing and not root: run 'apt-get install -y chromium chromium-driver'"

test: install browser
	$(PY) -m pytest -q -n 2 tests

# Peers for benchmarks/bench_auto.py only (AUTO-07p through bifpy, built with gfortran); never a
# runtime dependency. Failures are ignored: bench_auto then reports the peer as unavailable.
bench-peers: install
	-@command -v gfortran >/dev/null 2>&1 || { test "$$(id -u)" = 0 && { apt-get install -y gfortran || { apt-get update && apt-get install -y gfortran; }; }; } || echo "bench-peers: gfortran not installed (needs root): AUTO-07p peer skipped"
	-@$(PY) -m pip install --quiet 'bifpy>=0.3' || echo "bench-peers: bifpy not installed: AUTO-07p peer skipped"
	-@$(PY) -m pip install --quiet 'pyHarm-os>=1.2' || echo "bench-peers: pyHarm-os not installed: pyHarm peer skipped"

bench: install
	-@$(MAKE) --no-print-directory bench-peers
	$(PY) benchmarks/run.py

codegen: install
	$(VENV)/bin/frictionkit codegen --all

clean:
	rm -rf $(VENV) build *.egg-info
