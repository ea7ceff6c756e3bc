"""Typed lists (Theano's ``theano.typed_list``): a graph value that is a Python list whose
elements all have one type, e.g. vectors of different lengths.

A list is a host value: its ops run on the CPU. No op changes its inputs: each builds
a new list, holding the input list's elements (so it is a view of that list) and
copies of the elements it adds, so a caller's arrays are never stored into a list a
later call could change. ``index``/``count`` compare elements by value (arrays by
``values_eq``, not identity) and return int64 scalars (Theano's returned floatX).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.compile.output_copies import CopyRule, copier, register_copy
from arignote.graph.basic import Apply, Constant, Op, Type, Variable
from arignote.graph.destroyhandler import can_destroy, replace_in_place
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import SliceType, slicetype
from arignote.tensor.variable import as_tensor_variable

__all__ = ["TypedListType", "TypedListVariable", "TypedListConstant", "GetItem", "getitem", "Append",
           "append", "Extend", "extend", "Insert", "insert", "Remove", "remove", "Reverse", "reverse",
           "Index", "index_", "Count", "count", "Length", "length", "MakeList", "make_list"]

_HOST = "a typed list is a Python list on the host"


class TypedListType(Type):
    """Lists of values of ``ttype``; ``depth`` > 0 nests (a list of lists ...)."""

    def __init__(self, ttype: Type, depth: int = 0):
        if depth < 0:
            raise ValueError(f"TypedListType: depth must be 0 or more, got {depth}")
        if not isinstance(ttype, Type):
            raise TypeError(f"TypedListType takes the type of its elements (e.g. tensor.fvector), got "
                            f"{type(ttype).__name__} {ttype!r}")
        self.ttype = TypedListType(ttype, depth - 1) if depth else ttype

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "value", **options: Any) -> list:
        """A new list of the elements, each filtered by the element type (errors name
        the element: ``x[2]``)."""
        if not isinstance(value, (list, tuple)) or (strict and not isinstance(value, list)):
            raise TypeError(f"{name} expects {self}, a Python list, got {type(value).__name__}")
        return [_filter(self.ttype, v, strict, allow_downcast, f"{name}[{k}]", options)
                for k, v in enumerate(value)]

    def values_eq(self, a: Any, b: Any) -> bool:
        return len(a) == len(b) and all(self.ttype.values_eq(x, y) for x, y in zip(a, b))

    def get_depth(self) -> int:
        """How many list levels there are below this one (0: a list of ``ttype`` values)."""
        return self.ttype.get_depth() + 1 if isinstance(self.ttype, TypedListType) else 0

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.ttype == self.ttype

    def __hash__(self) -> int:
        return hash((TypedListType, self.ttype))

    def __str__(self) -> str:
        return f"TypedList <{self.ttype}>"

    __repr__ = __str__


def _list_copier(ttype: TypedListType) -> Any:
    """A list's copy is a new list of copies of its elements."""
    element = copier(ttype.ttype)
    return lambda value: list(map(element, value))


register_copy(TypedListType, CopyRule(_list_copier))


def _filter(ttype: Type, value: Any, strict: bool, allow_downcast: bool | None, name: str,
            options: dict) -> Any:
    if isinstance(ttype, (TensorType, TypedListType)):
        return ttype.filter(value, strict=strict, allow_downcast=allow_downcast, name=name, **options)
    return ttype.filter(value, strict=strict, allow_downcast=allow_downcast)


class _TypedListOperators:
    """The list methods of a typed-list variable, each adding the op of its name."""

    def __getitem__(self, index: Any) -> Variable:
        return getitem(self, index)

    def __len__(self) -> Variable:  # type: ignore[override]
        """The symbolic length (as Theano's: ``tl.__len__()``; ``len(tl)`` needs an int)."""
        return length(self)

    def __bool__(self) -> bool:
        return True

    def append(self, value: Any) -> Variable:
        return append(self, value)

    def extend(self, values: Any) -> Variable:
        return extend(self, values)

    def insert(self, index: Any, value: Any) -> Variable:
        return insert(self, index, value)

    def remove(self, value: Any) -> Variable:
        return remove(self, value)

    def reverse(self) -> Variable:
        return reverse(self)

    def count(self, value: Any) -> Variable:
        return count(self, value)

    def ind(self, value: Any) -> Variable:
        """The position of ``value`` (``index`` is a Variable's attribute already)."""
        return index_(self, value)

    ttype = property(lambda self: self.type.ttype)
    dtype = property(lambda self: self.type.ttype.dtype)
    ndim = property(lambda self: self.type.ttype.ndim + 1)


