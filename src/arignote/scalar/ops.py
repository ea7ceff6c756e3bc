"""The table of scalar operations that every elementwise op is built from.

One record per operation holds what each layer needs of it: the numpy
implementation (the reference, and the CPU backend), the C expression the GPU
kernel renderer uses, and the dtype rule. Gradients live in their own table in
the tensor layer, keyed by the op's name, so this table stays free of tensors.

Each op is also a graph Op on scalar-typed variables (scalar/type.py):
``add(x, y)`` builds an Apply whose ``perform`` runs the same numpy
implementation on numpy scalars, and whose gradient is the tensor rule's, taken
through ``tensor_from_scalar``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import functools
import importlib

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Op
from arignote.scalar.dtypes import ALL, COMPLEX, DISCRETE, FLOAT, upcast, upgrade_to_float


class _SciPy:
    """A scipy.special function found on first use: importing scipy.special costs
    about 0.4 s, most of ``import arignote``, and most graphs never need it."""

    def __init__(self, name: str):
        self.name = name

    def resolve(self) -> Callable:
        return getattr(importlib.import_module("scipy.special"), self.name)


def _trigamma(x: np.ndarray) -> np.ndarray:
    return importlib.import_module("scipy.special").polygamma(1, x)


def _chi2sf(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The chi-squared survival function of ``x`` with ``k`` degrees of freedom (1 below 0)."""
    return importlib.import_module("scipy.stats").chi2.sf(x, k)


class ComplexError(TypeError):
    """A complex input to an op defined only for real numbers (``%`` of a complex)."""


