# Every target that needs Python creates .venv and installs the project into it when it is
# missing or stale: the stamp file is named after a checksum of pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cksum < pyproject.toml | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
BENCH_STAMP := $(VENV)/.stamp-bench-$(HASH)
SERVE_STAMP := $(VENV)/.stamp-serve-$(HASH)
FUZZ_STAMP := $(VENV)/.stamp-fuzz-$(HASH)
PYTEST_ARGS ?=
PORT ?= 8000
HOST ?= 127.0.0.1
WORKERS ?= 2
THREADS ?= 8

.PHONY: help install run serve init-db test lint format fuzz bench-engine bench-workflow \
	bench-api bench-knowledge demo-data clean

help:
	@echo "make run           serve the app on http://$(HOST):$(PORT) (creates .venv on first use)"
	@echo "make serve         the same under gunicorn ($(WORKERS) workers x $(THREADS) threads)"
	@echo "make test          run the test suite (creates .venv on first use)"
	@echo "make fuzz          schemathesis against the app's OpenAPI document"
	@echo "make bench-api     server-side latency of chat runs and of the trace API"
	@echo "make bench-knowledge  upload time per size and shape; searches during big uploads"
	@echo "make lint          ruff + mypy (strict on diagnosis_graph)"
	@echo "make bench-engine  engine vs LangGraph vs a bare loop"
	@echo "make bench-workflow  complete offline diagnoses of every demo scenario"
	@echo "make demo-data     regenerate the bundled demo dataset (seed 7)"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is required")'
	$(PYTHON) -m venv $(VENV)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mysql,postgres]'
	rm -f $(VENV)/.stamp-dev-*
	touch $@

$(SERVE_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mysql,postgres,serve]'
	rm -f $(VENV)/.stamp-serve-*
	touch $@

$(FUZZ_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mysql,postgres,fuzz]'
	rm -f $(VENV)/.stamp-fuzz-*
	touch $@

$(BENCH_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mysql,postgres,bench]'
	rm -f $(VENV)/.stamp-bench-*
	touch $@

install: $(DEV_STAMP)

run: $(DEV_STAMP)
	$(BIN)/flask --app webapp run --host $(HOST) --port $(PORT)

serve: $(SERVE_STAMP)
	$(BIN)/gunicorn 'webapp:create_app()' --bind $(HOST):$(PORT) --workers $(WORKERS) \
		--threads $(THREADS) --timeout 300 --access-logfile -

init-db: $(DEV_STAMP)
	$(BIN)/flask --app webapp init-db

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict diagnosis_graph
	$(BIN)/mypy webapp tests bench

format: $(DEV_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench-engine: $(BENCH_STAMP)
	$(BIN)/python bench/engine_vs_langgraph.py

bench-workflow: $(DEV_STAMP)
	$(BIN)/python bench/workflow.py

fuzz: $(FUZZ_STAMP)
	$(BIN)/python bench/fuzz_api.py

bench-api: $(DEV_STAMP)
	$(BIN)/python bench/api.py

bench-knowledge: $(DEV_STAMP)
	$(BIN)/python bench/knowledge_upload.py

demo-data: $(DEV_STAMP)
	$(BIN)/python -m webapp.demo.generate --out webapp/demo/data --seed 7

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
