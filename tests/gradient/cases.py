"""The table that drives verify_grad over every differentiable op.

Each case is (name, fn, inputs): ``fn`` builds the expression from symbolic
inputs, and each input is (domain, shape); the domain keeps the point where
the op is smooth (positive for log, inside (-1, 1) for arcsin, away from the
jumps of floor...). Length-1 dimensions broadcast, as verify_grad makes them.
"""
from __future__ import annotations

from typing import Any, NamedTuple
from collections.abc import Callable

import numpy as np

from arignote import tensor as T
from arignote.scalar.composite import Composite
from arignote.scalar.ops import TABLE
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.nnet import (binary_crossentropy, categorical_crossentropy, hard_sigmoid,
                                  log_softmax, relu, sigmoid, softmax, softmax_with_bias,
                                  ultra_fast_sigmoid)

DOMAINS: dict[str, Callable[[np.random.Generator, tuple], np.ndarray]] = {
    "any": lambda rng, s: rng.uniform(-2, 2, s),
    "pos": lambda rng, s: rng.uniform(0.5, 2, s),
    "unit": lambda rng, s: rng.uniform(-0.8, 0.8, s),
    "gt1": lambda rng, s: rng.uniform(1.2, 3, s),
    "prob": lambda rng, s: rng.uniform(0.1, 0.9, s),
    # away from zero, where abs, sgn and relu have a kink
    "nonzero": lambda rng, s: rng.choice([-1, 1], s) * rng.uniform(0.2, 2, s),
    # away from the integers and the halves, where floor and round jump
    "frac": lambda rng, s: rng.integers(-3, 3, s) + rng.uniform(0.1, 0.4, s),
}


class Case(NamedTuple):
    name: str
    fn: Callable[..., Any]
    inputs: list[tuple[str, tuple]]

    def point(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [np.asarray(DOMAINS[d](rng, s), dtype="float64") for d, s in self.inputs]


UNARY_SHAPES = [(), (3,), (2, 3)]
BINARY_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((3,), ())]

UNARY = {
    "neg": "any", "abs": "nonzero", "sqr": "any", "sqrt": "pos", "inv": "pos", "exp": "any",
    "exp2": "any", "expm1": "any", "log": "pos", "log2": "pos", "log10": "pos", "log1p": "pos",
    "sin": "any", "cos": "any", "tan": "unit", "arcsin": "unit", "arccos": "unit",
    "arctan": "any", "sinh": "any", "cosh": "any", "tanh": "any", "arcsinh": "any",
    "arccosh": "gt1", "arctanh": "unit", "deg2rad": "any", "rad2deg": "any", "sigmoid": "any",
    "softplus": "any", "erf": "any", "erfc": "any", "erfinv": "unit", "erfcinv": "prob",
    "gammaln": "pos", "psi": "pos", "gamma": "pos", "identity": "any", "sgn": "nonzero", "floor": "frac",
    "ceil": "frac", "trunc": "frac", "round_half_to_even": "frac",
    "round_half_away_from_zero": "frac", "erfcx": "any", "j0": "any", "j1": "any", "i0": "any",
    "i1": "any",
}
BINARY = {
    "add": ("any", "any"), "sub": ("any", "any"), "mul": ("any", "any"),
    "true_div": ("any", "pos"), "pow": ("pos", "any"), "maximum": ("any", "any"),
    "minimum": ("any", "any"), "arctan2": ("any", "nonzero"), "mod": ("prob", "gt1"),
}


def _elemwise(name: str) -> Callable[..., Any]:
    return getattr(T, name)


def _composite(x, y):
    """exp(x) * y + sin(x): a fused chain built by hand, as fusion would."""
    ops = TABLE
    steps = [(ops["exp"], (0,)), (ops["mul"], (2, 1)), (ops["sin"], (0,)), (ops["add"], (3, 4))]
    return Elemwise(Composite(2, ["float64", "float64"], steps, 5))(x, y)


_MASK = np.array([[True, False, True], [False, True, True]])


def _split_weighted(x):
    a, b, c = T.split(x, [1, 2, 1], 3, axis=1)
    return a.sum() + 2 * b.sum() + (c ** 2).sum()


