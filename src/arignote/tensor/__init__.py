"""Tensors: the array type, its variables, and every tensor operation.

Each module holds one family of ops and lists its public names in ``__all__``;
this package re-exports them, so ``arignote.tensor.exp`` and
``arignote.tensor.nnet.softmax`` are where Theano users expect them.
"""
from arignote.tensor.type import CONSTRUCTORS, TensorType, tensor
from arignote.tensor.variable import TensorConstant, TensorVariable, as_tensor_variable, constant
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.math import *  # noqa: F401,F403
from arignote.tensor.shape import *  # noqa: F401,F403
from arignote.tensor.reduction import *  # noqa: F401,F403
from arignote.tensor.blas import *  # noqa: F401,F403
from arignote.tensor.join import *  # noqa: F401,F403
from arignote.tensor.alloc import *  # noqa: F401,F403
from arignote.tensor.subtensor import *  # noqa: F401,F403
from arignote.tensor import nnet  # noqa: F401

globals().update(CONSTRUCTORS)
