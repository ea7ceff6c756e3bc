"""Kernels of the index-driven ops, written against the same :class:`Dialect`
tables as ``render.py``: positions of extrema (argmax/argmin), rows taken by
an index vector, and rows set or incremented at an index vector.

Index vectors come from the host, so the ops check their bounds there (with
the CPU's error messages) and hand the kernels int64 rows already in range.
"""
from __future__ import annotations

from arignote.backends.kernels.render import LOCAL_SIZE, Dialect, Kernel, _ptr


def _group_lines(d: Dialect, n_kept: int) -> list[str]:
    lines = [f"index_t g = {d.group_id};", "index_t base = x_off;", "index_t dst = out_off;"]
    for i in reversed(range(n_kept)):
        lines.append(f"{{ const index_t c = g % k{i}; g /= k{i}; base += c * ks{i}; dst += c * os{i}; }}")
    return lines


def argreduce(d: Dialect, in_dtype: str, n_kept: int, n_reduced: int, largest: bool) -> Kernel:
    """int64 position of the max (``largest``) or min over the reduced axes, counted
    in C order over them. As numpy: the first of equal extrema wins, and a NaN
    beats every number (the first NaN). One work-group per output element, a
    tree of (value, position) pairs in local memory, as ``render.reduce``."""
    t = d.ctype(in_dtype)
    cmp = ">" if largest else "<"
    if in_dtype in d.inf:
        better = ("(i >= 0 && (ib < 0 || (isnan(v) ? (!isnan(b) || i < ib) : "
                  f"(!isnan(b) && (v {cmp} b || (v == b && i < ib))))))")
    else:
        better = f"(i >= 0 && (ib < 0 || v {cmp} b || (v == b && i < ib)))"
    params = [_ptr(d, "int64", "out"), "const index_t out_off", _ptr(d, in_dtype, "x", True),
              "const index_t x_off", "const index_t n_reduced"]
    params += [f"const index_t k{i}, const index_t ks{i}, const index_t os{i}" for i in range(n_kept)]
    params += [f"const index_t r{i}, const index_t rs{i}" for i in range(n_reduced)]
    loop = ["index_t rem = t;", "index_t j = base;"]
    for i in reversed(range(n_reduced)):
        loop.append(f"{{ const index_t c = rem % r{i}; rem /= r{i}; j += c * rs{i}; }}")
    loop.append(f"{{ const {t} v = x[j]; const index_t i = t; const {t} b = best; "
                f"const index_t ib = at; if {better} {{ best = v; at = i; }} }}")
    source = (
        f"{d.prelude((in_dtype,))}{d.kernel} argreduce({', '.join(params)}) {{\n"
        f"  {d.local}{t} vals[{LOCAL_SIZE}];\n  {d.local}index_t idxs[{LOCAL_SIZE}];\n"
        f"  const index_t lid = {d.local_id};\n"
        + "".join(f"  {line}\n" for line in _group_lines(d, n_kept))
        + f"  {t} best = 0;\n  index_t at = -1;\n"
        f"  for (index_t t = lid; t < n_reduced; t += {LOCAL_SIZE}) {{\n"
        + "".join(f"    {line}\n" for line in loop)
        + f"  }}\n  vals[lid] = best;\n  idxs[lid] = at;\n  {d.barrier}\n"
        f"  for (index_t s = {LOCAL_SIZE // 2}; s > 0; s >>= 1) {{\n"
        f"    if (lid < s) {{ const {t} v = vals[lid + s]; const index_t i = idxs[lid + s]; "
        f"const {t} b = vals[lid]; const index_t ib = idxs[lid]; "
        f"if {better} {{ vals[lid] = v; idxs[lid] = i; }} }}\n    {d.barrier}\n  }}\n"
        f"  if (lid == 0) out[dst] = idxs[0];\n}}\n")
    return Kernel("argreduce", source, (in_dtype, "int64"))


def _rest_offsets(ndim: int, arrays: list[str]) -> list[str]:
    """Statements adding to each ``<array>o`` the offset of ``rem`` over dims 1..ndim-1."""
    lines = []
    for dim in reversed(range(1, ndim)):
        lines.append(f"{{ const index_t c = rem % n{dim}; rem /= n{dim};"
                     + "".join(f" {a}o += c * {a}s{dim};" for a in arrays) + " }")
    return lines


def take(d: Dialect, dtype: str, ndim: int) -> Kernel:
    """``out = x[rows]`` on the first axis; ``out`` is contiguous, ``x`` any view."""
    params = [_ptr(d, dtype, "out"), "const index_t out_off", _ptr(d, dtype, "x", True),
              "const index_t x_off", "const index_t xs0", _ptr(d, "int64", "rows", True),
              "const index_t size", "const index_t inner"]
    params += [f"const index_t n{i}, const index_t xs{i}" for i in range(1, ndim)]
    body = ["index_t rem = i % inner;", "index_t xo = x_off + rows[i / inner] * xs0;"]
    body += _rest_offsets(ndim, ["x"]) + ["out[out_off + i] = x[xo];"]
    source = (f"{d.prelude((dtype,))}{d.kernel} take({', '.join(params)}) {{\n"
              f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
              + "".join(f"    {line}\n" for line in body) + "  }\n}\n")
    return Kernel("take", source, (dtype,))


def inc_rows(d: Dialect, dtype: str, y_dtype: str, ndim: int, set_: bool) -> Kernel:
    """Rows of ``out`` set to (``set_``) or incremented by rows of ``y`` at an index vector.

    Atomic-free: the host sorts the index vector (stably), so ``rows`` are the
    distinct target rows and ``order[starts[u]:starts[u + 1]]`` the positions
    of ``y`` that go to row ``rows[u]``, in their original order. One thread per
    (distinct row, element of the row) walks its segment: repeated indices add
    up in order, as ``numpy.add.at`` does, and the last one wins a set.
    ``y`` is read through strides (0 where it broadcasts).
    """
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "out"), "const index_t out_off", "const index_t outs0",
              _ptr(d, y_dtype, "y", True), "const index_t y_off", "const index_t ys0",
              _ptr(d, "int64", "rows", True), _ptr(d, "int64", "order", True),
              _ptr(d, "int64", "starts", True), "const index_t size", "const index_t inner"]
    params += [f"const index_t n{i}, const index_t outs{i}, const index_t ys{i}" for i in range(1, ndim)]
    body = ["const index_t u = i / inner;", "index_t rem = i % inner;",
            "index_t outo = out_off + rows[u] * outs0;", "index_t yo = y_off;"]
    body += _rest_offsets(ndim, ["out", "y"])
    if set_:
        body.append(f"out[outo] = ({t})y[yo + order[starts[u + 1] - 1] * ys0];")
    else:
        add = "(acc || y[yo + order[s] * ys0])" if dtype == "bool" else f"(acc + ({t})y[yo + order[s] * ys0])"
        body += [f"{t} acc = out[outo];",
                 f"for (index_t s = starts[u]; s < starts[u + 1]; ++s) acc = ({t}){add};",
                 "out[outo] = acc;"]
    source = (f"{d.prelude((dtype, y_dtype))}{d.kernel} inc_rows({', '.join(params)}) {{\n"
              f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
              + "".join(f"    {line}\n" for line in body) + "  }\n}\n")
    return Kernel("inc_rows", source, (dtype, y_dtype))
