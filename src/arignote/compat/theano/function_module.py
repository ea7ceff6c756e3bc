"""``theano.compile.function_module``: the compiled function, its maker and the copy op it
puts on outputs."""
from arignote.compile.executor import Function
from arignote.compile.function import FunctionMaker, UnusedInputError, function
from arignote.compile.output_copies import DeepCopyOp, deep_copy_op

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "orig_function", "DeepCopyOp", "deep_copy_op"]

orig_function = function
