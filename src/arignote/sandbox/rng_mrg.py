"""``MRG_RandomStreams``: Theano's ``sandbox.rng_mrg`` streams, bit for bit.

The generator is MRG31k3p (see ``arignote.tensor.random.mrg31k3p`` for the
recurrence, the constants and how the streams are seeded). Every draw owns a
shared int32 matrix of stream states with a default update, so each call of
a compiled function continues the streams; the draws are built from one op,
``MRGUniform``, as Theano built them:

- ``uniform``: ``u * (high - low) + low`` from the raw uniforms;
- ``normal``: Box-Muller on an even count of uniforms, the first half giving
  radii ``sqrt(-2 log u1)``, the second angles ``2 pi u2``; the cosines come
  first, then the sines, trimmed to the size, then ``* std + avg``; with
  ``truncate`` (``truncated_normal``), samples beyond 2 get new radii from a
  second draw of uniforms in [1/e^2, 1), and the kept ones come first;
- ``binomial`` (``n=1``): ``uniform < p``;
- ``multinomial`` and ``choice`` (without replacement): one uniform per row
  and sample, turned into categories by running sums.

The number of streams of a draw is Theano's guess: the element count over 6
(when above 6), at most ``60 * 256``; a size that is not all ints, as inside
``normal``, ``multinomial`` and ``choice``, gets ``60 * 256``.

Gradients: a discrete draw (``binomial``, ``multinomial``, ``choice``) has no
gradient with respect to its probabilities (``grad`` raises
NullTypeGradError, as in Theano; a zero would be silently wrong). A
continuous one has its pathwise gradient for fixed noise (``d uniform / d low
= 1 - u``, ``d normal / d std = z``: the reparameterisation), where Theano
raised.

Theano's module-level names for the generator itself: ``mrg_uniform`` (the op,
with ``mrg_uniform.new(rstate, ndim, dtype, size)``), ``ff_2p72``/``ff_2p134``
(a state row advanced to its next substream or stream), ``matVecModM``,
``multMatVect`` and the op ``DotModulo`` (the modular matrix-vector products the
jumps are made of), ``mrg_next_value`` (one step of one stream, in Python).

``target=`` (Theano's keyword of every draw): ``'cpu'`` keeps the draw where
placement puts it (the same numbers everywhere), a context name moves it there.
"""
from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np

from arignote.compile.sharedvalue import SharedVariable, shared
from arignote.config import config
from arignote.graph.basic import Apply, Op, Variable, user_stacklevel
from arignote.scalar.dtypes import upcast
from arignote.tensor import math as tm
from arignote.tensor.extra_ops import flatnonzero
from arignote.tensor.gradient_ops import undefined_grad
from arignote.tensor.join import join
from arignote.tensor.random import mrg31k3p
from arignote.tensor.random.mrg_ops import ChoiceFromUniform, MRGUniform, MultinomialFromUniform
from arignote.tensor.reduction import prod
from arignote.tensor.shape import as_shape_vector, reshape, static_value, vector_length
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable, constant

__all__ = ["MRG_RandomStreams", "guess_n_streams", "mrg_uniform", "mrg_uniform_base", "ff_2p72",
           "ff_2p134", "matVecModM", "multMatVect", "mrg_next_value", "DotModulo"]

_MAX_STREAMS = 60 * 256

# Theano's names of the uniform op (it had a CPU class over a shared base; here one op
# runs everywhere).
mrg_uniform = mrg_uniform_base = MRGUniform


def matVecModM(A: Any, s: Any, m: Any) -> np.ndarray:
    """``A @ s mod m`` for an int64 matrix and an int32 vector, exactly (each product is
    reduced before the sum, so int64 never overflows), as int32."""
    A, s = np.asarray(A), np.asarray(s)
    if A.dtype != np.int64:
        raise TypeError(f"matVecModM: A must be an int64 matrix, got {A.dtype}")
    return (((A * s.astype(np.int64)) % m).sum(axis=1) % m).astype(np.int32)


def multMatVect(v: Any, A: Any, m1: Any, B: Any, m2: Any) -> np.ndarray:
    """A state row ``v`` (6 int32) with its first half times ``A`` mod ``m1`` and its second
    half times ``B`` mod ``m2``: one jump of both MRG31k3p components."""
    v = np.asarray(v)
    return np.concatenate([matVecModM(A, v[:3], m1), matVecModM(B, v[3:], m2)])


