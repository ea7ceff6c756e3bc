"""The table of scalar operations that every elementwise op is built from.

One record per operation holds what each layer needs of it: the numpy
implementation (the reference, and the CPU backend), the C expression the GPU
kernel renderer uses, and the dtype rule. Gradients live in their own table in
the tensor layer, keyed by the op's name, so this table stays free of tensors.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.special as sp

from arignote.scalar.dtypes import COMPLEX, DISCRETE, FLOAT, INTEGER, upcast, upgrade_to_float


class ScalarOp:
    """An elementwise operation on scalars; hashable, so Elemwise ops built on it merge.

    ``dtype_rule`` maps input dtypes to the output dtype. ``ufunc`` is set when
    ``impl`` is a numpy ufunc, so the executor can write into a reused buffer.
    ``c_expr`` formats with the C names of the inputs (``{0}``, ``{1}``...).
    """

    def __init__(self, name: str, nin: int, impl: Callable, dtype_rule: Callable[..., str],
                 c_expr: str | None = None, accepts: tuple[str, ...] | None = None,
                 identity: object = None, commutative: bool = False, associative: bool = False):
        self.name = name
        self.nin = nin
        self.impl = impl
        self.ufunc = impl if isinstance(impl, np.ufunc) else None
        self.dtype_rule = dtype_rule
        self.c_expr = c_expr
        self.accepts = accepts
        self.identity = identity
        self.commutative = commutative
        self.associative = associative

    def key(self) -> tuple:
        return (self.name,)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash((type(self), self.key()))

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def output_dtype(self, *dtypes: str) -> str:
        if self.accepts is not None:
            for dtype in dtypes:
                if dtype not in self.accepts:
                    raise TypeError(f"{self.name} is not defined for {dtype} inputs; it takes "
                                    f"{', '.join(sorted(set(self.accepts)))}: cast the input first")
        return self.dtype_rule(*dtypes)

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> str | None:
        """The dtype to cast inputs to before calling ``impl`` (None: leave them)."""
        if out_dtype in FLOAT + COMPLEX and any(d not in FLOAT + COMPLEX for d in dtypes):
            return out_dtype
        return None


class Cast(ScalarOp):
    """Conversion to a fixed dtype; the dtype is part of its identity."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype).name
        super().__init__(f"convert_to_{self.dtype}", 1, self._cast, lambda d: self.dtype,
                         c_expr=f"(({self.dtype}){{0}})")

    def _cast(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x).astype(self.dtype)

    def key(self) -> tuple:
        return (self.name, self.dtype)

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> None:
        return None


def _same(*dtypes: str) -> str:
    return upcast(*dtypes)


def _boolean(*dtypes: str) -> str:
    return "bool"


def _real_of(*dtypes: str) -> str:
    dtype = upcast(*dtypes)
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def _switch(cond: str, a: str, b: str) -> str:
    return upcast(a, b)


def _clip(x: str, lo: str, hi: str) -> str:
    return upcast(x, lo, hi)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype, copy=False)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(np.zeros((), x.dtype), x)


def _sqr(x: np.ndarray) -> np.ndarray:
    return np.multiply(x, x)


