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

    def loss(params):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        logp = jax.nn.log_softmax(h @ w2 + b2)
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y])

    @jax.jit
    def step(params):
        grads = jax.grad(loss)(params)
        return [q - LR * g for q, g in zip(params, grads)]

    def run():
        state["params"] = step(state["params"])
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

    def step(params):
        w1, b1, w2, b2 = params
        h = torch.tanh(x @ w1 + b1)
        loss = torch.nn.functional.cross_entropy(h @ w2 + b2, y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for q, g in zip(params, grads):
                q -= LR * g
    f = torch.compile(step) if compiled else step
    return (lambda: f(params)), lambda: params[2].detach().numpy().copy()


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
