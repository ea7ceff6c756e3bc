"""Composite built from a user's scalar graph, compiled through Elemwise on both CPU paths."""
import pickle

import numpy as np
import pytest

from arignote import config, function, scalar, tensor
from arignote.backends.cpu import native
from arignote.scalar.composite import Composite, ScalarConstantOp
from arignote.tensor.elemwise import Elemwise


@pytest.fixture(params=["numpy", "native"])
def cpu_path(request):
    """Elemwise kernels from numpy (no compiler) or from the native compiler when there is one."""
    flags = {"cxx": ""} if request.param == "numpy" else {"native_build": "wait"}
    with config.change_flags(**flags):
        yield request.param


def test_composite_of_a_scalar_graph(cpu_path):
    x, y = scalar.floats("xy")
    c = Composite.from_graph([x, y], [scalar.mul(scalar.add(70.0, y), x / y) - scalar.exp(-x)])
    assert c.nin == 2 and c.out_dtype == "float64"
    assert function([x, y], c(x, y))(1.0, 2.0) == pytest.approx(36.0 - np.exp(-1.0), rel=1e-15)
    a, b = tensor.dvector("a"), tensor.dvector("b")
    av, bv = np.linspace(0.5, 3.0, 4000), np.linspace(1.0, 2.0, 4000)
    f = function([a, b], Elemwise(c)(a, b))
    got = f(av, bv)
    np.testing.assert_allclose(got, (70.0 + bv) * (av / bv) - np.exp(-av), rtol=1e-14)
    if cpu_path == "native" and native.available():  # the constants' C literals compiled
        assert f.native_status == "native"


def test_mixed_dtypes_cast_as_the_graph_says(cpu_path):
    w, x = scalar.int8("w"), scalar.float32("x")
    c = Composite.from_graph([w, x], [scalar.tanh(x + scalar.cast(w, "float32")) * 2 + scalar.cast(x, "int16")])
    assert c.out_dtype == "float32"
    a, b = tensor.bvector("a"), tensor.fvector("b")
    av, bv = np.arange(-50, 50, dtype="int8"), np.linspace(-2, 2, 100).astype("float32")
    got = function([a, b], Elemwise(c)(a, b))(av, bv)
    want = np.tanh(bv + av.astype("float32")) * np.float32(2) + bv.astype("int16")
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_nested_composites_are_inlined():
    x, y = scalar.floats("xy")
    inner = Composite.from_graph([x, y], [x + y])
    outer = Composite.from_graph([x, y], [inner(x * y, y)])
    assert not any(isinstance(op, Composite) for op, _ in outer.steps)
    assert not isinstance(outer.outputs[0].owner.op, Composite)
    assert function([x, y], outer(x, y))(3.0, 2.0) == 8.0
    assert outer.fgraph.outputs == outer.outputs and len(outer.inputs) == 2


def test_constants_become_steps_with_kernel_literals():
    x = scalar.float32("x")
    c = Composite.from_graph([x], [x * 0.5 + 3])
    constants = [op for op, _ in c.steps if isinstance(op, ScalarConstantOp)]
    assert [op.value.dtype.name for op in constants] == ["float32", "int8"]
    lines, result = c.c_block(["x"], ["float32"], "float32", lambda d: {"float32": "float", "int8": "char"}[d])
    assert any("0.5" in line for line in lines) and any("(3)" in line for line in lines)
    assert ScalarConstantOp(np.float64(np.inf)).c_expr == "INFINITY"
    assert ScalarConstantOp(np.complex128(1j)).c_expr is None


def test_composite_pickles_and_compares_by_its_steps():
    x, y = scalar.floats("xy")
    c = Composite.from_graph([x, y], [x * 2.0 + y])
    again = Composite.from_graph([y, x], [y * 2.0 + x])
    assert c == again and hash(c) == hash(again)
    loaded = pickle.loads(pickle.dumps(c))
    assert loaded == c and function([x, y], loaded(x, y))(1.0, 2.0) == 4.0


def test_composite_errors():
    x, y = scalar.floats("xy")
    with pytest.raises(ValueError, match="Composite of 2 outputs.*one Composite per output"):
        Composite.from_graph([x, y], [x + y, x * y])
    with pytest.raises(ValueError, match="'y' is neither one of the inputs"):
        Composite.from_graph([x], [x + y])
    t = tensor.dscalar("t")
    with pytest.raises(TypeError, match="not a scalar op"):
        Composite.from_graph([t], [scalar.as_scalar(tensor.sum(t * 2))])


def test_clone_float32_widens_every_float16():
    h, w = scalar.float16("h"), scalar.int8("w")
    c = Composite.from_graph([h, w], [scalar.tanh(h) + scalar.cast(w, "float16") - scalar.constant(np.float16(1))])
    assert c.out_dtype == "float16" and any(v.type == scalar.float16 for v in c.fgraph.variables)
    wide = c.clone_float32()
    assert wide.input_dtypes == ("float32", "int8") and wide.out_dtype == "float32"
    assert not any(v.type == scalar.float16 for v in wide.fgraph.variables)
    assert function([h, w], c(h, w))(0.5, 3) == pytest.approx(np.tanh(0.5) + 2, rel=1e-3)
    f32 = scalar.float32("f")
    assert function([f32, w], wide(f32, w))(0.5, 3) == pytest.approx(np.tanh(np.float32(0.5)) + 2, rel=1e-6)
