# Two commands: `make check` (install and run the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: check test venv bench bench-gpu gpu-check bench-distributed clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

venv: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,opencl,graphviz,distributed]"

check: venv
	$(BIN)/arignote info
	$(BIN)/arignote check

# The second run is the numpy path (no compiler): the modules whose ops have native kernels.
test: venv
	$(BIN)/ruff check .
	$(BIN)/python -m pytest
	ARIGNOTE_FLAGS=cxx= $(BIN)/python -m pytest tests/tensor tests/backends tests/compile tests/rewriting tests/gradient

# The benchmark peers (PyTensor, JAX, numba, PyTorch) and matplotlib go into their
# own environment: they are never dependencies of the library.
BENCH ?= .venv-bench

$(BENCH)/bin/python:
	$(PYTHON) -m venv $(BENCH)
	$(BENCH)/bin/python -m pip install -q --upgrade pip

bench: $(BENCH)/bin/python
	$(BENCH)/bin/python -m pip install -q -e . pytensor jax matplotlib numba torch==2.13.0
	$(BENCH)/bin/python benchmarks/run.py

# The GPU section alone, on the default OpenCL device (PoCL here) or DEVICE=cuda0.
DEVICE ?= opencl0:0
bench-gpu: venv
	$(BIN)/python benchmarks/gpu.py --device $(DEVICE)

# On an NVIDIA machine: the cuda extra, the CUDA tests, the seed script and the GPU
# benchmarks in one run, written to gpu_check_report.txt.
gpu-check:
	bash benchmarks/gpu_check.sh

# Data-parallel training on a LocalCluster: one MLP epoch in one process, on 1 and on 2 workers.
bench-distributed: venv
	$(BIN)/python benchmarks/distributed_mlp.py

clean:
	rm -rf $(VENV) $(BENCH) build src/*.egg-info .pytest_cache .hypothesis
