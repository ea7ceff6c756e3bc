"""``theano.scalar`` names whose Theano form differs from arignote's.

- The output type rules (``upgrade_to_float``, ``same_out``, ``upcast_out``, ...)
  take and return scalar *types*, as Theano's did; arignote's own
  ``scalar.upgrade_to_float`` works on dtype names.
- ``ScalarOp`` has Theano's constructor, ``ScalarOp(output_types_preference, name)``,
  for user subclasses that define ``nin``, ``impl`` (on one number per input) and
  ``grad``; Elemwise maps their ``impl`` over arrays element by element.
- Theano's class of each op of the table (``Add``, ``IntDiv``, ``Exp``, ...)
  answers ``isinstance`` for that op, and calling it gives the table's op.
- ``Composite(inputs, outputs)`` builds a Composite from a scalar graph.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.scalar import (Composite as _Composite, ScalarOp as _ScalarOp, ScalarType, TABLE, Cast,
                             complex_types, float_types, float64, get_scalar_type, int8, int64)
from arignote.scalar import dtypes as _dtypes
from arignote.tensor.alloc import _SECOND

__all__ = ["ScalarOp", "UnaryScalarOp", "BinaryScalarOp", "Composite", "Cast", "div_proxy",
           "upcast_out", "upcast_out_nobool", "upcast_out_min8", "upgrade_to_float",
           "upgrade_to_float64", "same_out", "same_out_nobool", "same_out_min8", "upcast_out_no_complex",
           "same_out_float_only", "transfer_type", "specific_out", "int_out", "float_out",
           "upgrade_to_float_no_complex", "same_out_nocomplex", "int_out_nocomplex", "float_out_nocomplex"]


# ------------------------------------------------------------ output type rules (on types)
def _dtype(t: Any) -> str:
    return t.dtype if isinstance(t, ScalarType) else np.dtype(t).name


def upcast_out(*types: ScalarType) -> tuple[ScalarType]:
    return (get_scalar_type(_dtypes.upcast(*map(_dtype, types))),)


def upcast_out_nobool(*types: ScalarType) -> tuple[ScalarType]:
    out = upcast_out(*types)
    if out[0].dtype == "bool":
        raise TypeError("bool output not supported: cast an input to an integer dtype first")
    return out


def upcast_out_min8(*types: ScalarType) -> tuple[ScalarType]:
    out = upcast_out(*types)
    return (int8,) if out[0].dtype == "bool" else out


def upgrade_to_float(*types: ScalarType) -> tuple[ScalarType]:
    """The upcast with integers first made floats (8 and 16 bits: float32, wider: float64)."""
    return (get_scalar_type(_dtypes.upgrade_to_float(*map(_dtype, types))),)


def upgrade_to_float64(*types: ScalarType) -> tuple[ScalarType]:
    return (float64,)


def same_out(type: ScalarType) -> tuple[ScalarType]:
    return (type,)


def same_out_nobool(type: ScalarType) -> tuple[ScalarType]:
    if _dtype(type) == "bool":
        raise TypeError("bool input not supported: cast it to an integer dtype first")
    return (type,)


def same_out_min8(type: ScalarType) -> tuple[ScalarType]:
    return (int8,) if _dtype(type) == "bool" else (type,)


def _no_complex(types: Sequence[ScalarType]) -> None:
    if any(t in complex_types for t in types):
        raise TypeError("complex inputs are not supported by this op: take the real part or the "
                        "absolute value first")


def upcast_out_no_complex(*types: ScalarType) -> tuple[ScalarType]:
    _no_complex(types)
    return upcast_out(*types)


def same_out_float_only(type: ScalarType) -> tuple[ScalarType]:
    if type not in float_types:
        raise TypeError(f"only float inputs are supported, got {type}: cast it to a float first")
    return (type,)


def upgrade_to_float_no_complex(*types: ScalarType) -> tuple[ScalarType]:
    _no_complex(types)
    return upgrade_to_float(*types)


def same_out_nocomplex(type: ScalarType) -> tuple[ScalarType]:
    _no_complex([type])
    return (type,)


def int_out(*types: ScalarType) -> tuple[ScalarType]:
    return (int64,)


def float_out(*types: ScalarType) -> tuple[ScalarType]:
    return (float64,)


def int_out_nocomplex(*types: ScalarType) -> tuple[ScalarType]:
    _no_complex(types)
    return (int64,)


def float_out_nocomplex(*types: ScalarType) -> tuple[ScalarType]:
    _no_complex(types)
    return (float64,)


class transfer_type:  # Theano's name
    """Each output's type: an input's (an int), the upcast (None) or a dtype name."""

    def __init__(self, *transfer: int | str | None):
        self.transfer = transfer

    def __call__(self, *types: ScalarType) -> list[ScalarType]:
        return [upcast_out(*types)[0] if t is None else get_scalar_type(t) if isinstance(t, str) else types[t]
                for t in self.transfer]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.transfer == other.transfer

    def __hash__(self) -> int:
        return hash((transfer_type, self.transfer))


class specific_out:  # Theano's name
    """Fixed output types, whatever the inputs."""

    def __init__(self, *spec: ScalarType):
        self.spec = spec

    def __call__(self, *types: ScalarType) -> tuple[ScalarType, ...]:
        return self.spec

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((specific_out, self.spec))


# Theano's numpy reference of round_half_away_from_zero, which its tests compare against.
round_half_away_from_zero_vec = TABLE["round_half_away_from_zero"].impl
__all__ += ["round_half_away_from_zero_vec"]

# Theano's flag for "scipy.special is there" (its erf, gamma... ops needed it); scipy is a
# dependency of arignote, so they always are.
imported_scipy_special = True
__all__ += ["imported_scipy_special"]


def div_proxy(x: Any, y: Any) -> Any:
    """Theano's ``x / y`` on scalars: true division (integers give floatX, as under Python 3)."""
    return TABLE["true_div"](x, y)