class TypedListVariable(_TypedListOperators, Variable):
    pass


class TypedListConstant(_TypedListOperators, Constant):
    def signature(self) -> tuple:
        return (self.type, id(self.data))


TypedListType.variable_type = TypedListVariable
TypedListType.constant_type = TypedListConstant


def _as_list(x: Any, op: str) -> Variable:
    if not isinstance(getattr(x, "type", None), TypedListType):
        raise TypeError(f"{op} takes a typed list (a TypedListType variable) first, got "
                        f"{getattr(x, 'type', type(x).__name__)}")
    return x


def _as_element(lst: Variable, value: Any, op: str) -> Variable:
    """``value`` as a variable of the list's element type."""
    var = value if isinstance(value, Variable) else _constant_of(lst.ttype, value)
    converted = lst.ttype.convert_variable(var)
    if converted is None:
        raise TypeError(f"{op}: the list holds {lst.ttype}, got {var.describe()} of type {var.type}: "
                        "cast it to the list's element type")
    return converted


def _constant_of(ttype: Type, value: Any) -> Variable:
    if isinstance(ttype, TensorType):
        return as_tensor_variable(np.asarray(value, dtype=ttype.dtype))
    return ttype.make_constant(ttype.filter(value))


def _as_int_scalar(x: Any, op: str) -> Variable:
    var = as_tensor_variable(x)
    if var.ndim != 0 or var.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"{op}: the position must be an integer scalar, got {var.describe()} "
                        f"({var.type.describe()})")
    return var


class _ListOp(Op):
    """A host op on typed lists; ``inplace`` (Theano's flag) lets it change its list input."""

    __props__ = ("inplace",)
    stays_on_cpu = _HOST

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [0]}
        else:
            self.view_map = {0: [0]}

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        out = inputs[0] if self.inplace else list(inputs[0])
        self._edit(out, node, inputs)
        output_storage[0][0] = out

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        """Change ``out`` (the list input, or a copy of it) into the op's result."""
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{type(self).__name__}{{inplace}}" if self.inplace else type(self).__name__


