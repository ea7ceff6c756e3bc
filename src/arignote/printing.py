"""Reading graphs as text: ``debugprint`` (the node tree) and ``pp`` (an expression).

``debugprint`` answers "what will actually run": given a compiled Function it
prints the graph after rewrites, with each node's position in the execution
order, so a user can see which ops (``Gpu*`` or not) their code became. A loop
(``Scan``) hides its body from that tree, so its inner graph follows it.
``pp`` answers "what did I write": a one-line infix expression.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from functools import singledispatch
from typing import Any, TextIO
from collections.abc import Sequence

import numpy as np

from arignote.compile.io import In, Out
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.graph.fg import FunctionGraph
from arignote.tensor.blas import Dot
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.subtensor.index import ARRAY, SCALAR, IndexSlice
from arignote.tensor.subtensor.read import AdvancedSubtensor1, IndexOp
from arignote.tensor.subtensor.write import AdvancedIncSubtensor1

__all__ = ["debugprint", "pp", "pprint", "pp_apply", "pydotprint", "pydot_graph", "Print",
           "pydot_imported", "pydot_imported_msg", "min_informative_str", "var_descriptor"]


def _missing_for_drawing() -> list[str]:
    """What pydotprint lacks to draw: the optional ``pydot`` package, Graphviz's ``dot`` program."""
    return [what for what, there in (('the pydot package (pip install "arignote[graphviz]")',
                                      importlib.util.find_spec("pydot") is not None),
                                     ("Graphviz's dot program (install Graphviz)", shutil.which("dot") is not None))
            if not there]


# Theano's flag, which scripts (and Theano's tests) test before calling pydotprint: whether it can
# draw. pydot_graph and d3viz need only pydot (d3viz.formatting has its own flag).
_MISSING = _missing_for_drawing()
pydot_imported = not _MISSING
pydot_imported_msg = f"pydotprint cannot draw: it needs {' and '.join(_MISSING)}" if _MISSING else ""

_ID_STYLES = ("CHAR", "int", "id", "")


def debugprint(obj: Any, depth: int = -1, print_type: bool = False, file: TextIO | str | None = None,
               ids: str = "CHAR", stop_on_name: bool = False, done: dict | None = None,
               print_storage: bool = False, print_clients: bool = False,
               used_ids: dict | None = None) -> Any:
    """Print the graph of ``obj`` as an indented tree, Theano's format.

    ``obj`` is a Variable, an Apply node, a list of them, a FunctionGraph or a
    compiled Function (its graph after rewrites, update expressions included,
    each node followed by its position in the execution order). Each line is
    ``op [id A] 'name'``, children indented under `` |``; a node already shown
    is printed again as its line only, so shared subtrees appear once and are
    found by their id. ``ids`` is ``'CHAR'`` (A, B, ..., Z, BA...), ``'int'``,
    ``'id'`` (Python ids) or ``''`` (none). ``print_type`` adds each
    variable's type. ``depth`` (-1: all) limits how many levels each tree shows;
    ``stop_on_name`` does not expand a named variable's inputs. The positions of
    the arguments are Theano's (``debugprint(obj, depth, print_type, file, ids,
    stop_on_name, done, print_storage, print_clients, used_ids)``).

    For a compiled Function, ``print_storage`` adds each variable's storage cell
    (``[None]`` once a call has freed it; with ``allow_gc=False`` the last call's
    intermediate values), and ``print_clients`` the users of each variable that
    has more than one (``('output', '')`` for an output of the function, else a
    node's id and position). ``done`` (and ``used_ids``), a dict passed to several
    calls, makes them share ids, and a node one call expanded is not expanded
    again. A compiled Function with a profile that has been called shows each node's
    time after ``-->``: its own seconds and share of the calls' time, then the
    same for it and everything it depends on (a loose upper bound: an ancestor
    shared by two inputs counts twice), as Theano did.

    Ops with an inner graph (``inner_inputs`` -> ``inner_outputs``, as Scan
    has) get it printed after the trees, under ``Inner graphs of the scan
    ops:``: the node's line again, then each inner output's tree behind
    `` >``. For an op laid out as Scan is, each inner input names the outer
    input it reads: ``x_t [id F] -> [id B]``.

    ``file='str'`` returns the text; otherwise it is written to ``file``,
    which is returned, or to stdout (returning None).
    """
    if ids not in _ID_STYLES:
        raise ValueError(f"debugprint(ids={ids!r}): use one of {', '.join(map(repr, _ID_STYLES))}")
    outputs, order, literals = _roots(obj)
    printer = _TreePrinter(print_type, ids, order, depth, stop_on_name, done if done is not None else used_ids)
    fgraph = obj if isinstance(obj, FunctionGraph) else getattr(getattr(obj, "maker", None), "fgraph", None)
    if print_storage:
        printer.storage = getattr(obj, "storage_map", None)
    if print_clients and fgraph is not None:
        printer.clients = fgraph.clients
    profile = getattr(obj, "profile", None) if fgraph is not None else None
    if profile is not None and profile.fct_callcount:
        printer.timing(profile)
    printer.lines += literals
    for var in outputs:
        printer.tree(var)
    printer.inner_graphs()
    text = "\n".join(printer.lines) + "\n"
    if file == "str":
        return text
    if file is None:  # Theano returned nothing here, so a prompt prints no stream object
        sys.stdout.write(text)
        return None
    file.write(text)
    return file


