# The quick start is `make demo` and `make test`; both create .venv when it is missing, with the
# web and mcp extras (so `memdream web` and `memdream serve` work from .venv/bin).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

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

bench: $(STAMP)
	$(BIN)/python bench/remember_latency.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
