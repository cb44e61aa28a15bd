# Newcomer entry points: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.frictionkit-installed

# Shared 2-core machines: multithreaded BLAS is several times slower here (measured).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: install browser demo test bench bench-peers codegen clean

# setuptools says "Editable installation ... be careful with folders in your working directory
# with the same name as your package" after every editable install that maps folders to the
# package (ours: the repository root is `frictionkit`, package-dir in pyproject.toml); there is
# no folder named frictionkit here, so this one notice (and only it) is filtered.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

$(STAMP): pyproject.toml setup.py runtime/discretizations/_pointwise_loop.pyx
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(QUIET_EDITABLE) $(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/frictionkit demo

# CI sets FRICTIONKIT_REQUIRE_COMPILED=1 so that a broken Cython build fails loudly.
# The browser test (tests/results/test_report_browser.py) needs Debian's chromium and
# chromium-driver.  When they are missing and make runs as root, `browser` lists the Debian
# packages it is about to install (the two and the libraries they need: apt-get
# --no-install-recommends), then installs them; not root, it says what to run.
# FRICTIONKIT_NO_BROWSER=1 installs nothing: the browser test is then skipped, saying what to install.
BROWSER_PACKAGES := chromium chromium-driver
APT_BROWSER := apt-get install -y --no-install-recommends $(BROWSER_PACKAGES)
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$${FRICTIONKIT_NO_BROWSER:-0}" = 1 ]; then \
	  echo "make browser: FRICTIONKIT_NO_BROWSER=1: $(BROWSER_PACKAGES) not installed; the browser test is skipped"; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "make browser: $(BROWSER_PACKAGES) missing and not root: run '$(APT_BROWSER)' as root for the browser test (or set FRICTIONKIT_NO_BROWSER=1 to skip it)"; \
	else \
	  apt-get install -s --no-install-recommends $(BROWSER_PACKAGES) >/dev/null 2>&1 || apt-get update -q; \
	  echo "make browser: installing Debian's $(BROWSER_PACKAGES) for the report's browser test (FRICTIONKIT_NO_BROWSER=1 skips this):"; \
	  apt-get install -s --no-install-recommends $(BROWSER_PACKAGES) | sed -n 's/^Inst \([^ ]*\).*/  \1/p' | tr -d '\n'; echo; \
	  $(APT_BROWSER); \
	fi

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
	rm -f runtime/discretizations/_pointwise_loop.c runtime/discretizations/_pointwise_loop.*.so \
	      runtime/discretizations/_pointwise_loop.source.json
