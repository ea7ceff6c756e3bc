"""The one kernel renderer: C-family source for OpenCL C, CUDA C and C for the CPU.

Every kernel is written once against a :class:`Dialect`, a small table of the
few things the languages spell differently (qualifiers, thread indices,
barriers, type names, the fp64 pragma, how a loop is spread over threads).
Kernels take element offsets and strides as arguments, so views (transposes,
slices, broadcasting) need no copies, and one compiled program serves every
shape of a node. A GPU spreads a loop over threads, one element each; the C
dialect runs it as a loop (OpenMP threads over the outer range, SIMD lanes
inside), and walks strided arrays as a loop nest (rows, then a strided inner
loop) instead of dividing the flat index per element.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

import numpy as np

from arignote.scalar.ops import ScalarOp, c_convert

LOCAL_SIZE = 256  # work-group size of the reduction kernels (a power of two)
TILE = 16  # GEMM tile edge
CPU_GROUP = 64  # work-group size of the forms for a CPU device (GEMM rows, softmax slices)


class UnsupportedDtype(TypeError):
    """A dtype with no kernel type in this dialect (float16, complex)."""


@dataclass(frozen=True)
class Dialect:
    name: str
    kernel: str
    global_: str
    local: str
    barrier: str
    global_id: str
    global_size: str
    local_id: str
    group_id: str
    index: str
    types: dict[str, str] = field(hash=False)
    fp64_pragma: str = ""
    inf: dict[str, str] = field(default_factory=dict, hash=False)
    # The loop over ``{i}`` in [0, {n}) spread over the device: a grid-stride loop on a
    # GPU; on the CPU an OpenMP loop (``loop_nest``: strided arrays as rows, see elemwise).
    loop: str = "for (index_t {i} = {gid}; {i} < {n}; {i} += {gsize})"
    loop_nest: bool = False
    shared_prelude: bool = False  # kernels share one module, which starts with C_PREAMBLE

    def ctype(self, dtype: str) -> str:
        try:
            return self.types[dtype]
        except KeyError:
            raise UnsupportedDtype(f"{dtype} has no kernel type for {self.name}") from None

    def prelude(self, dtypes: Sequence[str]) -> str:
        lines = [self.fp64_pragma] if "float64" in dtypes and self.fp64_pragma else []
        if self.shared_prelude:
            return "\n".join(lines + [""])
        return "\n".join(lines + [f"typedef {self.index} index_t;", ""])

    def for_each(self, i: str, n: str, work: str | None = None, simd: bool = True) -> str:
        """The header of a loop of ``i`` over ``[0, n)``, spread over the device's threads;
        on the CPU, ``work`` elements decide whether threads start, and ``simd=False``
        leaves the lanes to an inner loop."""
        return self.loop.format(i=i, n=n, gid=self.global_id, gsize=self.global_size,
                                work=work or n, simd='_Pragma("omp simd")\n' if simd else "")


OPENCL = Dialect(
    name="OpenCL C", kernel="__kernel void", global_="__global ", local="__local ",
    barrier="barrier(CLK_LOCAL_MEM_FENCE);", global_id="get_global_id(0)",
    global_size="get_global_size(0)", local_id="get_local_id(0)", group_id="get_group_id(0)",
    index="long",
    types={"bool": "uchar", "int8": "char", "uint8": "uchar", "int16": "short",
           "uint16": "ushort", "int32": "int", "uint32": "uint", "int64": "long",
           "uint64": "ulong", "float32": "float", "float64": "double"},
    fp64_pragma="#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
    inf={"float32": "INFINITY", "float64": "((double)INFINITY)"})

CUDA = Dialect(
    name="CUDA C", kernel='extern "C" __global__ void', global_="", local="__shared__ ",
    barrier="__syncthreads();",
    global_id="((long long)blockIdx.x * blockDim.x + threadIdx.x)",
    global_size="((long long)gridDim.x * blockDim.x)", local_id="threadIdx.x",
    group_id="blockIdx.x", index="long long",
    types={"bool": "unsigned char", "int8": "signed char", "uint8": "unsigned char",
           "int16": "short", "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int",
           "int64": "long long", "uint64": "unsigned long long", "float32": "float",
           "float64": "double"},
    inf={"float32": "__int_as_float(0x7f800000)",
         "float64": "__longlong_as_double(0x7ff0000000000000LL)"})


# C for the CPU: a kernel is a static function inlined into the entry point that
# reads numpy's array objects (backends/cpu/native_glue.py); OpenMP threads take
# the outer range when it reaches PARALLEL_MIN elements, SIMD lanes the inner one.
# max/min/isnan/isinf on already-converted operands, as the other dialects have them.
C_PREAMBLE = """#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
typedef int64_t index_t;
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min(a, b) ((a) < (b) ? (a) : (b))
#ifdef _OPENMP
#include <omp.h>
/* The start (end=0) or end (end=1) of this thread's share of [0, n). */
static inline index_t span(const index_t n, const int end) {
  const index_t t = omp_get_num_threads(), k = omp_get_thread_num() + end;
  return n / t * k + (k < n % t ? k : n % t);
}
#else
static inline index_t span(const index_t n, const int end) { return end ? n : 0; }
#endif
"""

C = Dialect(
    name="C", kernel="static inline void", global_="", local="", barrier="", global_id="0",
    global_size="1", local_id="0", group_id="0", index="int64_t",
    types={"bool": "unsigned char", "int8": "signed char", "uint8": "unsigned char",
           "int16": "short", "uint16": "unsigned short", "int32": "int32_t", "uint32": "uint32_t",
           "int64": "int64_t", "uint64": "uint64_t", "float32": "float", "float64": "double"},
    inf={"float32": "INFINITY", "float64": "((double)INFINITY)"},
    # A parallel region whose threads each take a span, then a plain simd loop: gcc 12
    # turns the combined `parallel for simd` into a loop ~10x slower (measured).
    loop="_Pragma(\"omp parallel if({work} >= PARALLEL_MIN)\")\n"
         "for (index_t {i}_lo = span({n}, 0), {i}_hi = span({n}, 1); {i}_lo < {i}_hi; {i}_lo = {i}_hi)\n"
         "{simd}for (index_t {i} = {i}_lo; {i} < {i}_hi; {i}++)",
    loop_nest=True, shared_prelude=True)


@dataclass(frozen=True)
class Kernel:
    """Source and entry point of one kernel; ``dtypes`` tells the runtime whether fp64 is used."""
    name: str
    source: str
    dtypes: tuple[str, ...]


def _ptr(d: Dialect, dtype: str, name: str, const: bool = False) -> str:
    return f"{d.global_}{'const ' if const else ''}{d.ctype(dtype)} *{name}"


def _offsets(ndim: int, arrays: Sequence[int], index: str = "i") -> list[str]:
    """Statements turning flat index ``index`` into each array's element offset."""
    lines = [f"index_t rem = {index};"] + [f"index_t o{k} = off{k};" for k in arrays]
    for dim in reversed(range(ndim)):
        lines.append(f"{{ const index_t c = rem % n{dim}; rem /= n{dim};")
        lines += [f"  o{k} += c * st{k}_{dim};" for k in arrays]
        lines.append("}")
    return lines


