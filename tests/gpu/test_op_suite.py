"""The core op test modules, run again on every GPU backend.

The cpu leg of the suite is tests/tensor itself; here every test function of
those modules is collected a second time, parametrized over ``opencl`` (PoCL
in CI) and ``cuda`` (skipped cleanly without a device), and called as it is
under ``config.device``. So the same graphs are compiled with the placement
pass active and checked against the same numpy references.

Each call also checks the placement pass's own claims: every node of every
graph it placed either runs as a ``Gpu*`` op or a transfer, or carries the
reason it stayed on the CPU, and no node whose op has a GPU lowering stays on
the CPU for want of a kernel. Hypothesis tests draw fewer examples on a GPU
(each new kernel costs a compile; PoCL caches them on disk across runs).

Every kernel the suite renders on OpenCL is rendered again for CUDA when the
module ends and compiled as one module (the form the CUDA runtime builds) with
nvcc and with NVRTC, each where installed: a failure there is an error in the
module's teardown.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
import shutil
import subprocess
from typing import Any
from collections.abc import Callable

import pytest
from hypothesis import settings

from arignote.backends import kernels as kernels_package
from arignote.backends.gpu import placement
from arignote.backends.gpu.ops import GpuOp
from arignote.backends.kernels import program, render
from tests.gpu.conftest import use
from tests.tensor import (test_alloc, test_blas, test_join, test_nnet, test_reduction, test_shape,
                          test_subtensor)
from tests.tensor.nnet import (test_abstract_conv, test_activations, test_bilinear, test_bn,
                               test_corr, test_neighbours, test_unshared_conv)
from tests.tensor.signal import test_pool

MODULES = [test_shape, test_reduction, test_blas, test_join, test_alloc, test_subtensor, test_nnet,
           test_abstract_conv, test_corr, test_unshared_conv, test_bilinear, test_pool, test_bn,
           test_neighbours, test_activations]
GPU_EXAMPLES = 6

# Tests about the CPU implementation itself rather than an op's values (which
# Python object perform returns, or the numpy view it hands out), and the
# finite-difference sweeps of the nnet modules: hundreds of calls per case, each
# a launch and a transfer on a device; tests/gpu/test_nnet_gpu.py runs
# verify_grad once per gradient op there instead.
_SWEEP = "finite differences per case are too slow on a device: see tests/gpu/test_nnet_gpu.py"
CPU_ONLY: dict[str, str] = {name: _SWEEP for name in (
    "test_abstract_conv__verify_grad_through_conv", "test_abstract_conv__verify_grad_of_the_gradient_ops",
    "test_abstract_conv__second_derivative_and_rop", "test_corr__verify_grad_through_the_correlation",
    "test_unshared_conv__verify_grad_wrt_inputs_and_weights", "test_bilinear__verify_grad_wrt_the_input",
    "test_pool__verify_grad_of_pooling",
    "test_pool__verify_grad_of_the_average_gradient", "test_pool__gradient_of_the_max_pool_gradient",
    "test_bn__verify_grad_of_every_output", "test_neighbours__verify_grad_of_images2neibs",
    "test_neighbours__verify_grad_of_the_gradient", "test_activations__verify_grad_of_activations")}
CPU_ONLY["test_abstract_conv__two_threads_convolve_at_once"] = "about the CPU's per-thread scratch buffers"


@pytest.fixture(params=["opencl", "cuda"])
def gpu_device(request):
    with use({"opencl": "opencl", "cuda": "cuda0"}[request.param]):
        yield request.param


def _renderers() -> list[tuple[Any, str]]:
    """(module, name) of every public kernel renderer (first parameter: the dialect)."""
    found = []
    for info in pkgutil.iter_modules(kernels_package.__path__):
        if info.name.startswith("render"):
            module = importlib.import_module(f"{kernels_package.__name__}.{info.name}")
            for name, fn in vars(module).items():
                if (inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")
                        and list(inspect.signature(fn).parameters)[:1] == ["d"]):
                    found.append((module, name))
    return found


@pytest.fixture(scope="module", autouse=True)
def every_rendered_kernel_compiles_for_cuda(tmp_path_factory):
    calls: list[tuple[Callable, tuple, dict]] = []
    patches = []
    for module, name in _renderers():
        fn = getattr(module, name)

        def recording(d, *args, _fn=fn, **kwargs):
            kernel = _fn(d, *args, **kwargs)
            if d is render.OPENCL and isinstance(kernel, render.Kernel):
                calls.append((_fn, args, kwargs))
            return kernel

        patches.append((module, name, fn))
        setattr(module, name, recording)
    try:
        yield
    finally:
        for module, name, fn in patches:
            setattr(module, name, fn)
    sources = {}
    for fn, args, kwargs in calls:
        k = fn(render.CUDA, *args, **kwargs)
        sources[k.name, k.source] = k
    if not sources:
        return
    unit = program.join(render.CUDA, list(sources.values()))
    if shutil.which("nvcc"):
        path = tmp_path_factory.mktemp("cuda") / "suite.cu"
        path.write_text(unit)
        done = subprocess.run(["nvcc", "--ptx", "-o", str(path.with_suffix(".ptx")), str(path)],
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{len(sources)} CUDA kernels of the suite: {done.stderr[-3000:]}"
    with contextlib.suppress(ImportError):
        import cupy
        try:
            cupy.cuda.nvrtc.getVersion()
        except Exception:  # no NVRTC library: CuPy raises its own error types
            return
        cupy.cuda.compiler.compile_using_nvrtc(unit, options=("-arch=compute_70",))


@contextlib.contextmanager
def placed_graphs():
    """Collects every FunctionGraph the placement pass runs on."""
    seen: list = []
    apply = placement.Placement.apply

    def recording(self, fgraph):
        seen.append(fgraph)
        return apply(self, fgraph)

    placement.Placement.apply = recording
    try:
        yield seen
    finally:
        placement.Placement.apply = apply


def check_placement(fgraph) -> None:
    for node in fgraph.toposort():
        if isinstance(node.op, (GpuOp, *placement.TRANSFERS)):
            continue
        why = placement.reason_for(fgraph, node)
        assert why is not None, f"{node} stayed on the CPU and placement gave no reason"
        assert not (why.startswith("no GPU kernel") and type(node.op) in placement._LOWERINGS), (
            f"{node}: {why}, yet {type(node.op).__name__} has a GPU lowering")


@contextlib.contextmanager
def fewer_examples(fn: Callable):
    """Hypothesis reads the settings it was decorated with; lower max_examples for one call."""
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    if current is None:
        yield
        return
    fn._hypothesis_internal_use_settings = settings(current, max_examples=GPU_EXAMPLES)
    try:
        yield
    finally:
        fn._hypothesis_internal_use_settings = current


def on_gpu(fn: Callable, name: str) -> Callable:
    def test(gpu_device: str, **kwargs: Any) -> None:
        if name in CPU_ONLY:
            pytest.skip(CPU_ONLY[name])
        with placed_graphs() as graphs, fewer_examples(fn):
            fn(**kwargs)
        for fgraph in graphs:
            check_placement(fgraph)

    parameters = [inspect.Parameter("gpu_device", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    test.__signature__ = inspect.Signature(parameters + list(inspect.signature(fn).parameters.values()))
    test.__name__ = test.__qualname__ = name
    test.__doc__ = fn.__doc__
    test.pytestmark = list(getattr(fn, "pytestmark", []))
    return test


for _module in MODULES:
    _short = _module.__name__.rsplit(".", 1)[-1][len("test_"):]
    for _name, _fn in vars(_module).items():
        if _name.startswith("test_") and callable(_fn) and getattr(_fn, "__module__", None) == _module.__name__:
            _full = f"test_{_short}__{_name[len('test_'):]}"
            globals()[_full] = on_gpu(_fn, _full)