def _roots(obj: Any) -> tuple[list[Variable], dict[Apply, int] | None, list[str]]:
    """The variables to print, for a compiled graph each node's execution position, and the
    text of the numbers and arrays among ``obj`` (printed as they are, before the trees)."""
    fgraph = getattr(getattr(obj, "maker", None), "fgraph", None)
    if isinstance(obj, FunctionGraph):
        fgraph = obj
    if fgraph is not None:
        return list(fgraph.outputs), {node: i for i, node in enumerate(fgraph.toposort())}, []
    items = obj if isinstance(obj, (list, tuple)) else [obj]
    outputs: list[Variable] = []
    literals: list[str] = []
    for item in items:
        if isinstance(item, (In, Out)):
            item = item.variable
        if isinstance(item, Apply):
            outputs.extend(item.outputs)
        elif isinstance(item, Variable):
            outputs.append(item)
        elif isinstance(item, (int, float, np.ndarray, np.generic)) and not isinstance(item, bool):
            literals.append(str(item))
        else:
            raise TypeError(f"debugprint() takes variables, Apply nodes, In/Out, numbers, arrays, a "
                            f"FunctionGraph or a compiled function, got {type(item).__name__} {item!r}")
    return outputs, None, literals


class _TreePrinter:
    """The lines of one ``debugprint`` call; ids and expanded nodes are shared by all its trees."""

    def __init__(self, print_type: bool, ids: str, order: dict[Apply, int] | None,
                 depth: int = -1, stop_on_name: bool = False, done: dict | None = None):
        self.print_type, self.depth, self.stop_on_name = print_type, depth, stop_on_name
        self.ids = ids
        self.order = order
        # ``done`` is shared with the caller's other calls: their ids, and their expanded nodes.
        self.id_of: dict[Any, str] = {} if done is None else done
        self.expanded: set[Apply] = {k for k in self.id_of if isinstance(k, Apply)}
        self.storage: dict | None = None  # print_storage: the function's cells
        self.clients: dict | None = None  # print_clients: the graph's clients
        self.times: dict[Apply, str] = {}  # a profiled function: each node's timing text
        self.lines: list[str] = []
        # Nodes with an inner graph, in the order they were first shown.
        self.loops: list[Apply] = []
        # Inner input -> the outer input it reads, for the inner graph being printed.
        self.sources: dict[Variable, Variable] = {}

    def tree(self, top: Variable, prefix: str = "") -> None:
        # An explicit stack rather than recursion: deep graphs must print too.
        stack = [(top, prefix, prefix, 1)]
        while stack:
            var, line_prefix, child_prefix, level = stack.pop()
            self.lines.append(line_prefix + self.label(var))
            node = var.owner
            if node is None or node in self.expanded:
                continue
            self.expanded.add(node)
            if _inner_graph(node.op) is not None:
                self.loops.append(node)
            if level == self.depth or (self.stop_on_name and var.name is not None):
                continue
            last = len(node.inputs) - 1
            for i in range(last, -1, -1):
                # The bar continues below a child only while siblings follow it.
                stack.append((node.inputs[i], child_prefix + " |",
                              child_prefix + ("  " if i == last else " |"), level + 1))

    def inner_graphs(self) -> None:
        """Each inner graph met so far (the list grows while nested loops are printed)."""
        if self.loops:
            self.lines += ["", "Inner graphs of the scan ops:"]
        for node in self.loops:
            self.lines += ["", self.label(node.outputs[0])]
            self.sources = _inner_sources(node)
            for out in _inner_graph(node.op)[1]:
                self.tree(out, prefix=" >")
        self.sources = {}

    def label(self, var: Variable) -> str:
        """Theano's line, spacing included: ``op [id A] <type> 'name'   order`` for a node (the
        two empty fields are Theano's destroy and view maps), ``x [id B] <type>`` for an input."""
        ident = f"[id {self.key_id(var)}]" if self.ids else ""
        typ = f" <{var.type}>" if self.print_type else ""
        node = var.owner
        if node is None:
            text = f"{_variable_text(var)} {ident}{typ}{self.cell(var)}"
            if self.ids and var in self.sources:
                text += f" -> [id {self.key_id(self.sources[var])}]"
            return text
        order = self.order.get(node, "") if self.order is not None else ""
        return (f"{_node_text(var)} {ident}{typ} '{var.name or ''}'   {order}"
                f"{self.cell(node.outputs[0])}{self.users(var)}{self.times.get(node, '')}")

    def timing(self, profile: Any) -> None:
        """Put the timing legend first and keep each profiled node's ``--> ...`` text."""
        self.lines += TIMING_LEGEND.splitlines()
        own, totals = profile.apply_time, profile.compute_total_times()
        total_call = profile.fct_call_time or 1.0
        self.times = {node: f" --> {own[node]:8.2e}s {100 * own[node] / total_call:4.1f}% "
                            f"{totals[node]:8.2e}s {100 * totals[node] / total_call:4.1f}%" for node in own}

    def cell(self, var: Variable) -> str:
        if self.storage is None:
            return ""
        found = self.storage.get(var)
        return f" {found}" if found is not None else " "

    def users(self, var: Variable) -> str:
        """`` clients:[...]`` for a variable with several clients, as Theano wrote them (an
        output of the function takes an id, as in Theano, but shows none)."""
        found = self.clients.get(var, ()) if self.clients is not None else ()
        if len(found) < 2:
            return ""
        shown = []
        for client, _ in found:
            if client == "output":
                self.identify("output")
                shown.append(("output", ""))
            else:
                where = self.order.get(client, "") if self.order is not None else ""
                shown.append((f"[id {self.identify(client)}]" if self.ids else "", where))
        return f" clients:{shown}"

    def key_id(self, var: Variable) -> str:
        """The id of ``var``'s line: its node's for a computed variable (all outputs share it)."""
        return self.identify(var.owner if var.owner is not None else var)

    def identify(self, obj: Any) -> str:
        if obj not in self.id_of:
            n = len(self.id_of)
            self.id_of[obj] = {"CHAR": _letters, "int": str, "id": lambda _: str(id(obj))}[self.ids](n)
        return self.id_of[obj]


