"""Kernels of convolution and pooling, written against the :class:`Dialect` tables of
``render.py`` (OpenCL C and CUDA C from one source).

Convolution is im2col + the device GEMM: ``im2col`` writes the window matrix
``cols[(c, k), (b, o)]`` (zeros where a window reads padding) and ``col2im`` is
its adjoint in gather form: each input element sums the window-matrix entries
that read it, so no two threads write one element and no atomics are needed.
``flip`` (a run-time argument) reverses the kernel offsets, which turns the
correlation into Theano's convolution without flipping the filters.

Pooling kernels take contiguous arrays whose last ``nd`` axes are pooled and
the others flattened (``lead``). Window ``o`` of an axis covers
``[o * st, o * st + ws)`` of the padded axis (length ``n + 2 * pad``); only its
real part ``[pad, pad + n)`` is read. The gradients are gathers too: each
input element visits the windows that contain it.
"""
from __future__ import annotations

from arignote.backends.kernels.render import Dialect, Kernel, _ptr


def _loop(d: Dialect, body: list[str]) -> str:
    return (f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
            + "".join(f"    {line}\n" for line in body) + "  }\n")


def _source(d: Dialect, name: str, dtypes: tuple[str, ...], params: list[str], body: list[str]) -> Kernel:
    return Kernel(name, f"{d.prelude(dtypes)}{d.kernel} {name}({', '.join(params)}) {{\n{_loop(d, body)}}}\n",
                  dtypes)


def _axes(nd: int, *names: str) -> list[str]:
    """``const index_t name0, ...`` parameters, one per spatial axis for each name."""
    return [f"const index_t {n}{a}" for a in range(nd) for n in names]


def _decode(into: list[str], inner: list[str]) -> list[str]:
    """Statements splitting flat index ``i`` (C order) into ``into``: ``into[1:]`` have
    the lengths ``inner``, ``into[0]`` (outermost) takes what is left."""
    lines = ["index_t rem = i;"]
    for dim, var in reversed(list(zip(inner, into[1:]))):
        lines.append(f"const index_t {var} = rem % {dim}; rem /= {dim};")
    return lines + [f"const index_t {into[0]} = rem;"]


def im2col(d: Dialect, dtype: str, nd: int) -> Kernel:
    """``cols`` (C, K0.., B, O0..), contiguous, from the input ``x`` (B, C, S0..) read
    through its strides; padding reads as zero."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "cols"), _ptr(d, dtype, "x", True), "const index_t x_off",
              "const index_t xs_b", "const index_t xs_c", "const index_t size", "const index_t C",
              "const index_t B", "const int flip"]
    params += _axes(nd, "K", "O", "S", "st", "dil", "pad", "xs")
    into = ["c"] + [f"k{a}" for a in range(nd)] + ["b"] + [f"o{a}" for a in range(nd)]
    inner = [f"K{a}" for a in range(nd)] + ["B"] + [f"O{a}" for a in range(nd)]
    body = _decode(into, inner) + ["index_t src = x_off + b * xs_b + c * xs_c;", "int inside = 1;"]
    for a in range(nd):
        body += [f"{{ const index_t p = o{a} * st{a} + (flip ? K{a} - 1 - k{a} : k{a}) * dil{a} - pad{a};",
                 f"  inside = inside && p >= 0 && p < S{a}; src += p * xs{a}; }}"]
    body.append(f"cols[i] = inside ? x[src] : ({t})0;")
    return _source(d, "im2col", (dtype,), params, body)


def col2im(d: Dialect, dtype: str, nd: int) -> Kernel:
    """``dx`` (B, C, S0..), contiguous: each element sums the entries of ``dcols``
    (C, K0.., B, O0..) whose window reads it."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "dx"), _ptr(d, dtype, "dcols", True), "const index_t size",
              "const index_t C", "const index_t B", "const int flip"]
    params += _axes(nd, "K", "O", "S", "st", "dil", "pad")
    body = _decode(["b", "c"] + [f"s{a}" for a in range(nd)], ["C"] + [f"S{a}" for a in range(nd)])
    body += [f"{t} acc = 0;"]
    depth = ""
    for a in range(nd):
        body += [f"{depth}for (index_t k{a} = 0; k{a} < K{a}; ++k{a}) {{",
                 f"{depth}  const index_t q{a} = s{a} + pad{a} - (flip ? K{a} - 1 - k{a} : k{a}) * dil{a};",
                 f"{depth}  if (q{a} < 0 || q{a} % st{a} != 0 || q{a} / st{a} >= O{a}) continue;"]
        depth += "  "
    row = "c"
    for a in range(nd):
        row = f"({row} * K{a} + k{a})"
    column = "b"
    for a in range(nd):
        column = f"({column} * O{a} + q{a} / st{a})"
    count = " * ".join(["B"] + [f"O{a}" for a in range(nd)])
    body.append(f"{depth}acc += dcols[{row} * ({count}) + {column}];")
    body += [f"{'  ' * a}}}" for a in reversed(range(nd))]
    body.append("dx[i] = acc;")
    return _source(d, "col2im", (dtype,), params, body)


# ----------------------------------------------------------------------- pooling
def _pool_params(nd: int) -> list[str]:
    return ["const index_t size"] + _axes(nd, "n", "out", "ws", "st", "pad")


def _window(nd: int, real: bool) -> list[str]:
    """Per axis: the window of output ``o`` in padded coordinates, ``[lo, hi)``; clipped
    to the real part when ``real``."""
    lines = []
    for a in range(nd):
        lines.append(f"const index_t lo{a} = o{a} * st{a}, hi{a} = lo{a} + ws{a} < n{a} + 2 * pad{a} ? "
                     f"lo{a} + ws{a} : n{a} + 2 * pad{a};")
        if real:
            lines.append(f"const index_t rlo{a} = lo{a} > pad{a} ? lo{a} : pad{a}, "
                         f"rhi{a} = hi{a} < n{a} + pad{a} ? hi{a} : n{a} + pad{a};")
    return lines


