"""IValues: what a value on the stack is, and whether it fits a schema type.

Boxed code sees plain Python values; their *tag* says which schema type family a value
belongs to (PyTorch's IValue tags), and ``mismatch(type, value)`` says why a value does
not fit a schema type -- the uniform argument check every boxed call gets.
"""

from __future__ import annotations

import enum
import operator
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from ..vocabulary import PYTHON_TYPE_DTYPES, Device, Layout, MemoryFormat, ScalarType
from ..schema import (
    AwaitType,
    BaseType,
    ClassType,
    DictType,
    FutureType,
    ListType,
    OptionalType,
    RRefType,
    TupleType,
    Type,
    TypeVar,
    tensor_class,
)

__all__ = [
    "Tag", "tag_of", "mismatch", "type_name", "canonical", "dtype_of_python_type", "plain_number", "is_number",
    "python_number", "is_overflow",
    "is_sequence",
]  # fmt: skip


class Tag(enum.Enum):
    """The kind of a boxed value."""

    none = "None"
    tensor = "Tensor"
    bool = "bool"
    int = "int"
    float = "float"
    complex = "complex"
    str = "str"
    scalar_type = "ScalarType"
    layout = "Layout"
    memory_format = "MemoryFormat"
    device = "Device"
    list = "list"
    tuple = "tuple"
    dict = "dict"
    object = "object"


_TAG_BY_CLASS: Final[dict[type, Tag]] = {
    type(None): Tag.none, bool: Tag.bool, int: Tag.int, float: Tag.float, complex: Tag.complex,
    str: Tag.str, ScalarType: Tag.scalar_type, Layout: Tag.layout,
    MemoryFormat: Tag.memory_format, Device: Tag.device, list: Tag.list, tuple: Tag.tuple,
    dict: Tag.dict,
}  # fmt: skip


def tag_of(value: object) -> Tag:
    tag = _TAG_BY_CLASS.get(type(value))
    if tag is not None:
        return tag
    # The tensor class is registered from above (Note [Tensor class by registration]).
    if isinstance(value, tensor_class()):
        _TAG_BY_CLASS[type(value)] = Tag.tensor
        return Tag.tensor
    for cls, t in _TAG_BY_CLASS.items():
        if isinstance(value, cls):
            return t
    return Tag.object


def type_name(value: object) -> str:
    """The name of ``value``'s type in a message; numpy's named as such (``numpy.bool``, so
    that "expected bool, got numpy.bool" reads right)."""
    if value is None:
        return "None"
    cls = type(value)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


# Which tags each base type accepts (an int is a float, a float a complex, all Scalars).
_ACCEPTS: Final[dict[str, frozenset[Tag]]] = {
    "Tensor": frozenset({Tag.tensor}),
    "int": frozenset({Tag.int}),
    "SymInt": frozenset({Tag.int}),
    "DeviceIndex": frozenset({Tag.int}),
    "float": frozenset({Tag.int, Tag.float}),
    "SymFloat": frozenset({Tag.int, Tag.float}),
    "complex": frozenset({Tag.int, Tag.float, Tag.complex}),
    "bool": frozenset({Tag.bool}),
    "SymBool": frozenset({Tag.bool}),
    "Scalar": frozenset({Tag.bool, Tag.int, Tag.float, Tag.complex}),
    "str": frozenset({Tag.str}),
    "ScalarType": frozenset({Tag.scalar_type}),
    "Layout": frozenset({Tag.layout}),
    "MemoryFormat": frozenset({Tag.memory_format}),
    "Device": frozenset({Tag.device, Tag.str}),
    "NoneType": frozenset({Tag.none}),
}


# Note [Ints are int64]
# ~~~~~~~~~~~~~~~~~~~~~
# An int argument (int, SymInt, DeviceIndex, and an int passed as a Scalar) is an int64,
# as in PyTorch, where a Python int past it fails to unpack ("Overflow when unpacking
# long"). Python's ints have no bound, and kernels would meet one as a bare
# OverflowError (or as a silently rounded float), so the boxed check refuses it, and the
# entries refuse one that passed their exact-type tests when the kernel fails on it (Note
# [Ints too large for their argument] in dispatch/_arguments.py).
_INT64: Final = frozenset({"int", "SymInt", "DeviceIndex", "Scalar"})
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_INT64_RANGE: Final = "outside int64's range (-2**63 to 2**63 - 1)"


