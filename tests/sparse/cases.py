"""Sparse test values: random matrices over formats and dtypes, with explicit zeros and
empty ones among them."""
import numpy as np
import scipy.sparse as sp

FORMATS = ("csr", "csc")
FLOATS = ("float32", "float64")


def random_sparse(fmt, dtype, shape=(5, 4), density=0.4, seed=0, explicit_zero=False):
    """A ``fmt`` matrix of ``dtype`` with values in [0.5, 1.5) (integers: 1..9); one stored
    value set to an explicit zero when ``explicit_zero``."""
    rng = np.random.RandomState(seed)
    dense = rng.uniform(0.5, 1.5, shape) * (rng.uniform(size=shape) < density)
    if np.dtype(dtype).kind in "iu":
        dense = np.ceil(dense * 5)
    m = getattr(sp, f"{fmt}_matrix")(dense.astype(dtype))
    if explicit_zero and m.nnz:
        m.data[0] = 0
    return m


def matrices(fmt, dtype, shape=(5, 4)):
    """The matrices every op is checked on: a random one, one holding an explicit zero, an
    empty one (nothing stored) and one with no rows."""
    return [random_sparse(fmt, dtype, shape), random_sparse(fmt, dtype, shape, seed=1, explicit_zero=True),
            getattr(sp, f"{fmt}_matrix")(shape, dtype=dtype), getattr(sp, f"{fmt}_matrix")((0, shape[1]),
                                                                                            dtype=dtype)]


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
