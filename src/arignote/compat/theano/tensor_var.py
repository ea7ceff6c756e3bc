"""``theano.tensor.var``: the tensor variable classes (``arignote.tensor.variable``)."""
from arignote.tensor.variable import TensorConstant, TensorVariable, _TensorOperators

__all__ = ["TensorVariable", "TensorConstant", "_tensor_py_operators"]

_tensor_py_operators = _TensorOperators