def _int_shown(value: int) -> str:
    """``value`` for a message: an int of too many digits cannot even be made a string."""
    return str(value) if value.bit_length() <= 80 else f"an int of {value.bit_length()} bits"


def is_overflow(problem: str) -> bool:
    """Whether ``mismatch``'s ``problem`` is an int outside int64 (of the value or an
    element of it): the value has the right type and too large a magnitude."""
    return problem.endswith(_INT64_RANGE)


def is_sequence(value: object) -> bool:
    """Whether ``value`` is what a list argument takes as a sequence of items (any
    ``Sequence`` but text), rather than a lone value."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def canonical(type_: Type, value: Any) -> Any:
    """``value`` as a kernel receives it, for a value that fits ``type_`` (``mismatch`` is
    None): a lone value for a sized list (``int[1] dim`` given ``0``) becomes the list it
    stands for, as in PyTorch; anything else is returned as it is."""
    inner = type_.elem if isinstance(type_, OptionalType) else type_
    if isinstance(inner, ListType) and inner.size is not None and value is not None:
        if not isinstance(value, (list, tuple)):
            if is_sequence(value):
                return list(cast("Sequence[object]", value))  # a range, or another sequence mismatch took
            return [value] * inner.size
        return cast("list[object] | tuple[object, ...]", value)
    return value


def dtype_of_python_type(type_: Type, value: Any) -> Any:
    """``value``, or the ScalarType that one of Python's number types stands for when it
    is passed for a ``ScalarType`` argument (``dtype=float`` is float64: Note [Python
    types as dtypes] in vocabulary/_dtypes.py)."""
    if type(value) is type:
        inner = type_.elem if isinstance(type_, OptionalType) else type_
        if isinstance(inner, BaseType) and inner.name == "ScalarType":
            return PYTHON_TYPE_DTYPES.get(value, value)
    return value


# Note [Numbers that are not Python's]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch's Python functions take numpy's numbers where they take Python's: any integer
# with ``__index__`` (``np.int64(2)``, a 0-dim integer array) where an int goes, in sizes,
# dims and Scalars, and any numpy scalar (``np.float32(0.5)``, ``np.complex64(1)``; not a
# 0-dim array) where a float, complex or Scalar goes, as the Python number it holds
# (``np.float32(2)`` is the wrapped number 2.0: ``x * it`` keeps ``x``'s dtype). torch
# takes ``np.bool_`` there as a float (``bool_tensor + np.True_`` is float32), and so does
# this; it takes ``np.complex64`` as its real part, with a warning, where this keeps it
# complex, as ``np.complex128`` is in both. So do the unboxed calls here (the functional API, methods, handles):
# ``plain_number`` gives such a value as its Python number, before the full check
# (``fix_arguments``, ``binding_problem`` in typedops/dispatch), so a kernel only ever sees
# Python's numbers. The common call pays nothing: the entries' exact-type tests fail on
# such a value, and only then does the full check run. A bool argument takes Python's
# bools only, as torch's does; a tensor stays a tensor; a boxed stack, which holds
# IValues, takes Python's numbers only.
_INDEXED: Final = frozenset({"int", "SymInt", "DeviceIndex", "Scalar", "float", "SymFloat", "complex"})
_INEXACT: Final = frozenset({"Scalar", "float", "SymFloat", "complex"})


def plain_number(type_: Type, value: Any) -> Any:
    """``value``, with numpy's number passed for an int, float, complex or Scalar (or an
    int list's element) given as the Python number it stands for (Note [Numbers that are
    not Python's])."""
    inner = type_.elem if isinstance(type_, OptionalType) else type_
    if isinstance(inner, ListType):
        elem = inner.elem
        if not (isinstance(elem, BaseType) and elem.name in _INDEXED):
            return value
        if is_sequence(value):
            items = cast("Sequence[object]", value)
            return [_as_int(item) for item in items] if any(_indexes(item) for item in items) else value
        return _as_int(value)  # a lone value for a sized list
    if isinstance(inner, BaseType) and inner.name in _INDEXED:
        if inner.name in _INEXACT and type(value) not in _TAG_BY_CLASS and _numpy_scalar(value):
            number = python_number(value)  # np.float32, np.bool_, np.complex64, np.int64
            return number if type(number) in (int, float, complex) else value
        return _as_int(value)
    return value