def kernel_dtypes(scalar_op: ScalarOp, in_dtypes: Sequence[str], out_dtype: str) -> tuple[str, ...]:
    """Every dtype an elementwise kernel of ``scalar_op`` computes in: its inputs, its output,
    the dtype each step of a fused Composite produces and the ones steps cast to first
    (so a float32 chain with a float64 step gets the fp64 pragma, and placement sees it)."""
    steps = getattr(scalar_op, "steps", None)
    if steps is None:
        found = [*in_dtypes, out_dtype, scalar_op.compute_dtype(out_dtype, *in_dtypes)]
    else:
        found = [*in_dtypes, out_dtype, *scalar_op.step_dtypes, *scalar_op.compute_dtypes]
    return tuple(dict.fromkeys(t for t in found if t is not None))


def elemwise(d: Dialect, scalar_op: ScalarOp, in_dtypes: Sequence[str], out_dtype: str,
             ndim: int, contiguous: bool, scalars: Sequence[int] = (), name: str | None = None,
             by_value: Sequence[int] = ()) -> Kernel:
    """``out = scalar_op(*inputs)``; array 0 is the output, arrays 1.. the inputs.

    The contiguous form indexes every array by the flat index, except the
    inputs listed in ``scalars`` (one element each, read once); the strided one
    walks the output shape ``n0..`` with per-array strides ``stK_D`` (0 where
    an input broadcasts), one element per thread. A loop-nest dialect takes the
    shape at run time instead (``nd``, ``n[]``, ``st[]``: see ``_row_loop``), so
    one compiled kernel serves every rank. The inputs listed in ``by_value`` are
    host values passed as arguments (``sK``): a host scalar costs a GPU kernel no
    buffer and no transfer.
    """
    n_in = len(in_dtypes)
    by_value = frozenset(by_value)
    if by_value and d.loop_nest:
        raise ValueError("the loop-nest dialect takes no arguments by value")
    arrays = [0] + [k + 1 for k in range(n_in) if k not in by_value]  # the arrays, by number
    block = scalar_op.c_block([f"x{k}" for k in range(n_in)], list(in_dtypes), out_dtype, d.ctype)
    if block is None:
        raise UnsupportedDtype(f"{scalar_op} has no kernel expression for {', '.join(in_dtypes)}")
    lines, result = block
    params = [_ptr(d, out_dtype, "a0"), "const index_t off0"]
    for k, dtype in enumerate(in_dtypes, start=1):
        if k - 1 in by_value:
            params.append(f"const {d.ctype(dtype)} s{k}")
        else:
            params += [_ptr(d, dtype, f"a{k}", const=True), f"const index_t off{k}"]
    params.append("const index_t size")
    hoisted = [f"const {d.ctype(in_dtypes[k])} x{k} = a{k + 1}[off{k + 1}];" for k in scalars
               ] if contiguous else []
    loads = [f"const {d.ctype(dt)} x{k} = {f's{k + 1}' if k in by_value else f'a{k + 1}[o{k + 1}]'};"
             for k, dt in enumerate(in_dtypes) if not (contiguous and k in scalars)]
    store = lines + [f"a0[o0] = {result};"]
    if contiguous:
        index_lines = [f"const index_t o{k} = off{k} + i;" for k in arrays if k - 1 not in scalars or not k]
        loops = [(d.for_each("i", "size"), index_lines + loads + store)]
    elif d.loop_nest:
        params += ["const int nd", "const index_t *n", "const index_t *st"]
        loops = [_row_loop(d, n_in + 1, loads + store)]
    else:
        params += [f"const index_t n{dim}" for dim in range(ndim)]
        params += [f"const index_t st{k}_{dim}" for k in arrays for dim in range(ndim)]
        loops = [(d.for_each("i", "size"), _offsets(ndim, arrays) + loads + store)]
    name = name or f"elemwise_{'c' if contiguous else 's'}{ndim}"
    body = "".join(f"  {line}\n" for line in hoisted)
    for header, inside in loops:
        body += "".join(f"  {h}\n" for h in header.split("\n")) + "  {\n"
        body += "".join(f"    {line}\n" for line in inside) + "  }\n"
    dtypes = kernel_dtypes(scalar_op, in_dtypes, out_dtype)
    source = f"{d.prelude(dtypes)}{d.kernel} {name}({', '.join(params)}) {{\n{body}}}\n"
    return Kernel(name, source, dtypes)


