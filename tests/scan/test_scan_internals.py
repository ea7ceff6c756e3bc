"""A Scan's internals under Theano's names, the loop rewrites (unused inputs, pushout, merging)
and the graph tools of scan_module.utils."""
import numpy as np
import pytest

import arignote
from arignote import function, shared
from arignote import tensor as T
from arignote.compile.builders import OpFromGraph
from arignote.compile.mode import get_default_mode
from arignote.scan_module import Scan
from arignote.scan_module.rewrites import ScanMerge
from arignote.scan_module.utils import equal_computations, map_variables
from arignote.tensor.elemwise import Elemwise


def scans(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def test_theano_names_of_the_parts():
    seq, nonseq, m0, s0 = T.dvector("seq"), T.dscalar("c"), T.dvector("m0"), T.dscalar("s0")
    outs, _ = arignote.scan(lambda x, s_1, m_3, m_1, c: (s_1 + x, m_3 + m_1 + c, x * c), sequences=seq,
                            outputs_info=[s0, dict(initial=m0, taps=[-3, -1]), None], non_sequences=nonseq)
    node = outs[1].owner.inputs[0].owner
    op = node.op
    # the mit_sot state comes first, as in Theano, whatever the user's order
    assert op.state_taps == ((-3, -1), (-1,))
    info = op.info
    assert (info["n_seqs"], info["n_mit_sot"], info["n_sit_sot"], info["n_nit_sot"], info["n_shared_outs"]) == \
        (1, 1, 1, 1, 0)
    assert info["tap_array"] == [[-3, -1], [-1]] and info["n_mit_mot"] == 0
    assert op.inputs == list(op.inner_inputs) and op.outputs == list(op.inner_outputs)
    assert op.outer_seqs(node) == [seq] and op.outer_non_seqs(node) == [nonseq]
    assert len(op.inner_seqs(op.inputs)) == 1 and len(op.inner_mitsot(op.inputs)) == 2
    assert len(op.inner_sitsot(op.inputs)) == 1 and len(op.inner_non_seqs(op.inputs)) == 1
    assert op.outer_nitsot_outs(node) == [node.outputs[2]]
    maps = op.var_mappings
    assert maps["outer_inp_from_outer_out"] == {0: 2, 1: 3, 2: -1}  # the plain output has no outer input
    assert maps["inner_inp_from_outer_inp"] == {0: [], 1: [0], 2: [1, 2], 3: [3], 4: [4]}
    assert maps["outer_out_from_inner_out"] == {0: 0, 1: 1, 2: 2}
    assert maps["inner_out_from_outer_inp"][4] == [] and maps["outer_out_from_outer_inp"][1] == -1
    f = function([seq, nonseq, m0, s0], outs)
    assert op.fn is op.fn  # compiled once
    got = f(np.arange(4.0), 2.0, np.zeros(3), 1.0)
    np.testing.assert_allclose(got[0], 1 + np.cumsum(np.arange(4.0)))
    np.testing.assert_allclose(got[2], np.arange(4.0) * 2)


def test_equal_loops_are_equal_ops_and_merge():
    x, y = T.dvector("x"), T.dvector("y")
    a, _ = arignote.scan(lambda v: v + 1, sequences=x)
    b, _ = arignote.scan(lambda v: v + 1, sequences=y)
    c, _ = arignote.scan(lambda v: v + 2, sequences=y)
    assert a.owner.op == b.owner.op and hash(a.owner.op) == hash(b.owner.op)
    assert a.owner.op != c.owner.op
    d, _ = arignote.scan(lambda v: v + 1, sequences=x, name="other")
    f = function([x], [a, d])
    assert len(scans(f)) == 1
    np.testing.assert_allclose(f(np.arange(3.0))[1], [1, 2, 3])


def test_equal_computations():
    m = T.dmatrix()
    assert equal_computations(list(T.max_and_argmax(m)), list(T.max_and_argmax(m)))
    x, y = T.dvector(), T.dvector()
    assert not equal_computations([x + 1], [y + 1])
    assert equal_computations([x + 1], [y + 1], [x], [y])
    assert not equal_computations([x + 1], [y + 2], [x], [y])
    assert not equal_computations([x + x], [x + y], [x], [x])  # x stands for x, not y
    assert equal_computations([T.constant(np.arange(3.0)) * x], [T.constant(np.arange(3.0)) * x])


class TestMapVariables:
    @staticmethod
    def replacer(var):
        return getattr(var.tag, "replacement", var)

    def test_leaf_and_inside_a_loop(self):
        x, y, z = T.dvector("x"), T.dscalar("y"), T.dscalar("z")
        y.tag.replacement = z
        s, _ = arignote.scan(lambda v: v * y, sequences=x)
        s2, = map_variables(self.replacer, [s])
        f = function([x, y, z], [s, s2])
        got = f(np.array([1.0, 2.0]), 1.0, 3.0)
        np.testing.assert_allclose(got[1], [3, 6])

    def test_outer_variables_enter_the_loop(self):
        x, outer = T.dvector("x"), T.dscalar("outer")
        w = shared(np.float64(2.0), name="w")
        z = outer * w

        def step(v, acc):
            r = acc + v
            r.tag.replacement = z * (acc - v)
            return r

        s, _ = arignote.scan(step, sequences=x, outputs_info=[np.float64(0)])
        s2, = map_variables(self.replacer, [s])
        got = function([x, outer], [s, s2])(np.array([1.0, 2.0, 3.0]), 0.5)
        np.testing.assert_allclose(got[0], [1, 3, 6])
        np.testing.assert_allclose(got[1], [-1, -3, -6])

    def test_a_shared_variable_with_an_update_is_refused(self):
        x = T.dvector("x")
        counter = shared(np.float64(0), name="counter")
        counter.default_update = counter + 1

        def step(v, acc):
            r = acc + v
            r.tag.replacement = counter * (acc - v)
            return r

        s, _ = arignote.scan(step, sequences=x, outputs_info=[np.float64(0)])
        with pytest.raises(NotImplementedError, match="counter"):
            map_variables(self.replacer, [s])

    def test_op_from_graph(self):
        outer = T.dscalar("outer")
        a, b = T.dscalar(), T.dscalar()
        r = a + b
        r.tag.replacement = outer * (a - b)
        c, d = T.dscalar(), T.dscalar()
        u = OpFromGraph([a, b], [r])(c, d)
        v, = map_variables(self.replacer, [u])
        f = function([c, d, outer], [u, v])
        assert f(5.0, 2.0, 2.0) == [7.0, 6.0]


def test_unused_duplicate_and_constant_inputs_are_dropped():
    W, v = T.dmatrix("W"), T.lvector("v")
    y, _ = arignote.scan(lambda i, _a, _b, W_, k: W_[i] * k, sequences=[v, v, W],
                         non_sequences=[W, T.constant(np.float64(3.0))])
    y2, _ = arignote.scan(lambda i, W1, W2: W1[i] + W2[i], sequences=v, non_sequences=[W, W])
    f = function([W, v], [y, y2])
    for node in scans(f):
        assert len(node.op.outer_seqs(node)) == 1 and len(node.op.outer_non_seqs(node)) == 1
    Wv = np.arange(9.0).reshape(3, 3)
    got = f(Wv, np.array([2, 0, 1]))
    np.testing.assert_allclose(got[0], Wv[[2, 0, 1]] * 3)
    np.testing.assert_allclose(got[1], Wv[[2, 0, 1]] * 2)


def test_loops_over_the_same_steps_merge():
    x, y = T.dvector("x"), T.dvector("y")
    a, _ = arignote.scan(lambda s: s * 2, sequences=[x], n_steps=3)
    b, _ = arignote.scan(lambda s, acc: acc + s, sequences=[y], outputs_info=np.float64(0), n_steps=3)
    f = function([x, y], [a, b])
    assert len(scans(f)) == 1
    got = f(np.arange(4.0), np.arange(4.0) + 1)
    np.testing.assert_allclose(got[0], [0, 2, 4])
    np.testing.assert_allclose(got[1], [1, 3, 6])
    # different numbers of steps, or one loop reading the other: two loops
    c, _ = arignote.scan(lambda s: s * 2, sequences=[y], n_steps=2)
    d, _ = arignote.scan(lambda s: s + 1, sequences=[a], n_steps=3)
    assert len(scans(function([x, y], [a, c]))) == 2
    f = function([x], [a, d])
    assert len(scans(f)) == 2
    np.testing.assert_allclose(f(np.arange(3.0))[1], [1, 3, 5])
    # without the rewrite the loops stay apart
    assert len(scans(function([x, y], [a, b], mode=get_default_mode().excluding("scan_merge")))) == 2


def test_do_while_loops_merge_only_with_the_same_condition():
    x, n = T.dvector("x"), T.lscalar("n")
    o1, _ = arignote.scan(lambda v: (v + 1, arignote.scan_module.until(v > 3)), sequences=x, n_steps=n)
    o2, _ = arignote.scan(lambda v: (v * 2, arignote.scan_module.until(v > 3)), sequences=x, n_steps=n)
    o3, _ = arignote.scan(lambda v: (v * 2, arignote.scan_module.until(v > 2)), sequences=x, n_steps=n)
    f = function([x, n], [o1, o2, o3])
    assert len(scans(f)) == 2
    nodes = [o.owner for o in (o1, o2, o3)]
    merge = ScanMerge()
    assert merge.belongs_to_set(nodes[1], [nodes[0]]) and not merge.belongs_to_set(nodes[2], [nodes[0]])
    vx = np.zeros(10)
    vx[4], vx[6] = 2.5, 4
    got = f(vx, 10)
    assert len(got[0]) == 7 and len(got[1]) == 7 and len(got[2]) == 5
    np.testing.assert_allclose(got[1], vx[:7] * 2)


def test_outputs_that_need_no_loop_leave_it():
    h, W = T.dvector("h"), T.dmatrix("W")
    o, _ = arignote.scan(lambda h_, W_: T.dot(h_, W_ + W_), non_sequences=[h, W], n_steps=4)
    f = function([h, W], o)
    assert not scans(f)
    hv, Wv = np.array([1.0, 2.0]), np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(f(hv, Wv), np.tile(hv @ (2 * Wv), (4, 1)))
    x, n = T.dvector("x"), T.lscalar("n")
    rows, _ = arignote.scan(lambda v: v, sequences=x, n_steps=n)
    f = function([x, n], rows)
    assert not scans(f)
    np.testing.assert_allclose(f(np.arange(5.0), 3), [0, 1, 2])
    with pytest.raises(ValueError, match="sequence 0 .* has 5 entries, but 7 steps"):
        f(np.arange(5.0), 7)


def test_an_output_leaving_a_one_step_loop_keeps_its_type():
    """With n_steps=1 the value repeated outside is a row (its first dimension known to be 1),
    the loop's output a matrix: the replacement keeps the matrix type (it raised TypeError)."""
    w, h0 = T.dvector("w"), T.dvector("h0")
    out, _ = arignote.scan(lambda w_: w_, non_sequences=w, n_steps=1)
    f = function([w], out)
    assert not scans(f)
    np.testing.assert_allclose(f(np.array([1.0, 2.0])), [[1.0, 2.0]])
    (hs, ws), _ = arignote.scan(lambda h, w_: [h + w_, w_], outputs_info=[h0, None], non_sequences=w, n_steps=1)
    got = function([w, h0], [hs, ws])(np.array([1.0, 2.0]), np.array([0.5, 0.5]))
    np.testing.assert_allclose(got[0], [[1.5, 2.5]])
    np.testing.assert_allclose(got[1], [[1.0, 2.0]])


def test_opt_in_vectorizes_elementwise_work_on_sequences():
    x, c = T.dvector("x"), T.dscalar("c")
    out, _ = arignote.scan(lambda v, acc, c_: acc + T.exp(v) * c_, sequences=x, outputs_info=np.float64(0),
                           non_sequences=c)
    plain = function([x, c], out)
    fast = function([x, c], out, mode=get_default_mode().including("scan_pushout_seqs_ops"))
    inner = [n for n in scans(fast)[0].op.fn.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    assert len(inner) == 1  # only the accumulation is left in the step
    np.testing.assert_allclose(fast(np.arange(4.0), 0.5), plain(np.arange(4.0), 0.5))
    np.testing.assert_allclose(fast(np.arange(4.0), 0.5), np.cumsum(np.exp(np.arange(4.0)) * 0.5))
    x2 = T.dvector("x2")
    only, _ = arignote.scan(lambda v: v + 2, sequences=x2)
    f = function([x2], only, mode=get_default_mode().including("scan_pushout_seqs_ops"))
    assert not scans(f)
    np.testing.assert_allclose(f(np.arange(3.0)), [2, 3, 4])


def test_expanded_inputs_list_the_shared_variables():
    x = T.dscalar("x")
    w = shared(np.float64(2.0), name="w")
    f = function([x], x * w, updates={w: w + 1})
    ins = f.maker.expanded_inputs
    assert [i.variable for i in ins] == [x, w]
    assert ins[1].implicit and ins[1].update is not None
    ins[1].value.data = np.float64(5.0)
    assert w.get_value() == 5.0 and f(1.0) == 5.0


@pytest.mark.parametrize("per_step", ["vector", "matrix", "transposed"])
def test_products_with_a_fixed_matrix_leave_the_loop(rng, per_step):
    W, h = T.dmatrix("W"), T.dtensor3("h") if per_step == "matrix" else T.dmatrix("h")

    def step(hi, acc, W_):
        new = acc + hi
        return new, (T.dot(W_, new) if per_step == "transposed" else T.dot(new, W_))

    init = T.zeros_like(h[0])
    o, _ = arignote.scan(step, outputs_info=[init, None], sequences=[h], non_sequences=[W])
    fast = function([W, h], o)
    plain = function([W, h], o, mode=get_default_mode().excluding("scan_pushout_dot"))
    inner = scans(fast)[0].op.fn.maker.fgraph.apply_nodes
    assert not any("Dot" in type(n.op).__name__ or "Gemv" in type(n.op).__name__ for n in inner)
    assert any("Dot" in type(n.op).__name__ or "Gemv" in type(n.op).__name__
               for n in scans(plain)[0].op.fn.maker.fgraph.apply_nodes)
    hv = rng.normal(size=(5, 2, 3) if per_step == "matrix" else (5, 3))
    Wv = rng.normal(size=(3, 3))
    got, want = fast(Wv, hv), plain(Wv, hv)
    states = np.cumsum(hv, axis=0)
    expected = states @ Wv.T if per_step == "transposed" else states @ Wv
    np.testing.assert_allclose(got[1], expected)
    np.testing.assert_allclose(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0])


def kept_rows(f):
    return [n.op.kept_rows for n in scans(f)]


NO_SAVE_MEM = get_default_mode().excluding("scan_save_mem")


def test_a_loop_keeps_only_the_last_rows_read(rng):
    x = T.dvector("x")
    total, _ = arignote.reduce(lambda v, acc: acc + v, x, T.constant(0.0))
    f = function([x], total)
    assert kept_rows(f) == [(2,)]  # the row read, and the one written next
    data = rng.normal(size=50)
    np.testing.assert_allclose(f(data), data.sum())
    assert kept_rows(function([x], total, mode=NO_SAVE_MEM)) == [(None,)]
    # several taps, several rows read, a plain output read at its end
    x0 = T.dvector("x0")
    (fib, doubled), _ = arignote.scan(lambda v, a3, a1: (a3 + a1 + v, v * 2), sequences=x,
                                      outputs_info=[dict(initial=x0, taps=[-3, -1]), None])
    outs = [fib[-2:], fib[-1], doubled[-1]]
    f, plain = function([x, x0], outs), function([x, x0], outs, mode=NO_SAVE_MEM)
    assert kept_rows(f) == [(5, 1)]  # 3 initial rows + the 2 read; 1 row of the plain output
    for n in (1, 2, 7, 40):
        data = rng.normal(size=n)
        for got, want in zip(f(data, np.arange(3.0)), plain(data, np.arange(3.0))):
            np.testing.assert_allclose(got, want)


def test_save_mem_keeps_what_other_uses_need(rng):
    x = T.dvector("x")
    h, _ = arignote.scan(lambda v, acc: acc * 0.5 + v, sequences=x, outputs_info=T.constant(0.0))
    for outs in ([h], [h[-1], h[1]], [h[::-1][0]]):
        assert kept_rows(function([x], outs)) == [(None,)]
    # a shape read before the rewrite is the shape of every row
    f = function([x], [h[-1], h.shape[0]])
    assert f(np.arange(5.0))[1] == 5
    # a do-while loop: the rows kept are those of the steps that ran
    w, _ = arignote.scan(lambda v, acc: (acc + v, arignote.scan_module.until(acc + v > 10)), sequences=x,
                         outputs_info=T.constant(0.0))
    f, plain = function([x], [w[-1], w[-3:]]), function([x], [w[-1], w[-3:]], mode=NO_SAVE_MEM)
    assert kept_rows(f) == [(4,)]
    for data in (np.ones(30), np.ones(2), 4 * np.ones(30)):
        for got, want in zip(f(data), plain(data)):
            np.testing.assert_allclose(got, want)
    # reading further back than the loop went fails as it does without the rewrite
    far = function([x], h[-5])
    assert kept_rows(far) == [(6,)]
    np.testing.assert_allclose(far(np.arange(9.0)), function([x], h[-5], mode=NO_SAVE_MEM)(np.arange(9.0)))
    with pytest.raises(IndexError):
        far(np.arange(3.0))


def test_save_mem_leaves_no_stale_lengths():
    from arignote.graph.fg import FunctionGraph
    from arignote.graph.rewriting.basic import in_to_out
    from arignote.scan_module.rewrites import scan_save_mem
    from arignote.tensor.rewrites.shape_feature import shape_feature
    x = T.dvector("x")
    h, _ = arignote.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    fg = FunctionGraph([x], [h[-1]], clone=False)
    feature = shape_feature(fg)
    feature.shape(h)  # known before the rewrite: one row per step
    assert in_to_out(scan_save_mem).apply(fg)
    assert h.owner.inputs[0].owner.op.kept_rows == (2,)
    length = function([x], T.as_tensor_variable(feature.shape(h)[0]))
    assert length(np.arange(9.0)) == 1  # h now holds the last row only


def test_rows_kept_survive_the_other_rewrites():
    from arignote.scan_module.rewrites import _like
    x, unused = T.dvector("x"), T.dscalar("unused")
    h, _ = arignote.scan(lambda v, acc, _c: acc + v, sequences=x, outputs_info=T.constant(0.0),
                         non_sequences=unused)
    node = h.owner.inputs[0].owner
    kept = _like(node.op, node.op.inner_inputs, node.op.inner_outputs, kept_rows=(3,)).make_node(*node.inputs)
    buffer = kept.outputs[0]
    f = function([x, unused], [buffer, buffer.shape[0]], on_unused_input="ignore")
    (loop,) = scans(f)
    assert loop.op.kept_rows == (3,) and not loop.op.outer_non_seqs(loop)  # rebuilt without `unused`
    for n in (1, 2, 6):
        rows, length = f(np.arange(float(n)), 0.0)
        full = np.concatenate([[0.0], np.cumsum(np.arange(float(n)))])
        np.testing.assert_allclose(rows, full[-3:])  # oldest first, after wrapping round
        assert length == min(3, n + 1)


def test_a_loop_keeping_rows_refuses_a_gradient():
    x = T.dvector("x")
    total, _ = arignote.reduce(lambda v, acc: acc + v, x, T.constant(0.0))
    f = function([x], total)
    compiled = f.maker.fgraph.outputs[0]
    with pytest.raises(NotImplementedError, match="keeps only the last rows.*before compiling"):
        arignote.grad(compiled, f.maker.fgraph.inputs[0])
