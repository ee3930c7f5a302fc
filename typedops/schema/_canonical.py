"""The parser's fast path for schema text in canonical spacing.

Note [Canonical fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Almost every schema is written in canonical spacing: ', ' between arguments, ' -> '
before the returns, one space between a type and its name. For such text, string
methods (which run in C) split out the pieces, and each piece is checked completely:
its type text through the interned type table (filled by the full type parser), its
name with isidentifier(), its default with the literal grammar. Anything the fast path
is unsure of -- quotes, varargs, Dict(...) or tuple types, a mis-split list default --
makes it return None, and the token parser decides (and explains any error).

Both paths must build equal schemas from every text, so the fast path accepts only
*canonical* pieces: the type table holds a type only for the exact text the type prints
as (``Tensor?[]``, not `` Tensor?[]`` or ``Tensor ?[]``), so no whitespace the splitting
did not expect can hide in a piece and change its meaning (``->  (Tensor, Tensor)`` is
two returns, as with one space). A property test re-spaces real schemas and holds both
paths to the same parse.
"""

from __future__ import annotations

from typing import Final

from ..vocabulary import BoundedCache

from ._build import _arg_alias, _arg_default, _arg_depth, _arg_name, _arg_type, _new
from ._build import make_return as _return
from ._build import schema as _schema
from ._defaults import LITERAL_RE, default_mismatch, list_literal_text
from ._lexer import END, Failure, tokenize
from ._model import Argument, FunctionSchema, Return, type_with_alias
from ._type_parser import parse_type_tokens
from ._types import RESERVED_WORDS, AliasInfo, BaseType, Type

__all__ = ["parse_canonical", "clear_type_table"]

_TYPE_TABLE_LIMIT: Final = 4096
_TYPE_TEXT_LIMIT: Final = 200  # longer type text is parsed but not interned
# Type text -> (type, alias, alias depth), or None for text that is not a canonical type.
_type_table: Final[BoundedCache[str, tuple[Type, AliasInfo | None, int] | None]] = BoundedCache(
    _TYPE_TABLE_LIMIT, "interned schema types"
)
# Marks a type text the table has not seen (the table holds None for invalid text).
_UNSEEN: Final[tuple[Type, AliasInfo | None, int]] = (BaseType("Any"), None, -1)
# (type text, default text) pairs already checked to fit: a memo of a yes/no check keyed
# by strings (cheap to hash); the parsed schema itself is never cached.
_fitting_defaults: Final[BoundedCache[tuple[str, str], bool]] = BoundedCache(
    _TYPE_TABLE_LIMIT, "defaults checked to fit their types"
)


def _interned_type(text: str) -> tuple[Type, AliasInfo | None, int] | None:
    """``(type, alias, alias_depth)`` for canonical type text such as ``Tensor(a!)[]``, else None."""
    toks = tokenize(text)
    try:
        type_, alias, depth, i = parse_type_tokens(toks, 0)
        canonical = toks[i] == END and type_with_alias(type_, alias, depth) == text
        entry = (type_, alias, depth) if canonical else None
    except Failure:
        entry = None
    if len(text) <= _TYPE_TEXT_LIMIT:
        _type_table.put(text, entry)
    return entry


# Note [Shared arguments]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Arguments and returns are immutable, and a library repeats the same ones: the 9,238
# arguments of the 2,584 schemas of native_functions.yaml are 1,091 distinct texts
# ('Tensor self', 'int dim', 'bool keepdim=False', ...), their 2,911 returns 127. The
# fast path keeps the ``Argument`` (and ``Return``) it built for each piece of canonical
# text and gives every later schema with that text the same object: fewer objects per
# defined op for the garbage collector to walk (Note [Registration and the collector])
# and less memory. What a piece's text alone decides is checked once, when it is built;
# what depends on its schema (duplicate names, a required argument after a defaulted
# one) is checked for every schema.
_PIECE_TABLE_LIMIT: Final = 8192
_argument_table: Final[BoundedCache[str, Argument]] = BoundedCache(_PIECE_TABLE_LIMIT, "shared schema arguments")
_return_table: Final[BoundedCache[str, Return]] = BoundedCache(_PIECE_TABLE_LIMIT, "shared schema returns")


def clear_type_table() -> None:
    """Forget interned types, shared arguments and returns, and checked defaults
    (benchmarks start every run cold)."""
    _type_table.clear()
    _argument_table.clear()
    _return_table.clear()
    _fitting_defaults.clear()


