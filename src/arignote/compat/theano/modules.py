"""The module map of the ``theano`` alias: Theano's module names -> arignote's.

Packages are *views*: a module of Theano's name whose attributes are looked up
in an arignote module (the same objects, so ``theano.tensor.dscalar is
arignote.tensor.dscalar``), with Theano's own submodules resolved through this
map. A view, rather than arignote's module itself, keeps the import system from
writing Theano's submodules onto arignote's packages (``import theano.tensor.var``
would otherwise replace arignote's ``tensor.var`` function by a module), and
lets one entry point differ where Theano 1.0 behaved differently (``OVERRIDES``).

Modules are the arignote module itself. A Theano name in neither table
resolves to the same path under its parent view's target when that exists
(``theano.tensor.elemwise`` -> ``arignote.tensor.elemwise``). A target that
this build lacks (a module another part of the project adds later) makes that
name unimportable, as a module Theano did not have would be: never an error
at ``import theano``.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable

# Theano package -> (arignote module it delegates to, or None for a package of Theano's
# layout only; module whose public names override the delegated ones, or None).
VIEWS: dict[str, tuple[str | None, str | None]] = {
    "theano": ("arignote", "arignote.compat.theano.top"),
    "theano.tensor": ("arignote.tensor", "arignote.compat.theano.tensor"),
    "theano.tensor.nnet": ("arignote.tensor.nnet", "arignote.compat.theano.nnet"),
    "theano.compile": ("arignote.compile", "arignote.compat.theano.compile"),
    "theano.compile.mode": ("arignote.compile.mode", "arignote.compat.theano.compile_mode"),
    "theano.scan_module": ("arignote.scan_module", None),
    "theano.sandbox": ("arignote.sandbox", None),
    "theano.sandbox.linalg": ("arignote.sandbox.linalg", None),
    "theano.d3viz": ("arignote.d3viz", None),
    "theano.gof": ("arignote.graph", "arignote.compat.theano.gof"),
    "theano.misc": ("arignote.misc", None),
    "theano.sparse": ("arignote.sparse", "arignote.compat.theano.sparse"),
    "theano.sparse.sandbox": (None, None),
    "theano.scalar": ("arignote.scalar", "arignote.compat.theano.scalar"),
    "theano.tests": (None, None),
    "theano.typed_list": ("arignote.typed_list", None),
    "theano.gpuarray": (None, "arignote.compat.theano.gpuarray"),
}

# Theano module -> the module it is (an arignote module, a shim of Theano's layout, or
# another Theano name).
MODULES: dict[str, str] = {
    "theano.compat": "arignote.compat.theano.pycompat",
    "theano.configdefaults": "arignote.compat.theano.configdefaults",
    "theano.configparser": "arignote.compat.theano.configparser",
    "theano.sparse.basic": "theano.sparse",
    "theano.sparse.type": "theano.sparse",
    "theano.sparse.utils": "arignote.compat.theano.sparse",
    "theano.sparse.opt": "arignote.compat.theano.sparse",
    "theano.sparse.sandbox.sp2": "arignote.sparse.random",
    "theano.sparse.sandbox.sp": "arignote.sparse.convolution",
    "theano.gof.graph": "arignote.compat.theano.gof",
    "theano.gof.utils": "arignote.compat.theano.gof_utils",
    "theano.gof.op": "arignote.compat.theano.gof",
    "theano.gof.type": "arignote.compat.theano.gof",
    "theano.gof.null_type": "arignote.graph.types",
    "theano.gof.opt": "arignote.compat.theano.opt",
    "theano.gof.toolbox": "arignote.compat.theano.toolbox",
    "theano.gof.optdb": "arignote.compat.theano.optdb",
    "theano.gof.sched": "arignote.graph.scheduling",
    "theano.gof.link": "arignote.compile.linkers",
    "theano.gof.vm": "arignote.compile.linkers",
    "theano.gof.cc": "arignote.compat.theano.gof",
    "theano.tensor.basic": "theano.tensor",
    "theano.scalar.basic": "theano.scalar",
    "theano.scalar.basic_scipy": "theano.scalar",
    "theano.tensor.var": "arignote.compat.theano.tensor_var",
    "theano.tensor.opt": "arignote.compat.theano.tensor_opt",
    "theano.tensor.sharedvar": "arignote.compat.theano.tensor_sharedvar",
    "theano.tensor.raw_random": "arignote.compat.theano.raw_random",
    "theano.tensor.blas": "arignote.compat.theano.tensor_blas",
    "theano.tensor.blas_c": "arignote.compat.theano.tensor_blas_c",
    "theano.tensor.blas_scipy": "arignote.compat.theano.tensor_blas_scipy",
    "theano.tensor.nnet.nnet": "theano.tensor.nnet",
    "theano.tensor.nnet.sigm": "theano.tensor.nnet",
    "theano.tensor.nnet.conv": "arignote.tensor.nnet.conv_legacy",
    "theano.scan_module.scan": "arignote.scan_module.basic",
    "theano.scan_module.scan_op": "arignote.scan_module.op",
    "theano.scan_module.scan_checkpoints": "arignote.scan_module.checkpoints",
    "theano.scan_module.scan_utils": "arignote.scan_module.utils",
    "theano.scan_module.scan_opt": "arignote.scan_module.rewrites",
    "theano.compile.function_module": "arignote.compat.theano.function_module",
    "theano.misc.may_share_memory": "arignote.compat.theano.may_share_memory",
    "theano.misc.safe_asarray": "arignote.compat.theano.top",
    "theano.typed_list.basic": "arignote.typed_list",
    "theano.typed_list.type": "arignote.typed_list",
    "theano.tests.unittest_tools": "arignote.testing",
    "theano.tests.breakpoint": "arignote.misc.breakpoint",
    "theano.tests.record": "arignote.compile.record",
    "theano.tests.disturb_mem": "arignote.compile.record",
    "theano.sandbox.linalg.ops": "arignote.compat.theano.sandbox_linalg",
    "theano.d3viz.d3viz": "arignote.d3viz.page",
    "theano.gpuarray.dnn": "arignote.compat.theano.gpuarray_dnn",
}


def lazy_modules(owner: str, names: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``owner``, whose attributes ``names`` are alias modules
    imported when first asked for: Theano's modules bound them at the top (tests take them from
    there), and importing them at the top here would import the alias while it is loading."""
    def __getattr__(name: str) -> object:
        if name in names:
            return importlib.import_module(names[name])
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    return __getattr__