def _row_loop(d: Dialect, n_arrays: int, body: list[str]) -> tuple[str, list[str]]:
    """The loop-nest form of a strided walk: threads take rows (all dims but the last,
    ``nd`` of them at run time, lengths ``n[]``, element strides ``st[k * MAXD + dim]``),
    SIMD lanes the strided inner loop, which sets the offsets ``oK``."""
    lines = ["index_t rem = r;"] + [f"index_t b{k} = off{k};" for k in range(n_arrays)]
    lines.append("for (int dim = nd - 2; dim >= 0; dim--) {")
    lines.append("  const index_t c = rem % n[dim]; rem /= n[dim];")
    lines += [f"  b{k} += c * st[{k} * MAXD + dim];" for k in range(n_arrays)]
    lines.append("}")
    lines += [f"const index_t s{k} = st[{k} * MAXD + nd - 1];" for k in range(n_arrays)]
    # Rows whose inner strides are all 1 (a broadcast row or column) get unit-stride
    # loads and stores; the general loop would gather them.
    unit = " && ".join(f"s{k} == 1" for k in range(n_arrays))
    for test, stride in ((f"if ({unit}) {{", ""), ("} else {", " * s{k}")):
        lines += [test, "  _Pragma(\"omp simd\")", "  for (index_t j = 0; j < n[nd - 1]; j++) {"]
        lines += [f"    const index_t o{k} = b{k} + j{stride.format(k=k)};" for k in range(n_arrays)]
        lines += ["    " + line for line in body] + ["  }"]
    lines.append("}")
    return d.for_each("r", "(n[nd - 1] ? size / n[nd - 1] : 0)", "size", simd=False), lines


_REDUCE_EXPR = {"add": "(a + b)", "mul": "(a * b)", "and_": "(a && b)", "or_": "(a || b)"}
# The reductions of truth values (each element loaded as ``v != 0``): all and any.
LOGICAL_REDUCE = ("and_", "or_")


def _reduce_parts(d: Dialect, op_name: str, acc: str) -> tuple[str, str]:
    """(identity, combine expression of ``a`` and ``b``) of a reduction in dtype ``acc``."""
    if op_name in ("maximum", "minimum"):
        bigger = op_name == "maximum"
        if acc in d.inf:
            nan = " || isnan(a)"
            identity = ("-" if bigger else "") + d.inf[acc]
        else:
            nan = ""
            info = np.iinfo(acc) if acc != "bool" else None
            value = (0 if bigger else 1) if info is None else (info.min if bigger else info.max)
            identity = f"(({d.ctype(acc)}){value}{'ULL' if acc == 'uint64' else 'LL' if acc == 'int64' else ''})"
        return identity, f"((a {'>' if bigger else '<'} b{nan}) ? a : b)"
    identity = {"add": "0", "mul": "1", "and_": "1", "or_": "0"}[op_name]
    return identity, _REDUCE_EXPR[op_name]


