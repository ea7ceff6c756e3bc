"""``theano.scalar`` under the alias: Theano's forms of user ops, op classes, Composite, linkers."""
import numpy as np
import pytest




def test_module_names(theano):
    import theano.scalar as ts
    from theano.scalar.basic import Composite, IntDiv, TrueDiv, float32, int8

    assert ts.float64 is ts.get_scalar_type("float64") and [t.dtype for t in ts.float_types][-1] == "float64"
    a, b, f = int8(), ts.int32(), float32()
    assert isinstance((a // b).owner.op, IntDiv) and isinstance((b / f).owner.op, TrueDiv)
    assert not isinstance((a // b).owner.op, TrueDiv) and ts.Add(ts.upcast_out) is ts.add
    x, y = ts.floats("xy")
    c = Composite([x, y], [x * y + 1])
    assert isinstance(c, Composite) and isinstance(c, ts.Composite)
    assert theano.tensor.scal is ts and theano.tensor.scalar_from_tensor is not None


def test_type_level_output_rules(theano):
    import theano.scalar as ts

    assert ts.upgrade_to_float(ts.int8) == (ts.float32,) and ts.upgrade_to_float(ts.int32) == (ts.float64,)
    assert ts.upcast_out(ts.int8, ts.float32) == (ts.float32,) and ts.same_out(ts.int16) == (ts.int16,)
    assert ts.upcast_out_min8(ts.bool, ts.bool) == (ts.int8,)
    assert ts.transfer_type(1, None)(ts.int8, ts.float32) == [ts.float32, ts.float32]
    with pytest.raises(TypeError, match="complex inputs are not supported"):
        ts.upgrade_to_float_no_complex(ts.complex64)


def _user_ops(ts):
    class Cube(ts.UnaryScalarOp):
        """x ** 3, written on one number, with its gradient on scalar variables."""

        def impl(self, x):
            return x * x * x

        def grad(self, inputs, output_grads):
            (x,), (gz,) = inputs, output_grads
            return [gz * 3 * x * x]

    class Hypot(ts.ScalarOp):
        nin = 2

        def impl(self, x, y):
            return (x * x + y * y) ** 0.5

    return Cube(ts.same_out, name="cube"), Hypot(ts.upgrade_to_float, name="hypot")


def test_user_scalar_ops(theano):
    import theano.scalar as ts
    from theano.tensor.elemwise import Elemwise

    cube, hypot = _user_ops(ts)
    x, i = ts.float64("x"), ts.int8("i")
    assert cube(x).dtype == "float64" and hypot(i, i).dtype == "float32" and cube(i).dtype == "int8"
    f = theano.function([x], [cube(x), theano.grad(cube(x), x)])
    assert f(2.0) == [8.0, 12.0]
    v = theano.tensor.dvector("v")
    g = theano.grad(Elemwise(cube)(v).sum(), v)
    out = theano.function([v], [Elemwise(cube)(v), g, Elemwise(hypot)(v, v)])(np.array([1.0, -2.0]))
    np.testing.assert_array_equal(out[0], [1.0, -8.0])
    np.testing.assert_array_equal(out[1], [3.0, 12.0])
    np.testing.assert_allclose(out[2], np.hypot([1.0, -2.0], [1.0, -2.0]))
    assert cube == type(cube)(ts.same_out, name="cube") and cube != type(cube)(ts.upcast_out, name="cube")


def test_user_op_without_a_rule_says_so(theano):
    import theano.scalar as ts

    class NoRule(ts.UnaryScalarOp):
        def impl(self, x):
            return x

    with pytest.raises(NotImplementedError, match="give output_types_preference"):
        NoRule()(ts.float64())

    class NoArity(ts.ScalarOp):
        pass

    with pytest.raises(TypeError, match="set the class attribute nin"):
        NoArity(ts.same_out)


def test_user_op_whose_init_skips_the_base_class(theano):
    """Theano's ScalarOp needed no base __init__ call: the name is the class's, nin -1 takes any
    number of inputs, and a gradient that is not implemented for one input still builds."""
    import theano.scalar as ts
    import theano.tensor as T

    class Scale(ts.ScalarOp):
        def __init__(self):
            self.output_types_preference = ts.upgrade_to_float

        def impl(self, n, x):
            return x * n

        def grad(self, inputs, output_grads):
            n, _ = inputs
            return [theano.gradient.grad_not_implemented(self, 0, n), output_grads[0] * n]

    op = T.Elemwise(Scale())
    assert str(Scale()) == "scale" and Scale() == Scale()
    x = T.dvector("x")
    y = op(2, x)
    value, grad = theano.function([x], [y, T.grad(y.sum(), x)])(np.arange(3.0))
    np.testing.assert_array_equal(value, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(grad, [2.0, 2.0, 2.0])


def test_linkers_compile_a_function_graph(theano):
    from theano import gof
    import theano.scalar as ts

    x, y = ts.floats("xy")
    g = gof.FunctionGraph([x, y], [ts.mul(ts.add(x, y), ts.div_proxy(x, y))])
    assert gof.DualLinker().accept(g).make_function()(1.0, 2.0) == 1.5
    two = gof.FunctionGraph([x, y], [x + y, x - y])
    assert gof.PerformLinker().accept(two).make_function()(3.0, 1.0) == [4.0, 2.0]
    with pytest.raises(TypeError, match="before accept"):
        gof.DualLinker().make_function()


def test_cast_policy_numpy_floatx(theano):
    theano.config.cast_policy = "numpy+floatX"
    theano.config.floatX = "float32"
    assert theano.tensor.constant(1.1).dtype == "float32" and theano.tensor.constant(2).dtype == "int64"
    assert theano.tensor.constant(np.float64(1.1)).dtype == "float64"
    theano.config.cast_policy = "numpy"
    assert theano.tensor.constant(1.1).dtype == "float64"


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_second_class_builds_fill_in_place(theano, dtype):
    import theano.scalar as ts
    import theano.tensor as T
    from theano.gof import FunctionGraph
    from theano.gof.link import PerformLinker

    op = ts.Second(ts.transfer_type(0))
    assert op is ts.second and isinstance(op, ts.Second) and not isinstance(ts.add, ts.Second)
    assert isinstance(T.fill(T.matrix(), 1.0).owner.op.scalar_op, ts.Second)
    x = T.TensorType(dtype, (False, False))("x")
    y = T.TensorType(dtype, (True, True))("y")
    e = T.Elemwise(op, {0: 0})(x, y)
    assert e.dtype == dtype
    f = PerformLinker().accept(FunctionGraph([x, y], [e])).make_function()
    xv = np.arange(20).reshape(4, 5).astype(dtype)
    yv = np.full((1, 1), 7, dtype=dtype)
    f(xv, yv)
    np.testing.assert_array_equal(xv, np.full((4, 5), 7, dtype=dtype))


@pytest.mark.parametrize("openlow,openhi", [(True, True), (False, False), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
def test_in_range_against_numpy_with_a_zero_gradient(theano, openlow, openhi, dtype):
    import pickle

    import theano.tensor as T
    from theano.scalar.basic import InRange
    import theano.scalar as ts
    op = InRange(openlow, openhi)
    assert op == InRange(openlow, openhi) and op != InRange(not openlow, openhi)
    assert pickle.loads(pickle.dumps(op)) == op
    assert (ts.inopenrange, ts.inclosedrange) == (InRange(True, True), InRange(False, False))
    x, low, high = (T.TensorType(dtype, (False,))(n) for n in ("x", "low", "high"))
    xv = np.arange(8).astype(dtype)
    lv, hv = np.full(8, 2, dtype), np.full(8, 5, dtype)
    above = xv > lv if openlow else xv >= lv
    below = xv < hv if openhi else xv <= hv
    out = T.Elemwise(op)(x, low, high)
    assert out.dtype == "bool"
    np.testing.assert_array_equal(theano.function([x, low, high], out)(xv, lv, hv), above & below)
    # on scalars, as Theano's test: the gradient is zero everywhere, bounds included
    xs, ls, hs = T.fscalar("xs"), T.fscalar("ls"), T.fscalar("hs")
    grads = T.grad(op(xs, ls, hs), [xs, ls, hs])
    f = theano.function([xs, ls, hs], grads)
    for point in [0, 1, 2, 5, 7]:
        np.testing.assert_array_equal(f(point, 1, 5), [0, 0, 0])
    assert all(g.dtype == "float32" for g in grads)


def test_scalar_shared_variable_as_a_counter_in_updates(theano):
    """theano.scalar.sharedvar.shared: a scalar-typed shared number that indexes a
    shared array in the updates of a function and is stepped by them."""
    import theano.scalar.sharedvar
    from theano import tensor

    s = theano.scalar.sharedvar.shared(1, name="i")
    assert s.type == theano.scalar.int64 and isinstance(s, theano.scalar.sharedvar.ScalarSharedVariable)
    r = theano.shared(np.arange(12.0).reshape(4, 3))
    f = theano.function([], [], updates=[(s, s + 1), (r, tensor.inc_subtensor(r[s], 2 * r[s - 1]))])
    f()
    f()
    expected = np.arange(12.0).reshape(4, 3)
    for i in (1, 2):
        expected[i] += 2 * expected[i - 1]
    assert s.get_value() == 3 and np.array_equal(r.get_value(), expected)
    assert theano.scalar.sharedvar.shared(np.float32(0.5)).type == theano.scalar.float32
    with pytest.raises(TypeError, match="use theano.shared for arrays"):
        theano.scalar.sharedvar.shared(np.zeros(3))