CASES: list[Case] = []
for _name, _domain in UNARY.items():
    for _shape in UNARY_SHAPES:
        CASES.append(Case(_name, _elemwise(_name), [(_domain, _shape)]))
for _name, (_d0, _d1) in BINARY.items():
    for _s0, _s1 in BINARY_SHAPES:
        CASES.append(Case(_name, _elemwise(_name), [(_d0, _s0), (_d1, _s1)]))

CASES += [
    Case("clip", lambda x: T.clip(x, -1.0, 1.0), [("any", (3, 4))]),
    Case("clip_bounds", lambda x, lo, hi: T.clip(x, lo, hi), [("any", (2, 3)), ("unit", ()), ("gt1", (3,))]),
    Case("switch", lambda c, a, b: T.switch(T.gt(c, 0), a, b), [("nonzero", (2, 3)), ("any", (2, 3)), ("any", (3,))]),
    Case("composite", _composite, [("any", (2, 3)), ("any", (3,))]),
    Case("jv", lambda x: T.jv(2.5, x), [("pos", (2, 3))]),  # the order has no gradient
    Case("iv", lambda x: T.iv(1.5, x), [("pos", (2, 3))]),
    Case("cast_float32", lambda x: T.cast(x, "float32") * 3, [("any", (2, 2))]),
    Case("fill", lambda x, y: T.fill(x, y) * x, [("any", (2, 3)), ("any", (3,))]),
    Case("zeros_like_plus", lambda x: T.zeros_like(x) + x ** 2, [("any", (3,))]),
    Case("ones_like_times", lambda x, y: T.ones_like(x) * y, [("any", (2, 3)), ("any", ())]),
    Case("chain_0d", lambda x, y: T.exp(x) * T.log(y) / (x + y), [("any", ()), ("pos", ())]),
    # reductions
    Case("sum_all", lambda x: x.sum(), [("any", (2, 3, 2))]),
    Case("sum_axis", lambda x: x.sum(axis=1), [("any", (2, 3, 2))]),
    Case("sum_axes_keepdims", lambda x: x.sum(axis=(0, 2), keepdims=True), [("any", (2, 3, 2))]),
    Case("sum_broadcastable_axis", lambda x: x.sum(axis=0), [("any", (1, 3))]),
    Case("prod_all", lambda x: x.prod(), [("nonzero", (2, 3))]),
    Case("prod_axis", lambda x: x.prod(axis=0), [("nonzero", (3, 2))]),
    Case("max_axis", lambda x: x.max(axis=1), [("any", (3, 4))]),
    Case("max_all", lambda x: x.max(), [("any", (3, 4))]),
    Case("min_axis", lambda x: x.min(axis=0), [("any", (3, 4))]),
    Case("mean", lambda x: x.mean(axis=1), [("any", (3, 4))]),
    Case("mean_all", lambda x: x.mean(), [("any", (2, 2, 2))]),
    Case("var", lambda x: x.var(axis=0), [("any", (4, 3))]),
    Case("var_ddof", lambda x: T.var(x, ddof=1), [("any", (5,))]),
    Case("std", lambda x: x.std(axis=1), [("any", (3, 4))]),
    Case("norm_l1", lambda x: T.norm(x, 1, axis=0), [("nonzero", (3, 2))]),
    Case("norm_l2", lambda x: T.norm(x, 2), [("any", (3, 2))]),
    Case("norm_l3", lambda x: T.norm(x, 3, axis=1), [("nonzero", (3, 2))]),
    # dimshuffle
    Case("transpose", lambda x: x.T * T.arange(2.0), [("any", (2, 3))]),
    Case("dimshuffle_perm", lambda x: x.dimshuffle(2, 0, 1), [("any", (2, 3, 4))]),
    Case("dimshuffle_newaxes", lambda x: x.dimshuffle("x", 1, "x", 0), [("any", (2, 3))]),
    Case("dimshuffle_drop", lambda x: x.dimshuffle(1), [("any", (1, 3))]),
    Case("squeeze", lambda x: T.squeeze(x), [("any", (3, 1, 2))]),
    # the dot family
    Case("dot_vv", T.dot, [("any", (3,)), ("any", (3,))]),
    Case("dot_mv", T.dot, [("any", (2, 3)), ("any", (3,))]),
    Case("dot_vm", T.dot, [("any", (3,)), ("any", (3, 4))]),
    Case("dot_mm", T.dot, [("any", (2, 3)), ("any", (3, 4))]),
    Case("dot_3d_m", T.dot, [("any", (2, 2, 3)), ("any", (3, 2))]),
    Case("dot_m_3d", T.dot, [("any", (2, 3)), ("any", (2, 3, 4))]),
    Case("dot_scalar", T.dot, [("any", ()), ("any", (3,))]),
    Case("dot_row", T.dot, [("any", (1, 3)), ("any", (3, 2))]),
    Case("matmul_mm", T.matmul, [("any", (2, 3)), ("any", (3, 4))]),
    Case("matmul_batch", T.matmul, [("any", (2, 2, 3)), ("any", (2, 3, 2))]),
    Case("matmul_broadcast_batch", T.matmul, [("any", (1, 2, 3)), ("any", (3, 3, 2))]),
    Case("matmul_missing_batch", T.matmul, [("any", (2, 3)), ("any", (2, 3, 2))]),
    Case("matmul_vm", T.matmul, [("any", (3,)), ("any", (2, 3, 4))]),
    Case("matmul_mv", T.matmul, [("any", (2, 2, 3)), ("any", (3,))]),
    Case("matmul_vv", T.matmul, [("any", (3,)), ("any", (3,))]),
    Case("tensordot_1", lambda a, b: T.tensordot(a, b, 1), [("any", (2, 3)), ("any", (3, 2))]),
    Case("tensordot_2", lambda a, b: T.tensordot(a, b, 2), [("any", (2, 3, 2)), ("any", (3, 2, 2))]),
    Case("tensordot_axes", lambda a, b: T.tensordot(a, b, [[0, 2], [2, 1]]), [("any", (2, 3, 4)), ("any", (3, 4, 2))]),
    Case("tensordot_0", lambda a, b: T.tensordot(a, b, 0), [("any", (2,)), ("any", (3,))]),
    Case("outer", T.outer, [("any", (3,)), ("any", (2, 2))]),
    Case("batched_dot", T.batched_dot, [("any", (2, 3, 4)), ("any", (2, 4, 2))]),
    Case("batched_dot_vectors", T.batched_dot, [("any", (2, 3)), ("any", (2, 3))]),
    Case("batched_dot_3d_m", T.batched_dot, [("any", (2, 3, 4)), ("any", (2, 4))]),
    Case("batched_tensordot", lambda a, b: T.batched_tensordot(a, b, [[1, 3], [2, 1]]),
         [("any", (2, 3, 2, 4)), ("any", (2, 4, 3))]),
    # shape ops
    Case("reshape", lambda x: x.reshape((3, 2)) * T.arange(2.0), [("any", (2, 3))]),
    Case("reshape_infer", lambda x: x.reshape((-1,)), [("any", (2, 3))]),
    Case("reshape_symbolic", lambda x, y: x.reshape(y.shape) * y, [("any", (2, 3)), ("any", (3, 2))]),
    Case("flatten", lambda x: T.flatten(x, 2), [("any", (2, 3, 2))]),
    Case("specify_shape", lambda x: T.specify_shape(x, (2, 3)) ** 2, [("any", (2, 3))]),
    Case("addbroadcast", lambda x, y: T.addbroadcast(x, 0) * y, [("any", (1, 3)), ("any", (2, 3))]),
    Case("unbroadcast", lambda x: T.unbroadcast(x, 0) ** 2, [("any", (1, 3))]),
    # joining and splitting
    Case("concatenate_0", lambda a, b: T.concatenate([a, b], 0), [("any", (2, 3)), ("any", (1, 3))]),
    Case("concatenate_1", lambda a, b, c: T.concatenate([a, b, c], 1), [("any", (2, 1)), ("any", (2, 3)), ("any", (2, 2))]),
    Case("stack", lambda a, b: T.stack([a, b], axis=1), [("any", (3,)), ("any", (3,))]),
    Case("split", _split_weighted, [("any", (2, 4))]),
    Case("repeat_scalar", lambda x: T.repeat(x, 3, axis=1) * T.arange(6.0), [("any", (2, 2))]),
    Case("repeat_vector", lambda x: T.repeat(x, np.array([1, 0, 3]), axis=0) ** 2, [("any", (3, 2))]),
    Case("repeat_flat", lambda x: T.repeat(x, 2) * T.arange(12.0), [("any", (2, 3))]),
    Case("roll", lambda x: T.roll(x, 2, axis=1) * T.arange(4.0), [("any", (2, 4))]),
    Case("roll_negative_flat", lambda x: T.roll(x, -1) * T.arange(6.0).reshape((2, 3)), [("any", (2, 3))]),
    # allocation
    Case("alloc_new_axes", lambda x: T.alloc(x, 2, 3), [("any", (3,))]),
    Case("alloc_broadcast", lambda x: T.alloc(x, 4, 3), [("any", (1, 3))]),
    Case("alloc_scalar", lambda x: T.alloc(x, 2, 2) * T.arange(2.0), [("any", ())]),
    Case("arange", lambda start, step: T.arange(start, 5.0, step) ** 2, [("prob", ()), ("gt1", ())]),
    # indexing
    Case("slice", lambda x: x[1:3], [("any", (4, 2))]),
    Case("slice_step", lambda x: x[::-2, 1:], [("any", (5, 3))]),
    Case("int_index", lambda x: x[1], [("any", (3, 2))]),
    Case("newaxis_index", lambda x: x[:, None, 0], [("any", (3, 2))]),
    Case("symbolic_slice", lambda x: x[T.cast(x.shape[0] // 2, "int64"):], [("any", (4,))]),
    Case("take_rows", lambda x: x[np.array([0, 2, 0])], [("any", (3, 2))]),
    Case("advanced_pairs", lambda x: x[np.array([0, 1, 1]), np.array([1, 2, 1])], [("any", (2, 3))]),
    Case("advanced_with_slice", lambda x: x[:, np.array([0, 2])], [("any", (2, 3))]),
    Case("mask", lambda x: x[_MASK], [("any", (2, 3))]),
    Case("set_subtensor", lambda x, y: T.set_subtensor(x[1:3], y) ** 2, [("any", (4, 2)), ("any", (2, 2))]),
    Case("set_subtensor_broadcast", lambda x, y: T.set_subtensor(x[:, 1], y) ** 2, [("any", (3, 2)), ("any", ())]),
    Case("inc_subtensor", lambda x, y: T.inc_subtensor(x[1:3], y) ** 2, [("any", (4, 2)), ("any", (2,))]),
    Case("inc_subtensor_row", lambda x, y: T.inc_subtensor(x[0:2], y) ** 2, [("any", (3, 2)), ("any", (1, 2))]),
    Case("set_rows", lambda x, y: T.set_subtensor(x[np.array([0, 2])], y) ** 2, [("any", (3, 2)), ("any", (2, 2))]),
    Case("inc_rows_repeated", lambda x, y: T.inc_subtensor(x[np.array([0, 0, 1])], y) ** 2, [("any", (3, 2)), ("any", (3, 2))]),
    Case("set_pairs", lambda x, y: T.set_subtensor(x[np.array([0, 1]), np.array([2, 0])], y) ** 2, [("any", (2, 3)), ("any", (2,))]),
    Case("inc_mask", lambda x, y: T.inc_subtensor(x[_MASK], y) ** 2, [("any", (2, 3)), ("any", ())]),
    # neural networks
    Case("softmax", softmax, [("any", (2, 4))]),
    Case("softmax_axis0", lambda x: softmax(x, axis=0), [("any", (3, 2))]),
    Case("softmax_vector", softmax, [("any", (4,))]),
    Case("log_softmax", log_softmax, [("any", (2, 4))]),
    Case("log_softmax_axis0", lambda x: log_softmax(x, axis=0), [("any", (3, 2))]),
    Case("softmax_with_bias", softmax_with_bias, [("any", (2, 3)), ("any", (3,))]),
    Case("relu", relu, [("nonzero", (2, 3))]),
    Case("leaky_relu", lambda x: relu(x, 0.1), [("nonzero", (2, 3))]),
    Case("relu_symbolic_alpha", relu, [("nonzero", (2, 3)), ("prob", ())]),
    Case("hard_sigmoid", hard_sigmoid, [("any", (2, 3))]),
    Case("ultra_fast_sigmoid", ultra_fast_sigmoid, [("any", (2, 3))]),
    Case("ultra_fast_sigmoid_tails", lambda x: ultra_fast_sigmoid(x * 3), [("nonzero", (2, 3))]),
    Case("binary_crossentropy", lambda x, t: binary_crossentropy(sigmoid(x), t), [("any", (2, 3)), ("prob", (2, 3))]),
    Case("binary_crossentropy_probs", binary_crossentropy, [("prob", (4,)), ("prob", (4,))]),
    Case("categorical_crossentropy", lambda x, t: categorical_crossentropy(softmax(x), t), [("any", (2, 3)), ("prob", (2, 3))]),
    Case("categorical_crossentropy_index", lambda x: categorical_crossentropy(softmax(x), np.array([2, 0])), [("any", (2, 3))]),
    Case("categorical_crossentropy_probs", lambda p: categorical_crossentropy(p, np.array([1, 0, 1])), [("prob", (3, 2))]),
]

# The non-elementwise families again at other ranks (0-d, vectors, 3-d) and broadcast patterns.
CASES += [
    Case("sum_0d", lambda x: x.sum() * 2, [("any", ())]),
    Case("sum_vector", lambda x: x.sum(), [("any", (4,))]),
    Case("prod_keepdims_3d", lambda x: x.prod(axis=(0, 2), keepdims=True), [("nonzero", (2, 3, 2))]),
    Case("max_3d_axes", lambda x: x.max(axis=(0, 2)), [("any", (2, 3, 2))]),
    Case("min_vector", lambda x: x.min(), [("any", (5,))]),
    Case("mean_broadcastable", lambda x: x.mean(axis=1), [("any", (3, 1))]),
    Case("dimshuffle_0d", lambda x: x.dimshuffle("x", "x") * T.arange(3.0), [("any", ())]),
    Case("dimshuffle_3d_drop", lambda x: x.dimshuffle(2, "x", 0), [("any", (2, 1, 3))]),
    Case("softmax_3d", lambda x: softmax(x, axis=1), [("any", (2, 3, 2))]),
    Case("log_softmax_3d", lambda x: log_softmax(x, axis=2), [("any", (2, 2, 3))]),
    Case("slice_3d", lambda x: x[:, 1:, ::2], [("any", (2, 3, 4))]),
    Case("int_index_0d_result", lambda x: x[1, 2] * 3, [("any", (2, 3))]),
    Case("take_rows_3d", lambda x: x[np.array([1, 1, 0])], [("any", (2, 2, 2))]),
    Case("inc_subtensor_3d_broadcast", lambda x, y: T.inc_subtensor(x[:, 0], y) ** 2, [("any", (2, 3, 2)), ("any", (1, 2))]),
    Case("concatenate_3d", lambda a, b: T.concatenate([a, b], 2), [("any", (2, 1, 2)), ("any", (2, 1, 3))]),
    Case("reshape_3d", lambda x: x.reshape((2, 3, 2)) * T.arange(2.0), [("any", (3, 4))]),
    Case("alloc_3d", lambda x: T.alloc(x, 2, 2, 3), [("any", (2, 1, 3))]),
    Case("roll_3d", lambda x: T.roll(x, 1, axis=2) * T.arange(3.0), [("any", (2, 2, 3))]),
    Case("repeat_3d", lambda x: T.repeat(x, np.array([2, 1]), axis=1) * T.arange(2.0), [("any", (2, 2, 2))]),
    Case("tensordot_vector", lambda a, b: T.tensordot(a, b, [[0], [1]]), [("any", (3,)), ("any", (2, 3, 2))]),
    Case("binary_crossentropy_0d", lambda x, t: binary_crossentropy(sigmoid(x), t), [("any", ()), ("prob", ())]),
]
