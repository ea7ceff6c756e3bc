"""Private names of ``theano.tensor`` that Theano's own tests and some user code import."""
from arignote.compile.sharedvalue import tensor_constructor as _shared

__all__ = ["_shared"]

# The comparison tolerances of Theano's tensor.basic (its defaults, cmp_sloppy=0), which
# Theano's tests read as theano.tensor.float32_atol and so on.
float16_atol, float16_rtol = 1e-3, 1e-3
float32_atol, float32_rtol = 1e-5, 1e-5
float64_atol, float64_rtol = 1e-8, 1e-5
__all__ += ["float16_atol", "float16_rtol", "float32_atol", "float32_rtol", "float64_atol", "float64_rtol"]


def _allclose(a, b, rtol=None, atol=None) -> bool:
    """Theano's ``tensor.basic._allclose``: ``numpy.allclose`` with the tolerances of the less
    precise of the two dtypes (float16, then float32/complex64, else float64's), which
    ``rtol``/``atol`` override. Theano's tests compare results with it."""
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    dtypes = {str(a.dtype), str(b.dtype)}
    tolerances = ((float16_atol, float16_rtol) if "float16" in dtypes else
                  (float32_atol, float32_rtol) if dtypes & {"float32", "complex64"} else
                  (float64_atol, float64_rtol))
    return bool(np.allclose(a, b, atol=tolerances[0] if atol is None else atol,
                            rtol=tolerances[1] if rtol is None else rtol))


__all__ += ["_allclose"]