class ScalarOp(Op):
    """An elementwise operation on scalars; hashable, so Elemwise ops built on it merge.

    ``dtype_rule`` maps input dtypes to the output dtype. ``accepts`` lists the
    input dtypes the op is defined for (None: all); ``bool_result=False`` refuses
    inputs whose upcast is bool (``sub`` of two bools means nothing numpy will
    compute). ``ufunc`` is set when ``impl`` is a numpy ufunc, so the executor
    can write into a reused buffer. ``cast_inputs`` says whether inputs are
    converted to a float output dtype before ``impl`` runs (see
    :meth:`compute_dtype`). ``c_expr`` formats with the C names of the inputs
    (``{0}``, ``{1}``...), which the kernel renderer has already converted to
    the compute dtype, and with ``{T}``, the C type of that dtype (for constants
    numpy computes in it); None means no kernel expression yet.

    Called on scalar variables (or numbers) it builds a node of a scalar graph;
    an associative op (add, mul, ...) takes any number of inputs, folded from the left.
    """

    nout = 1

    def __init__(self, name: str, nin: int, impl: Callable, dtype_rule: Callable[..., str],
                 c_expr: str | None = None, accepts: tuple[str, ...] | None = None,
                 identity: object = None, commutative: bool = False, associative: bool = False,
                 bool_result: bool = True, cast_inputs: bool = True,
                 c_exprs: dict[str, str | None] | None = None):
        self.name = name
        self.nin = nin
        self._impl = impl
        self.dtype_rule = dtype_rule
        self.c_expr = c_expr
        self.accepts = accepts
        self.identity = identity
        self.commutative = commutative
        self.associative = associative
        self.bool_result = bool_result
        self.cast_inputs = cast_inputs
        self.c_exprs = c_exprs or {}

    @property
    def impl(self) -> Callable:
        impl = self._impl
        if isinstance(impl, _SciPy):
            impl = self._impl = impl.resolve()
        return impl

    @property
    def ufunc(self) -> np.ufunc | None:
        impl = self.impl
        return impl if isinstance(impl, np.ufunc) else None

    def key(self) -> tuple:
        return (self.name,)

    def __reduce_ex__(self, protocol: int) -> tuple:
        if TABLE.get(self.name) is self:
            return _table_op, (self.name,)
        return super().__reduce_ex__(protocol)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash((type(self), self.key()))

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def output_dtype(self, *dtypes: str, names: Sequence[str] | None = None) -> str:
        """The output dtype for these input dtypes; TypeError if the op refuses them.

        ``names`` describe the inputs in the error message (``'x'``, ...).
        """
        if self.accepts is not None:
            for k, dtype in enumerate(dtypes):
                if dtype not in self.accepts:
                    who = names[k] if names else f"input {k}"
                    error = ComplexError if dtype in COMPLEX else TypeError
                    raise error(f"{self.name}: {who} is {dtype}, but {self.name} is only "
                                    f"defined for {_describe_dtypes(self.accepts)}: cast it first, "
                                    f"e.g. with .astype({_suggest_cast(dtype, self.accepts)!r})")
        if not self.bool_result and all(d == "bool" for d in dtypes):
            names = names or [f"input {k}" for k in range(len(dtypes))]
            raise TypeError(f"{self.name} is not defined for bool inputs ({', '.join(names)}): "
                            "cast one to an integer dtype first, e.g. with .astype('int8')"
                            + ("; for logical not use invert (~x)" if self.name == "neg" else "")
                            + ("; for logical xor use xor (x ^ y)" if self.name == "sub" else ""))
        return self.dtype_rule(*dtypes)

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> str | None:
        """The dtype to cast inputs to before calling ``impl`` (None: leave them).

        A float or complex result computed from discrete inputs is computed in
        the output dtype: ``exp`` of int8 in float32 (numpy would choose
        float16), ``int32 + float32`` under floatX=float32 in float32.
        """
        if (self.cast_inputs and out_dtype in FLOAT + COMPLEX
                and any(d not in FLOAT + COMPLEX for d in dtypes)):
            return out_dtype
        return None

    def c_code(self, args: Sequence[str], dtypes: Sequence[str], out_dtype: str,
               ctype: Callable[[str], str]) -> str | None:
        """A C expression of dtype ``out_dtype`` computing this op on the C
        expressions ``args`` (of ``dtypes``); ``ctype`` names a dtype's C type in
        the kernel's dialect. None when there is no kernel for these dtypes.

        Operands are first converted to the dtype numpy computes in (the compute
        dtype, else their upcast), so C's own promotions never decide a result;
        ``c_exprs`` overrides ``c_expr`` per operand kind (numpy kind letters:
        ``'b'`` bool, ``'iu'`` integers, ``'f'`` floats), where C's operators
        mean something else than numpy's (integer floor division, NaN in max).
        """
        operand = out_dtype
        if self.cast_inputs:
            operand = self.compute_dtype(out_dtype, *dtypes) or upcast(*dtypes)
            args = [a if d == operand else f"(({ctype(operand)}){a})" for a, d in zip(args, dtypes)]
        kind = np.dtype(operand).kind
        template = next((t for kinds, t in self.c_exprs.items() if kind in kinds), self.c_expr)
        if template is None:
            return None
        return c_convert(template.format(*args, T=ctype(operand)), out_dtype, ctype)

    def c_block(self, args: Sequence[str], dtypes: Sequence[str], out_dtype: str,
                ctype: Callable[[str], str]) -> tuple[list[str], str] | None:
        """Statements to run first and the result expression (see :meth:`c_code`)."""
        expr = self.c_code(args, dtypes, out_dtype, ctype)
        return None if expr is None else ([], expr)

    # ------------------------------------------------ as an op of scalar graphs
    def make_node(self, *inputs: object) -> Apply:
        from arignote.scalar.variable import as_scalar
        from arignote.scalar.type import get_scalar_type

        if len(inputs) != self.nin:
            if self.associative and len(inputs) > self.nin:
                return self.make_node(self(*inputs[:-1]), inputs[-1])
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(inputs)}")
        inputs = [as_scalar(i) for i in inputs]
        dtypes = [i.type.dtype for i in inputs]
        try:
            dtype = self.output_dtype(*dtypes)
        except TypeError:  # again, naming the inputs (describing them costs, so only now)
            names = [f"input {k} ({i.describe()})" for k, i in enumerate(inputs)]
            raise self._refusal(dtypes, names) from None
        return Apply(self, inputs, [get_scalar_type(dtype)()])

    def _refusal(self, dtypes: Sequence[str], names: Sequence[str]) -> TypeError:
        try:
            self.output_dtype(*dtypes, names=names)
        except TypeError as err:
            return err
        raise AssertionError("output_dtype refused these dtypes once")

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        out = node.outputs[0].type.numpy_dtype
        values = [np.asarray(v) for v in inputs]
        compute = self.compute_dtype(out.name, *[i.type.dtype for i in node.inputs])
        if compute is not None:
            values = [v.astype(compute) for v in values]
        output_storage[0][0] = np.asarray(self.impl(*values)).astype(out)[()]

    def grad(self, inputs: list, output_grads: list) -> list:
        """The tensor rule of this op (the Elemwise rule), on the inputs as 0-d tensors;
        the gradients come back as scalars."""
        from arignote.tensor.scalar_conversion import scalar_gradients

        return scalar_gradients(self, inputs, output_grads)


