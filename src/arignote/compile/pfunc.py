"""Theano's ``compile.pfunc``: ``pfunc``, ``rebuild_collect_shared`` and ``clone``.

``rebuild_collect_shared`` copies a graph with replacements and gathers, on the
way, the shared variables it reads and their default updates: what
``function()`` needs, exposed for code that builds graphs from graphs.
``clone`` is the user-facing form (``theano.clone``); ``pfunc`` is
``function()`` under Theano's older argument names.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable, Mapping, Sequence

from arignote.compile.function import function
from arignote.compile.io import In, Out
from arignote.compile.sharedvalue import SharedVariable, shared
from arignote.graph.basic import Constant, Variable
from arignote.graph.traversal import io_toposort

__all__ = ["pfunc", "rebuild_collect_shared", "clone", "iter_over_pairs"]


def iter_over_pairs(pairs: Mapping | Iterable) -> Iterable:
    """The (key, value) pairs of a dict, or the pairs of any iterable of pairs."""
    return pairs.items() if isinstance(pairs, Mapping) else pairs


def rebuild_collect_shared(outputs: Any, inputs: Sequence[Variable] | None = None,
                           replace: Mapping | Iterable | None = None,
                           updates: Mapping | Iterable | None = None, rebuild_strict: bool = True,
                           copy_inputs_over: bool = True,
                           no_default_updates: bool | Sequence[SharedVariable] = False) -> tuple:
    """Copy the graph of ``outputs`` (variables or ``Out``; one or a list) with ``replace``
    (old -> new; a new value that is not a variable becomes a shared one) applied.

    Returns ``(inputs, outputs, [clone_d, update_d, update_expr, shared_inputs])``:
    the copied inputs and outputs, the old -> new map, each updated shared
    variable's (copied) update expression, the ``(shared, update)`` pairs in
    order, and the shared variables the graph reads. Default updates of shared
    variables are gathered unless ``no_default_updates`` (True, or the ones
    listed). ``copy_inputs_over=False`` copies ownerless variables too;
    ``rebuild_strict`` requires every rebuilt node to keep its types.
    """
    clone_d: dict = {}
    update_d: dict = {}
    update_expr: list = []
    shared_inputs: list = []

    def leaf(v: Variable) -> Variable:
        if isinstance(v, SharedVariable):
            if v not in shared_inputs:
                shared_inputs.append(v)
            skip = no_default_updates is True or (
                not isinstance(no_default_updates, bool) and v in no_default_updates)
            if v.default_update is not None and not skip and v not in update_d:
                if v.default_update.type != v.type:
                    raise TypeError(f"the default update of {v.describe()} is {v.default_update.type}, "
                                    f"not the variable's type {v.type}")
                update_d[v] = v.default_update
                update_expr.append((v, v.default_update))
        copy = not copy_inputs_over and not isinstance(v, Constant)
        return clone_d.setdefault(v, v.clone() if copy else v)

    def rebuild(v: Variable) -> Variable:
        if v in clone_d:
            return clone_d[v]
        for node in io_toposort(list(clone_d), [v]):
            if node in clone_d:
                continue
            new_inputs = [clone_d[i] if i in clone_d else leaf(i) for i in node.inputs]
            clone_d[node] = new = node.clone_with_new_inputs(new_inputs, strict=rebuild_strict)
            for old_out, new_out in zip(node.outputs, new.outputs):
                clone_d.setdefault(old_out, new_out)
        return clone_d[v] if v in clone_d else leaf(v)

    for old, new in list(iter_over_pairs(replace or [])):
        if not isinstance(old, Variable):
            raise TypeError(f"replace/givens keys must be symbolic variables, got {old!r}")
        if old in clone_d:
            raise ValueError(f"replace/givens: {old.describe()} is replaced, but an earlier "
                             "replacement is computed from it; give replacements that do not "
                             "depend on each other's keys (e.g. not {a: b, b: a + 1})")
        clone_d[old] = rebuild(new if isinstance(new, Variable) else shared(new))

    input_variables = [clone_d.setdefault(i, i if copy_inputs_over else i.clone()) for i in inputs or []]
    for v in input_variables:
        if isinstance(v, SharedVariable):
            raise TypeError(f"shared variable {v.describe()} cannot be an explicit input: give "
                            "a new variable for it with givens= instead")

    for target, value in iter_over_pairs(updates or []):
        if not isinstance(target, SharedVariable):
            raise TypeError(f"update target {target!r} must be a shared variable")
        if target in update_d:
            raise ValueError(f"shared variable {target.describe()} already has an update expression")
        update_d[target] = value
        update_expr.append((target, value))

    def rebuild_output(out: Any) -> Any:
        if isinstance(out, Out):
            return Out(rebuild(out.variable), borrow=out.borrow)
        if isinstance(out, Variable):
            return rebuild(out)
        raise TypeError(f"outputs must be symbolic variables or Out instances, got "
                        f"{type(out).__name__} {out!r}")

    if outputs is None:
        cloned: Any = []
    elif isinstance(outputs, (list, tuple)):
        cloned = [rebuild_output(o) for o in outputs]
    else:
        cloned = rebuild_output(outputs)

    i = 0
    while i < len(update_expr):  # updates may bring in shared variables with updates of their own
        target, value = update_expr[i]
        update_d[target] = rebuild(value if isinstance(value, Variable) else
                                   _as_update(value))
        if target not in shared_inputs:
            shared_inputs.append(target)
        i += 1
    return input_variables, cloned, [clone_d, update_d, update_expr, shared_inputs]


def _as_update(value: Any) -> Variable:
    from arignote.tensor.variable import as_tensor_variable
    return as_tensor_variable(value)


def clone(output: Any, replace: Mapping | Iterable | None = None, strict: bool = True,
          share_inputs: bool = True) -> Any:
    """A copy of the graph of ``output`` (a variable or a list) with ``replace`` applied
    (old -> new; the new may be computed from the old, as in ``{x: x + 1}``).

    ``share_inputs=False`` copies the graph's ownerless variables too (copied
    shared variables keep the same storage, so the same value); ``strict``
    requires each replacement to have its variable's type.
    """
    if replace is not None and not isinstance(replace, (Mapping, list, tuple)):
        raise ValueError(f"clone: replace must be a dict or a list of pairs, got "
                         f"{type(replace).__name__} {replace!r}")
    pairs = list(iter_over_pairs(replace or []))
    placeholders = [(old, old.type()) for old, _ in pairs]
    # Two steps, as Theano: the replaced variables become fresh placeholders first, so a
    # replacement computed from the variable it replaces does not replace itself.
    _, first, _ = rebuild_collect_shared(output, [], placeholders, [], strict, share_inputs)
    final = [(hole, new) for (_, hole), (_, new) in zip(placeholders, pairs)]
    _, outs, _ = rebuild_collect_shared(first, [], final, [], strict, share_inputs)
    return outs


def pfunc(params: Sequence[Any], outputs: Any = None, mode: Any = None, updates: Any = None,
          givens: Any = None, no_default_updates: bool | Sequence[SharedVariable] = False,
          accept_inplace: bool = False, name: str | None = None, rebuild_strict: bool = True,
          allow_input_downcast: bool | None = None, profile: Any = None,
          on_unused_input: str | None = None, output_keys: Any = None) -> Any:
    """``function()`` under Theano's ``pfunc`` signature (``params``: variables or ``In``)."""
    if not isinstance(params, (list, tuple)):
        raise TypeError(f"pfunc: params must be a list or a tuple, got {type(params).__name__}")
    if not isinstance(no_default_updates, (bool, list, tuple)):
        raise TypeError("pfunc: no_default_updates must be a bool or a list of shared variables")
    for param in params:
        if isinstance(param, Constant):
            raise TypeError(f"pfunc: constants are not allowed as parameters, got {param}")
        if not isinstance(param, (Variable, In)):
            raise TypeError(f"pfunc: unknown parameter type {type(param).__name__}")
    if output_keys is not None and isinstance(outputs, (list, tuple)):
        outputs = dict(zip(output_keys, outputs))
    return function(list(params), outputs, mode=mode, updates=updates, givens=givens,
                    no_default_updates=no_default_updates, accept_inplace=accept_inplace, name=name,
                    rebuild_strict=rebuild_strict, allow_input_downcast=allow_input_downcast,
                    profile=profile, on_unused_input=on_unused_input)