TIMING_LEGEND = """
Timing Info
-----------
--> <time> <% time> - <total time> <% total time>'

<time>         seconds this node took, over the profiled calls
<% time>       its share of the calls' time
<total time>   this node's time plus the total times of the nodes it reads
<% total time> that total's share of the calls' time

N.B.: the total time counts an ancestor once per path to it, so it is an upper bound: a
node whose total time is small is not worth rewriting away.
"""


def _inner_graph(op: Op) -> tuple[Sequence[Variable], Sequence[Variable]] | None:
    """``(inner_inputs, inner_outputs)`` of an op that runs a graph of its own, else None."""
    inputs = getattr(op, "inner_inputs", None)
    outputs = getattr(op, "inner_outputs", None)
    return None if inputs is None or outputs is None else (inputs, outputs)


def _inner_sources(node: Apply) -> dict[Variable, Variable]:
    """Each inner input of ``node`` -> the outer input it reads, for ops laid out as Scan.

    Scan groups both sides alike: sequences (several taps may read one), recurrent
    states (likewise), carried values, non-sequences; ``n_steps`` has no inner twin.
    """
    op = node.op
    if not (hasattr(op, "split_outer_inputs") and hasattr(op, "split_inner_inputs")):
        return {}
    _, *outer_groups = op.split_outer_inputs(node.inputs)
    sources: dict[Variable, Variable] = {}
    for outers, inners in zip(outer_groups, op.split_inner_inputs()):
        for outer, inner in zip(outers, inners):
            for var in inner if isinstance(inner, list) else [inner]:
                sources[var] = outer
    return sources


