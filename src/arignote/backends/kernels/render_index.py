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


def _index_walk(d: Dialect, n_idx: int, b_ndim: int, x_ndim: int, arrays: list[str],
                checked: bool) -> list[str]:
    """Statements for flat index ``i`` of ``B + x.shape[n_idx:]`` (``B``: the index arrays'
    broadcast shape ``b0..``): each index array's element (strides ``ist{m}_{dim}``), the
    offset ``<a>o`` into each of ``arrays`` (whose strides over the rest are ``<a>s{dim}``),
    the x offset ``xo`` chosen by the indices, and (``checked``) ``bad`` when one is out of
    range; unchecked, the host has proved them all in range."""
    lines = ["index_t p = i / inner;", "index_t rem = i % inner;"] + (["int bad = 0;"] if checked else [])
    lines += [f"index_t io{m} = ioff{m};" for m in range(n_idx)]
    for dim in reversed(range(b_ndim)):
        lines.append(f"{{ const index_t c = p % b{dim}; p /= b{dim};"
                     + "".join(f" io{m} += c * ist{m}_{dim};" for m in range(n_idx)) + " }")
    lines.append("index_t xo = x_off;")
    for m in range(n_idx):
        lines.append(f"{{ index_t v = (index_t)idx{m}[io{m}]; if (v < 0) v += xn{m};")
        if checked:
            lines += [f"  if (v < 0 || v >= xn{m}) {{ bad = 1; status[status_off + {2 * m}] = 1; "
                      f"status[status_off + {2 * m + 1}] = (index_t)idx{m}[io{m}]; }}",
                      f"  else xo += v * xs{m}; }}"]
        else:
            lines.append(f"  xo += v * xs{m}; }}")
    for dim in reversed(range(n_idx, x_ndim)):
        lines.append(f"{{ const index_t c = rem % n{dim}; rem /= n{dim}; xo += c * xs{dim};"
                     + "".join(f" {a}o += c * {a}s{dim};" for a in arrays) + " }")
    return lines


def _index_params(d: Dialect, idx_dtypes: list[str], b_ndim: int, x_ndim: int,
                  checked: bool) -> list[str]:
    params = [_ptr(d, "int64", "status"), "const index_t status_off"] if checked else []
    params += ["const index_t size", "const index_t inner"]
    for m, dtype in enumerate(idx_dtypes):
        params += [_ptr(d, dtype, f"idx{m}", True), f"const index_t ioff{m}"]
        params += [f"const index_t ist{m}_{dim}" for dim in range(b_ndim)]
    params += [f"const index_t b{dim}" for dim in range(b_ndim)]
    params += [f"const index_t xn{m}, const index_t xs{m}" for m in range(len(idx_dtypes))]
    params += [f"const index_t n{dim}, const index_t xs{dim}" for dim in range(len(idx_dtypes), x_ndim)]
    return params


def gather(d: Dialect, dtype: str, idx_dtypes: list[str], b_ndim: int, x_ndim: int,
           checked: bool = True) -> Kernel:
    """``out = x[idx0, idx1, ...]`` for integer index arrays (device arrays, broadcast
    together to ``B``) on the leading axes of ``x``; ``out`` (shape ``B + rest``) is
    contiguous. Negative indices count from the end. ``checked``: an index out of
    range of array ``m`` sets ``status[status_off + 2m]`` and writes itself into the
    next element (read by the host, which raises numpy's IndexError) and leaves that
    element of ``out`` 0; unchecked (the host proved the indices in range), no status."""
    n_idx = len(idx_dtypes)
    params = [_ptr(d, dtype, "out"), "const index_t out_off", _ptr(d, dtype, "x", True),
              "const index_t x_off"] + _index_params(d, idx_dtypes, b_ndim, x_ndim, checked)
    body = _index_walk(d, n_idx, b_ndim, x_ndim, [], checked)
    body.append(f"out[out_off + i] = {'bad ? 0 : ' if checked else ''}x[xo];")
    source = (f"{d.prelude((dtype, 'int64', *idx_dtypes))}{d.kernel} gather({', '.join(params)}) {{\n"
              f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
              + "".join(f"    {line}\n" for line in body) + "  }\n}\n")
    return Kernel("gather", source, (dtype, "int64", *idx_dtypes))


