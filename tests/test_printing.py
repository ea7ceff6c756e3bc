"""debugprint (Theano's indented tree) and pp (infix expressions)."""
import io
import re

import numpy as np
import pytest

import arignote
from arignote import debugprint, function, pp, shared
from arignote import tensor as T
from arignote.graph.basic import Apply, Op
from arignote.compile.profiling import ProfileStats
from arignote.printing import pp_apply


def test_debugprint_tree_format():
    x = T.vector("x")
    y = T.exp(x) * 2
    assert debugprint(y, file="str") == (
        "Elemwise{mul,no_inplace} [id A] ''   \n"
        " |Elemwise{exp,no_inplace} [id B] ''   \n"
        " | |x [id C]\n"
        " |InplaceDimShuffle{x} [id D] ''   \n"
        "   |TensorConstant{2} [id E]\n")


def test_debugprint_repeated_subtree_is_printed_once_then_referenced():
    x = T.vector("x")
    e = T.exp(x)
    text = debugprint(e + e * x, file="str")
    assert text.count("Elemwise{exp,no_inplace} [id B]") == 2
    assert text.count("x [id C]") == 2  # once under exp, once in e * x; not again under exp
    assert text.splitlines()[-2].strip(" |") == "Elemwise{exp,no_inplace} [id B] ''"


def test_debugprint_list_shares_ids_and_shows_names_and_types():
    x = T.vector("x")
    e = T.exp(x)
    e.name = "e"
    text = debugprint([e, e + 1], file="str", print_type=True)
    lines = text.splitlines()
    assert lines[0] == "Elemwise{exp,no_inplace} [id A] <TensorType(float64, vector)> 'e'   "
    assert lines[1] == " |x [id B] <TensorType(float64, vector)>"
    assert "Elemwise{exp,no_inplace} [id A]" in lines[3]


@pytest.mark.parametrize("ids, pattern", [("int", "[id 0]"), ("", "Elemwise{exp,no_inplace}  ''   ")])
def test_debugprint_id_styles(ids, pattern):
    assert pattern in debugprint(T.exp(T.vector("x")), file="str", ids=ids)


def test_debugprint_is_theanos_text_and_stops_where_asked():
    A, B, D, E = (T.matrix(n) for n in "ABDE")
    C = A + B
    C.name = "C"
    G = C + (D + E)
    assert debugprint(G, file="str", ids="int") == (
        "Elemwise{add,no_inplace} [id 0] ''   \n"
        " |Elemwise{add,no_inplace} [id 1] 'C'   \n"
        " | |A [id 2]\n"
        " | |B [id 3]\n"
        " |Elemwise{add,no_inplace} [id 4] ''   \n"
        "   |D [id 5]\n"
        "   |E [id 6]\n")
    assert debugprint(G, file="str", ids="") == (
        "Elemwise{add,no_inplace}  ''   \n"
        " |Elemwise{add,no_inplace}  'C'   \n"
        " | |A \n"
        " | |B \n"
        " |Elemwise{add,no_inplace}  ''   \n"
        "   |D \n"
        "   |E \n")
    named = debugprint(G, file="str", stop_on_name=True).splitlines()
    assert named[1] == " |Elemwise{add,no_inplace} [id B] 'C'   " and named[2].startswith(" |Elemwise")
    assert len(debugprint(G, 2, file="str").splitlines()) == 3  # Theano's positional depth


def test_debugprint_char_ids_go_past_z():
    x = T.vector("x")
    y = x
    for _ in range(30):
        y = T.exp(y)
    text = debugprint(y, file="str")
    assert "[id Z]" in text and "[id BA]" in text