def _jumped(rstate: Any, a1: tuple, a2: tuple) -> np.ndarray:
    row = np.asarray(rstate, dtype=np.int32)
    if row.shape != (6,):
        raise ValueError(f"an MRG state row has 6 int32 values, got shape {row.shape}")
    return mrg31k3p.jump(row.reshape(1, 6), a1, a2)[0]


def ff_2p72(rstate: Any) -> np.ndarray:
    """The state row ``rstate`` advanced ``2**72`` steps: the start of its next substream."""
    return _jumped(rstate, mrg31k3p.A1P72, mrg31k3p.A2P72)


def ff_2p134(rstate: Any) -> np.ndarray:
    """The state row ``rstate`` advanced ``2**134`` steps: the start of the next stream."""
    return _jumped(rstate, mrg31k3p.A1P134, mrg31k3p.A2P134)


def mrg_next_value(rstate: Any, new_rstate: np.ndarray, NORM: Any, mask: int, offset: int) -> Any:
    """One MRG31k3p step of the state row ``rstate`` (6 int32), written into ``new_rstate``;
    returns ``((z & mask) + offset) * NORM`` for the step's ``z`` in ``[1, 2**31 - 1]``
    (Theano's scalar reference of the uniform draw)."""
    row = np.array(rstate, dtype=np.int32).reshape(1, 6)
    z = mrg31k3p.step(row)[0]
    new_rstate[...] = row[0]
    return ((z & mask) + offset) * NORM


