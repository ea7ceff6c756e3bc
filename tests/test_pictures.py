"""pydotprint: the drawing's structure (nodes, colours, edges) checked on the DOT text, which
needs only pydot; drawing PNG and SVG needs Graphviz's dot and is skipped without it."""
from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

from arignote import config, function, scan, shared, tensor as T
from arignote.pictures import COLORS, TRANSFER_EDGE, GraphvizMissing
from arignote.printing import pydot_graph, pydotprint
from tests.gpu.conftest import use

pydot = pytest.importorskip("pydot", reason='pydot is not installed (pip install "arignote[graphviz]")')
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def _parts(graph):
    nodes = {n.get_name(): n.get_attributes() for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")}
    edges = [(e.get_source(), e.get_destination(), e.get_attributes()) for e in graph.get_edges()]
    return nodes, edges


def _label(attributes):
    return attributes.get("label", "").strip('"')


def _seed(device):
    with use(device), config.change_flags(floatX="float32"):
        x = shared(np.random.RandomState(22).rand(100).astype("float32"), name="x")
        return function([], T.exp(x))


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_nodes_are_coloured_by_where_they_run_and_transfers_stand_out(device):
    f = _seed(device)
    nodes, edges = _parts(pydot_graph(f))
    applies = {k: v for k, v in nodes.items() if k.startswith("n")}
    assert len(applies) == len(f.maker.fgraph.toposort())
    by_label = {_label(v): v for v in nodes.values()}
    if device == "cpu":
        assert by_label["Elemwise{exp,no_inplace}"]["fillcolor"].strip('"') == COLORS["cpu"]
        assert not any(a.get("color") for _, _, a in edges)
    else:
        assert by_label["GpuElemwise{exp}"]["fillcolor"].strip('"') == COLORS["gpu"]
        transfer = by_label["HostFromGpu"]
        assert transfer["shape"] == "octagon" and transfer["fillcolor"].strip('"') == COLORS["transfer"]
        moving = [a for _, _, a in edges if a.get("style") == "dashed"]
        assert len(moving) == 2 and all(a["color"].strip('"') == TRANSFER_EDGE["color"] for a in moving)
    shared_box = by_label["x\\nfloat32 vector"]
    assert shared_box["shape"] == "box" and shared_box["fillcolor"].strip('"') == COLORS["shared"]
    output = next(k for k, v in nodes.items() if _label(v).startswith("output"))
    assert any(dst == output for _, dst, _ in edges)


def test_edges_follow_the_graph_and_a_fused_node_shows_its_expression():
    x, y = T.vector("x"), T.vector("y")
    f = function([x, y], T.exp(x) * y + 1)
    nodes, edges = _parts(pydot_graph(f))
    fused = next(k for k, v in nodes.items() if "Composite" in _label(v))
    assert "add(mul(exp(i0), i1), i2)" in _label(nodes[fused])
    into = {_label(nodes[src]).split("\\n")[0]: _label(a) for src, dst, a in edges if dst == fused}
    assert into["x"] == "i0" and into["y"] == "i1"
    assert sum(1 for _, dst, _ in edges if dst == fused) == 3  # x, y and the constant 1


def test_compact_draws_unnamed_intermediates_as_edges():
    x = T.matrix("x")
    h = T.dot(x, x.T)
    named = T.tanh(h)
    named.name = "hidden"
    out = named.sum()
    compact, _ = _parts(pydot_graph([out]))
    full, _ = _parts(pydot_graph([out], compact=False))
    boxes = [_label(v) for v in compact.values() if v.get("shape") == "box"]
    assert any(b.startswith("hidden") for b in boxes) and len(full) > len(compact)
    assert any(_label(v).startswith("auto_") for v in full.values())


def test_ids_and_label_sizes(tmp_path):
    x = T.vector("x")
    f = function([x], T.exp(x))
    nodes, _ = _parts(pydot_graph(f, with_ids=True, max_label_size=8))
    assert "0: El..." in [_label(v) for v in nodes.values()]  # 8 characters with the dots
    nodes, _ = _parts(pydot_graph(f, high_contrast=False, colorCodes={"Elemwise": "#123456"}))
    node = next(v for k, v in nodes.items() if k.startswith("n"))
    assert node["color"].strip('"') == "#123456" and "fillcolor" not in node


@needs_dot
def test_png_and_svg_are_drawn(tmp_path, capsys):
    f = _seed("cpu")
    png = tmp_path / "seed.png"
    pydotprint(f, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"The output file is available at {png}" in capsys.readouterr().out
    svg = tmp_path / "seed.svg"
    pydotprint(f, str(svg), format="svg", print_output_file=False)
    text = svg.read_text()
    assert "<svg" in text and "Elemwise{exp,no_inplace}" in text
    assert pydotprint(f, format="svg", return_image=True).startswith(b"<?xml")


@needs_dot
def test_scan_graphs_draws_each_loop_body(tmp_path):
    seq = T.vector("seq")
    sums, _ = scan(lambda v, acc: acc + v, sequences=seq, outputs_info=T.zeros_like(seq[0]))
    f = function([seq], sums)
    pydotprint(f, str(tmp_path / "loop.svg"), format="svg", scan_graphs=True, print_output_file=False)
    inner = [p.name for p in tmp_path.iterdir() if p.name != "loop.svg"]
    assert len(inner) == 1 and inner[0].startswith("loop_Scan_") and inner[0].endswith(".svg")


def test_missing_pieces_name_what_to_install(monkeypatch):
    f = _seed("cpu")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        pydotprint(f)
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(GraphvizMissing, match=r'pip install "arignote\[graphviz\]"'):
        pydot_graph(f)


def test_cond_highlight_colours_what_only_one_part_of_an_ifelse_needs(caplog):
    from arignote.ifelse import ifelse
    a, b, x = T.dscalar("a"), T.dscalar("b"), T.dscalar("x")
    f = function([a, b, x], ifelse(T.lt(a, b), T.exp(x), T.log(x)), mode="FAST_COMPILE")
    nodes, _ = _parts(pydot_graph(f, cond_highlight=True))
    fills = {_label(v): v.get("fillcolor") for k, v in nodes.items() if k.startswith("n")}
    assert fills["Elemwise{lt,no_inplace}"] == COLORS["condition"]
    assert fills["Elemwise{exp,no_inplace}"] == COLORS["true branch"]
    assert fills["Elemwise{log,no_inplace}"] == COLORS["false branch"]
    plain, _ = _parts(pydot_graph(f))
    assert {v.get("fillcolor") for k, v in plain.items() if k.startswith("n")} == {COLORS["cpu"]}
    g = function([x], x * 2)
    with caplog.at_level("WARNING", logger="arignote.printing"):
        pydot_graph(g, cond_highlight=True)
    assert caplog.messages == ["pydotprint: cond_highlight is set but there is no IfElse node in the graph"]


def test_a_profiled_functions_nodes_show_their_time():
    import re
    from arignote.compile.profiling import ProfileStats
    x = T.dvector("x")
    f = function([x], T.exp(x) * 2, profile=ProfileStats(atexit_print=False))
    assert not any("%" in _label(v) for v in _parts(pydot_graph(f))[0].values())  # not called yet
    f(np.ones(3))
    applies = [_label(v) for k, v in _parts(pydot_graph(f))[0].items() if k.startswith("n")]
    assert applies and all(re.search(r"\\n[\d.e+-]+s, [\d.]+%$", label) for label in applies)
