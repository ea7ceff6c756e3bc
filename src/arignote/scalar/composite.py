"""Composite: a small DAG of scalar ops fused into one elementwise operation.

The CPU evaluates it tile by tile: each step writes into a tile-sized scratch
buffer, so the intermediates of a long chain stay in cache instead of becoming
full-size temporaries. GPU kernel renderers read ``steps`` and ``c_code``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from arignote.scalar.ops import ScalarOp

TILE = 32768  # elements per tile: measured best on the seed machine (fewer Python steps per element, still cache-sized)

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
            needs_cast = op.ufunc is None or _numpy_dtype(op, arg_dtypes) != out
            self.compute_dtypes.append(op.compute_dtype(out, *arg_dtypes) if needs_cast else None)
            dtypes.append(out)
        self.step_dtypes = dtypes[n_inputs:]
        self.out_dtype = dtypes[output]
        name = "Composite{" + self.expression() + "}"
        super().__init__(name, n_inputs, self._evaluate, lambda *d: self.out_dtype,
                         c_expr=self.c_code())

    def key(self) -> tuple:
        return (self.n_inputs, self.input_dtypes, self.steps, self.output)

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> None:
        return None  # each step casts for itself

    # ------------------------------------------------------------ printing
    def expression(self) -> str:
        names = [f"i{k}" for k in range(self.n_inputs)]
        for op, args in self.steps:
            names.append(f"{op.name}({', '.join(names[a] for a in args)})")
        return names[self.output]

    def c_code(self) -> str | None:
        exprs = [f"{{{k}}}" for k in range(self.n_inputs)]
        for (op, args), dtype in zip(self.steps, self.step_dtypes):
            if op.c_expr is None:
                return None
            exprs.append("(" + op.c_expr.format(*[exprs[a] for a in args]) + ")")
        return exprs[self.output]

    # ---------------------------------------------------------- evaluation
    def _evaluate(self, *inputs: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(*[np.shape(i) for i in inputs])
        out = np.empty(shape, dtype=self.out_dtype)
        if out.size <= TILE:
            self._run(inputs, out, None)
            return out
        if all(np.shape(i) == shape and i.flags.c_contiguous for i in inputs):
            flat_in = [i.reshape(-1) for i in inputs]
            flat_out = out.reshape(-1)
            scratch = self._scratch(TILE)
            for start in range(0, flat_out.size, TILE):
                stop = min(start + TILE, flat_out.size)
                self._run([i[start:stop] for i in flat_in], flat_out[start:stop], scratch)
            return out
        # Broadcasting inputs: tile along the first axis, where slices stay views.
        rows = max(1, TILE // max(1, out[0].size if out.ndim else 1))
        scratch = None
        for start in range(0, shape[0], rows):
            stop = min(start + rows, shape[0])
            parts = [i[start:stop] if np.ndim(i) and np.shape(i)[0] != 1 else i for i in inputs]
            self._run(parts, out[start:stop], scratch)
        return out

    def _scratch(self, size: int) -> list[np.ndarray]:
        return [np.empty(size, dtype=d) for d in self.step_dtypes]

    def _run(self, inputs: Sequence[np.ndarray], out: np.ndarray, scratch: list | None) -> None:
        values = list(inputs)
        last = len(self.steps) - 1
        for k, ((op, args), compute) in enumerate(zip(self.steps, self.compute_dtypes)):
            target = out if self.n_inputs + k == self.output else None
            if target is None and scratch is not None and k != last:
                target = scratch[k][:out.size].reshape(out.shape)
            operands = [values[a] for a in args]
            if compute is not None:
                operands = [np.asarray(v, dtype=compute) for v in operands]
            if op.ufunc is not None and target is not None and target.shape == out.shape:
                result = op.ufunc(*operands, out=target, casting="unsafe")
            else:
                result = np.asarray(op.impl(*operands))
                if target is not None and target.shape == result.shape:
                    np.copyto(target, result, casting="unsafe")
                    result = target
                elif result.dtype != self.step_dtypes[k]:
                    result = result.astype(self.step_dtypes[k])
            values.append(result)
        if values[self.output] is not out:
            np.copyto(out, values[self.output], casting="unsafe")


def _numpy_dtype(op: ScalarOp, dtypes: Sequence[str]) -> str:
    probes = [np.ones(1, dtype=d) for d in dtypes]
    with np.errstate(all="ignore"):
        return np.asarray(op.ufunc(*probes)).dtype.name