def _letters(n: int) -> str:
    """0 -> A, 25 -> Z, 26 -> BA: base 26 with A as the zero digit, as Theano numbered."""
    text = ""
    while True:
        n, digit = divmod(n, 26)
        text = chr(ord("A") + digit) + text
        if n == 0:
            return text


def _node_text(var: Variable) -> str:
    node = var.owner
    # An op may print differently on its node (a reduction over all its input's axes).
    text = node.op.node_text(node) if hasattr(node.op, "node_text") else str(node.op)
    return f"{text}.{var.index}" if len(node.outputs) > 1 else text


def _variable_text(var: Variable) -> str:
    if isinstance(var, Constant) and var.name is None:
        return _constant_text(var)
    return str(var)


def _constant_text(var: Constant) -> str:
    data = var.data
    body = np.array2string(data, threshold=5) if isinstance(data, np.ndarray) else str(data)
    if len(body) > 30:
        body = body[:15] + "..." + body[-10:]
    return f"{type(var).__name__}{{{body}}}"


def min_informative_str(obj: Any, indent_level: int = 0) -> str:
    """The shortest tree that says what ``obj`` is: its graph down to named variables and
    constants, each line ``A. what`` (Theano's function, for error messages).

    A named variable is its name (its inputs are not shown: the name says what it is); a
    computed one is its op, its inputs on the lines below, one space further in; a variable
    met before is its letter in angle brackets (``<B>``); an array is ``<ndarray>``. Letters
    follow the order lines appear in (A, B, ..., Z, BA, ...).
    """
    tags: dict[int, str] = {}
    lines: list[str] = []
    stack = [(obj, indent_level)]
    while stack:  # depth first, inputs in order, without recursion
        item, level = stack.pop()
        indent = " " * level
        if id(item) in tags:
            lines.append(f"{indent}<{tags[id(item)]}>")
            continue
        tag = tags[id(item)] = _letters(len(tags))
        owner = getattr(item, "owner", None)
        if hasattr(item, "__array__") and not isinstance(item, Variable):
            text = "<ndarray>"
        elif getattr(item, "name", None) is not None:
            text = item.name
        elif owner is not None:
            text = str(owner.op)
            stack.extend((i, level + 1) for i in reversed(owner.inputs))
        else:
            text = str(item)
        lines.append(f"{indent}{tag}. {text}")
    return "\n".join(lines)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def var_descriptor(obj: Variable) -> str:
    """One line saying exactly how ``obj`` is computed, with nothing that depends on where
    objects sit in memory (Theano's function): two runs that build the same graph give the
    same line, so a record of a run (compile/record.py) can name what it computed.

    Every variable met gets a tag in order of appearance (``<A>``, ``<B>``, ...), written
    before its description the first time and alone afterwards, so a shared subgraph is
    spelled once. A computed variable is ``name=op(inputs)`` (``op(inputs)`` when unnamed;
    ``.k`` after the op for output ``k`` of a multi-output node), an input its name (its
    type when unnamed), a constant its value. Object addresses in an op's text
    (`` at 0x...``) are dropped.
    """
    tags: dict[int, str] = {}
    parts: list[str] = []
    stack: list[Any] = [obj]
    while stack:  # depth first, without recursion: a long chain of nodes is fine
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if id(item) in tags:
            parts.append(f"<{tags[id(item)]}>")
            continue
        tag = tags[id(item)] = _letters(len(tags))
        owner = item.owner
        if owner is None:
            parts.append(f"<{tag}>{_ADDRESS.sub('', str(item))}")
            continue
        index = f".{item.index}" if len(owner.outputs) > 1 else ""
        named = f"{item.name}=" if item.name is not None else ""
        parts.append(f"<{tag}>{named}{_ADDRESS.sub('', str(owner.op))}{index}(")
        stack.append(")")
        for k, inp in enumerate(reversed(owner.inputs)):
            stack.append(inp)
            if k < len(owner.inputs) - 1:
                stack.append(",")
    return "".join(parts)