class GetItem(Op):
    """``lst[i]`` (an element) or ``lst[a:b:c]`` (a list)."""

    __props__ = ()
    view_map = {0: [0]}
    stays_on_cpu = _HOST

    def make_node(self, x: Any, index: Any) -> Apply:
        x = _as_list(x, "getitem")
        if isinstance(index, slice):
            index = slicetype.make_constant(index)
        if isinstance(getattr(index, "type", None), SliceType):
            return Apply(self, [x, index], [x.type()])
        return Apply(self, [x, _as_int_scalar(index, "getitem")], [x.ttype()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        lst, index = inputs
        if isinstance(index, slice):
            output_storage[0][0] = lst[index]
            return
        if not -len(lst) <= int(index) < len(lst):
            raise IndexError(f"getitem: position {int(index)} is outside a typed list of {len(lst)}")
        output_storage[0][0] = lst[int(index)]


class Append(_ListOp):
    """``lst + [value]``."""

    def make_node(self, x: Any, value: Any) -> Apply:
        x = _as_list(x, "append")
        return Apply(self, [x, _as_element(x, value, "append")], [x.type()])

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        out.append(copier(node.inputs[1].type)(inputs[1]))


class Extend(_ListOp):
    """``lst + other`` for another typed list of the same type."""

    def make_node(self, x: Any, other: Any) -> Apply:
        x, other = _as_list(x, "extend"), _as_list(other, "extend")
        if other.type != x.type:
            raise TypeError(f"extend: both lists must have one type, got {x.type} and {other.type}")
        return Apply(self, [x, other], [x.type()])

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        out.extend(map(copier(node.inputs[1].type.ttype), inputs[1]))


class Insert(_ListOp):
    """``lst`` with ``value`` inserted before position ``i`` (Python's ``list.insert``)."""

    def make_node(self, x: Any, index: Any, value: Any) -> Apply:
        x = _as_list(x, "insert")
        return Apply(self, [x, _as_int_scalar(index, "insert"), _as_element(x, value, "insert")], [x.type()])

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        out.insert(int(inputs[1]), copier(node.inputs[2].type)(inputs[2]))


class Remove(_ListOp):
    """``lst`` without its first element equal to ``value``."""

    def make_node(self, x: Any, value: Any) -> Apply:
        x = _as_list(x, "remove")
        return Apply(self, [x, _as_element(x, value, "remove")], [x.type()])

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        del out[_position(node.inputs[0].type, out, inputs[1], "remove")]


class Reverse(_ListOp):
    """``lst`` in reverse order."""

    def make_node(self, x: Any) -> Apply:
        x = _as_list(x, "reverse")
        return Apply(self, [x], [x.type()])

    def _edit(self, out: list, node: Apply, inputs: list) -> None:
        out.reverse()


def _matches(list_type: TypedListType, lst: list, value: Any) -> list[int]:
    return [k for k, item in enumerate(lst) if list_type.ttype.values_eq(item, value)]


def _position(list_type: TypedListType, lst: list, value: Any, op: str) -> int:
    found = _matches(list_type, lst, value)
    if not found:
        raise ValueError(f"{op}: the value is not in the typed list (of {len(lst)} elements)")
    return found[0]


class _Query(Op):
    """An int64 scalar computed from a list and an element."""

    __props__ = ()
    stays_on_cpu = _HOST

    def make_node(self, x: Any, value: Any) -> Apply:
        x = _as_list(x, str(self))
        return Apply(self, [x, _as_element(x, value, str(self))], [TensorType("int64", ())()])

    def __str__(self) -> str:
        return type(self).__name__


class Index(_Query):
    """The position of the first element equal to ``value`` (ValueError when there is none)."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        position = _position(node.inputs[0].type, inputs[0], inputs[1], "index")
        output_storage[0][0] = np.asarray(position, "int64")


class Count(_Query):
    """How many elements equal ``value``."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(len(_matches(node.inputs[0].type, inputs[0], inputs[1])), "int64")


class Length(Op):
    """The number of elements, an int64 scalar."""

    __props__ = ()
    stays_on_cpu = _HOST

    def make_node(self, x: Any) -> Apply:
        return Apply(self, [_as_list(x, "length")], [TensorType("int64", ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(len(inputs[0]), "int64")

    def __str__(self) -> str:
        return "Length"


class MakeList(Op):
    """A typed list of the given variables (all of one type)."""

    __props__ = ()
    stays_on_cpu = _HOST

    def make_node(self, values: Sequence[Any]) -> Apply:
        if not isinstance(values, (list, tuple)) or not values:
            raise TypeError(f"make_list takes a non-empty list of variables, got {values!r}")
        items = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in values]
        types = {str(v.type) for v in items if v.type != items[0].type}
        if types:
            raise TypeError(f"make_list: every element must be of one type, {items[0].type}; got also "
                            f"{', '.join(sorted(types))}")
        return Apply(self, items, [TypedListType(items[0].type)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = list(map(copier(node.inputs[0].type), inputs))


getitem, append, extend, insert = GetItem(), Append(), Extend(), Insert()
remove, reverse, index_, count = Remove(), Reverse(), Index(), Count()
length, make_list = Length(), MakeList()


class InplaceTypedList(GraphRewriter):
    """The list ops change their list input in place where nothing else reads it
    (Theano's ``typed_list_inplace_opt``)."""

    name = "typed_list_inplace_opt"

    def apply(self, fgraph: FunctionGraph) -> int:
        changes = 0
        for node in fgraph.toposort():
            op = node.op if node in fgraph.apply_nodes else None
            if isinstance(op, _ListOp) and not op.inplace and can_destroy(fgraph, node, 0) and replace_in_place(
                    fgraph, node.outputs[0], type(op)(inplace=True)(*node.inputs), self.name):
                changes += 1
        return changes


rewrites.register(InplaceTypedList(), "inplace", "fast_run")
