"""Compiling graphs into callables: shared variables, In/Out, modes, function()."""
from arignote.compile.executor import Function
from arignote.compile.function import FunctionMaker, UnusedInputError, function, function_dump
from arignote.compile.io import In, Out
from arignote.compile.mode import Mode, get_default_mode, get_mode
from arignote.compile.sharedvalue import SharedVariable, TensorSharedVariable, shared, shared_constructor
from arignote.compile.pfunc import clone, pfunc, rebuild_collect_shared
from arignote.compile.debugmode import DebugMode
from arignote.compile.nanguardmode import NanGuardMode
from arignote.compile.monitormode import MonitorMode
from arignote.compile.ops import as_op
from arignote.compile.profiling import ProfileStats

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "function", "function_dump", "pfunc",
           "rebuild_collect_shared", "clone", "In", "Out", "Mode", "DebugMode", "NanGuardMode", "MonitorMode",
           "get_mode", "get_default_mode", "SharedVariable", "TensorSharedVariable", "shared",
           "shared_constructor", "as_op", "ProfileStats"]
