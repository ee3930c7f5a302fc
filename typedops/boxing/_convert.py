"""Conversions an unboxing wrapper applies between stack values and a kernel's parameters.

Boxed values are plain Python values: a list argument arrives as whatever the caller
pushed (a list, or a tuple from a schema default), and a sized list such as ``int[2]``
may arrive as a lone int (``stride=1``). The kernel's own annotations say what it wants:
``tuple[int, int]`` or ``tuple[int, ...]`` gets a tuple, ``list[int]`` a list, a lone int
is broadcast to the schema's size. ``Sequence[int]`` (or no list annotation) is passed
through unchanged.
"""

# Checked by pyright in standard mode, not strict yet: what it narrows from Any, yaml or
# numpy values is partially unknown to it (issue 12; mypy --strict checks it in full).
# pyright: standard

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Union

from ..schema import FunctionSchema, ListType, OptionalType, Type

__all__ = ["conversions_for", "to_tuple", "to_list"]


def _sequence_kind(annotation: Any) -> str:
    """'tuple', 'list' or '' for what a parameter annotation asks a sequence to be."""
    origin = typing.get_origin(annotation)
    if origin is Union or (origin is not None and origin.__class__.__name__ == "UnionType"):
        kinds = {_sequence_kind(a) for a in typing.get_args(annotation) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else ""
    if origin is tuple or annotation is tuple:
        return "tuple"
    if origin is list or annotation is list:
        return "list"
    return ""


def _list_size(type_: Type) -> int | None:
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    return type_.size if isinstance(type_, ListType) else None


def _is_list(type_: Type) -> bool:
    return isinstance(type_.elem if isinstance(type_, OptionalType) else type_, ListType)


def conversions_for(schema: FunctionSchema, kernel: Callable[..., Any], *, with_keys: bool) -> tuple[str, ...]:
    """One code per schema argument: '' (pass as is), 'tuple' or 'list', with ':N' for a
    size to broadcast a lone value to."""
    if not any(_is_list(a.type) for a in schema.arguments):
        return ("",) * len(schema.arguments)  # nothing to convert; skip reading annotations
    annotations = _annotations(kernel, with_keys)
    codes: list[str] = []
    for arg in schema.arguments:
        if arg.name not in annotations or not _is_list(arg.type):
            codes.append("")
            continue
        kind = _sequence_kind(annotations[arg.name])
        size = _list_size(arg.type)
        if kind and size is not None:
            codes.append(f"{kind}:{size}")
        else:
            codes.append(kind)
    return tuple(codes)


def _annotations(kernel: Callable[..., Any], with_keys: bool) -> dict[str, Any]:
    """Parameter name -> annotation object, for the parameters after the key set (if taken)."""
    raw = getattr(kernel, "__annotations__", None)
    code = getattr(kernel, "__code__", None)
    if isinstance(raw, dict) and code is not None and not any(isinstance(a, str) for a in raw.values()):
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        return {n: raw[n] for n in names[1 if with_keys else 0 :] if n in raw}
    try:
        signature = inspect.signature(kernel, eval_str=True)
    except (TypeError, ValueError, NameError):
        return {}
    params = list(signature.parameters.values())[1 if with_keys else 0 :]
    return {p.name: p.annotation for p in params}


def to_tuple(value: Any, size: int = 0) -> Any:
    """``value`` as a tuple; a lone value is repeated ``size`` times; None stays None."""
    if value is None or type(value) is tuple:
        return value
    if size and not isinstance(value, (list, tuple)):
        return (value,) * size
    return tuple(value)


def to_list(value: Any, size: int = 0) -> Any:
    """``value`` as a list; a lone value is repeated ``size`` times; None stays None."""
    if value is None or type(value) is list:
        return value
    if size and not isinstance(value, (list, tuple)):
        return [value] * size
    return list(value)
