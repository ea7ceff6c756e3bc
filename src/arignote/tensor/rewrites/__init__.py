"""Tensor rewrites; importing this package registers them in the rewrite database."""
from arignote.tensor.rewrites import fusion, inplace  # noqa: F401
