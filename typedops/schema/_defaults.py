"""Default-value literals: checking their text, reading their value, writing canonical text.

A schema keeps each default as the exact literal text it was written with (``1.``,
``1e-05``, ``'none'`` and ``"none"`` all stay as they are), so printing is lossless. This
module turns that text into a Python value and a Python value into canonical text.
"""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Union

from typing_extensions import assert_never

from ..vocabulary import ArgumentError
from ._lexer import clipped
from ._messages import (
    _FLOAT_RANGE,
    _INT_RANGE,
    _LONE_UNSIZED,
    _NO_DEFAULT,
    _NO_LIST_DEFAULT,
    _OPTIONAL_LIST,
    _TYPE_VAR_DEFAULT,
    BAD_LIST_ELEMENT,
    DID_YOU_MEAN_DEFAULT_TYPE,
    LIST_DEFAULT_NEEDS_LIST,
    NAMED_DEFAULTS_ARE,
    NONE_NEEDS_OPTIONAL,
    NO_BARE_NAMES,
    NO_SCHEMA_DEFAULT,
    ONE_OF_NAMES,
    ONLY_NONE_DEFAULT,
    WRONG_LITERAL_KIND,
)
from ._types import BaseType, ListType, OptionalType, Type, TypeVar

__all__ = [
    "default_mismatch",
    "EnumDefault",
    "DefaultValue",
    "LITERAL_RE",
    "list_literal_text",
    "ESCAPE",
    "bad_escape",
    "literal_value",
    "format_literal",
]

# The escapes torch's lexer reads in a string: \a \b \f \n \t \v \\ \' \" and three-digit
# octal up to \377 (not \r, \x41, \u00e9 or \0).
ESCAPE: Final = r"\\(?:[abfntv\\'\"]|[0-3][0-7][0-7])"
_STRING: Final = rf'"(?:[^"\\\n]++|{ESCAPE})*+"|\'(?:[^\'\\\n]++|{ESCAPE})*+\''
# 'inf' and 'nan' are read as names (and then as floats); '-inf' is a number.
_NUMBER: Final = r"-?(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?+\d++)?+|-inf"
_ATOM: Final = rf"(?>{_STRING}|{_NUMBER}|[A-Za-z_][A-Za-z_0-9]*+)"
_SPACE: Final = r"[ \t\n\r\f\v]*+"
# A whole literal: an atom, or a flat list of atoms with any whitespace around its commas.
# Every repeat is possessive and every atom atomic, so matching never backtracks (Note
# [Linear-time parsing] in _lexer.py).
LITERAL_RE: Final = re.compile(rf"{_ATOM}|\[{_SPACE}(?:{_ATOM}{_SPACE}(?:,{_SPACE}{_ATOM}{_SPACE})*+)?+\]")
_LIST_ITEM_RE: Final = re.compile(rf"{_SPACE}({_ATOM}){_SPACE}(?:,|$)")
_INT_RE: Final = re.compile(r"-?\d+")
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


_TORCH_ESCAPE_RE: Final = re.compile(ESCAPE)
_ANY_ESCAPE_RE: Final = re.compile(r"\\(?:[0-7]{1,3}|.)", re.DOTALL)


def bad_escape(text: str) -> str | None:
    """The first escape in quoted ``text`` that torch's lexer does not read, or None."""
    for match in _ANY_ESCAPE_RE.finditer(text, 1, len(text) - 1):
        if not _TORCH_ESCAPE_RE.fullmatch(match.group()):
            return match.group()
    return None


_WHITESPACE: Final = " \t\n\r\f\v"
_SIGN_SPACE_RE: Final = re.compile(r"^-[ \t\n\r\f\v]++")