def _argument(piece: str) -> Argument | None:
    """The shared ``Argument`` for canonical argument text, or None if it is not one."""
    decl, eq, default = piece.partition("=")
    type_text, _, arg_name = decl.rpartition(" ")
    entry = _type_table.get(type_text, _UNSEEN)
    if entry is _UNSEEN:
        entry = _interned_type(type_text)
    if entry is None or not arg_name.isidentifier() or arg_name in RESERVED_WORDS:
        return None
    if eq:
        if _fitting_defaults.get((type_text, default)) is None and not _check_default(entry[0], type_text, default):
            return None
    else:
        default = None  # type: ignore[assignment]  # no '=': the argument has no default
    arg = _new(Argument)
    _arg_name(arg, arg_name)
    _arg_type(arg, entry[0])
    _arg_default(arg, default)
    _arg_alias(arg, entry[1])
    _arg_depth(arg, entry[2])
    return _argument_table.put(piece, arg)


def parse_canonical(text: str) -> FunctionSchema | None:
    """The fast path of Note [Canonical fast path]: a schema, or None to use the token parser."""
    open_paren = text.find("(")
    close = text.find(") -> ", open_paren)
    if close < 0 or '"' in text or "'" in text or "..." in text or not text.isascii():
        return None
    namespace, sep, rest = text[:open_paren].partition("::")
    if not sep:
        rest = namespace
        namespace = ""
    elif not namespace.isidentifier() or namespace in RESERVED_WORDS:
        return None
    name, dot, overload = rest.partition(".")
    reserved = RESERVED_WORDS
    if not name.isidentifier() or name in reserved:
        return None
    if dot and (not overload.isidentifier() or overload in reserved):
        return None  # 'name.' with an empty overload is the token parser's to refuse
    shared = _argument_table.get
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    current = positional
    names: set[str] = set()
    seen_default = False
    args_text = text[open_paren + 1 : close]
    if args_text:
        for piece in args_text.split(", "):
            if piece == "*":
                if current is kwarg_only:
                    return None
                current = kwarg_only
                continue
            arg = shared(piece) or _argument(piece)
            if arg is None or arg.name in names:
                return None
            names.add(arg.name)
            if arg.default is not None:
                seen_default = True
            elif seen_default and current is positional:
                return None  # a required positional argument after a defaulted one
            current.append(arg)
        if current is kwarg_only and not kwarg_only:
            return None
    returns = _returns(text[close + 5 :])
    if returns is None:
        return None
    return _schema(name, namespace, overload, positional, kwarg_only, returns, False, False)


def _return_of(piece: str) -> Return | None:
    """The shared ``Return`` for canonical return text (``Tensor``, ``Tensor(a) out``)."""
    entry = _type_table.get(piece, _UNSEEN)
    if entry is _UNSEEN:
        entry = _interned_type(piece)
    if entry is not None:
        return _return_table.put(piece, _return(entry[0], None, entry[1], entry[2]))
    type_text, _, return_name = piece.rpartition(" ")
    entry = _type_table.get(type_text, _UNSEEN)
    if entry is _UNSEEN:
        entry = _interned_type(type_text)
    if entry is None or not return_name.isidentifier() or return_name in RESERVED_WORDS:
        return None
    return _return_table.put(piece, _return(entry[0], return_name, entry[1], entry[2]))


def _returns(returns_text: str) -> list[Return] | None:
    if returns_text[:1] == "(":
        if returns_text[-1:] != ")":
            return None
        inner = returns_text[1:-1]
        pieces = inner.split(", ") if inner else []
        if len(pieces) == 1 and pieces[0][:1] == "(":
            return None  # '((int, Tensor))': leave the tuple-typed return to the token parser
    else:
        pieces = [returns_text]
    returns: list[Return] = []
    return_names: set[str] = set()
    shared = _return_table.get
    for piece in pieces:
        ret = shared(piece) or _return_of(piece)
        if ret is None:
            return None
        if ret.name is not None:
            if ret.name in return_names:
                return None
            return_names.add(ret.name)
        returns.append(ret)
    return returns


def _check_default(type_: Type, type_text: str, default: str) -> bool:
    if not LITERAL_RE.fullmatch(default) or default_mismatch(type_, default) is not None:
        return False
    if default[:1] == "[" and list_literal_text(default) != default:
        return False  # a list in unusual spacing: the token parser keeps it canonical
    if len(default) + len(type_text) > _TYPE_TEXT_LIMIT:
        return True
    return _fitting_defaults.put((type_text, default), True)
