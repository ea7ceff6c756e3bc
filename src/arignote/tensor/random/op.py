"""``RandomFunction``: the Op of every ``RandomStreams`` draw.

Inputs are the generator state (a ``RandomStateType`` variable), the size (an
int64 vector; empty means "the arguments' broadcast shape") and the
distribution's arguments. Outputs are the advanced state and the sample.
``perform`` draws from a copy of the state, so the input is never modified
and the op needs no ``destroy_map`` (unless built with ``inplace=True``). It is never constant-folded; two draws
are merged only when they read the same state variable with the same
arguments, which is when they are the same numbers.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from arignote.graph.basic import Apply, Op, Variable
from arignote.tensor import math as _math
from arignote.tensor.random.samplers import SAMPLERS, method
from arignote.tensor.random.type import RandomStateType, copy_state
from arignote.tensor.shape import as_shape_vector, shape as _shape, vector_length
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant


class RandomFunction(Op):
    """Draw with ``fn``; the sample has type ``outtype``. Calling the op gives Theano's
    ``[new_state, sample]``.

    ``fn`` is a distribution name (a ``SAMPLERS`` entry or any
    ``numpy.random.RandomState`` method name), a ``RandomState`` method, or a
    function ``fn(rng, *args, size)``. ``inplace=True`` advances the input state
    itself (``destroy_map``) instead of a copy. ``ndim_added`` counts trailing
    dimensions the distribution adds to the size (1 for multinomial and
    permutation, 0 otherwise).
    """

    __props__ = ("fn", "outtype", "inplace", "ndim_added")
    foldable = False
    random_draw = True  # its sample is a constant for gradients (scan_module/grad.py)

    def __init__(self, fn: str | Callable, outtype: TensorType, inplace: bool = False,
                 ndim_added: int = 0):
        name = getattr(fn, "__name__", None)
        if callable(fn) and name and getattr(np.random.RandomState, name, None) is fn:
            fn = name  # a RandomState method: by its name, so equal draws merge
        if isinstance(fn, str) and fn not in SAMPLERS and not callable(getattr(np.random.RandomState, fn, None)):
            raise ValueError(f"unknown distribution {fn!r}: give a numpy.random.RandomState method "
                             f"name ({', '.join(SAMPLERS)}, ...) or a function fn(rng, *args, size)")
        if not isinstance(fn, str) and not callable(fn):
            raise TypeError(f"RandomFunction: fn must be a distribution name or a function, got {fn!r}")
        if not isinstance(outtype, TensorType):
            raise TypeError(f"RandomFunction: outtype must be a TensorType (e.g. tensor.dvector), "
                            f"got {outtype!r}")
        self.fn = fn
        self.outtype = outtype
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}
        self.ndim_added = ndim_added

    def __str__(self) -> str:
        return f"RandomFunction{{{self.fn if isinstance(self.fn, str) else self.fn.__name__}}}"

    def sampler(self) -> Callable:
        """The function drawing ``(rng, *args, size)``."""
        if not isinstance(self.fn, str):
            return self.fn
        return SAMPLERS.get(self.fn) or method(self.fn)

    def make_node(self, rng: Variable, size: Any, *args: Any) -> Apply:
        if not isinstance(getattr(rng, "type", None), RandomStateType):
            raise TypeError(f"the first input of {self} must be a random state variable (e.g. "
                            f"shared(numpy.random.RandomState(seed))), got {rng!r}")
        size = _math.cast(as_tensor_variable(size, ndim=1), "int64")
        args = [as_tensor_variable(a) for a in args]
        return Apply(self, [rng, size, *args], [rng.type(), self.outtype()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        rng, size, *args = inputs
        size = tuple(int(s) for s in size) if len(size) else None
        out = node.outputs[1]
        if size is not None and len(size) + self.ndim_added != out.ndim:
            raise ValueError(f"{self}: size {size} has {len(size)} entries but the draw "
                             f"{out.describe()} has {out.ndim - self.ndim_added}; "
                             "give a size of that length")
        if not self.inplace:
            rng = copy_state(rng)
        value = np.asarray(self.sampler()(rng, *args, size), dtype=out.dtype)
        if size is None and value.ndim == 0 and out.ndim > 0:
            value = value.reshape((1,) * out.ndim)
        if value.ndim != out.ndim or (size is not None
                                      and value.shape[:len(size)] != size):
            raise ValueError(f"{self} drew shape {value.shape} for {out.describe()}, which "
                             f"has {out.ndim} dimensions" + (f" and size {size}" if size else ""))
        output_storage[0][0] = rng
        output_storage[1][0] = value

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        size = node.inputs[1]
        length = vector_length(size)
        if self.ndim_added or length is None:
            raise NotImplementedError("the sample's shape depends on the values drawn from")
        return [(), [size[i] for i in range(length)]]

    def grad(self, inputs: list, output_grads: list) -> list:
        return [None for _ in inputs]


def infer_ndim_bcast(ndim: int | None, size: Any, *args: Variable
                     ) -> tuple[int, Variable, tuple[bool, ...]]:
    """(ndim, int64 size vector, broadcastable pattern) of a draw, as Theano worked them out.

    ``size`` may be None (the arguments' broadcast shape decides), a tuple or
    list of ints and int scalars (``-1`` borrows the length of an argument
    along that axis), or an int vector variable (then ``ndim`` must be given
    when its length is not fixed in the graph).
    """
    args_ndim = max((a.ndim for a in args), default=0)
    if isinstance(size, (tuple, list)):
        if ndim is not None and ndim != len(size):
            raise ValueError(f"ndim={ndim} but size {size} has {len(size)} entries; give one or "
                             "make them agree")
        ndim = len(size)
        bcast: list[bool] = []
        entries: list[Any] = []
        for i, s in enumerate(size):
            if isinstance(s, Variable):
                bcast.append(False)
                entries.append(s)
            elif s == -1:
                entry = _borrowed_length(i, ndim, args, size)
                bcast.append(isinstance(entry, int) and entry == 1)
                entries.append(entry)
            elif isinstance(s, (int, np.integer)) and s >= 0:
                bcast.append(s == 1)
                entries.append(int(s))
            else:
                raise ValueError(f"size entry {s!r} of {size} is not a length: use an int >= 0, "
                                 "-1 (the argument's length) or an int scalar variable")
        vector = as_shape_vector(entries, "size") if entries else constant(np.zeros(0, "int64"))
    elif size is None:
        if not args:
            raise TypeError("size=None needs arguments whose shape gives the draw's shape: "
                            "pass size=(...)")
        if args_ndim == 0:
            return 0, constant(np.zeros(0, "int64")), ()
        template = args[0]
        for a in args[1:]:
            template = template + a
        return template.ndim, _shape(template), template.broadcastable
    else:
        vector = as_shape_vector(size, "size")
        if ndim is None:
            ndim = vector_length(vector)
            if ndim is None:
                raise ValueError(f"the length of size {size} is not fixed in the graph: pass ndim=")
        bcast = [False] * ndim
    if args_ndim > ndim:
        raise ValueError(f"the draw has {ndim} dimensions but an argument has {args_ndim}: "
                         "give a size with as many entries as the arguments' dimensions")
    return ndim, vector, tuple(bcast)


def _borrowed_length(i: int, ndim: int, args: Sequence[Variable], size: Any) -> Any:
    """Length of axis ``i`` taken from the arguments (right-aligned), for a -1 in size."""
    overlapping = [a for a in args if i >= ndim - a.ndim]
    for a in overlapping:
        axis = i + a.ndim - ndim
        if not a.broadcastable[axis]:
            return a.shape[axis]
    if not overlapping:
        raise ValueError(f"size {size}: -1 at position {i} must fall on an axis of an argument")
    return 1