def list_literal_text(text: str) -> str:
    """The text the parser keeps for list literal ``text`` (``[...]``, as written).

    Whitespace around tokens never changes meaning, so a list written in any spacing is
    kept in canonical spacing (``[0, 1]``); the two spellings ``native_functions.yaml``
    uses, ``[0, 1]`` and ``[0,1]``, are kept as written so printing stays lossless.
    Text holding quotes is returned unchanged (no list default holds strings).
    """
    inner = text[1:-1]
    if '"' in inner or "'" in inner:
        return text
    if not inner.strip(_WHITESPACE):
        return "[]"
    items = [_SIGN_SPACE_RE.sub("-", item.strip(_WHITESPACE)) for item in inner.split(",")]
    spaced = "[" + ", ".join(items) + "]"
    return text if text == spaced or text == "[" + ",".join(items) + "]" else spaced


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
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\015")
        return f'"{escaped}"'
    if isinstance(value, EnumDefault):
        return value.name
    if isinstance(value, tuple):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers pass anything
        return "[" + ", ".join(format_literal(v) for v in value) + "]"
    raise ArgumentError(NO_SCHEMA_DEFAULT.format(value=value, kind=type(value).__name__))


# -- which defaults fit which types ------------------------------------------------
class LiteralKind(enum.Enum):
    """What kind of value a default's literal text is; the values are the words messages use."""

    str = "str"  # quoted
    list = "list"  # [...]
    bool = "bool"  # True, False
    none = "none"  # None
    int = "int"
    float = "float"  # with a point or exponent, inf, nan
    bare_name = "name"  # a bare name (Mean, contiguous_format, float32...)


_L: Final = LiteralKind
# Which literal kinds each base type accepts as a default. TorchScript writes enum
# defaults as their integer codes, so the enum-like types take ints as well as names.
# A base type not listed takes no default but None, and only when optional.
_LITERAL_KINDS: Final[dict[str, frozenset[LiteralKind]]] = {
    "bool": frozenset({_L.bool}),
    "int": frozenset({_L.int}),
    "SymInt": frozenset({_L.int}),
    "DeviceIndex": frozenset({_L.int}),
    "float": frozenset({_L.int, _L.float}),
    "complex": frozenset({_L.float}),  # torch's parser reads a complex default as a float
    "Scalar": frozenset({_L.int, _L.float, _L.bool}),
    "str": frozenset({_L.str}),
    "Device": frozenset({_L.str}),
    "ScalarType": frozenset({_L.int}),
    "MemoryFormat": frozenset({_L.int}),
    "Layout": frozenset({_L.int}),
}
# The element types a list default ('[1, 2]', or a lone value for a sized list) may have:
# those torch's parser reads list constants of.
_LIST_ELEMENTS: Final = frozenset(
    {"bool", "int", "SymInt", "DeviceIndex", "float", "complex", "ScalarType", "MemoryFormat", "Layout"}
)
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
}  # fmt: skip
# Numbers torch reads into 64-bit values: ints past int64 and floats past double are refused.
_INT64_MAX: Final = 2**63 - 1
_INT64_DIGITS: Final = 19


def _literal_kind(text: str) -> LiteralKind:
    """The kind of a checked literal."""
    first = text[0]
    if first in "\"'":
        return _L.str
    if first == "[":
        return _L.list
    if text in ("True", "False"):
        return _L.bool
    if text == "None":
        return _L.none
    if first.isdigit() or first in "-." or text in ("inf", "nan"):
        return _L.int if text.lstrip("-").isdigit() else _L.float
    return _L.bare_name


def _number_problem(kind: LiteralKind, text: str) -> str | None:
    """Why number literal ``text`` does not fit the 64-bit value torch reads it into."""
    if kind is _L.int:
        digits = text.lstrip("-").lstrip("0")
        if len(digits) > _INT64_DIGITS or int(digits or "0") > _INT64_MAX + text.startswith("-"):
            return _INT_RANGE.format(text=clipped(text))
    elif text[-3:] != "inf" and text != "nan":
        value = float(text)
        mantissa = text.partition("e")[0].partition("E")[0]
        if math.isinf(value) or (value == 0.0 and mantissa.strip("-.0")):
            return _FLOAT_RANGE.format(text=clipped(text))
    return None


