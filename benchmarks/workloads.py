"""The benchmark workloads, each written once per framework.

A workload maps a framework name to a ``setup(dtype)`` returning ``(run,
result)``: ``run()`` does one unit of work, ``result()`` returns what the last
run produced, as a numpy array, for the correctness check against numpy.
Frameworks that are not installed are skipped.
"""
from __future__ import annotations

import importlib.util
from typing import Any
from collections.abc import Callable

import numpy as np

Setup = Callable[[str], tuple[Callable[[], Any], Callable[[], np.ndarray]]]
SEED_LEN = 10 * 30 * 768


def available(framework: str) -> bool:
    module = {"arignote": "arignote", "numpy": "numpy", "pytensor": "pytensor", "jax": "jax",
              "numba": "numba", "torch": "torch"}[framework]
    return importlib.util.find_spec(module) is not None


# ------------------------------------------------------------------ W1 seed loop
def w1_numpy(dtype):
    x = np.random.RandomState(22).rand(SEED_LEN).astype(dtype)
    box = {}
    def run():
        box["r"] = np.exp(x)
    return run, lambda: box["r"]


def w1_numpy_out(dtype):
    x = np.random.RandomState(22).rand(SEED_LEN).astype(dtype)
    buf = np.empty_like(x)
    return (lambda: np.exp(x, out=buf)), lambda: buf


def w1_arignote(dtype):
    from arignote import function, shared, tensor
    x = shared(np.random.RandomState(22).rand(SEED_LEN).astype(dtype))
    f = function([], tensor.exp(x))
    box = {}
    def run():
        box["r"] = f()
    return run, lambda: box["r"]


def w1_pytensor(dtype):
    import pytensor
    import pytensor.tensor as pt
    x = pytensor.shared(np.random.RandomState(22).rand(SEED_LEN).astype(dtype))
    f = pytensor.function([], pt.exp(x))
    box = {}
    def run():
        box["r"] = f()
    return run, lambda: np.asarray(box["r"])


def w1_jax(dtype):
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(np.random.RandomState(22).rand(SEED_LEN).astype(dtype))
    f = jax.jit(jnp.exp)
    box = {}
    def run():
        box["r"] = f(x).block_until_ready()
    return run, lambda: np.asarray(box["r"])


# -------------------------------------------------------------- W2 call overhead
def _w2_value(dtype):
    return np.arange(10, dtype=dtype)


def w2_numpy(dtype):
    x = _w2_value(dtype)
    box = {}
    def run():
        box["r"] = x + 1
    return run, lambda: box["r"]


def w2_arignote(dtype, trust=False):
    from arignote import function, tensor
    v = tensor.vector("x", dtype=dtype)
    f = function([v], v + 1, trust_input=trust)
    x = _w2_value(dtype)
    box = {}
    def run():
        box["r"] = f(x)
    return run, lambda: box["r"]


def w2_arignote_trusted(dtype):
    return w2_arignote(dtype, trust=True)


def w2_pytensor(dtype):
    import pytensor
    import pytensor.tensor as pt
    v = pt.vector("x", dtype=dtype)
    f = pytensor.function([v], v + 1)
    x = _w2_value(dtype)
    box = {}
    def run():
        box["r"] = f(x)
    return run, lambda: np.asarray(box["r"])


def w2_jax(dtype):
    import jax
    import jax.numpy as jnp
    f = jax.jit(lambda v: v + 1)
    x = jnp.asarray(_w2_value(dtype))
    box = {}
    def run():
        box["r"] = f(x).block_until_ready()
    return run, lambda: np.asarray(box["r"])


# ------------------------------------------------------------- W3 fused chain
def _w3_values(dtype):
    rng = np.random.RandomState(3)
    return rng.randn(1_000_000).astype(dtype), np.asarray(1.5, dtype), np.asarray(-0.5, dtype)


