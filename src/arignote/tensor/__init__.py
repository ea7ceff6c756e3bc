"""Tensors: the array type, its variables, and every tensor operation.

Each module holds one family of ops and lists its public names in ``__all__``;
this package re-exports them, so ``arignote.tensor.exp`` and
``arignote.tensor.nnet.softmax`` are where Theano users expect them.
"""
from arignote.tensor.type import (CONSTRUCTORS, Tensor, TensorType, all_dtypes, complex_dtypes,
                                  continuous_dtypes, discrete_dtypes, float_dtypes, int_dtypes,
                                  integer_dtypes, tensor, uint_dtypes)
from arignote.tensor.variable import TensorConstant, TensorVariable, as_tensor_variable, constant
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.math import *  # noqa: F401,F403
from arignote.tensor.shape import *  # noqa: F401,F403
from arignote.tensor.reduction import *  # noqa: F401,F403
from arignote.tensor.blas import *  # noqa: F401,F403
from arignote.tensor.join import *  # noqa: F401,F403
from arignote.tensor.alloc import *  # noqa: F401,F403
from arignote.tensor.subtensor import *  # noqa: F401,F403
from arignote.tensor.diagonal import *  # noqa: F401,F403
from arignote.tensor.composed import *  # noqa: F401,F403
from arignote.tensor.checks import *  # noqa: F401,F403
from arignote.tensor.sort import argsort, sort  # noqa: F401
from arignote.tensor.extra_ops import Choose, choose  # noqa: F401
from arignote.tensor.extra_ops import (DiffOp, bartlett, bincount, cumprod, cumsum, fill_diagonal,  # noqa: F401
                                       fill_diagonal_offset, flatnonzero, nonzero, nonzero_values,
                                       permute_row_elements, ravel_multi_index, unravel_index)
from arignote.tensor import extra_ops, nlinalg, nnet, signal, slinalg  # noqa: F401
from arignote.tensor.io import load  # noqa: F401
from arignote.tensor.type_other import NoneConst  # noqa: F401

globals().update(CONSTRUCTORS)

# Last: gradient builds on every module above (and this binds tensor.grad, the
# function, over the arignote.tensor.grad package of rules, as Theano had it).
from arignote.gradient import Lop, Rop, grad, hessian, jacobian, numeric_grad, verify_grad  # noqa: E402,F401


def __getattr__(name: str):
    # Random streams hold shared variables (compile/), which imports this package,
    # so they load on first use: ``arignote.tensor.shared_randomstreams.RandomStreams``.
    if name in ("random", "shared_randomstreams"):
        import importlib
        return importlib.import_module(f"arignote.tensor.{name}")
    raise AttributeError(f"module 'arignote.tensor' has no attribute {name!r}")
