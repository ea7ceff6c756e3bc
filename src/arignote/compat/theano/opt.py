"""``theano.gof.opt`` and ``theano.gof.toolbox``: Theano's optimizer classes on arignote's rewriting engine.

Theano users write local optimizers (``transform(node)`` returning replacements, or
``@local_optimizer([op])`` on a function of a node) and global ones (``apply(fgraph)``),
and run them with ``optimize(fgraph)`` or register them in ``optdb``. Each Theano object
is adapted to the engine's protocol (``as_rewriter``): a local optimizer becomes a
``NodeRewriter`` that calls its ``transform``; a global one a ``GraphRewriter`` whose
change count is the graph's edit count, so equilibrium passes know when it is done.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any
from collections.abc import Callable, Sequence

from arignote.compat.theano.modules import lazy_modules
from arignote.config import config
from arignote.graph.basic import Apply, Constant, Op, Variable
from arignote.graph.errors import InconsistencyError
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import (EquilibriumRewriter, GraphRewriter, NodeRewriter, Replacement,
                                            WalkingRewriter)
from arignote.graph.rewriting.detached import merge_constants, rewrite_greedily
from arignote.graph.rewriting.merge import MergeRewriter

__all__ = ["Optimizer", "FromFunctionOptimizer", "optimizer", "inplace_optimizer", "SeqOptimizer",
           "MergeOptimizer", "LocalOptimizer", "FromFunctionLocalOptimizer", "local_optimizer",
           "LocalOptGroup", "RewriteAsLocalOptimizer", "OpSub", "OpRemove", "PatternSub", "NavigatorOptimizer",
           "TopoOptimizer",
           "OpKeyOptimizer",
           "EquilibriumOptimizer", "in2out", "out2in", "as_rewriter", "Feature", "ReplaceValidate",
           "AlreadyThere", "check_stack_trace", "pre_constant_merge", "pre_greedy_local_optimizer",
           "config", "logging"]  # and theano (module __getattr__): gof.opt's imports, which tests take from it


class Optimizer:
    """A global optimizer: ``apply(fgraph)`` edits the graph; ``optimize`` adds the features
    it needs first. Calling it is ``optimize``, so a mode can take one as its optimizer."""

    def apply(self, fgraph: FunctionGraph) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define apply(fgraph)")

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features ``apply`` uses (e.g. ``ReplaceValidate``)."""

    def optimize(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> Any:
        self.add_requirements(fgraph)
        return self.apply(fgraph, *args, **kwargs)

    def __call__(self, fgraph: FunctionGraph) -> Any:
        return self.optimize(fgraph)


class FromFunctionOptimizer(Optimizer):
    def __init__(self, fn: Callable[[FunctionGraph], Any], requirements: Sequence[Callable] = ()):
        self.fn, self.requirements = fn, tuple(requirements)
        self.__name__ = getattr(fn, "__name__", type(self).__name__)

    def apply(self, fgraph: FunctionGraph) -> Any:
        return self.fn(fgraph)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for req in self.requirements:
            req(fgraph)

    def __repr__(self) -> str:
        return self.__name__


def optimizer(fn: Callable[[FunctionGraph], Any]) -> FromFunctionOptimizer:
    """Decorator: a global optimizer from ``fn(fgraph)``."""
    return FromFunctionOptimizer(fn)


def inplace_optimizer(fn: Callable[[FunctionGraph], Any]) -> FromFunctionOptimizer:
    """As ``optimizer``; the destroy handler every graph here has is its requirement."""
    return FromFunctionOptimizer(fn)


class _EngineOptimizer(Optimizer):
    """A Theano optimizer class whose work is one of the engine's graph rewriters."""

    rewriter: GraphRewriter

    def apply(self, fgraph: FunctionGraph) -> None:
        self.rewriter.apply(fgraph)


class SeqOptimizer(Optimizer):
    """Its optimizers one after the other (given as arguments or as one list)."""

    def __init__(self, *opts: Any, failure_callback: Any = None):
        if len(opts) == 1 and isinstance(opts[0], (list, tuple)):
            opts = tuple(opts[0])
        self.opts = list(opts)

    def apply(self, fgraph: FunctionGraph) -> None:
        for opt in self.opts:
            as_rewriter(opt).apply(fgraph)


class MergeOptimizer(_EngineOptimizer):
    """Merges nodes that compute the same thing from the same inputs (and equal constants)."""

    def __init__(self) -> None:
        self.rewriter = MergeRewriter()


class LocalOptimizer:
    """A local optimizer: ``transform(node)`` returns replacements for the node's outputs
    (a list, or a dict old -> new), or False/None when it does not apply. ``tracks()`` lists
    the ops (instances or classes) it looks at; None means every node."""

    def tracks(self) -> Sequence[Any] | None:
        return None

    def transform(self, node: Apply) -> Replacement | bool:
        raise NotImplementedError(f"{type(self).__name__} must define transform(node)")

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features ``transform`` uses."""

    def _rewrite(self, fgraph: FunctionGraph, node: Apply) -> Replacement | bool:
        """What the engine calls: ``transform``, unless a subclass needs the graph too."""
        return self.transform(node)


class FromFunctionLocalOptimizer(LocalOptimizer):
    def __init__(self, fn: Callable[[Apply], Any], tracks: Sequence[Any] | None = None,
                 requirements: Sequence[Callable] = ()):
        self.fn, self._tracks, self.requirements = fn, tracks, tuple(requirements)
        self.__name__ = getattr(fn, "__name__", type(self).__name__)

    def tracks(self) -> Sequence[Any] | None:
        return self._tracks

    def transform(self, node: Apply) -> Any:
        return self.fn(node)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for req in self.requirements:
            req(fgraph)

    def __call__(self, node: Apply) -> Any:
        return self.fn(node)

    def __repr__(self) -> str:
        return self.__name__


def local_optimizer(tracks: Sequence[Any] | None, inplace: bool = False,
                    requirements: Sequence[Callable] = ()) -> Callable[[Callable], Any]:
    """Decorator: a local optimizer from ``fn(node)``, looking at nodes of the ``tracks`` ops
    (op instances or classes; None for all). ``inplace`` is Theano's flag for optimizers
    that add destroying ops: every graph here already checks them."""
    if tracks is not None and not isinstance(tracks, (list, tuple)):
        raise TypeError(f"local_optimizer: tracks must be a list of ops or op classes, or None; got "
                        f"{tracks!r}: write local_optimizer([{tracks!r}])")
    if tracks is not None and not tracks:
        raise ValueError("local_optimizer: an empty tracks list would never apply; use None to look at "
                         "every node")

    def wrap(fn: Callable) -> FromFunctionLocalOptimizer:
        return FromFunctionLocalOptimizer(fn, tracks, requirements)
    return wrap


class LocalOptGroup(LocalOptimizer):
    """Its local optimizers in turn on each node; the first one that applies wins."""

    def __init__(self, *optimizers: Any, apply_all_opts: bool = False, profile: bool = False):
        if len(optimizers) == 1 and isinstance(optimizers[0], (list, tuple)):
            optimizers = tuple(optimizers[0])
        self.opts = list(optimizers)

    def tracks(self) -> Sequence[Any] | None:
        found: list[Any] = []
        for opt in self.opts:
            tracked = opt.tracks()
            if tracked is None:
                return None
            found.extend(tracked)
        return found

    def _rewrite(self, fgraph: FunctionGraph, node: Apply) -> Any:
        for opt in self.opts:
            result = opt._rewrite(fgraph, node)
            if result:
                return result
        return False

    def transform(self, node: Apply) -> Any:
        return self._rewrite(None, node)


class RewriteAsLocalOptimizer(LocalOptimizer):
    """Node rewriters of arignote's as one Theano local optimizer, under Theano's name for the
    rewrite they do together (``theano.tensor.opt.local_dimshuffle_lift``): the first that
    applies wins. ``transform(node)`` alone has no graph, so rewriters that read shapes apply
    only inside a walk (``out2in(opt).optimize(fgraph)``)."""

    def __init__(self, name: str, *rewriters: NodeRewriter):
        self.__name__ = name
        self.rewriters = rewriters

    def tracks(self) -> Sequence[Any] | None:
        if any(not r.tracks for r in self.rewriters):
            return None
        return [t for r in self.rewriters for t in r.tracks]

    def _rewrite(self, fgraph: FunctionGraph, node: Apply) -> Any:
        for rewriter in self.rewriters:
            if rewriter.applies_to(node):
                result = rewriter.transform(fgraph, node)
                if result:
                    return result
        return False

    def transform(self, node: Apply) -> Any:
        return self._rewrite(None, node)

    def __repr__(self) -> str:
        return self.__name__


def _fits(old: Variable, new: Any) -> bool:
    return isinstance(new, Variable) and (new.type == old.type or old.type.convert_variable(new) is not None)


class OpSub(LocalOptimizer):
    """Nodes of ``op1`` become nodes of ``op2`` on the same inputs."""

    def __init__(self, op1: Op, op2: Op, transfer_tags: bool = True):
        self.op1, self.op2, self.transfer_tags = op1, op2, transfer_tags

    def tracks(self) -> list[Op]:
        return [self.op1]

    def op_key(self) -> Op:
        return self.op1

    def transform(self, node: Apply) -> Any:
        if node.op != self.op1:
            return False
        outputs = self.op2.make_node(*node.inputs).outputs
        if self.transfer_tags:
            for old, new in zip(node.outputs, outputs):
                new.tag = old.tag
        return outputs

    def __str__(self) -> str:
        return f"{self.op1} -> {self.op2}"


class OpRemove(LocalOptimizer):
    """Nodes of ``op`` are removed: each output becomes the input at its position."""

    def __init__(self, op: Op):
        self.op = op

    def tracks(self) -> list[Op]:
        return [self.op]

    def op_key(self) -> Op:
        return self.op

    def transform(self, node: Apply) -> Any:
        return list(node.inputs) if node.op == self.op else False

    def __str__(self) -> str:
        return f"{self.op}(x) -> x"


class PatternSub(LocalOptimizer):
    """Replaces what matches ``in_pattern`` by ``out_pattern``.

    A pattern is ``(op, sub, ...)`` (a node of ``op`` whose inputs match the subpatterns),
    a string (a variable bound on first use; a later use must find the same one), a
    ``Constant`` or a number (a constant of that value), or ``{'pattern': p, 'constraint':
    fn}`` with ``fn(variable) -> bool``. The output pattern is built from the same forms,
    strings standing for what they matched. Below the root, a node read elsewhere too is
    not matched unless ``allow_multiple_clients``, so no computation is duplicated.
    ``skip_identities_fn(var)`` may return the variable to match in ``var``'s place;
    ``pdb`` and ``get_nodes`` are accepted for Theano's signature.
    """

    def __init__(self, in_pattern: Any, out_pattern: Any, allow_multiple_clients: bool = False,
                 skip_identities_fn: Callable | None = None, name: str | None = None, pdb: bool = False,
                 tracks: Sequence[Any] = (), get_nodes: Callable | None = None,
                 values_eq_approx: Callable | None = None):
        root = in_pattern["pattern"] if isinstance(in_pattern, dict) else in_pattern
        if not isinstance(root, tuple) or not root:
            raise TypeError(f"PatternSub: the input pattern must be (op, subpattern, ...), "
                            f"got {in_pattern!r}")
        self.in_pattern, self.out_pattern = in_pattern, out_pattern
        self.op = root[0]
        self.allow_multiple_clients = allow_multiple_clients
        self.skip_identities_fn = skip_identities_fn
        self.values_eq_approx = values_eq_approx
        self._tracks = list(tracks) or [self.op]
        self.__name__ = name or f"PatternSub({in_pattern!r} -> {out_pattern!r})"

    def tracks(self) -> list[Any]:
        return self._tracks

    def op_key(self) -> Any:
        return self.op

    def transform(self, node: Apply) -> Any:
        return self._rewrite(None, node)

    def _rewrite(self, fgraph: FunctionGraph | None, node: Apply) -> Any:
        if node.op != self.op or len(node.outputs) != 1:
            return False
        old = node.outputs[0]
        bound: dict[str, Variable] = {}
        if not self._match(self.in_pattern, old, bound, fgraph, root=True):
            return False
        new = self._build(self.out_pattern, bound)
        if not _fits(old, new):
            return False
        if self.values_eq_approx is not None:
            new.tag.values_eq_approx = self.values_eq_approx
        return [new]

    def _match(self, pattern: Any, var: Variable, bound: dict, fgraph: FunctionGraph | None,
               root: bool = False) -> bool:
        if self.skip_identities_fn is not None and not root:
            var = self.skip_identities_fn(var) or var
        if isinstance(pattern, dict):
            check = pattern.get("constraint", lambda expr: True)
            return self._match(pattern["pattern"], var, bound, fgraph, root) and bool(check(var))
        if isinstance(pattern, tuple):
            node = var.owner
            if node is None or node.op != pattern[0] or len(node.inputs) != len(pattern) - 1:
                return False
            if not (root or self.allow_multiple_clients or fgraph is None
                    or len(fgraph.clients.get(var, ())) <= 1):
                return False
            return all(self._match(p, v, bound, fgraph) for p, v in zip(pattern[1:], node.inputs))
        if isinstance(pattern, str):
            seen = bound.setdefault(pattern, var)
            return seen is var or _same_constant(seen, var)
        if isinstance(pattern, Constant):
            return _same_constant(pattern, var)
        if isinstance(pattern, (int, float, complex)):
            value = _scalar_constant(var)
            return value is not None and _equal_values(value, pattern)
        raise TypeError(f"PatternSub: {pattern!r} is not a pattern: use (op, ...), a string, a Constant, "
                        "a number or {'pattern': ..., 'constraint': ...}")

    def _build(self, pattern: Any, bound: dict) -> Any:
        if isinstance(pattern, tuple):
            return pattern[0](*[self._build(p, bound) for p in pattern[1:]])
        if isinstance(pattern, str):
            if pattern not in bound:
                raise KeyError(f"PatternSub: the output pattern uses {pattern!r}, which the input pattern "
                               "does not bind")
            return bound[pattern]
        if isinstance(pattern, dict):
            return self._build(pattern["pattern"], bound)
        return pattern  # a constant: the op that takes it converts it

    def __repr__(self) -> str:
        return self.__name__


def _equal_values(a: Any, b: Any) -> bool:
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(a == b))


def _scalar_constant(var: Variable) -> Any:
    """The one value a constant (seen through broadcasting dimshuffles) holds, else None."""
    if isinstance(var, Constant):
        return var.data
    if not hasattr(var.type, "ndim"):
        return None
    from arignote.tensor.shape import NotScalarConstantError, get_scalar_constant_value
    try:
        return get_scalar_constant_value(var, elemwise=False)
    except NotScalarConstantError:
        return None


def _same_constant(a: Variable, b: Variable) -> bool:
    return (isinstance(a, Constant) and isinstance(b, Constant) and a.type == b.type
            and _equal_values(a.data, b.data))


class NavigatorOptimizer(_EngineOptimizer):
    """Applies a local optimizer over the graph (Theano's base of the walking optimizers).
    With a ``failure_callback(exc, nav, repl_pairs, local_opt, node)`` (e.g. one of the
    ``warn*`` below) each replacement is validated, and one the graph's features refuse is
    undone and reported to it; without one, a refused replacement raises."""

    order = "in_to_out"

    def __init__(self, local_opt: Any, order: str | None = None, ignore_newtrees: bool = False,
                 failure_callback: Any = None):
        self.local_opt = local_opt
        self.order = order or self.order
        self.failure_callback = failure_callback
        self.rewriter = WalkingRewriter([as_rewriter(local_opt)], self.order, failure_callback=self._failed)

    def _failed(self, exc: Exception, walk: Any, pairs: list, rewriter: Any, node: Apply) -> None:
        if self.failure_callback is None:
            raise exc
        self.failure_callback(exc, self, pairs, self.local_opt, node)

    @staticmethod
    def warn(exc: Exception, nav: Any, repl_pairs: list, local_opt: Any, node: Any) -> None:
        """A failure callback that warns and goes on."""
        warnings.warn(f"optimization failure due to {local_opt} on {node}: {type(exc).__name__}: {exc}",
                      stacklevel=2)

    @staticmethod
    def warn_inplace(exc: Exception, nav: Any, repl_pairs: list, local_opt: Any, node: Any) -> None:
        """A failure callback that ignores InconsistencyError (an in-place rewrite the destroy
        handler refused, the usual case) and warns of anything else."""
        if not isinstance(exc, InconsistencyError):
            NavigatorOptimizer.warn(exc, nav, repl_pairs, local_opt, node)

    @staticmethod
    def warn_ignore(exc: Exception, nav: Any, repl_pairs: list, local_opt: Any, node: Any) -> None:
        """A failure callback that ignores every failure."""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        self.local_opt.add_requirements(fgraph)


class TopoOptimizer(NavigatorOptimizer):
    """One walk of a local optimizer over the nodes, ``order='in_to_out'`` or ``'out_to_in'``."""


class OpKeyOptimizer(NavigatorOptimizer):
    """A walk applying a local optimizer to the nodes of the op its ``op_key()`` names."""

    def __init__(self, local_opt: Any, ignore_newtrees: bool = False, failure_callback: Any = None):
        if not hasattr(local_opt, "op_key"):
            raise TypeError(f"OpKeyOptimizer needs a local optimizer with op_key() (OpSub, OpRemove, "
                            f"PatternSub), got {local_opt!r}: use TopoOptimizer for others")
        super().__init__(local_opt, ignore_newtrees=ignore_newtrees, failure_callback=failure_callback)


class EquilibriumOptimizer(_EngineOptimizer):
    """Local and global optimizers repeated until none changes the graph. ``max_use_ratio``
    (required, as in Theano) bounds how far the graph may grow, as a factor of its size;
    the passes stop at the engine's bound."""

    def __init__(self, optimizers: Sequence[Any], failure_callback: Any = None,
                 ignore_newtrees: bool = True, tracks_on_change_inputs: bool = False,
                 max_use_ratio: float | None = None, final_optimizers: Sequence[Any] | None = None,
                 cleanup_optimizers: Sequence[Any] | None = None):
        self.optimizers = list(optimizers) + list(final_optimizers or ()) + list(cleanup_optimizers or ())
        if max_use_ratio is None:
            raise TypeError("EquilibriumOptimizer needs max_use_ratio (Theano's default is "
                            "config.optdb.max_use_ratio, 8)")
        self.rewriter = EquilibriumRewriter([as_rewriter(o) for o in self.optimizers],
                                            max_growth=max(1.0, float(max_use_ratio)))

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for opt in self.optimizers:
            opt.add_requirements(fgraph)


def in2out(*local_opts: Any, **kwargs: Any) -> TopoOptimizer:
    """A walk inputs first of the local optimizers (grouped when several)."""
    opt = local_opts[0] if len(local_opts) == 1 else LocalOptGroup(*local_opts)
    return TopoOptimizer(opt, order="in_to_out", **kwargs)


def out2in(*local_opts: Any, **kwargs: Any) -> TopoOptimizer:
    """A walk outputs first of the local optimizers (grouped when several)."""
    opt = local_opts[0] if len(local_opts) == 1 else LocalOptGroup(*local_opts)
    return TopoOptimizer(opt, order="out_to_in", **kwargs)


class _LocalRewriter(NodeRewriter):
    """The engine's view of a Theano local optimizer."""

    def __init__(self, opt: LocalOptimizer):
        self.opt = opt
        self.tracks = tuple(opt.tracks() or ())
        self.name = getattr(opt, "__name__", None) or type(opt).__name__

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Replacement:
        return self.opt._rewrite(fgraph, node) or None


class _GlobalRewriter(GraphRewriter):
    """The engine's view of a Theano global optimizer: it changed what the graph's edit count says."""

    def __init__(self, opt: Optimizer):
        self.opt = opt
        self.name = getattr(opt, "__name__", type(opt).__name__)

    def apply(self, fgraph: FunctionGraph) -> int:
        before = fgraph.edits
        self.opt.optimize(fgraph)
        return fgraph.edits - before


def as_rewriter(opt: Any) -> NodeRewriter | GraphRewriter:
    """The engine's rewriter for a Theano optimizer (an engine rewriter passes through)."""
    if isinstance(opt, (NodeRewriter, GraphRewriter)):
        return opt
    if isinstance(opt, LocalOptimizer):
        return _LocalRewriter(opt)
    if isinstance(opt, Optimizer):
        return _GlobalRewriter(opt)
    if callable(opt):
        return _GlobalRewriter(FromFunctionOptimizer(opt))
    raise TypeError(f"{opt!r} is not an optimizer: give a LocalOptimizer, an Optimizer, or a function "
                    "of a FunctionGraph")


def _nodes_to_check(fgraph: FunctionGraph, ops_to_check: Any) -> list[Apply]:
    if isinstance(ops_to_check, str):
        chosen = {"last": [o.owner for o in fgraph.outputs if o.owner is not None],
                  "all": list(fgraph.apply_nodes)}.get(ops_to_check)
        if chosen is None:
            raise ValueError(f"check_stack_trace: ops_to_check is 'last', 'all', ops or a predicate, "
                             f"got {ops_to_check!r}")
        return chosen
    if isinstance(ops_to_check, (Op, type)):
        ops_to_check = (ops_to_check,)
    if isinstance(ops_to_check, (list, tuple)):
        instances = [o for o in ops_to_check if not isinstance(o, type)]
        classes = tuple(o for o in ops_to_check if isinstance(o, type))
        return [n for n in fgraph.apply_nodes if n.op in instances or isinstance(n.op, classes)
                or isinstance(getattr(n.op, "scalar_op", None), classes)]
    if callable(ops_to_check):
        return [n for n in fgraph.apply_nodes if ops_to_check(n)]
    raise ValueError(f"check_stack_trace: ops_to_check is 'last', 'all', ops or a predicate, got "
                     f"{ops_to_check!r}")


def check_stack_trace(f_or_fgraph: Any, ops_to_check: Any = "last", bug_print: str = "raise") -> bool:
    """Whether every output of the checked nodes of a compiled function (or graph) carries the
    line of user code that made it (``tag.trace``; a rewrite passes it on to what replaces a
    node). ``ops_to_check``: ``'last'`` (the nodes computing the outputs), ``'all'``, an op or
    op class or a list of them (an Elemwise also matches by its scalar op), or a predicate of
    a node. ``bug_print`` says what to do when no node is to be checked: ``'raise'``,
    ``'warn'`` or ``'ignore'``."""
    fgraph = getattr(getattr(f_or_fgraph, "maker", None), "fgraph", f_or_fgraph)
    if not isinstance(fgraph, FunctionGraph):
        raise ValueError(f"check_stack_trace takes a compiled function or a FunctionGraph, got "
                         f"{type(f_or_fgraph).__name__}")
    if bug_print not in ("raise", "warn", "ignore"):
        raise ValueError(f"check_stack_trace: bug_print is 'raise', 'warn' or 'ignore', got {bug_print!r}")
    nodes = _nodes_to_check(fgraph, ops_to_check)
    if not nodes and bug_print != "ignore":
        message = f"check_stack_trace: no node of {ops_to_check!r} is in the graph"
        if bug_print == "raise":
            raise ValueError(message)
        warnings.warn(message, stacklevel=2)
    return all(getattr(out.tag, "trace", None) for node in nodes for out in node.outputs)


def pre_constant_merge(vars: Variable | Sequence[Variable]) -> list[Variable]:
    """Theano's helper for a rewrite's new subgraph: equal constants in it made one. The
    graph is rebuilt, not edited: use what this returns (the merge pass does the rest)."""
    return merge_constants([vars] if isinstance(vars, Variable) else list(vars))


def pre_greedy_local_optimizer(list_optimizations: Sequence[Any], out: Variable) -> Variable:
    """Theano's helper for a rewrite's new subgraph (e.g. folding the constants of subtensor
    indices): each local optimizer applied once per node, inputs first; returns ``out``'s
    rewritten form."""
    return rewrite_greedily([as_rewriter(opt) for opt in list_optimizations], out)


# ``theano``: Theano's gof.opt imported the package, and tests take it from there.
__getattr__ = lazy_modules(__name__, {"theano": "theano"})


# ------------------------------------------------------------------ theano.gof.toolbox
class AlreadyThere(Exception):
    """Theano's signal that a feature was attached twice (attaching here is idempotent)."""


class Feature:
    """Base of graph features: ``on_attach``, ``on_import``, ``on_prune``, ``on_change_input``
    are called with the graph when it changes (``fgraph.attach_feature``)."""


class ReplaceValidate(Feature):
    """Theano's feature giving ``fgraph.replace_validate``: every FunctionGraph here has it,
    checking each replacement (types, destroyed inputs) as it is made."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))