def w3_numpy(dtype):
    x, a, b = _w3_values(dtype)
    box = {}
    def run():
        box["r"] = np.tanh(a * x + b) * dtype_(0.5, dtype) + np.exp(-x * x)
    return run, lambda: box["r"]


def dtype_(value, dtype):
    return np.asarray(value, dtype)[()]


def w3_arignote(dtype):
    from arignote import function, tensor as T
    xv, av, bv = _w3_values(dtype)
    x, a, b = T.vector("x", dtype=dtype), T.scalar("a", dtype=dtype), T.scalar("b", dtype=dtype)
    f = function([x, a, b], T.tanh(a * x + b) * 0.5 + T.exp(-x * x))
    box = {}
    def run():
        box["r"] = f(xv, av, bv)
    return run, lambda: box["r"]


def w3_pytensor(dtype):
    import pytensor
    import pytensor.tensor as pt
    xv, av, bv = _w3_values(dtype)
    x, a, b = pt.vector("x", dtype=dtype), pt.scalar("a", dtype=dtype), pt.scalar("b", dtype=dtype)
    f = pytensor.function([x, a, b], pt.tanh(a * x + b) * 0.5 + pt.exp(-x * x))
    box = {}
    def run():
        box["r"] = f(xv, av, bv)
    return run, lambda: np.asarray(box["r"])


def w3_jax(dtype):
    import jax
    import jax.numpy as jnp
    xv, av, bv = (jnp.asarray(v) for v in _w3_values(dtype))
    f = jax.jit(lambda x, a, b: jnp.tanh(a * x + b) * 0.5 + jnp.exp(-x * x))
    box = {}
    def run():
        box["r"] = f(xv, av, bv).block_until_ready()
    return run, lambda: np.asarray(box["r"])


# ------------------------------------------------------ W4 one MLP SGD step
_W4_DATA: dict = {}


def _w4_data(dtype):
    """Fresh copies of the batch and initial parameters (drawn once: W5 times the step's
    build and first call, not the random draws)."""
    if dtype not in _W4_DATA:
        rng = np.random.RandomState(4)
        x = rng.rand(128, 784).astype(dtype)
        y = rng.randint(0, 10, size=128)
        params = [(rng.randn(784, 500) * 0.01).astype(dtype), np.zeros(500, dtype),
                  (rng.randn(500, 10) * 0.01).astype(dtype), np.zeros(10, dtype)]
        _W4_DATA[dtype] = x, y, params
    x, y, params = _W4_DATA[dtype]
    return x.copy(), y.copy(), [p.copy() for p in params]


LR = 0.1


def w4_numpy(dtype):
    x, y, (w1, b1, w2, b2) = _w4_data(dtype)
    params = [w1.copy(), b1.copy(), w2.copy(), b2.copy()]
    onehot = np.eye(10, dtype=dtype)[y]
    lr = np.asarray(LR, dtype)

    def run():
        w1, b1, w2, b2 = params
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        dz = (p - onehot) / np.asarray(x.shape[0], dtype)
        dw2 = h.T @ dz
        db2 = dz.sum(axis=0)
        dh = (dz @ w2.T) * (1 - h * h)
        dw1 = x.T @ dh
        db1 = dh.sum(axis=0)
        w1 -= lr * dw1
        b1 -= lr * db1
        w2 -= lr * dw2
        b2 -= lr * db2
    return run, lambda: params[2]


def w4_arignote(dtype):
    import arignote
    from arignote import function, shared, tensor as T
    xv, yv, values = _w4_data(dtype)
    w1, b1, w2, b2 = params = [shared(v.copy()) for v in values]
    x, y = T.matrix("x", dtype=dtype), T.ivector("y")
    h = T.tanh(T.dot(x, w1) + b1)
    p = T.nnet.softmax(T.dot(h, w2) + b2)
    cost = T.nnet.categorical_crossentropy(p, y).mean()
    grads = arignote.grad(cost, params)
    lr = np.asarray(LR, dtype)
    step = function([x, y], [], updates=[(q, q - lr * g) for q, g in zip(params, grads)])
    y32 = yv.astype("int32")
    return (lambda: step(xv, y32)), lambda: w2.get_value()