# ------------------------------------------------------------------- pp
def pp(var: Variable) -> str:
    """``var`` as a one-line expression: ``(exp(x) * TensorConstant{2})``.

    Inputs print by name, constants as ``TensorConstant{...}``; binary
    operators are infix and always parenthesized, so precedence is never in
    doubt. Broadcasting added by the library (leading ``'x'`` dimensions) is not
    shown. Ops format themselves through :func:`pp_apply`, where other modules
    register their own notation. ``pprint`` is the same function (Theano's name).
    """
    if not isinstance(var, Variable):
        raise TypeError(f"pp() takes a symbolic variable, got {type(var).__name__} {var!r}")
    text: dict[Variable, str] = {}
    # Post-order without recursion: every input is formatted before its user.
    stack = [(var, False)]
    while stack:
        current, ready = stack.pop()
        if current in text:
            continue
        node = current.owner
        if node is None:
            text[current] = _variable_text(current)
        elif ready:
            args = [text[i] for i in node.inputs]
            body = pp_apply(node.op, node, args)
            text[current] = body if len(node.outputs) == 1 else f"{body}[{current.index}]"
        else:
            stack.append((current, True))
            stack.extend((i, False) for i in reversed(node.inputs) if i not in text)
    return text[var]


pprint = pp


# Theano's pprint: arithmetic infix, comparisons by name (``gt(a, b)``), the dot product as
# ``(x \dot w)``.
_INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//", "mod": "%",
          "pow": "**", "and_": "&", "or_": "|", "xor": "^"}
_PREFIX = {"neg": "-", "invert": "~"}
_CALLED = {"second": "fill"}  # Theano's pp name of the op (``fill`` is ``second``)


@singledispatch
def pp_apply(op: Op, node: Apply, args: list[str]) -> str:
    """How ``pp`` writes one application of ``op`` to already formatted ``args``.

    The default is a call, ``Op{props}(a, b)``; register a clearer form with
    ``@pp_apply.register(MyOp)``.
    """
    return f"{op}({', '.join(args)})"


@pp_apply.register(Elemwise)
def _pp_elemwise(op: Elemwise, node: Apply, args: list[str]) -> str:
    name = op.scalar_op.name
    if name in _INFIX and len(args) == 2:
        return f"({args[0]} {_INFIX[name]} {args[1]})"
    if name in _PREFIX:
        return f"({_PREFIX[name]}{args[0]})"
    return f"{_CALLED.get(name, name)}({', '.join(args)})"


@pp_apply.register(Dot)
def _pp_dot(op: Dot, node: Apply, args: list[str]) -> str:
    return f"({args[0]} \\dot {args[1]})"


