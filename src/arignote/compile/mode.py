"""Modes: which rewrites run and which linker builds the thunks.

A mode names tags of the rewrite database: ``FAST_RUN`` takes every rewrite
tagged ``fast_run`` (canonicalize, stabilize, specialize, fusion, in-place),
``FAST_COMPILE`` only the cheap ones tagged ``fast_compile``, ``'merge'`` only
the merging of equal nodes, and ``Mode(optimizer=None)`` none.
``including``/``excluding``/``requiring`` derive new modes, as in Theano.
"""
from __future__ import annotations

import copy
import math
from typing import Any
from collections.abc import Callable

import arignote.tensor.rewrites  # noqa: F401  (registers the tensor rewrites)
from arignote.compile.linkers import Linker
from arignote.config import config
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.graph.rewriting.db import PHASE_POSITIONS, Pipeline, Query, rewrites

_PRESETS = {"fast_run": ("fast_run",), "fast_compile": ("fast_compile",), "merge": ()}
# Theano's linker names: arignote has one linker, so each of them means it.
LINKERS = ("cpu", "py", "c", "c|py", "c|py_nogc", "cvm", "vm", "cvm_nogc", "vm_nogc")
# Names given to register_linker / register_optimizer -> the object ``Mode(linker=name)`` /
# ``Mode(optimizer=name)`` uses.
REGISTERED_LINKERS: dict[str, Linker] = {}
REGISTERED_OPTIMIZERS: dict[str, GraphRewriter] = {}
# Theano's names of rewrites and rewrite groups -> the tag of ours that does that work, so that
# ``mode.excluding('local_elemwise_fusion', 'inplace_elemwise_optimizer')`` (as Theano's debugging
# FAQ advises) turns off our fusion and in-place passes. Names Theano and we share need no entry.
THEANO_TAGS = {
    "local_elemwise_fusion": "elemwise_fusion", "composite_elemwise_fusion": "elemwise_fusion",
    "FusionOptimizer": "elemwise_fusion", "inplace_elemwise_optimizer": "inplace_elemwise",
    "inplace_elemwise_opt": "inplace_elemwise", "inplace_opt": "inplace",
    "gemm_optimizer": "local_gemm", "BlasOpt": "local_gemm", "ShapeOpt": "shape",
    "local_shape_to_shape_i": "local_shape_to_lengths", "topo_constant_folding": "constant_folding",
    "local_log_sum_exp": "local_logsumexp", "gpuarray": "gpu", "gpuarray_opt": "gpu", "gpu_opt": "gpu",
    "local_setsubtensor_of_constants": "local_incsubtensor_of_zeros", "local_zero_div": "local_div_of_known",
    "local_intdiv_by_one": "local_div_of_known", "local_canonicalize_alloc": "local_useless_alloc",
    "local_cut_useless_reduce": "local_reduce_broadcastable", "local_sum_prod_mul_by_scalar": "local_reduce_scaled",
    "local_op_of_op": "local_reduce_merge", "local_sum_prod_alloc": "local_reduce_alloc",
}

# Theano's named queries of its optimizer database (``optdb.query(OPT_FAST_RUN).optimize(fgraph)``).
OPT_NONE = Query([])
OPT_MERGE = Query(["merge"])
OPT_FAST_RUN = Query(["fast_run"])
OPT_FAST_RUN_STABLE = OPT_FAST_RUN.requiring("stable")
OPT_FAST_COMPILE = Query(["fast_compile"])
OPT_STABILIZE = Query(["fast_run"], position_cutoff=1.5000001)  # canonicalize and stabilize only
OPT_O2 = OPT_FAST_COMPILE.including("fusion")
OPT_O3 = OPT_FAST_RUN.excluding("inplace")
OPT_UNSAFE = OPT_O3.including("unsafe")


