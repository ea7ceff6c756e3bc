"""MRG31k3p on the GPU: the uniform draw of ``MRG_RandomStreams`` as one kernel.

The point of MRG streams is that a CPU and a GPU give the same numbers, so
the kernel computes exactly the recurrence of ``tensor/random/mrg31k3p.py``:
work item ``s`` loads stream ``s``'s six values, steps once per element it
serves (elements ``s, s + n_streams, ...``, the CPU's C order), writes each
``z`` as a float, and stores the advanced state. The step is the int32 C of
that module written in unsigned 32-bit arithmetic: signed overflow is
undefined in C, while unsigned wrap-around gives the same bits, and the
module's test ``y < 0 || y >= M`` becomes ``y >= M`` (a negative int32 is an
unsigned value of at least 2**31 > M). The float conversions round exactly
as numpy's (int to float to nearest, one correctly rounded product), so
float32 and float64 draws are bit-identical to the CPU's; float16 has no
kernel type and stays on the CPU.

The state stays on the device: the lowering takes the GPU shared variable
of the draw as it is, and the advanced state the kernel writes becomes the
variable's new value through its update, with no transfer either way.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.backends.kernels import render
from arignote.backends.gpu.array import GpuArray
from arignote.backends.gpu.context import GpuContext
from arignote.backends.gpu.ops import GpuOp, _kernels
from arignote.backends.gpu.placement import register_lowering
from arignote.backends.gpu.type import context_of
from arignote.graph.basic import Apply, Variable
from arignote.tensor.random import mrg31k3p
from arignote.tensor.random.mrg_ops import MRGUniform, check_draw
from arignote.tensor.shape import static_entry
from arignote.tensor.variable import as_tensor_variable

# mrg31k3p's step in uint32 (see the module doc); x1* and x2* are the two components.
_STEP = (
    "y1 = ((x12 & 0x1ffu) << 22) + (x12 >> 9) + ((x13 & 0xffffffu) << 7) + (x13 >> 24);",
    "y1 -= (y1 >= M1) ? M1 : 0u;  y1 += x13;  y1 -= (y1 >= M1) ? M1 : 0u;",
    "x13 = x12;  x12 = x11;  x11 = y1;",
    "y1 = ((x21 & 0xffffu) << 15) + 21069u * (x21 >> 16);",
    "y1 -= (y1 >= M2) ? M2 : 0u;",
    "y2 = ((x23 & 0xffffu) << 15) + 21069u * (x23 >> 16);",
    "y2 -= (y2 >= M2) ? M2 : 0u;  y2 += x23;  y2 -= (y2 >= M2) ? M2 : 0u;",
    "y2 += y1;  y2 -= (y2 >= M2) ? M2 : 0u;",
    "x23 = x22;  x22 = x21;  x21 = y2;",
    "z = (x11 <= x21) ? x11 - x21 + M1 : x11 - x21;",
)

_NAMES = ("x11", "x12", "x13", "x21", "x22", "x23")


def _norm(dtype: str) -> str:
    """The constant ``z`` is multiplied by, as a literal that parses to exactly mrg31k3p's."""
    if dtype == "float32":
        return f"{mrg31k3p.FLOAT32_NORM:.9e}f"  # 9 digits round-trip any float32
    return repr(mrg31k3p.FLOAT64_NORM)  # 2**-31, exact


