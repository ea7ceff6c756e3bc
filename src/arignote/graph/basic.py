"""The generic IR: Type, Variable, Constant, Apply and Op.

Nothing here knows about tensors. A graph is a DAG of Apply nodes, each an Op
applied to input Variables and producing output Variables; a Variable with no
owner is a graph input or a Constant.

Pickling (and ``copy.deepcopy``) never recurses along a graph: a variable
computed by a node is pickled as "output ``index`` of that node" together with
the nodes it depends on as one flat list in topological order (see "Copies and
pickles" in docs/architecture.md), so graphs of any depth pickle.
"""
from __future__ import annotations

import copyreg
import itertools
import os
import sys
import threading
import weakref
from types import SimpleNamespace
from typing import Any
from collections.abc import Sequence

from arignote.config import config
from arignote.graph import testvalue

class Type:
    """What values a Variable may hold; ``filter`` validates and converts them."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise NotImplementedError

    def is_valid_value(self, value: Any) -> bool:
        try:
            self.filter(value, strict=True)
            return True
        except (TypeError, ValueError):
            return False

    # The layer that defines a Type sets the Variable classes its graphs use.
    variable_type: type = None  # type: ignore[assignment]
    constant_type: type = None  # type: ignore[assignment]

    def make_variable(self, name: str | None = None) -> Variable:
        return (self.variable_type or Variable)(self, name=name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        return (self.constant_type or Constant)(self, value, name=name)

    def __call__(self, name: str | None = None) -> Variable:
        return self.make_variable(name)

    def values_eq(self, a: Any, b: Any) -> bool:
        return a == b

    def convert_variable(self, var: Variable) -> Variable | None:
        """Return ``var`` as a Variable of this type, or None when it cannot be."""
        return var if var.type == self else None


class Variable:
    """A value in the graph: an input, a constant, or an output of an Apply."""

    # Attributes that are caches, dropped when the variable is pickled or deep-copied.
    _transient: tuple[str, ...] = ()
    # Numbers the ``auto_name`` of every variable made (Theano's name for the counter).
    __count__ = itertools.count()

    def __init__(self, type: Type, owner: Apply | None = None,
                 index: int | None = None, name: str | None = None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.auto_name = f"auto_{next(Variable.__count__)}"
        self.tag = testvalue.Tag(type, trace=user_line())

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            return f"{self.owner.op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        """``str(self)``; with ``config.print_test_value``, the test value's repr on a second line."""
        if config.print_test_value:
            try:
                return f"{self}\n{self.get_test_value()!r}"
            except testvalue.TestValueError:
                pass
        return str(self)

    def describe(self) -> str:
        """Name the variable for an error message: its name, else where it was made."""
        if self.name:
            return repr(self.name)
        where = self.tag.trace
        return f"{self} (made at {where})" if where else str(self)

    def clone(self) -> Variable:
        """An ownerless copy with the same type and name."""
        cp = type(self)(self.type, None, None, self.name)
        cp.tag = testvalue.Tag(self.type, **vars(self.tag))
        return cp

    def get_test_value(self) -> Any:
        """The value graphs are evaluated on while ``config.compute_test_value`` is on:
        ``tag.test_value`` (a constant's data, a shared variable's value)."""
        try:
            return self.tag.test_value
        except AttributeError:
            raise testvalue.TestValueError(f"{self.describe()} has no test value: set "
                                           f"{self.name or 'var'}.tag.test_value = ...") from None

    def get_parents(self) -> list[Apply]:
        return [self.owner] if self.owner is not None else []

    # -------------------------------------------------------------- pickling
    def __reduce_ex__(self, protocol: int) -> tuple:
        if self.owner is None:
            return copyreg.__newobj__, (type(self),), self._state()
        return _output_of, (_Nodes(self.owner), _token(self.owner), self.index)

    def __copy__(self) -> Variable:
        """A shallow copy, as Python's default would make (``clone()`` makes a new input)."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def _state(self) -> dict:
        state = dict(self.__dict__)
        for name in self._transient:
            state.pop(name, None)
        return state


class Constant(Variable):
    """A Variable whose value is fixed when the graph is built."""

    def __init__(self, type: Type, data: Any, name: str | None = None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data)

    def signature(self) -> tuple:
        return (self.type, _hashable(self.data))

    def get_test_value(self) -> Any:
        return self.data

    def equals(self, other: Any) -> bool:
        """Theano's constant comparison: another constant of the same type and value."""
        return isinstance(other, Constant) and self.signature() == other.signature()

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        text = str(self.data)
        return text if len(text) <= 20 else text[:10] + "..." + text[-7:]

    def clone(self) -> Constant:
        return type(self)(self.type, self.data, self.name)