def w4_pytensor(dtype):
    import pytensor
    import pytensor.tensor as pt
    xv, yv, values = _w4_data(dtype)
    w1, b1, w2, b2 = params = [pytensor.shared(v.copy()) for v in values]
    x, y = pt.matrix("x", dtype=dtype), pt.ivector("y")
    h = pt.tanh(pt.dot(x, w1) + b1)
    p = pt.special.softmax(pt.dot(h, w2) + b2, axis=-1)
    cost = -pt.mean(pt.log(p)[pt.arange(y.shape[0]), y])
    grads = pytensor.grad(cost, params)
    lr = np.asarray(LR, dtype)
    step = pytensor.function([x, y], [], updates=[(q, q - lr * g) for q, g in zip(params, grads)])
    y32 = yv.astype("int32")
    return (lambda: step(xv, y32)), lambda: w2.get_value()


def w4_jax(dtype):
    import jax
    import jax.numpy as jnp
    xv, yv, values = _w4_data(dtype)
    state = {"params": [jnp.asarray(v) for v in values]}
    x, y = jnp.asarray(xv), jnp.asarray(yv)

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        logp = jax.nn.log_softmax(h @ w2 + b2)
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y])

    # The minibatch is an argument, as in a training loop: closed over, it would be a
    # compile-time constant that XLA may lay out (or fold) ahead of the call.
    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [q - LR * g for q, g in zip(params, grads)]

    def run():
        state["params"] = step(state["params"], x, y)
        state["params"][0].block_until_ready()
    return run, lambda: np.asarray(state["params"][2])


# ------------------------------------------------------ W6 matmul and reduce
def _w6_values(dtype):
    rng = np.random.RandomState(6)
    return rng.rand(1000, 1000).astype(dtype), rng.rand(1000, 1000).astype(dtype)


def w6_numpy(dtype):
    X, W = _w6_values(dtype)
    box = {}
    def run():
        box["r"] = np.asarray((X @ W).sum(axis=1).max())
    return run, lambda: box["r"]


def w6_arignote(dtype):
    from arignote import function, tensor as T
    Xv, Wv = _w6_values(dtype)
    X, W = T.matrix("X", dtype=dtype), T.matrix("W", dtype=dtype)
    f = function([X, W], T.dot(X, W).sum(axis=1).max())
    box = {}
    def run():
        box["r"] = f(Xv, Wv)
    return run, lambda: box["r"]


def w6_pytensor(dtype):
    import pytensor
    import pytensor.tensor as pt
    Xv, Wv = _w6_values(dtype)
    X, W = pt.matrix("X", dtype=dtype), pt.matrix("W", dtype=dtype)
    f = pytensor.function([X, W], pt.dot(X, W).sum(axis=1).max())
    box = {}
    def run():
        box["r"] = f(Xv, Wv)
    return run, lambda: np.asarray(box["r"])


def w6_jax(dtype):
    import jax
    import jax.numpy as jnp
    Xv, Wv = (jnp.asarray(v) for v in _w6_values(dtype))
    f = jax.jit(lambda X, W: (X @ W).sum(axis=1).max())
    box = {}
    def run():
        box["r"] = f(Xv, Wv).block_until_ready()
    return run, lambda: np.asarray(box["r"])


# ------------------------------------------------- numba and PyTorch peers
def _torch():
    import torch
    torch.set_num_threads(int(__import__("os").environ.get("OMP_NUM_THREADS", "1")))
    return torch


def w1_numba(dtype):
    import numba
    x = np.random.RandomState(22).rand(SEED_LEN).astype(dtype)
    f = numba.njit(lambda v: np.exp(v))
    box = {}
    def run():
        box["r"] = f(x)
    return run, lambda: box["r"]


