"""Private names of ``theano.tensor`` that Theano's own tests and some user code import."""
from arignote.compile.sharedvalue import tensor_constructor as _shared

__all__ = ["_shared"]

# The comparison tolerances of Theano's tensor.basic (its defaults, cmp_sloppy=0), which
# Theano's tests read as theano.tensor.float32_atol and so on.
float16_atol, float16_rtol = 1e-3, 1e-3
float32_atol, float32_rtol = 1e-5, 1e-5
float64_atol, float64_rtol = 1e-8, 1e-5
__all__ += ["float16_atol", "float16_rtol", "float32_atol", "float32_rtol", "float64_atol", "float64_rtol"]
