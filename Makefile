# Every target that needs Python creates .venv and installs the project into it when it is
# missing or stale: the stamp file is named after a checksum of pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cksum < pyproject.toml | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
BENCH_STAMP := $(VENV)/.stamp-bench-$(HASH)
PYTEST_ARGS ?=

.PHONY: help install test lint format bench-engine bench-workflow demo-data clean

help:
	@echo "make test          run the test suite (creates .venv on first use)"
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

$(BENCH_STAMP): $(DEV_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mysql,postgres,bench]'
	rm -f $(VENV)/.stamp-bench-*
	touch $@

install: $(DEV_STAMP)

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

demo-data: $(DEV_STAMP)
	$(BIN)/python -m webapp.demo.generate --out webapp/demo/data --seed 7

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