def _tags(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(THEANO_TAGS.get(n, n) for n in names)


class Mode:
    """A rewrite selection plus a linker.

    ``optimizer`` is ``'fast_run'``, ``'fast_compile'``, ``'merge'``, None (or
    ``'None'``: no rewrites), ``'default'`` (``config.optimizer``, else
    fast_run), or a callable that rewrites a FunctionGraph in place.
    ``linker`` is ``'cpu'`` or one of Theano's linker names (``'py'``,
    ``'cvm'``, ``'c|py'``...), all of which mean arignote's one linker, or a linker
    object (``VM_Linker(callback=...)``, ``PerformLinker(schedule=...)``: compile/linkers.py)
    whose node order, ``allow_gc``, laziness and callbacks the functions of the mode use.
    """

    def __init__(self, linker: str | None = "cpu",
                 optimizer: str | Callable[[FunctionGraph], Any] | None = "default",
                 include: tuple[str, ...] = (), exclude: tuple[str, ...] = (), name: str | None = None,
                 require: tuple[str, ...] = ()):
        linker = "cpu" if linker is None else linker
        if isinstance(linker, str) and linker in REGISTERED_LINKERS:
            linker = REGISTERED_LINKERS[linker]
        if isinstance(optimizer, str) and optimizer in REGISTERED_OPTIMIZERS:
            optimizer = REGISTERED_OPTIMIZERS[optimizer]
        if not isinstance(linker, Linker) and linker not in LINKERS:
            raise ValueError(f"unknown linker {linker!r}: use 'cpu' (Theano's names "
                             f"{', '.join(map(repr, LINKERS[1:]))} mean it too)")
        if optimizer == "default":
            optimizer = config.optimizer or "fast_run"
        if optimizer == "None":
            optimizer = None
        if isinstance(optimizer, str) and optimizer not in _PRESETS:
            raise ValueError(f"unknown optimizer {optimizer!r}: use 'fast_run', 'fast_compile', "
                             "'merge', None, or a callable")
        self.linker = linker
        self.optimizer = optimizer
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.require = tuple(require)
        self.position_cutoff = math.inf
        self.name = name

    @property
    def provided_optimizer(self) -> Any:
        """Theano's name for the optimizer this mode was given."""
        return self.optimizer

    @property
    def _optimizer(self) -> Query:
        """The rewrite selection as Theano's ``Query`` (Theano's test files read and assign
        ``mode._optimizer``, and set its ``position_cutoff`` to stop after a phase)."""
        return _Selection(self)

    @_optimizer.setter
    def _optimizer(self, query: Query) -> None:
        if not isinstance(query, Query):
            raise TypeError(f"mode._optimizer takes a Query (theano.gof.Query), got {query!r}; "
                            "pass other optimizers as Mode(optimizer=...)")
        self.optimizer = "merge"  # the query's own tags say what runs
        self.include, self.exclude, self.require = query.include, query.exclude, query.require
        self.position_cutoff = query.position_cutoff

    def _derive(self, include: tuple, exclude: tuple, require: tuple) -> Mode:
        # A copy keeps the class and its settings (DebugMode's checks, NanGuardMode's).
        mode = copy.copy(self)
        mode.include, mode.exclude, mode.require = tuple(include), tuple(exclude), tuple(require)
        return mode

    def including(self, *tags: str) -> Mode:
        """This mode plus the rewrites carrying any of ``tags``."""
        return self._derive(self.include + tags, tuple(t for t in self.exclude if t not in tags),
                            self.require)

    def excluding(self, *tags: str) -> Mode:
        """This mode without the rewrites carrying any of ``tags`` (a phase, a name, or a tag;
        Theano's names of rewrites, such as ``local_elemwise_fusion``, name ours)."""
        return self._derive(tuple(t for t in self.include if t not in tags), self.exclude + tags,
                            self.require)

    def requiring(self, *tags: str) -> Mode:
        """This mode keeping only the rewrites that carry every one of ``tags``."""
        return self._derive(self.include, self.exclude, self.require + tags)

    def clone(self, link_kwargs: Any = None, optimizer: Any = "", **kwargs: Any) -> Mode:
        """A copy, with another ``optimizer`` when one is given (Theano's signature)."""
        mode = self._derive(self.include, self.exclude, self.require)
        if optimizer != "":
            mode.optimizer = Mode(optimizer=optimizer).optimizer
        return mode

    def wrap_thunks(self, fn: Any, nodes: list, thunks: list[Callable]) -> list[Callable]:
        """The thunks ``fn`` runs, one per node in order: these ones, or the checking
        wrappers of a mode that watches every node (DebugMode, NanGuardMode)."""
        return thunks

    # Optimizers added by ``register``: (rewriter, Theano position), run among the phases.
    registered: tuple[tuple[GraphRewriter, float], ...] = ()

    def rewrite(self, fgraph: FunctionGraph) -> None:
        nothing = self.optimizer is None and not self.include
        if callable(self.optimizer):
            self.optimizer(fgraph)
            nothing = not self.include
        if nothing and not self.registered:
            return
        preset = _PRESETS.get(self.optimizer, ()) if isinstance(self.optimizer, str) else ()
        pipeline = Pipeline([], [], []) if nothing else rewrites.query(
            preset + _tags(self.include), _tags(self.exclude), _tags(self.require), self.position_cutoff)
        if self.registered:
            pipeline = _spliced(pipeline, self.registered)
        pipeline.apply(fgraph)

    def register(self, *optimizations: tuple[Any, float]) -> Mode:
        """This mode plus optimizers at Theano positions: ``register((opt, 49.9), ...)`` runs
        ``opt`` (a Theano Optimizer, a rewriter, or a function of the FunctionGraph) after the
        phases Theano ran below that position (canonicalize 1, stabilize 1.5, specialize 2,
        fusion 49, in-place 75) and before the others; ``AddFeatureOptimizer`` and
        ``PrintCurrentFunctionGraph`` are such optimizers."""
        for item in optimizations:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], (int, float))):
                raise TypeError(f"Mode.register takes (optimizer, position) pairs, e.g. "
                                f"mode.register((AddFeatureOptimizer(feature), 49.9)); got {item!r}")
        mode = self._derive(self.include, self.exclude, self.require)
        mode.registered = self.registered + tuple((_Registered(opt), float(at)) for opt, at in optimizations)
        return mode

    def __repr__(self) -> str:
        if self.name and not self.include and not self.exclude and not self.require:
            return self.name
        text = (f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r}, "
                f"include={self.include}, exclude={self.exclude}")
        return text + (f", require={self.require})" if self.require else ")")