def _nested(nd: int, bounds: tuple[str, str], body: list[str]) -> list[str]:
    """Loops ``j0..`` over ``[bounds[0]a, bounds[1]a)`` per axis around ``body``; ``j``
    is the real element's offset in the image (row-major over the pooled axes)."""
    lines = []
    for a in range(nd):
        lines.append(f"{'  ' * a}for (index_t j{a} = {bounds[0]}{a}; j{a} < {bounds[1]}{a}; ++j{a}) {{")
    flat = "(j0 - pad0)"
    for a in range(1, nd):
        flat = f"({flat} * n{a} + j{a} - pad{a})"
    lines.append(f"{'  ' * nd}const index_t j = base + {flat};")
    lines += [f"{'  ' * nd}{line}" for line in body]
    lines += [f"{'  ' * a}}}" for a in reversed(range(nd))]
    return lines


def _image_base(nd: int) -> str:
    return "lead * (" + " * ".join(f"n{a}" for a in range(nd)) + ")"


def pool(d: Dialect, dtype: str, nd: int, mode: str) -> Kernel:
    """``out`` (lead, out0..) pooled from ``x`` (lead, n0..) by ``mode``."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "out"), _ptr(d, dtype, "x", True)] + _pool_params(nd)
    body = _decode(["lead"] + [f"o{a}" for a in range(nd)], [f"out{a}" for a in range(nd)])
    body += [f"const index_t base = {_image_base(nd)};"] + _window(nd, True)
    if mode == "max":
        body.append(f"{t} acc = -{d.inf[dtype]};")
        body += _nested(nd, ("rlo", "rhi"), ["acc = x[j] > acc ? x[j] : acc;"])
    else:
        body.append(f"{t} acc = 0;")
        body += _nested(nd, ("rlo", "rhi"), ["acc += x[j];"])
    if mode == "average_inc_pad":
        body.append("acc /= (" + " * ".join(f"(hi{a} - lo{a})" for a in range(nd)) + ");")
    elif mode == "average_exc_pad":
        body.append("acc /= (" + " * ".join(f"(rhi{a} - rlo{a})" for a in range(nd)) + ");")
    body.append("out[i] = acc;")
    return _source(d, f"pool_{mode}", (dtype,), params, body)


def _windows_of_element(nd: int, body: list[str]) -> list[str]:
    """Loops ``o0..`` over the windows containing element ``s0..`` (padded ``q = s + pad``)."""
    lines = []
    for a in range(nd):
        lines += [f"const index_t q{a} = s{a} + pad{a};",
                  f"const index_t first{a} = q{a} - ws{a} + 1 <= 0 ? 0 : (q{a} - ws{a} + st{a}) / st{a};",
                  f"const index_t last{a} = q{a} / st{a} < out{a} - 1 ? q{a} / st{a} : out{a} - 1;"]
    for a in range(nd):
        lines.append(f"{'  ' * a}for (index_t o{a} = first{a}; o{a} <= last{a}; ++o{a}) {{")
    flat = "lead"
    for a in range(nd):
        flat = f"({flat} * out{a} + o{a})"
    lines.append(f"{'  ' * nd}const index_t w = {flat};")
    lines += [f"{'  ' * nd}{line}" for line in body]
    lines += [f"{'  ' * a}}}" for a in reversed(range(nd))]
    return lines


def pool_grad(d: Dialect, dtype: str, nd: int, mode: str) -> Kernel:
    """``gx`` (lead, n0..) from the pooled gradient ``gz`` (lead, out0..): for 'max', the
    windows whose maximum ``maxout`` equals the element; else each window's share."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "gx"), _ptr(d, dtype, "x", True), _ptr(d, dtype, "maxout", True),
              _ptr(d, dtype, "gz", True)] + _pool_params(nd)
    body = _decode(["lead"] + [f"s{a}" for a in range(nd)], [f"n{a}" for a in range(nd)])
    body.append(f"{t} acc = 0;")
    if mode == "max":
        body.append(f"const {t} v = x[i];")
        inner = ["if (maxout[w] == v) acc += gz[w];"]
    elif mode == "sum":
        inner = ["acc += gz[w];"]
    else:
        inner = _window(nd, mode == "average_exc_pad")
        size = " * ".join(f"(rhi{a} - rlo{a})" if mode == "average_exc_pad" else f"(hi{a} - lo{a})"
                          for a in range(nd))
        inner.append(f"acc += gz[w] / ({size});")
    body += _windows_of_element(nd, inner)
    body.append("gx[i] = acc;")
    return _source(d, f"pool_grad_{mode}", (dtype,), params, body)


def pool_max_grad_grad(d: Dialect, dtype: str, nd: int) -> Kernel:
    """``ggz`` (lead, out0..): per window, the sum of ``ggx`` over the elements equal to
    its maximum ``maxout``."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "ggz"), _ptr(d, dtype, "x", True), _ptr(d, dtype, "maxout", True),
              _ptr(d, dtype, "ggx", True)] + _pool_params(nd)
    body = _decode(["lead"] + [f"o{a}" for a in range(nd)], [f"out{a}" for a in range(nd)])
    body += [f"const index_t base = {_image_base(nd)};"] + _window(nd, True)
    body += [f"const {t} m = maxout[i];", f"{t} acc = 0;"]
    body += _nested(nd, ("rlo", "rhi"), ["if (x[j] == m) acc += ggx[j];"])
    body.append("ggz[i] = acc;")
    return _source(d, "pool_max_grad_grad", (dtype,), params, body)