# ------------------------------------------------------------ user scalar ops
class _ElementByElement:
    """A user op's ``impl`` (one number per input) mapped over arrays, as Theano's Elemwise did."""

    def __get__(self, op: Any, owner: type) -> Callable:
        if op is None:
            return self
        def each(*arrays: Any) -> Any:  # not a ufunc: no writing into an output buffer
            return np.frompyfunc(op.scalar_impl, len(arrays), 1)(*arrays)
        return each


class ScalarOp(_ScalarOp):
    """Theano's base class of user scalar ops: define ``nin``, ``impl`` and ``grad``, and give
    ``output_types_preference`` (a rule on types such as ``upgrade_to_float``) or override
    ``output_types``."""

    nin = -1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        impl = cls.__dict__.get("impl")
        if callable(impl):
            cls.scalar_impl = impl
            cls.impl = _ElementByElement()

    # What the base class's __init__ sets, for a subclass whose __init__ does not call it (Theano's
    # ScalarOp needed no call): the name is the class's, the dtype rule output_types'.
    _UNSET = {"c_expr": None, "accepts": None, "identity": None, "commutative": False,
              "associative": False, "bool_result": True, "cast_inputs": True, "c_exprs": {},
              "output_types_preference": None}

    def __getattr__(self, attr: str) -> Any:
        if attr == "name":
            return type(self).__name__.lower()
        if attr == "dtype_rule":
            return self._output_dtype
        if attr in ScalarOp._UNSET:
            return ScalarOp._UNSET[attr]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def __init__(self, output_types_preference: Callable | None = None, name: str | None = None):
        if self.nin < 0:
            raise TypeError(f"{type(self).__name__}: set the class attribute nin (the number of inputs)")
        self.output_types_preference = output_types_preference
        super().__init__(name or type(self).__name__.lower(), self.nin, None, self._output_dtype)

    def _output_dtype(self, *dtypes: str) -> str:
        types = self.output_types([get_scalar_type(d) for d in dtypes])
        return _dtype(types[0])

    def output_types(self, types: Sequence[ScalarType]) -> Sequence[ScalarType]:
        if self.output_types_preference is None:
            raise NotImplementedError(f"{self.name}: give output_types_preference (for example "
                                      "theano.scalar.upgrade_to_float) or override output_types")
        return self.output_types_preference(*types)

    def key(self) -> tuple:
        props = tuple(getattr(self, p) for p in getattr(self, "__props__", ()))
        return (self.name, self.output_types_preference, props)


