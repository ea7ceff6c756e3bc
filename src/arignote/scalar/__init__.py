"""Scalar operations: the one table elementwise tensor ops are built from."""
from arignote.scalar.dtypes import upcast, upgrade_to_float
from arignote.scalar.ops import TABLE, Cast, ScalarOp

__all__ = ["TABLE", "Cast", "ScalarOp", "upcast", "upgrade_to_float"]