def test_debugprint_compiled_function_shows_execution_order_and_updates():
    x = T.vector("x")
    s = shared(np.float64(1.0), "s")
    f = function([x], T.exp(x) * s, updates={s: s + 1}, mode="FAST_COMPILE")
    text = debugprint(f, file="str")
    order = {str(n.op): i for i, n in enumerate(f.maker.fgraph.toposort())}
    first = text.splitlines()[0]
    assert first.startswith("Elemwise{mul,no_inplace} [id A] ''")
    assert first.endswith(str(order["Elemwise{mul,no_inplace}"]))
    assert "Elemwise{add,no_inplace}" in text and " |s [id" in text


def test_debugprint_writes_to_a_file_or_stdout(capsys):
    x = T.vector("x")
    buffer = io.StringIO()
    assert debugprint(x * 1, file=buffer) is buffer
    assert buffer.getvalue().startswith("Elemwise{mul")
    assert debugprint(x * 1) is None  # as Theano: an interactive prompt shows only the tree
    assert capsys.readouterr().out == buffer.getvalue()


def test_debugprint_multi_output_node_and_deep_graphs():
    class Split(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

    x = T.vector("x")
    first, second = Split()(x)
    text = debugprint([first, second], file="str")
    assert "Split.0 [id A] ''" in text and "Split.1 [id A] ''" in text
    y = x
    for _ in range(3000):
        y = -y
    assert debugprint(y, file="str").count("\n") == 3001


def _rnn(name="rnn"):
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    W = shared(np.eye(3), name="W")
    hs, _ = arignote.scan(lambda xt, h: T.tanh(T.dot(h, W) + xt), sequences=x,
                          outputs_info=[h0], name=name)
    return x, h0, hs


def test_debugprint_shows_a_scan_inner_graph_after_the_tree():
    x, h0, hs = _rnn()
    assert debugprint(hs, file="str") == (
        "Subtensor{1:} [id A] 'rnn[0]'   \n"
        " |Scan{rnn} [id B] ''   \n"
        "   |Shape_i{i=0} [id C] ''   \n"
        "   | |x [id D]\n"
        "   |x [id D]\n"
        "   |InplaceDimShuffle{x,0} [id E] ''   \n"
        "   | |h0 [id F]\n"
        "   |W [id G]\n"
        "\n"
        "Inner graphs of the scan ops:\n"
        "\n"
        "Scan{rnn} [id B] ''   \n"
        " >Elemwise{tanh,no_inplace} [id H] ''   \n"
        " > |Elemwise{add,no_inplace} [id I] ''   \n"
        " >   |dot [id J] ''   \n"
        " >   | |h0[t-1] [id K] -> [id E]\n"
        " >   | |W [id L] -> [id G]\n"
        " >   |x[t+0] [id M] -> [id D]\n")


def test_debugprint_of_a_compiled_scan_and_of_nested_loops():
    x, h0, hs = _rnn()
    f = function([x, h0], hs)
    text = debugprint(f, file="str")
    scan_node = next(n for n in f.maker.fgraph.toposort() if str(n.op) == "Scan{rnn}")
    position = f.maker.fgraph.toposort().index(scan_node)
    header = text.split("Inner graphs of the scan ops:\n\n")[1].splitlines()[0]
    assert header.startswith("Scan{rnn} [id") and header.endswith(f"  {position}")

    m = T.dmatrix("m")

    def row_sum(r):
        sums, _ = arignote.scan(lambda v, acc: acc + v, sequences=r,
                                outputs_info=[T.constant(np.float64(0.0))], name="inner")
        return sums[-1]

    out, _ = arignote.scan(row_sum, sequences=m, name="outer")
    lines = debugprint(out, file="str").splitlines()
    assert lines.count("Inner graphs of the scan ops:") == 1
    headers = [lines[i + 1] for i, line in enumerate(lines) if line == "" and i + 1 < len(lines)]
    assert [h.split(" ")[0] for h in headers[1:]] == ["Scan{outer}", "Scan{inner}"]
    inner_scan = next(line for line in lines if line.lstrip(" >|").startswith("Scan{inner}"))
    assert inner_scan.startswith(" >")  # the inner loop sits in the outer loop's body
    assert "Inner graphs" not in debugprint(T.exp(m), file="str")


def test_debugprint_refuses_other_objects():
    with pytest.raises(TypeError, match="debugprint"):
        debugprint("x")
    with pytest.raises(ValueError, match="ids"):
        debugprint(T.vector("x"), ids="hex")


def test_pp_infix():
    x, y = T.vector("x"), T.vector("y")
    assert pp(T.exp(x) * 2) == "(exp(x) * TensorConstant{2})"
    assert pp(-x + y / x) == "((-x) + (y / x))"
    assert pp(T.switch(x < y, x, y)) == "switch(lt(x, y), x, y)"
    assert pp(T.cast(x, "float32")) == "convert_to_float32(x)"


def test_pp_dimshuffle():
    m = T.matrix("m")
    assert pp(m.dimshuffle(1, 0)) == "m.T"
    assert pp(m.dimshuffle(0, "x", 1)) == "m.dimshuffle(0, 'x', 1)"


def test_pp_unknown_op_and_registration():
    class Twice(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

    x = T.vector("x")
    assert pp(Twice()(x)) == "Twice(x)"

    @pp_apply.register(Twice)
    def _(op, node, args):
        return f"2*{args[0]}"

    assert pp(Twice()(x) + 1) == "(2*x + TensorConstant{1})"


def test_exported_from_the_package():
    assert arignote.debugprint is debugprint and arignote.pp is pp
    assert {"debugprint", "pp"} <= set(arignote.__all__)


def test_print_op_prints_each_run_and_passes_values_and_gradients(capsys):
    from arignote.printing import Print
    x = T.dvector("x")
    y = Print("x is")(x) * 2
    f = function([x], y)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    assert capsys.readouterr().out == "x is __str__ = [1. 2.]\n"
    shown = Print("v", attrs=("shape", "sum"))(x)
    function([x], shown)(np.ones(3))
    assert capsys.readouterr().out == "v shape = (3,)\nv sum = 3.0\n"
    seen = []
    function([x], Print("m", global_fn=lambda op, v: seen.append((op.message, v.tolist())))(x))(np.ones(1))
    assert seen == [("m", [1.0])]
    g = function([x], arignote.grad((Print("p")(x) ** 2).sum(), x))
    np.testing.assert_array_equal(g(np.array([3.0])), [6.0])
    folded = function([], Print("c")(T.constant(1.0)) * 1).maker.fgraph.toposort()
    assert any(isinstance(n.op, Print) for n in folded)  # not folded into a constant


def test_pp_writes_second_as_theanos_fill():
    x = T.dscalar("x")
    gy = arignote.grad(x ** 2, x)
    with np.printoptions(legacy="1.13"):  # the print mode Theano's documentation shows
        text = pp(gy)
    assert text == ("((fill((x ** TensorConstant{2}), TensorConstant{1.0}) * TensorConstant{2}) * "
                      "(x ** (TensorConstant{2} - TensorConstant{1})))")


def test_pydot_imported_says_whether_pydotprint_can_draw(monkeypatch):
    # Theano's meaning, which its users and tests check before drawing: pydot *and* Graphviz's dot.
    import importlib.util
    import shutil
    from arignote import printing
    can_draw = importlib.util.find_spec("pydot") is not None and shutil.which("dot") is not None
    assert printing.pydot_imported is can_draw
    assert (printing.pydot_imported_msg == "") is can_draw
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert any("dot program" in what for what in printing._missing_for_drawing())
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    missing = printing._missing_for_drawing()
    assert missing == ([] if importlib.util.find_spec("pydot") else [missing[0]])


def test_pprint_is_theanos_notation():
    x = T.matrix("x")
    w, b = shared(np.zeros(3), name="w"), shared(0.0, name="b")
    prediction = 1 / (1 + T.exp(-T.dot(x, w) - b)) > 0.5
    assert arignote.printing.pprint is pp
    assert pp(prediction) == ("gt((TensorConstant{1} / (TensorConstant{1} + exp(((-(x \\dot w)) - b)))), "
                              "TensorConstant{0.5})")


def test_pp_writes_indexing_in_theanos_notation():
    x, k = T.dvector("x"), T.iscalar("k")
    m = T.dmatrix("m")
    with np.printoptions(legacy="1.13"):
        assert [pp(e) for e in (x[1], x[k], x[1:k], x[0:-1], x[::2], m[k, 1:], x[[1, 2]])] == [
            "x[Constant{1}]", "x[k]", "x[Constant{1}:k]", "x[:Constant{-1}]", "x[::Constant{2}]",
            "m[k, Constant{1}:]", "x[TensorConstant{[1 2]}]"]
        assert pp(T.set_subtensor(x[1:], 0)) == "set_subtensor(x[Constant{1}:], TensorConstant{0.0})"
        assert pp(T.inc_subtensor(x[T.ivector("i")], x[:1])) == "inc_subtensor(x[i], x[:Constant{1}])"
        assert pp(T.exp(x[k]) * 2) == "(exp(x[k]) * TensorConstant{2})"


def test_min_informative_str_stops_at_names_and_letters_what_it_met_before():
    a, b, d, e = (T.matrix(name) for name in "ABDE")
    c = a + b
    c.name = "C"
    assert arignote.printing.min_informative_str(c + (d + e)) == (
        "A. Elemwise{add,no_inplace}\n B. C\n C. Elemwise{add,no_inplace}\n  D. D\n  E. E")
    twice = T.exp(a)
    one = T.constant(np.ones((1, 1)))
    text = arignote.printing.min_informative_str(twice * twice + one, indent_level=1)
    assert text.splitlines() == [" A. Elemwise{add,no_inplace}", "  B. Elemwise{mul,no_inplace}",
                                 "   C. Elemwise{exp,no_inplace}", "    D. A", "   <C>", f"  E. {one}"]
    assert arignote.printing.min_informative_str(np.ones(2)) == "A. <ndarray>"


def test_debugprint_shows_the_storage_and_the_clients_of_a_function():
    a, b, d = T.matrix("A"), T.matrix("B"), T.matrix("D")
    f = function([a, b, d], [a + b, a + b - d], mode="FAST_COMPILE")
    assert debugprint(f, file="str", print_clients=True) == "\n".join([
        "Elemwise{add,no_inplace} [id A] ''   0 clients:[('output', ''), ('[id C]', 1)]",
        " |A [id D]",
        " |B [id E]",
        "Elemwise{sub,no_inplace} [id C] ''   1",
        " |Elemwise{add,no_inplace} [id A] ''   0 clients:[('output', ''), ('[id C]', 1)]",
        " |D [id F]"]) + "\n"
    g = function([a], T.exp(a) * 2, mode="FAST_COMPILE")
    assert debugprint(g, file="str", ids="", print_storage=True).splitlines()[:3] == [
        "Elemwise{mul,no_inplace}  ''   1 [None]", " |Elemwise{exp,no_inplace}  ''   0 [None]",
        " | |A  [None]"]
    with arignote.config.change_flags(allow_gc=False):
        h = function([a], T.exp(a) * 2, mode="FAST_COMPILE")
        h(np.zeros((1, 1)))
        text = debugprint(h, file="str", ids="", print_storage=True)
    assert "Elemwise{exp,no_inplace}  ''   0 [array([[ 1.]])]" in text.replace("[[1.]]", "[[ 1.]]")


def test_debugprint_calls_sharing_done_share_ids_and_expand_a_node_once():
    a, b = T.matrix("a"), T.matrix("b")
    c = a + b
    done: dict = {}
    first = debugprint(c, file="str", done=done)
    second = debugprint(c * b, file="str", done=done)
    assert first.splitlines() == ["Elemwise{add,no_inplace} [id A] ''   ", " |a [id B]", " |b [id C]"]
    assert second.splitlines() == ["Elemwise{mul,no_inplace} [id D] ''   ",
                                   " |Elemwise{add,no_inplace} [id A] ''   ", " |b [id C]"]


def test_print_test_value_adds_the_test_value_to_repr():
    x = T.scalar("x")
    x.tag.test_value = 42
    y = T.scalar("y")
    with arignote.config.change_flags(print_test_value=True):
        assert repr(x) == f"x\n{np.asarray(42, x.dtype)!r}" and repr(y) == "y"
    assert repr(x) == "x"


def test_debugprint_of_a_profiled_function_shows_each_nodes_time():
    import re
    x = T.dvector("x")
    f = function([x], T.exp(x) * T.log(x) + x, profile=ProfileStats(atexit_print=False),
                 mode=arignote.Mode(optimizer=None))
    assert "-->" not in debugprint(f, file="str")  # no call yet: nothing to show
    f(np.ones(3))
    text = debugprint(f, file="str")
    assert text.startswith("\nTiming Info\n")
    timed = [line for line in text.splitlines() if "' " in line and "[id" in line]
    pattern = re.compile(r" --> ([\d.e+-]+)s +([\d.]+)% ([\d.e+-]+)s +([\d.]+)%$")
    found = {line.split(" [id")[0].strip(" |"): pattern.search(line) for line in timed}
    assert set(found) == {"Elemwise{add,no_inplace}", "Elemwise{mul,no_inplace}", "Elemwise{exp,no_inplace}",
                          "Elemwise{log,no_inplace}"} and all(found.values())
    seconds = {k: (float(m.group(1)), float(m.group(3))) for k, m in found.items()}
    exp, log, mul = (seconds[f"Elemwise{{{n},no_inplace}}"] for n in ("exp", "log", "mul"))
    assert exp[0] == exp[1] and abs(mul[1] - (mul[0] + exp[1] + log[1])) <= 0.02 * mul[1]  # printed to 3 digits
    assert "-->" not in debugprint(function([x], x * 2), file="str")


def test_debugprint_prints_numbers_and_arrays_as_they_are_and_in_out_as_their_variable():
    from arignote.compile.io import In, Out
    x = T.dvector("x")
    assert debugprint([np.arange(2), 3, In(x), Out(x * 2)], file="str").splitlines() == [
        str(np.arange(2)), "3", "x [id A]", "Elemwise{mul,no_inplace} [id B] ''   ", " |x [id A]",
        " |InplaceDimShuffle{x} [id C] ''   ", "   |TensorConstant{2} [id D]"]


def test_var_descriptor_spells_the_whole_graph_without_addresses():
    from arignote.printing import var_descriptor

    class Pair(Op):  # two outputs; its default repr would hold its address
        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

        def __str__(self):
            return object.__repr__(self)

    x = T.dvector("x")
    y = T.exp(x)
    z = (y + y * 2).sum()
    z.name = "z"
    text = var_descriptor(z)
    assert text == ("<A>z=Sum{axis=[0], acc_dtype=float64}(<B>Elemwise{add,no_inplace}(<C>Elemwise{exp,no_inplace}"
                    "(<D>x),<E>Elemwise{mul,no_inplace}(<C>,<F>InplaceDimShuffle{x}(<G>2))))")
    assert var_descriptor(T.dvector("x")) == "<A>x"
    first, second = Pair()(x)
    assert re.fullmatch(r"<A>Elemwise\{add,no_inplace\}\(<B><\S+Pair object>\.1\(<C>x\),<D>\S+Pair object>\.0\(<C>\)\)",
                        var_descriptor(second + first))
    deep = x
    for _ in range(3000):  # no recursion limit
        deep = deep + 1
    assert var_descriptor(deep).count("Elemwise{add,no_inplace}") == 3000
