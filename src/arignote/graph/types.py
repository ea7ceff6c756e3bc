"""Types that are not arrays: ``Generic`` (any Python object), ``NullType`` and ``DisconnectedType``.

``generic`` is the type of a shared variable holding a value that is not an
array (``shared([])``, ``shared('text')``), as in Theano. A ``NullType``
variable stands for a gradient that does not exist (``grad_undefined``,
``grad_not_implemented``): asking ``grad`` for it raises, saying why. A
``DisconnectedType`` variable is the gradient of a cost that does not depend
on the variable (Theano's placeholder for a zero that is not even a path).
Neither ever holds a value: ``function`` refuses them.
"""
from __future__ import annotations

from typing import Any

from arignote.graph.basic import Type

__all__ = ["Generic", "generic", "NullType", "null_type", "DisconnectedType", "disconnected_type"]


class Generic(Type):
    """Any Python object; ``filter`` passes values through unchanged."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None,
               **_: Any) -> Any:
        return value

    def is_valid_value(self, value: Any) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(Generic)

    def __str__(self) -> str:
        return "generic"

    __repr__ = __str__


generic = Generic()


class NullType(Type):
    """The type of a gradient that does not exist; ``why_null`` says why."""

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise ValueError(f"no value is ever of a NullType ({self.why_null})")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(NullType)

    def __str__(self) -> str:
        return "NullType"

    __repr__ = __str__


null_type = NullType()


class DisconnectedType(Type):
    """The type of the gradient of a cost with respect to a variable it does not depend on."""

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise ValueError("no value is ever of a DisconnectedType (a gradient that is not connected)")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(DisconnectedType)

    def __str__(self) -> str:
        return "DisconnectedType"

    __repr__ = __str__


disconnected_type = DisconnectedType()
