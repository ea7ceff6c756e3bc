"""``theano.gpuarray``: Theano 1.0's pygpu GPU back end, which arignote does not have.

Code written for Theano asks ``pygpu_activated`` (and ``dnn.dnn_present()``) to choose
between its GPU and CPU paths; without pygpu, Theano answered False and such code took its
CPU path. Here the answer is always False: arignote's GPU layer is ``device=cuda`` or
``device=opencl`` (the README's "GPUs"), whose kernels it renders itself, with no pygpu or
cuDNN, and it places a graph's ops on the device without the user choosing GPU ops.
"""
pygpu_activated = False

__all__ = ["pygpu_activated"]
