"""Private names of ``theano.tensor`` that Theano's own tests and some user code import."""
import numpy as np

from arignote.compile.sharedvalue import tensor_constructor as _shared

__all__ = ["_shared"]

# The tensor <-> scalar conversions, and Theano's name of the scalar module in tensor.basic.
from arignote.tensor.scalar_conversion import (ScalarFromTensor, TensorFromScalar,
                                               scalar_from_tensor, tensor_from_scalar)

__all__ += ["ScalarFromTensor", "TensorFromScalar", "scalar_from_tensor", "tensor_from_scalar"]
__all__.append("scal")  # from __getattr__ below


def __getattr__(name: str) -> object:
    if name == "scal":  # the theano.scalar view, imported when first asked for
        import importlib
        return importlib.import_module("theano.scalar")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