class _Registered(GraphRewriter):
    """An optimizer given to ``Mode.register`` or ``register_optimizer``, as a phase: its
    ``add_requirements`` (a Theano Optimizer's) first, then its ``apply``, or the call."""

    def __init__(self, optimizer: Any):
        if not (hasattr(optimizer, "apply") or callable(optimizer)):
            raise TypeError(f"{optimizer!r} is not an optimizer: give a Theano Optimizer, a rewriter, or a "
                            "function of a FunctionGraph")
        self.optimizer = optimizer
        self.name = getattr(optimizer, "name", None) or type(optimizer).__name__

    def apply(self, fgraph: FunctionGraph) -> int:
        opt = self.optimizer
        if hasattr(opt, "add_requirements"):
            opt.add_requirements(fgraph)
        changes = opt.apply(fgraph) if hasattr(opt, "apply") else opt(fgraph)
        return changes if isinstance(changes, int) else 0


def _spliced(pipeline: Pipeline, registered: tuple[tuple[GraphRewriter, float], ...]) -> Pipeline:
    """``pipeline`` with each registered optimizer before the first phase Theano ran at a
    higher position (the merge at 0, then ``PHASE_POSITIONS``)."""
    extras = sorted(registered, key=lambda item: item[1])
    steps: list[tuple[str, GraphRewriter]] = []
    for phase, rewriter in zip(pipeline.phases, pipeline.rewriters):
        while extras and extras[0][1] < PHASE_POSITIONS.get(phase, 0.0):
            steps.append((f"registered {extras[0][0]}", extras.pop(0)[0]))
        steps.append((phase, rewriter))
    steps.extend((f"registered {rewriter}", rewriter) for rewriter, _ in extras)
    return Pipeline(steps, pipeline.include, pipeline.exclude)


class AddFeatureOptimizer:
    """An optimizer for ``Mode.register``: attaches ``feature`` to the graph at its position, so
    the feature sees every change the later rewrites make (``PrintListener`` prints them;
    a feature with ``validate`` judges those made through ``replace_validate``)."""

    def __init__(self, feature: Any):
        self.feature = feature

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        fgraph.attach_feature(self.feature)

    def apply(self, fgraph: FunctionGraph) -> int:
        return 0


class PrintCurrentFunctionGraph:
    """An optimizer for ``Mode.register``: prints ``header`` and the graph as the rewrites
    before its position left it (``debugprint``), to see what each phase did."""

    def __init__(self, header: str):
        self.header = header

    def apply(self, fgraph: FunctionGraph) -> int:
        from arignote.printing import debugprint
        print(f"PrintCurrentFunctionGraph: {self.header}")
        debugprint(fgraph.outputs)
        return 0


