"""``theano.sandbox.linalg.ops``: ``arignote.sandbox.linalg`` with its rewrite rules as Theano's
local optimizers (``inv_as_solve.transform(node)``); the rules themselves are registered by
``arignote.sandbox.linalg`` when it is imported."""
import importlib.util
from typing import Any

from arignote.compat.theano.opt import FromFunctionLocalOptimizer
from arignote.sandbox import linalg as _linalg
from arignote.sandbox.linalg import *  # noqa: F401,F403  (Theano's names)

imported_scipy = importlib.util.find_spec("scipy") is not None  # what Solve and Cholesky run on


class _RuleOptimizer(FromFunctionLocalOptimizer):
    """A rule of ``sandbox.linalg`` (``rule(fgraph, node)``) as a Theano local optimizer."""

    def transform(self, node: Any) -> Any:
        return self.fn(None, node)

    def _rewrite(self, fgraph: Any, node: Any) -> Any:
        return self.fn(fgraph, node)

    def __call__(self, node: Any) -> Any:
        return self.transform(node)


def _optimizer(rule: Any) -> _RuleOptimizer:
    return _RuleOptimizer(rule, list(_linalg.RULES[rule][0]))


remove_hint_nodes = _optimizer(_linalg.remove_hint_nodes)
transinv_to_invtrans = _optimizer(_linalg.transinv_to_invtrans)
inv_as_solve = _optimizer(_linalg.inv_as_solve)
tag_solve_triangular = _optimizer(_linalg.tag_solve_triangular)
no_transpose_symmetric = _optimizer(_linalg.no_transpose_symmetric)
psd_solve_with_chol = _optimizer(_linalg.psd_solve_with_chol)
local_det_chol = _optimizer(_linalg.local_det_chol)
local_log_prod_sqr = _optimizer(_linalg.local_log_prod_sqr)