def _w1_torch(dtype, compiled):
    torch = _torch()
    x = torch.from_numpy(np.random.RandomState(22).rand(SEED_LEN).astype(dtype))
    f = torch.compile(torch.exp) if compiled else torch.exp
    box = {}
    def run():
        box["r"] = f(x)
    return run, lambda: box["r"].numpy()


def w1_torch(dtype):
    return _w1_torch(dtype, False)


def w1_torch_compile(dtype):
    return _w1_torch(dtype, True)


def w2_numba(dtype):
    import numba
    f = numba.njit(lambda v: v + 1)
    x = _w2_value(dtype)
    box = {}
    def run():
        box["r"] = f(x)
    return run, lambda: box["r"]


def w2_torch(dtype):
    torch = _torch()
    x = _w2_value(dtype)
    box = {}
    def run():
        box["r"] = torch.from_numpy(x) + 1
    return run, lambda: box["r"].numpy()


def w3_numba(dtype):
    import numba
    xv, av, bv = _w3_values(dtype)
    half = dtype_(0.5, dtype)

    @numba.njit(parallel=True, fastmath=False)
    def chain(x, a, b):
        out = np.empty_like(x)
        for i in numba.prange(x.size):
            out[i] = np.tanh(a * x[i] + b) * half + np.exp(-x[i] * x[i])
        return out
    box = {}
    def run():
        box["r"] = chain(xv, av[()], bv[()])
    return run, lambda: box["r"]


def _w3_torch(dtype, compiled):
    torch = _torch()
    xv, av, bv = (torch.from_numpy(np.asarray(v)) for v in _w3_values(dtype))

    def chain(x, a, b):
        return torch.tanh(a * x + b) * 0.5 + torch.exp(-x * x)
    f = torch.compile(chain) if compiled else chain
    box = {}
    def run():
        box["r"] = f(xv, av, bv)
    return run, lambda: box["r"].numpy()


def w3_torch(dtype):
    return _w3_torch(dtype, False)


def w3_torch_compile(dtype):
    return _w3_torch(dtype, True)


