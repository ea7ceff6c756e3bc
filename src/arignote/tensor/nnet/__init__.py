"""Neural-network ops under the names Theano users import (``tensor.nnet``).

``basic`` holds softmax, the first activations and the cross-entropy losses;
``activations`` the exponential-linear units and softsign; ``losses`` the
one-hot softmax cross-entropies and the sigmoid cross-entropy of logits;
``compound`` Theano's fused softmax / one-hot cross-entropy ops and their gradient ops;
``prepend`` its scalar-column ops; ``metrics`` confusion_matrix;
``hierarchical`` h_softmax; ``convolution`` the ``conv2d``/``conv3d`` entry
points over ``abstract_conv``'s ops (computed by ``im2col``; ``corr``/``corr3d``
hold them under Theano's CorrMM names, to which ``corr_lowering`` lowers them on the CPU); ``conv_legacy`` Theano's legacy ``conv.conv2d``
and ``ConvOp``, ``conv3d2d`` its movie-layout conv3d, both on those ops; ``bn`` batch
normalization; ``neighbours`` sliding windows as rows; ``ctc`` the connectionist temporal
classification loss; ``blocksparse`` the block-sparse products; ``sigmoid_rewrites`` the opt-in
rewrites of sigmoid to its approximations.
"""
from arignote.tensor.nnet.basic import *  # noqa: F401,F403
from arignote.tensor.nnet.basic import __all__ as _basic
from arignote.tensor.nnet.activations import *  # noqa: F401,F403
from arignote.tensor.nnet.activations import __all__ as _activations
from arignote.tensor.nnet.losses import *  # noqa: F401,F403
from arignote.tensor.nnet.losses import __all__ as _losses
from arignote.tensor.nnet.compound import *  # noqa: F401,F403
from arignote.tensor.nnet.compound import __all__ as _compound
from arignote.tensor.nnet.prepend import *  # noqa: F401,F403
from arignote.tensor.nnet.prepend import __all__ as _prepend
from arignote.tensor.nnet.metrics import confusion_matrix  # noqa: F401
from arignote.tensor.nnet.hierarchical import h_softmax  # noqa: F401
from arignote.tensor.nnet.convolution import *  # noqa: F401,F403
from arignote.tensor.nnet.convolution import __all__ as _convolution
from arignote.tensor.nnet import abstract_conv, bn, conv3d2d, conv_legacy, corr, corr3d, neighbours  # noqa: F401
from arignote.tensor.nnet import blocksparse, corr_lowering, ctc, sigmoid_rewrites  # noqa: F401
from arignote.tensor.nnet.abstract_conv import conv2d_grad_wrt_inputs, conv2d_grad_wrt_weights  # noqa: F401
from arignote.tensor.nnet.abstract_conv import conv2d as abstract_conv2d, separable_conv2d  # noqa: F401
from arignote.tensor.nnet.bn import batch_normalization  # noqa: F401

__all__ = (_basic + _activations + _losses + _compound + _prepend + _convolution
           + ["confusion_matrix", "h_softmax", "conv2d_grad_wrt_inputs", "conv2d_grad_wrt_weights", "abstract_conv2d",
              "separable_conv2d", "batch_normalization"])
