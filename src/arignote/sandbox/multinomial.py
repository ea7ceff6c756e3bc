"""Theano's ``sandbox.multinomial``: the ops that turn uniforms into categorical draws.

``MRG_RandomStreams.multinomial`` and ``.choice`` build them; they live in
``arignote.tensor.random.mrg_ops`` beside the uniform draw. Theano 1.0 renamed
``MultinomialWOReplacementFromUniform`` to ``ChoiceFromUniform`` and kept the
old name, deprecated, as here.
"""
from __future__ import annotations

import warnings
from typing import Any

from arignote.graph.basic import user_stacklevel
from arignote.tensor.random.mrg_ops import ChoiceFromUniform, MultinomialFromUniform

__all__ = ["MultinomialFromUniform", "ChoiceFromUniform", "MultinomialWOReplacementFromUniform"]


class MultinomialWOReplacementFromUniform(ChoiceFromUniform):
    """Theano's old name of ``ChoiceFromUniform``, deprecated since Theano 1.0."""

    def __init__(self, *args: Any, **kwargs: Any):
        warnings.warn("MultinomialWOReplacementFromUniform is deprecated: use ChoiceFromUniform",
                      DeprecationWarning, stacklevel=user_stacklevel())
        super().__init__(*args, **kwargs)
