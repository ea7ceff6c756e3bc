"""Tools for testing code built on arignote (Theano's ``theano.tests.unittest_tools``).

``fetch_seed`` and ``seed_rng`` make test randomness reproducible through one
flag, ``config.unittests.rseed`` (default 666; ``'random'`` for a new seed
each run), so a failing run can be replayed with
``ARIGNOTE_FLAGS=unittests.rseed=N``. ``verify_grad`` is
``arignote.verify_grad`` seeded the same way; ``assert_allclose`` compares
with tolerances chosen by dtype and reports what differs; ``InferShapeTester``
checks an op's ``infer_shape`` against the shapes it computes;
``TestOptimizationMixin`` asserts how many nodes of an op a compiled function runs;
``T_OpContractMixin`` checks that an op's copies and clones equal it and hash alike;
``assertFailure_fast`` marks a test known to fail under ``cycle_detection='fast'``;
``custom_name_func`` names the cases of a ``parameterized.expand`` test by their
arguments, and ``parameterized`` is that package's decorator where it is installed
(Theano's test files import both from here).
"""
from __future__ import annotations

import sys
import unittest
import warnings
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from arignote import gradient
from arignote.config import config

__all__ = ["fetch_seed", "seed_rng", "verify_grad", "assert_allclose", "WrongValue", "SkipTest",
           "InferShapeTester", "TestOptimizationMixin", "T_OpContractMixin", "assertFailure_fast",
           "custom_name_func", "attr"]

SkipTest = unittest.SkipTest


def fetch_seed(pseed: int | None = None) -> int | None:
    """``pseed`` if given, else ``config.unittests.rseed``; None (a random seed) for 'random'."""
    seed = pseed or config.unittests.rseed
    return None if seed in ("random", None, 0) else int(seed)


def seed_rng(pseed: int | None = None) -> int | None:
    """Seed numpy's global generator with ``fetch_seed(pseed)``; return the seed."""
    seed = fetch_seed(pseed)
    if pseed and pseed != seed:
        print(f"Warning: using seed {seed} given by config.unittests.rseed instead of {pseed}",
              file=sys.stderr)
    np.random.seed(seed)
    return seed


def verify_grad(op: Callable[..., Any], pt: Sequence[Any], n_tests: int = 2, rng: Any = None,
                *args: Any, **kwargs: Any) -> None:
    """``arignote.verify_grad``, with numpy's global generator seeded by ``seed_rng`` when
    no ``rng`` is given. Failures raise ``verify_grad.E_grad`` (``GradientError``)."""
    if rng is None:
        seed_rng()
        rng = np.random
    gradient.verify_grad(op, pt, n_tests, rng, *args, **kwargs)


verify_grad.E_grad = gradient.GradientError


def attr(*flags: str, **values: Any) -> Callable[[Callable], Callable]:
    """nose's ``@attr('slow')`` / ``@attr(speed='slow')``, which Theano's test files import from
    here: it sets those attributes on the test (``test.slow = True``) and changes nothing else."""
    def mark(test: Callable) -> Callable:
        for flag in flags:
            setattr(test, flag, True)
        for name, value in values.items():
            setattr(test, name, value)
        return test
    return mark


def custom_name_func(testcase_func: Callable[..., Any], param_num: int, param: Any) -> str:
    """A ``parameterized.expand`` case name made of the test's name and its arguments,
    so a failing case says which arguments it ran with."""
    from parameterized import parameterized
    args = parameterized.to_safe_name("_".join(str(a) for a in param.args))
    return f"{testcase_func.__name__}_{param_num}_{args}"


def __getattr__(name: str) -> Any:
    # ``parameterized`` is a test-time package, imported only when a test file asks for it.
    if name == "parameterized":
        try:
            from parameterized import parameterized
        except ImportError as exc:
            raise AttributeError("arignote.testing.parameterized needs the 'parameterized' package: "
                                 "pip install parameterized") from exc
        return parameterized
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def assertFailure_fast(test: Callable[..., Any]) -> Callable[..., Any]:
    """``test`` unchanged. Theano expected such tests to fail under its flag
    ``cycle_detection='fast'``, whose destroy handler refused some in-place graphs; arignote
    has one cycle check, which accepts them, so the tests run as they are."""
    return test


