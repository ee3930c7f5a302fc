"""Python values for schema defaults, and Python names for schema arguments."""

from __future__ import annotations

import keyword
from typing import Any, Final

from ..vocabulary import Device, Layout, MemoryFormat, ScalarType
from ..schema import Argument, BaseType, EnumDefault, ListType, OptionalType, Type

__all__ = ["default_value", "python_name"]

_ENUMS: Final[dict[str, Any]] = {
    "ScalarType": ScalarType,
    "MemoryFormat": MemoryFormat,
    "Layout": Layout,
}
_REDUCTIONS: Final = {"Mean": 1, "Sum": 2}


def _base_name(type_: Type) -> str | None:
    while isinstance(type_, (OptionalType, ListType)):
        type_ = type_.elem
    return type_.name if isinstance(type_, BaseType) else None


def default_value(arg: Argument) -> Any:
    """The Python value of ``arg``'s default, with enum names and codes turned into members.

    ``MemoryFormat memory_format=contiguous_format`` gives ``MemoryFormat.contiguous_format``,
    ``ScalarType dtype=6`` gives ``ScalarType.float32``, ``int reduction=Mean`` gives 1,
    ``Device device="cpu"`` gives ``Device("cpu")``; a lone value for a sized list is
    broadcast (``int[2] stride=1`` gives ``(1, 1)``).
    """
    value = arg.default_value
    if value is None:
        return None
    name = _base_name(arg.type)
    enum = _ENUMS.get(name or "")
    if isinstance(value, EnumDefault):
        if enum is not None:
            return enum[value.name]
        return _REDUCTIONS[value.name]
    if enum is not None and isinstance(value, int) and not isinstance(value, bool):
        return enum(value)
    if name == "Device" and isinstance(value, str):
        return Device.parse(value)
    type_ = arg.type.elem if isinstance(arg.type, OptionalType) else arg.type
    if isinstance(type_, ListType) and not isinstance(value, tuple):
        return (value,) * (type_.size or 1)
    return value


def python_name(name: str) -> str:
    """The Python parameter name for a schema argument: keywords get a trailing '_'."""
    return f"{name}_" if keyword.iskeyword(name) else name
