"""TensorVariable and TensorConstant: the Python operators and methods users write."""
from __future__ import annotations

import sys
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.config import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.scalar.dtypes import autocast_float, autocast_int
from arignote.tensor.type import TensorType


class _TensorOperators:
    """Operators shared by tensor variables and constants; each builds a graph node.

    numpy's ufuncs build the graph too (``__array_ufunc__``): ``np.exp(x)`` is
    ``exp(x)`` (code of PyMC3's era calls numpy on variables), and ``ndarray + x``
    is a symbolic variable rather than an object array of per-element graphs.
    """

    _transient = ("_eval_cache",)  # functions compiled by eval()

    type: TensorType
    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is np.equal or ufunc is np.not_equal:
            # ``ndarray == x`` compares identities, as ``x == ndarray`` does (Theano's ``==``)
            return ufunc is np.not_equal
        build = _ufunc_graphs().get(ufunc)
        if method != "__call__" or kwargs or build is None:
            called = ufunc.__name__ + ("" if method == "__call__" else "." + method)
            raise TypeError(f"numpy's {called}{' with ' + ', '.join(kwargs) if kwargs else ''} has no "
                            f"symbolic form for {self.describe()}: use the arignote.tensor function "
                            "of that name (or compile the graph and call numpy on its result)")
        result = build(*inputs)
        return _comparison(result) if ufunc in _ORDERINGS else result

    def transfer(self, target: str | None) -> Variable:
        """This variable on ``target`` ('cpu', None for the GPU device, a context name)."""
        return transfer(self, target)

    # ---------------------------------------------------------- arithmetic
    # A sparse operand (arignote.sparse) takes over: its reflected operator builds the sparse op.
    def __add__(self, other): return NotImplemented if _sparse(other) else _math.add(self, other)
    def __radd__(self, other): return _math.add(other, self)
    def __sub__(self, other): return NotImplemented if _sparse(other) else _math.sub(self, other)
    def __rsub__(self, other): return _math.sub(other, self)
    def __mul__(self, other): return NotImplemented if _sparse(other) else _math.mul(self, other)
    def __rmul__(self, other): return _math.mul(other, self)
    def __truediv__(self, other): return _math.true_div(self, other)
    def __rtruediv__(self, other): return _math.true_div(other, self)
    def __divmod__(self, other): return _composed.divmod(self, other)
    def __rdivmod__(self, other): return _composed.divmod(other, self)
    def __floordiv__(self, other): return _math.int_div(self, other)
    def __rfloordiv__(self, other): return _math.int_div(other, self)
    def __mod__(self, other): return _math.mod(self, other)
    def __rmod__(self, other): return _math.mod(other, self)
    def __pow__(self, other): return _math.pow(self, other)
    def __rpow__(self, other): return _math.pow(other, self)
    def __neg__(self): return _math.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _math.abs(self)
    def __invert__(self): return _math.invert(self)
    def __and__(self, other): return _math.and_(self, other)
    def __rand__(self, other): return _math.and_(other, self)
    def __or__(self, other): return _math.or_(self, other)
    def __ror__(self, other): return _math.or_(other, self)
    def __xor__(self, other): return _math.xor(self, other)
    def __rxor__(self, other): return _math.xor(other, self)
    def __matmul__(self, other): return _blas.matmul(self, other)
    def __rmatmul__(self, other): return _blas.matmul(other, self)

    # ---------------------------------------------------------- comparisons
    def __lt__(self, other): return NotImplemented if _sparse(other) else _comparison(_math.lt(self, other))
    def __le__(self, other): return NotImplemented if _sparse(other) else _comparison(_math.le(self, other))
    def __gt__(self, other): return NotImplemented if _sparse(other) else _comparison(_math.gt(self, other))
    def __ge__(self, other): return NotImplemented if _sparse(other) else _comparison(_math.ge(self, other))
    # == and != keep Python identity semantics (variables are dict keys); use eq()/neq().

    _from_comparison = False

    def __bool__(self) -> bool:
        """True, as in Theano (``if W is None or not W`` tests for a variable), except for
        the result of ``<``, ``<=``, ``>``, ``>=``: ``a < b < c`` would silently drop ``a < b``."""
        if self._from_comparison:
            raise TypeError(f"the truth value of the comparison {self} is unknown until the function "
                            "runs (Python's a < b < c means (a < b) and (b < c)): use "
                            "arignote.tensor.switch(cond, a, b), or and_(a < b, b < c)")
        return True

    def __iter__(self):
        """``n, m = x.shape``: a vector whose length the graph knows gives ``x[0], x[1], ...``
        (Theano's rule); ``get_vector_length`` raises ValueError for any other vector."""
        if self.ndim != 1:
            raise TypeError(f"cannot iterate over symbolic {self.describe()}, which has {self.ndim} "
                            "dimensions: index it (x[i]), use arignote.scan, or the tensor's sum "
                            "or max rather than Python's builtin")
        return iter([self[i] for i in range(_shape.get_vector_length(self))])

    def __len__(self) -> int:
        raise TypeError(f"len() of symbolic {self} is unknown until the function runs: "
                        "use x.shape[0]")

    # ---------------------------------------------------------- attributes
    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self):
        return _shape.shape(self)

    @property
    def size(self):
        return _reduction.prod(self.shape)

    @property
    def T(self):
        return self.transpose()

    def transpose(self, *axes):
        """Permute the dimensions (reversed when no axes are given), as a DimShuffle view."""
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return _shape.transpose(self, [int(a) for a in axes] if axes else None)

    # ------------------------------------------------------- shape methods
    def dimshuffle(self, *pattern):
        """Reorder, drop (length-1) or add (``'x'``) dimensions: ``x.dimshuffle(1, 'x', 0)``."""
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return _elemwise.DimShuffle(self.broadcastable, pattern)(self)

    def reshape(self, *shape, ndim: int | None = None, **keyword):
        """``x.reshape(shape, ndim=None)`` (Theano's, ``shape`` also by keyword) or
        ``x.reshape(2, 3)`` (numpy's)."""
        if set(keyword) - {"shape"} or (keyword and shape):
            raise TypeError(f"reshape() takes the shape once, by position or as shape=, got "
                            f"{shape or ''} {sorted(keyword)}")
        shape = (keyword["shape"],) if keyword else shape
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _shape.reshape(self, shape, ndim=ndim)

    def flatten(self, ndim: int = 1):
        return _shape.flatten(self, ndim)

    def ptp(self, axis=None):
        return _composed.ptp(self, axis)

    def swapaxes(self, axis1: int, axis2: int):
        return _composed.swapaxes(self, axis1, axis2)

    def choose(self, choices, out=None, mode: str = "raise"):
        return _extra_ops.choose(self, choices, out, mode)

    def conj(self):
        return _math.conj(self)

    conjugate = conj

    @property
    def real(self):
        return _math.real(self)

    @property
    def imag(self):
        return _math.imag(self)

    def ravel(self):
        return _shape.flatten(self)

    def copy(self, name: str | None = None):
        """A symbolic copy of this variable (a new node), named ``name``."""
        out = _math.tensor_copy(self)
        out.name = name
        return out

    def take(self, indices, axis=None, mode: str = "raise"):
        return _composed.take(self, indices, axis, mode)

    def nonzero(self, return_matrix: bool = False):
        return _extra_ops.nonzero(self, return_matrix)

    def nonzero_values(self):
        return _extra_ops.nonzero_values(self)

    def squeeze(self, axis=None):
        return _shape.squeeze(self, axis)

    def astype(self, dtype: str):
        return _math.cast(self, dtype)

    def repeat(self, repeats, axis=None):
        return _join.repeat(self, repeats, axis)

    def zeros_like(self, dtype: str | None = None):
        return _alloc.zeros_like(self, dtype)

    def ones_like(self, dtype: str | None = None):
        return _alloc.ones_like(self, dtype)

    def get_scalar_constant_value(self):
        """The one value the graph fixes for this tensor (NotScalarConstantError otherwise)."""
        return _shape.get_scalar_constant_value(self)

    def fill(self, value):
        """``value`` broadcast to this tensor's shape (Theano's ``fill``)."""
        return _alloc.fill(self, value)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        return _diagonal.diagonal(self, offset, axis1, axis2)

    def trace(self):
        return _nlinalg.trace(self)

    def sort(self, axis=-1, kind: str = "quicksort", order=None):
        return _sort.sort(self, axis, kind, order)

    def argsort(self, axis=-1, kind: str = "quicksort", order=None):
        return _sort.argsort(self, axis, kind, order)

    def cumsum(self, axis=None):
        return _extra_ops.cumsum(self, axis)

    def cumprod(self, axis=None):
        return _extra_ops.cumprod(self, axis)

    def searchsorted(self, v, side: str = "left", sorter=None):
        return _extra_ops.searchsorted(self, v, side, sorter)

    def clip(self, a_min, a_max):
        return _math.clip(self, a_min, a_max)

    def round(self, mode: str | None = None):
        return _math.round(self, mode)

    def dot(self, other):
        return _blas.dot(self, other)

    def __getitem__(self, index):
        return _subtensor.getitem(self, index)

    # ---------------------------------------------------------- reductions
    def sum(self, axis=None, dtype=None, keepdims: bool = False, acc_dtype=None):
        return _reduction.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims: bool = False, acc_dtype=None):
        return _reduction.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims: bool = False, acc_dtype=None):
        return _reduction.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(self, axis=None, ddof: int = 0, keepdims: bool = False, corrected: bool = False):
        return _reduction.var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(self, axis=None, ddof: int = 0, keepdims: bool = False, corrected: bool = False):
        return _reduction.std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def max(self, axis=None, keepdims: bool = False):
        return _reduction.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims: bool = False):
        return _reduction.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims: bool = False):
        return _reduction.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims: bool = False):
        return _reduction.argmin(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims: bool = False):
        return _reduction.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims: bool = False):
        return _reduction.all(self, axis=axis, keepdims=keepdims)

    def norm(self, L: int = 2, axis=None, keepdims: bool = False):
        return _reduction.norm(self, L, axis=axis, keepdims=keepdims)

    # ----------------------------------------------------------- evaluate
    def eval(self, inputs_to_values: dict | None = None) -> np.ndarray:
        """Compile (once per set of inputs) and run this variable's graph."""
        inputs_to_values = inputs_to_values or {}
        inputs = tuple(inputs_to_values)
        cache = self.__dict__.setdefault("_eval_cache", {})
        if inputs not in cache:
            from arignote.compile.function import function
            cache[inputs] = function(list(inputs), self, on_unused_input="ignore")
        return cache[inputs](*[inputs_to_values[i] for i in inputs])


