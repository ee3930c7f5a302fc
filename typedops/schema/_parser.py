"""The schema parser: schema text -> ``FunctionSchema``.

Note [Parser speed]
~~~~~~~~~~~~~~~~~~~
Parsing sits on the start-up path of every op library, so the hot path is built for speed:
canonical text takes the fast path of Note [Canonical fast path] (``_canonical.py``);
other text is split into tokens by one ``re.findall`` in C (whitespace dropped, positions
not kept), a recursive-descent parser walks the token list, built-in types are shared
objects, and the objects the parser builds skip the checks their ``__post_init__`` would
repeat. Only when parsing fails is the text tokenized again with positions, to put the
caret under the offending token. No parsed schema is cached: every call parses. Parsing
takes linear time whatever the text (Note [Linear-time parsing] in ``_lexer.py``).
"""

from __future__ import annotations

from ..vocabulary import ArgumentError
from ._build import argument as _argument
from ._build import make_return as _return
from ._build import schema as _schema
from ._canonical import clear_type_table, parse_canonical
from ._defaults import LITERAL_RE, bad_escape, default_mismatch, list_literal_text
from ._lexer import END, Failure, check_name, clipped, error, fail, is_ident, shown, tokenize
from ._messages import (
    _BAD_ESCAPE,
    _NESTED_LIST,
    _UNCLOSED_LIST,
    _UNCLOSED_STRING,
    ARGUMENT_NAME_TWICE,
    DEFAULT_BEFORE_REQUIRED,
    DEFAULT_DOES_NOT_FIT,
    EXPECTED_ARGUMENT_END,
    EXPECTED_ARGUMENT_NAME,
    EXPECTED_ARROW,
    EXPECTED_DEFAULT,
    EXPECTED_NAME_AFTER_NAMESPACE,
    EXPECTED_OPEN_PAREN,
    EXPECTED_OPERATOR_NAME,
    EXPECTED_OVERLOAD_NAME,
    EXPECTED_RETURN_END,
    NAMESPACE_NOT_ONE_IDENTIFIER,
    NOT_SCHEMA_TEXT,
    RETURN_NAMED_TWICE,
    STAR_TWICE,
    STAR_WITHOUT_KWARGS,
    TEXT_AFTER_RETURNS,
    TRAILING_COMMA,
    TWO_DOTS_IN_NAME,
    VARARGS_NOT_LAST,
    VARARGS_WITH_DEFAULT,
)
from ._model import Argument, FunctionSchema, Return
from ._type_parser import parse_type, parse_type_tokens
from ._types import Type

__all__ = ["parse_schema", "parse_type", "clear_type_table"]