def reduce(d: Dialect, op_name: str, in_dtype: str, acc_dtype: str, out_dtype: str,
           n_kept: int, n_reduced: int, per_thread: bool = False, square: bool = False) -> Kernel:
    """A reduction in units of work: unit ``u`` reduces share ``u % splits`` (elements
    ``[s * chunk, (s + 1) * chunk)`` of the flattened reduced axes) of output element
    ``u / splits``, and writes to ``out[dst + s * split_stride]``. With ``splits`` > 1
    the host gives ``out`` as a buffer of partial results and reduces those again
    (the two-stage form, for few outputs); with 1, ``out`` is the result.

    The group form (``per_thread`` False): a work-group per unit, its threads striding
    over the share, then a tree in local memory. The thread form: one thread per unit,
    a plain loop (for outputs side by side in memory over a strided axis, and for
    devices that are CPUs, where a work-item is a loop iteration). Both walk the
    share in runs along the innermost reduced axis (the last, ``rin``/``rsin``),
    splitting the flat index only once per run, with a unit-stride loop when
    ``rsin`` is 1. Kept dimensions (``k0..``, input strides ``ks0..``, output
    strides ``os0..``) come from the output element; the other reduced ones
    (``r0..``, ``rs0..``) from the run. ``square`` sums squares (SumOfSquares).
    """
    identity, combine = _reduce_parts(d, op_name, acc_dtype)
    acc = d.ctype(acc_dtype)
    n_reduced = max(n_reduced, 1)  # no reduced axis: the host passes one of length 1
    if op_name in ("and_", "or_"):
        load = "(v != 0)"
    elif square:
        load = f"((({acc})v) * (({acc})v))"
    else:
        load = f"(({acc})v)"
    params = [_ptr(d, out_dtype, "out"), "const index_t out_off", _ptr(d, in_dtype, "x", True),
              "const index_t x_off", "const index_t n_reduced", "const index_t n_units",
              "const index_t splits", "const index_t chunk", "const index_t split_stride"]
    params += [f"const index_t k{i}, const index_t ks{i}, const index_t os{i}" for i in range(n_kept)]
    params += [f"const index_t r{i}, const index_t rs{i}" for i in range(n_reduced)]
    last = n_reduced - 1
    unit = d.global_id if per_thread else d.group_id
    head = [f"const index_t u = {unit};"]
    head += ["if (u >= n_units) return;"] if per_thread else [
        f"{d.local}{acc} parts[{LOCAL_SIZE}];", f"const index_t lid = {d.local_id};"]
    head += ["index_t g = u / splits;", "const index_t s = u - g * splits;", "index_t base = x_off;",
             "index_t dst = out_off + s * split_stride;"]
    for i in reversed(range(n_kept)):
        head.append(f"{{ const index_t c = g % k{i}; g /= k{i}; base += c * ks{i}; dst += c * os{i}; }}")
    head += ["const index_t t1 = min(n_reduced, (s + 1) * chunk);",
             f"const index_t rin = r{last}, rsin = rs{last};", f"{acc} part = {identity};"]
    run = ["const index_t q = t / rin, j0 = t - q * rin;", "const index_t n = min(rin - j0, t1 - t);",
           "index_t off = base + j0 * rsin;"] + (["index_t rem = q;"] if last else [])
    for i in reversed(range(last)):
        run.append(f"{{ const index_t c = rem % r{i}; rem /= r{i}; off += c * rs{i}; }}")
    step = f"{{ const {d.ctype(in_dtype)} v = x[off + jSTRIDE]; const {acc} a = part; const {acc} b = {load}; part = {combine}; }}"
    first = "0" if per_thread else "lid"
    stride = "1" if per_thread else str(LOCAL_SIZE)
    run += [f"if (rsin == 1) for (index_t j = {first}; j < n; j += {stride}) " + step.replace("jSTRIDE", "j"),
            f"else for (index_t j = {first}; j < n; j += {stride}) " + step.replace("jSTRIDE", "j * rsin"),
            "t += n;"]
    body = head + ["for (index_t t = s * chunk; t < t1;) {"] + [f"  {line}" for line in run] + ["}"]
    if per_thread:
        tail = [f"out[dst] = {c_convert('part', out_dtype, d.ctype)};"]
    else:
        tail = ["parts[lid] = part;", d.barrier,
                f"for (index_t w = {LOCAL_SIZE // 2}; w > 0; w >>= 1) {{",
                f"  if (lid < w) {{ const {acc} a = parts[lid]; const {acc} b = parts[lid + w]; "
                f"parts[lid] = {combine}; }}", f"  {d.barrier}", "}",
                f"if (lid == 0) out[dst] = {c_convert('parts[0]', out_dtype, d.ctype)};"]
    name = "reduce_thread" if per_thread else "reduce_group"
    source = (f"{d.prelude((in_dtype, acc_dtype, out_dtype))}{d.kernel} {name}({', '.join(params)}) {{\n"
              + "".join(f"  {line}\n" for line in body + tail) + "}\n")
    return Kernel(name, source, (in_dtype, acc_dtype, out_dtype))


