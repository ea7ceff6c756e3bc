"""Shape inference over a FunctionGraph, and the rewrites that use it.

``ShapeFeature`` gives every variable a symbolic shape: a tuple whose entries
are Python ints (lengths the graph fixes) or int64 scalar variables, built
from each op's ``infer_shape`` out of its inputs' shapes. Only the graph's
inputs, and outputs of ops without ``infer_shape``, fall back to reading their
own length (``Shape_i``). With it, ``x.shape`` no longer needs ``x``:
``function([x, y], (x * 2).dot(y).shape)`` reads the lengths of ``x`` and ``y``
and computes neither the product nor the dot.

Shapes are computed on demand and cached per variable. A replacement has its
original's shape, so the cache stays valid while rewrites edit the graph; the
replacement inherits the original's entry.

Like Theano, this takes the types at their word: two non-broadcastable
dimensions that meet in an elementwise op have the same length. Where both
lengths are fixed in the graph and differ, the error comes at compile time.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import ancestors
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor import math as _math
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.join import stack
from arignote.tensor.rewrites.utils import retype
from arignote.tensor.shape import Shape, Shape_i, static_value
from arignote.tensor.variable import constant

Entry = int | Variable

# What a broken or partial infer_shape raises; the variable then reads its own shape.
_INFER_FAILURES = (NotImplementedError, TypeError, ValueError, IndexError, AttributeError)


class ShapeMismatchError(ValueError):
    """Lengths fixed in the graph cannot meet: the function would fail on every call."""


class ShapeFeature:
    """A FunctionGraph feature mapping variables to symbolic shapes (see the module doc)."""

    def on_attach(self, fgraph: FunctionGraph) -> None:
        self.fgraph = fgraph
        self.shape_of: dict[Variable, tuple[Entry, ...]] = {}
        self._own: dict[tuple[Variable, int], Variable] = {}

    def on_change_input(self, fgraph: FunctionGraph, node: Any, i: int, old: Variable, new: Variable,
                        reason: str | None) -> None:
        if old in self.shape_of and new not in self.shape_of:
            self.shape_of[new] = self.shape_of[old]

    # ----------------------------------------------------------- queries
    def shape(self, var: Variable) -> tuple[Entry, ...]:
        """The shape of ``var``: ints where the graph fixes a length, int64 scalars elsewhere."""
        todo = [var]
        while todo:
            current = todo[-1]
            if current in self.shape_of:
                todo.pop()
                continue
            node = current.owner
            if node is None:
                self.shape_of[current] = self._own_shape(current)
                todo.pop()
                continue
            missing = [i for i in node.inputs if i not in self.shape_of]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            self._infer(node)
        return self.shape_of[var]

    def entry(self, var: Variable, i: int) -> Variable:
        """Length ``i`` of ``var`` as an int64 scalar variable (a constant when fixed)."""
        return as_int64(self.shape(var)[i])

    def same_shape(self, x: Variable, y: Variable, dim_x: int | None = None, dim_y: int | None = None) -> bool:
        """Whether the graph proves ``x`` and ``y`` have one shape (or, given ``dim_x`` and
        ``dim_y``, those two lengths): equal fixed lengths, or one length variable for both."""
        sx, sy = self.shape(x), self.shape(y)
        if dim_x is not None:
            sx = (sx[dim_x],)
        if dim_y is not None:
            sy = (sy[dim_y],)
        return len(sx) == len(sy) and all(_length_id(a) == _length_id(b) for a, b in zip(sx, sy))

    def is_own_length(self, entry: Entry, var: Variable) -> bool:
        """True when ``entry`` is just ``var``'s own length read at run time."""
        return (isinstance(entry, Variable) and entry.owner is not None
                and isinstance(entry.owner.op, Shape_i) and entry.owner.inputs[0] is var)

    # ---------------------------------------------------------- building
    def _own_shape(self, var: Variable) -> tuple[Entry, ...]:
        if not hasattr(var.type, "broadcastable"):
            return ()  # not an array (a random generator's state): no shape
        if isinstance(var, Constant):
            return tuple(int(n) for n in np.shape(var.data))
        entries: list[Entry] = []
        for d, b in enumerate(var.broadcastable):
            if b:
                entries.append(1)
                continue
            key = (var, d)
            if key not in self._own:
                self._own[key] = Shape_i(d)(var)
            entries.append(self._own[key])
        return tuple(entries)

    def _infer(self, node: Apply) -> None:
        input_shapes = [self.shape_of[i] for i in node.inputs]
        if isinstance(node.op, Elemwise):
            self.shape_of[node.outputs[0]] = _elemwise_shape(node, input_shapes)
            return
        try:
            shapes = node.op.infer_shape(self.fgraph, node, [tuple(s) for s in input_shapes])
            results = [self._normalize(out, shp) for out, shp in zip(node.outputs, shapes)]
            if len(results) != len(node.outputs):
                raise ValueError(f"{node.op}.infer_shape gave {len(results)} shapes")
        except _INFER_FAILURES:
            results = [self._own_shape(out) for out in node.outputs]
        for out, shp in zip(node.outputs, results):
            self.shape_of[out] = shp

    def _normalize(self, out: Variable, shp: Any) -> tuple[Entry, ...]:
        shp = tuple(shp)
        if not hasattr(out.type, "broadcastable") and not shp:
            return ()
        if len(shp) != out.ndim:
            raise ValueError(f"shape {shp} has {len(shp)} entries for {out.ndim}-d {out}")
        entries: list[Entry] = []
        for b, item in zip(out.broadcastable, shp):
            if b:
                entries.append(1)
            elif isinstance(item, (int, np.integer)):
                entries.append(int(item))
            else:
                if not isinstance(item, Variable) or item.ndim != 0:
                    raise TypeError(f"shape entry {item!r} of {out} is not an int or a scalar")
                value = static_value(item)
                entries.append(int(value) if value is not None else as_int64(item))
        return tuple(entries)