def c_convert(expr: str, dtype: str, ctype: Callable[[str], str]) -> str:
    """``expr`` converted to ``dtype`` as numpy's astype does (bool: nonzero)."""
    if dtype == "bool":
        return f"(({expr}) != 0)"
    return f"(({ctype(dtype)})({expr}))"


def _describe_dtypes(dtypes: tuple[str, ...]) -> str:
    kinds = set(dtypes)
    if kinds == set(DISCRETE):
        return "bool and integer dtypes"
    if kinds == set(REAL):
        return "real dtypes (bool, integers and floats, not complex)"
    return ", ".join(d for d in ALL if d in kinds)


def _suggest_cast(dtype: str, accepts: tuple[str, ...]) -> str:
    if dtype in COMPLEX and "float64" in accepts:
        return "float64"
    if dtype in FLOAT + COMPLEX and "int64" in accepts:
        return "int64"
    return accepts[-1]


class Cast(ScalarOp):
    """Conversion to a fixed dtype; the dtype is part of its identity."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(getattr(dtype, "dtype", dtype)).name  # a dtype, or a ScalarType
        super().__init__(f"convert_to_{self.dtype}", 1, self._cast, lambda d: self.dtype,
                         c_expr="{0}", cast_inputs=False)

    def _cast(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x).astype(self.dtype)

    def key(self) -> tuple:
        return (self.name, self.dtype)

    def __reduce__(self) -> tuple:
        return Cast, (self.dtype,)

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> None:
        return None


class TransferType(ScalarOp):
    """``base`` with its result in the dtype of input ``index`` (Theano's ``transfer_type``).

    ``tensor.inplace``'s ops write their result into their first input, so they compute
    in that input's dtype: ``add_inplace`` of an int matrix and a float one truncates into
    the ints, ``gamma_inplace`` of ints gives ints. As in Theano, some ops keep their own
    dtype (comparisons are bool, bitwise ops the upcast, true division of integers
    floatX), so those hold their result in place only where it has the input's dtype.
    """

    def __init__(self, base: ScalarOp, index: int = 0):
        super().__init__(base.name, base.nin, base._impl, base.dtype_rule, base.c_expr,
                         accepts=base.accepts, identity=base.identity, commutative=base.commutative,
                         associative=base.associative, bool_result=base.bool_result,
                         cast_inputs=base.cast_inputs, c_exprs=base.c_exprs)
        self.base = base
        self.index = index

    def key(self) -> tuple:
        return ("transfer_type", self.index, type(self.base), self.base.key())

    def __reduce_ex__(self, protocol: int) -> tuple:
        return TransferType, (self.base, self.index)

    def output_dtype(self, *dtypes: str, names: Sequence[str] | None = None) -> str:
        own = self.base.output_dtype(*dtypes, names=names)
        keeps_own = self.dtype_rule in (_boolean, _bitwise) or (
            self.dtype_rule is _true_div and all(d in DISCRETE for d in dtypes))
        return own if keeps_own else dtypes[self.index]

    def compute_dtype(self, out_dtype: str, *dtypes: str) -> str | None:
        return self.base.compute_dtype(out_dtype, *dtypes)

    def c_code(self, args: Sequence[str], dtypes: Sequence[str], out_dtype: str,
               ctype: Callable[[str], str]) -> str | None:
        return self.base.c_code(args, dtypes, out_dtype, ctype)


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


def _bitwise(*dtypes: str) -> str:
    dtype = upcast(*dtypes)
    if dtype not in DISCRETE:
        raise TypeError(f"bitwise operations on {' and '.join(dtypes)}: numpy promotes this mix to "
                        f"{dtype}, which has no bits to combine; cast both inputs to int64 "
                        "(or both to uint64) first")
    return dtype


def _true_div(x: str, y: str) -> str:
    # Theano's rule: dividing integers gives floatX, whatever their width.
    if x in DISCRETE and y in DISCRETE:
        return config.floatX
    return upgrade_to_float(x, y)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    # x - trunc(x) is exact, where x + 0.5 would round 0.49999999999999994 up.
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole).astype(x.dtype, copy=False)


def _copy(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


# numpy's real and imag return views of complex arrays; an output must not alias its input.
def _real(x: np.ndarray) -> np.ndarray:
    return np.array(np.real(x), copy=True)


def _complex_of(*dtypes: str) -> str:
    """Theano's rule: complex128 from 64-bit floats and 32/64-bit ints, complex64 otherwise."""
    up = upcast(*dtypes)
    return "complex128" if up in ("float64", "int64", "uint64", "int32", "uint32") else "complex64"


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    return np.asarray(re + 1j * np.asarray(im))


def _complex_from_polar(magnitude: np.ndarray, angle: np.ndarray) -> np.ndarray:
    # The exponential in the wider input's precision: 1j times a float16 angle is complex64.
    magnitude, angle = np.asarray(magnitude), np.asarray(angle)
    angle = angle.astype(np.result_type(magnitude.dtype, angle.dtype, np.float32), copy=False)
    return np.asarray(magnitude * np.exp(1j * angle))


def _imag(x: np.ndarray) -> np.ndarray:
    return np.array(np.imag(x), copy=True)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(np.zeros((), x.dtype), x)


def _sqr(x: np.ndarray) -> np.ndarray:
    return np.multiply(x, x)


def _clip_impl(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    # Theano's clip: below lo gives lo, else above hi gives hi, else x; so lo wins where
    # lo > hi (numpy's clip gives hi there), and a NaN bound clips nothing.
    return np.asarray(np.where(x < lo, lo, np.where(x > hi, hi, x)))


def _switch_impl(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(cond, a, b)


REAL = DISCRETE + FLOAT
INTS = DISCRETE

# numpy's integer // and % round toward minus infinity and give 0 for a zero
# divisor; C truncates and traps (also on MIN // -1), hence the guards.
_INT_FLOOR_DIV = ("({1} == 0 ? 0 : (({1} < 0 && {1} == -1) ? (0 - {0}) : "
                  "({0} / {1} - ((({0} % {1}) != 0) & (({0} < 0) != ({1} < 0))))))")
_INT_MOD = ("(({1} == 0 || ({1} < 0 && {1} == -1)) ? 0 : "
            "((({0} % {1}) != 0 && ((({0} % {1}) < 0) != ({1} < 0))) ? ({0} % {1}) + {1} : ({0} % {1})))")
# numpy's float // and % (npy_divmod): from fmod, the quotient snapped to an integer, the
# remainder taking the divisor's sign, zeros signed; floor(a / b) differs where a / b rounds.
_FMOD = "fmod({0}, {1})"
_FLOAT_QUOTIENT = (f"(({{0}} - {_FMOD}) / {{1}} - ((({_FMOD} != 0) && (({{1}} < 0) != ({_FMOD} < 0))) "
                   "? 1 : 0))")
_FLOAT_FLOOR_DIV = ("({1} == 0 ? {0} / {1} : (_Q != 0 ? floor(_Q) + ((_Q - floor(_Q) > 0.5) ? 1 : 0) "
                    ": copysign(({T})0, {0} / {1})))").replace("_Q", _FLOAT_QUOTIENT)
_FLOAT_MOD = (f"({{1}} == 0 ? {_FMOD} : ({_FMOD} != 0 ? ((({{1}} < 0) != ({_FMOD} < 0)) ? "
              f"{_FMOD} + {{1}} : {_FMOD}) : copysign(({{T}})0, {{1}})))")
TABLE: dict[str, ScalarOp] = {}


def _table_op(name: str) -> ScalarOp:
    return TABLE[name]


def _register(name: str, nin: int, impl: Callable, rule: Callable[..., str],
              c_expr: str | None = None, **kwargs: object) -> ScalarOp:
    op = ScalarOp(name, nin, impl, rule, c_expr, **kwargs)
    TABLE[name] = op
    return op


# name, arity, numpy implementation, dtype rule, C expression
add = _register("add", 2, np.add, _same, "({0} + {1})", identity=0, commutative=True, associative=True)
sub = _register("sub", 2, np.subtract, _same, "({0} - {1})", bool_result=False)
mul = _register("mul", 2, np.multiply, _same, "({0} * {1})", identity=1, commutative=True, associative=True)
true_div = _register("true_div", 2, np.true_divide, _true_div, "({0} / {1})")
# For integers the kernel renderer needs its own floor division; C truncates.
int_div = _register("int_div", 2, np.floor_divide, _same, _FLOAT_FLOOR_DIV, accepts=REAL,
                    bool_result=False, c_exprs={"iu": _INT_FLOOR_DIV})
# The result takes the sign of the divisor, as in numpy and Python (fmod takes the dividend's).
mod = _register("mod", 2, np.mod, _same, _FLOAT_MOD, accepts=REAL,
                bool_result=False, c_exprs={"iu": _INT_MOD})
pow = _register("pow", 2, np.power, _same, "pow({0}, {1})", bool_result=False,
                c_exprs={"biu": None})
# C's max/min leave NaN undefined; numpy propagates it. Complex numbers are ordered as numpy
# orders them (real part, then imaginary), computed by numpy only.
maximum = _register("maximum", 2, np.maximum, _same, "max({0}, {1})",
                    commutative=True, associative=True,
                    c_exprs={"f": "(({0} > {1} || isnan({0})) ? {0} : {1})", "c": None})
minimum = _register("minimum", 2, np.minimum, _same, "min({0}, {1})",
                    commutative=True, associative=True,
                    c_exprs={"f": "(({0} < {1} || isnan({0})) ? {0} : {1})", "c": None})
arctan2 = _register("arctan2", 2, np.arctan2, upgrade_to_float, "atan2({0}, {1})", accepts=REAL)

# Complex numbers compare as numpy orders them (real part, then imaginary), in numpy only.
lt = _register("lt", 2, np.less, _boolean, "({0} < {1})", c_exprs={"c": None})
gt = _register("gt", 2, np.greater, _boolean, "({0} > {1})", c_exprs={"c": None})
le = _register("le", 2, np.less_equal, _boolean, "({0} <= {1})", c_exprs={"c": None})
ge = _register("ge", 2, np.greater_equal, _boolean, "({0} >= {1})", c_exprs={"c": None})
eq = _register("eq", 2, np.equal, _boolean, "({0} == {1})", commutative=True)
neq = _register("neq", 2, np.not_equal, _boolean, "({0} != {1})", commutative=True)

and_ = _register("and_", 2, np.bitwise_and, _bitwise, "({0} & {1})", accepts=INTS,
                 commutative=True, associative=True)
or_ = _register("or_", 2, np.bitwise_or, _bitwise, "({0} | {1})", accepts=INTS,
                commutative=True, associative=True)
xor = _register("xor", 2, np.bitwise_xor, _bitwise, "({0} ^ {1})", accepts=INTS,
                commutative=True, associative=True)
# numpy inverts bool logically; "~" in C does not.
invert = _register("invert", 1, np.invert, _same, "(~{0})", accepts=INTS, c_exprs={"b": "(!{0})"})

neg = _register("neg", 1, np.negative, _same, "(-{0})", bool_result=False)
abs_ = _register("abs", 1, np.absolute, _real_of, "fabs({0})",
                 c_exprs={"b": "{0}", "iu": "({0} < 0 ? -{0} : {0})"})
sgn = _register("sgn", 1, np.sign, _same, "(({0} > 0) - ({0} < 0))", accepts=REAL,
                bool_result=False, c_exprs={"f": "({0} > 0 ? 1 : ({0} < 0 ? -1 : ({0} == 0 ? 0 : {0})))"})
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
# numpy's factors are computed in the operand's type: pi / 180 and 180 / pi in float32 for float32.
deg2rad = _register("deg2rad", 1, np.deg2rad, upgrade_to_float,
                    "({0} * (({T})3.14159265358979323846 / ({T})180))", accepts=REAL)
rad2deg = _register("rad2deg", 1, np.rad2deg, upgrade_to_float,
                    "({0} * (({T})180 / ({T})3.14159265358979323846))", accepts=REAL)
# Each side of 0 in the form that cannot overflow: exp(x) underflows gracefully, 1 / exp(-x) does not.
sigmoid = _register("sigmoid", 1, _SciPy("expit"), upgrade_to_float,
                    "({0} >= 0 ? 1 / (1 + exp(-{0})) : exp({0}) / (1 + exp({0})))", accepts=REAL)
softplus = _register("softplus", 1, _softplus, upgrade_to_float,
                     "({0} > 30 ? {0} + exp(-{0}) : log1p(exp({0})))", accepts=REAL)
erf = _register("erf", 1, _SciPy("erf"), upgrade_to_float, "erf({0})", c_exprs={"c": None})  # scipy's complex erf
erfc = _register("erfc", 1, _SciPy("erfc"), upgrade_to_float, "erfc({0})", accepts=REAL)
erfinv = _register("erfinv", 1, _SciPy("erfinv"), upgrade_to_float, None, accepts=REAL)
erfcinv = _register("erfcinv", 1, _SciPy("erfcinv"), upgrade_to_float, None, accepts=REAL)
# scipy's gammaln(-inf) is -inf; C's lgamma gives +inf there.
gammaln = _register("gammaln", 1, _SciPy("gammaln"), upgrade_to_float,
                    "(isinf({0}) ? {0} : lgamma({0}))", accepts=REAL)
psi = _register("psi", 1, _SciPy("psi"), upgrade_to_float, None, accepts=REAL)
gamma = _register("gamma", 1, _SciPy("gamma"), upgrade_to_float, "tgamma({0})", accepts=REAL)
chi2sf = _register("chi2sf", 2, _chi2sf, upgrade_to_float, None, accepts=REAL)
tri_gamma = _register("tri_gamma", 1, _trigamma, upgrade_to_float, None,
                      accepts=REAL)  # psi's derivative, for psi's gradient
# scipy.special's scaled complementary error function and Bessel functions (Theano's names).
erfcx = _register("erfcx", 1, _SciPy("erfcx"), upgrade_to_float, None, accepts=REAL)
j0 = _register("j0", 1, _SciPy("j0"), upgrade_to_float, None, accepts=REAL)
j1 = _register("j1", 1, _SciPy("j1"), upgrade_to_float, None, accepts=REAL)
jv = _register("jv", 2, _SciPy("jv"), upgrade_to_float, None, accepts=REAL)  # order v first, as scipy
i0 = _register("i0", 1, _SciPy("i0"), upgrade_to_float, None, accepts=REAL)
i1 = _register("i1", 1, _SciPy("i1"), upgrade_to_float, None, accepts=REAL)
iv = _register("iv", 2, _SciPy("iv"), upgrade_to_float, None, accepts=REAL)
real = _register("real", 1, _real, _real_of, None)
imag = _register("imag", 1, _imag, _real_of, None)
angle = _register("angle", 1, np.angle, lambda d: _real_of(upgrade_to_float(d)), None)
conj = _register("conj", 1, np.conjugate, _same, None)
complex = _register("complex", 2, _complex, _complex_of, None, accepts=REAL)  # noqa: A001 - Theano's name
complex_from_polar = _register("complex_from_polar", 2, _complex_from_polar, _complex_of, None, accepts=REAL)
isnan = _register("isnan", 1, np.isnan, _boolean, "isnan({0})", c_exprs={"biu": "0"})
isinf = _register("isinf", 1, np.isinf, _boolean, "isinf({0})", c_exprs={"biu": "0"})
identity = _register("identity", 1, _copy, _same, "{0}")

switch = _register("switch", 3, _switch_impl, _switch, "({0} ? {1} : {2})", cast_inputs=False)
clip = _register("clip", 3, _clip_impl, _clip, "({0} < {1} ? {1} : ({0} > {2} ? {2} : {0}))", accepts=REAL)


def _in_range_impl(openlow: bool, openhi: bool, x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    above = np.greater(x, low) if openlow else np.greater_equal(x, low)
    below = np.less(x, high) if openhi else np.less_equal(x, high)
    return np.logical_and(above, below)


class InRange(ScalarOp):
    """Whether ``x`` lies between ``low`` and ``high`` (bool): Theano's ``InRange(openlow,
    openhi)``, each bound excluded when its flag is set (``inopenrange``, ``inclosedrange``).
    Not an entry of the table (it has parameters); its gradient is zero, as a comparison's."""

    def __init__(self, openlow: bool, openhi: bool):
        self.openlow, self.openhi = bool(openlow), bool(openhi)
        low, high = (">" if self.openlow else ">="), ("<" if self.openhi else "<=")
        super().__init__("in_range", 3, functools.partial(_in_range_impl, self.openlow, self.openhi),
                         _boolean, f"(({{0}} {low} {{1}}) && ({{0}} {high} {{2}}))", accepts=REAL)

    def key(self) -> tuple:
        return (self.name, self.openlow, self.openhi)

    def __reduce_ex__(self, protocol: int) -> tuple:
        return InRange, (self.openlow, self.openhi)

    def __str__(self) -> str:
        return f"InRange{{{'open' if self.openlow else 'closed'}, {'open' if self.openhi else 'closed'}}}"


inopenrange = InRange(True, True)
inclosedrange = InRange(False, False)

