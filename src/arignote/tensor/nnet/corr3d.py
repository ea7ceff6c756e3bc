"""``tensor.nnet.corr3d``: Theano's module of the 3d correlation ops (held in ``corr.py``)."""
from arignote.tensor.nnet.corr import Corr3dMM, Corr3dMM_gradInputs, Corr3dMM_gradWeights

__all__ = ["Corr3dMM", "Corr3dMM_gradWeights", "Corr3dMM_gradInputs"]