def _w4_torch(dtype, compiled):
    torch = _torch()
    xv, yv, values = _w4_data(dtype)
    params = [torch.tensor(v.copy(), requires_grad=True) for v in values]
    x, y = torch.from_numpy(xv), torch.from_numpy(yv.astype("int64"))

    def step(params, x, y):
        w1, b1, w2, b2 = params
        h = torch.tanh(x @ w1 + b1)
        loss = torch.nn.functional.cross_entropy(h @ w2 + b2, y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for q, g in zip(params, grads):
                q -= LR * g
    f = torch.compile(step) if compiled else step
    return (lambda: f(params, x, y)), lambda: params[2].detach().numpy().copy()


def w4_torch(dtype):
    return _w4_torch(dtype, False)


def w4_torch_compile(dtype):
    return _w4_torch(dtype, True)


def w6_torch(dtype):
    torch = _torch()
    X, W = (torch.from_numpy(v) for v in _w6_values(dtype))
    box = {}
    def run():
        box["r"] = (X @ W).sum(dim=1).max()
    return run, lambda: box["r"].numpy()


# name -> (description, dtypes, calls per timing, {framework: setup}, rtol for the check)
WORKLOADS: dict[str, tuple] = {
    "W1": ("seed loop: exp of a 230,400-element vector", ("float32", "float64"), 200,
           {"numpy": w1_numpy, "numpy (out=)": w1_numpy_out, "arignote": w1_arignote,
            "pytensor": w1_pytensor, "jax": w1_jax, "numba": w1_numba, "torch": w1_torch,
            "torch (compile)": w1_torch_compile}, 1e-5),
    "W2": ("call overhead: x + 1 on a 10-element vector", ("float64",), 20000,
           {"numpy": w2_numpy, "arignote": w2_arignote, "arignote (trust_input)": w2_arignote_trusted,
            "pytensor": w2_pytensor, "jax": w2_jax, "numba": w2_numba, "torch": w2_torch}, 0),
    "W3": ("fused chain tanh(a*x+b)*0.5 + exp(-x*x), 1e6 elements", ("float32",), 30,
           {"numpy": w3_numpy, "arignote": w3_arignote, "pytensor": w3_pytensor, "jax": w3_jax,
            "numba": w3_numba, "torch": w3_torch, "torch (compile)": w3_torch_compile}, 1e-5),
    "W4": ("one SGD step, 784-500-10 tanh/softmax MLP, batch 128", ("float32",), 30,
           {"numpy": w4_numpy, "arignote": w4_arignote, "pytensor": w4_pytensor, "jax": w4_jax,
            "torch": w4_torch, "torch (compile)": w4_torch_compile}, 1e-4),
    "W6": ("(X @ W).sum(axis=1).max(), 1000x1000", ("float32",), 10,
           {"numpy": w6_numpy, "arignote": w6_arignote, "pytensor": w6_pytensor, "jax": w6_jax,
            "torch": w6_torch}, 1e-4),
}


# ------------------------------------------- W7 LeNet: convolution and pooling
# DLT's LeNet (convolutional_mlp.py) on 28x28 inputs: conv 5x5 (20 filters) + 2x2 max-pool
# + tanh, conv 5x5 (50 filters) + max-pool + tanh, a 500-unit tanh layer, softmax. Theano's
# conv2d flips the filters (a true convolution); the peers flip them too. The last layer
# starts random rather than at DLT's zeros, so the first step's gradient reaches the filters.
W7_BATCH = 500


def _w7_data(dtype):
    rng = np.random.RandomState(7)

    def uniform(shape, fan_in, fan_out):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-bound, bound, shape).astype(dtype)
    params = [uniform((20, 1, 5, 5), 25, 20 * 25 / 4), np.zeros(20, dtype),
              uniform((50, 20, 5, 5), 20 * 25, 50 * 25 / 4), np.zeros(50, dtype),
              uniform((800, 500), 800, 500), np.zeros(500, dtype),
              uniform((500, 10), 500, 10), np.zeros(10, dtype)]
    x = rng.rand(W7_BATCH, 1, 28, 28).astype(dtype)
    y = rng.randint(0, 10, size=W7_BATCH)
    return x, y, params


def _np_conv(x, w):
    """Valid convolution (flipped filters) by im2col: the output and the window matrix."""
    from numpy.lib.stride_tricks import as_strided
    b, c, h, wd = x.shape
    f, _, k, _ = w.shape
    o, p = h - k + 1, wd - k + 1
    s = x.strides
    cols = as_strided(x, (b, o, p, c, k, k), (s[0], s[2], s[3], s[1], s[2], s[3])).reshape(b * o * p, -1)
    flat = w[:, :, ::-1, ::-1].reshape(f, -1)
    return (cols @ flat.T).reshape(b, o, p, f).transpose(0, 3, 1, 2), cols


def _np_conv_backward(grad, x, w, cols, need_input):
    b, f, o, p = grad.shape
    k = w.shape[2]
    mat = grad.transpose(0, 2, 3, 1).reshape(b * o * p, f)
    # (cols.T @ mat).T rather than mat.T @ cols: OpenBLAS threads the latter badly.
    dw = (cols.T @ mat).T.reshape(w.shape)[:, :, ::-1, ::-1]
    if not need_input:
        return dw, None
    dcols = (mat @ w[:, :, ::-1, ::-1].reshape(f, -1)).reshape(b, o, p, w.shape[1], k, k)
    dx = np.zeros_like(x)
    for i in range(k):
        for j in range(k):
            dx[:, :, i:i + o, j:j + p] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dw, dx


