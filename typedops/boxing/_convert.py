"""Conversions an unboxing wrapper applies between stack values and a kernel's parameters.

Boxed values are plain Python values: a list argument arrives as whatever the caller
pushed (a list, or a tuple from a schema default), and a sized list such as ``int[2]``
may arrive as a lone int (``stride=1``). The kernel's own annotations say what it wants:
``tuple[int, int]`` or ``tuple[int, ...]`` gets a tuple, ``list[int]`` a list, a lone int
is broadcast to the schema's size. ``Sequence[int]`` (or no list annotation) is passed
through unchanged.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union, cast

from ..vocabulary import ArgumentValueError
from ..schema import FunctionSchema, ListType, OptionalType, Type
from ._ivalue import is_sequence
from ._messages import BAD_CONVERSION_KIND, BAD_CONVERSION_SIZE

__all__ = ["SequenceKind", "Conversion", "conversions_for", "to_tuple", "to_list", "broadcast"]


class SequenceKind(enum.Enum):
    """The sequence type a kernel's annotation asks a list argument to arrive as."""

    tuple = "tuple"
    list = "list"
    any = "any"  # a list or tuple as given; a lone value for a sized list becomes a list




@dataclass(frozen=True)
class Conversion:
    """What an unboxing wrapper does to one argument: make it a ``kind``, broadcasting a
    lone value to ``size`` elements when the schema gives the list a size (``int[2]``).

    Both fields reach generated source (``_to_tuple(a1, 2)``), so both are checked here.
    """

    kind: SequenceKind
    size: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, SequenceKind):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers pass anything
            raise ArgumentValueError(BAD_CONVERSION_KIND.format(kind=self.kind))
        if self.size is not None and (type(self.size) is not int or self.size < 0):
            raise ArgumentValueError(BAD_CONVERSION_SIZE.format(size=self.size))


def _sequence_kind(annotation: Any) -> SequenceKind | None:
    """The sequence type a parameter annotation asks for; None: any (pass as is)."""
    origin = typing.get_origin(annotation)
    if origin is Union or (origin is not None and origin.__class__.__name__ == "UnionType"):
        kinds = {_sequence_kind(a) for a in typing.get_args(annotation) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin is tuple or annotation is tuple:
        return SequenceKind.tuple
    if origin is list or annotation is list:
        return SequenceKind.list
    return None


def _list_size(type_: Type) -> int | None:
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    return type_.size if isinstance(type_, ListType) else None


def _is_list(type_: Type) -> bool:
    return isinstance(type_.elem if isinstance(type_, OptionalType) else type_, ListType)


def conversions_for(
    schema: FunctionSchema, kernel: Callable[..., Any], *, with_keys: bool
) -> tuple[Conversion | None, ...]:
    """One ``Conversion`` per schema argument, or None where the value passes as is."""
    if not any(_is_list(a.type) for a in schema.arguments):
        return (None,) * len(schema.arguments)  # nothing to convert; skip reading annotations
    annotations = _annotations(kernel, with_keys)
    conversions: list[Conversion | None] = []
    for arg in schema.arguments:
        kind = _sequence_kind(annotations[arg.name]) if arg.name in annotations and _is_list(arg.type) else None
        size = _list_size(arg.type)
        if kind is None and size is not None:
            kind = SequenceKind.any  # the kernel takes any sequence, but a lone value is broadcast
        conversions.append(None if kind is None else Conversion(kind, size))
    return tuple(conversions)


def _annotations(kernel: Callable[..., Any], with_keys: bool) -> dict[str, Any]:
    """Parameter name -> annotation object, for the parameters after the key set (if taken)."""
    raw = getattr(kernel, "__annotations__", None)
    code = getattr(kernel, "__code__", None)
    if isinstance(raw, dict) and code is not None:
        given = cast("dict[str, object]", raw)
        if not any(isinstance(a, str) for a in given.values()):
            names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
            return {n: given[n] for n in names[1 if with_keys else 0 :] if n in given}
    try:
        signature = inspect.signature(kernel, eval_str=True)
    except (TypeError, ValueError, NameError):
        return {}
    params = list(signature.parameters.values())[1 if with_keys else 0 :]
    return {p.name: p.annotation for p in params}


# Note [Converters return what they narrowed]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# broadcast, to_tuple and to_list run in the unboxing wrapper of every list argument
# they convert. Their isinstance and type() tests narrow the Any value to a list or tuple
# of Unknown for pyright, which strict mode reports where it is returned; a cast would
# add a call to each conversion, so those lines carry an ignore instead.
def broadcast(value: Any, size: int = 0) -> Any:
    """``value`` unchanged if it is a list, tuple or None; a lone value repeated ``size``
    times, as a list (what a kernel taking any sequence gets for ``int[2] stride=1``)."""
    if value is None or not size or isinstance(value, (list, tuple)):
        return value  # pyright: ignore[reportUnknownVariableType] -- Note [Converters return what they narrowed]
    if is_sequence(value):  # a range or another sequence the argument check took: its items
        return list(value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType] -- the same Note
    return [value] * size


def to_tuple(value: Any, size: int = 0) -> Any:
    """``value`` as a tuple; a lone value is repeated ``size`` times; None stays None."""
    if value is None or type(value) is tuple:
        return value  # pyright: ignore[reportUnknownVariableType] -- Note [Converters return what they narrowed]
    if size and not isinstance(value, (list, tuple)) and not is_sequence(value):
        return (value,) * size
    return tuple(value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType] -- the same Note


def to_list(value: Any, size: int = 0) -> Any:
    """``value`` as a list; a lone value is repeated ``size`` times; None stays None."""
    if value is None or type(value) is list:
        return value  # pyright: ignore[reportUnknownVariableType] -- Note [Converters return what they narrowed]
    if size and not isinstance(value, (list, tuple)) and not is_sequence(value):
        return [value] * size
    return list(value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType] -- the same Note
