# Two commands on a fresh machine:  make run   (set up, open the app)   and   make test   (set up, run the tests)
PYTHON ?= python3
PIP     = $(PYTHON) -m pip
PORT   ?= 8501

.PHONY: install setup browser run test bench precompute

install:  # the app's dependencies (torch pinned to 2.13.0: the CPU wheel here; see README for CUDA)
	$(PIP) install -q -e .

setup:    # plus the test dependencies
	$(PIP) install -q -e ".[dev]"

browser:  # Debian's Chromium for the real-browser test (Playwright drives it; no browser download)
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }

run: install
	$(PYTHON) -m streamlit run Home.py --server.port $(PORT)

test: setup browser
	$(PYTHON) -m pytest

bench: setup  # the slow, full reproductions (pytest -m slow), then each paper's timing benchmark
	$(PYTHON) -m pytest -m slow -s
	for b in bench/bench_*.py; do echo "== $$b"; $(PYTHON) $$b || exit 1; done

precompute: setup  # regenerate every page's shipped default view under toymodels/results/
	$(PYTHON) -m toymodels precompute