def _np_pool(a):
    b, f, h, w = a.shape
    return a.reshape(b, f, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _np_pool_backward(grad, a, pooled):
    up = np.repeat(np.repeat(pooled, 2, axis=2), 2, axis=3)
    return (a == up) * np.repeat(np.repeat(grad, 2, axis=2), 2, axis=3)


def w7_numpy(dtype):
    x, y, values = _w7_data(dtype)
    params = [v.copy() for v in values]
    onehot = np.eye(10, dtype=dtype)[y]
    lr = np.asarray(LR, dtype)

    def run():
        w0, b0, w1, b1, w2, b2, w3, b3 = params
        c0, cols0 = _np_conv(x, w0)
        p0 = _np_pool(c0)
        h0 = np.tanh(p0 + b0[:, None, None])
        c1, cols1 = _np_conv(h0, w1)
        p1 = _np_pool(c1)
        h1 = np.tanh(p1 + b1[:, None, None])
        flat = h1.reshape(W7_BATCH, -1)
        h2 = np.tanh(flat @ w2 + b2)
        z = h2 @ w3 + b3
        e = np.exp(z - z.max(axis=1, keepdims=True))
        dz = (e / e.sum(axis=1, keepdims=True) - onehot) / np.asarray(W7_BATCH, dtype)
        dw3, db3 = h2.T @ dz, dz.sum(axis=0)
        dh2 = (dz @ w3.T) * (1 - h2 * h2)
        dw2, db2 = flat.T @ dh2, dh2.sum(axis=0)
        dp1 = (dh2 @ w2.T).reshape(h1.shape) * (1 - h1 * h1)
        db1 = dp1.sum(axis=(0, 2, 3))
        dw1, dh0 = _np_conv_backward(_np_pool_backward(dp1, c1, p1), h0, w1, cols1, True)
        dp0 = dh0 * (1 - h0 * h0)
        db0 = dp0.sum(axis=(0, 2, 3))
        dw0, _ = _np_conv_backward(_np_pool_backward(dp0, c0, p0), x, w0, cols0, False)
        for q, g in zip(params, (dw0, db0, dw1, db1, dw2, db2, dw3, db3)):
            q -= lr * g
    return run, lambda: params[0]


def w7_arignote(dtype):
    import arignote
    from arignote import function, shared, tensor as T
    from arignote.tensor.signal import pool
    xv, yv, values = _w7_data(dtype)
    params = [shared(v.copy()) for v in values]
    w0, b0, w1, b1, w2, b2, w3, b3 = params
    x, y = T.tensor4("x", dtype=dtype), T.ivector("y")

    def layer(inp, w, b, shape):
        out = T.nnet.conv2d(inp, w, input_shape=shape, filter_shape=w.get_value().shape)
        return T.tanh(pool.pool_2d(out, (2, 2), ignore_border=True) + b.dimshuffle("x", 0, "x", "x"))
    h0 = layer(x, w0, b0, (W7_BATCH, 1, 28, 28))
    h1 = layer(h0, w1, b1, (W7_BATCH, 20, 12, 12))
    h2 = T.tanh(T.dot(h1.flatten(2), w2) + b2)
    cost = T.nnet.categorical_crossentropy(T.nnet.softmax(T.dot(h2, w3) + b3), y).mean()
    grads = arignote.grad(cost, params)
    lr = np.asarray(LR, dtype)
    step = function([x, y], [], updates=[(q, q - lr * g) for q, g in zip(params, grads)])
    y32 = yv.astype("int32")
    return (lambda: step(xv, y32)), lambda: w0.get_value()


def w7_torch(dtype):
    import torch
    import torch.nn.functional as F
    xv, yv, values = _w7_data(dtype)
    params = [torch.tensor(v.copy(), requires_grad=True) for v in values]
    x, y = torch.from_numpy(xv), torch.from_numpy(yv)

    def layer(inp, w, b):
        out = F.max_pool2d(F.conv2d(inp, torch.flip(w, (2, 3))), 2)
        return torch.tanh(out + b[None, :, None, None])

    def run():
        w0, b0, w1, b1, w2, b2, w3, b3 = params
        h2 = torch.tanh(layer(layer(x, w0, b0), w1, b1).flatten(1) @ w2 + b2)
        F.cross_entropy(h2 @ w3 + b3, y).backward()
        with torch.no_grad():
            for q in params:
                q -= LR * q.grad
                q.grad = None
    return run, lambda: params[0].detach().numpy()


def _w7_jax_loss(params, x, y):
    import jax
    import jax.numpy as jnp

    def layer(inp, w, b):
        out = jax.lax.conv_general_dilated(inp, w[:, :, ::-1, ::-1], (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHW", "NCHW"))
        out = jax.lax.reduce_window(out, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return jnp.tanh(out + b[None, :, None, None])
    w0, b0, w1, b1, w2, b2, w3, b3 = params
    h2 = jnp.tanh(layer(layer(x, w0, b0), w1, b1).reshape(x.shape[0], -1) @ w2 + b2)
    logp = jax.nn.log_softmax(h2 @ w3 + b3)
    return -jnp.mean(logp[jnp.arange(y.shape[0]), y])


def w7_jax(dtype):
    import jax
    import jax.numpy as jnp
    xv, yv, values = _w7_data(dtype)
    state = {"params": [jnp.asarray(v) for v in values]}
    x, y = jnp.asarray(xv), jnp.asarray(yv)

    @jax.jit
    def step(params, x, y):  # the minibatch an argument, as in W4
        grads = jax.grad(_w7_jax_loss)(params, x, y)
        return [q - LR * g for q, g in zip(params, grads)]

    def run():
        state["params"] = step(state["params"], x, y)
        state["params"][0].block_until_ready()
    return run, lambda: np.asarray(state["params"][0])


# The forward convolution of the first layer alone: (500, 1, 28, 28) by (20, 1, 5, 5).
def w7c_numpy(dtype):
    x, _, values = _w7_data(dtype)
    box = {}
    def run():
        box["r"] = _np_conv(x, values[0])[0]
    return run, lambda: box["r"]


def w7c_arignote(dtype):
    from arignote import function, tensor as T
    xv, _, values = _w7_data(dtype)
    x, w = T.tensor4("x", dtype=dtype), T.tensor4("w", dtype=dtype)
    f = function([x, w], T.nnet.conv2d(x, w, input_shape=xv.shape, filter_shape=values[0].shape))
    box = {}
    def run():
        box["r"] = f(xv, values[0])
    return run, lambda: box["r"]


def w7c_torch(dtype):
    import torch
    import torch.nn.functional as F
    xv, _, values = _w7_data(dtype)
    x, w = torch.from_numpy(xv), torch.from_numpy(values[0])
    box = {}
    def run():
        with torch.no_grad():
            box["r"] = F.conv2d(x, torch.flip(w, (2, 3)))
    return run, lambda: box["r"].numpy()


def w7c_jax(dtype):
    import jax
    import jax.numpy as jnp
    xv, _, values = _w7_data(dtype)
    x, w = jnp.asarray(xv), jnp.asarray(values[0])
    f = jax.jit(lambda x, w: jax.lax.conv_general_dilated(
        x, w[:, :, ::-1, ::-1], (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")))
    box = {}
    def run():
        box["r"] = f(x, w).block_until_ready()
    return run, lambda: np.asarray(box["r"])


WORKLOADS["W7"] = ("one SGD step of DLT's LeNet (conv 20 + 50 5x5, max-pool, 500 tanh, softmax), batch 500",
                   ("float32",), 5, {"numpy": w7_numpy, "arignote": w7_arignote, "torch": w7_torch,
                                     "jax": w7_jax}, 1e-3)
WORKLOADS["W7c"] = ("forward conv of LeNet's first layer: (500, 1, 28, 28) by (20, 1, 5, 5)",
                    ("float32",), 20, {"numpy": w7c_numpy, "arignote": w7c_arignote,
                                       "torch": w7c_torch, "jax": w7c_jax}, 1e-4)
