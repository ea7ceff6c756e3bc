"""``sandbox.multinomial``: categorical draws from given uniforms, against loop references."""
import io
import pickle

import numpy as np
import pytest

from arignote import function, grad, tensor as T
from arignote.misc.pkl_utils import CompatUnpickler
from arignote.sandbox import multinomial


def ref_counts(pvals, unis, n):
    """Counts per category: each uniform picks the first category whose running sum exceeds it."""
    out = np.zeros(pvals.shape)
    rows = pvals.shape[0]
    for c in range(n):
        for r in range(rows):
            total = 0.0
            for k, p in enumerate(pvals[r].astype(np.float64)):
                total += p
                if total > unis[c * rows + r]:
                    out[r, k] += 1
                    break
    return out


def ref_choice(pvals, unis, n, replace):
    """Picks per row; without replacement a pick is zeroed and the row renormalised."""
    p = pvals.astype(np.float64)
    rows = p.shape[0]
    out = np.zeros((rows, n), "int64")
    for c in range(n):
        for r in range(rows):
            picked = int(np.searchsorted(np.cumsum(p[r]), unis[c * rows + r], side="right"))
            out[r, c] = picked
            if not replace:
                p[r, picked] = 0.0
                p[r] /= p[r].sum()
    return out


def random_pvals(rng, rows, cats, dtype):
    p = rng.uniform(0.1, 1.0, (rows, cats)).astype(dtype)
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("odtype, want", [("auto", None), ("int64", "int64"), ("float64", "float64")])
@pytest.mark.parametrize("rows, cats, n", [(1, 2, 1), (3, 5, 4), (7, 1, 2)])
def test_multinomial_from_uniform_counts(dtype, odtype, want, rows, cats, n):
    rng = np.random.default_rng(rows * 10 + n)
    p, u, k = T.matrix(dtype=dtype), T.vector(dtype=dtype), T.iscalar()
    out = multinomial.MultinomialFromUniform(odtype)(p, u, k)
    assert out.dtype == (want or dtype)
    pvals, unis = random_pvals(rng, rows, cats, dtype), rng.uniform(size=rows * n).astype(dtype)
    got = function([p, u, k], out)(pvals, unis, n)
    np.testing.assert_array_equal(got, ref_counts(pvals, unis, n))
    assert got.sum() == rows * n


def test_multinomial_n_defaults_to_one_and_a_uniform_past_the_total_adds_nothing():
    p, u = T.dmatrix(), T.dvector()
    f = function([p, u], multinomial.MultinomialFromUniform("auto")(p, u) * 2)
    np.testing.assert_array_equal(f([[0.2, 0.8], [0.3, 0.7]], [0.21, 0.21]), [[0, 2], [2, 0]])
    np.testing.assert_array_equal(f([[0.25, 0.25]], [0.75]), [[0, 0]])
    with pytest.raises(ValueError, match="rows \\* n"):
        f([[0.5, 0.5]], [0.1, 0.2])


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_choice_from_uniform_against_the_reference(replace, dtype):
    rng = np.random.default_rng(7)
    rows, cats, n = 4, 9, 6
    p, u, k = T.matrix(dtype=dtype), T.vector(dtype=dtype), T.iscalar()
    f = function([p, u, k], multinomial.ChoiceFromUniform("auto", replace=replace)(p, u, k))
    pvals, unis = random_pvals(rng, rows, cats, dtype), rng.uniform(size=rows * n).astype(dtype)
    got = f(pvals, unis, n)
    assert got.dtype == "int64" and got.shape == (rows, n)
    np.testing.assert_array_equal(got, ref_choice(pvals, unis, n, replace))
    if not replace:
        assert all(len(set(row)) == n for row in got)


def test_choice_without_replacement_refuses_more_picks_than_categories():
    p, u, k = T.dmatrix(), T.dvector(), T.iscalar()
    pvals = np.full((1, 3), 1 / 3)
    without = function([p, u, k], multinomial.ChoiceFromUniform("int32")(p, u, k))
    with pytest.raises(ValueError, match="at most 3"):
        without(pvals, np.full(5, 0.5), 5)
    with_replacement = function([p, u, k], multinomial.ChoiceFromUniform("int32", replace=True)(p, u, k))
    np.testing.assert_array_equal(with_replacement(pvals, np.full(5, 0.5), 5), [[1] * 5])


def test_the_old_name_warns_and_is_choice_without_replacement():
    with pytest.warns(DeprecationWarning, match="ChoiceFromUniform"):
        op = multinomial.MultinomialWOReplacementFromUniform("auto")
    assert isinstance(op, multinomial.ChoiceFromUniform) and not op.replace


class Packed:
    """A value whose constructor takes bytes only, as numpy's buffers do."""

    def __init__(self, data):
        if not isinstance(data, bytes):
            raise TypeError(f"Packed wants bytes, got {type(data).__name__}")
        self.data = data


def test_compat_unpickler_reencodes_python2_byte_strings():
    # protocol 2 as Python 2 writes it: the argument is a SHORT_BINSTRING (a py2 str)
    blob = (b"\x80\x02c" + __name__.encode() + b"\nPacked\nq\x00U\x03\xe9ab\x85R.")
    with pytest.raises(TypeError, match="bytes"):
        pickle.loads(blob, encoding="latin1")
    assert CompatUnpickler(io.BytesIO(blob), encoding="latin1").load().data == b"\xe9ab"
    array = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(CompatUnpickler(io.BytesIO(pickle.dumps(array, 2))).load(), array)


@pytest.mark.parametrize("make", [lambda: multinomial.MultinomialFromUniform("float64"),
                                  lambda: multinomial.ChoiceFromUniform("float64")])
def test_a_draw_from_given_uniforms_has_zero_gradients(make):
    p, u = T.dmatrix(), T.dvector()
    out = make()(p, u, 1)
    gp, gu = function([p, u], grad((out * 3).sum(), [p, u]))(np.full((2, 2), 0.5), np.array([0.2, 0.7]))
    np.testing.assert_array_equal(gp, np.zeros((2, 2)))
    np.testing.assert_array_equal(gu, np.zeros(2))
