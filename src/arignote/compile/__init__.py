"""Compiling graphs into callables: shared variables, In/Out, modes, function()."""
from arignote.compile.executor import Function
from arignote.compile.function import FunctionMaker, UnusedInputError, function
from arignote.compile.io import In, Out
from arignote.compile.mode import Mode, get_default_mode, get_mode
from arignote.compile.sharedvalue import SharedVariable, TensorSharedVariable, shared, shared_constructor

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "function", "In", "Out", "Mode",
           "get_mode", "get_default_mode", "SharedVariable", "TensorSharedVariable", "shared",
           "shared_constructor"]
