"""Runs a script under the real Theano 1.0.5 with scipy 1.10 and numpy 1.23, whose Python-mode
(no C compiler) convolution and pooling use names and idioms those versions removed:
- Theano imports scipy.signal.signaltools._valfrommode/_bvalfromboundary and
  sigtools._convolve2d, which scipy moved to private modules: put them back under the old names;
- Theano's pooling ops index arrays with a *list* of slices (numpy >= 1.23 refuses; it meant a
  tuple): their perform methods see arrays whose indexing turns such a list into a tuple, and
  hand plain arrays back.
Nothing else changes. Usage: theano-python scipy_shim.py SCRIPT ARGS..."""
import runpy, sys, types
import numpy as np
import scipy.signal
import scipy.signal._signaltools as new_signaltools
import scipy.signal._sigtools as new_sigtools
import scipy.signal.signaltools as old_signaltools

for name in ("_valfrommode", "_bvalfromboundary", "convolve"):
    setattr(old_signaltools, name, getattr(new_signaltools, name))
old_sigtools = sys.modules.setdefault("scipy.signal.sigtools", types.ModuleType("scipy.signal.sigtools"))
scipy.signal.sigtools = old_sigtools
old_sigtools._convolve2d = new_sigtools._convolve2d


class TupleIndexed(np.ndarray):
    @staticmethod
    def _fix(index):
        return tuple(index) if isinstance(index, list) and all(isinstance(s, slice) for s in index) else index

    def __getitem__(self, index):
        return super().__getitem__(self._fix(index))

    def __setitem__(self, index, value):
        super().__setitem__(self._fix(index), value)


class NumpyForPool:
    def __getattr__(self, name):
        return getattr(np, name)

    def zeros(self, *args, **kwargs):
        return np.zeros(*args, **kwargs).view(TupleIndexed)

    def zeros_like(self, *args, **kwargs):
        return np.zeros_like(*args, **kwargs).view(TupleIndexed)

    def empty(self, *args, **kwargs):
        return np.empty(*args, **kwargs).view(TupleIndexed)


import theano.tensor.signal.pool as pool  # noqa: E402
import theano.gof  # noqa: E402

pool.np = NumpyForPool()


def fixed(perform):
    def run(self, node, inputs, outputs, *rest):
        inputs = [a.view(TupleIndexed) if isinstance(a, np.ndarray) else a for a in inputs]
        perform(self, node, inputs, outputs, *rest)
        for out in outputs:
            if isinstance(out[0], np.ndarray):
                out[0] = np.asarray(out[0])
    return run


for value in list(vars(pool).values()):
    if isinstance(value, type) and issubclass(value, theano.gof.Op) and "perform" in vars(value):
        value.perform = fixed(value.perform)

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
