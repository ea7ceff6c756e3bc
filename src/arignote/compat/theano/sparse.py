"""``theano.sparse``: arignote has no sparse matrices.

The module imports, so files that import it at the top for one sparse test
still load; any use of it raises, saying so.
"""
from __future__ import annotations

from typing import Any

__all__: list[str] = []
enable_sparse = False


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"theano.sparse.{name}: arignote has no sparse matrices (see "
                              "docs/theano-differences.md); use dense arrays, or scipy.sparse "
                              "outside the graph")
