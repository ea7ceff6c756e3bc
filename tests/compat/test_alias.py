"""The module map of the ``theano`` alias: the same objects as arignote's, Theano's layout."""
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import arignote
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
    assert theano.gof.Op is arignote.Op and theano.gof.graph.inputs is arignote.graph.graph_inputs
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


def test_absent_names_raise_clear_errors(theano):
    with pytest.raises(AttributeError, match="theano.tensor.no_such_thing.*theano-differences"):
        _ = theano.tensor.no_such_thing
    with pytest.raises(ImportError):
        importlib.import_module("theano.no_such_module")
    import theano.sparse
    with pytest.raises(NotImplementedError, match="no sparse matrices"):
        _ = theano.sparse.csr_matrix


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
