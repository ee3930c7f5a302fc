"""The schema parser: schema text -> ``FunctionSchema``.

Note [Parser speed]
~~~~~~~~~~~~~~~~~~~
Parsing sits on the start-up path of every op library, so the hot path is built for speed:
one ``re.findall`` splits the text into tokens in C (whitespace dropped, positions not
kept), a recursive-descent parser walks the token list, built-in types are shared
objects, and the objects the parser builds skip the checks their ``__post_init__`` would
repeat. Only when parsing fails is the text tokenized again with positions, to put the
caret under the offending token. No parsed schema is cached: every call parses.
"""

from __future__ import annotations

import re
from typing import Final, NoReturn

from ..vocabulary import ArgumentError, SchemaParseError
from ._defaults import LITERAL_RE, default_mismatch
from ._build import _arg_alias, _arg_default, _arg_depth, _arg_name, _arg_type, _new
from ._build import alias as _make_alias
from ._build import argument as _argument
from ._build import make_return as _return
from ._build import schema as _schema
from ._model import Argument, FunctionSchema, Return
from ._types import (
    BASE_TYPE_NAMES,
    AliasInfo,
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
)

__all__ = ["parse_schema", "parse_type"]

_STRING: Final = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
# One token per match; group 1 is the token. Order matters: '->' before numbers, a
# bracketed group (list suffix or list default) kept whole so its spacing survives.
_TOKEN_RE: Final = re.compile(
    r"\s*("
    r"->|\.\.\.|::"
    r"|[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*"
    r"|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    rf"|{_STRING}"
    rf"|\[(?:[^\[\]\"']|{_STRING})*\]"
    r"|\S)"
)
_tokenize: Final = _TOKEN_RE.findall

_CONTAINERS: Final = {"Future": FutureType, "Await": AwaitType, "RRef": RRefType}
_BASE_TYPES: Final = {name: BaseType(name) for name in BASE_TYPE_NAMES}
_END: Final = ""  # sentinel token appended after the last one