class TensorVariable(_TensorOperators, Variable):
    """A symbolic array."""


class TensorConstant(_TensorOperators, Constant):
    """A fixed array in the graph; equal constants merge."""

    @property
    def value(self) -> np.ndarray:
        """The array (Theano's other name for ``data``)."""
        return self.data

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = self.data
        text = str(data) if data.ndim == 0 else f"TensorConstant{{{np.array2string(data, threshold=5)}}}"
        return text if len(text) <= 40 else text[:25] + "..." + text[-10:]


def _comparison(var: Variable) -> Variable:
    var._from_comparison = True
    return var


_ORDERINGS = (np.less, np.less_equal, np.greater, np.greater_equal)
_UFUNC_GRAPHS: dict[bool, dict] = {}  # by whether scipy.special's ufuncs are in


def _ufunc_graphs() -> dict:
    """numpy ufunc -> the function building its graph: the scalar table's ops by their
    ``ufunc``, and matmul. scipy.special's ufuncs join only once scipy.special is imported
    (only then can one be called on a variable): ``ndarray * variable`` must not pay for
    importing it (0.5 s of a cold start)."""
    with_scipy = "scipy.special" in sys.modules
    graphs = _UFUNC_GRAPHS.get(with_scipy)
    if graphs is None:
        from arignote.scalar.ops import TABLE, _SciPy
        graphs = {op.ufunc: getattr(_math, name) for name, op in TABLE.items()
                  if hasattr(_math, name) and (with_scipy or not isinstance(op._impl, _SciPy))
                  and isinstance(op.ufunc, np.ufunc)}
        graphs[np.matmul] = _blas.matmul
        _UFUNC_GRAPHS[with_scipy] = graphs  # built whole first: another thread sees all or nothing
    return graphs