class Apply:
    """One application of an Op to input Variables."""

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        for i, out in enumerate(self.outputs):
            if out.owner is not None and (out.owner is not self or out.index != i):
                raise ValueError(f"output {i} of {op} already belongs to another node")
            out.owner = self
            out.index = i
        self.tag = SimpleNamespace()

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    @property
    def out(self) -> Variable:
        return self.outputs[0]

    def default_output(self) -> Variable:
        index = getattr(self.op, "default_output", None)
        if index is not None:
            return self.outputs[index]
        if len(self.outputs) != 1:
            raise ValueError(f"{self.op} has {len(self.outputs)} outputs; pick one by index")
        return self.outputs[0]

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """Apply the same op to new inputs: same types keep the outputs' types."""
        if all(a.type == b.type for a, b in zip(inputs, self.inputs)):
            return Apply(self.op, inputs, [o.clone() for o in self.outputs])
        if strict:
            raise TypeError(f"cannot rebuild {self.op}: the new inputs' types differ "
                            f"({[str(i.type) for i in inputs]} for {[str(i.type) for i in self.inputs]})")
        return self.op.make_node(*inputs)

    def __str__(self) -> str:
        return f"{self.op}({', '.join(map(str, self.inputs))})"

    __repr__ = __str__

    def __reduce_ex__(self, protocol: int) -> tuple:
        return _node_of, (_Nodes(self), _token(self))

    def __copy__(self) -> Apply:
        new = Apply.__new__(Apply)
        new.__dict__.update(self.__dict__)
        return new


