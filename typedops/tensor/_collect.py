"""Finding the tensors among a call's arguments."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar, cast, overload

from ._tensor import Tensor

__all__ = ["tensors_in"]

T = TypeVar("T", bound=Tensor)


@overload
def tensors_in(values: Iterable[object]) -> list[Tensor]: ...
@overload
def tensors_in(values: Iterable[object], kind: type[T]) -> list[T]: ...
def tensors_in(values: Iterable[object], kind: type[Tensor] = Tensor) -> list[Any]:
    """The tensors (of class ``kind``) among ``values``, with those in lists and tuples (a
    ``Tensor[]`` argument) flattened one deep, in order."""
    found: list[Any] = []
    for value in values:
        if isinstance(value, kind):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(t for t in cast("list[Any]", value) if isinstance(t, kind))
    return found
