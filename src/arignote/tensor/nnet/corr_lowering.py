"""The CPU lowering of the abstract convolutions to Theano's correlation ops (Theano's
``local_abstractconv_gemm`` and its gradient and 3d twins, under those names).

A convolution (``filter_flip=True``) is a cross-correlation with the filters' spatial axes
reversed, so ``AbstractConv2d`` becomes ``CorrMM`` of the reversed filters, its filters'
gradient ``CorrMM_gradWeights`` reversed afterwards, and its input's gradient
``CorrMM_gradInputs`` of the reversed filters (``Corr3dMM*`` in 3d). The reversals are
views and the correlation ops run the same im2col path, so the work is unchanged; what
changes is that a compiled CPU graph holds the ops Theano's programs look for. The given
``input_shape``/``filter_shape`` stay on the new op and are still checked when it runs.

The rewrites run after GPU placement (phase ``late_fusion``): a convolution placed on the
device keeps its own kernel, which flips in place. The nodes made for one left on the CPU
carry placement's reason for it (what ``explain()`` reports).
"""
from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import in_to_out, node_rewriter
from arignote.graph.rewriting.db import rewrites
from arignote.tensor.nnet.abstract_conv import (AbstractConv2d, AbstractConv2d_gradInputs,
                                                AbstractConv2d_gradWeights, AbstractConv3d,
                                                AbstractConv3d_gradInputs,
                                                AbstractConv3d_gradWeights, BaseAbstractConv)
from arignote.tensor.nnet.corr import (Corr3dMM, Corr3dMM_gradInputs, Corr3dMM_gradWeights, CorrMM,
                                       CorrMM_gradInputs, CorrMM_gradWeights)

# Each abstract class (exactly: the correlation ops are its subclasses) -> its correlation op.
CORRELATION = {AbstractConv2d: CorrMM, AbstractConv2d_gradWeights: CorrMM_gradWeights,
               AbstractConv2d_gradInputs: CorrMM_gradInputs, AbstractConv3d: Corr3dMM,
               AbstractConv3d_gradWeights: Corr3dMM_gradWeights,
               AbstractConv3d_gradInputs: Corr3dMM_gradInputs}


def flip_filters(kern: Variable, convdim: int) -> Variable:
    """``kern`` with its last ``convdim`` (spatial) axes reversed, under its name: the shape is
    the same, so the correlation op's shape errors name the user's variable."""
    flipped = kern[(slice(None),) * (kern.ndim - convdim) + (slice(None, None, -1),) * convdim]
    flipped.name = kern.name
    return flipped


def correlation_op(op: BaseAbstractConv) -> BaseAbstractConv:
    """The correlation op with ``op``'s parameters (its given shapes too)."""
    if op.convdim == 2:
        corr = CORRELATION[type(op)](op.border_mode, op.subsample, op.filter_dilation,
                                     op.num_groups, op.unshared)
    else:
        corr = CORRELATION[type(op)](op.border_mode, op.subsample, op.filter_dilation,
                                     num_groups=op.num_groups)
    corr.imshp, corr.kshp = op.imshp, op.kshp
    return corr


def _lowered(fgraph: FunctionGraph | None, node: Apply, new: Variable) -> list[Variable]:
    """``[new]``, with placement's reason for keeping ``node`` on the CPU given to the nodes
    that replace it (those between ``new`` and ``node``'s inputs)."""
    reasons = getattr(fgraph, "placement", None)
    if reasons is not None and node in reasons:
        pending = [new]
        while pending:
            var = pending.pop()
            if var.owner is not None and var not in node.inputs and var.owner not in reasons:
                reasons[var.owner] = reasons[node]
                pending.extend(var.owner.inputs)
    return [new]


@node_rewriter([AbstractConv2d, AbstractConv3d])
def local_abstractconv_gemm(fgraph: FunctionGraph | None, node: Apply):
    if type(node.op) not in CORRELATION:
        return None
    img, kern = node.inputs
    if node.op.filter_flip:
        kern = flip_filters(kern, node.op.convdim)
    return _lowered(fgraph, node, correlation_op(node.op)(img, kern))


@node_rewriter([AbstractConv2d_gradWeights, AbstractConv3d_gradWeights])
def local_abstractconv_gradweight_gemm(fgraph: FunctionGraph | None, node: Apply):
    if type(node.op) not in CORRELATION:
        return None
    grad = correlation_op(node.op)(*node.inputs)
    return _lowered(fgraph, node, flip_filters(grad, node.op.convdim) if node.op.filter_flip else grad)


@node_rewriter([AbstractConv2d_gradInputs, AbstractConv3d_gradInputs])
def local_abstractconv_gradinputs_gemm(fgraph: FunctionGraph | None, node: Apply):
    if type(node.op) not in CORRELATION:
        return None
    kern, top, shape = node.inputs
    if node.op.filter_flip:
        kern = flip_filters(kern, node.op.convdim)
    return _lowered(fgraph, node, correlation_op(node.op)(kern, top, shape))


for _rewriter in (local_abstractconv_gemm, local_abstractconv_gradweight_gemm,
                  local_abstractconv_gradinputs_gemm):
    rewrites.register(in_to_out(_rewriter, name=_rewriter.name), "late_fusion", "fast_run",
                      "conv_gemm", name=_rewriter.name)
