# Two commands: `make check` (install and run the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: check test venv bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test]"

check: venv
	$(BIN)/arignote info
	$(BIN)/arignote check

test: venv
	$(BIN)/python -m pytest

bench: venv
	$(BIN)/python benchmarks/call_overhead.py
	$(BIN)/python benchmarks/seed_loop.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .hypothesis
