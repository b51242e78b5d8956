# Two entry points: `make lab` (the course) and `make test` (everything CI runs).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ROOT   := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
DEMO_PORT ?= 8866
LAB_PORT  ?= 8888

.PHONY: lab git-filter demo site test data bench browser node clients clean

# uv resolves and downloads in parallel: the test extras install in about 1.5 minutes on a
# fresh machine, where pip took over 10 (both measured on the same 2-core machine).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet "uv>=0.9"

# etc/overrides.txt: versions above what one dependency pins (mitmproxy 11's h11 and
# tornado), and one package left out (rfc3987-syntax: its file says why), settled in the
# same single resolve as everything else.
INSTALL := $(BIN)/uv pip install --quiet --python $(BIN)/python --override etc/overrides.txt

# The course runs the demo (Voila) and, in notebook 7, the real SDK clients.
$(VENV)/.lab: pyproject.toml etc/overrides.txt | $(BIN)/uv
	$(INSTALL) -e ".[demo,clients]"
	touch $@

$(VENV)/.test: pyproject.toml etc/overrides.txt | $(BIN)/uv
	$(INSTALL) -e ".[test,scale,demo,clients,tracers,mitmproxy]"
	touch $@

## lab: install, then open JupyterLab on the course with the bundled data/ (LAB_PORT=8888)
# etc/jupyter is the course's own Jupyter config, ahead of the environment's (a user's
# ~/.jupyter still wins): no news feed or update check (nothing fetched off this machine), and
# no notebook_shim (nothing here needs classic-notebook server extensions; it is what prints
# the deprecated-token warning).
lab: $(VENV)/.lab
	@$(MAKE) --no-print-directory git-filter
	JUPYTER_CONFIG_PATH=$(CURDIR)/etc/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} \
	  $(BIN)/jupyter lab $(ROOT) --port=$(LAB_PORT) --notebook-dir=notebooks

# Beyond nbstripout's defaults (outputs, counts, widget state): the kernel's version details
# JupyterLab adds on save, and the kernel's display name (a reader's own "Python 3 (ipykernel)").
# Cell ids stay (--keep-id), so running and saving makes no diff.
LAB_SAVE_KEYS := $(foreach k,version codemirror_mode file_extension mimetype nbconvert_exporter \
  pygments_lexer,metadata.language_info.$(k)) metadata.kernelspec.display_name

## git-filter: nbstripout as this clone's git filter (.gitattributes names it), so a notebook
## saved with outputs is committed (and tested) without them; skipped outside a git clone
git-filter:
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  $(BIN)/nbstripout --install --attributes .gitattributes && \
	  git config filter.nbstripout.clean "$$(git config filter.nbstripout.clean) --keep-id" && \
	  git config filter.nbstripout.extrakeys "$(LAB_SAVE_KEYS)"; \
	fi

## demo: the stage app, one scene per fault on one screen (keys n, p, r), as a Voila app for
## live use (DEMO_PORT=8866; DEMO_NOTEBOOK=notebooks/03-breaking-a-stream.ipynb for the chapter)
# (no --allow-root: Voila does not take it, and only its kernels run code). The template in
# share/jupyter/voila/templates/streamcalls is Voila's lab page with nothing fetched off this
# machine, so the demo works with no network, plus the stage's keys; share/jupyter/config/
# voila.json culls a kernel a minute after its page went away without stopping it (Voila
# stops it when the page closes). tests/browser/test_voila.py starts it the same way.
DEMO_NOTEBOOK ?= notebooks/stage/stage.ipynb
demo: $(VENV)/.lab
	JUPYTER_PATH=$(CURDIR)/share/jupyter$${JUPYTER_PATH:+:$$JUPYTER_PATH} \
	JUPYTER_CONFIG_PATH=$(CURDIR)/share/jupyter/config$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} \
	  $(BIN)/voila --template=streamcalls --port=$(DEMO_PORT) $(DEMO_NOTEBOOK)

## site: the course executed on data/ as static HTML in build/site (no kernel, no network)
site: $(VENV)/.lab
	$(BIN)/python -m streamcalls_lab.static_site build/site

## test: install, then lint and run every test, notebooks and browser included
# Four workers on CI's two cores: both cores are busy for nearly the whole run, but the
# torture harness's tests wait on paced servers and client processes, and with three workers
# the cores stood a third idle while every worker was in them. Fresh clones of the same tree
# on this 2-core machine (2026-12-05, one after the other, nothing else running): 681 s with
# -n 3, 642 s with -n 4. (An earlier tree, 7549fe2, measured the two within noise.) Those
# paced tests now run as two shares from the start (tests/conftest.py, PACED), each on one
# worker, beside two workers of CPU-bound tests.
# The notebooks are named first: xdist hands out single tests in the order they are collected,
# and the ten notebooks (each seconds of a kernel) last left cores idle at the very end.
# Bytecode is cached for this run even where the environment says not to
# (PYTHONDONTWRITEBYTECODE, set in many CI images): the suite starts about 2,700 Python
# processes (kernels, servers, SDK clients, workers), and without a cache each compiled every
# module it imported from source again (a kernel's imports took twice the CPU). Only this
# clone's .venv and __pycache__ folders (ignored by git) are written.
test: $(VENV)/.test browser node
	$(BIN)/ruff check .
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n 4 --dist loadgroup --nbmake --durations=25 notebooks tests

## browser: Debian's Chromium for the browser tests (never a downloaded build)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

## node: Debian's Node.js and npm if missing, then the Vercel AI SDK client's locked packages
node:
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --prefix clients/vercel --no-audit --no-fund --silent

## clients: run the torture harness on every real client (loop mode), rewrite docs/clients.md
## (CLIENTS_SUITE=full: every case, about 2.5 times as many)
CLIENTS_SUITE ?= quick
clients: $(VENV)/.test node
	$(BIN)/python scripts/torture_clients.py --suite $(CLIENTS_SUITE)

## data: regenerate the bundled fixtures in data/ (byte-identical every time)
data: $(VENV)/.lab
	$(BIN)/python scripts/make_data.py

## bench: load throughput and memory against peers, as ratios in one run; check_handler's pace;
## the breaker's refresh (2,000 characters against 400, and against the base commit);
## the torture harness's cases/s, a process per case against loop mode; serve under 200 clients;
## one long line in every reader (time at twice the length: ~2x linear, ~4x quadratic);
## a million turns to Parquet in bounded memory, three questions in DuckDB against pandas
bench: $(VENV)/.test
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_long_lines.py
	$(BIN)/python benchmarks/bench_linear.py
	$(BIN)/python benchmarks/bench_check.py
	$(BIN)/python benchmarks/bench_breaker.py
	$(BIN)/python benchmarks/bench_torture.py
	$(BIN)/python benchmarks/bench_serve.py
	$(BIN)/python benchmarks/bench_proxy.py
	$(BIN)/python benchmarks/bench_million.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