class _Failure(Exception):
    """Internal: a parse failure at token ``index``; turned into SchemaParseError."""

    def __init__(self, reason: str, index: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index


def _fail(reason: str, index: int) -> NoReturn:
    raise _Failure(reason, index)


def _shown(tok: str) -> str:
    return "end of input" if tok == _END else repr(tok)


def _is_ident(tok: str) -> bool:
    # ASCII only: a non-ASCII letter is a one-character token, never an identifier.
    first = tok[:1]
    return first == "_" or (first.isascii() and first.isalpha())


def parse_schema(text: str) -> FunctionSchema:
    """Parse schema text such as ``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

    Raises ``SchemaParseError`` with the column of, and a caret under, the offending token.
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers pass anything
        raise ArgumentError(f"parse_schema() takes schema text (str), not {type(text).__name__}")
    schema = _parse_canonical(text)
    if schema is not None:
        return schema
    toks = _tokenize(text)
    toks.append(_END)
    try:
        return _parse(toks)
    except _Failure as failure:
        raise _error(failure, text) from None


# Note [Canonical fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# Almost every schema is written in canonical spacing: ', ' between arguments, ' -> '
# before the returns, one space between a type and its name. For such text, string
# methods (which run in C) split out the pieces, and each piece is checked completely:
# its type text through the interned type table (filled by the full type parser), its
# name with isidentifier(), its default with the literal grammar. Anything the fast path
# is unsure of -- quotes, varargs, Dict(...) or tuple types, a mis-split list default --
# makes it return None, and the token parser decides (and explains any error). Both paths
# build equal schemas; a property test holds them to it.

_TYPE_TABLE_LIMIT: Final = 4096
_type_table: dict[str, tuple[Type, AliasInfo | None, int] | None] = {}


def _interned_type(text: str) -> tuple[Type, AliasInfo | None, int] | None:
    """``(type, alias, alias_depth)`` for type text such as ``Tensor(a!)[]``, or None if invalid."""
    toks = _tokenize(text)
    toks.append(_END)
    try:
        type_, alias, depth, i = _type(toks, 0)
        entry = (type_, alias, depth) if toks[i] == _END else None
    except _Failure:
        entry = None
    if len(_type_table) >= _TYPE_TABLE_LIMIT:
        _type_table.clear()
    _type_table[text] = entry
    return entry


def clear_type_table() -> None:
    """Forget interned types and checked defaults (benchmarks start every run cold)."""
    _type_table.clear()
    _fitting_defaults.clear()


def _parse_canonical(text: str) -> FunctionSchema | None:
    """The fast path of Note [Canonical fast path]: a schema, or None to use the token parser."""
    open_paren = text.find("(")
    close = text.find(") -> ", open_paren)
    if close < 0 or '"' in text or "'" in text or "..." in text or not text.isascii():
        return None
    namespace, sep, rest = text[:open_paren].partition("::")
    if not sep:
        rest = namespace
        namespace = ""
    elif not namespace.isidentifier():
        return None
    name, dot, overload = rest.partition(".")
    if not name.isidentifier() or (dot and not overload.isidentifier()):
        return None  # 'name.' with an empty overload is the token parser's to refuse
    table = _type_table
    fitting = _fitting_defaults
    new = _new
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    current = positional
    names: set[str] = set()
    args_text = text[open_paren + 1 : close]
    if args_text:
        for piece in args_text.split(", "):
            if piece == "*":
                if current is kwarg_only:
                    return None
                current = kwarg_only
                continue
            decl, eq, default = piece.partition("=")
            type_text, _, arg_name = decl.rpartition(" ")
            entry = table[type_text] if type_text in table else _interned_type(type_text)
            if entry is None or not arg_name.isidentifier() or arg_name in names:
                return None
            names.add(arg_name)
            if eq:
                if (type_text, default) not in fitting and not _check_default(entry[0], type_text, default):
                    return None
            else:
                default = None  # type: ignore[assignment]  # no '=': the argument has no default
            arg = new(Argument)
            _arg_name(arg, arg_name)
            _arg_type(arg, entry[0])
            _arg_default(arg, default)
            _arg_alias(arg, entry[1])
            _arg_depth(arg, entry[2])
            current.append(arg)
        if current is kwarg_only and not kwarg_only:
            return None
    returns: list[Return] = []
    returns_text = text[close + 5 :]
    if returns_text[:1] == "(":
        if returns_text[-1:] != ")":
            return None
        inner = returns_text[1:-1]
        pieces = inner.split(", ") if inner else []
        if len(pieces) == 1 and pieces[0][:1] == "(":
            return None  # '((int, Tensor))': leave the tuple-typed return to the token parser
    else:
        pieces = [returns_text]
    return_names: set[str] = set()
    for piece in pieces:
        entry = table[piece] if piece in table else _interned_type(piece)
        if entry is not None:
            returns.append(_return(entry[0], None, entry[1], entry[2]))
            continue
        type_text, _, return_name = piece.rpartition(" ")
        entry = table[type_text] if type_text in table else _interned_type(type_text)
        if entry is None or not return_name.isidentifier() or return_name in return_names:
            return None
        return_names.add(return_name)
        returns.append(_return(entry[0], return_name, entry[1], entry[2]))
    return _schema(name, namespace, overload, positional, kwarg_only, returns, False, False)


# (type text, default text) pairs already checked to fit: a memo of a yes/no check keyed
# by strings (cheap to hash); the parsed schema itself is never cached.
_fitting_defaults: set[tuple[str, str]] = set()


def _check_default(type_: Type, type_text: str, default: str) -> bool:
    if not LITERAL_RE.fullmatch(default) or default_mismatch(type_, default) is not None:
        return False
    if len(_fitting_defaults) >= _TYPE_TABLE_LIMIT:
        _fitting_defaults.clear()
    _fitting_defaults.add((type_text, default))
    return True


def parse_type(text: str) -> Type:
    """Parse one type on its own, such as ``Tensor?[]`` or ``Dict(str, int)``.

    Alias annotations are refused here: they belong to arguments and returns.
    """
    toks = _tokenize(text)
    toks.append(_END)
    try:
        type_, alias, _, i = _type(toks, 0)
        if alias is not None:
            _fail("a type on its own takes no alias annotation", 0)
        if toks[i] != _END:
            _fail(f"unexpected {_shown(toks[i])} after the type", i)
        return type_
    except _Failure as failure:
        raise _error(failure, text) from None


def _error(failure: _Failure, text: str) -> SchemaParseError:
    """Slow path: find the column of the failing token by tokenizing again with positions."""
    starts = [(m.start(1), m.end(1)) for m in _TOKEN_RE.finditer(text)]
    if failure.index < len(starts):
        start, end = starts[failure.index]
    else:
        start = end = len(text.rstrip())
    column = start + 1
    return SchemaParseError(f"{failure.reason} (column {column})", text, column, end - start)


def _parse(t: list[str]) -> FunctionSchema:
    # -- name ----------------------------------------------------------------------------
    namespace = ""
    i = 0
    tok = t[0]
    if not _is_ident(tok):
        _fail(f"expected an operator name, found {_shown(tok)}", 0)
    if t[1] == "::":
        if "." in tok:
            _fail(f"namespace {tok!r} must be one identifier", 0)
        namespace = tok
        i = 2
        tok = t[2]
        if not _is_ident(tok):
            _fail(f"expected an operator name after '::', found {_shown(tok)}", 2)
    name, _, overload = tok.partition(".")
    if "." in overload:
        _fail(f"operator name {tok!r} has more than one '.'; write name.overload", i)
    i += 1
    if t[i] != "(":
        _fail(f"expected '(' after the operator name, found {_shown(t[i])}", i)
    i += 1

    # -- arguments -------------------------------------------------------------------------
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    current = positional
    names: set[str] = set()
    star = -1
    vararg = False
    if t[i] == ")":
        i += 1
    else:
        while True:
            tok = t[i]
            if tok == "*":
                if star >= 0:
                    _fail("'*' appears twice; keyword-only arguments take one '*'", i)
                star = i
                current = kwarg_only
                i += 1
                if t[i] != ",":
                    _fail("'*' must be followed by keyword-only arguments", i)
                i += 1
                continue
            if tok == "...":
                vararg = True
                i += 1
                if t[i] != ")":
                    _fail("'...' must be the last argument", i)
                i += 1
                break
            type_, alias, depth, i = _type(t, i)
            tok = t[i]
            if not _is_ident(tok) or "." in tok:
                _fail(f"expected an argument name after type '{type_}', found {_shown(tok)}", i)
            if tok in names:
                _fail(f"argument {tok!r} appears twice; argument names must be unique", i)
            names.add(tok)
            i += 1
            default = None
            if t[i] == "=":
                default, i = _default(t, i + 1, type_, tok)
            current.append(_argument(tok, type_, default, alias, depth))
            tok = t[i]
            if tok == ",":
                i += 1
                if t[i] == ")":
                    _fail("trailing ',' before ')'", i - 1)
            elif tok == ")":
                i += 1
                break
            else:
                _fail(f"expected ',' or ')' after argument {current[-1].name!r}, found {_shown(tok)}", i)
        if star >= 0 and not kwarg_only and not vararg:
            _fail("'*' must be followed by keyword-only arguments", star)

    # -- returns ---------------------------------------------------------------------------
    if t[i] != "->":
        _fail(f"expected '->' and the returns, found {_shown(t[i])}", i)
    i += 1
    returns: list[Return] = []
    varret = False
    tok = t[i]
    if tok == "...":
        varret = True
        i += 1
    elif tok == "(" and t[i + 1] == ")":
        i += 2
    elif tok == "(":
        # A parenthesized list of returns; '((int, Tensor))' is one tuple-typed return.
        i += 1
        ret_names: set[str] = set()
        while True:
            ret, i = _return_item(t, i)
            if ret.name is not None:
                if ret.name in ret_names:
                    _fail(f"return name {ret.name!r} appears twice", i - 1)
                ret_names.add(ret.name)
            returns.append(ret)
            tok = t[i]
            if tok == ",":
                i += 1
            elif tok == ")":
                i += 1
                break
            else:
                _fail(f"expected ',' or ')' between returns, found {_shown(tok)}", i)
    else:
        ret, i = _return_item(t, i)
        returns.append(ret)
    if t[i] != _END:
        _fail(f"unexpected {_shown(t[i])} after the returns", i)

    return _schema(name, namespace, overload, positional, kwarg_only, returns, vararg, varret)


def _return_item(t: list[str], i: int) -> tuple[Return, int]:
    type_, alias, depth, i = _type(t, i)
    tok = t[i]
    if _is_ident(tok) and "." not in tok:
        return _return(type_, tok, alias, depth), i + 1
    return _return(type_, None, alias, depth), i


def _type(t: list[str], i: int) -> tuple[Type, AliasInfo | None, int, int]:
    """Parse a type with its suffixes and at most one alias annotation.

    Returns ``(type, alias, alias_depth, next_index)``.
    """
    tok = t[i]
    type_: Type
    base = _BASE_TYPES.get(tok)
    if base is not None:
        type_ = base
        i += 1
    elif tok == "(":
        elems: list[Type] = []
        i += 1
        while True:
            elem, alias, _, j = _type(t, i)
            if alias is not None:
                _fail("alias annotations inside a tuple type are not supported", i)
            elems.append(elem)
            i = j
            if t[i] == ",":
                i += 1
            elif t[i] == ")":
                i += 1
                break
            else:
                _fail(f"expected ',' or ')' in tuple type, found {_shown(t[i])}", i)
        type_ = TupleType(tuple(elems))
    elif tok == "Dict" or tok in _CONTAINERS:
        if t[i + 1] != "(":
            example = "Dict(str, Tensor)" if tok == "Dict" else f"{tok}(Tensor)"
            _fail(f"'{tok}' needs its element types in parentheses, as in {example}", i)
        elem_start = i + 2
        key, alias, _, i = _type(t, elem_start)
        if alias is not None:
            _fail(f"alias annotations inside '{tok}(...)' are not supported", elem_start)
        if tok == "Dict":
            if t[i] != ",":
                _fail(f"expected ',' between the key and value types of Dict, found {_shown(t[i])}", i)
            value_start = i + 1
            value, alias, _, i = _type(t, value_start)
            if alias is not None:
                _fail("alias annotations inside 'Dict(...)' are not supported", value_start)
            type_ = DictType(key, value)
        else:
            type_ = _CONTAINERS[tok](key)
        if t[i] != ")":
            _fail(f"expected ')' to close '{tok}(', found {_shown(t[i])}", i)
        i += 1
    elif _is_ident(tok):
        if "." in tok:
            type_ = ClassType(tok)
        elif tok[0].islower():
            type_ = TypeVar(tok)
        else:
            _fail(_unknown_type(tok), i)
        i += 1
    else:
        _fail(f"expected a type, found {_shown(tok)}", i)

    alias = None
    depth = 0
    if t[i] == "(":
        alias, i = _alias(t, i)
    level = 0
    while True:
        tok = t[i]
        if tok == "?":
            if type(type_) is OptionalType:
                _fail(f"'?' applied twice; '{type_}' is already optional", i)
            type_ = OptionalType(type_)
        elif tok[:1] == "[":
            size_text = tok[1:-1]
            if not size_text:
                type_ = ListType(type_)
            elif size_text.isdigit() and size_text.isascii():
                type_ = ListType(type_, int(size_text))
            else:
                _fail(f"a list size must be a whole number, as in 'int[2]', not {tok!r}", i)
        else:
            return type_, alias, depth, i
        i += 1
        level += 1
        if t[i] == "(":
            if alias is not None:
                _fail("a type takes at most one alias annotation", i)
            depth = level
            alias, i = _alias(t, i)


def _alias(t: list[str], i: int) -> tuple[AliasInfo, int]:
    """Parse ``(a)``, ``(a!)``, ``(a -> *)``, ``(b|a)``, ``(*)`` starting at the '('."""
    before, i = _alias_set(t, i + 1)
    write = False
    if t[i] == "!":
        write = True
        i += 1
    after: tuple[str, ...] = ()
    if t[i] == "->":
        after, i = _alias_set(t, i + 1)
    if t[i] != ")":
        _fail(f"expected ')' to close the alias annotation, found {_shown(t[i])}", i)
    return _make_alias(before, after, write), i + 1


def _alias_set(t: list[str], i: int) -> tuple[tuple[str, ...], int]:
    names: list[str] = []
    while True:
        tok = t[i]
        if tok != "*" and not (_is_ident(tok) and "." not in tok):
            _fail(f"expected an alias set name such as 'a' or '*', found {_shown(tok)}", i)
        names.append(tok)
        i += 1
        if t[i] != "|":
            return tuple(names), i
        i += 1


def _default(t: list[str], i: int, type_: Type, arg_name: str) -> tuple[str, int]:
    """Parse the default value literal at ``t[i]``; its text is kept exactly."""
    tok = t[i]
    if tok == "-" and t[i + 1] == "inf":
        text = "-inf"
        i += 1
    else:
        text = tok
    if not LITERAL_RE.fullmatch(text):
        if tok[:1] in "\"'":
            _fail("string default has no closing quote", i)
        _fail(f"expected a default value for argument {arg_name!r}, found {_shown(tok)}", i)
    problem = default_mismatch(type_, text)
    if problem is not None:
        _fail(f"default {text} does not fit type '{type_}' of argument {arg_name!r}: {problem}", i)
    return text, i + 1


def _unknown_type(tok: str) -> str:
    import difflib

    known = sorted(BASE_TYPE_NAMES | {"Dict", "Future", "Await", "RRef"})
    close = difflib.get_close_matches(tok, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f"; the built-in types are {', '.join(known)}"
    return f"unknown type {tok!r}{hint}"
