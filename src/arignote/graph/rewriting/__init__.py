"""Graph rewriting: the engine, merging, and the tagged database modes choose from."""
from arignote.graph.rewriting.basic import (EquilibriumRewriter, GraphRewriter, NodeRewriter,
                                            SequenceRewriter, WalkingRewriter, apply_replacement,
                                            in_to_out, node_rewriter, out_to_in, rewrite_graph)
from arignote.graph.rewriting.merge import MergeRewriter

__all__ = ["EquilibriumRewriter", "GraphRewriter", "NodeRewriter", "SequenceRewriter",
           "WalkingRewriter", "apply_replacement", "in_to_out", "node_rewriter", "out_to_in",
           "rewrite_graph", "MergeRewriter"]