# Atomic additions the scatter kernel needs, by dialect and dtype: a compare-and-swap
# loop where the hardware has no atomic add of that type.
_ATOMIC_OPENCL = {
    "int32": "atomic_add(P, V)", "uint32": "atomic_add(P, V)",
    "int64": "atom_add(P, V)", "uint64": "atom_add(P, V)",
    "float32": ("{ union { uint u; float f; } o, n; do { o.f = *(P); n.f = o.f + (V); } "
                "while (atomic_cmpxchg((volatile __global uint *)(P), o.u, n.u) != o.u); }"),
    "float64": ("{ union { ulong u; double f; } o, n; do { o.f = *(P); n.f = o.f + (V); } "
                "while (atom_cmpxchg((volatile __global ulong *)(P), o.u, n.u) != o.u); }"),
}
_ATOMIC_CUDA = {
    "int32": "atomicAdd(P, V)", "uint32": "atomicAdd(P, V)", "float32": "atomicAdd(P, V)",
    "int64": "atomicAdd((unsigned long long *)(P), (unsigned long long)(V))",
    "uint64": "atomicAdd(P, V)",
    "float64": ("{ unsigned long long *a = (unsigned long long *)(P); unsigned long long o = *a, s; "
                "do { s = o; o = atomicCAS(a, s, __double_as_longlong(__longlong_as_double(s) + (V))); } "
                "while (s != o); }"),
}
ATOMIC_DTYPES = tuple(_ATOMIC_OPENCL)


def scatter_add(d: Dialect, dtype: str, y_dtype: str, idx_dtypes: list[str], b_ndim: int,
                x_ndim: int, checked: bool = True) -> Kernel:
    """``out[idx0, idx1, ...] += y`` (``numpy.add.at``: repeated indices add up) with
    atomic additions, ``out`` holding a copy of ``x`` already; ``y`` is read through
    strides over ``B + rest`` (0 where it broadcasts: ``yb{dim}`` over ``B``,
    ``ys{dim}`` over the rest). Bad indices are reported (``checked``) as :func:`gather`
    does."""
    n_idx = len(idx_dtypes)
    table = _ATOMIC_OPENCL if d.name == "OpenCL C" else _ATOMIC_CUDA
    atomic = table[dtype].replace("P", "(x + xo)").replace("V", f"(({d.ctype(dtype)})y[yo])")
    params = [_ptr(d, dtype, "x"), "const index_t x_off", _ptr(d, y_dtype, "y", True), "const index_t y_off"]
    params += _index_params(d, idx_dtypes, b_ndim, x_ndim, checked)
    params += [f"const index_t yb{dim}" for dim in range(b_ndim)]
    params += [f"const index_t ys{dim}" for dim in range(n_idx, x_ndim)]
    walk = _index_walk(d, n_idx, b_ndim, x_ndim, ["y"], checked)
    # y's offset over B: the same decomposition of the position, with y's strides.
    ypos = ["index_t yo = y_off;", "{ index_t q = i / inner;"]
    for dim in reversed(range(b_ndim)):
        ypos.append(f"  {{ const index_t c = q % b{dim}; q /= b{dim}; yo += c * yb{dim}; }}")
    ypos.append("}")
    body = ypos + walk + [f"if (!bad) {atomic};" if checked else f"{atomic};"]
    pragma = ("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
              if d.name == "OpenCL C" and dtype in ("int64", "uint64", "float64") else "")
    source = (f"{d.prelude((dtype, y_dtype, 'int64', *idx_dtypes))}{pragma}"
              f"{d.kernel} scatter_add({', '.join(params)}) {{\n"
              f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) {{\n"
              + "".join(f"    {line}\n" for line in body) + "  }\n}\n")
    return Kernel("scatter_add", source, (dtype, y_dtype, "int64", *idx_dtypes))


def arange(d: Dialect, dtype: str) -> Kernel:
    """``out[i] = start + i * step`` (numpy.arange's values, computed in ``dtype``)."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "out"), "const index_t out_off", f"const {t} start", f"const {t} step",
              "const index_t size"]
    source = (f"{d.prelude((dtype,))}{d.kernel} arange({', '.join(params)}) {{\n"
              f"  for (index_t i = {d.global_id}; i < size; i += {d.global_size}) "
              f"out[out_off + i] = start + ({t})i * step;\n}}\n")
    return Kernel("arange", source, (dtype,))
