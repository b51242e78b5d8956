# Two entry points: `make lab` (the course) and `make test` (everything CI runs).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ROOT   := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
DEMO_PORT ?= 8866

.PHONY: lab demo test data bench browser node clients clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.lab: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[demo]"
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[test,scale,demo,clients]"
	touch $@

## lab: install, then open JupyterLab on the course with the bundled data/
lab: $(VENV)/.lab
	$(BIN)/jupyter lab $(ROOT) --notebook-dir=notebooks

## demo: the breaking-a-stream notebook as a Voila app, for live use (DEMO_PORT=8866)
# (no --allow-root: Voila does not take it, and only its kernels run code)
demo: $(VENV)/.lab
	$(BIN)/voila --port=$(DEMO_PORT) notebooks/03-breaking-a-stream.ipynb

## test: install, then lint and run every test, notebooks and browser included
test: $(VENV)/.test browser node
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 --nbmake tests notebooks

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

## clients: run the torture harness on every real client, rewrite docs/clients.md
## (CLIENTS_SUITE=full: every case, about 2.5 times as many; tens of minutes on 2 cores)
CLIENTS_SUITE ?= quick
clients: $(VENV)/.test node
	$(BIN)/python scripts/torture_clients.py --suite $(CLIENTS_SUITE)

## data: regenerate the bundled fixtures in data/ (byte-identical every time)
data: $(VENV)/.lab
	$(BIN)/python scripts/make_data.py

## bench: load throughput and memory against peers, as ratios in one run; check_handler's pace
bench: $(VENV)/.test
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_check.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
