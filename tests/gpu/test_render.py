"""The kernel renderer: the same kernels in both dialects; the CUDA sources
compile with nvcc where it is installed (no NVIDIA GPU needed for that)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from arignote.backends.kernels import program, render, render_check, render_conv, render_index
from arignote.scalar.composite import Composite
from arignote.scalar.ops import TABLE, Cast


def kernels(d: render.Dialect) -> list[render.Kernel]:
    chain = Composite(2, ["float32", "int16"], [
        (TABLE["exp"], (0,)), (TABLE["mul"], (2, 1)), (TABLE["sigmoid"], (3,)),
        (TABLE["maximum"], (4, 2)), (Cast("int8"), (5,)), (TABLE["int_div"], (6, 1))], 7)
    found = [render.elemwise(d, chain, ["float32", "int16"], "int16", 3, contiguous)
             for contiguous in (True, False)]
    for name in TABLE:
        op = TABLE[name]
        for dtype in ("float64", "int32", "bool"):
            dtypes = ["bool"] + [dtype] * 2 if name == "switch" else [dtype] * op.nin
            try:
                out = op.output_dtype(*dtypes)
                found.append(render.elemwise(d, op, dtypes, out, 2, False))
            except TypeError:  # refused dtypes, or no kernel expression for them
                pass
    for op in ("add", "mul", "maximum", "minimum", "and_", "or_"):
        for dtype in ("float32", "int64", "uint8"):
            for per_thread in (False, True):
                found.append(render.reduce(d, op, dtype, dtype, dtype, 2, 1, per_thread))
    found += [render.reduce(d, "add", "float32", "float64", "float32", 0, 3, per_thread, True)
              for per_thread in (False, True)]
    found.append(render.elemwise(d, TABLE["mul"], ["float32", "float64"], "float64", 2, True, by_value=[1]))
    found += [render.softmax(d, "float32", "float32", 1, log) for log in (False, True)]
    found += [render.gemm(d, dtype, n_batch) for dtype in ("float32", "float64") for n_batch in (0, 2)]
    for dtype in ("float32", "float64", "int64", "uint8", "bool"):
        found += [render_index.argreduce(d, dtype, 1, 2, largest) for largest in (True, False)]
        found += [render_index.take(d, dtype, 3)]
        found += [render_index.inc_rows(d, dtype, dtype, 2, set_) for set_ in (True, False)]
    for dtype in ("float32", "float64"):
        for nd in (2, 3):
            found += [render_conv.im2col(d, dtype, nd), render_conv.col2im(d, dtype, nd),
                      render_conv.pool_max_grad_grad(d, dtype, nd)]
            for mode in ("max", "sum", "average_inc_pad", "average_exc_pad"):
                found += [render_conv.pool(d, dtype, nd, mode), render_conv.pool_grad(d, dtype, nd, mode)]
    found += [render_check.finite_check(d, dtype) for dtype in ("float32", "float64", "int64", "uint64")]
    for dtype in render_index.ATOMIC_DTYPES:
        for checked in (True, False):
            found.append(render_index.scatter_add(d, dtype, dtype, ["int64", "int32"], 2, 3, checked))
            found.append(render_index.gather(d, dtype, ["int64", "uint8"], 1, 2, checked))
    found += [render_index.arange(d, dtype) for dtype in ("int32", "int64")]
    return found


def test_fp64_pragma_only_when_float64_is_used():
    assert "cl_khr_fp64" not in render.gemm(render.OPENCL, "float32").source
    assert "cl_khr_fp64" in render.gemm(render.OPENCL, "float64").source


def test_both_dialects_render_every_kernel():
    assert len(kernels(render.OPENCL)) == len(kernels(render.CUDA)) > 150


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_kernels_joined_as_one_module_compile_with_nvcc(tmp_path):
    """The form the CUDA runtime builds: every kernel in one module, under its own entry name."""
    path = tmp_path / "module.cu"
    path.write_text(program.join(render.CUDA, kernels(render.CUDA)))
    result = subprocess.run(["nvcc", "--ptx", "-o", str(tmp_path / "module.ptx"), str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def _nvrtc():
    """CuPy's NVRTC program class, or a skip saying why there is none."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install \"arignote[cuda]\")")
    try:
        cupy.cuda.nvrtc.getVersion()
    except Exception as err:  # CuPy raises its own error types when NVRTC is missing
        pytest.skip(f"NVRTC cannot be loaded: {err}")
    return cupy.cuda.compiler


def test_every_cuda_kernel_compiles_with_nvrtc():
    compiler = _nvrtc()
    source = program.join(render.CUDA, kernels(render.CUDA))
    compiler.compile_using_nvrtc(source, options=("-arch=compute_70",))


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_dialect_renders_the_table_and_compiles(tmp_path):
    """The CPU's kernels from the same templates: every scalar op in both elementwise forms,
    the loop-nest reductions and softmax, one translation unit checked by the C compiler."""
    found = []
    for name, op in TABLE.items():
        for dtype in ("float64", "float32", "int32", "uint8", "bool"):
            dtypes = ["bool"] + [dtype] * 2 if name == "switch" else [dtype] * op.nin
            try:
                out = op.output_dtype(*dtypes)
                for contiguous in (True, False):
                    found.append(render.elemwise(render.C, op, dtypes, out, 0, contiguous,
                                                 name=f"k{len(found)}"))
            except TypeError:
                pass
    for op in ("add", "mul", "maximum", "minimum", "and_", "or_"):
        for axes in ((1,), (0,), (0, 1)):
            found.append(render.reduce_nest(render.C, op, TABLE["exp"] if op == "add" else None,
                                            ["float32"], "float32", "float32", "float32", 2, axes,
                                            f"k{len(found)}"))
    # A fused map (its steps are named s0, s1, ...), every reduced layout, 0-d, integer max.
    squared = Composite(2, ["float64", "float64"], [(TABLE["sub"], (0, 1)), (TABLE["sqr"], (2,))], 3)
    for ndim, axes in ((2, (0,)), (2, (1,)), (3, (0, 2)), (1, (0,)), (0, ())):
        for op in ("add", "maximum"):
            found.append(render.reduce_nest(render.C, op, squared, ["float64"] * 2, "float64",
                                            "float64", "float64", ndim, axes, f"k{len(found)}"))
    found.append(render.reduce_nest(render.C, "maximum", None, ["int16"], "int16", "int16", "int16",
                                    2, (1,), f"k{len(found)}"))
    for ndim, axis in ((3, 1), (1, 0)):  # one slice (1-d): no loop around it
        found += [render.softmax_nest(render.C, "float32", "float64", ndim, axis, log, f"k{len(found) + log}")
                  for log in (False, True)]
    assert len(found) > 300
    path = tmp_path / "kernels.c"
    path.write_text(render.C_PREAMBLE + "#include <tgmath.h>\n#define MAXD 64\n#define PARALLEL_MIN 1\n"
                    + "".join(k.source for k in found))
    result = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror=implicit-function-declaration",
                             "-fopenmp", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
