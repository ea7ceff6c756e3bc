"""Block-sparse products against loops over the blocks written here; gradients by finite
differences (integer indices held fixed), to second order through the outer product;
shapes inferred; the in-place rewrite; errors naming the inputs."""
from __future__ import annotations

import numpy as np
import pytest

import arignote
from arignote import tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import blocksparse as bs
from tests.utils import assert_matches, check_infer_shape, run

RNG = np.random.RandomState(42)


def gemv_loops(o, W, h, i_idx, o_idx):
    out = o.copy()
    for b in range(o.shape[0]):
        for j in range(o.shape[1]):
            for i in range(h.shape[1]):
                out[b, j] += h[b, i] @ W[i_idx[b, i], o_idx[b, j]]
    return out


def outer_loops(o, x, y, x_idx, y_idx, alpha=1.0):
    out = o.copy()
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(y.shape[1]):
                out[x_idx[b, i], y_idx[b, j]] += alpha * np.outer(x[b, i], y[b, j])
    return out


def gemv_data(dtype="float64", batch=3, i_blocks=5, o_blocks=4, i_size=3, o_size=2, i_win=3, o_win=2):
    W = RNG.randn(i_blocks, o_blocks, i_size, o_size).astype(dtype)
    h = RNG.randn(batch, i_win, i_size).astype(dtype)
    i_idx = np.stack([RNG.permutation(i_blocks)[:i_win] for _ in range(batch)]).astype("int32")
    o_idx = np.stack([RNG.permutation(o_blocks)[:o_win] for _ in range(batch)]).astype("int32")
    b = RNG.randn(o_blocks, o_size).astype(dtype)
    return W, h, i_idx, b, o_idx


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_block_dot_matches_loops(dtype):
    W, h, i_idx, b, o_idx = gemv_data(dtype)
    args = [T.tensor4(dtype=dtype), T.tensor3(dtype=dtype), T.imatrix(), T.matrix(dtype=dtype), T.imatrix()]
    out = run(args, bs.sparse_block_dot(*args), W, h, i_idx, b, o_idx)
    assert out.dtype == dtype
    assert_matches(out, gemv_loops(b[o_idx], W, h, i_idx, o_idx))


def test_one_example_with_index_vectors():
    W, h, i_idx, b, o_idx = gemv_data(batch=1)
    args = [T.tensor4(), T.matrix(), T.ivector(), T.matrix(), T.ivector()]
    out = run(args, bs.sparse_block_dot(*args), W, h[0], i_idx[0], b, o_idx[0])
    assert out.shape == (1, 2, 2)
    assert_matches(out, gemv_loops(b[o_idx], W, h, i_idx, o_idx))


def test_gemv_with_repeated_input_blocks_and_given_o():
    W, h, _, _, o_idx = gemv_data()
    i_idx = np.zeros((3, 3), dtype="int64")  # the same block thrice: three products
    o = RNG.randn(3, 2, 2)
    args = [T.tensor3(), T.tensor4(), T.tensor3(), T.lmatrix(), T.imatrix()]
    out = run(args, bs.sparse_block_gemv(*args), o, W, h, i_idx, o_idx)
    assert_matches(out, gemv_loops(o, W, h, i_idx, o_idx))


def test_outer_adds_repeated_blocks_and_scales():
    o = RNG.randn(4, 3, 2, 5)
    x, y = RNG.randn(2, 3, 2), RNG.randn(2, 2, 5)
    x_idx = np.array([[0, 0, 3], [1, 0, 3]], dtype="int32")
    y_idx = np.array([[2, 2], [0, 1]], dtype="int32")
    args = [T.tensor4(), T.tensor3(), T.tensor3(), T.imatrix(), T.imatrix(), T.scalar()]
    out = run(args, bs.sparse_block_outer(*args), o, x, y, x_idx, y_idx, 0.5)
    assert_matches(out, outer_loops(o, x, y, x_idx, y_idx, 0.5))
    default = run(args[:5], bs.sparse_block_outer(*args[:5]), o, x, y, x_idx, y_idx)
    assert_matches(default, outer_loops(o, x, y, x_idx, y_idx))


def test_sparse_block_dot_gradient():
    W, h, i_idx, b, o_idx = gemv_data()
    verify_grad(lambda W, h, b: bs.sparse_block_dot(W, h, i_idx, b, o_idx), [W, h, b], rng=RNG)