class DotModulo(Op):
    """``(A, s, m, A2, s2, m2) -> concat(A @ s mod m, A2 @ s2 mod m2)``, exact in int64
    (``matVecModM`` twice, as a graph op)."""

    __props__ = ()

    def make_node(self, A: Any, s: Any, m: Any, A2: Any, s2: Any, m2: Any) -> Apply:
        inputs = [as_tensor_variable(x) for x in (A, s, m, A2, s2, m2)]
        for name, var, ndim in zip(("A", "s", "m", "A2", "s2", "m2"), inputs, (2, 1, 0) * 2):
            if var.ndim != ndim or not var.dtype.startswith(("int", "uint")):
                raise TypeError(f"DotModulo: {name} must be an integer tensor with {ndim} "
                                f"dimensions, got {var.describe()} ({var.type.describe()})")
        return Apply(self, inputs, [TensorType(inputs[1].dtype, (False,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        A, s, m, A2, s2, m2 = inputs
        for name, a, v in (("A", A, s), ("A2", A2, s2)):
            if a.shape[1] != v.shape[0]:
                raise ValueError(f"DotModulo: {name} has shape {a.shape}, its vector {v.shape}: "
                                 f"{name} needs as many columns as the vector has entries")
        halves = [matVecModM(np.asarray(a, dtype=np.int64), v, int(mod)) for a, v, mod in
                  ((A, s, m), (A2, s2, m2))]
        output_storage[0][0] = np.concatenate(halves).astype(node.outputs[0].dtype)

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        return [(input_shapes[0][0] + input_shapes[3][0],)]


def guess_n_streams(size: Any, warn: bool = False) -> int:
    """Theano's stream count for a draw of ``size`` (see the module doc); ``warn``: say so
    when ``size`` is not all ints and the count is the default."""
    if isinstance(size, (tuple, list)) and all(isinstance(s, (int, np.integer)) for s in size):
        count = int(np.prod(size, dtype=np.int64)) if size else 1
        if count > 6:
            count //= 6
        return min(count, _MAX_STREAMS)
    if warn:
        warnings.warn(f"MRG_RandomStreams: cannot guess a stream count for size {size!r}; using "
                      f"{_MAX_STREAMS}", stacklevel=user_stacklevel())
    return _MAX_STREAMS


def _placed(draw: Variable, target: str | None) -> Variable:
    return draw if target is None or target == "cpu" else draw.transfer(target)


class MRG_RandomStreams:
    """Random draws from MRG31k3p streams; the same numbers as Theano's for the same seed.

    ``seed`` is one int in ``[1, 2147462579)`` (used six times) or six ints,
    the first three below ``2**31 - 1`` and not all 0, the last three below
    ``2147462579`` and not all 0.
    """

    def __init__(self, seed: int | Sequence[int] = 12345):
        self.state_updates: list[tuple[SharedVariable, Variable, Any, int | None]] = []
        self.default_instance_seed = seed
        self.set_rstate(seed)

    def updates(self) -> list[tuple[SharedVariable, Variable]]:
        return [(old, new) for old, new, _, _ in self.state_updates]

    def set_rstate(self, seed: int | Sequence[int]) -> None:
        """Make ``seed`` the row the next draw's streams start from."""
        if isinstance(seed, (int, np.integer)):
            if not 0 < seed < mrg31k3p.M2:
                raise ValueError(f"seed {seed} must be in [1, {mrg31k3p.M2}): pick another seed")
            self.rstate = np.full(6, seed, dtype=np.int32)
            return
        seed = list(seed)
        if len(seed) != 6 or not all(isinstance(s, (int, np.integer)) for s in seed):
            raise TypeError(f"seed must be an int or 6 ints, got {seed!r}")
        first, last = seed[:3], seed[3:]
        if not any(first) or not any(last):
            raise ValueError(f"seed {seed}: neither the first 3 nor the last 3 values may be all 0")
        if not all(0 <= s < mrg31k3p.M1 for s in first) or not all(0 <= s < mrg31k3p.M2 for s in last):
            raise ValueError(f"seed {seed}: the first 3 values must be in [0, {mrg31k3p.M1}) and the "
                             f"last 3 in [0, {mrg31k3p.M2})")
        self.rstate = np.asarray(seed, dtype=np.int32)

    def seed(self, seed: int | Sequence[int] | None = None) -> None:
        """Restart from ``seed`` (None: the constructor's): every draw made so far gets, in
        creation order, the streams it would have had from a fresh instance."""
        self.set_rstate(self.default_instance_seed if seed is None else seed)
        for state, _, size, nstreams in self.state_updates:
            state.set_value(self.get_substream_rstates(nstreams or guess_n_streams(size)), borrow=True)

    def inc_rstate(self) -> None:
        """Advance the seed row ``2**134`` steps: the start of the next draw's streams."""
        self.rstate = mrg31k3p.jump(self.rstate.reshape(1, 6), mrg31k3p.A1P134, mrg31k3p.A2P134)[0]

    def get_substream_rstates(self, n_streams: int, dtype: str | None = None,
                              inc_rstate: bool = True) -> np.ndarray:
        """The (n_streams, 6) states of a new draw, spaced ``2**72`` steps apart."""
        rows = mrg31k3p.substreams(self.rstate, int(n_streams))
        if inc_rstate:
            self.inc_rstate()
        return rows

    n_streams = staticmethod(guess_n_streams)

    # ------------------------------------------------------ distributions
    def uniform(self, size: Any, low: Any = 0.0, high: Any = 1.0, ndim: int | None = None,
                dtype: str | None = None, nstreams: int | None = None,
                target: str | None = None) -> Variable:
        """Floats in ``(low, high)`` of shape ``size`` (ints and int scalars, or an int vector)."""
        low, high = as_tensor_variable(low), as_tensor_variable(high)
        dtype = dtype or upcast(config.floatX, low.dtype, high.dtype)
        low, high = tm.cast(low, dtype), tm.cast(high, dtype)
        u = self._raw_uniform(size, ndim, dtype, nstreams)
        r = u * (high - low) + low
        if r.broadcastable != u.broadcastable:
            raise ValueError(f"uniform: low and high ({low.type}, {high.type}) would broadcast the "
                             f"draw of size {size} to more dimensions; give a larger size")
        return _placed(r, target)

    def _raw_uniform(self, size: Any, ndim: int | None, dtype: str, nstreams: int | None
                     ) -> Variable:
        if isinstance(size, (tuple, list)):
            for s in size:
                if isinstance(s, (int, np.integer)) and s <= 0:
                    raise ValueError(f"size {size} has a length <= 0: lengths must be positive")
            ndim = len(size)
        elif not (isinstance(size, Variable) and size.ndim == 1):
            raise TypeError(f"size must be a tuple of ints and int scalars, or an int vector "
                            f"variable, got {size!r}")
        vector = as_shape_vector(size, "size")
        ndim = ndim if ndim is not None else vector_length(vector)
        if ndim is None:
            raise ValueError(f"the length of size {size} is not fixed in the graph: pass ndim=")
        state = shared(self.get_substream_rstates(nstreams or guess_n_streams(size)), borrow=True)
        state.tag.is_rng = True
        new_state, u = MRGUniform.new(state, ndim, dtype, vector)
        u.rstate = state
        u.update = (state, new_state)
        state.default_update = new_state
        self.state_updates.append((state, new_state, size, nstreams))
        return u

    def binomial(self, size: Any = None, n: int = 1, p: Any = 0.5, ndim: int | None = None,
                 dtype: str = "int64", nstreams: int | None = None,
                 target: str | None = None) -> Variable:
        """0/1 draws with probability ``p`` of a 1 (only ``n=1``, as in Theano)."""
        if n != 1:
            raise NotImplementedError("MRG_RandomStreams.binomial draws with n=1 only")
        x = self.uniform(size=size, ndim=ndim, nstreams=nstreams)
        return _placed(tm.cast(tm.lt(x, undefined_grad(as_tensor_variable(p))), dtype), target)

    def normal(self, size: Any, avg: Any = 0.0, std: Any = 1.0, ndim: int | None = None,
               dtype: str | None = None, nstreams: int | None = None, truncate: bool = False,
               target: str | None = None) -> Variable:
        """Gaussian floats by Box-Muller (see the module doc for the exact recipe); with
        ``truncate``, the ones beyond 2 are drawn again (Theano's ``truncate=True``)."""
        vector = _size_vector(size)
        avg, std = as_tensor_variable(avg), as_tensor_variable(std)
        dtype = dtype or upcast(config.floatX, avg.dtype, std.dtype)
        avg, std = tm.cast(avg, dtype), tm.cast(std, dtype)
        fixed = static_value(vector)
        if fixed is not None:
            n_odd: Any = int(np.prod(fixed, dtype=np.int64))
            n_even: Any = n_odd + n_odd % 2
        else:
            n_odd = prod(vector, dtype="int64")
            n_even = n_odd + n_odd % 2
        # Theano's count was always symbolic here, so its stream count was the default guess.
        uniform = self.uniform((n_even,), low=0.0, high=1.0, ndim=1, dtype=dtype,
                               nstreams=nstreams or _MAX_STREAMS)
        half = n_even // 2
        radius = tm.sqrt(-2.0 * tm.log(uniform[:half]))
        theta = constant(np.asarray(2.0 * np.pi, dtype=dtype)) * uniform[half:]
        cos_theta, sin_theta = tm.cos(theta), tm.sin(theta)
        z0, z1 = radius * cos_theta, radius * sin_theta
        if truncate:
            samples = self._redraw_tails(z0, z1, cos_theta, sin_theta, dtype, nstreams)
        else:
            samples = join(0, z0, z1)
        if fixed is None or n_odd % 2:
            samples = samples[:n_odd]
        samples = reshape(samples, vector, ndim=ndim if ndim is not None else vector_length(vector))
        return _placed(samples * std + avg, target)

    def _redraw_tails(self, z0: Variable, z1: Variable, cos_theta: Variable, sin_theta: Variable,
                      dtype: str, nstreams: int | None) -> Variable:
        """Theano's truncation: the samples outside [-2, 2] get a new radius from uniforms in
        [1/e^2, 1) (so they land inside) and keep their angle; the ones kept come first."""
        out0, out1 = tm.or_(tm.lt(z0, -2.0), tm.gt(z0, 2.0)), tm.or_(tm.lt(z1, -2.0), tm.gt(z1, 2.0))
        fix0, fix1 = flatnonzero(out0), flatnonzero(out1)
        lower = constant(np.asarray(1.0 / np.e ** 2, dtype=dtype))
        u_fix = self.uniform((fix0.shape[0] + fix1.shape[0],), low=lower, high=1.0, ndim=1, dtype=dtype,
                             nstreams=nstreams or _MAX_STREAMS)
        r_fix = tm.sqrt(-2.0 * tm.log(u_fix))
        n0 = fix0.shape[0]
        return join(0, z0[flatnonzero(tm.invert(out0))], r_fix[:n0] * cos_theta[fix0],
                    z1[flatnonzero(tm.invert(out1))], r_fix[n0:] * sin_theta[fix1])

    def truncated_normal(self, size: Any, avg: Any = 0.0, std: Any = 1.0, ndim: int | None = None,
                         dtype: str | None = None, nstreams: int | None = None,
                         target: str | None = None) -> Variable:
        """Normal draws truncated to ``avg +- 2 std'`` where ``std'`` is ``std`` rescaled so the
        result has standard deviation ``std`` (Theano's constant, scipy's truncnorm std on [-2, 2])."""
        std = as_tensor_variable(std) / constant(0.87962566103423978)
        return self.normal(size=size, avg=avg, std=std, truncate=True, ndim=ndim, dtype=dtype,
                           nstreams=nstreams, target=target)

    def multinomial_wo_replacement(self, size: Any = None, n: int = 1, pvals: Any = None,
                                   ndim: int | None = None, dtype: str = "int64",
                                   nstreams: int | None = None,
                                   target: str | None = None) -> Variable:
        """Deprecated in Theano 1.0 for ``choice(size=n, replace=False, p=pvals)``, which it is."""
        if size is not None:
            raise ValueError("multinomial_wo_replacement: size must be None (n gives the count)")
        warnings.warn("MRG_RandomStreams.multinomial_wo_replacement() is deprecated: use "
                      "choice(size=n, a=None, replace=False, p=pvals)", DeprecationWarning,
                      stacklevel=user_stacklevel())
        return self.choice(size=n, a=None, replace=False, p=pvals, ndim=ndim, dtype=dtype,
                           nstreams=nstreams, target=target)

    def multinomial(self, size: Any = None, n: int = 1, pvals: Any = None, ndim: int | None = None,
                    dtype: str = "int64", nstreams: int | None = None,
                    target: str | None = None) -> Variable:
        """Counts of ``n`` draws per row of the ``pvals`` matrix (size and ndim must be None)."""
        if pvals is None:
            raise TypeError("multinomial needs pvals, a matrix with one distribution per row")
        if size is not None or ndim is not None:
            raise ValueError("MRG_RandomStreams.multinomial takes its shape from pvals: "
                             "leave size and ndim as None")
        pvals = as_tensor_variable(pvals)
        if pvals.ndim != 2:
            raise NotImplementedError(f"MRG_RandomStreams.multinomial takes a pvals matrix, got "
                                      f"{pvals.ndim} dimensions")
        unis = self.uniform(pvals[:, 0].shape * n, ndim=1, nstreams=nstreams)
        draw = MultinomialFromUniform(dtype)(undefined_grad(pvals), unis, as_tensor_variable(n))
        return _placed(draw, target)

    def choice(self, size: Any = 1, a: Any = None, replace: bool = True, p: Any = None,
               ndim: int | None = None, dtype: str = "int64", nstreams: int | None = None,
               target: str | None = None) -> Variable:
        """``size`` categories per row of the ``p`` matrix, without replacement (only
        ``replace=False`` and ``a=None``, as in Theano)."""
        if replace:
            raise NotImplementedError("MRG_RandomStreams.choice samples without replacement only: "
                                      "pass replace=False")
        if a is not None:
            raise TypeError("MRG_RandomStreams.choice draws indices 0..p.shape[1]-1: leave a=None")
        if p is None:
            raise TypeError("MRG_RandomStreams.choice needs p, a matrix with one distribution per row")
        if ndim is not None:
            raise ValueError("MRG_RandomStreams.choice does not use ndim: leave it None")
        p = as_tensor_variable(p)
        if p.ndim != 2:
            raise NotImplementedError(f"MRG_RandomStreams.choice takes a p matrix, got {p.ndim} "
                                      "dimensions")
        unis = self.uniform(p[:, 0].shape * size, ndim=1, nstreams=nstreams)
        return _placed(ChoiceFromUniform(dtype)(undefined_grad(p), unis, as_tensor_variable(size)), target)


def _size_vector(size: Any) -> Variable:
    """A size as an int vector (an int is a 1-d size), with Theano's checks."""
    if isinstance(size, Variable):
        if size.ndim > 1:
            raise ValueError(f"size {size.describe()} must be a scalar or a vector")
        return as_shape_vector(size, "size")
    if isinstance(size, (int, np.integer)):
        size = (size,)
    if not isinstance(size, (tuple, list)):
        raise ValueError(f"size must be an int, a tuple of ints or an int vector, got {size!r}")
    for s in size:
        if isinstance(s, (int, np.integer)) and s <= 0:
            raise ValueError(f"size {size} has a length <= 0: lengths must be positive")
    return as_shape_vector(size, "size")
