"""``theano.compile.function_module``: the compiled function and its maker."""
from arignote.compile.executor import Function
from arignote.compile.function import FunctionMaker, UnusedInputError, function

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "orig_function"]

orig_function = function
