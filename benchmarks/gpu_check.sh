#!/usr/bin/env bash
# The first run on an NVIDIA machine, in one go (under 4 minutes on one GPU):
# installs the cuda extra (CuPy with NVRTC) in its own venv, shows `arignote info`,
# runs the CUDA tests, the seed script on cuda0, `arignote check`, and the GPU
# benchmarks (quick) on cuda0, and writes everything into one report file.
#
# Usage: bash benchmarks/gpu_check.sh [report-file]   (default: gpu_check_report.txt)
# Needs: an NVIDIA GPU with its driver, Python 3.10+, network access to PyPI.
set -u
cd "$(dirname "$0")/.."
REPORT="${1:-gpu_check_report.txt}"
VENV="${GPU_CHECK_VENV:-.venv-gpu-check}"
: > "$REPORT"
section() { printf '\n===== %s (%s) =====\n' "$1" "$(date -u +%H:%M:%S)" >> "$REPORT"; }
run() {  # run "title" timeout-seconds command...: output and exit status into the report
    local title="$1" limit="$2"; shift 2
    section "$title"
    timeout "$limit" "$@" >> "$REPORT" 2>&1
    echo "exit status: $?" >> "$REPORT"
}
section "machine"
{ uname -a; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true; } >> "$REPORT"
# Time limits per step add up to 4 minutes (each step stops at its limit, and the
# report says so with exit status 124).
run "install" 90 bash -c "python3 -m venv '$VENV' && '$VENV/bin/pip' install -q -e '.[test,cuda]'"
PY="$VENV/bin/python"
run "arignote info" 10 "$VENV/bin/arignote" info
run "CUDA tests" 50 "$PY" -m pytest -q -rs -k "cuda or nvrtc or nvcc or dlpack" tests/gpu \
    --ignore=tests/gpu/test_op_suite.py
run "the op suite on cuda (as far as its time goes)" 30 "$PY" -m pytest -q -x -k cuda tests/gpu/test_op_suite.py
run "the seed script on cuda0" 10 env ARIGNOTE_FLAGS="device=cuda0,floatX=float32,force_device=True" \
    "$PY" examples/seed_gpu_test.py
run "arignote check (cuda0 among the devices)" 15 "$VENV/bin/arignote" check --iters 100
run "GPU benchmarks on cuda0 (quick)" 35 "$PY" benchmarks/gpu.py --device cuda0 --quick
section "done"
echo "report written to $REPORT"
