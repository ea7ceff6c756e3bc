"""Theano's access to a compiled function's inputs and program, mixed into ``Function``.

``f[key]`` and ``f.value[key]`` read (and set) an input's stored value,
``f.container[key]`` is its cell (which ``In(y, value=f.container[key])`` shares
with another function), ``f.outputs`` the output specs, ``f.fn`` the linked
program (``storage_map``, ``nodes``, ``thunks``). A key is the input's
position, its variable, its ``In`` or its name (a name two inputs share is no key).
"""
from __future__ import annotations

from typing import Any

from arignote.compile.sharedvalue import Container


class InputState:
    """Theano's input-state API of ``Function`` (which supplies ``maker``, ``_stored``,
    ``_input_cells``, ``_specs``, ``storage_map``, ``_nodes``, ``_thunks``)."""

    def _index(self, key: Any) -> int:
        inputs = self.maker.inputs
        if isinstance(key, int) and not isinstance(key, bool):
            if 0 <= key < len(inputs):
                return key
        given = self.maker.request["inputs"]  # the caller's In specs (maker.inputs may hold copies)
        for i, spec in enumerate(inputs):
            if key is spec or key is spec.variable or key is given[i]:
                return i
        if isinstance(key, str):
            named = [i for i, spec in enumerate(inputs) if spec.name == key]
            if len(named) == 1:
                return named[0]
        raise KeyError(f"{self._label()} has no input {key!r} (keys: positions, input variables, "
                       "their In specs, or names that one input has)")

    def _container(self, i: int) -> Container:
        if not hasattr(self, "_containers"):
            self._containers: dict[int, Container] = {}
        if i not in self._containers:
            ttype, _, _, _, strict, downcast, label = self._specs[i]
            cell = self._stored[i] if self._stored[i] is not None else self._input_cells[i]
            self._containers[i] = Container(cell, ttype, label, strict, downcast)
        return self._containers[i]

    @property
    def container(self) -> _Containers:
        """Each input's cell: ``f.container[x].storage``, ``f.container[x].value``."""
        return _Containers(self)

    @property
    def value(self) -> _Values:
        """Each input's stored value, by key; settable."""
        return _Values(self)

    @property
    def defaults(self) -> list[tuple[bool, bool, Any]]:
        """Theano's per-input (required, refeed, value): whether the call must give it, whether
        its stored value is given back each call (it has no update), and that value."""
        result = []
        for spec, cell in zip(self.maker.inputs, self._stored):
            stored = cell is not None and cell[0] is not None
            result.append((not stored, stored and spec.update is None, cell[0] if stored else None))
        return result

    @property
    def outputs(self) -> list:
        """The output specs (``Out``), in the order the call computes them (dict keys sorted)."""
        return list(self.maker.outputs)

    @property
    def fn(self) -> LinkedProgram:
        """The linked program: its nodes, thunks and each variable's storage cell."""
        return LinkedProgram(self)


class _Containers:
    def __init__(self, fn: InputState):
        self._fn = fn

    def __getitem__(self, key: Any) -> Container:
        return self._fn._container(self._fn._index(key))

    def __contains__(self, key: Any) -> bool:
        try:
            self._fn._index(key)
        except KeyError:
            return False
        return True


class _Values(_Containers):
    def __getitem__(self, key: Any) -> Any:
        return self._fn[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._fn[key] = value


class LinkedProgram:
    """What a Function runs: ``nodes`` in order, their ``thunks``, ``storage_map`` (each
    variable's cell; a shared variable's is its own storage, which calls read and update),
    and the function's ``allow_gc``."""

    def __init__(self, fn: Any):
        self._fn = fn
        self.nodes, self.thunks = list(fn._nodes), list(fn._thunks)
        self.storage_map = dict(fn.storage_map)
        shared_vars = fn.maker.fgraph.inputs[len(fn.maker.inputs):]
        for (_, shared_storage), var in zip(fn._shared_cells, shared_vars):
            self.storage_map[var] = shared_storage

    @property
    def allow_gc(self) -> bool:
        """The function's ``allow_gc`` (settable: Theano's ``f.fn.allow_gc = False``)."""
        return self._fn.allow_gc

    @allow_gc.setter
    def allow_gc(self, value: bool) -> None:
        self._fn.allow_gc = value