class _Selection(Query):
    """A mode's ``_optimizer``: its tags as a Query; setting ``position_cutoff`` sets the mode's."""

    def __init__(self, mode: Mode):
        preset = _PRESETS.get(mode.optimizer, ()) if isinstance(mode.optimizer, str) else ()
        super().__init__(preset + mode.include, mode.require, mode.exclude,
                         position_cutoff=mode.position_cutoff)
        self._mode = mode

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "position_cutoff" and "_mode" in self.__dict__:
            self._mode.position_cutoff = value


FAST_RUN = Mode("cpu", "fast_run", name="FAST_RUN")
FAST_COMPILE = Mode("cpu", "fast_compile", name="FAST_COMPILE")

class SharedMode:
    """A predefined mode made on its first use (after the flags its defaults read are loaded),
    then the same instance every time, as Theano's ``predefined_modes`` held instances: setting
    ``predefined_modes['DEBUG_MODE'].check_isfinite = False`` changes what that name gives."""

    def __init__(self, make: Callable[[], Mode]):
        self.make = make
        self.mode: Mode | None = None

    def __call__(self) -> Mode:
        if self.mode is None:
            self.mode = self.make()
        return self.mode


class _Predefined(dict):
    """``predefined_modes[name]`` is the mode itself (a shared mode is made on first use)."""

    def __getitem__(self, name: str) -> Any:
        found = super().__getitem__(name)
        return found() if isinstance(found, SharedMode) else found


# Mode names -> the mode (or a function making a new one each time, or a SharedMode); modules
# defining modes add theirs. ``predefined_modes`` is Theano's name.
PREDEFINED: dict[str, Mode | Callable[[], Mode]] = _Predefined({
    "FAST_RUN": FAST_RUN, "FAST_COMPILE": FAST_COMPILE, "Mode": Mode})
predefined_modes = PREDEFINED


def register_mode(name: str, mode: Mode) -> None:
    """Let ``function(..., mode=name)`` (and ``config.mode = name``) mean ``mode``."""
    if name in PREDEFINED:
        raise ValueError(f"register_mode: the mode name {name!r} is taken; choose another")
    PREDEFINED[name] = mode


def register_linker(name: str, linker: Linker) -> None:
    """Let ``Mode(linker=name)`` mean the linker object ``linker`` (a ``VM_Linker(callback=...)``...)."""
    if name in LINKERS or name in REGISTERED_LINKERS:
        raise ValueError(f"register_linker: the linker name {name!r} is taken; choose another")
    if not isinstance(linker, Linker):
        raise TypeError(f"register_linker({name!r}, ...) takes a linker object (theano.gof.vm.VM_Linker, "
                        f"PerformLinker...), got {linker!r}")
    REGISTERED_LINKERS[name] = linker


def register_optimizer(name: str, opt: Any) -> None:
    """Let ``Mode(optimizer=name)`` run ``opt`` (a Theano Optimizer, a rewriter, or a
    function of the FunctionGraph) instead of a preset."""
    if name in _PRESETS or name in ("None", "default") or name in REGISTERED_OPTIMIZERS:
        raise ValueError(f"register_optimizer: the optimizer name {name!r} is taken; choose another")
    REGISTERED_OPTIMIZERS[name] = _Registered(opt)


def get_mode(mode: Mode | str | None) -> Mode:
    """``None`` means ``config.mode`` (with ``config.optimizer``'s rewrites when that flag
    is set, and ``config.optimizer_excluding``/``including``/``requiring`` applied); strings
    name the predefined modes."""
    if isinstance(mode, Mode):
        return mode
    name = config.mode if mode is None else mode
    found = PREDEFINED.get(name)
    if found is None:
        raise ValueError(f"unknown mode {name!r}: use one of {', '.join(map(repr, PREDEFINED))} "
                         "or a Mode instance")
    found = found if isinstance(found, Mode) else found()
    if mode is None and config.optimizer and name != "Mode":
        found = found.clone(optimizer=config.optimizer)
        found.name = f"{name} with optimizer={config.optimizer}"
    if mode is None:  # the flags of Theano's name that adjust the default mode's rewrites
        for flag, derive in (("optimizer_excluding", Mode.excluding), ("optimizer_including", Mode.including),
                             ("optimizer_requiring", Mode.requiring)):
            tags = tuple(t for t in getattr(config, flag).split(":") if t)
            if tags:
                found = derive(found, *tags)
    return found


def get_default_mode() -> Mode:
    """The mode ``function()`` uses when given none (``config.mode``)."""
    return get_mode(None)
