"""``RandomStreams``: Theano's ``shared_randomstreams.RandomStreams``.

Seeding, bit for bit as in Theano 1.0: the streams object holds a
``numpy.random.RandomState(seed)`` (the seed generator). Each draw, in the
order the draws are created, takes ``s = seedgen.randint(2**30)`` and gets its
own shared ``numpy.random.RandomState(s)``; the draw calls that generator's
legacy method (see ``samplers.py``). ``seed(n)`` reseeds every existing draw
the same way from a fresh ``RandomState(n)``, in creation order, and leaves the
seed generator of future draws alone.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from arignote.compile.sharedvalue import shared
from arignote.graph.basic import Variable
from arignote.tensor.variable import as_tensor_variable
from arignote.tensor.extra_ops import permute_row_elements
from arignote.tensor.random import basic
from arignote.tensor.random.type import RandomStateSharedVariable


class RandomStreams:
    """Random draws whose generator states are shared variables updated on each call.

    >>> srng = RandomStreams(seed=234)
    >>> u = srng.uniform((2, 2))
    >>> f = function([], u)        # f() differs on each call
    >>> g = function([], u, no_default_updates=True)   # g() repeats itself

    Each draw ``d`` has ``d.rng`` (its state's shared variable) and
    ``d.update == (d.rng, new_state)``; ``state_updates`` lists these pairs in
    creation order.
    """

    def __init__(self, seed: int | None = None):
        self.state_updates: list[tuple[RandomStateSharedVariable, Variable]] = []
        self.default_instance_seed = seed
        self.gen_seedgen = np.random.RandomState(seed)

    def updates(self) -> list[tuple[RandomStateSharedVariable, Variable]]:
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Reseed every draw made so far: the k-th gets ``RandomState(RandomState(seed)'s k-th
        randint(2**30))``; ``None`` means the seed the streams were made with."""
        if seed is None:
            seed = self.default_instance_seed
        seedgen = np.random.RandomState(seed)
        for state, _ in self.state_updates:
            state.set_value(np.random.RandomState(int(seedgen.randint(2 ** 30))), borrow=True)

    def __getitem__(self, state: RandomStateSharedVariable) -> np.random.RandomState:
        return state.get_value(borrow=True)

    def __setitem__(self, state: RandomStateSharedVariable, value: np.random.RandomState) -> None:
        state.set_value(value, borrow=True)

    def gen(self, builder: Callable[..., list[Variable]], *args: Any, **kwargs: Any) -> Variable:
        """Make a new state seeded from the seed generator and draw from it with ``builder``."""
        seed = int(self.gen_seedgen.randint(2 ** 30))
        state = shared(np.random.RandomState(seed), borrow=True)
        state.tag.is_rng = True
        new_state, sample = builder(state, *args, **kwargs)
        sample.rng = state
        sample.update = (state, new_state)
        state.default_update = new_state
        self.state_updates.append(sample.update)
        return sample

    # ------------------------------------------------------ distributions
    def uniform(self, size: Any = None, low: Any = 0.0, high: Any = 1.0,
                ndim: int | None = None, dtype: str | None = None) -> Variable:
        """Floats in ``[low, high)`` of ``size`` (None: the broadcast shape of low and high)."""
        return self.gen(basic.uniform, size, low, high, ndim=ndim, dtype=dtype)

    def normal(self, size: Any = None, avg: Any = 0.0, std: Any = 1.0,
               ndim: int | None = None, dtype: str | None = None) -> Variable:
        """Gaussian floats of mean ``avg`` and standard deviation ``std``."""
        return self.gen(basic.normal, size, avg, std, ndim=ndim, dtype=dtype)

    def binomial(self, size: Any = None, n: Any = 1, p: Any = 0.5, ndim: int | None = None,
                 dtype: str = "int64", prob: Any = None) -> Variable:
        """Successes in ``n`` trials of probability ``p`` (``prob`` is Theano's old name)."""
        if prob is not None:
            p = prob
        return self.gen(basic.binomial, size, n, p, ndim=ndim, dtype=dtype)

    def poisson(self, size: Any = None, lam: Any = 1.0, ndim: int | None = None,
                dtype: str = "int64") -> Variable:
        """Poisson counts of mean ``lam``."""
        return self.gen(basic.poisson, size, lam, ndim=ndim, dtype=dtype)

    def random_integers(self, size: Any = None, low: Any = 0, high: Any = 1,
                        ndim: int | None = None, dtype: str = "int64") -> Variable:
        """Integers in ``[low, high]``, both included."""
        return self.gen(basic.random_integers, size, low, high, ndim=ndim, dtype=dtype)

    def choice(self, size: Any = None, a: Any = 2, replace: Any = True, p: Any = None,
               ndim: int | None = None, dtype: str = "int64") -> Variable:
        """Samples of ``range(a)`` (or of vector ``a``), with probabilities ``p``."""
        return self.gen(basic.choice, size, a, replace, p, ndim=ndim, dtype=dtype)

    def permutation(self, size: Any = None, n: Any = 1, ndim: int | None = None,
                    dtype: str = "int64") -> Variable:
        """Permutations of ``range(n)``: shape ``size + (n,)``."""
        return self.gen(basic.permutation, size, n, ndim=ndim, dtype=dtype)

    def shuffle_row_elements(self, input: Any) -> Variable:
        """``input`` with the elements of each row (its last axis) shuffled, one permutation
        per row (``.permutation`` holds them); a vector is shuffled as a whole."""
        input = as_tensor_variable(input)
        perm = self.permutation(size=input.shape[:-1], n=input.shape[-1], ndim=input.ndim - 1)
        shuffled = permute_row_elements(input, perm)
        shuffled.permutation = perm
        return shuffled

    def multinomial(self, size: Any = None, n: Any = 1, pvals: Any = (0.5, 0.5),
                    ndim: int | None = None, dtype: str = "int64") -> Variable:
        """Counts of ``n`` draws among the outcomes of each row of ``pvals``."""
        return self.gen(basic.multinomial, size, n, pvals, ndim=ndim, dtype=dtype)