def _switch_impl(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(cond, a, b)


REAL = DISCRETE + FLOAT
INTS = DISCRETE
TABLE: dict[str, ScalarOp] = {}


def _register(name: str, nin: int, impl: Callable, rule: Callable[..., str],
              c_expr: str | None = None, **kwargs: object) -> ScalarOp:
    op = ScalarOp(name, nin, impl, rule, c_expr, **kwargs)
    TABLE[name] = op
    return op


# name, arity, numpy implementation, dtype rule, C expression
add = _register("add", 2, np.add, _same, "({0} + {1})", identity=0, commutative=True, associative=True)
sub = _register("sub", 2, np.subtract, _same, "({0} - {1})")
mul = _register("mul", 2, np.multiply, _same, "({0} * {1})", identity=1, commutative=True, associative=True)
true_div = _register("true_div", 2, np.true_divide, upgrade_to_float, "({0} / {1})")
int_div = _register("int_div", 2, np.floor_divide, _same, "floor({0} / {1})", accepts=REAL)
mod = _register("mod", 2, np.mod, _same, "fmod({0}, {1})", accepts=REAL)
pow = _register("pow", 2, np.power, _same, "pow({0}, {1})")
maximum = _register("maximum", 2, np.maximum, _same, "max({0}, {1})", accepts=REAL,
                    commutative=True, associative=True)
minimum = _register("minimum", 2, np.minimum, _same, "min({0}, {1})", accepts=REAL,
                    commutative=True, associative=True)
arctan2 = _register("arctan2", 2, np.arctan2, upgrade_to_float, "atan2({0}, {1})", accepts=REAL)

lt = _register("lt", 2, np.less, _boolean, "({0} < {1})", accepts=REAL)
gt = _register("gt", 2, np.greater, _boolean, "({0} > {1})", accepts=REAL)
le = _register("le", 2, np.less_equal, _boolean, "({0} <= {1})", accepts=REAL)
ge = _register("ge", 2, np.greater_equal, _boolean, "({0} >= {1})", accepts=REAL)
eq = _register("eq", 2, np.equal, _boolean, "({0} == {1})", commutative=True)
neq = _register("neq", 2, np.not_equal, _boolean, "({0} != {1})", commutative=True)

and_ = _register("and_", 2, np.bitwise_and, _same, "({0} & {1})", accepts=INTS,
                 commutative=True, associative=True)
or_ = _register("or_", 2, np.bitwise_or, _same, "({0} | {1})", accepts=INTS,
                commutative=True, associative=True)
xor = _register("xor", 2, np.bitwise_xor, _same, "({0} ^ {1})", accepts=INTS,
                commutative=True, associative=True)
invert = _register("invert", 1, np.invert, _same, "(~{0})", accepts=INTS)

neg = _register("neg", 1, np.negative, _same, "(-{0})")
abs_ = _register("abs", 1, np.absolute, _real_of, "fabs({0})")
sgn = _register("sgn", 1, np.sign, _same, "(({0} > 0) - ({0} < 0))", accepts=REAL)
floor = _register("floor", 1, np.floor, upgrade_to_float, "floor({0})", accepts=REAL)
ceil = _register("ceil", 1, np.ceil, upgrade_to_float, "ceil({0})", accepts=REAL)
trunc = _register("trunc", 1, np.trunc, upgrade_to_float, "trunc({0})", accepts=REAL)
round_half_to_even = _register("round_half_to_even", 1, np.rint, upgrade_to_float, "rint({0})",
                               accepts=REAL)
round_half_away_from_zero = _register("round_half_away_from_zero", 1, _round_half_away,
                                      upgrade_to_float, "round({0})", accepts=REAL)
sqr = _register("sqr", 1, _sqr, _same, "({0} * {0})")
sqrt = _register("sqrt", 1, np.sqrt, upgrade_to_float, "sqrt({0})")
inv = _register("inv", 1, np.reciprocal, upgrade_to_float, "(1 / {0})")
exp = _register("exp", 1, np.exp, upgrade_to_float, "exp({0})")
exp2 = _register("exp2", 1, np.exp2, upgrade_to_float, "exp2({0})")
expm1 = _register("expm1", 1, np.expm1, upgrade_to_float, "expm1({0})")
log = _register("log", 1, np.log, upgrade_to_float, "log({0})")
log2 = _register("log2", 1, np.log2, upgrade_to_float, "log2({0})")
log10 = _register("log10", 1, np.log10, upgrade_to_float, "log10({0})")
log1p = _register("log1p", 1, np.log1p, upgrade_to_float, "log1p({0})")
sin = _register("sin", 1, np.sin, upgrade_to_float, "sin({0})")
cos = _register("cos", 1, np.cos, upgrade_to_float, "cos({0})")
tan = _register("tan", 1, np.tan, upgrade_to_float, "tan({0})")
arcsin = _register("arcsin", 1, np.arcsin, upgrade_to_float, "asin({0})")
arccos = _register("arccos", 1, np.arccos, upgrade_to_float, "acos({0})")
arctan = _register("arctan", 1, np.arctan, upgrade_to_float, "atan({0})")
sinh = _register("sinh", 1, np.sinh, upgrade_to_float, "sinh({0})")
cosh = _register("cosh", 1, np.cosh, upgrade_to_float, "cosh({0})")
tanh = _register("tanh", 1, np.tanh, upgrade_to_float, "tanh({0})")
arcsinh = _register("arcsinh", 1, np.arcsinh, upgrade_to_float, "asinh({0})")
arccosh = _register("arccosh", 1, np.arccosh, upgrade_to_float, "acosh({0})")
arctanh = _register("arctanh", 1, np.arctanh, upgrade_to_float, "atanh({0})")
deg2rad = _register("deg2rad", 1, np.deg2rad, upgrade_to_float, "({0} * 0.017453292519943295)",
                    accepts=REAL)
rad2deg = _register("rad2deg", 1, np.rad2deg, upgrade_to_float, "({0} * 57.29577951308232)",
                    accepts=REAL)
sigmoid = _register("sigmoid", 1, sp.expit, upgrade_to_float, "(1 / (1 + exp(-{0})))", accepts=REAL)
softplus = _register("softplus", 1, _softplus, upgrade_to_float,
                     "({0} > 30 ? {0} : log1p(exp({0})))", accepts=REAL)
erf = _register("erf", 1, sp.erf, upgrade_to_float, "erf({0})", accepts=REAL)
erfc = _register("erfc", 1, sp.erfc, upgrade_to_float, "erfc({0})", accepts=REAL)
erfinv = _register("erfinv", 1, sp.erfinv, upgrade_to_float, None, accepts=REAL)
erfcinv = _register("erfcinv", 1, sp.erfcinv, upgrade_to_float, None, accepts=REAL)
gammaln = _register("gammaln", 1, sp.gammaln, upgrade_to_float, "lgamma({0})", accepts=REAL)
psi = _register("psi", 1, sp.psi, upgrade_to_float, None, accepts=REAL)
isnan = _register("isnan", 1, np.isnan, _boolean, "isnan({0})")
isinf = _register("isinf", 1, np.isinf, _boolean, "isinf({0})")
identity = _register("identity", 1, np.positive, _same, "{0}")

switch = _register("switch", 3, _switch_impl, _switch, "({0} ? {1} : {2})")
clip = _register("clip", 3, np.clip, _clip, "min(max({0}, {1}), {2})", accepts=REAL)


