# The commands of the README (docs/development.md tells the rest):
#   make run   install the app's dependencies and start it on the sample project
#   make test  install everything (Python packages, Chromium, Java check, PostgreSQL up) and run the whole suite
#   make check the inner loop before every commit: core, store on SQLite, io, AppTest pages (no browser, no
#              PostgreSQL, no Java, no process kills, no tests marked slow)
# They are idempotent; re-running skips what is already installed.
# Both install the exact versions in requirements.lock (pip constraints); `make lock` re-resolves it from
# requirements.txt + requirements-dev.txt (the loose lists people edit) in a fresh venv.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501
# pytest-xdist workers. Many tests wait on PostgreSQL, subprocesses or a server, so one more than the 2 cores pays.
# Browser tests and `serial` ones (process kills, many writers at once) share one xdist group: one worker runs them
# one after another while the others run the rest (tests/conftest.py).
WORKERS ?= 3
# make check has no PostgreSQL, browser or server to wait on: a third worker only adds its own collection (about
# 12 s of CPU) on 2 cores (measured 2026-11-27: 2 workers 2 min 07 s, 3 workers 2 min 23 s).
CHECK_WORKERS ?= 2
# The tests compile the app's and the tests' modules (and pytest rewrites each test module) in every process that
# imports them: collection alone took 28 s of CPU per process without the bytecode cache and 16 s with it, and
# the suite's fresh interpreters (command-line runs, Label Studio's SDK, servers) gain the same. Some machines
# switch the cache off for every program with PYTHONDONTWRITEBYTECODE; make's commands switch it back on (the
# __pycache__ folders are ignored by git).
unexport PYTHONDONTWRITEBYTECODE
# Both runs end with their slowest tests and their wall time.
TIMED  := bash scripts/timed.sh
LS_VENV ?= .venv-labelstudio

.PHONY: run test check check-java install install-dev lock system-deps postgres bench clean-db

$(VENV)/bin/python:
	@echo "== creating the virtualenv $(VENV)/"
	@$(PYTHON) -m venv $(VENV)

# The install says what it does, step by step, and pip names each package of the long step (about 100 s the first
# time): a quiet install looked like a hang. setuptools ends every editable install with a general note about
# folders named like the package ("Editable installation."), which says nothing about this checkout: it is left out.
$(VENV)/.installed: requirements.txt requirements.lock pyproject.toml | $(VENV)/bin/python
	@echo "== [1/3] pip, at the version requirements.lock pins"
	@$(PY) -m pip install -q --upgrade pip -c requirements.lock
	@echo "== [2/3] the app's packages (requirements.txt at requirements.lock's versions)"
	@$(PY) -m pip install --progress-bar off -r requirements.txt -c requirements.lock
	@echo "== [3/3] the annotator package itself, editable (the checkout's code is what runs)"
	@PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install -q --no-deps -e .
	@touch $@
	@echo "== installed; later runs skip this until a requirements file changes"

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt requirements.lock $(LS_VENV)/.installed
	@echo "== the test suite's packages (requirements-dev.txt)"
	@$(PY) -m pip install -q -r requirements-dev.txt -c requirements.lock
	@touch $@

# Label Studio Community (the server tests/io/test_label_studio_server.py starts) and its SDK (the reference
# tests/io/test_label_studio.py checks our files with) pin other versions than the app uses: they get a virtualenv
# of their own, run as separate processes (about 1 GB; the server's first start migrates its database, ~1-2 min).
$(LS_VENV)/.installed: requirements-labelstudio.txt requirements-labelstudio.lock
	@echo "== Label Studio's SDK, in a virtualenv of its own ($(LS_VENV)/)"
	@$(PYTHON) -m venv $(LS_VENV)
	@$(LS_VENV)/bin/python -m pip install -q -r requirements-labelstudio.txt -c requirements-labelstudio.lock
	@touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# Re-resolve the lock (newest versions the package index has today); run `make test` before committing it.
lock:
	$(PYTHON) scripts/lock.py

# Chromium (browser tests) and Java (METEOR 1.5) come from Debian's packages.
system-deps:
	@bash scripts/system_deps.sh

postgres:
	@bash scripts/ensure_postgres.sh

run: install
	@echo "== starting the app at http://127.0.0.1:$(PORT) (another port: make run PORT=8600; stop: Ctrl+C)"
	@$(VENV)/bin/streamlit run serve.py --server.port $(PORT)

test: install-dev system-deps postgres
	@$(TIMED) "make test" $(PY) -m pytest -n $(WORKERS) --dist loadgroup --durations=15 $(PYTEST_ARGS)

# The inner loop starts no Java: the tests marked java (METEOR and the PTB tokeniser, ours beside pycocoevalcap's)
# held about 40 of its 200 s of CPU (2026-11-28), two thirds of that the JVMs loading METEOR's tables. make test runs
# them; `make check-java` runs them alone.
CHECK_MARKS := not browser and not serial and not postgresql and not slow

check: install-dev
	@ANNOTATOR_TEST_SKIP_PG=1 $(TIMED) "make check" $(PY) -m pytest -q -n $(CHECK_WORKERS) --dist loadgroup --durations=15 \
		-m "$(CHECK_MARKS) and not java" tests/core tests/store tests/io tests/ui $(PYTEST_ARGS)

check-java: install-dev system-deps
	@ANNOTATOR_TEST_SKIP_PG=1 $(TIMED) "make check-java" $(PY) -m pytest -q --durations=15 \
		-m "$(CHECK_MARKS) and java" tests/core tests/store tests/io tests/ui $(PYTEST_ARGS)

bench: install-dev
	@for b in bench/*_bench.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-db:
	rm -f data/annotator.db data/annotator.db-wal data/annotator.db-shm
