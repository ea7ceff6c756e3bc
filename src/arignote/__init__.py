"""arignote: Theano-style array expressions compiled for the CPU, OpenCL and CUDA.

``from arignote import function, config, shared, tensor, sandbox`` is the
import line of Theano scripts, under a new name.
"""
from arignote.config import config
from arignote.graph import Apply, Constant, FunctionGraph, MissingInputError, Op, Type, Variable
from arignote import tensor
from arignote.compile import (In, Mode, Out, SharedVariable, UnusedInputError, clone, function,
                              function_dump, shared)
from arignote.tensor.blas import dot
from arignote.updates import OrderedUpdates
from arignote import sandbox
from arignote import gradient
from arignote.gradient import Lop, Rop, grad, hessian, jacobian, subgraph_grad, verify_grad
from arignote.compile.builders import OpFromGraph
from arignote.compile.ops import as_op
from arignote.printing import debugprint, pp
from arignote.backends.gpu import explain
from arignote import scan_module
from arignote.scan_module import foldl, foldr, map, reduce, scan, scan_checkpoints  # noqa: A004 - Theano's names
from arignote.serialization import load, save
from arignote import misc

change_flags = config.change_flags

__version__ = "0.1.0"
__all__ = ["config", "function", "shared", "tensor", "sandbox", "In", "Out", "Mode",
           "SharedVariable", "Apply", "Constant", "FunctionGraph", "Op", "Type", "Variable",
           "MissingInputError", "UnusedInputError", "debugprint", "pp", "scan_module", "scan", "map",
           "reduce", "foldl", "foldr", "explain", "gradient", "grad", "verify_grad", "Lop", "Rop",
           "jacobian", "hessian", "subgraph_grad", "change_flags", "clone", "dot", "function_dump",
           "OrderedUpdates", "OpFromGraph", "as_op", "save", "load", "misc", "scan_checkpoints"]