class Op:
    """An operation. Subclasses declare ``__props__`` (identity), ``make_node``,
    ``perform`` (the numpy reference), and when they can, ``grad``,
    ``infer_shape``, ``view_map`` and ``destroy_map``.

    ``view_map = {out: [inp]}`` says output ``out`` may be a view of input
    ``inp``; ``destroy_map`` says the op overwrites that input. The executor and
    the aliasing promises rely on both being truthful.
    """

    __props__: tuple[str, ...] = ()
    view_map: dict[int, list[int]] = {}
    destroy_map: dict[int, list[int]] = {}
    default_output: int | None = None
    # True when the output is the input's value moved or seen with axes added (a
    # transfer, a padding dimshuffle): errors then name the input (``user_variable``).
    passes_value: bool = False

    # Whether the class (or a base below Op) declares __props__: ops of one class with equal
    # props are equal (and merge); an op of a class that declares none is equal only to
    # itself, as in Theano, so a user's ``Scale(2)`` and ``Scale(3)`` stay two nodes.
    _by_props = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._by_props = any("__props__" in k.__dict__ for k in cls.__mro__ if k is not Op)

    def _props(self) -> tuple:
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other: object) -> bool:
        if not self._by_props:
            return self is other
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self) -> int:
        # Computed once per op (merging hashes every node on every pass); assigning any
        # attribute drops it, and it is never pickled or copied (hashes differ per process).
        found = self.__dict__.get("_hash")
        if found is None:
            key = (type(self), tuple(_hashable(p) for p in self._props())) if self._by_props else id(self)
            found = self.__dict__["_hash"] = hash(key)
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__.pop("_hash", None)
        object.__setattr__(self, name, value)

    def __getstate__(self) -> dict:
        state = self.__dict__
        return {k: v for k, v in state.items() if k != "_hash"} if "_hash" in state else state

    def __str__(self) -> str:
        if self.__props__:
            return f"{type(self).__name__}{{{', '.join(f'{p}={getattr(self, p)}' for p in self.__props__)}}}"
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)  # so a subclass's __str__ is its repr too

    def make_node(self, *inputs: Any) -> Apply:
        """Theano's default for an op that declares ``itypes`` and ``otypes`` (lists of types):
        the inputs must have those types, the outputs are new variables of ``otypes``."""
        itypes, otypes = getattr(self, "itypes", None), getattr(self, "otypes", None)
        if itypes is None or otypes is None:
            raise NotImplementedError(f"{type(self).__name__} has no make_node(): define it, or declare "
                                      "the types of its inputs and outputs as itypes and otypes")
        if len(inputs) != len(itypes):
            raise ValueError(f"{self} takes {len(itypes)} inputs (itypes), got {len(inputs)}")
        for k, (var, want) in enumerate(zip(inputs, itypes)):
            if getattr(var, "type", None) != want:
                raise TypeError(f"{self}: input {k} ({var}) has type {getattr(var, 'type', type(var))}, "
                                f"expected {want} (itypes); convert it first")
        return Apply(self, list(inputs), [t() for t in otypes])

    def build(self, *inputs: Any, **kwargs: Any) -> Apply:
        """``make_node``, plus what building a graph computes on the way: the outputs' test
        values while ``config.compute_test_value`` is on. For callers that need the node."""
        node = self.make_node(*inputs, **kwargs)
        if config.compute_test_value != "off":
            testvalue.compute(node)
        return node

    def __call__(self, *inputs: Any, return_list: bool = False, **kwargs: Any) -> Any:
        """The output (``default_output``'s, or the one there is), else the list of them;
        ``return_list=True``: always the list (Theano's keyword)."""
        node = self.build(*inputs, **kwargs)
        if return_list:
            return list(node.outputs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        return node.outputs[0] if len(node.outputs) == 1 else node.outputs

    def perform(self, node: Apply, inputs: list, output_storage: list[list], *params: Any) -> None:
        # A Theano op written in C only (``c_code``, for Theano's C linker) runs nowhere here.
        c_only = (": its c_code() is C for Theano's C linker, which arignote does not compile; give the op "
                  "a perform() computing the same with numpy") if callable(getattr(self, "c_code", None)) else ""
        raise NotImplementedError(f"{type(self).__name__} has no perform(){c_only}")

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        raise NotImplementedError(f"{type(self).__name__} has no infer_shape()")

    def make_thunk(self, node: Apply, storage_map: dict, compute_map: dict | None, no_recycling: Sequence,
                   impl: str | None = None) -> Any:
        """Theano's thunk of one node over ``storage_map``'s cells: calling it empties the
        outputs in ``no_recycling``, runs this op (its CPU kernel, else ``perform``), marks
        the outputs done in ``compute_map`` and returns the inputs it still needs (none: only
        ``ifelse`` is lazy here). An op that overrides this gets its own thunk run by
        ``function`` too (compile/linkers.py, ``node_thunk``)."""
        from arignote.backends.cpu import make_thunk
        run = make_thunk(self, node, [storage_map[v] for v in node.inputs],
                         [storage_map[v] for v in node.outputs])
        fresh = [storage_map[v] for v in node.outputs if v in set(no_recycling)]
        done = [compute_map[v] for v in node.outputs] if compute_map is not None else []

        def thunk() -> list:
            for cell in fresh:
                cell[0] = None
            run()
            for cell in done:
                cell[0] = True
            return []
        thunk.inputs = [storage_map[v] for v in node.inputs]  # type: ignore[attr-defined]
        thunk.outputs = [storage_map[v] for v in node.outputs]  # type: ignore[attr-defined]
        thunk.lazy = False  # type: ignore[attr-defined]
        return thunk

    def grad(self, inputs: list, output_grads: list) -> list:
        """Theano's ``Op.grad``: the gradients of ``inputs`` (this op applied to them) given
        its outputs' gradients, by the rule ``gradient.register_grad`` holds for the op's
        class; NotImplementedError where there is none. Ops may override it instead. As
        Theano asked of ``grad``, an input without a gradient (an integer one) gets a
        ``DisconnectedType`` variable, never None."""
        from arignote.gradient import GRAD_RULES, input_grads
        from arignote.graph.types import disconnected_type
        if not any(cls in GRAD_RULES for cls in type(self).__mro__):
            raise NotImplementedError(f"{type(self).__name__} has no gradient: define its grad() or "
                                      "register a rule with arignote.gradient.register_grad")
        grads = input_grads(self.make_node(*inputs), list(output_grads))
        return [disconnected_type() if g is None else g for g in grads]

    def rebuild(self, inputs: list[Variable]) -> Apply | None:
        """This op applied to ``inputs`` whose types differ from those it was applied
        to (a graph loaded where a shared variable lives on another device); None
        when it is not needed there (a transfer to where its input already is)."""
        return self.make_node(*inputs)


def perform_of(node: Apply) -> Any:
    """``perform(node, inputs, output_storage)`` for ``node``: its op's ``perform``, given as
    a fourth argument the node's params when the op has Theano's ``get_params(node)``
    (filtered by its ``params_type`` when it declares one), computed here, once."""
    op = node.op
    get_params = getattr(op, "get_params", None)
    if get_params is None:
        return op.perform
    params = get_params(node)
    params_type = getattr(op, "params_type", None)
    if params_type is not None:
        params = params_type.filter(params)

    def perform(node: Apply, inputs: list, output_storage: list[list]) -> None:
        op.perform(node, inputs, output_storage, params)
    return perform


def user_variable(var: Variable) -> Variable:
    """The variable the user wrote behind ``var``: unnamed results of ops that only
    move a value or pad it with axes (transfers, ``pad_left``) are walked back, so an
    error names ``'x'`` rather than ``GpuFromHost.0``."""
    while var.name is None and var.owner is not None and var.owner.op.passes_value:
        var = var.owner.inputs[0]
    return var


def _hashable(value: Any) -> Any:
    """A hashable stand-in for a prop or constant value (arrays by content)."""
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if hasattr(value, "tobytes") and hasattr(value, "dtype"):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    raise TypeError(f"cannot hash {type(value).__name__} {value!r}")


class _Caller(threading.local):
    line: str | None = None


_caller = _Caller()


class traced_to_caller:
    """Within, every new Variable's trace is the line that entered it, found once: the
    rewrites of ``function()`` make variables under deep stacks, and walking each one up to
    the user's frame (Python makes a frame object for every level on the way) cost about
    10 us a variable, 1.5-2 ms of a new process's first MLP step. (A class, not a
    generator: contextlib's frame would be the first one outside arignote.)"""

    def __enter__(self) -> None:
        self.outer = _caller.line
        if self.outer is None:
            _caller.line = user_line()

    def __exit__(self, *exc: object) -> None:
        _caller.line = self.outer


def user_line() -> str | None:
    """File and line of the first frame outside arignote: where the user made this."""
    if _caller.line is not None:
        return _caller.line
    frame = sys._getframe(1)
    while frame is not None:
        if _PACKAGE_DIR not in frame.f_code.co_filename:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that points at the user's line.

    Call it in the function that calls ``warnings.warn``: the count skips every
    frame inside arignote, however deep the library's own calls went.
    """
    level = 1
    frame = sys._getframe(1)
    while frame is not None and _PACKAGE_DIR in frame.f_code.co_filename:
        frame = frame.f_back
        level += 1
    return level


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- pickling
# Within one pickle each node and each variable computed by a node is stood for
# by one token (kept per object, so every reference in a pickle is to the same
# token): a node token loads as an empty Apply, a variable's shell as the
# variable without its owner. Records then link them. Because shells are made
# before their state is loaded, a variable whose state refers back to its own
# node (a random draw's ``update`` pair) loads without recursion.
class _NodeToken:
    def __reduce__(self) -> tuple:
        return _empty, (Apply,)


def _empty(cls: type) -> Any:
    return cls.__new__(cls)


class _Shell:
    def __init__(self, var: Variable):
        self.var = weakref.ref(var)

    def __reduce__(self) -> tuple:
        var = self.var()
        state = var._state()
        del state["owner"], state["index"]
        return _empty, (type(var),), state


_TOKENS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _token(node: Apply) -> _NodeToken:
    return _TOKENS.setdefault(node, _NodeToken())


def _shell(var: Variable) -> _Shell:
    return _TOKENS.setdefault(var, _Shell(var))


class _Nodes:
    """The nodes ``node`` depends on, itself last, pickled as a flat list of records
    ``(token, op, inputs, input types, output shells)``: an input is a variable
    when it has no owner, else (token of its owner, index)."""

    def __init__(self, node: Apply):
        self.node = node

    def __reduce__(self) -> tuple:
        from arignote.graph.traversal import io_toposort
        records = []
        for node in io_toposort([], self.node.inputs) + [self.node]:
            refs = [i if i.owner is None else (_token(i.owner), i.index) for i in node.inputs]
            records.append((_token(node), node.op, refs, tuple(i.type for i in node.inputs),
                            [_shell(o) for o in node.outputs]))
        return _link, (records,)


def _link(records: list) -> None:
    """Fill each node not filled yet by an earlier record of the same pickle."""
    for node, op, refs, types, outputs in records:
        if "outputs" in node.__dict__:
            continue
        inputs = [r if isinstance(r, Variable) else r[0].outputs[r[1]] for r in refs]
        if all(i.type == t for i, t in zip(inputs, types)):
            for out in outputs:
                out.__dict__.setdefault("owner", None)  # a shell whose state loads later
            Apply.__init__(node, op, inputs, outputs)
            continue
        # An input's type changed (a shared variable loaded on another device): the
        # op builds its node again, keeping the names and tags of its outputs.
        rebuilt = op.rebuild(inputs)
        if rebuilt is None:  # not needed there: its outputs are its inputs
            node.__dict__.update(op=op, inputs=inputs, outputs=inputs[:len(outputs)], tag=SimpleNamespace())
            continue
        for new, old in zip(rebuilt.outputs, outputs):
            new.name = getattr(old, "name", None)
            new.tag = getattr(old, "tag", new.tag)
        node.__dict__.update(rebuilt.__dict__)
        for out in node.outputs:
            out.owner = node


def _output_of(done: None, node: Apply, index: int) -> Variable:
    return node.outputs[index]


def _node_of(done: None, node: Apply) -> Apply:
    return node
