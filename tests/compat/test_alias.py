"""The module map of the ``theano`` alias: the same objects as arignote's, Theano's layout."""
import importlib
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import arignote
import arignote.sparse
from arignote.compat import theano as alias
from arignote.compat.theano import modules
from tests.compat.conftest import ROOT


def test_theano_names_are_arignote_objects(theano):
    import theano.tensor as T
    from theano.tensor.shared_randomstreams import RandomStreams
    from theano.sandbox.rng_mrg import MRG_RandomStreams
    assert T.dscalar is arignote.tensor.dscalar and T.dot is arignote.tensor.dot
    assert theano.function is arignote.function and theano.shared is arignote.shared
    assert theano.config is arignote.config and T.grad is arignote.grad
    assert RandomStreams is arignote.tensor.shared_randomstreams.RandomStreams
    assert MRG_RandomStreams is arignote.sandbox.rng_mrg.MRG_RandomStreams
    assert theano.tensor.elemwise is arignote.tensor.elemwise  # not mapped: the same path under ours
    assert theano.printing is arignote.printing and theano.gradient is arignote.gradient
    from theano.compile.ops import as_op
    assert as_op is arignote.as_op and theano.as_op is as_op and theano.compile.as_op is as_op


def test_theano_layout_where_ours_differs(theano):
    import theano.tensor.var
    import theano.gof
    import theano.scan_module.scan_op
    from theano.tensor.var import TensorVariable
    from theano.compile.function_module import Function
    assert TensorVariable is arignote.tensor.TensorVariable and Function is arignote.compile.Function
    assert theano.scan_module.scan_op.Scan is arignote.scan_module.Scan
    from theano.scan_module.scan_checkpoints import scan_checkpoints
    assert scan_checkpoints is theano.scan_checkpoints is theano.scan_module.scan_checkpoints
    assert scan_checkpoints is arignote.scan_checkpoints
    assert theano.gof.Op is arignote.Op and theano.gof.graph.inputs is theano.gof.inputs
    # Importing Theano's module theano.tensor.var leaves the function var in place, as in Theano,
    # and writes nothing onto arignote's own package.
    assert theano.tensor.var is arignote.tensor.var and callable(arignote.tensor.var)
    assert "sharedvar" not in vars(arignote.tensor)
    assert isinstance(theano.tensor, type(arignote)) and theano.tensor is not arignote.tensor
    from theano.tensor.sharedvar import SharedVariable
    assert SharedVariable is arignote.compile.SharedVariable
    assert theano.generic is arignote.graph.types.generic
    import theano.compile.monitormode
    assert theano.compile.MonitorMode is arignote.compile.MonitorMode
    assert theano.compile.monitormode.detect_nan is arignote.compile.monitormode.detect_nan


def test_theano_tensor_opt_and_private_helpers(theano):
    from theano.tensor import opt
    import theano.tensor.basic
    assert opt.MakeVector is arignote.tensor.MakeVector and opt.Assert is arignote.tensor.Assert
    assert opt.Shape_i is arignote.tensor.Shape_i and opt.assert_ is arignote.tensor.assert_op
    allclose = theano.tensor.basic._allclose
    assert allclose(-0.311023883434, -0.311022856884)
    assert allclose(np.float32(0), np.float32(5e-6))  # float32's atol, 1e-5
    assert not allclose(0.0, 5e-6) and allclose(0.0, 5e-6, atol=1e-5)  # float64's, 1e-8


def test_absent_names_raise_clear_errors(theano):
    with pytest.raises(AttributeError, match="theano.tensor.no_such_thing.*theano-differences"):
        _ = theano.tensor.no_such_thing
    with pytest.raises(ImportError):
        importlib.import_module("theano.no_such_module")
    import theano.sparse
    assert theano.sparse.enable_sparse and theano.sparse.csr_matrix is arignote.sparse.csr_matrix
    assert theano.sparse.Usmm is arignote.sparse.Usmm
    with pytest.raises(AttributeError, match="theano.sparse.GetItemListGrad.*theano-differences"):
        _ = theano.sparse.GetItemListGrad


def test_a_missing_target_module_is_skipped(theano, monkeypatch):
    """Entries for modules other parts of the project add later: absent, never a crash."""
    monkeypatch.setitem(modules.MODULES, "theano.compile.later", "arignote.compile.not_yet_there")
    monkeypatch.setitem(modules.VIEWS, "theano.later_pkg", ("arignote.not_yet_there", None))
    alias._resolved.clear()
    with pytest.raises(ImportError):
        importlib.import_module("theano.compile.later")
    view = importlib.import_module("theano.later_pkg")  # a package of Theano's layout only
    with pytest.raises(AttributeError):
        _ = view.anything
    alias._resolved.clear()