@pp_apply.register(DimShuffle)
def _pp_dimshuffle(op: DimShuffle, node: Apply, args: list[str]) -> str:
    order = list(op.new_order)
    while order and order[0] == "x":
        order.pop(0)
    ndim = len(op.input_broadcastable)
    if order == list(range(ndim)):
        return args[0]
    if order == list(reversed(range(ndim))):
        return f"{args[0]}.T"
    return f"{args[0]}.dimshuffle({', '.join(repr(i) if i == 'x' else str(i) for i in op.new_order)})"


@pp_apply.register(IndexOp)
def _pp_index(op: IndexOp, node: Apply, args: list[str]) -> str:
    """``x[Constant{1}, i:]``: an indexing as written, Theano's notation (a constant index
    shows as the constant it was, a symbolic one as its expression, a start of 0 as nothing).
    Writing ops (``set_subtensor``, ``inc_subtensor``) print as calls with the index so written."""
    if not hasattr(op, "idx_list"):
        return f"{op}({', '.join(args)})"
    entries = iter(args[2:] if _writes(op) else args[1:])  # after x (and the value written)

    def one(item: Any, in_slice: bool = False) -> str:
        if item is None:
            return "" if in_slice else "None"
        if item in (SCALAR, ARRAY):
            return next(entries)
        if isinstance(item, IndexSlice):
            start, stop, step = item
            text = ("" if start in (None, 0) else one(start, True)) + ":" + one(stop, True)
            return text + (f":{one(step, True)}" if step is not None else "")
        return f"Constant{{{item}}}"

    index = ", ".join(one(item) for item in op.idx_list)
    if _writes(op):
        name = "set_subtensor" if op.set_instead_of_inc else "inc_subtensor"
        return f"{name}({args[0]}[{index}], {args[1]})"
    return f"{args[0]}[{index}]"


@pp_apply.register(AdvancedSubtensor1)
@pp_apply.register(AdvancedIncSubtensor1)
def _pp_take(op: Op, node: Apply, args: list[str]) -> str:
    """``x[ilist]`` (and its writing form): one integer vector indexing the first axis."""
    if _writes(op):
        name = "set_subtensor" if op.set_instead_of_inc else "inc_subtensor"
        return f"{name}({args[0]}[{args[2]}], {args[1]})"
    return f"{args[0]}[{args[1]}]"


def _writes(op: Op) -> bool:
    return hasattr(op, "set_instead_of_inc")


# ---------------------------------------------------------------------- Print
def _print_fn(op: Print, value: Any) -> None:
    """Theano's default: ``<message> <attr> = <value of attr>`` for each of ``op.attrs``."""
    for attr in op.attrs:
        shown = getattr(value, attr)
        print(op.message, attr, "=", shown() if callable(shown) else shown)


class Print(Op):
    """The identity, which prints its value each time it runs (Theano's ``printing.Print``).

    ``Print("x")(x)`` is ``x``; using the result prints ``x __str__ = [...]``.
    ``attrs`` names the attributes to show (``('shape', 'dtype')``...; callables
    are called), ``global_fn(op, value)`` replaces the printing. It is a view,
    never folded into a constant, and passes gradients through unchanged.
    """

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}
    foldable = False

    def __init__(self, message: str = "", attrs: Sequence[str] = ("__str__",), global_fn: Any = _print_fn):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def __str__(self) -> str:
        return f"Print{{{self.message}}}"

    def make_node(self, x: Any) -> Apply:
        if not isinstance(x, Variable):
            raise TypeError(f"Print({self.message!r}) takes a symbolic variable, got {x!r}")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = inputs[0]
        self.global_fn(self, inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [input_shapes[0]]

    def grad(self, inputs: list, output_grads: list) -> list:
        return list(output_grads)


# Pictures live in their own module (Graphviz is an optional extra); Theano's name is here.
from arignote.pictures import pydot_graph, pydotprint  # noqa: E402