def _length_id(entry: Entry) -> object:
    """What identifies a length: its value when fixed, else the variable (or the length it reads)."""
    if isinstance(entry, int):
        return entry
    value = static_value(entry)
    if value is not None:
        return int(value)
    node = entry.owner
    if node is not None and isinstance(node.op, Shape_i):
        return (node.inputs[0], node.op.i)
    return entry


def _elemwise_shape(node: Apply, input_shapes: list[tuple[Entry, ...]]) -> tuple[Entry, ...]:
    """An elementwise output's shape, preferring fixed lengths; refuses fixed lengths that differ."""
    out = []
    for d, b in enumerate(node.outputs[0].broadcastable):
        if b:
            out.append(1)
            continue
        fixed: dict[int, int] = {}
        symbolic = None
        for k, (inp, shp) in enumerate(zip(node.inputs, input_shapes)):
            if inp.broadcastable[d]:
                continue
            if isinstance(shp[d], int):
                if shp[d] != 1:
                    fixed.setdefault(shp[d], k)
            elif symbolic is None:
                symbolic = shp[d]
        if len(fixed) > 1:
            (a, i), (c, j) = list(fixed.items())[:2]
            raise ShapeMismatchError(
                f"{node.op}: dimension {d} of input {i} ({node.inputs[i].describe()}) has length {a} "
                f"but input {j} ({node.inputs[j].describe()}) has length {c}; elementwise inputs "
                "must have equal lengths (or length 1): fix the shapes of the inputs")
        out.append(next(iter(fixed)) if fixed else symbolic if symbolic is not None else 1)
    return tuple(out)


def outer_shapes(outputs: list, known: dict) -> list:
    """The shapes of an inner graph's ``outputs`` (scan's step, OpFromGraph's graph) from
    ``known`` shapes of its inputs in outer terms; None for an output whose shape reads an
    inner value (or fails to infer): the caller reads the outer output's own."""
    feature = ShapeFeature()
    feature.fgraph, feature.shape_of, feature._own = None, dict(known), {}
    inner = {v for v in ancestors(list(outputs)) if not isinstance(v, Constant)}
    result: list = []
    for out in outputs:
        try:
            shape = feature.shape(out) if hasattr(out.type, "ndim") else None
        except _INFER_FAILURES:
            shape = None
        outer = shape is not None and not any(
            isinstance(e, Variable) and set(ancestors([e])) & inner for e in shape)
        result.append(tuple(shape) if outer else None)
    return result


def as_int64(entry: Entry) -> Variable:
    if isinstance(entry, int):
        return constant(np.asarray(entry, dtype="int64"))
    return entry if entry.dtype == "int64" else _math.cast(entry, "int64")


def shape_feature(fgraph: FunctionGraph) -> ShapeFeature:
    """The graph's ShapeFeature, attached on first use."""
    for feature in fgraph.features:
        if isinstance(feature, ShapeFeature):
            return feature
    feature = ShapeFeature()
    fgraph.attach_feature(feature)
    return feature


# ------------------------------------------------------------------ rewrites
@node_rewriter([Shape])
def local_shape_to_lengths(fgraph: FunctionGraph, node: Apply):
    """``x.shape`` -> the lengths ``x``'s shape is computed from, so ``x`` need not be."""
    x = node.inputs[0]
    if x.owner is None and not isinstance(x, Constant):
        return None
    feature = shape_feature(fgraph)
    entries = feature.shape(x)
    if any(feature.is_own_length(e, x) for e in entries):
        return None
    if all(isinstance(e, int) for e in entries):
        new = constant(np.asarray(entries, dtype="int64"))
    elif len(entries) == 1:
        new = as_int64(entries[0]).dimshuffle("x")
    else:
        new = stack([as_int64(e) for e in entries])
    return [retype(new, node.outputs[0], same_shape=True)]


@node_rewriter([Shape_i])
def local_shape_i_to_length(fgraph: FunctionGraph, node: Apply):
    """``shape_i(x, i)`` -> the length it is computed from, when that is not ``x``'s own."""
    x = node.inputs[0]
    feature = shape_feature(fgraph)
    entry = feature.shape(x)[node.op.i]
    if feature.is_own_length(entry, x):
        return None
    return [retype(as_int64(entry), node.outputs[0])]


rewrites.register(local_shape_to_lengths, "canonicalize", "fast_run", "shape")
rewrites.register(local_shape_i_to_length, "canonicalize", "fast_run", "shape")
