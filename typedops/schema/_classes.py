"""The Python class that stands for ``Tensor``, registered by the tensor layer.

Note [Tensor class by registration]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The schema and boxing layers sit below the tensor layer (docs/architecture.md), yet
inference must map an annotation ``x: Tensor`` to the schema type ``Tensor``, the Python
signature of a schema must name the class back, and boxing must tag tensor values. They
learn the class the way PyTorch's c10 learns about ``at::Tensor``'s implementation: the
layer above registers it. ``typedops.tensor`` calls ``register_tensor_class(Tensor)``
when it is imported, and ``import typedops`` imports it, so every user of the schema
layer through the package finds it registered. Tables that name the class are built on
first use after registration.
"""

from __future__ import annotations

from ..vocabulary import TypedopsError
from ._messages import _NOT_REGISTERED, NOT_REGISTERED_TWICE

__all__ = ["register_tensor_class", "tensor_class"]

_REGISTERED: list[type] = []


def register_tensor_class(cls: type) -> None:
    """Make ``cls`` the class that annotations name ``Tensor`` with (once per process)."""
    if _REGISTERED and _REGISTERED[0] is not cls:
        raise TypedopsError(NOT_REGISTERED_TWICE.format(name=_REGISTERED[0].__qualname__))
    if not _REGISTERED:
        _REGISTERED.append(cls)


def tensor_class() -> type:
    """The registered tensor class (Note [Tensor class by registration])."""
    if not _REGISTERED:
        raise TypedopsError(_NOT_REGISTERED)
    return _REGISTERED[0]