def parse_schema(text: str) -> FunctionSchema:
    """Parse schema text such as ``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

    Raises ``SchemaParseError`` with the column of, and a caret under, the offending token.
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers pass anything
        raise ArgumentError(NOT_SCHEMA_TEXT.format(kind=type(text).__name__))
    schema = parse_canonical(text)
    if schema is not None:
        return schema
    return parse_tokens(text)


def parse_tokens(text: str) -> FunctionSchema:
    """The token parser alone (no fast path); ``parse_schema`` falls back to it."""
    try:
        return _parse(tokenize(text))
    except Failure as failure:
        raise error(failure, text) from None


def _name(t: list[str]) -> tuple[str, str, str, int]:
    """``(namespace, name, overload, next_index)``: ``ns::name.overload``, spaced or not."""
    namespace = ""
    i = 0
    tok = t[0]
    if not is_ident(tok):
        fail(EXPECTED_OPERATOR_NAME.format(found=shown(tok)), 0)
    sep = 2 if t[1] == "::" else 3 if t[1] == ":" and t[2] == ":" else 0
    if sep:
        if "." in tok:
            fail(NAMESPACE_NOT_ONE_IDENTIFIER.format(ns=tok), 0)
        check_name(tok, 0, "a namespace")
        namespace = tok
        i = sep
        tok = t[i]
        if not is_ident(tok):
            fail(EXPECTED_NAME_AFTER_NAMESPACE.format(found=shown(tok)), i)
    name, _, overload = tok.partition(".")
    if "." in overload:
        fail(TWO_DOTS_IN_NAME.format(name=tok), i)
    check_name(name, i, "an operator")
    if overload:
        check_name(overload, i, "an overload")
    i += 1
    if not overload and t[i] == ".":
        if not is_ident(t[i + 1]) or "." in t[i + 1]:
            fail(EXPECTED_OVERLOAD_NAME.format(found=shown(t[i + 1])), i + 1)
        overload = t[i + 1]
        check_name(overload, i + 1, "an overload")
        i += 2
    return namespace, name, overload, i


def _parse(t: list[str]) -> FunctionSchema:
    namespace, name, overload, i = _name(t)
    if t[i] != "(":
        fail(EXPECTED_OPEN_PAREN.format(found=shown(t[i])), i)
    positional, kwarg_only, vararg, i = _arguments(t, i + 1)
    if t[i] != "->":
        fail(EXPECTED_ARROW.format(found=shown(t[i])), i)
    returns, varret, i = _returns(t, i + 1)
    if t[i] != END:
        fail(TEXT_AFTER_RETURNS.format(found=shown(t[i])), i)
    return _schema(name, namespace, overload, positional, kwarg_only, returns, vararg, varret)


def _arguments(t: list[str], i: int) -> tuple[list[Argument], list[Argument], bool, int]:
    """The arguments after '(' up to and past ')': ``(positional, kwarg_only, vararg, i)``."""
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    current = positional
    names: set[str] = set()
    star = -1
    vararg = False
    defaulted = ""  # the first argument with a default
    if t[i] == ")":
        return positional, kwarg_only, vararg, i + 1
    while True:
        tok = t[i]
        if tok == "*":
            if star >= 0:
                fail(STAR_TWICE, i)
            star = i
            current = kwarg_only
            i += 1
            if t[i] != ",":
                fail(STAR_WITHOUT_KWARGS, i)
            i += 1
            continue
        if tok == "...":
            if defaulted:
                fail(VARARGS_WITH_DEFAULT.format(prev=defaulted), i)
            vararg = True
            i += 1
            if t[i] != ")":
                fail(VARARGS_NOT_LAST, i)
            i += 1
            break
        type_, alias, depth, i = parse_type_tokens(t, i)
        tok = t[i]
        if not is_ident(tok) or "." in tok:
            fail(EXPECTED_ARGUMENT_NAME.format(type=type_, found=shown(tok)), i)
        check_name(tok, i, "an argument")
        if tok in names:
            fail(ARGUMENT_NAME_TWICE.format(name=tok), i)
        names.add(tok)
        i += 1
        default = None
        if t[i] == "=":
            default, i = _default(t, i + 1, type_, tok)
            defaulted = defaulted or tok
        elif defaulted and current is positional:
            fail(DEFAULT_BEFORE_REQUIRED.format(name=tok, prev=defaulted), i - 1)
        current.append(_argument(tok, type_, default, alias, depth))
        tok = t[i]
        if tok == ",":
            i += 1
            if t[i] == ")":
                fail(TRAILING_COMMA, i - 1)
        elif tok == ")":
            i += 1
            break
        else:
            fail(EXPECTED_ARGUMENT_END.format(name=current[-1].name, found=shown(tok)), i)
    if star >= 0 and not kwarg_only and not vararg:
        fail(STAR_WITHOUT_KWARGS, star)
    return positional, kwarg_only, vararg, i


def _returns(t: list[str], i: int) -> tuple[list[Return], bool, int]:
    """The returns after '->': ``(returns, varret, next_index)``."""
    returns: list[Return] = []
    tok = t[i]
    if tok == "...":
        return returns, True, i + 1
    if tok == "(" and t[i + 1] == ")":
        return returns, False, i + 2
    if tok != "(":
        ret, i = _return_item(t, i)
        returns.append(ret)
        return returns, False, i
    # A parenthesized list of returns; '((int, Tensor))' is one tuple-typed return.
    i += 1
    ret_names: set[str] = set()
    while True:
        ret, i = _return_item(t, i)
        if ret.name is not None:
            if ret.name in ret_names:
                fail(RETURN_NAMED_TWICE.format(name=ret.name), i - 1)
            ret_names.add(ret.name)
        returns.append(ret)
        tok = t[i]
        if tok == ",":
            i += 1
        elif tok == ")":
            return returns, False, i + 1
        else:
            fail(EXPECTED_RETURN_END.format(found=shown(tok)), i)


def _return_item(t: list[str], i: int) -> tuple[Return, int]:
    type_, alias, depth, i = parse_type_tokens(t, i)
    tok = t[i]
    if is_ident(tok) and "." not in tok:
        check_name(tok, i, "a return")
        return _return(type_, tok, alias, depth), i + 1
    return _return(type_, None, alias, depth), i


def _default(t: list[str], i: int, type_: Type, arg_name: str) -> tuple[str, int]:
    """Parse the default value literal at ``t[i]``; its text is kept exactly.

    A sign written apart from its number (``- 1``) is joined to it: whitespace between
    tokens never matters.
    """
    tok = t[i]
    text = list_literal_text(tok) if tok[:1] == "[" and tok[-1] == "]" and len(tok) > 1 else tok
    if tok == "-" and t[i + 1][:1] not in ("", "-") and (t[i + 1] == "inf" or t[i + 1][0] in "0123456789."):
        i += 1
        text = "-" + t[i]
    if not LITERAL_RE.fullmatch(text):
        if tok[:1] in "\"'":
            escape = bad_escape(tok) if len(tok) > 1 and tok[-1] == tok[0] else None
            if escape is None:
                fail(_UNCLOSED_STRING, i, 1)
            fail(_BAD_ESCAPE.format(escape=escape), i)
        if tok[:1] == "[" and (tok[-1] != "]" or tok == "["):
            fail(_NESTED_LIST if t[i + 1][:1] == "[" else _UNCLOSED_LIST, i, 1)
        fail(EXPECTED_DEFAULT.format(name=arg_name, found=shown(tok)), i)
    problem = default_mismatch(type_, text)
    if problem is not None:
        fail(DEFAULT_DOES_NOT_FIT.format(default=clipped(text), type=type_, name=arg_name, problem=problem), i)
    return text, i + 1
