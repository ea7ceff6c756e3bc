"""``d3viz``: the graph model, its layout, the self-contained HTML page, DOT text and pydot graphs."""
import json
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import arignote as an
from arignote import tensor as T
from arignote.compile.builders import OpFromGraph
from arignote.compile.profiling import ProfileStats
from arignote.d3viz import d3viz, d3write, graph as model
from arignote.d3viz.layout import layout, size
from arignote.d3viz.page import page_data


def mlp():
    rng = np.random.RandomState(0)
    x = T.dmatrix("x")
    wh, bh = an.shared(rng.normal(size=(5, 4)), name="wh"), an.shared(np.zeros(4), name="bh")
    h = T.nnet.sigmoid(T.dot(x, wh) + bh)
    return x, T.nnet.softmax(T.dot(h, an.shared(rng.normal(size=(4, 3)), name="wy")))


def ofg():
    x, y, z = T.scalars("xyz")
    op = OpFromGraph([x, y, z], [T.nnet.sigmoid((x + y + z) ** 2)])
    return [x, y, z], op(x, y, z) + op(z, y, x)


class PageParser(HTMLParser):
    """Every tag with its attributes, and the text of each script."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._script = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = [dict(attrs), ""]

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self.scripts.append(tuple(self._script))
            self._script = None


def write_page(tmp_path, fct, **kwargs):
    path = tmp_path / "sub" / "graph.html"
    d3viz(fct, str(path), **kwargs)
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return path, parser


def test_the_model_of_a_compiled_function_has_theanos_node_kinds():
    x, y = mlp()
    f = an.function([x], y)
    graph = model.build(f)
    kinds = Counter(n.kind for n in graph.nodes)
    applies = f.maker.fgraph.toposort()
    assert kinds == {"apply": len(applies), "input": 1, "shared_input": 3, "output": 1}
    ids = {n.id for n in graph.nodes}
    assert len(ids) == len(graph.nodes)
    assert all(e.source in ids and e.target in ids for e in graph.edges)
    assert {n.label for n in graph.nodes if n.kind != "apply"} >= {"x", "wh", "bh", "wy"}
    # in-place nodes of the compiled graph show as view / destroy edges
    assert {e.kind for e in graph.edges} >= {"destroy"}
    assert all("defined at" in n.info for n in graph.nodes if n.kind == "apply")


def test_compact_false_draws_every_intermediate_variable():
    x = T.dvector("x")
    out = T.exp(x) * 2 + 1
    compact, full = model.build(out), model.build(out, compact=False)
    assert not any(n.kind == "variable" for n in compact.nodes)
    assert sum(n.kind == "variable" for n in full.nodes) == len([n for n in full.nodes if n.kind == "apply"]) - 1
    assert Counter(n.kind for n in compact.nodes)["constant_input"] == 2


def test_an_opfromgraph_node_holds_its_inner_graph_and_the_maps_to_it():
    inputs, out = ofg()
    graph = model.build(an.function(inputs, out))
    nested = [n for n in graph.nodes if n.subgraph is not None]
    assert len(nested) == 2
    for node in nested:
        inner = node.subgraph
        inner_ids = {n.id for n in inner.nodes}
        outer_ids = {n.id for n in graph.nodes}
        assert len(inner.input_map) == 3 and len(inner.output_map) == 1
        assert all(o in outer_ids and i in inner_ids for o, i in inner.input_map)
        assert all(i in inner_ids for i, _ in inner.output_map)
        assert all(n.id.startswith(node.id + "_") for n in inner.nodes)


def test_layout_puts_every_edge_downwards_and_no_two_nodes_of_a_layer_overlap():
    x, y = mlp()
    graph = model.build(an.function([x], y), compact=False)
    positions = layout(graph)
    assert set(positions) == {n.id for n in graph.nodes}
    assert all(positions[e.source][1] < positions[e.target][1] for e in graph.edges)
    labels = {n.id: n.label for n in graph.nodes}
    rows = {}
    for node_id, (cx, cy) in positions.items():
        rows.setdefault(cy, []).append((cx - size(labels[node_id])[0] / 2, cx + size(labels[node_id])[0] / 2))
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_the_page_is_self_contained_and_carries_the_graph(tmp_path):
    x, y = mlp()
    f = an.function([x], y)
    path, page = write_page(tmp_path, f)
    assert path.exists()
    # nothing fetched at view time: no script, style sheet, image or frame from elsewhere
    assert not [t for t, attrs in page.tags if "src" in attrs or t in ("link", "img", "iframe")]
    (data_attrs, data), (code_attrs, code) = page.scripts
    assert data_attrs == {"type": "application/json", "id": "graph-data"} and code_attrs == {}
    assert re.findall(r"https?://[^\"']*", code) == ["http://www.w3.org/2000/svg"]  # a name, not fetched
    assert "fetch(" not in code and "XMLHttpRequest" not in code and "import " not in code
    data = json.loads(data)
    main = data["graphs"]["main"]
    graph = model.build(f)
    assert [n["id"] for n in main["nodes"]] == [n.id for n in graph.nodes]
    assert [(e["source"], e["target"]) for e in main["edges"]] == [(e.source, e.target) for e in graph.edges]
    assert all(0 < e["at"] < 1 for e in main["edges"])
    assert main["parent"] is None
    assert {t for t, _ in page.tags} >= {"svg", "button"}


def test_the_page_has_the_inner_graphs_and_a_profiled_functions_times(tmp_path):
    inputs, out = ofg()
    profiled = an.function(inputs, out, profile=ProfileStats(False))
    profiled(1.0, 2.0, 3.0)
    _, page = write_page(tmp_path, profiled)
    graphs = json.loads(page.scripts[0][1])["graphs"]
    assert len(graphs) == 3
    nested = [n for n in graphs["main"]["nodes"] if n["subgraph"]]
    assert all(graphs[n["subgraph"]]["parent"] == "main" for n in nested)
    shares = [n["share"] for n in graphs["main"]["nodes"] if n["kind"] == "apply"]
    assert all(s is not None and 0 <= s <= 1 for s in shares)
    assert all(n["share"] is None for n in graphs["main"]["nodes"] if n["kind"] != "apply")


def test_names_cannot_break_out_of_the_page(tmp_path):
    x = T.dvector("</script><script>alert(1)</script>")
    _, page = write_page(tmp_path, T.exp(x))
    assert len(page.scripts) == 2
    labels = [n["label"] for n in json.loads(page.scripts[0][1])["graphs"]["main"]["nodes"]]
    assert x.name in labels


def test_page_data_places_each_node_with_its_size():
    graph = model.build(T.exp(T.dvector("x")))
    data = page_data(graph, title="t")
    for node in data["graphs"]["main"]["nodes"]:
        assert (node["w"], node["h"]) == size(node["label"])


def test_d3write_writes_dot_text(tmp_path):
    inputs, out = ofg()
    path = tmp_path / "graph.dot"
    f = an.function(inputs, out)
    d3write(f, str(path))
    text = path.read_text()
    assert text.startswith("digraph G {") and text.count("subgraph ") == 2
    graph = model.build(f)
    inner = [n.subgraph for n in graph.nodes if n.subgraph is not None]
    assert text.count("node_type=apply") == sum(n.kind == "apply" for g in [graph, *inner] for n in g.nodes)
    assert all(f'"{n.id}" [' in text for g in [graph, *inner] for n in g.nodes)
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed: the text is not drawn")
    svg = subprocess.run(["dot", "-Tsvg", str(path)], capture_output=True, check=True).stdout
    assert b"<svg" in svg


def test_pydot_formatter_gives_theanos_attributes():
    pytest.importorskip("pydot")
    from arignote.d3viz.formatting import PyDotFormatter

    inputs, out = ofg()
    graph = PyDotFormatter()(an.function(inputs, out))
    kinds = Counter(n.get_attributes()["node_type"] for n in graph.get_nodes())
    assert kinds == {"apply": 3, "input": 3, "output": 1}
    clusters = graph.get_subgraph_list()
    assert len(clusters) == 2
    nested = [n for n in graph.get_nodes() if "subg" in n.get_attributes()]
    assert sorted(n.get_attributes()["subg"] for n in nested) == sorted(c.get_name() for c in clusters)
    assert all(len(c.get_nodes()) == len(clusters[0].get_nodes()) for c in clusters)


def test_the_pages_script_runs_and_answers_the_user(tmp_path):
    """The page's own script, run by node against a minimal DOM (tests/d3viz_page.js)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script is not run")
    inputs, out = ofg()
    profiled = an.function(inputs, out, profile=ProfileStats(False))
    profiled(1.0, 2.0, 3.0)
    path, _ = write_page(tmp_path, profiled)
    script = Path(__file__).with_name("d3viz_page.js")
    seen = json.loads(subprocess.run([node, str(script), str(path)], capture_output=True, text=True,
                                     check=True, timeout=60).stdout)
    graph = model.build(profiled)
    assert seen["main"] == {"nodes": len(graph.nodes), "edges": len(graph.edges)}
    assert seen["hoverPanel"].startswith(graph.nodes[0].label) and seen["panelHiddenAfterLeave"]
    assert seen["dragged"] and seen["resetRestores"] and seen["zoomed"] and seen["panned"]
    assert seen["selectedButtons"] == ["Edit label", "Open inner graph"] and seen["renamed"]
    inner = next(n.subgraph for n in graph.nodes if n.subgraph is not None)
    assert seen["inner"] == {"nodes": len(inner.nodes), "where": "inside renamed", "back": True}
    assert seen["backToMain"] and seen["profileButton"] and seen["profileRecolours"]
