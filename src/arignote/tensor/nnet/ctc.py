"""Connectionist temporal classification: Theano's ``nnet.ctc`` (warp-ctc's loss).

``ctc(activations, labels, input_lengths)`` is, per minibatch entry, minus the
log-probability of its label sequence summed over every alignment of it to the
first ``input_lengths[b]`` steps, the steps' symbol distributions being the
softmax of ``activations[:, b, :]`` (unnormalised, as warp-ctc takes them).
Symbol 0 is the blank; negative labels are padding. The forward-backward
recursions run in log space, so long sequences do not underflow; the same
pass gives the gradient with respect to the activations (softmax minus the
posterior of each symbol at each step), which the op returns as its second
output and the gradient rule scales by the costs' gradient. A label sequence
that cannot fit its steps (too long, with the blanks that repeated symbols
need) costs ``inf``, with a zero gradient. Compiled without a use of the gradient,
the op skips it (``local_ctc_no_grad``, a canonicalization, as in Theano).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arignote.gradient import grad_undefined, register_grad
from arignote.graph.basic import Apply, Op
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.type import TensorType
from arignote.tensor.variable import as_tensor_variable

__all__ = ["ctc", "ConnectionistTemporalClassification", "ctc_available"]


def ctc_available() -> bool:
    """Theano's check for the warp-ctc library; this loss is computed here, so always True."""
    return True


