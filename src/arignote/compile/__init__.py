"""Compiling graphs into callables: shared variables, In/Out, modes, function()."""
from arignote.compile.executor import Function
from arignote.compile.function import FunctionMaker, UnusedInputError, function
from arignote.compile.io import In, Out
from arignote.compile.mode import Mode, get_mode
from arignote.compile.sharedvalue import SharedVariable, TensorSharedVariable, shared, shared_constructor
from arignote.compile.debugmode import DebugMode
from arignote.compile.nanguardmode import NanGuardMode

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "function", "In", "Out", "Mode",
           "get_mode", "DebugMode", "NanGuardMode", "SharedVariable", "TensorSharedVariable", "shared", "shared_constructor"]
