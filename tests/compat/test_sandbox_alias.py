"""Under the alias: ``theano.sandbox.multinomial``, ``theano.sandbox.linalg(.ops)``,
``theano.misc.pkl_utils.CompatUnpickler`` and ``theano.d3viz`` are arignote's."""
import json
import re


def test_sandbox_modules_are_arignotes(theano):
    import arignote.sandbox.linalg
    import arignote.tensor.random.mrg_ops
    from theano.misc.pkl_utils import CompatUnpickler
    from theano.sandbox import linalg, multinomial
    from theano.sandbox.linalg.ops import inv_as_solve, psd, spectral_radius_bound

    assert multinomial.ChoiceFromUniform is arignote.tensor.random.mrg_ops.ChoiceFromUniform
    assert linalg.psd is psd is arignote.sandbox.linalg.psd
    assert spectral_radius_bound is arignote.sandbox.linalg.spectral_radius_bound
    node = theano.tensor.dot(theano.tensor.nlinalg.matrix_inverse(theano.tensor.dmatrix()),
                             theano.tensor.dmatrix()).owner
    assert type(inv_as_solve.transform(node)[0].owner.op).__name__ == "Solve"
    assert CompatUnpickler.__module__ == "arignote.serialization"


def test_d3viz_writes_a_page_under_theanos_names(theano, tmp_path):
    import theano.d3viz as d3v
    from theano.d3viz.formatting import PyDotFormatter, pydot_imported

    x = theano.tensor.dvector("x")
    f = theano.function([x], theano.tensor.exp(x))
    d3v.d3viz(f, str(tmp_path / "f.html"))
    data = re.search(r'id="graph-data">(.*?)</script>', (tmp_path / "f.html").read_text(), re.S).group(1)
    assert [n["label"] for n in json.loads(data)["graphs"]["main"]["nodes"] if n["kind"] == "input"] == ["x"]
    d3v.d3write(f, str(tmp_path / "f.dot"))
    assert (tmp_path / "f.dot").read_text().startswith("digraph")
    if pydot_imported:
        assert len(PyDotFormatter()(f).get_nodes()) == 3


def test_sparse_sandbox_sp_and_compat_next(theano):
    import arignote.sparse.convolution
    from theano.compat import next as compat_next
    from theano.sparse.opt import local_csm_properties_csm, sd_csc
    from theano.sparse.sandbox import sp

    assert sp.convolve is arignote.sparse.convolution.convolve and sp.max_pool is not None
    assert sd_csc is arignote.sparse.sd_csc and local_csm_properties_csm is not None
    assert compat_next(iter([3])) == 3