class UnaryScalarOp(ScalarOp):
    nin = 1


class BinaryScalarOp(ScalarOp):
    nin = 2


# ------------------------------------------------------------ Theano's op classes
class _TableClass(type):
    """A Theano op class of the table: ``isinstance`` tells that op, a call gives it."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _ScalarOp) and obj.name == cls.op_name

    def __call__(cls, *args: Any, **kwargs: Any) -> _ScalarOp:
        return _OPS[cls.op_name]


# The table's ops and ``second`` (fill's scalar op, which lives beside ``fill``).
_OPS = {**TABLE, "second": _SECOND.scalar_op}
second = _OPS["second"]
__all__ += ["second"]


_CLASSES = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "TrueDiv": "true_div", "IntDiv": "int_div", "Mod": "mod",
    "Pow": "pow", "Maximum": "maximum", "Minimum": "minimum", "ArcTan2": "arctan2", "LT": "lt", "GT": "gt",
    "LE": "le", "GE": "ge", "EQ": "eq", "NEQ": "neq", "AND": "and_", "OR": "or_", "XOR": "xor",
    "Invert": "invert", "Neg": "neg", "Abs": "abs", "Sgn": "sgn", "Floor": "floor", "Ceil": "ceil",
    "Trunc": "trunc", "RoundHalfToEven": "round_half_to_even",
    "RoundHalfAwayFromZero": "round_half_away_from_zero", "Sqr": "sqr", "Sqrt": "sqrt", "Inv": "inv",
    "Exp": "exp", "Exp2": "exp2", "Expm1": "expm1", "Log": "log", "Log2": "log2", "Log10": "log10",
    "Log1p": "log1p", "Sin": "sin", "Cos": "cos", "Tan": "tan", "ArcSin": "arcsin", "ArcCos": "arccos",
    "ArcTan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Tanh": "tanh", "ArcSinh": "arcsinh",
    "ArcCosh": "arccosh", "ArcTanh": "arctanh", "Deg2Rad": "deg2rad", "Rad2Deg": "rad2deg", "Erf": "erf",
    "Erfc": "erfc", "Erfinv": "erfinv", "Erfcinv": "erfcinv", "Erfcx": "erfcx", "Gamma": "gamma",
    "GammaLn": "gammaln", "Psi": "psi", "TriGamma": "tri_gamma", "Chi2SF": "chi2sf", "J0": "j0", "J1": "j1",
    "Jv": "jv", "I0": "i0", "I1": "i1", "Iv": "iv", "Real": "real", "Imag": "imag", "Angle": "angle",
    "Conj": "conj", "Complex": "complex", "ComplexFromPolar": "complex_from_polar", "IsNan": "isnan",
    "IsInf": "isinf", "Identity": "identity", "Switch": "switch", "Clip": "clip", "Second": "second",
}
for _name, _op_name in _CLASSES.items():
    globals()[_name] = _TableClass(_name, (), {"op_name": _op_name, "__doc__": f"Theano's class of {_op_name}."})
__all__ += list(_CLASSES)


class _CompositeClass(type):
    """Theano's ``Composite(inputs, outputs)``: isinstance tells any Composite (fused ones too)."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _Composite)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _Composite)

    def __call__(cls, inputs: Sequence[Any], outputs: Sequence[Any]) -> _Composite:
        return _Composite.from_graph(inputs, outputs)


class Composite(metaclass=_CompositeClass):
    """A chain of scalar ops fused into one: ``Composite([x, y], [z])`` from a scalar graph."""