def softmax(d: Dialect, in_dtype: str, out_dtype: str, n_kept: int, log: bool,
            per_thread: bool = False) -> Kernel:
    """(Log)softmax along one axis: one work-group per slice, a local-memory
    max then a local-memory sum of ``exp(x - max)``, then the write.

    ``per_thread``: one work-item per slice, three plain loops (the form for a CPU
    device, whose first launch PoCL compiles in a fraction of the group form's time:
    no local memory or barriers); its launch passes the number of slices last."""
    t = d.ctype(out_dtype)
    inf = d.inf[out_dtype]
    params = [_ptr(d, out_dtype, "out"), "const index_t out_off", _ptr(d, in_dtype, "x", True),
              "const index_t x_off", "const index_t n", "const index_t xs", "const index_t ys"]
    params += [f"const index_t k{i}, const index_t ks{i}, const index_t os{i}" for i in range(n_kept)]
    group_lines = ["index_t g = " + (d.global_id if per_thread else d.group_id) + ";",
                   "index_t base = x_off;", "index_t dst = out_off;"]
    for i in reversed(range(n_kept)):
        group_lines.append(f"{{ const index_t c = g % k{i}; g /= k{i}; base += c * ks{i}; dst += c * os{i}; }}")
    value = f"(({t})x[base + j * xs])"
    write = ("(v - m) - log(total)" if log else "exp(v - m) / total")
    if per_thread:
        return Kernel("softmax", (
            f"{d.prelude((in_dtype, out_dtype))}{d.kernel} softmax({', '.join(params + ['const index_t units'])}) {{\n"
            f"  if ({d.global_id} >= units) return;\n"
            + "".join(f"  {line}\n" for line in group_lines)
            + f"  {t} m = -{inf};\n"
            f"  for (index_t j = 0; j < n; j++) {{ const {t} a = m; const {t} b = {value}; "
            f"m = (a > b || isnan(a)) ? a : b; }}\n"
            f"  {t} total = 0;\n  for (index_t j = 0; j < n; j++) total += exp({value} - m);\n"
            f"  for (index_t j = 0; j < n; j++) {{ const {t} v = {value}; out[dst + j * ys] = {write}; }}\n}}\n"),
            (in_dtype, out_dtype))

    def tree(op: str) -> str:
        return (f"  for (index_t s = {LOCAL_SIZE // 2}; s > 0; s >>= 1) {{\n"
                f"    if (lid < s) {{ const {t} a = parts[lid]; const {t} b = parts[lid + s]; "
                f"parts[lid] = {op}; }}\n    {d.barrier}\n  }}\n")
    source = (
        f"{d.prelude((in_dtype, out_dtype))}{d.kernel} softmax({', '.join(params)}) {{\n"
        f"  {d.local}{t} parts[{LOCAL_SIZE}];\n  const index_t lid = {d.local_id};\n"
        + "".join(f"  {line}\n" for line in group_lines)
        + f"  {t} part = -{inf};\n"
        f"  for (index_t j = lid; j < n; j += {LOCAL_SIZE}) {{ const {t} a = part; const {t} b = {value}; "
        f"part = (a > b || isnan(a)) ? a : b; }}\n"
        f"  parts[lid] = part;\n  {d.barrier}\n" + tree("(a > b || isnan(a)) ? a : b")
        + f"  const {t} m = parts[0];\n  {d.barrier}\n  part = 0;\n"
        f"  for (index_t j = lid; j < n; j += {LOCAL_SIZE}) part += exp({value} - m);\n"
        f"  parts[lid] = part;\n  {d.barrier}\n" + tree("a + b")
        + f"  const {t} total = parts[0];\n"
        f"  for (index_t j = lid; j < n; j += {LOCAL_SIZE}) {{ const {t} v = {value}; "
        f"out[dst + j * ys] = {write}; }}\n}}\n")
    return Kernel("softmax", source, (in_dtype, out_dtype))


