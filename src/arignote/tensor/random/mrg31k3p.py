"""The MRG31k3p generator (L'Ecuyer & Touzin, 2000), vectorised over streams.

Definition (Proceedings of the 2000 Winter Simulation Conference, 683-689):
two multiple recursive components,

    x1[n] = (2**22 * x1[n-2] + (2**7 + 1) * x1[n-3])   mod m1,  m1 = 2**31 - 1
    x2[n] = (2**15 * x2[n-1] + (2**15 + 1) * x2[n-3])  mod m2,  m2 = 2**31 - 21069

combined as ``z = (x1[n] - x2[n]) mod m1``, replaced by ``m1`` when it is 0,
so ``z`` is in ``[1, m1]``. A state is six int32 ``[x1[n-1], x1[n-2],
x1[n-3], x2[n-1], x2[n-2], x2[n-3]]`` (Theano's ``rstate`` row).

Streams (L'Ecuyer, Simard, Chen & Kelton, Operations Research 50(6), 2002):
advancing a component by ``k`` steps is multiplying its three values by the
``k``-th power of its one-step companion matrix modulo its ``m``. Theano,
whose numbers this module reproduces bit for bit, starts from the seed row
``[s]*6`` (or six given ints); each ``MRG_RandomStreams`` draw takes the
current row as stream 0 of its state matrix, gives stream ``i`` the row
advanced ``i * 2**72`` steps, then advances the seed row ``2**134`` steps for
the next draw. Element ``i`` of a sample (C order) comes from stream
``i % n_streams``, each stream stepping once per element it serves.

Output as floats, also Theano's: float64 is ``z * 2**-31``; float32 is
``float32(z) * 4.6566126e-10f`` in float32 arithmetic (the constant is the
largest float32 keeping ``m1`` below 1; this is what Theano's C and GPU code
computed -- its pure-Python fallback rounded differently in the last bit);
float16 is ``((z & 0x7fff) + 1) * float16(3.0458e-05)`` rounded once.

The step below is written in int32 arithmetic with wrap-around, exactly as a
GPU kernel has to compute it (the shifts multiply by powers of two modulo
``m`` without 64-bit products: ``2**31 = 1 mod m1`` and ``2**31 = 21069 mod m2``).
A kernel renderer can emit it per stream as this C, all variables ``int32``:

    y1 = ((x12 & 0x1ff) << 22) + (x12 >> 9) + ((x13 & 0xffffff) << 7) + (x13 >> 24);
    y1 -= (y1 < 0 || y1 >= M1) ? M1 : 0;   y1 += x13;
    y1 -= (y1 < 0 || y1 >= M1) ? M1 : 0;
    x13 = x12; x12 = x11; x11 = y1;
    y1 = ((x21 & 0xffff) << 15) + 21069 * (x21 >> 16);
    y1 -= (y1 < 0 || y1 >= M2) ? M2 : 0;
    y2 = ((x23 & 0xffff) << 15) + 21069 * (x23 >> 16);
    y2 -= (y2 < 0 || y2 >= M2) ? M2 : 0;   y2 += x23;
    y2 -= (y2 < 0 || y2 >= M2) ? M2 : 0;   y2 += y1;
    y2 -= (y2 < 0 || y2 >= M2) ? M2 : 0;
    x23 = x22; x22 = x21; x21 = y2;
    z = (x11 <= x21) ? x11 - x21 + M1 : x11 - x21;
"""
from __future__ import annotations

import numpy as np

M1 = 2147483647          # 2**31 - 1
M2 = 2147462579          # 2**31 - 21069

# One-step companion matrices of the two components (the recurrences above).
A1 = ((0, 4194304, 129), (1, 0, 0), (0, 1, 0))
A2 = ((32768, 0, 32769), (1, 0, 0), (0, 1, 0))

FLOAT32_NORM = np.float32(4.6566126e-10)
FLOAT64_NORM = 4.656612873077392578125e-10        # 2**-31, exact
FLOAT16_NORM = np.float16(3.0458e-05)


def matpow_mod(a: tuple, exponent: int, m: int) -> tuple:
    """``a ** exponent mod m`` for a 3x3 matrix, in exact Python integers."""
    result = tuple(tuple(int(i == j) for j in range(3)) for i in range(3))
    base = a
    while exponent:
        if exponent & 1:
            result = _matmul_mod(result, base, m)
        base = _matmul_mod(base, base, m)
        exponent >>= 1
    return result


def _matmul_mod(a: tuple, b: tuple, m: int) -> tuple:
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) % m for j in range(3))
                 for i in range(3))


