"""``tensor.load``: a tensor read from a .npy file named at call time, into memory or mapped
copy-on-write (in-place ops downstream never change the file); wrong dtype, rank or mode
refused with the reason."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.graph.basic import Variable
from arignote.graph.types import Generic
from arignote.tensor.io import load


@pytest.fixture
def npy(tmp_path):
    path = str(tmp_path / "data.npy")
    np.save(path, np.arange(5, dtype=np.int32))
    return path


def test_load_into_memory(npy, tmp_path):
    path = Variable(Generic())
    f = function([path], load(path, "int32", (False,)) * 2)
    np.testing.assert_array_equal(f(npy), np.arange(5) * 2)
    other = str(tmp_path / "other.npy")
    np.save(other, np.array([7, 8], dtype=np.int32))
    np.testing.assert_array_equal(f(other), [14, 16])  # the file is an argument of each call


def test_copy_on_write_map_keeps_the_file(npy):
    path = Variable(Generic())
    x = load(path, "int32", (False,), "c")
    f = function([path], (x ** 2).sum())
    assert f(npy) == 30 and f(npy) == 30
    np.testing.assert_array_equal(np.load(npy), np.arange(5))
    assert isinstance(function([path], x)(npy), np.memmap)


def test_refusals(npy):
    path = Variable(Generic())
    for mode in ("r+", "r", "w+", "toto"):
        with pytest.raises(ValueError, match="mmap_mode"):
            load(path, "int32", (False,), mode)
    with pytest.raises(TypeError, match="Generic"):
        load(T.dvector(), "int32", (False,))
    with pytest.raises(TypeError, match="int64"):
        function([path], load(path, "int64", (False,)))(npy)
    with pytest.raises(TypeError, match="1d int32"):
        function([path], load(path, "int32", (False, False)))(npy)
    with pytest.raises(ValueError, match="broadcastable"):
        function([path], load(path, "int32", (True,)))(npy)