# Backends register how to move a variable to a target they own (a GPU context name).
_TRANSFERS: list = []


def register_transfer(fn: Any) -> Any:
    """``fn(var, target)`` returns ``var`` moved to ``target``, or None if the target is not its."""
    _TRANSFERS.append(fn)
    return fn


def transfer(var: Any, target: str | None) -> Variable:
    """``var`` on ``target``: ``'cpu'`` (the host), None (the default GPU device, so a
    function's result stays there), or a GPU context name from ``config.contexts``."""
    if target == "cpu":
        return as_tensor_variable(var)
    for fn in _TRANSFERS:
        moved = fn(var, target)
        if moved is not None:
            return moved
    raise ValueError(f"cannot transfer {var} to {target!r}: use 'cpu', None (the GPU device of "
                     "config.device) or a context name from config.contexts")


TensorType.variable_type = TensorVariable
TensorType.constant_type = TensorConstant


def as_tensor_variable(x: Any, name: str | None = None, ndim: int | None = None,
                       dtype: str | None = None) -> Variable:
    """Return ``x`` as a tensor Variable: constants are made for Python and numpy values,
    an Apply node gives its default output. With ``ndim``, leading broadcastable
    dimensions are dropped, or broadcastable ones added on the left, to reach it
    (Theano's rule); other mismatches are a TypeError."""
    if isinstance(x, Apply):
        x = _default_output(x)
    if isinstance(x, Variable):
        to_host = getattr(x.type, "host_variable", None)  # device types: their host twin
        if to_host is not None:
            x = to_host(x)
        if _sparse(x):
            raise TypeError(f"expected a tensor, got the sparse matrix {x.describe()} ({x.type}): "
                            "densify it explicitly with arignote.sparse.dense_from_sparse(x) "
                            "(x.toarray()), or use the arignote.sparse op of that name")
        if not isinstance(x.type, TensorType):
            raise TypeError(f"expected a tensor, got {x} of type {x.type}")
        var = x
    elif isinstance(x, (list, tuple)) and any(isinstance(v, Variable) for v in _flatten(x)):
        from arignote.tensor.join import stack
        var = stack([as_tensor_variable(v) for v in x])
    else:
        var = constant(x, name=name, dtype=dtype)
    if ndim is not None and var.ndim > ndim and all(var.broadcastable[:var.ndim - ndim]):
        var = var.dimshuffle(list(range(var.ndim - ndim, var.ndim)))
    elif ndim is not None and var.ndim < ndim:
        var = _shape.shape_padleft(var, ndim - var.ndim)
    if ndim is not None and var.ndim != ndim:
        raise ValueError(f"expected {ndim} dimensions, got {var} with {var.ndim} ({var.type}): only "
                         "leading broadcastable dimensions can be dropped")
    return var