def gemm(d: Dialect, dtype: str, n_batch: int = 0, tiled: bool = True) -> Kernel:
    """``C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C`` in TILE x TILE tiles staged in
    local memory (C is not read when beta is 0). A and B are read through their
    strides, so transposed views cost nothing. ``n_batch`` leading dimensions
    (lengths ``nb0..``, strides ``ab0.. bb0.. cb0..``, 0 where an operand
    broadcasts) are the third launch dimension: one kernel for a batched matmul.

    ``tiled=False`` is OpenCL's row form for a CPU device (CUDA, always a GPU, has only
    the tiled form): a work-item per output element, CPU_GROUP of a row in a group, no
    local memory or barriers. On PoCL its first launch compiles in a fifth of the tiled
    form's time (0.25 s against 1.2 s) and it runs 1.5-2x faster (a CPU's caches do what
    the tiles do on a GPU); both sum over k in the same order."""
    t = d.ctype(dtype)
    params = [_ptr(d, dtype, "c"), "const index_t c_off", "const index_t cs0", "const index_t cs1",
              _ptr(d, dtype, "a", True), "const index_t a_off", "const index_t as0", "const index_t as1",
              _ptr(d, dtype, "b", True), "const index_t b_off", "const index_t bs0", "const index_t bs1",
              "const index_t M", "const index_t N", "const index_t K", f"const {t} alpha",
              f"const {t} beta"]
    params += [f"const index_t nb{i}, const index_t ab{i}, const index_t bb{i}, const index_t cb{i}"
               for i in range(n_batch)]
    total = " * ".join(f"nb{i}" for i in range(n_batch)) or "1"
    tiled = tiled or d is not OPENCL
    batch_lines = ["index_t g = bz;" if tiled else "index_t g = get_group_id(2);"] if n_batch else []
    for i in reversed(range(n_batch)):
        batch_lines.append(f"{{ const index_t q = g % nb{i}; g /= nb{i}; ao += q * ab{i}; "
                           f"bo += q * bb{i}; co += q * cb{i}; }}")
    if not tiled:
        return Kernel("gemm", (
            f"{d.prelude((dtype,))}{d.kernel} gemm({', '.join(params)}) {{\n"
            "  const index_t col = get_global_id(0), row = get_global_id(1);\n"
            "  if (row >= M || col >= N) return;\n"
            "  index_t ao = a_off, bo = b_off, co = c_off;\n"
            + "".join(f"  {line}\n" for line in batch_lines)
            + f"  const {d.global_}{t} *ar = a + ao + row * as0, *bc = b + bo + col * bs1;\n"
            f"  {t} acc = 0;\n"
            "  for (index_t k = 0; k < K; ++k) acc += ar[k * as1] * bc[k * bs0];\n"
            "  const index_t at = co + row * cs0 + col * cs1;\n"
            "  c[at] = beta == 0 ? alpha * acc : alpha * acc + beta * c[at];\n}\n"), (dtype,))
    if d is CUDA:
        # Row blocks and batches loop over the grid (CUDA caps grid.y and grid.z at 65,535);
        # the loops are uniform over a block, so the barriers inside them are safe.
        col, ly, lx = "(blockIdx.x * TILE + threadIdx.x)", "threadIdx.y", "threadIdx.x"
        blocks = ("  for (index_t by = blockIdx.y; by * TILE < M; by += gridDim.y) {\n"
                  f"  for (index_t bz = blockIdx.z; bz < {total}; bz += gridDim.z) {{\n")
    else:
        # OpenCL has no such cap, and PoCL compiles barriers inside extra loops into
        # slower code (1.3x on a 128x784x500 product): one row block and batch a group.
        col, ly, lx = "get_global_id(0)", "get_local_id(1)", "get_local_id(0)"
        blocks = "  { const index_t by = get_group_id(1);\n  { const index_t bz = get_group_id(2);\n"
    source = (
        f"{d.prelude((dtype,))}#define TILE {TILE}\n{d.kernel} gemm({', '.join(params)}) {{\n"
        f"  {d.local}{t} ta[TILE][TILE];\n  {d.local}{t} tb[TILE][TILE];\n"
        f"  const index_t col = {col};\n  const int ly = {ly}, lx = {lx};\n" + blocks +
        f"  const index_t row = by * TILE + ly;\n  {t} acc = 0;\n"
        f"  index_t ao = a_off, bo = b_off, co = c_off;\n"
        + "".join(f"  {line}\n" for line in batch_lines)
        + f"  for (index_t k0 = 0; k0 < K; k0 += TILE) {{\n"
        f"    ta[ly][lx] = (row < M && k0 + lx < K) ? a[ao + row * as0 + (k0 + lx) * as1] : 0;\n"
        f"    tb[ly][lx] = (k0 + ly < K && col < N) ? b[bo + (k0 + ly) * bs0 + col * bs1] : 0;\n"
        f"    {d.barrier}\n"
        f"    for (int k = 0; k < TILE; ++k) acc += ta[ly][k] * tb[k][lx];\n"
        f"    {d.barrier}\n  }}\n"
        f"  if (row < M && col < N) {{\n"
        f"    const index_t at = co + row * cs0 + col * cs1;\n"
        f"    c[at] = beta == 0 ? alpha * acc : alpha * acc + beta * c[at];\n  }}\n  }}\n  }}\n}}\n")
    return Kernel("gemm", source, (dtype,))


_OMP_REDUCTION = {"add": "+", "mul": "*", "and_": "&&", "or_": "||"}


