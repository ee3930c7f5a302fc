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

__all__ = [
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
    if isinstance(value, tuple):
        return "[" + ", ".join(format_literal(v) for v in value) + "]"
    raise TypeError(
        f"cannot write {value!r} of type {type(value).__name__} as a schema default; "
        "use None, a bool, int, float, str, EnumDefault or a tuple of those"
    )
