"""Gradient rules, one module per op family; importing this package registers them."""
from arignote.tensor.grad import elemwise  # noqa: F401