class ConnectionistTemporalClassification(Op):
    """``(activations (t, m, p), labels (m, l) int32, input_lengths (m,) int32) -> costs (m,)``
    and, with ``compute_grad``, the costs' gradients with respect to the activations."""

    __props__ = ("compute_grad",)

    def __init__(self, compute_grad: bool = True, openmp: Any = None):
        self.compute_grad = compute_grad  # openmp: Theano's C option, nothing to choose here

    def make_node(self, activations: Any, labels: Any, input_lengths: Any) -> Apply:
        acts, labs, lengths = (as_tensor_variable(v) for v in (activations, labels, input_lengths))
        for name, var, ndim, kinds in (("activations", acts, 3, ("float32", "float64")),
                                       ("labels", labs, 2, ("int32",)),
                                       ("input_lengths", lengths, 1, ("int32",))):
            if var.dtype not in kinds:
                raise TypeError(f"ctc: {name} {var.describe()} is {var.dtype}; it must be "
                                f"{' or '.join(kinds)} (cast it)")
            if var.ndim != ndim:
                raise ValueError(f"ctc: {name} {var.describe()} has {var.ndim} dimensions; it "
                                 f"must have {ndim}")
        outputs = [TensorType(acts.dtype, (False,))()]
        if self.compute_grad:
            outputs.append(acts.type())
        return Apply(self, [acts, labs, lengths], outputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        acts, labels, lengths = inputs
        steps, batch, _ = acts.shape
        if labels.shape[0] != batch or lengths.shape[0] != batch:
            raise ValueError(f"ctc: activations have {batch} minibatch entries, labels "
                             f"{labels.shape[0]} rows and input_lengths {lengths.shape[0]}: one each")
        if np.any(lengths < 0) or np.any(lengths > steps):
            raise ValueError(f"ctc: input_lengths {lengths.tolist()} must be in [0, {steps}] "
                             "(the activations' time steps)")
        costs = np.empty(batch, dtype=acts.dtype)
        grads = np.zeros_like(acts)
        for b in range(batch):
            n = int(lengths[b])
            costs[b], grads[:n, b] = _ctc_one(acts[:n, b].astype(np.float64), labels[b][labels[b] >= 0])
        output_storage[0][0] = costs
        if self.compute_grad:
            output_storage[1][0] = grads

    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: list) -> list:
        shapes = [(input_shapes[0][1],)]
        return shapes + [input_shapes[0]] if self.compute_grad else shapes


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = np.max(a, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(safe, axis) + np.log(np.sum(np.exp(a - safe), axis=axis))


def _ctc_one(x: np.ndarray, label: np.ndarray) -> tuple[float, np.ndarray]:
    """The cost and activation gradient of one sequence (``x``: (t, p) float64)."""
    steps = x.shape[0]
    logp = x - _logsumexp(x, 1)[:, None]
    ext = np.zeros(2 * len(label) + 1, dtype=np.int64)
    ext[1::2] = label
    size = len(ext)
    # A skip from s-2 to s is allowed into a symbol different from the one two back.
    skip = np.zeros(size, dtype=bool)
    skip[2:] = (ext[2:] != 0) & (ext[2:] != ext[:-2])
    if steps == 0:
        return (0.0 if len(label) == 0 else np.inf), np.zeros_like(x)
    alpha = np.full((steps, size), -np.inf)
    beta = np.full((steps, size), -np.inf)
    ends = min(2, size)  # a path starts (and ends) on the blank or on the first (last) label
    alpha[0, :ends] = logp[0, ext[:ends]]
    beta[-1, -ends:] = logp[-1, ext[-ends:]]
    for t in range(1, steps):
        alpha[t] = _combine(alpha[t - 1], skip, forward=True) + logp[t, ext]
        beta[-1 - t] = _combine(beta[-t], skip, forward=False) + logp[-1 - t, ext]
    log_likelihood = _logsumexp(alpha[-1, -ends:], 0)
    if not np.isfinite(log_likelihood):
        return np.inf, np.zeros_like(x)
    occupancy = alpha + beta - logp[:, ext]  # log of the alignments through (t, s)
    posterior = np.zeros_like(x)
    for k in np.unique(ext):
        posterior[:, k] = np.exp(_logsumexp(occupancy[:, ext == k], 1) - log_likelihood)
    return -log_likelihood, np.exp(logp) - posterior


def _combine(prev: np.ndarray, skip: np.ndarray, forward: bool) -> np.ndarray:
    """One step of the recursion: stay, move one, or (where allowed) skip a blank."""
    one, two = _shift(prev, 1, forward, -np.inf), _shift(prev, 2, forward, -np.inf)
    allowed = skip if forward else _shift(skip, 2, False, False)
    return _logsumexp(np.stack([prev, one, np.where(allowed, two, -np.inf)]), 0)


def _shift(v: np.ndarray, k: int, forward: bool, fill: Any) -> np.ndarray:
    """``v`` moved ``k`` places later (forward) or earlier, ``fill`` where nothing comes."""
    out = np.full_like(v, fill)
    if forward:
        out[k:] = v[:len(v) - k] if k < len(v) else v[:0]
    else:
        out[:max(len(v) - k, 0)] = v[k:]
    return out


@register_grad(ConnectionistTemporalClassification)
def _ctc_grad(op: ConnectionistTemporalClassification, inputs: list, outputs: list,
              output_grads: list) -> list:
    if len(outputs) < 2:
        raise TypeError("ctc: this ConnectionistTemporalClassification(compute_grad=False) has no "
                        "gradient; build it with compute_grad=True")
    # The gradient output counts as a constant (no second derivatives), as in Theano.
    total = outputs[1] * output_grads[0].dimshuffle("x", 0, "x")
    return [total, grad_undefined(op, 1, inputs[1], "labels are discrete"),
            grad_undefined(op, 2, inputs[2], "input lengths are discrete")]


@node_rewriter([ConnectionistTemporalClassification])
def local_ctc_no_grad(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """A CTC node whose gradient output nothing uses stops computing it."""
    if len(node.outputs) < 2 or fgraph.clients.get(node.outputs[1]):
        return None
    return {node.outputs[0]: ConnectionistTemporalClassification(compute_grad=False)(*node.inputs)}


rewrites.register(local_ctc_no_grad, "canonicalize", "fast_run", "fast_compile")


def ctc(activations: Any, labels: Any, input_lengths: Any) -> Any:
    """The CTC loss of each minibatch entry (see the module doc): ``activations`` (t, m, p)
    unnormalised scores, symbol 0 the blank; ``labels`` (m, l) int32, padded with -1;
    ``input_lengths`` (m,) int32 steps of each entry."""
    return ConnectionistTemporalClassification()(activations, labels, input_lengths)[0]
