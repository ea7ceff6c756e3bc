"""Composite: a small DAG of scalar ops fused into one elementwise operation.

The CPU evaluates it tile by tile: each step writes into a tile-sized scratch
buffer, so the intermediates of a long chain stay in cache instead of becoming
full-size temporaries. GPU kernel renderers call ``c_block``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from arignote.backends.kernels import cache
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
            names.append(f"{op.name}({', '.join(names[a] for a in args)})")
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


@functools.lru_cache(maxsize=4096)
def _numpy_dtype(op: ScalarOp, dtypes: tuple[str, ...]) -> str:
    """The dtype numpy's ufunc gives for ``dtypes`` (asked of numpy once per pair)."""
    probes = [np.ones(1, dtype=d) for d in dtypes]
    with np.errstate(all="ignore"):
        return np.asarray(op.ufunc(*probes)).dtype.name
