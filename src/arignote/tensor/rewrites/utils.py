"""What the tensor rewrites share: reading patterns out of a graph, and typing replacements.

A replacement must have exactly the type of what it replaces (the
FunctionGraph refuses anything else), so every rewrite builds its result and
passes it through :func:`retype`, which adds the cast or broadcast-flag change
that makes the types equal, or says the replacement cannot be used.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.tensor import math as _math
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.shape import Rebroadcast
from arignote.tensor.variable import constant


def op_name(var: Variable) -> str | None:
    """The scalar op's name when ``var`` comes out of an out-of-place Elemwise, else None."""
    node = var.owner
    if node is None or not isinstance(node.op, Elemwise) or node.op.inplace_pattern:
        return None
    return node.op.scalar_op.name


def scalar_constant(var: Variable) -> Any:
    """The value of a one-element constant (seen through DimShuffles), else None.

    Only one-element constants count: removing ``x * ones(3)`` would hide the
    error a length other than 3 raises; removing ``x * 1`` never changes anything.
    """
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    if not isinstance(var, Constant) or var.data.size != 1:
        return None
    return var.data.reshape(()).item()


def is_scalar_constant(var: Variable, value: float) -> bool:
    found = scalar_constant(var)
    return found is not None and not isinstance(found, complex) and found == value


def scalar_of(var: Variable) -> Variable | None:
    """The 0-d variable a one-element ``var`` was broadcast from, else None."""
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    if var.ndim == 0:
        return var
    if isinstance(var, Constant) and var.data.size == 1:
        return constant(var.data.reshape(()))
    return None


def sigmoid_argument(var: Variable) -> tuple[Variable, bool] | None:
    """``(w, negate)`` when ``var`` computes ``sigmoid(z)`` with ``z = -w`` if ``negate``
    else ``w``, ``w`` a variable of the graph; None otherwise.

    Besides the op itself this reads the forms people write (the tutorials'
    ``1 / (1 + exp(-z))``): ``1 / (1 + exp(w))`` and ``inv(1 + exp(w))`` are
    ``sigmoid(-w)``; ``exp(w) / (1 + exp(w))`` is ``sigmoid(w)``; the sum's terms
    may come in either order, and ``exp(-u)`` gives ``w = u`` with the sign flipped.
    """
    name = op_name(var)
    if name == "sigmoid":
        return var.owner.inputs[0], False
    if name == "inv":
        numerator, denominator = None, var.owner.inputs[0]
    elif name == "true_div":
        numerator, denominator = var.owner.inputs
    else:
        return None
    if op_name(denominator) != "add":
        return None
    a, b = denominator.owner.inputs
    e = b if is_scalar_constant(a, 1) else a if is_scalar_constant(b, 1) else None
    if e is None or op_name(e) != "exp":
        return None
    w = e.owner.inputs[0]
    if numerator is None or is_scalar_constant(numerator, 1):
        negate = True  # 1 / (1 + exp(w)) = sigmoid(-w)
    elif op_name(numerator) == "exp" and numerator.owner.inputs[0] is w:
        negate = False  # exp(w) / (1 + exp(w)) = sigmoid(w)
    else:
        return None
    if op_name(w) == "neg":
        return w.owner.inputs[0], not negate
    return w, negate


def single_client(fgraph: Any, var: Variable) -> bool:
    """True when only one node uses ``var`` and it is not a graph output."""
    clients = fgraph.clients.get(var, [])
    return len(clients) == 1 and clients[0][0] != "output"


def retype(new: Variable | None, old: Variable, same_shape: bool = False) -> Variable | None:
    """``new`` given exactly ``old``'s type, or None when that cannot be done safely.

    A dtype difference becomes a cast. Broadcast flags may only differ when the
    caller knows both have the same shape (``same_shape``): then the flags are
    set with a Rebroadcast (which checks a length-1 claim at run time).
    """
    if new is None or new.ndim != old.ndim:
        return None
    if new.type == old.type:
        return new
    if new.broadcastable != old.broadcastable:
        if not same_shape:
            return None
        pairs = [(i, b) for i, (a, b) in enumerate(zip(new.broadcastable, old.broadcastable)) if a != b]
        new = Rebroadcast(*pairs)(new)
    if new.dtype != old.dtype:
        new = _math.cast(new, old.dtype)
    return new if new.type == old.type else None


def typed_constant(value: Any, dtype: str) -> Variable:
    """A 0-d constant of ``dtype`` (Python numbers would pick their own dtype)."""
    return constant(np.asarray(value, dtype=dtype))
