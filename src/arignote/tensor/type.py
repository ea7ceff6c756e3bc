"""TensorType: a dtype and a broadcastable pattern, and the checks on values."""
from __future__ import annotations

import numbers
import warnings
from typing import Any
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from arignote.config import config
from arignote.graph.basic import Type, Variable, user_stacklevel
from arignote.scalar.dtypes import ALL, COMPLEX, DISCRETE, FLOAT, INTEGER

_NDIM_NAMES = {0: "scalar", 1: "vector", 2: "matrix", 3: "tensor3", 4: "tensor4"}


class TensorType(Type):
    """The type of an n-dimensional array.

    ``broadcastable[i]`` is True when dimension ``i`` is known to have length 1
    (it then broadcasts against any length); False means any length.
    """

    # Theano's switch: True makes filter() refuse arrays holding NaN or inf (a ValueError).
    filter_checks_isfinite = False

    def __init__(self, dtype: str, broadcastable: Sequence[bool], name: str | None = None):
        dtype = str(dtype)
        if dtype == "floatX":
            dtype = config.floatX
        if dtype not in ALL:
            raise TypeError(f"unsupported dtype {dtype!r}; use one of {', '.join(ALL)}")
        self.dtype = dtype
        self.numpy_dtype = np.dtype(dtype)
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        self.ndim = len(self.broadcastable)
        self.name = name
        self._hash = hash((TensorType, self.dtype, self.broadcastable))

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other.dtype == self.dtype
                and other.broadcastable == self.broadcastable)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        # Rebuilt, not restored: the cached hash differs from one process to the next.
        return TensorType, (self.dtype, self.broadcastable, self.name)

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` itself, or the host twin of a device variable of this dtype and pattern."""
        if var.type == self:
            return var
        to_host = getattr(var.type, "host_variable", None)
        host = to_host(var) if to_host is not None else None
        return host if host is not None and host.type == self else None

    def clone(self, dtype: str | None = None, broadcastable: Sequence[bool] | None = None) -> TensorType:
        return TensorType(self.dtype if dtype is None else dtype,
                          self.broadcastable if broadcastable is None else broadcastable)

    # ------------------------------------------------------------- naming
    def kind(self) -> str:
        """``vector``, ``row``, ``matrix``... or a pattern such as ``(True, False, False)``."""
        b = self.broadcastable
        if b == (True, False):
            return "row"
        if b == (False, True):
            return "col"
        if not any(b) and self.ndim in _NDIM_NAMES:
            return _NDIM_NAMES[self.ndim]
        return str(b)

    def __str__(self) -> str:
        if self.name:
            return self.name
        return f"TensorType({self.dtype}, {self.kind()})"

    __repr__ = __str__

    def describe(self) -> str:
        """For error messages: ``float32 vector``."""
        return f"{self.dtype} {self.kind()}"

    # ------------------------------------------------------------ values
    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               name: str = "value", relax: str = "compile with allow_input_downcast=True"
               ) -> np.ndarray:
        """Return ``value`` as an array of this type, or raise TypeError saying why not.

        The rules are Theano's: an ndarray of exactly this dtype passes as is; one
        whose dtype upcasts losslessly to ours is converted; Python scalars and
        lists pass when their values survive the conversion exactly (a Python float
        is always accepted into a floatX input); ``allow_downcast=True`` accepts
        any conversion; ``strict=True`` accepts only an exact ndarray. ``name``
        and ``relax`` (how the caller can allow downcasting) go into the error
        message. Subclasses of ndarray (matrix, masked) come back as plain arrays.
        """
        if isinstance(value, np.ndarray) and value.dtype == self.numpy_dtype:
            data = value if type(value) is np.ndarray else np.asarray(value)
        elif strict:
            raise TypeError(f"{name} expects {self.describe()}, got {_describe_value(value)}: "
                            f"pass a numpy array of dtype {self.dtype} (strict=True converts nothing)")
        elif isinstance(value, Variable):
            raise TypeError(f"{name} expects a value ({self.describe()}), got the symbolic variable "
                            f"{value}: pass a numpy array, or use givens= to substitute a graph")
        else:
            data = self._convert(value, allow_downcast, name, relax)
        if data.ndim != self.ndim:
            raise TypeError(f"{name} expects {self.describe()} ({_dims(self.ndim)}), got "
                            f"{_describe_value(value)} with {_dims(data.ndim)}: "
                            f"reshape it to {_dims(self.ndim)}")
        for axis, (b, n) in enumerate(zip(self.broadcastable, data.shape)):
            if b and n != 1:
                raise TypeError(f"{name} expects {self.describe()} whose dimension {axis} has "
                                f"length 1 (it is broadcastable), got shape {data.shape}")
        if self.filter_checks_isfinite and data.dtype.kind in "fc" and not np.isfinite(data).all():
            raise ValueError(f"{name} holds NaN or inf, which TensorType.filter_checks_isfinite=True "
                             "refuses: fix the value, or set TensorType.filter_checks_isfinite = False")
        return data

    def _convert(self, value: Any, allow_downcast: bool | None, name: str, relax: str) -> np.ndarray:
        cast_hint = f"cast it with numpy.asarray(v, {self.dtype!r})"
        got = f"{name} expects {self.describe()}, got {_describe_value(value)}"
        if value is None or isinstance(value, (str, bytes, Mapping)):
            raise ConversionError(f"{got}: {_not_numbers(value, None, self)}")
        try:
            original = np.asarray(value)
        except ValueError:
            raise TypeError(f"{got}, whose rows have different lengths, so it is not an array: "
                            "give every row the same length (pad the short ones)") from None
        if original.dtype.kind not in "biufc":  # text, None or objects: no cast would mean them
            raise ConversionError(f"{got}: {_not_numbers(value, original, self)}")
        if allow_downcast:
            if original.dtype.kind == "c" and self.numpy_dtype.kind != "c":
                raise TypeError(f"{got}: converting it would drop the imaginary part; take "
                                "numpy.real(v) or numpy.abs(v) first if that is meant")
            return original.astype(self.numpy_dtype)
        if isinstance(value, np.ndarray):
            if np.result_type(value.dtype, self.numpy_dtype) == self.numpy_dtype:
                return original.astype(self.numpy_dtype)
            raise TypeError(
                f"{got}, which would lose precision: {cast_hint}"
                + (", or use arignote.config.floatX" if self.dtype == config.floatX else "")
                + f", or {relax}")
        if type(value) is float and allow_downcast is None and self.dtype == config.floatX:
            return np.asarray(value, dtype=self.numpy_dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = original.astype(self.numpy_dtype)
        same = converted.shape == original.shape and np.array_equal(
            converted, original, equal_nan=original.dtype.kind in "fc")
        if not same:
            raise TypeError(f"{name} expects {self.describe()}, got {_describe_value(value)} whose "
                            f"values change when converted to {self.dtype}: pass values that fit "
                            f"({cast_hint} if the change is wanted), or {relax}")
        return converted

    @staticmethod
    def values_eq(a: Any, b: Any, force_same_dtype: bool = True) -> bool:
        """Exact equality of two values, NaNs equal where both have them, the dtypes equal
        unless ``force_same_dtype=False`` (static, as Theano's: ``TensorType.values_eq(a, b)``)."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or (force_same_dtype and a.dtype != b.dtype):
            return False
        nan_aware = a.dtype.kind in "fc" and b.dtype.kind in "fc"
        return bool(np.array_equal(a, b, equal_nan=nan_aware))

    @staticmethod
    def values_eq_approx(a: Any, b: Any, allow_remove_inf: bool = False, allow_remove_nan: bool = False,
                         rtol: float | None = None, atol: float | None = None) -> bool:
        """Whether ``b`` is close to ``a`` (static, as Theano's): numpy.allclose with the
        tolerances of the narrower float dtype, NaN equal to NaN and an infinity to one
        of its sign; ``allow_remove_inf``/``allow_remove_nan`` accept anything in ``b``
        where ``a`` has an infinity/a NaN. Integers must be equal."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
            return bool(np.array_equal(a, b))
        narrowest = max((a.dtype, b.dtype), key=lambda d: np.finfo(d).eps)
        narrow_rtol, narrow_atol = _TOLERANCES[np.finfo(narrowest).dtype.name]
        rtol, atol = (narrow_rtol if rtol is None else rtol), (narrow_atol if atol is None else atol)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - b) <= atol + rtol * np.abs(b)
        a_inf, a_nan = np.isinf(a), np.isnan(a)
        close = np.where(a_inf | np.isinf(b), a == b, close)
        close |= a_nan & np.isnan(b)
        if allow_remove_inf:
            close |= a_inf
        if allow_remove_nan:
            close |= a_nan
        return bool(close.all())

    def value_zeros(self, shape: Sequence[int]) -> np.ndarray:
        """A zero-filled array of this type's dtype (Theano's helper for an op's ``perform``
        allocating its output); ``shape`` must have this type's ``ndim`` entries."""
        if len(shape) != self.ndim:
            raise ValueError(f"value_zeros: {self} has {self.ndim} dimensions, got shape {tuple(shape)}")
        return np.zeros(shape, dtype=self.dtype)

    def make_variable(self, name: str | None = None) -> Variable:
        _warn_if_float64(self.dtype, name)
        return super().make_variable(name)


# Theano's comparison tolerances (rtol, atol) per float precision, as its tensor.basic had them.
_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "float64": (1e-5, 1e-8)}


class ConversionError(TypeError, ValueError):
    """A value that is not numeric at all (a string...): a TypeError here, and the ValueError
    numpy (and so Theano) raises for it."""


def _describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} {_short(value)}"
    return f"{type(value).__name__} {_short(value)}"


def _not_numbers(value: Any, array: np.ndarray | None, ttype: TensorType) -> str:
    """Why ``value`` is not numbers, and how to make it numbers (never a cast that fails)."""
    example = f"numpy.zeros(shape, {ttype.dtype!r})"
    if value is None:
        return f"None is not a value: pass an array, such as {example}"
    if isinstance(value, (str, bytes)):
        return ("text is not read as numbers: parse it first (float(s) or int(s) for one number, "
                "numpy.loadtxt for a file of them)")
    if isinstance(value, Mapping):
        return "a dict is not an array: pass its values, e.g. numpy.asarray(list(d.values()))"
    if isinstance(value, int):
        return f"it is too large for any integer dtype: pass it as a float (float({value}))"
    if array is not None and array.dtype.kind in "US":
        return "it holds text: parse it first (float(s) or int(s) for each entry)"
    if array is not None and array.ndim:
        bad = [v for v in array.flat if not isinstance(v, (numbers.Number, np.generic))][:1]
        if bad:
            return (f"it holds {type(bad[0]).__name__} {_short(bad[0])} among its entries: replace "
                    "such entries by numbers (numpy.nan for a missing float), or drop them")
    return (f"a value of type {type(value).__name__} is not array-like: pass a numpy array such as "
            f"{example}; numpy.asarray reads sequences of numbers and objects that define __array__")


def _dims(n: int) -> str:
    return f"{n} dimension{'s' * (n != 1)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _warn_if_float64(dtype: str, name: str | None) -> None:
    if dtype != "float64" or config.warn_float64 == "ignore":
        return
    message = (f"a float64 variable{' ' + repr(name) if name else ''} was created while "
               "warn_float64 is set: float64 keeps work off GPUs without fp64 and halves "
               "throughput on most others; use config.floatX or an explicit float32")
    if config.warn_float64 == "warn":
        warnings.warn(message, stacklevel=user_stacklevel())
    elif config.warn_float64 == "raise":
        raise TypeError(message)
    else:
        import pdb
        pdb.set_trace()


# --------------------------------------------------------------- constructors
def tensor(dtype: str | None = None, broadcastable: Sequence[bool] = (), name: str | None = None,
           shape: Sequence[int | None] | None = None) -> Variable:
    """A symbolic tensor: ``tensor('float32', (False, True))`` or ``tensor(shape=(None, 1))``."""
    if shape is not None:
        broadcastable = tuple(s == 1 for s in shape)
    return TensorType(dtype or config.floatX, broadcastable)(name)


def _constructor(ndim_pattern: tuple[bool, ...], kind: str):
    def make(name: str | None = None, dtype: str | None = None) -> Variable:
        return TensorType(dtype or config.floatX, ndim_pattern)(name)
    make.__doc__ = f"A symbolic {kind} of dtype floatX (or the dtype= given)."
    return make


def _plural(single: Callable[..., Variable]) -> Callable[..., Any]:
    def make(*names: Any) -> Any:
        # Theano's rules: an int n gives n unnamed variables (a list), one string of
        # several characters one variable per character, several names one per name.
        if names and isinstance(names[0], int):
            return [single() for _ in range(names[0])]
        if len(names) == 1:
            names = names[0]
        if len(names) == 1:
            return single(names)
        return [single(name) for name in names]
    make.__doc__ = (f"Several variables like {getattr(single, '__name__', single)}: ``dmatrices('x', 'y')``, "
                    "``dmatrices(3)`` (unnamed), ``dmatrices('xy')`` (one per character).")
    return make


_PATTERNS = {"scalar": (), "vector": (False,), "matrix": (False, False), "row": (True, False),
             "col": (False, True), "tensor3": (False,) * 3, "tensor4": (False,) * 4,
             "tensor5": (False,) * 5, "tensor6": (False,) * 6, "tensor7": (False,) * 7}
_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}
_PLURALS = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "row": "rows", "col": "cols",
            "tensor3": "tensor3s", "tensor4": "tensor4s", "tensor5": "tensor5s",
            "tensor6": "tensor6s", "tensor7": "tensor7s"}

# ``vector(name, dtype)`` makes a floatX vector; ``dvector`` is the TensorType of float64
# vectors, which makes one when called (``dvector('x').type is dvector``), as in Theano.
CONSTRUCTORS: dict[str, Any] = {}
for _kind, _pattern in _PATTERNS.items():
    CONSTRUCTORS[_kind] = _constructor(_pattern, _kind)
    CONSTRUCTORS[_kind].__name__ = _kind
    for _prefix, _dtype in _PREFIXES.items():
        CONSTRUCTORS[_prefix + _kind] = TensorType(_dtype, _pattern)
    for _prefix in ("", "f", "d", "i", "l"):
        CONSTRUCTORS[_prefix + _PLURALS[_kind]] = _plural(CONSTRUCTORS[_prefix + _kind])
        CONSTRUCTORS[_prefix + _PLURALS[_kind]].__name__ = _prefix + _PLURALS[_kind]
globals().update(CONSTRUCTORS)

Tensor = TensorType  # Theano's other name for the class

# Theano's lists of dtype names.
discrete_dtypes = list(DISCRETE)
int_dtypes = [d for d in INTEGER if not d.startswith("u")]
uint_dtypes = [d for d in INTEGER if d.startswith("u")]
integer_dtypes = list(INTEGER)
float_dtypes = list(FLOAT)
complex_dtypes = list(COMPLEX)
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = list(ALL)


# Theano's module-level comparisons, which code assigns to a variable's tag.values_eq_approx
# (or to TensorType.values_eq_approx) where a NaN or an infinity in the reference is expected.
def values_eq_approx_remove_inf(a: Any, b: Any) -> bool:
    """``values_eq_approx`` accepting anything in ``b`` where ``a`` has an infinity."""
    return TensorType.values_eq_approx(a, b, allow_remove_inf=True)


def values_eq_approx_remove_nan(a: Any, b: Any) -> bool:
    """``values_eq_approx`` accepting anything in ``b`` where ``a`` has a NaN."""
    return TensorType.values_eq_approx(a, b, allow_remove_nan=True)


def values_eq_approx_remove_inf_nan(a: Any, b: Any) -> bool:
    """``values_eq_approx`` accepting anything in ``b`` where ``a`` has an infinity or a NaN."""
    return TensorType.values_eq_approx(a, b, allow_remove_inf=True, allow_remove_nan=True)


def values_eq_approx_always_true(a: Any, b: Any) -> bool:
    """Any two values compare equal (for outputs whose value is not checked)."""
    return True