def test_gemv_gradient_with_respect_to_o():
    W, h, i_idx, _, o_idx = gemv_data()
    o = RNG.randn(3, 2, 2)
    verify_grad(lambda o, W, h: bs.sparse_block_gemv(o, W, h, i_idx, o_idx), [o, W, h], rng=RNG)


def test_outer_gradient_including_alpha():
    o = RNG.randn(4, 3, 2, 5)
    x, y = RNG.randn(2, 3, 2), RNG.randn(2, 2, 5)
    x_idx = np.array([[0, 0, 3], [1, 0, 3]], dtype="int32")
    y_idx = np.array([[2, 2], [0, 1]], dtype="int32")
    verify_grad(lambda o, x, y, a: bs.sparse_block_outer(o, x, y, x_idx, y_idx, a),
                [o, x, y, np.asarray(0.7)], rng=RNG)


def test_second_order_through_the_outer_product():
    W, h, i_idx, b, o_idx = gemv_data()

    def grad_norm(W, h):
        out = bs.sparse_block_dot(W, h, i_idx, b, o_idx)
        return T.sum(T.sqr(arignote.grad(T.sum(T.sqr(out)), W)))
    verify_grad(grad_norm, [W, h], rng=RNG)


def test_infer_shape():
    W, h, i_idx, b, o_idx = gemv_data()
    args = [T.tensor4(), T.tensor3(), T.imatrix(), T.matrix(), T.imatrix()]
    check_infer_shape(args, bs.sparse_block_dot(*args), [W, h, i_idx, b, o_idx])
    oargs = [T.tensor4(), T.tensor3(), T.tensor3(), T.imatrix(), T.imatrix()]
    check_infer_shape(oargs, bs.sparse_block_outer(*oargs),
                      [W, h, RNG.randn(3, 2, 2), i_idx, o_idx])


def test_inplace_rewrite_writes_into_fresh_buffers_only():
    W, h, i_idx, b, o_idx = gemv_data()
    args = [T.tensor4(), T.tensor3(), T.imatrix(), T.matrix(), T.imatrix()]
    out = bs.sparse_block_dot(*args)
    f = arignote.function(args, [out, arignote.grad(out.sum(), args[0])])
    ops = [n.op for n in f.maker.fgraph.toposort()]
    assert bs.sparse_block_gemv_inplace in ops and bs.sparse_block_outer_inplace in ops
    got, g_W = f(W, h, i_idx, b, o_idx)
    assert_matches(got, gemv_loops(b[o_idx], W, h, i_idx, o_idx))
    assert_matches(g_W, outer_loops(np.zeros_like(W), h, np.ones((3, 2, 2)), i_idx, o_idx))
    # o given by the caller is never overwritten: the rewrite leaves a function input alone
    o_var = T.tensor3()
    g = arignote.function([o_var] + args[:3] + args[4:], bs.sparse_block_gemv(o_var, *args[:3], args[4]))
    assert not any(getattr(n.op, "inplace", False) for n in g.maker.fgraph.toposort())
    o = RNG.randn(3, 2, 2)
    kept = o.copy()
    g(o, W, h, i_idx, o_idx)
    assert np.array_equal(o, kept)


def test_errors_name_the_inputs():
    W, h, i_idx, b, o_idx = gemv_data()
    with pytest.raises(TypeError, match="W must be a 4-d tensor of floats"):
        bs.sparse_block_gemv(T.tensor3(), T.matrix(), T.tensor3(), T.imatrix(), T.imatrix())
    with pytest.raises(TypeError, match="inputIdx must be a 2-d tensor of integer block indices"):
        bs.sparse_block_gemv(T.tensor3(), T.tensor4(), T.tensor3(), T.matrix(), T.imatrix())
    args = [T.tensor4(), T.tensor3(), T.imatrix("in_blocks"), T.matrix(), T.imatrix()]
    bad = i_idx.copy()
    bad[1, 2] = 9
    with pytest.raises(ValueError, match="'in_blocks' holds the block index 9, but there are 5 input blocks"):
        run(args, bs.sparse_block_dot(*args), W, h, bad, b, o_idx)
    with pytest.raises(ValueError, match="shapes of"):
        run(args, bs.sparse_block_dot(*args), W, h[:, :, :2], i_idx, b, o_idx)
