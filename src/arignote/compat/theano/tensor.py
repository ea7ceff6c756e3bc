"""Private names of ``theano.tensor`` that Theano's own tests and some user code import."""
import numpy as np

from arignote.compat.theano.modules import lazy_modules

from arignote.compile.sharedvalue import tensor_constructor as _shared

__all__ = ["_shared"]

# The tensor <-> scalar conversions, and Theano's name of the scalar module in tensor.basic.
from arignote.tensor.scalar_conversion import (ScalarFromTensor, TensorFromScalar,
                                               scalar_from_tensor, tensor_from_scalar)

__all__ += ["ScalarFromTensor", "TensorFromScalar", "scalar_from_tensor", "tensor_from_scalar"]
# Views imported when first asked for (__getattr__ below). Theano's tensor.basic had no __all__,
# so ``from theano.tensor import *`` also bound numpy as ``np`` and the modules ``basic`` and
# ``compile``: Theano's test files use them.
_LAZY_MODULES = {"scal": "theano.scalar", "basic": "theano.tensor.basic", "compile": "theano.compile"}
__all__ += ["np", *_LAZY_MODULES]


__getattr__ = lazy_modules(__name__, _LAZY_MODULES)


# Theano's tensor package star-imported tensor.type_other (slices and None as graph values).
from arignote.tensor import type_other as _type_other  # noqa: E402

globals().update({name: getattr(_type_other, name) for name in _type_other.__all__})
__all__ += _type_other.__all__

# The comparison tolerances of Theano's tensor.basic (its defaults, cmp_sloppy=0), which
# Theano's tests read as theano.tensor.float32_atol and so on.
float16_atol, float16_rtol = 1e-3, 1e-3
float32_atol, float32_rtol = 1e-5, 1e-5
float64_atol, float64_rtol = 1e-8, 1e-5
__all__ += ["float16_atol", "float16_rtol", "float32_atol", "float32_rtol", "float64_atol", "float64_rtol"]


def _allclose(a, b, rtol=None, atol=None) -> bool:
    """numpy.allclose with the tolerances above for the narrowest float dtype of ``a`` and ``b``
    (Theano's tensor.basic._allclose, which its tests call)."""
    a, b = np.asarray(a), np.asarray(b)
    dtypes = {a.dtype.name, b.dtype.name}
    atol_, rtol_ = ((float16_atol, float16_rtol) if "float16" in dtypes else
                    (float32_atol, float32_rtol) if dtypes & {"float32", "complex64"} else
                    (float64_atol, float64_rtol))
    return bool(np.allclose(a, b, rtol=rtol_ if rtol is None else rtol, atol=atol_ if atol is None else atol))


__all__ += ["_allclose"]


# Theano's tensor.basic._convert_to_<dtype>: the elementwise cast op itself (a node even when x
# has the dtype, where cast() gives x), its scalar op answering Theano's output_types_preference;
# and _cast_mapping, dtype -> that op.
def _conversion(dtype: str):
    from arignote.compat.theano.scalar import specific_out
    from arignote.scalar import Cast, get_scalar_type
    from arignote.tensor.elemwise import Elemwise
    scalar_op = Cast(dtype)
    scalar_op.output_types_preference = specific_out(get_scalar_type(dtype))
    return Elemwise(scalar_op)


_cast_mapping = {dtype: _conversion(dtype) for dtype in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}
for _dtype, _convert in _cast_mapping.items():
    globals()[f"_convert_to_{_dtype}"] = _convert
    __all__.append(f"_convert_to_{_dtype}")
__all__.append("_cast_mapping")
del _dtype, _convert

# Names theano.tensor had through tensor.basic's star import: the graph classes it imported
# from gof (library code tests ``isinstance(shape, T.Variable)``), and two spellings of its own.
from arignote.graph.basic import Apply, Constant, Op, Variable  # noqa: E402
from arignote.tensor.math import sqr as square  # noqa: E402
from arignote.tensor.variable import as_tensor_variable as as_tensor  # noqa: E402

__all__ += ["Apply", "Constant", "Op", "Variable", "square", "as_tensor"]


# Theano's MaxAndArgmax: one op with both outputs. arignote builds a max (CAReduce) and an
# argmax (Argmax) node, which rewrites and backends treat on their own; the class answers
# isinstance for either, and MaxAndArgmax(axis)(x) gives both.
class _MaxAndArgmaxClass(type):
    def __instancecheck__(cls, obj: object) -> bool:
        from arignote.tensor.reduction import Argmax, CAReduce
        return isinstance(obj, Argmax) or (isinstance(obj, CAReduce) and obj.scalar_op.name == "maximum")

    def __call__(cls, axis=None):
        from arignote.tensor.reduction import max_and_argmax
        return lambda x: max_and_argmax(x, axis)


class MaxAndArgmax(metaclass=_MaxAndArgmaxClass):
    """Theano's op of ``max_and_argmax`` (see above)."""


__all__ += ["MaxAndArgmax"]


# Theano's tensor.basic._dot, an instance of its Dot op, which took vectors and matrices only
# (arignote's Dot is numpy.dot of any dimensions, as Theano's dot() function was).
from arignote.tensor.blas import Dot as _Dot  # noqa: E402


class _VectorMatrixDot(_Dot):
    """numpy.dot of two vectors or matrices; other dimensions are refused, as Theano's Dot did."""

    def make_node(self, a, b):
        from arignote.tensor.variable import as_tensor_variable
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if not (a.ndim in (1, 2) and b.ndim in (1, 2)):
            raise TypeError(f"_dot takes vectors and matrices, got {a.describe()} ({a.ndim}-d) and "
                            f"{b.describe()} ({b.ndim}-d): use dot(), which takes any dimensions")
        return super().make_node(a, b)

    def __str__(self) -> str:
        return "dot"


_dot = _VectorMatrixDot()
__all__ += ["_dot"]
