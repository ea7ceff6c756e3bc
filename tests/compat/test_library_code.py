"""What library code written for Theano (Lasagne's layers, objectives and updates) asks of the
``theano`` alias beyond what Theano's tutorials use."""
import numpy as np


def test_gpuarray_says_its_back_end_is_off(theano):
    """Library code picks its CPU path from ``pygpu_activated`` and ``dnn.dnn_present()``."""
    from theano import gpuarray
    from theano.gpuarray import dnn
    assert gpuarray.pygpu_activated is False
    assert gpuarray.dnn is dnn and dnn.dnn_present() is False and dnn.dnn_available("dev0") is False
    assert "device=cuda" in dnn.dnn_present.msg


def test_tensor_has_the_graph_classes_and_spellings_of_tensor_basic(theano):
    import theano.tensor as T
    x = T.dvector("x")
    assert isinstance(x, T.Variable) and isinstance(x.owner, type(None))
    y = T.square(x - 1)
    assert isinstance(y.owner, T.Apply) and isinstance(y.owner.op, T.Op)
    assert isinstance(T.as_tensor(np.ones(2)), T.Constant)
    np.testing.assert_allclose(theano.function([x], y)(np.array([0.0, 3.0])), [1.0, 4.0])


def test_graph_search_order_is_theanos(theano):
    """Theano's stack takes the last listed variable first, each node's inputs left to right:
    Lasagne collects a model's parameters with ``inputs(reversed(outputs))`` and relies on it."""
    from theano.gof import graph
    x, y, z = (theano.shared(0.0, name=n) for n in "xyz")
    assert graph.inputs([x, y, z]) == [z, y, x]
    assert graph.inputs(reversed([x, y, x, z])) == [x, y, z]
    assert graph.inputs([(x + y) + z]) == graph.inputs([x + (y + z)]) == [x, y, z]
    s = x + y
    out = s * z
    assert graph.ancestors([out], blockers=[s]) == [out, s, z]
    assert graph.inputs([out], blockers=[s]) == [z]  # a blocker with an owner is no input