# Jumps between substreams (2**72 steps) and between the draws' streams (2**134).
A1P72, A2P72 = matpow_mod(A1, 2 ** 72, M1), matpow_mod(A2, 2 ** 72, M2)
A1P134, A2P134 = matpow_mod(A1, 2 ** 134, M1), matpow_mod(A2, 2 ** 134, M2)


def jump(states: np.ndarray, a1: tuple, a2: tuple) -> np.ndarray:
    """Rows of ``states`` (n, 6) advanced by the step matrices ``a1`` (first three columns)
    and ``a2`` (last three); each term reduced before summing, so int64 never overflows."""
    s = states.astype(np.int64)
    out = np.empty(states.shape, dtype=np.int32)
    for half, (a, m) in enumerate(((a1, M1), (a2, M2))):
        block = s[:, 3 * half:3 * half + 3]
        for i in range(3):
            total = sum((np.int64(a[i][j]) * block[:, j]) % m for j in range(3))
            out[:, 3 * half + i] = total % m
    return out


def substreams(seed_row: np.ndarray, n_streams: int) -> np.ndarray:
    """``n_streams`` rows spaced ``2**72`` steps apart from ``seed_row`` (by doubling:
    rows ``k..2k`` are rows ``0..k`` advanced ``k * 2**72`` steps)."""
    if n_streams < 1:
        raise ValueError(f"n_streams must be at least 1, got {n_streams}")
    rows = np.asarray(seed_row, dtype=np.int32).reshape(1, 6)
    a1, a2 = A1P72, A2P72
    while len(rows) < n_streams:
        rows = np.concatenate([rows, jump(rows[:n_streams - len(rows)], a1, a2)])
        a1, a2 = _matmul_mod(a1, a1, M1), _matmul_mod(a2, a2, M2)
    return rows


def step(states: np.ndarray) -> np.ndarray:
    """Advance each row of ``states`` (int32, (n, 6)) one step in place; return its ``z``."""
    x11, x12, x13, x21, x22, x23 = (states[:, k].copy() for k in range(6))
    m1, m2 = np.int32(M1), np.int32(M2)
    with np.errstate(over="ignore"):
        y1 = ((x12 & 0x1FF) << 22) + (x12 >> 9) + ((x13 & 0xFFFFFF) << 7) + (x13 >> 24)
        y1 -= np.where((y1 < 0) | (y1 >= m1), m1, np.int32(0))
        y1 += x13
        y1 -= np.where((y1 < 0) | (y1 >= m1), m1, np.int32(0))
        t1 = ((x21 & 0xFFFF) << 15) + np.int32(21069) * (x21 >> 16)
        t1 -= np.where((t1 < 0) | (t1 >= m2), m2, np.int32(0))
        y2 = ((x23 & 0xFFFF) << 15) + np.int32(21069) * (x23 >> 16)
        y2 -= np.where((y2 < 0) | (y2 >= m2), m2, np.int32(0))
        y2 += x23
        y2 -= np.where((y2 < 0) | (y2 >= m2), m2, np.int32(0))
        y2 += t1
        y2 -= np.where((y2 < 0) | (y2 >= m2), m2, np.int32(0))
        states[:, 0], states[:, 1], states[:, 2] = y1, x11, x12
        states[:, 3], states[:, 4], states[:, 5] = y2, x21, x22
        return np.where(y1 <= y2, y1 - y2 + m1, y1 - y2)


def draw(states: np.ndarray, n: int) -> np.ndarray:
    """``n`` values of ``z`` (int32, C order), element ``i`` from stream ``i % n_streams``;
    ``states`` is advanced in place."""
    n_streams = len(states)
    out = np.empty(n, dtype=np.int32)
    for start in range(0, n, n_streams):
        count = min(n_streams, n - start)
        out[start:start + count] = step(states[:count])  # a view: the rows advance in place
    return out


def to_float(z: np.ndarray, dtype: str) -> np.ndarray:
    """Theano's conversion of ``z`` in ``[1, m1]`` to floats in ``(0, 1)`` (see the module doc)."""
    if dtype == "float64":
        return z.astype(np.float64) * FLOAT64_NORM
    if dtype == "float32":
        return z.astype(np.float32) * FLOAT32_NORM
    if dtype == "float16":
        return (((z & 0x7FFF) + 1).astype(np.float64) * np.float64(FLOAT16_NORM)).astype(np.float16)
    raise TypeError(f"MRG31k3p draws float16, float32 or float64, not {dtype}")