def is_number(value: object) -> bool:
    """Whether ``value`` is a number a Scalar takes: Python's (a bool too) or numpy's
    (Note [Numbers that are not Python's])."""
    return isinstance(value, (int, float, complex)) or _numpy_scalar(value)


def python_number(value: Any) -> Any:
    """A numpy scalar as the Python number torch takes it for (``np.bool_`` a float: Note
    [Numbers that are not Python's]); anything else as it is."""
    if not _numpy_scalar(value):
        return value
    number = value.item()
    return float(number) if type(number) is bool else number


def _numpy_scalar(value: object) -> bool:
    """Whether ``value`` is a numpy scalar (numpy is not imported to tell: without it
    loaded, nothing is one)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.generic)


def _indexes(value: object) -> bool:
    """Whether ``value`` is an integer that is not an int, bool or tensor."""
    cls = type(value)
    return cls not in _TAG_BY_CLASS and hasattr(cls, "__index__") and not isinstance(value, tensor_class())


def _as_int(value: Any) -> Any:
    if not _indexes(value):
        return value
    try:
        return operator.index(value)
    except TypeError:  # a __index__ that refuses (a numpy integer array of more than one element)
        return value


def mismatch(type_: Type, value: Any) -> str | None:
    """Why ``value`` cannot be passed as ``type_`` (None when it can)."""
    if isinstance(type_, OptionalType):
        return None if value is None else mismatch(type_.elem, value)
    if isinstance(type_, BaseType):
        accepted = _ACCEPTS.get(type_.name)
        if accepted is None:  # Any, Generator, Storage, ...: not checked
            return None
        tag = tag_of(value)
        if tag in accepted:
            if tag is Tag.int and type_.name in _INT64 and not _INT64_MIN <= value <= _INT64_MAX:
                return f"expected {type_.name}, got {_int_shown(value)}, {_INT64_RANGE}"
            return None
        return f"expected {type_.name}, got {type_name(value)}"
    if isinstance(type_, ListType):
        if type_.size is not None and tag_of(value) in (Tag.int, Tag.bool, Tag.float) and mismatch(type_.elem, value) is None:
            return None  # a lone value broadcast to a sized list, as in 'int[2] stride=1'
        if not is_sequence(value):
            return f"expected a list ({type_}), got {type_name(value)}"
        # A list's size is a hint for broadcasting a lone value, not a length the
        # binding enforces (PyTorch's IntArrayRef[N] takes any length; kernels check).
        # isinstance leaves the elements Unknown to pyright; a cast would add a call to the
        # argument check of every call with a list argument that is not all ints.
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType] -- above
            problem = mismatch(type_.elem, item)
            if problem is not None:
                return f"element {i}: {problem}"
        return None
    if isinstance(type_, TupleType):
        if not isinstance(value, tuple):
            return f"expected a tuple ({type_}), got {type_name(value)}"
        items = cast("tuple[object, ...]", value)
        if len(items) != len(type_.elems):
            return f"expected a tuple ({type_}), got {type_name(items)}"
        for i, (elem, item) in enumerate(zip(type_.elems, items)):
            problem = mismatch(elem, item)
            if problem is not None:
                return f"element {i}: {problem}"
        return None
    if isinstance(type_, DictType):
        if not isinstance(value, Mapping):
            return f"expected a dict ({type_}), got {type_name(value)}"
        for k, v in cast("Mapping[object, object]", value).items():
            problem = mismatch(type_.key, k) or mismatch(type_.value, v)
            if problem is not None:
                return f"entry {k!r}: {problem}"
        return None
    if isinstance(type_, (TypeVar, ClassType, FutureType, AwaitType, RRefType)):
        return None
    return None
