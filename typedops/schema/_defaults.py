"""Default-value literals: checking their text, reading their value, writing canonical text.

A schema keeps each default as the exact literal text it was written with (``1.``,
``1e-05``, ``'none'`` and ``"none"`` all stay as they are), so printing is lossless. This
module turns that text into a Python value and a Python value into canonical text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Union

from ..vocabulary import ArgumentError
from ._types import ANY, BaseType, ListType, OptionalType, Type, TypeVar

__all__ = [
    "default_mismatch",
    "EnumDefault",
    "DefaultValue",
    "LITERAL_RE",
    "literal_value",
    "format_literal",
]

_STRING: Final = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
_NUMBER: Final = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|-?inf|nan"
_ATOM: Final = rf"{_STRING}|{_NUMBER}|[A-Za-z_][A-Za-z_0-9]*"
# A whole literal: an atom, or a flat list of atoms with optional spaces after commas.
LITERAL_RE: Final = re.compile(rf"(?:{_ATOM})|\[ *(?:(?:{_ATOM}) *(?:, *(?:{_ATOM}) *)*)?\]")
_LIST_ITEM_RE: Final = re.compile(rf" *({_ATOM}) *(?:,|$)")
_INT_RE: Final = re.compile(r"-?\d+")
_NONE_TYPE: Final = BaseType("NoneType")
# A backslash escape in a quoted default, read as Python reads it (\n, \x41, \101, \u00e9,
# \N{DEGREE SIGN}). An escape Python does not know, or a malformed one, stays as written.
_ESCAPE_RE: Final = re.compile(
    r"\\(?:(?P<octal>[0-7]{1,3})|x(?P<x>[0-9A-Fa-f]{2})|u(?P<u>[0-9A-Fa-f]{4})"
    r"|U(?P<U>[0-9A-Fa-f]{8})|N\{(?P<name>[^}]*)\}|(?P<char>.))",
    re.DOTALL,
)
_SIMPLE_ESCAPES: Final = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
    "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class EnumDefault:
    """A default written as a bare name: ``contiguous_format``, ``Mean``, ``long``.

    The schema layer does not know enums; the layer that owns ``MemoryFormat``,
    ``ScalarType`` or a reduction turns the name into its value.
    """

    name: str


DefaultValue = Union[
    None, bool, int, float, str, EnumDefault, tuple["DefaultValue", ...]
]


def literal_value(text: str) -> DefaultValue:
    """The Python value of a default literal as it appears in schema text.

    Lists become tuples (defaults are shared, so they must be immutable), quoted
    strings are unescaped, ``inf``/``-inf``/``nan`` become floats and other bare names
    become ``EnumDefault``.
    """
    if text.startswith("["):
        inner = text[1:-1].strip()
        if not inner:
            return ()
        return tuple(literal_value(m.group(1)) for m in _LIST_ITEM_RE.finditer(inner))
    first = text[0]
    if first in "\"'":
        # Not ast.literal_eval: it refuses raw NUL and CR characters and malformed
        # escapes, all of which the literal grammar admits.
        return _ESCAPE_RE.sub(_unescape, text[1:-1])
    if text == "True":
        return True
    if text == "False":
        return False
    if text == "None":
        return None
    if text in ("inf", "-inf", "nan"):
        return float(text)
    if first.isdigit() or first in "-.":
        if _INT_RE.fullmatch(text):
            return int(text)
        return float(text)
    return EnumDefault(text)


def _unescape(match: re.Match[str]) -> str:
    """The character one ``_ESCAPE_RE`` match stands for."""
    groups = match.groupdict()
    if groups["char"] is not None:
        return _SIMPLE_ESCAPES.get(groups["char"], match.group())
    if groups["name"] is not None:
        try:
            return unicodedata.lookup(groups["name"])
        except KeyError:
            return match.group()
    octal = groups["octal"]
    code = int(octal, 8) if octal is not None else int(groups["x"] or groups["u"] or groups["U"], 16)
    return chr(code) if code <= 0x10FFFF else match.group()


def format_literal(value: DefaultValue) -> str:
    """Canonical schema text for a Python default value (the inverse of ``literal_value``)."""
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
        return f'"{escaped}"'
    if isinstance(value, EnumDefault):
        return value.name
    if isinstance(value, tuple):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers pass anything
        return "[" + ", ".join(format_literal(v) for v in value) + "]"
    raise ArgumentError(
        f"cannot write {value!r} of type {type(value).__name__} as a schema default; "
        "use None, a bool, int, float, str, EnumDefault or a tuple of those"
    )


# -- which defaults fit which types ------------------------------------------------
# Which literal kinds each base type accepts as a default. TorchScript writes enum
# defaults as their integer codes, so the enum-like types take ints as well as names.
_LITERAL_KINDS: Final[dict[str, frozenset[str]]] = {
    "bool": frozenset({"bool"}),
    "SymBool": frozenset({"bool"}),
    "int": frozenset({"int"}),
    "SymInt": frozenset({"int"}),
    "DeviceIndex": frozenset({"int"}),
    "float": frozenset({"int", "float"}),
    "SymFloat": frozenset({"int", "float"}),
    "complex": frozenset({"int", "float"}),
    "Scalar": frozenset({"int", "float", "bool"}),
    "str": frozenset({"str"}),
    "Device": frozenset({"str"}),
    "Dimname": frozenset({"str"}),
    "ScalarType": frozenset({"int"}),
    "MemoryFormat": frozenset({"int"}),
    "Layout": frozenset({"int"}),
    "QScheme": frozenset({"int"}),
}
# The bare names each type accepts as a default.
_NAMED_DEFAULTS: Final[dict[str, frozenset[str]]] = {
    "int": frozenset({"Mean", "Sum"}),  # reductions, as in 'int reduction=Mean'
    "ScalarType": frozenset(
        {"uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128", "bool", "byte", "char", "short", "int",
         "long", "half", "float", "double", "cfloat", "cdouble"}
    ),
    "MemoryFormat": frozenset(
        {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"}
    ),
    "Layout": frozenset({"strided", "sparse_coo"}),
    "QScheme": frozenset(
        {"per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
         "per_channel_symmetric", "per_channel_affine_float_qparams"}
    ),
}  # fmt: skip


def _literal_kind(text: str) -> str:
    """'str', 'list', 'bool', 'none', 'int', 'float' or 'name' for a checked literal."""
    first = text[0]
    if first in "\"'":
        return "str"
    if first == "[":
        return "list"
    if text in ("True", "False"):
        return "bool"
    if text == "None":
        return "none"
    if first.isdigit() or first in "-." or text in ("inf", "nan"):
        return "int" if text.lstrip("-").isdigit() else "float"
    return "name"


def default_mismatch(type_: Type, text: str) -> str | None:
    """Why literal ``text`` cannot be a default of ``type_`` (None when it can).

    The parser refuses such a default with this reason, and so does ``Argument``.

    A lone value fits a list type (it is broadcast: ``int[2] stride=1``); a list
    literal's elements must each fit the element type.
    """
    kind = _literal_kind(text)
    if kind == "none":
        if isinstance(type_, OptionalType) or type_ in (ANY, _NONE_TYPE):
            return None
        return "only an optional type ('T?') takes None"
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    if isinstance(type_, TypeVar) or type_ == ANY:
        return None
    if kind == "list":
        if not isinstance(type_, ListType):
            return "a list default needs a list type"
        for match in _LIST_ITEM_RE.finditer(text[1:-1]):
            problem = default_mismatch(type_.elem, match.group(1))
            if problem is not None:
                return f"list element {match.group(1)}: {problem}"
        return None
    if isinstance(type_, ListType):
        type_ = type_.elem  # a lone value is broadcast to every element
        if isinstance(type_, OptionalType):
            type_ = type_.elem
    if not isinstance(type_, BaseType):
        return f"type '{type_}' takes no default other than None"
    name = type_.name
    if kind == "name":
        if text in ("inf", "nan"):
            kind = "float"
        elif text in _NAMED_DEFAULTS.get(name, ()):
            return None
        else:
            names = sorted(_NAMED_DEFAULTS.get(name, ()))
            allowed = f"one of {', '.join(names)}" if names else "no bare names"
            return f"type '{name}' takes {allowed} as a named default"
    if kind in _LITERAL_KINDS.get(name, ()):
        return None
    kinds = sorted(_LITERAL_KINDS.get(name, ()))
    takes = " or ".join(kinds) if kinds else "only None"
    return f"type '{name}' takes {takes} defaults, not {kind}"