def reduce_nest(d: Dialect, op_name: str, map_op: ScalarOp | None, in_dtypes: Sequence[str],
                map_dtype: str, acc_dtype: str, out_dtype: str, ndim: int, axes: Sequence[int],
                name: str) -> Kernel:
    """The loop-nest form of ``reduce`` (C dialect): ``out = reduce(map_op(*inputs))`` over
    ``axes`` in one pass, the mapped values never stored. Arguments: the output and the
    inputs (pointers), the broadcast shape ``n[ndim]`` and element strides
    ``st[k * MAXD + dim]`` (array 0 the output, 0 on reduced axes).

    When the last axis is reduced, each output element accumulates in a register of
    ``acc_dtype`` (threads take output elements; SIMD lanes the last axis for sums and
    products) and is rounded once to ``out_dtype``. Otherwise ``a0`` accumulates row by
    row in memory order, so the last axis stays contiguous: it is then an array of
    ``acc_dtype`` already holding the identity (the output itself when the dtypes agree,
    else a buffer the caller rounds into the output)."""
    acc = d.ctype(acc_dtype)  # first: UnsupportedDtype for a dtype C lacks
    identity, combine = _reduce_parts(d, op_name, acc_dtype)
    axes = sorted(axes)
    n_in = len(in_dtypes)
    if map_op is None:
        lines, value = [], "x0"
    else:
        block = map_op.c_block([f"x{k}" for k in range(n_in)], list(in_dtypes), map_dtype, d.ctype)
        if block is None:
            raise UnsupportedDtype(f"{map_op} has no kernel expression for {', '.join(in_dtypes)}")
        lines, value = block
    load = f"({value} != 0)" if op_name in ("and_", "or_") else f"(({acc})({value}))"
    kept = [i for i in range(ndim) if i not in axes]
    last_reduced = ndim and ndim - 1 in axes
    target = out_dtype if not ndim or last_reduced else acc_dtype
    params = [_ptr(d, target, "a0")] + [_ptr(d, dt, f"a{k + 1}", True) for k, dt in enumerate(in_dtypes)]
    params += ["const index_t *n", "const index_t *st"]
    # OpenMP's reduction clause for the accumulator; float max/min keep numpy's NaN (any NaN
    # wins) in a flag beside it, so that the max itself can be the vectorisable one.
    float_minmax = op_name in ("maximum", "minimum") and acc_dtype in d.inf
    clause = {"maximum": "max", "minimum": "min"}.get(op_name) or _OMP_REDUCTION[op_name]
    clause = f"reduction({clause}:part)" + (" reduction(|:nan)" if float_minmax else "")
    fold = combine if op_name not in ("maximum", "minimum") else f"(b {'>' if op_name == 'maximum' else '<'} a ? b : a)"
    # The arrays the innermost loop (over the last axis) reads or writes: the output only
    # when it accumulates in memory.
    walked = list(range(1, n_in + 1)) if not ndim or last_reduced else list(range(n_in + 1))

    def at(k: int, inner: str) -> str:
        """Array ``k``'s element at the current indices: ``posK`` (the outer axes' part,
        hoisted) plus ``inner`` for the last axis; ``0`` on a 0-d kernel."""
        return f"pos{k}{inner.format(k=k)}" if ndim else "0"

    def step(inner: str) -> list[str]:
        lines_ = [f"const {d.ctype(dt)} x{k} = a{k + 1}[{at(k + 1, inner)}];" for k, dt in enumerate(in_dtypes)]
        return lines_ + lines + [f"const {acc} b = {load};"]
    body: list[str] = []
    depth = 0

    def open_loop(i: int, pragma: str = "") -> None:
        nonlocal depth
        if pragma:
            body.append("  " * depth + pragma)
        body.append("  " * depth + f"for (index_t i{i} = 0; i{i} < n[{i}]; i{i}++) {{")
        depth += 1

    def close(count: int) -> None:
        nonlocal depth
        for _ in range(count):
            depth -= 1
            body.append("  " * depth + "}")

    def innermost(pragma: str, update: list[str]) -> None:
        """The loop over the last axis, with the other axes' offsets and the last axis's
        strides hoisted: a unit-stride form when every array it walks is contiguous
        there (loads and stores the vectoriser can use; a run-time stride gathers), else
        the strided one. Without axes (0-d), the step alone."""
        pad = "  " * depth
        if not ndim:
            body.extend(pad + line for line in step("") + update)
            return
        last = ndim - 1
        for k in walked:
            outer = " + ".join([f"i{i} * st[{k} * MAXD + {i}]" for i in range(last)] or ["0"])
            body.append(pad + f"const index_t pos{k} = {outer}, inc{k} = st[{k} * MAXD + {last}];")
        unit = " && ".join(f"inc{k} == 1" for k in walked)
        for test, inner in ((f"if ({unit}) {{", f" + i{last}"), ("} else {", f" + i{last} * inc{{k}}")):
            body.append(pad + test)
            if pragma:
                body.append(pad + "  " + pragma)
            body.append(pad + f"  for (index_t i{last} = 0; i{last} < n[{last}]; i{last}++) {{")
            body.extend(pad + "    " + line.replace("INNER", inner.format(k=0)) for line in step(inner) + update)
            body.append(pad + "  }")
        body.append(pad + "}")

    parallel = '_Pragma("omp parallel for if(total >= PARALLEL_MIN) schedule(static)")'
    if not ndim or last_reduced:
        for j, i in enumerate(kept):
            open_loop(i, parallel if j == 0 else "")
        body.append("  " * depth + f"{acc} part = {identity};" + (" int nan = 0;" if float_minmax else ""))
        for j, i in enumerate(axes[:-1]):
            pragma = ""
            if j == 0 and not kept:
                pragma = f'_Pragma("omp parallel for {clause} if(total >= PARALLEL_MIN)")'
            open_loop(i, pragma)
        innermost(f'_Pragma("omp simd {clause}")',
                  [f"{{ const {acc} a = part; part = {fold}; }}"] + (["nan |= b != b;"] if float_minmax else []))
        close(len(axes[:-1]))
        if float_minmax:
            body.append("  " * depth + "if (nan) part = NAN;")
        kept_at = " + ".join([f"i{i} * st[{i}]" for i in kept] or ["0"])
        body.append("  " * depth + f"a0[{kept_at}] = {c_convert('part', out_dtype, d.ctype)};")
        close(len(kept))
    else:
        for i in range(ndim - 1):
            open_loop(i)
        out_at = at(0, "INNER")
        innermost('_Pragma("omp simd")',
                  [f"{{ const {acc} a = a0[{out_at}]; a0[{out_at}] = {combine}; }}"])
        close(ndim - 1)
    total = " * ".join([f"n[{i}]" for i in range(ndim)] or ["1"])
    source = (f"{d.kernel} {name}({', '.join(params)}) {{\n  const index_t total = {total};\n"
              f"  (void)total;\n" + "".join(f"  {line}\n" for line in body) + "}\n")
    return Kernel(name, source, (*in_dtypes, acc_dtype, out_dtype))


