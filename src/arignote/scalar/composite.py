"""Composite: a small DAG of scalar ops fused into one elementwise operation.

The CPU evaluates it tile by tile: each step writes into a tile-sized scratch
buffer, so the intermediates of a long chain stay in cache instead of becoming
full-size temporaries. GPU kernel renderers call ``c_block``.

The fusion rewrite builds one from its steps; ``Composite.from_graph([x, y], [z])``
(Theano's ``Composite([x, y], [z])``) builds one from a graph of scalar variables,
inlining the Composites it contains and keeping its constants as steps. Either
way ``inputs``, ``outputs`` and ``fgraph`` show the chain as a scalar graph.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from arignote.backends.kernels import cache
from arignote.graph.basic import Constant, Variable
from arignote.scalar.ops import ScalarOp, c_convert

# A step is (scalar op, argument refs); a ref < n_inputs is an input, otherwise
# the result of step (ref - n_inputs).
Step = tuple[ScalarOp, tuple[int, ...]]


class Composite(ScalarOp):
    def __init__(self, n_inputs: int, input_dtypes: Sequence[str], steps: Sequence[Step],
                 output: int):
        self.n_inputs = n_inputs
        self.input_dtypes = tuple(input_dtypes)
        self.steps = tuple((op, tuple(args)) for op, args in steps)
        self.output = output
        dtypes = list(self.input_dtypes)
        self.compute_dtypes: list[str | None] = []
        for op, args in self.steps:
            arg_dtypes = [dtypes[a] for a in args]
            out = op.output_dtype(*arg_dtypes)
            needs_cast = op.ufunc is None or _numpy_dtype(op, tuple(arg_dtypes)) != out
            self.compute_dtypes.append(op.compute_dtype(out, *arg_dtypes) if needs_cast else None)
            dtypes.append(out)
        self.step_dtypes = dtypes[n_inputs:]
        self.out_dtype = dtypes[output]
        name = "Composite{" + self.expression() + "}"
        super().__init__(name, n_inputs, self._evaluate, lambda *d: self.out_dtype)

    @classmethod
    def from_graph(cls, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> Composite:
        """The Composite computing ``outputs`` (one scalar variable) from the scalar
        variables ``inputs``: each node of the graph between them a step."""
        from arignote.graph.traversal import io_toposort

        outputs = list(outputs)
        if len(outputs) != 1:
            raise ValueError(f"Composite of {len(outputs)} outputs: arignote's Composite computes one; "
                             "build one Composite per output (fusion shares their inputs)")
        inputs = list(inputs)
        refs: dict[Variable, int] = {v: k for k, v in enumerate(inputs)}
        steps: list[Step] = []

        def ref(var: Variable) -> int:
            if var not in refs:
                if not isinstance(var, Constant):
                    raise ValueError(f"Composite: {var.describe()} is neither one of the inputs nor "
                                     "computed from them: list it among the inputs")
                steps.append((ScalarConstantOp(var.data), ()))
                refs[var] = len(inputs) + len(steps) - 1
            return refs[var]

        for node in io_toposort(inputs, outputs):
            if not isinstance(node.op, ScalarOp):
                raise TypeError(f"Composite: {node} applies {node.op}, which is not a scalar op")
            args = [ref(v) for v in node.inputs]
            if isinstance(node.op, Composite):  # inlined: its steps become ours
                inner = list(args)
                for op, inner_args in node.op.steps:
                    steps.append((op, tuple(inner[a] for a in inner_args)))
                    inner.append(len(inputs) + len(steps) - 1)
                refs[node.outputs[0]] = inner[node.op.output]
            else:
                steps.append((node.op, tuple(args)))
                refs[node.outputs[0]] = len(inputs) + len(steps) - 1
        return cls(len(inputs), [v.type.dtype for v in inputs], steps, ref(outputs[0]))

    def clone_float32(self) -> Composite:
        """This chain with every float16 (inputs, casts, constants) made float32, as Theano's
        GPU code asked of a Composite for devices without float16 arithmetic."""
        from arignote.scalar.ops import Cast

        def widened(op: ScalarOp) -> ScalarOp:
            if isinstance(op, Cast) and op.dtype == "float16":
                return Cast("float32")
            if isinstance(op, ScalarConstantOp) and op.value.dtype == "float16":
                return ScalarConstantOp(np.float32(op.value))
            return op
        dtypes = ["float32" if d == "float16" else d for d in self.input_dtypes]
        return Composite(self.n_inputs, dtypes, [(widened(op), args) for op, args in self.steps], self.output)

    # ------------------------------------------------ the chain as a scalar graph
    @functools.cached_property
    def _graph(self) -> tuple[list[Variable], list[Variable]]:
        from arignote.scalar.type import get_scalar_type

        values = [get_scalar_type(d)(f"i{k}") for k, d in enumerate(self.input_dtypes)]
        for op, args in self.steps:
            values.append(op(*[values[a] for a in args]))
        return values[:self.n_inputs], [values[self.output]]

    @property
    def inputs(self) -> list[Variable]:
        return self._graph[0]

    @property
    def outputs(self) -> list[Variable]:
        return self._graph[1]

    @functools.cached_property
    def fgraph(self) -> object:
        from arignote.graph.fg import FunctionGraph

        return FunctionGraph(self.inputs, self.outputs, clone=False)

    def key(self) -> tuple:
        return (self.n_inputs, self.input_dtypes, self.steps, self.output)

    def __reduce__(self) -> tuple:
        return Composite, self.key()

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> None:
        return None  # each step casts for itself

    # ------------------------------------------------------------ printing
    def expression(self) -> str:
        names = [f"i{k}" for k in range(self.n_inputs)]
        for op, args in self.steps:
            names.append(f"{op.name}({', '.join(names[a] for a in args)})" if op.nin else op.name)
        return names[self.output]

    def c_block(self, args: Sequence[str], dtypes: Sequence[str], out_dtype: str,
                ctype: Callable[[str], str]) -> tuple[list[str], str] | None:
        """One C statement per step (a value used twice is computed once), each
        converting to its step's dtype as the CPU path does; None when a step
        has no kernel expression."""
        names = list(args)
        all_dtypes = list(dtypes)
        lines = []
        for k, ((op, refs), dtype) in enumerate(zip(self.steps, self.step_dtypes)):
            expr = op.c_code([names[a] for a in refs], [all_dtypes[a] for a in refs], dtype, ctype)
            if expr is None:
                return None
            lines.append(f"const {ctype(dtype)} s{k} = {expr};")
            names.append(f"s{k}")
            all_dtypes.append(dtype)
        return lines, c_convert(names[self.output], out_dtype, ctype)

    # ---------------------------------------------------------- evaluation
    def _evaluate(self, *inputs: np.ndarray) -> np.ndarray:
        """The reference: the whole chain on whole arrays (the CPU backend tiles it)."""
        shape = np.broadcast_shapes(*[np.shape(i) for i in inputs])
        out = np.empty(shape, dtype=self.out_dtype)
        self.kernel(*inputs, out, *(None,) * len(self.steps))
        return out

    @functools.cached_property
    def kernel(self) -> Callable[..., None]:
        """The steps as one generated function ``kernel(i0, ..., out, s0, ...)``.

        Step k writes into scratch buffer ``s{k}`` when one is given (a tile of
        a large array) and allocates otherwise; the output step writes into
        ``out``. The generated source is kept on the function (``.source``).
        """
        n = self.n_inputs
        ns: dict[str, object] = {"asarray": np.asarray, "copyto": np.copyto}
        params = [f"i{k}" for k in range(n)] + ["out"] + [f"s{k}" for k in range(len(self.steps))]
        lines = [f"def kernel({', '.join(params)}):"]
        names = [f"i{k}" for k in range(n)]
        for k, ((op, args), compute) in enumerate(zip(self.steps, self.compute_dtypes)):
            operands = [names[a] for a in args]
            if compute is not None:
                ns[f"CD{k}"] = np.dtype(compute)
                operands = [f"asarray({o}, dtype=CD{k})" for o in operands]
            call = ", ".join(operands)
            is_output = n + k == self.output
            if op.ufunc is not None:
                ns[f"F{k}"] = op.ufunc
                if is_output:
                    lines.append(f"    F{k}({call}, out=out, casting='unsafe')")
                else:
                    lines.append(f"    t{k} = F{k}({call}) if s{k} is None else "
                                 f"F{k}({call}, out=s{k}, casting='unsafe')")
            else:
                ns[f"G{k}"] = op.impl
                ns[f"DT{k}"] = np.dtype(self.step_dtypes[k])
                if is_output:
                    lines.append(f"    copyto(out, G{k}({call}), casting='unsafe')")
                else:
                    lines.append(f"    t{k} = asarray(G{k}({call}), dtype=DT{k})")
            if is_output:
                break
            names.append(f"t{k}")
        if self.output < n:
            lines.append(f"    copyto(out, i{self.output}, casting='unsafe')")
        source = "\n".join(lines) + "\n"
        exec(cache.python_code(source, f"<{self.name}>"), ns)
        kernel = ns["kernel"]
        kernel.source = source
        return kernel


class ScalarConstantOp(ScalarOp):
    """A constant of a Composite built from a graph: a step of no inputs giving ``value``."""

    def __init__(self, value: object):
        self.value = np.asarray(value)[()]
        dtype = self.value.dtype.name
        super().__init__(f"Constant{{{self.value}}}", 0, self._value, lambda: dtype,
                         c_expr=_c_literal(self.value), cast_inputs=False)

    def _value(self) -> np.ndarray:
        return np.asarray(self.value)

    def key(self) -> tuple:
        return (self.value.dtype.name, self.value.item())

    def __reduce__(self) -> tuple:
        return ScalarConstantOp, (self.value,)


def _c_literal(value: np.generic) -> str | None:
    """``value`` as a C literal (the kernel converts it to its dtype); None for complex."""
    kind = value.dtype.kind
    if kind == "c":
        return None
    if kind == "f":
        number = float(value)
        if number != number:
            return "NAN"
        if number in (float("inf"), float("-inf")):
            return "INFINITY" if number > 0 else "(-INFINITY)"
        return f"({number!r})"
    return f"({int(value)})"


@functools.lru_cache(maxsize=4096)
def _numpy_dtype(op: ScalarOp, dtypes: tuple[str, ...]) -> str:
    """The dtype numpy's ufunc gives for ``dtypes`` (asked of numpy once per pair)."""
    probes = [np.ones(1, dtype=d) for d in dtypes]
    with np.errstate(all="ignore"):
        return np.asarray(op.ufunc(*probes)).dtype.name
