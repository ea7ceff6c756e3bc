"""Mode.register (optimizers at Theano positions among the phases), AddFeatureOptimizer,
PrintCurrentFunctionGraph, and the register_mode/_linker/_optimizer names."""
from __future__ import annotations

import numpy as np
import pytest

from arignote import function, tensor as T
from arignote.compile import mode as modes
from arignote.compile.linkers import VM_Linker
from arignote.compile.mode import AddFeatureOptimizer, Mode, PrintCurrentFunctionGraph
from arignote.graph.features import PrintListener


def _ops(fgraph):
    return [str(node.op) for node in fgraph.toposort()]


def test_registered_optimizers_run_between_the_phases_their_positions_name():
    seen = {}

    def snapshot(label):
        def look(fgraph):
            seen[label] = _ops(fgraph)
        return look
    x = T.dvector("x")
    mode = Mode(optimizer="fast_run").register((snapshot("fused"), 49.9), (snapshot("canonical"), 1.2),
                                               (snapshot("first"), -1))
    f = function([x], T.exp(x) * 2 + 1, mode=mode)
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), np.exp([0.0, 1.0]) * 2 + 1)
    # before any phase the constants are still broadcast by DimShuffles; canonicalize folds them
    assert seen["first"].count("InplaceDimShuffle{x}") == 2
    assert seen["canonical"] == ["Elemwise{exp,no_inplace}", "Elemwise{mul,no_inplace}", "Elemwise{add,no_inplace}"]
    assert len(seen["fused"]) == 1 and "Composite" in seen["fused"][0]
    assert mode.registered and not Mode(optimizer="fast_run").registered  # register gives a new mode
    # a mode with no rewrites still runs what was registered
    ran = []
    function([x], x + 1, mode=Mode(optimizer=None).register((lambda fg: ran.append(_ops(fg)), 10)))
    assert ran == [["InplaceDimShuffle{x}", "Elemwise{add,no_inplace}"]]


def test_add_feature_optimizer_lets_a_feature_watch_the_later_rewrites(capsys):
    x = T.dvector("x")
    listener = PrintListener()
    mode = Mode(optimizer="fast_run").register((AddFeatureOptimizer(listener), 2.5))
    f = function([x], T.exp(x) * 2 + 1, mode=mode)
    assert listener in f.maker.fgraph.features
    text = capsys.readouterr().out
    assert "-- attached to " in text and "Composite" in text and "(elemwise_fusion)" in text


def test_print_current_function_graph_shows_the_graph_at_its_position(capsys):
    x = T.dvector("x")
    mode = Mode(optimizer="fast_run").register((PrintCurrentFunctionGraph("before fusion"), 48))
    function([x], T.exp(x) * 2, mode=mode)
    text = capsys.readouterr().out
    assert text.startswith("PrintCurrentFunctionGraph: before fusion\n")
    assert "Elemwise{exp,no_inplace}" in text and "Composite" not in text


def test_register_refuses_what_is_not_a_pair_or_an_optimizer():
    with pytest.raises(TypeError, match=r"\(optimizer, position\) pairs"):
        Mode().register(AddFeatureOptimizer(PrintListener()))
    with pytest.raises(TypeError, match="is not an optimizer"):
        Mode().register((42, 1.0))


def test_register_mode_linker_and_optimizer_names(monkeypatch):
    monkeypatch.setattr(modes, "PREDEFINED", modes._Predefined(modes.PREDEFINED))
    monkeypatch.setattr(modes, "REGISTERED_LINKERS", {})
    monkeypatch.setattr(modes, "REGISTERED_OPTIMIZERS", {})
    x = T.dvector("x")
    calls = []
    modes.register_linker("watched", VM_Linker(callback=lambda node, *rest: calls.append(str(node.op))))
    modes.register_optimizer("only_mine", lambda fgraph: calls.append("optimized"))
    modes.register_mode("MINE", Mode(linker="watched", optimizer="only_mine"))
    f = function([x], T.exp(x), mode="MINE")
    assert calls == ["optimized"]
    np.testing.assert_allclose(f(np.zeros(2)), np.ones(2))
    assert calls == ["optimized", "Elemwise{exp,no_inplace}"]
    with pytest.raises(ValueError, match="'MINE' is taken"):
        modes.register_mode("MINE", Mode())
    with pytest.raises(ValueError, match="'cvm' is taken"):
        modes.register_linker("cvm", VM_Linker())
    with pytest.raises(TypeError, match="linker object"):
        modes.register_linker("other", "cvm")
    with pytest.raises(ValueError, match="'fast_run' is taken"):
        modes.register_optimizer("fast_run", lambda fgraph: None)