def softmax_nest(d: Dialect, in_dtype: str, out_dtype: str, ndim: int, axis: int, log: bool,
                 name: str) -> Kernel:
    """The loop-nest form of ``softmax`` (C dialect): threads take slices along ``axis``;
    each slice is three passes (max, sum of ``exp(x - max)``, write), the last two in SIMD
    lanes; the sum, and the division or log by it, are in double (as Theano's C softmax),
    the exps in the output's dtype. Arguments: output and input pointers, ``n[ndim]``,
    element strides ``st[k * MAXD + dim]`` (array 0 the output)."""
    t = d.ctype(out_dtype)
    kept = [i for i in range(ndim) if i != axis]
    params = [_ptr(d, out_dtype, "a0"), _ptr(d, in_dtype, "a1", True), "const index_t *n",
              "const index_t *st"]
    body = []
    for j, i in enumerate(kept):
        if j == 0:
            body.append('_Pragma("omp parallel for if(total >= PARALLEL_MIN) schedule(static)")')
        body.append(f"for (index_t i{i} = 0; i{i} < n[{i}]; i{i}++) {{")
    at = " + ".join([f"i{i} * st[{{k}} * MAXD + {i}]" for i in kept] or ["0"])
    write = "(v - m) - log(sum)" if log else "exp(v - m) / sum"
    body += [f"const index_t ob = {at.format(k=0)}, xb = {at.format(k=1)};",
             f"const index_t os = st[{axis}], xs = st[MAXD + {axis}], len = n[{axis}];",
             f"{t} m = -{d.inf[out_dtype]};", "double sum = 0;", "int nan = 0;"]
    # Contiguous slices get unit-stride loops (a run-time stride makes the vectoriser gather).
    for test, xs, os in (("if (xs == 1 && os == 1) {", "", ""), ("} else {", " * xs", " * os")):
        value = f"(({t})a1[xb + j{xs}])"
        body += [test,
                 '  _Pragma("omp simd reduction(max:m) reduction(|:nan)")',  # a NaN wins, as in numpy
                 f"  for (index_t j = 0; j < len; j++) {{ const {t} v = {value}; m = v > m ? v : m; nan |= v != v; }}",
                 "  if (nan) m = NAN;",
                 '  _Pragma("omp simd reduction(+:sum)")',
                 f"  for (index_t j = 0; j < len; j++) sum += exp({value} - m);",
                 '  _Pragma("omp simd")',
                 f"  for (index_t j = 0; j < len; j++) {{ const {t} v = {value}; a0[ob + j{os}] = {write}; }}"]
    body += ["}"] + ["}"] * len(kept)
    total = " * ".join([f"n[{i}]" for i in range(ndim)] or ["1"])
    source = (f"{d.kernel} {name}({', '.join(params)}) {{\n  const index_t total = {total};\n"
              "  (void)total;\n" + "".join(f"  {line}\n" for line in body) + "}\n")
    return Kernel(name, source, (in_dtype, out_dtype))