def uniform_kernel(d: render.Dialect, dtype: str) -> render.Kernel:
    """``mrg_uniform``: advance every stream of ``state`` into ``new_state``
    (both contiguous (n_streams, 6) int32; they may be one buffer) and write
    ``n`` floats of ``dtype`` into ``out``."""
    if dtype not in ("float32", "float64"):
        raise render.UnsupportedDtype(f"the MRG kernel draws float32 or float64, not {dtype}")
    t, u, i32 = d.ctype(dtype), d.ctype("uint32"), d.ctype("int32")
    params = [f"{d.global_}{i32} *new_state", "const index_t new_off",
              f"{d.global_}const {i32} *state", "const index_t state_off",
              f"{d.global_}{t} *out", "const index_t out_off",
              "const index_t n_streams", "const index_t n"]
    load = [f"{u} {name} = ({u})state[state_off + 6 * s + {k}];" for k, name in enumerate(_NAMES)]
    store = [f"new_state[new_off + 6 * s + {k}] = ({i32}){name};" for k, name in enumerate(_NAMES)]
    draw = ["for (index_t i = s; i < n; i += n_streams) {",
            *(f"  {line}" for line in _STEP),
            f"  out[out_off + i] = (({t})({i32})z) * {_norm(dtype)};", "}"]
    body = load + [f"{u} y1, y2, z;"] + draw + store
    source = (f"{d.prelude((dtype,))}"
              f"#define M1 {mrg31k3p.M1}u\n#define M2 {mrg31k3p.M2}u\n"
              f"{d.kernel} mrg_uniform({', '.join(params)}) {{\n"
              f"  for (index_t s = {d.global_id}; s < n_streams; s += {d.global_size}) {{\n"
              + "".join(f"    {line}\n" for line in body) + "  }\n}\n")
    return render.Kernel("mrg_uniform", source, ("int32", "uint32", dtype))


class GpuMRGUniform(GpuOp):
    """``(state, size) -> (new_state, sample)`` on the device, the numbers of ``MRGUniform``."""

    __props__ = ("dtype", "ndim", "context_name")

    def __init__(self, dtype: str, ndim: int, context_name: str | None = None):
        self.dtype = dtype
        self.ndim = ndim
        self.context_name = context_name

    def __str__(self) -> str:
        return f"GpuMRGUniform{{{self.dtype}, ndim={self.ndim}}}"

    def make_node(self, rstate: Variable, size: Any) -> Apply:
        size = as_tensor_variable(size)
        if getattr(rstate.type, "dtype", None) != "int32" or rstate.type.ndim != 2:
            raise TypeError(f"{self}: the state must be an int32 matrix on the GPU, got {rstate.type}")
        bcast = [static_entry(size, i) == 1 for i in range(self.ndim)]
        return Apply(self, [rstate, size], [rstate.type(), self.out_type(self.dtype, bcast)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        rstate, size = inputs
        shape = check_draw(self, node, rstate.shape, size)
        ctx = context_of(node, 1)
        if not rstate.is_c_contiguous:
            rstate = rstate.copy()
        new_state = output_storage[0][0]
        if (not isinstance(new_state, GpuArray) or new_state.shape != rstate.shape
                or new_state.buffer is rstate.buffer):  # never the input's own buffer
            new_state = GpuArray(ctx, rstate.shape, rstate.dtype)
        out = self.output(output_storage[1], ctx, shape, np.dtype(self.dtype))
        memo = _kernels(node)
        if "mrg" not in memo:
            memo["mrg"] = ctx.kernel(uniform_kernel(ctx.dialect, self.dtype))
        n_streams = rstate.shape[0]
        groups = min(-(-n_streams // render.LOCAL_SIZE), 4096)
        ctx.launch(memo["mrg"], (groups * render.LOCAL_SIZE,), (render.LOCAL_SIZE,),
                   [new_state.buffer, np.int64(new_state.offset), rstate.buffer,
                    np.int64(rstate.offset), out.buffer, np.int64(out.offset),
                    np.int64(n_streams), np.int64(out.size)])
        output_storage[0][0] = new_state
        output_storage[1][0] = out


@register_lowering(MRGUniform)
def _mrg_uniform(node: Apply, ctx: GpuContext, on_gpu: Callable) -> list:
    rstate, size = node.inputs  # the dtypes were checked by the pass (float16: no kernel type)
    return GpuMRGUniform(node.op.dtype, node.op.ndim).make_node(on_gpu(rstate), size).outputs
