"""misc.pkl_utils: Theano's pickle-based dump/load into a zip of .npy members,
on every device; a failed dump writes nothing."""
from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

from arignote import function, shared, tensor as T
from arignote.misc import pkl_utils


def params():
    return [shared(np.arange(6, dtype="float32").reshape(2, 3), "w"),
            shared(np.zeros((1, 3), dtype="float64"), "b", broadcastable=(True, False))]


def test_pkl_utils_dump_and_load_keep_theanos_names_and_layout(device):
    w, b = params()
    x = T.fmatrix("x")
    f = function([x], T.dot(x, w).sum(), updates={w: w * np.float32(2)})
    buffer = io.BytesIO()
    pkl_utils.dump((w, b, f, np.array(5)), buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        names = archive.namelist()  # Theano's names and order: the arrays, then the pickle
        assert names[:2] == ["w", "b"] and names[-1] == "pkl" and "array_0" in names
    w2, b2, f2, five = pkl_utils.load(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(w2.get_value(), w.get_value())
    assert five == 5
    assert f2(np.ones((1, 2), dtype="float32")) == w.get_value().sum()
    np.testing.assert_array_equal(w2.get_value(), w.get_value() * 2)  # f2 updates the loaded w
    np.testing.assert_array_equal(np.load(io.BytesIO(buffer.getvalue()))["w"], w.get_value())


def test_a_failed_pkl_utils_dump_writes_nothing():
    buffer = io.BytesIO()
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pkl_utils.dump([np.zeros(10), lambda: 0], buffer)
    assert buffer.getvalue() == b""


def test_strip_pickler_leaves_out_traces_and_test_values():
    x = T.fmatrix("x")
    x.tag.test_value = np.ones((2, 2), dtype="float32")
    x.tag.note = "kept"
    x.tag.drop_me = "dropped"
    y = T.tanh(x).sum()
    assert y.tag.trace
    buffer = io.BytesIO()
    pkl_utils.StripPickler(buffer, protocol=-1, extra_tag_to_remove=["drop_me"]).dump({"outputs": y})
    loaded = pickle.loads(buffer.getvalue())["outputs"]
    x2 = loaded.owner.inputs[0].owner.inputs[0]
    assert x2.name == "x" and x2.tag.note == "kept"
    for var, tag in ((x2, "test_value"), (x2, "drop_me"), (loaded, "trace")):
        assert not hasattr(var.tag, tag)
    assert x.tag.drop_me == "dropped" and hasattr(y.tag, "trace")  # the originals are unchanged
    assert len(buffer.getvalue()) < len(pickle.dumps({"outputs": y}, -1))