def _type_var_hint(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(_LITERAL_KINDS), n=1)
    return DID_YOU_MEAN_DEFAULT_TYPE.format(name=close[0]) if close else ""


def default_mismatch(type_: Type, text: str) -> str | None:
    """Why literal ``text`` cannot be a default of ``type_`` (None when it can).

    The parser refuses such a default with this reason, and so does ``Argument``.

    A lone value fits a sized list type (it is broadcast: ``int[2] stride=1``); a list
    literal's elements must each fit the element type.
    """
    kind = _literal_kind(text)
    optional = isinstance(type_, OptionalType)
    if kind is _L.none:
        return None if optional else NONE_NEEDS_OPTIONAL
    if kind is _L.int or kind is _L.float:
        problem = _number_problem(kind, text)
        if problem is not None:
            return problem
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    but_none = " but None" if optional else ""
    if isinstance(type_, TypeVar):
        hint = _type_var_hint(type_.name)
        return _TYPE_VAR_DEFAULT.format(name=type_.name, but_none=but_none, hint=hint)
    if isinstance(type_, ListType):
        if optional and kind is _L.list:
            return _OPTIONAL_LIST
        return _list_default_mismatch(type_, text, kind, but_none)
    if kind is _L.list:
        return LIST_DEFAULT_NEEDS_LIST
    return _single_default_mismatch(type_, text, kind, but_none)


def _list_default_mismatch(type_: ListType, text: str, kind: LiteralKind, but_none: str) -> str | None:
    elem = type_.elem
    if not (isinstance(elem, BaseType) and elem.name in _LIST_ELEMENTS):
        return _NO_LIST_DEFAULT.format(elem=elem, but_none=but_none)
    if kind is not _L.list:
        if type_.size is None:
            return _LONE_UNSIZED.format(elem=elem, text=text)
        return _single_default_mismatch(elem, text, kind, "")  # broadcast to every element
    for item in dict.fromkeys(m.group(1) for m in _LIST_ITEM_RE.finditer(text[1:-1])):
        item_kind = _literal_kind(item)
        problem = _single_default_mismatch(elem, item, item_kind, "")
        if problem is None and (item_kind is _L.int or item_kind is _L.float):
            problem = _number_problem(item_kind, item)
        if problem is not None:
            return BAD_LIST_ELEMENT.format(item=item, problem=problem)
    return None


def _single_default_mismatch(type_: Type, text: str, kind: LiteralKind, but_none: str) -> str | None:
    if not isinstance(type_, BaseType):
        return ONLY_NONE_DEFAULT.format(type=type_)
    name = type_.name
    kinds = _LITERAL_KINDS.get(name)
    if kinds is None:
        return _NO_DEFAULT.format(name=name, but_none=but_none)
    if kind is _L.bare_name:
        if text in ("inf", "nan"):
            return _base_mismatch(name, _L.float, kinds)
        if text in _NAMED_DEFAULTS.get(name, ()):
            return None
        names = sorted(_NAMED_DEFAULTS.get(name, ()))
        allowed = ONE_OF_NAMES.format(names=", ".join(names)) if names else NO_BARE_NAMES
        return NAMED_DEFAULTS_ARE.format(name=name, allowed=allowed)
    if kind is _L.str or kind is _L.bool or kind is _L.int or kind is _L.float:
        return _base_mismatch(name, kind, kinds)
    if kind is _L.list or kind is _L.none:  # an element of a list default: '[None]'
        return _base_mismatch(name, kind, kinds)
    assert_never(kind)


def _base_mismatch(name: str, kind: LiteralKind, kinds: frozenset[LiteralKind]) -> str | None:
    """Why a ``kind`` literal cannot be a default of base type ``name`` (None when it can)."""
    if kind in kinds:
        return None
    return WRONG_LITERAL_KIND.format(name=name, kinds=" or ".join(sorted(k.value for k in kinds)), kind=kind.value)