def _default_output(node: Apply) -> Variable:
    """The output of ``node`` that stands for it: its op's ``default_output``, or its only one."""
    index = getattr(node.op, "default_output", None)
    if index is None:
        if len(node.outputs) != 1:
            raise ValueError(f"{node.op} has {len(node.outputs)} outputs, so it is ambiguous which "
                             "one is meant: pass node.outputs[i]")
        return node.outputs[0]
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or not 0 <= index < len(
            node.outputs):
        raise AttributeError(f"{node.op}.default_output is {index!r}, which is not the index of one "
                             f"of its {len(node.outputs)} outputs")
    return node.outputs[index]


def constant(x: Any, name: str | None = None, dtype: str | None = None, ndim: int | None = None
             ) -> TensorConstant:
    """A constant. numpy values keep their dtype; Python numbers get Theano's dtypes.

    A Python int takes the smallest signed int dtype that holds it (``1000`` is
    int16, so ``bvector + 1000`` is int16). A Python float takes floatX when
    floatX is float32 or float16; under floatX=float64 it takes float32 when
    float32 holds it exactly and float64 otherwise, so ``fvector * 1.5`` stays
    float32 under either floatX while ``fvector * 1.1`` is float64 under
    floatX=float64 (and then warns under ``warn_float64``). A Python complex is
    complex128.
    """
    if dtype is None:
        dtype = _python_scalar_dtype(x)
    elif dtype == "floatX":
        dtype = config.floatX
    data = np.asarray(x, dtype=dtype)
    if data.dtype == object:
        raise TypeError(f"cannot make a constant of {type(x).__name__} {x!r}")
    if ndim is not None and data.ndim != ndim:
        raise TypeError(f"constant {x!r} has {data.ndim} dimensions, expected {ndim}")
    ttype = TensorType(data.dtype.name, tuple(n == 1 for n in data.shape))
    return TensorConstant(ttype, data, name=name)


def _python_scalar_dtype(x: Any) -> str | None:
    """Theano's dtype for a Python number (None: let numpy decide)."""
    kind = type(x)
    if kind is bool:
        return "bool"
    if kind is int:  # scalar.autocast_int's and autocast_float's rules (config.cast_policy)
        return autocast_int.dtype_of(x)
    if kind is float:  # (autocast_float_as changes the float one for a while)
        return autocast_float.dtype_of(x)
    if kind is complex:
        return "complex128"
    if kind in (list, tuple) and np.size(x) == 0 and np.asarray(x).dtype == np.float64:
        return config.floatX  # an empty list holds no value to take a dtype from (Theano: floatX)
    return None


def _sparse(other: Any) -> bool:
    return getattr(getattr(other, "type", None), "sparse", False)


def _flatten(items: Sequence) -> list:
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


# The operator methods above dispatch to these modules, which import this one.
from arignote.tensor import alloc as _alloc  # noqa: E402
from arignote.tensor import blas as _blas  # noqa: E402
from arignote.tensor import elemwise as _elemwise  # noqa: E402
from arignote.tensor import join as _join  # noqa: E402
from arignote.tensor import math as _math  # noqa: E402
from arignote.tensor import reduction as _reduction  # noqa: E402
from arignote.tensor import shape as _shape  # noqa: E402
from arignote.tensor import subtensor as _subtensor  # noqa: E402
from arignote.tensor import diagonal as _diagonal  # noqa: E402
from arignote.tensor import extra_ops as _extra_ops  # noqa: E402
from arignote.tensor import nlinalg as _nlinalg  # noqa: E402
from arignote.tensor import sort as _sort  # noqa: E402
from arignote.tensor import composed as _composed  # noqa: E402