class WrongValue(AssertionError):
    """``assert_allclose`` found values that differ beyond the tolerances."""

    def __init__(self, expected: Any, value: Any, rtol: float, atol: float):
        self.val1, self.val2, self.rtol, self.atol = expected, value, rtol, atol
        expected, value = np.asarray(expected), np.asarray(value)
        lines = [f"values differ beyond rtol={rtol}, atol={atol}",
                 f"  expected: shape {expected.shape}, dtype {expected.dtype}",
                 f"  value:    shape {value.shape}, dtype {value.dtype}"]
        if _broadcast(expected, value):
            expected, value = np.broadcast_arrays(expected, value)
        else:
            lines.append("  (the shapes do not broadcast)")
        if expected.shape == value.shape and expected.size:
            with np.errstate(all="ignore"):
                diff = np.abs(value.astype(np.float64) - expected.astype(np.float64))
            worst = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), diff.shape)
            lines.append(f"  largest difference {diff[worst]} at {tuple(int(i) for i in worst)}: "
                         f"expected {expected[worst]}, got {value[worst]}")
        super().__init__("\n".join(lines))


def assert_allclose(expected: Any, value: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Raise ``WrongValue`` unless ``value`` is close to ``expected`` everywhere (shapes that
    broadcast are compared as numpy.allclose does, as Theano's did; NaN equals NaN).

    Default tolerances follow the less precise dtype, as Theano's did: rtol/atol
    1e-5/1e-8 (numpy's) for float64, 1e-5/1e-5 for float32, 1e-3/1e-3 for float16.
    """
    expected_a, value_a = np.asarray(expected), np.asarray(value)
    dtypes = {str(expected_a.dtype), str(value_a.dtype)}
    default_rtol, default_atol = (1e-3, 1e-3) if "float16" in dtypes else (
        (1e-5, 1e-5) if dtypes & {"float32", "complex64"} else (1e-5, 1e-8))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if not _broadcast(expected_a, value_a) or not np.allclose(value_a, expected_a, rtol=rtol, atol=atol,
                                                              equal_nan=True):
        raise WrongValue(expected, value, rtol, atol)


def _broadcast(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True


class InferShapeTester(unittest.TestCase):
    """Theano's base class for testing ``infer_shape``: ``_compile_and_check`` compiles the
    outputs and, separately, their shapes (with the shape rewrites of ``canonicalize``), and
    checks that the shapes need no node of the op class and agree with the computed ones."""

    mode: Any = None

    def setUp(self) -> None:
        from arignote.compile.mode import get_default_mode
        seed_rng()
        self.mode = (self.mode if self.mode is not None else get_default_mode()).including("canonicalize")

    def _compile_and_check(self, inputs: Sequence[Any], outputs: Sequence[Any],
                           numeric_inputs: Sequence[Any], cls: type,
                           excluding: Sequence[str] | None = None, warn: bool = True,
                           check_topo: bool = True) -> None:
        """``check_topo=False`` skips the op-class checks (for ops without ``infer_shape``)."""
        from arignote.compile.function import function
        mode = self.mode.excluding(*excluding) if excluding else self.mode
        if warn:
            _warn_on_repeated_lengths(inputs, numeric_inputs, cls)
        outputs_fn = function(list(inputs), list(outputs), mode=mode)
        shapes_fn = function(list(inputs), [o.shape for o in outputs], mode=mode)
        if check_topo:
            shape_ops = [n.op for n in shapes_fn.maker.fgraph.toposort() if isinstance(n.op, cls)]
            assert not shape_ops, (f"computing the shapes still runs {shape_ops}: the op lacks "
                                   "infer_shape, or the shape graph itself uses its class")
            assert any(isinstance(n.op, cls) for n in outputs_fn.maker.fgraph.toposort()), \
                f"no {cls.__name__} node computes the outputs: the test checks another op"
        for k, (value, shape) in enumerate(zip(outputs_fn(*numeric_inputs), shapes_fn(*numeric_inputs))):
            assert np.shape(value) == tuple(shape), (
                f"output {k}: infer_shape gives {tuple(int(n) for n in shape)}, the value has "
                f"shape {np.shape(value)}")


class TestOptimizationMixin:
    """Assertions on the nodes a compiled function runs, for tests of rewrites.

    ``op`` is an op instance (a node matches when its op equals it) or, in the
    ``*Class*`` forms, an op class (a node matches when its op is an instance).
    """

    def assertFunctionContains(self, f: Any, op: Any, min: int = 1, max: int = sys.maxsize) -> None:
        _assert_node_count(f, lambda o: o == op, op, min, max)

    def assertFunctionContains0(self, f: Any, op: Any) -> None:
        self.assertFunctionContains(f, op, 0, 0)

    def assertFunctionContains1(self, f: Any, op: Any) -> None:
        self.assertFunctionContains(f, op, 1, 1)

    def assertFunctionContainsN(self, f: Any, op: Any, N: int) -> None:
        self.assertFunctionContains(f, op, N, N)

    def assertFunctionContainsClass(self, f: Any, op: type, min: int = 1, max: int = sys.maxsize) -> None:
        _assert_node_count(f, lambda o: isinstance(o, op), op, min, max)

    def assertFunctionContainsClassN(self, f: Any, op: type, N: int) -> None:
        self.assertFunctionContainsClass(f, op, N, N)


class T_OpContractMixin:
    """The equality contract of ops, for a test class that sets ``self.ops`` (distinct ops of
    one kind) and defines ``clone(op)`` (a new op built like ``op``): each op equals, and hashes
    like, its copy, deep copy and clone, and differs from the other ops and ``other_op``."""

    other_op: Any = None  # None: arignote.tensor.add

    def clone(self, op: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.clone(op) must build a new op like op")

    def _other(self) -> Any:
        if self.other_op is not None:
            return self.other_op
        from arignote.tensor import add
        return add

    def _likes(self, op: Any) -> list:
        import copy
        return [op, copy.copy(op), copy.deepcopy(op), self.clone(op)]

    def test_eq(self) -> None:
        for i, op in enumerate(self.ops):
            for like in self._likes(op):
                assert op == like, (op, like)
            assert op != self._other()
            assert all(op != other for j, other in enumerate(self.ops) if j != i), op

    def test_hash(self) -> None:
        for op in self.ops:
            assert {hash(like) for like in self._likes(op)} == {hash(op)}, op

    def test_name(self) -> None:
        for op in self.ops:
            assert str(op), f"{type(op).__name__} has an empty name"


def _assert_node_count(f: Any, matches: Callable[[Any], bool], op: Any, low: int, high: int) -> None:
    ops = [node.op for node in f.maker.fgraph.toposort()]
    found = sum(1 for o in ops if matches(o))
    if not low <= found <= high:
        wanted = str(low) if low == high else f"between {low} and {high}"
        raise AssertionError(f"the function runs {found} node(s) of {op}, expected {wanted}; "
                             f"its ops: {[str(o) for o in ops]}")


def _warn_on_repeated_lengths(inputs: Sequence[Any], values: Sequence[Any], cls: type) -> None:
    """Equal lengths (a square matrix) cannot show that infer_shape mixed two dimensions up."""
    for var, value in zip(inputs, values):
        shape = np.shape(value)
        pattern = getattr(var.type, "broadcastable", (False,) * len(shape))
        lengths = [n for n, b in zip(shape, pattern) if not b]
        if len(set(lengths)) != len(lengths):
            warnings.warn(f"testing infer_shape of {cls.__name__} with an input of shape {shape}, "
                          "whose repeated lengths cannot tell dimensions apart", stacklevel=3)
            return
