"""``theano.tensor.sharedvar``: the constructors of shared arrays."""
from arignote.compile.sharedvalue import SharedVariable, TensorSharedVariable, tensor_constructor

__all__ = ["SharedVariable", "TensorSharedVariable", "tensor_constructor", "scalar_constructor"]

scalar_constructor = tensor_constructor  # one constructor makes 0-d shared arrays too
