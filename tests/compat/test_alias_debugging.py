"""The debugging helpers of Theano's top level and ``theano.gof`` under the alias."""
import numpy as np
import pytest


def test_theano_logger_receives_the_libraries_warnings(theano):
    import io
    import logging
    pytest.importorskip("pydot")
    assert theano.theano_logger is logging.getLogger("arignote")
    assert theano.logging_default_handler in theano.theano_logger.handlers
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    theano.theano_logger.removeHandler(theano.logging_default_handler)
    theano.theano_logger.addHandler(handler)
    try:
        x = theano.tensor.dvector()
        theano.printing.pydot_graph(theano.function([x], x * 2), cond_highlight=True)
    finally:
        theano.theano_logger.addHandler(theano.logging_default_handler)
        theano.theano_logger.removeHandler(handler)
    assert stream.getvalue() == "pydotprint: cond_highlight is set but there is no IfElse node in the graph\n"


def test_gof_get_test_value_reads_tags_constants_and_shared_values(theano):
    T = theano.tensor
    x = T.dvector("x")
    x.tag.test_value = np.ones(2)
    np.testing.assert_array_equal(theano.gof.op.get_test_value(x), np.ones(2))
    np.testing.assert_array_equal(theano.gof.op.get_test_value(np.arange(3)), np.arange(3))
    assert theano.gof.op.get_test_value(theano.shared(np.float64(4.0), name="s")) == 4.0
    with pytest.raises(AttributeError, match="has no test value"):
        theano.gof.op.get_test_value(T.dvector("y"))


def test_theano_tests_record_is_record_mode(theano):
    import io
    from theano.printing import var_descriptor
    from theano.tests import disturb_mem
    from theano.tests.record import MismatchError, Record, RecordMode
    from arignote.compile import record
    assert RecordMode is record.RecordMode and MismatchError is record.MismatchError
    assert disturb_mem.disturb_mem is record.disturb_mem and callable(var_descriptor)
    out = io.StringIO()
    x = theano.tensor.iscalar()
    theano.function([x], x, mode=RecordMode(Record(out)), name="f")(3)
    f = theano.function([x], x, mode=RecordMode(Record(io.StringIO(out.getvalue()), replay=True)), name="f")
    with pytest.raises(MismatchError):
        f(4)