def test_softmax_of_a_vector_is_theano_1_0s_under_the_alias_only(theano):
    import theano.tensor as T
    v = T.dvector("v")
    with pytest.warns(UserWarning, match="DEPRECATION: If x is a vector"):
        legacy = T.nnet.softmax(v)
    assert legacy.ndim == 2 and legacy.broadcastable == (True, False)
    value = np.array([1.0, 2.0, 3.0])
    expected = np.exp(value) / np.exp(value).sum()
    np.testing.assert_allclose(legacy.eval({v: value}), expected[None, :], rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = arignote.tensor.nnet.softmax(v)
    assert ours.ndim == 1
    np.testing.assert_allclose(ours.eval({v: value}), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="1-d or 2-d"):
        T.nnet.softmax(T.tensor3())


def test_theano_nnet_softmax_family_names(theano):
    """Every name of Theano 1.0's tensor.nnet softmax / crossentropy family resolves, to
    arignote's object except the 1.0 entry points that pad vectors."""
    import theano.tensor.nnet as tn
    from theano.tensor.nnet.nnet import CrossentropySoftmaxArgmax1HotWithBias  # Theano's module path
    ours = arignote.tensor.nnet
    for name in ["SoftmaxWithBias", "softmax_with_bias", "SoftmaxGrad", "softmax_grad", "softmax_graph",
                 "CrossentropySoftmaxArgmax1HotWithBias", "crossentropy_softmax_argmax_1hot_with_bias",
                 "CrossentropySoftmax1HotWithBiasDx", "crossentropy_softmax_1hot_with_bias_dx",
                 "CrossentropyCategorical1Hot", "CrossentropyCategorical1HotGrad",
                 "crossentropy_categorical_1hot_grad", "crossentropy_softmax_max_and_argmax_1hot",
                 "crossentropy_softmax_max_and_argmax_1hot_with_bias", "Prepend_scalar_constant_to_each_row",
                 "Prepend_scalar_to_each_row", "prepend_scalar_to_each_row", "prepend_0_to_each_row",
                 "prepend_1_to_each_row", "confusion_matrix", "Softmax", "LogSoftmax"]:
        assert getattr(tn, name) is getattr(ours, name), name
    assert CrossentropySoftmaxArgmax1HotWithBias is ours.CrossentropySoftmaxArgmax1HotWithBias
    assert isinstance(tn.softmax_op, ours.Softmax) and isinstance(tn.logsoftmax_op, ours.LogSoftmax)
    # Theano's idiom node.op == softmax_op: the alias's op equals the op of its nodes (axis 1).
    m = theano.tensor.dmatrix("m")
    for op, other in ((tn.softmax_op, tn.logsoftmax_op), (tn.logsoftmax_op, tn.softmax_op)):
        node_op = op(m).owner.op
        assert node_op == op and op == node_op and hash(op) == hash(node_op) and op in [node_op]
        assert op != other and op != type(node_op)(0) and str(op) == str(node_op)
        assert pickle.loads(pickle.dumps(op)) == op


@pytest.mark.parametrize("name, reference", [
    ("softmax_op", lambda v: np.exp(v) / np.exp(v).sum()),
    ("logsoftmax_op", lambda v: v - np.log(np.exp(v).sum())),
    ("logsoftmax", lambda v: v - np.log(np.exp(v).sum()))])
def test_theano_1_0_softmax_ops_pad_a_vector_under_the_alias(theano, name, reference):
    import theano.tensor as T
    fn = getattr(T.nnet, name)
    v, m = T.dvector("v"), T.dmatrix("m")
    with pytest.warns(UserWarning, match="DEPRECATION: If x is a vector"):
        row = fn(v)
    assert row.broadcastable == (True, False)
    value = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(row.eval({v: value}), reference(value)[None, :], rtol=1e-12)
    out = fn(m)  # a matrix: its rows, and the node holds arignote's op of axis 1
    assert type(out.owner.op) in (arignote.tensor.nnet.Softmax, arignote.tensor.nnet.LogSoftmax)
    assert out.owner.op.axis == 1
    assert getattr(arignote.tensor.nnet, name)(v).ndim == 1  # arignote's own keeps the vector
    with pytest.raises(ValueError, match="1-d or 2-d"):
        fn(T.tensor3("t"))
    # Theano's crossentropy of softmax_op(vector): one row, one label.
    if name == "softmax_op":
        y = T.lvector("y")
        with pytest.warns(UserWarning):
            xent = T.nnet.crossentropy_categorical_1hot(fn(v), y)
        np.testing.assert_allclose(xent.eval({v: value, y: np.array([2])}), -np.log(reference(value)[[2]]))


def test_install_is_per_process_and_uninstall_forgets(theano):
    assert alias.installed()
    alias.install()  # idempotent
    assert sum(isinstance(f, alias._Finder) for f in sys.meta_path) == 1
    code = "import arignote\ntry:\n    import theano\nexcept ImportError:\n    print('no theano')\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""}, timeout=60)
    assert done.stdout.strip() == "no theano", done.stderr


def test_install_refuses_when_another_theano_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "theano", type(sys)("theano"))
    with pytest.raises(RuntimeError, match="already imported"):
        alias.install(environ={})
    assert not alias.installed()


def test_gof_as_string_writes_nested_calls_and_marks_shared_nodes(theano):
    from theano.gof.graph import as_string
    import theano.tensor as T
    x, y = T.dvectors("x", "y")
    s = x * y
    mul, add = "Elemwise{mul,no_inplace}", "Elemwise{add,no_inplace}"
    assert as_string([x, y], [T.exp(s)]) == [f"Elemwise{{exp,no_inplace}}({mul}(x, y))"]
    assert as_string([x, y], [s + s]) == [f"{add}(*1 -> {mul}(x, y), *1)"]
    assert as_string([s], [s + s]) == [f"{add}({s}, {s})"]  # an input is a leaf
    leaf = as_string([x, y], [T.neg(x)], leaf_formatter=lambda v: f"<{v.name}>",
                     node_formatter=lambda node, args: f"{node.op}[{'; '.join(args)}]")
    assert leaf == ["Elemwise{neg,no_inplace}[<x>]"]


def test_theano_typed_list_is_arignotes(theano):
    import theano.typed_list
    from theano.typed_list.basic import Append
    from theano.typed_list.type import TypedListType
    import arignote.typed_list as ours
    assert TypedListType is ours.TypedListType and Append is ours.Append
    assert theano.typed_list.length is ours.length
