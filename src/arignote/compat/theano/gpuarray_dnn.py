"""``theano.gpuarray.dnn``: Theano's cuDNN ops, absent here (see ``theano.gpuarray``)."""


def dnn_present() -> bool:
    """False: arignote has no cuDNN back end (``dnn_present.msg`` says why)."""
    return False


dnn_present.msg = ("arignote has no cuDNN back end: its GPU layer (device=cuda or device=opencl) runs "
                   "convolutions with kernels of its own, placed without cuDNN ops")


def dnn_available(context_name: str | None = None) -> bool:
    """False, as :func:`dnn_present` (Theano's per-context form)."""
    return False


dnn_available.msg = dnn_present.msg

__all__ = ["dnn_present", "dnn_available"]
