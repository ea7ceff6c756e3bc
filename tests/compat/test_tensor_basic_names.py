"""Names Theano's ``theano.tensor`` (its ``basic`` module had no ``__all__``), ``theano.compile``
and ``theano.tensor.raw_random`` carried that Theano programs and tests use."""
import numpy as np
import pytest


def test_star_import_binds_numpy_and_the_modules(theano):
    scope = {}
    exec("from theano.tensor import *", scope)
    assert scope["np"] is np and scope["basic"] is theano.tensor and scope["compile"] is theano.compile
    assert scope["slicetype"] is theano.tensor.type_other.slicetype and "make_slice" in scope
    assert scope["_convert_to_int8"] is theano.tensor.basic._cast_mapping["int8"]


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float32", "float64", "complex128", "bool"])
def test_convert_to_ops_cast_and_always_make_a_node(theano, dtype):
    import theano.tensor as T
    from theano.tensor import basic
    convert = getattr(basic, f"_convert_to_{dtype}")
    assert convert.scalar_op.output_types_preference.spec[0].dtype == dtype
    for source in ("float64", dtype):
        x = T.vector(dtype=source)
        y = convert(x)
        assert y.owner is not None and y.dtype == dtype
        values = np.asarray([0.0, 1.0, 3.0]).astype(source)
        np.testing.assert_array_equal(theano.function([x], y)(values), values.astype(dtype))


def test_deep_copy_op_copies(theano):
    import theano.tensor as T
    from theano.compile import DeepCopyOp, deep_copy_op
    x = T.dvector()
    y = deep_copy_op(x)
    assert isinstance(y.owner.op, DeepCopyOp) and y.type == x.type and DeepCopyOp() == deep_copy_op
    f = theano.function([theano.In(x, borrow=True)], y)
    v = np.arange(3.0)
    out = f(v)
    np.testing.assert_array_equal(out, v)
    assert not np.shares_memory(out, v)


def test_infer_ndim_bcast_under_theanos_name(theano):
    import theano.tensor as T
    from theano.tensor import raw_random
    ndim, size, bcast = raw_random._infer_ndim_bcast(None, (3, 1))
    assert ndim == 2 and bcast == (False, True) and list(size.eval()) == [3, 1]
    ndim, _, bcast = raw_random._infer_ndim_bcast(None, None, T.dmatrix(), T.dvector())
    assert ndim == 2 and bcast == (False, False)


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_max_and_argmax_class_answers_for_both_nodes(theano, axis):
    import theano.tensor as T
    from theano.tensor import MaxAndArgmax
    x = T.matrix("x")
    v = np.random.default_rng(1).normal(size=(3, 4))
    m, i = MaxAndArgmax(axis)(x)
    assert isinstance(m.owner.op, MaxAndArgmax) and isinstance(i.owner.op, MaxAndArgmax)
    assert not isinstance(T.sum(x).owner.op, MaxAndArgmax) and not isinstance(T.min(x).owner.op, MaxAndArgmax)
    f = theano.function([x], [m, i])
    np_axis = None if axis is None or isinstance(axis, list) else axis
    np.testing.assert_allclose(f(v)[0], np.max(v, axis=np_axis))
    np.testing.assert_array_equal(f(v)[1], np.argmax(v, axis=np_axis))
    assert theano.tensor.numeric_grad is theano.gradient.numeric_grad


def test_private_dot_takes_vectors_and_matrices_only(theano):
    import theano.tensor as T
    from theano.tensor.basic import _dot
    rng = np.random.default_rng(2)
    shapes = {1: (3,), 2: (3, 3)}
    kinds = {0: T.dscalar, 1: T.dvector, 2: T.dmatrix, 3: T.dtensor3}
    for i, make_a in kinds.items():
        for j, make_b in kinds.items():
            a, b = make_a("a"), make_b("b")
            if i in (1, 2) and j in (1, 2):
                out = _dot(a, b)
                assert isinstance(out.owner.op, T.Dot) and out.ndim == i + j - 2
                va, vb = rng.normal(size=shapes[i]), rng.normal(size=shapes[j])
                np.testing.assert_allclose(theano.function([a, b], out)(va, vb), np.dot(va, vb))
            else:
                with pytest.raises(TypeError, match="vectors and matrices"):
                    _dot(a, b)


def test_raw_random_star_import_binds_theano_tensor_and_numpy(theano):
    """Theano's raw_random had no ``__all__``: its star import gave ``theano``, ``tensor``, ``np``."""
    scope = {}
    exec("from theano.tensor.raw_random import *", scope)
    assert scope["theano"] is theano and scope["tensor"] is theano.tensor and scope["np"] is np
    assert scope["uniform"] is theano.tensor.raw_random.uniform


def test_the_copy_op_in_graphs_is_theanos_under_each_of_its_names(theano):
    import theano.compile.function_module as fm
    import theano.compile.ops as ops
    import theano.tensor as T
    from theano.compile import DeepCopyOp, deep_copy_op
    assert fm.deep_copy_op is ops.deep_copy_op is deep_copy_op and ops.DeepCopyOp is DeepCopyOp
    x = T.dmatrix()
    f = theano.function([x], T.add(x))
    assert [n.op for n in f.maker.fgraph.toposort()] == [fm.deep_copy_op]


def test_theanos_names_of_useless_elemwise_alloc_and_scipy(theano):
    import theano.scalar
    import theano.tensor as T
    from theano.tensor import opt
    assert theano.scalar.imported_scipy_special is True
    x = T.dmatrix()
    a = T.alloc(x, 3, 2, 2)
    assert isinstance(T.alloc, T.Alloc) and a.owner.op == T.alloc
    optimized = opt.local_useless_elemwise.transform(T.tensor_copy(x).owner)
    assert optimized == [x]
    named = T.Elemwise(theano.scalar.add, name="plus")
    assert str(named) == "plus" and named == T.Elemwise(theano.scalar.add)
    np.testing.assert_array_equal(theano.function([x], named(x, x))(np.ones((1, 2))), [[2, 2]])
