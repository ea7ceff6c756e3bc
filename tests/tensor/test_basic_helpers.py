"""Theano's tensor.basic helpers: smallest/largest, ceil_intdiv, swapaxes, horizontal/vertical
stacks, inverse_permutation, choose (numpy.choose, all modes, list or tensor choices) and
extract_constant, each against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.gradient import verify_grad
from tests.utils import assert_matches, check_infer_shape


def test_smallest_and_largest():
    rng = np.random.default_rng(0)
    x, y, z = rng.random((3, 2, 3))
    a, b, c = T.dmatrix(), T.dmatrix(), T.dmatrix()
    f = function([a, b, c], [T.smallest(a, b), T.smallest(a, b, c), T.largest(a, b), T.largest(a, b, c)])
    for got, want in zip(f(x, y, z), [np.minimum(x, y), np.minimum(np.minimum(x, y), z),
                                      np.maximum(x, y), np.maximum(np.maximum(x, y), z)]):
        assert_matches(got, want)
    verify_grad(lambda p, q: T.smallest(p, q) + T.largest(p, q) * 2, [x, y])


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16"])
def test_ceil_intdiv(dtype):
    signed = dtype[0] == "i"
    a = np.array([7, -7, 6, 0, -1, 9] if signed else [7, 8, 6, 0, 1, 9]).astype(dtype)
    b = np.array([2, 2, 3, 5, 4, -4] if signed else [2, 3, 3, 5, 4, 4]).astype(dtype)
    x, y = T.vector(dtype=dtype), T.vector(dtype=dtype)
    want = (a // b + (a % b != 0)).astype(dtype)
    assert_matches(function([x, y], T.ceil_intdiv(x, y))(a, b), want)
    assert np.array_equal(want, -(-a.astype("int64") // b.astype("int64")))


def test_swapaxes_and_stacks():
    v = np.arange(24.0).reshape(2, 3, 4)
    t = T.dtensor3()
    assert_matches(function([t], T.swapaxes(t, 0, -1))(v), np.swapaxes(v, 0, -1))
    with pytest.raises(np.exceptions.AxisError):
        T.swapaxes(t, 0, 3)
    m, n = np.ones((2, 3)), np.zeros((2, 2))
    a, b = T.dmatrix(), T.dmatrix()
    assert_matches(function([a, b], T.horizontal_stack(a, b))(m, n), np.hstack([m, n]))
    assert_matches(function([a, b], T.vertical_stack(a, b))(m.T, n), np.vstack([m.T, n]))
    with pytest.raises(TypeError, match="matrices"):
        T.horizontal_stack(T.dvector(), a)


def test_inverse_permutation():
    rng = np.random.default_rng(1)
    perms = np.array([rng.permutation(5) for _ in range(3)], dtype="int32")
    p, q = T.imatrix(), T.ivector()
    assert_matches(function([p], T.inverse_permutation(p))(perms), np.argsort(perms, axis=1).astype("int32"))
    assert_matches(function([q], T.inverse_permutation(q))(perms[0]), np.argsort(perms[0]).astype("int32"))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(mode):
    rng = np.random.default_rng(2)
    index = np.array([[0, 1, 2], [2, 1, 0]]) if mode == "raise" else np.array([[0, 4, -1], [2, 1, 7]])
    cube = rng.random((3, 2, 3))
    a, c = T.lmatrix(), T.dtensor3()
    out = T.choose(a, c, mode=mode)
    assert_matches(function([a, c], out)(index, cube), np.choose(index, cube, mode=mode))
    check_infer_shape([a, c], out, [index, cube])
    x, row, col = T.dmatrix(), T.drow(), T.dcol()
    xv, rv, cv = rng.random((2, 3)), rng.random((1, 3)), rng.random((2, 1))
    listed = function([a, x, row, col], T.choose(a, [x, row, col], mode=mode))
    assert_matches(listed(index, xv, rv, cv), np.choose(index, [xv, rv, cv], mode=mode))


def test_choose_of_a_list_broadcasts_lengths_of_one_known_only_when_run():
    """Choices whose types do not say which dimensions have length 1 still broadcast, as
    numpy.choose does: (1, 6, 1) and (1, 1, 5) choices with a (2, 1, 1) index give (2, 6, 5)."""
    rng = np.random.default_rng(4)
    a, b, c = T.tensor3(dtype="int32"), T.ftensor3(), T.ftensor3()
    av = rng.integers(0, 2, (2, 1, 1)).astype("int32")
    bv, cv = rng.random((1, 6, 1)).astype("float32"), rng.random((1, 1, 5)).astype("float32")
    f = function([a, b, c], T.choose(a, (b, c)))
    assert_matches(f(av, bv, cv), np.choose(av, (bv, cv)))
    v = T.fvector()
    g = function([a, b, v], T.choose(a, [b, v]))
    assert_matches(g(av, bv, cv[0, 0]), np.choose(av, (bv, cv[0, 0])))
    assert g(av, bv[:, :0], np.zeros(1, "float32")).shape == (2, 0, 1)
    with pytest.raises(ValueError):
        f(av, bv, rng.random((1, 2, 5)).astype("float32"))


def test_choose_refusals():
    a, c = T.lmatrix(), T.dtensor3()
    with pytest.raises(ValueError, match="mode='raise'"):
        function([a, c], T.choose(a, c))(np.array([[3]]), np.ones((3, 1, 1)))
    with pytest.raises(TypeError, match="integer"):
        T.choose(T.dmatrix(), c)
    with pytest.raises(ValueError, match="mode"):
        T.choose(a, c, mode="bogus")


def test_extract_constant():
    assert T.extract_constant(T.constant(3) * 2) == 6
    x = T.dscalar()
    assert T.extract_constant(x) is x
