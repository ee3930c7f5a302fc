"""The type grammar: tokens -> ``Type`` with its alias annotation, and ``parse_type``."""

from __future__ import annotations

from typing import Final

from ._build import alias as _make_alias
from ._lexer import END, MAX_TYPE_DEPTH, Failure, check_name, error, fail, is_ident, shown, tokenize
from ._messages import (
    _BAD_SIZE,
    _BIG_SIZE,
    _TOO_DEEP,
    _UNCLOSED_SUFFIX,
    ALIAS_AFTER_OPTIONAL,
    ALIAS_INSIDE,
    BUILTIN_TYPES_ARE,
    CONTAINER_NEEDS_PARENS,
    DID_YOU_MEAN_TYPE,
    EXPECTED_ALIAS_END,
    EXPECTED_ALIAS_SET,
    EXPECTED_CONTAINER_END,
    EXPECTED_DICT_COMMA,
    EXPECTED_TUPLE_END,
    EXPECTED_TYPE,
    LONE_TYPE_ALIAS,
    OPTIONAL_APPLIED_TWICE,
    TEXT_AFTER_TYPE,
    TWO_ALIAS_ANNOTATIONS,
    UNKNOWN_CLASS_TYPE,
    UNKNOWN_TYPE,
)
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
    class_path_problem,
)

__all__ = ["parse_type", "parse_type_tokens"]

_CONTAINERS: Final = {"Future": FutureType, "Await": AwaitType, "RRef": RRefType}
_BASE_TYPES: Final = {name: BaseType(name) for name in BASE_TYPE_NAMES}
_WHITESPACE: Final = " \t\n\r\f\v"
# A list size is read into a 64-bit integer, as torch reads it.
_SIZE_DIGITS: Final = 19
_SIZE_MAX: Final = 2**63 - 1


def parse_type(text: str) -> Type:
    """Parse one type on its own, such as ``Tensor?[]`` or ``Dict(str, int)``.

    Alias annotations are refused here: they belong to arguments and returns.
    """
    toks = tokenize(text)
    try:
        type_, alias, _, i = parse_type_tokens(toks, 0)
        if alias is not None:
            fail(LONE_TYPE_ALIAS, 0)
        if toks[i] != END:
            fail(TEXT_AFTER_TYPE.format(found=shown(toks[i])), i)
        return type_
    except Failure as failure:
        raise error(failure, text) from None


def parse_type_tokens(t: list[str], i: int, nest: int = 0) -> tuple[Type, AliasInfo | None, int, int]:
    """Parse a type with its suffixes and at most one alias annotation.

    ``nest`` is the number of types enclosing this one (Note [Nesting limit]). Returns
    ``(type, alias, alias_depth, next_index)``.
    """
    if nest > MAX_TYPE_DEPTH:
        fail(_TOO_DEEP.format(depth=MAX_TYPE_DEPTH), i)
    tok = t[i]
    type_: Type
    base = _BASE_TYPES.get(tok)
    if base is not None:
        type_ = base
        i += 1
    elif tok == "(":
        type_, i = _tuple(t, i, nest)
    elif tok == "Dict" or tok in _CONTAINERS:
        type_, i = _container(t, i, nest)
    elif is_ident(tok):
        if "." in tok:
            problem = class_path_problem(tok)
            if problem is not None:
                fail(UNKNOWN_CLASS_TYPE.format(type=shown(tok), problem=problem), i)
            type_ = ClassType(tok)
        elif tok[0].islower():
            check_name(tok, i, "a type variable")
            type_ = TypeVar(tok)
        else:
            fail(_unknown_type(tok), i)
        i += 1
    else:
        fail(EXPECTED_TYPE.format(found=shown(tok)), i)

    alias = None
    depth = 0
    if t[i] == "(":
        alias, i = _alias(t, i)
    level = 0
    while True:
        tok = t[i]
        if tok == "?":
            if type(type_) is OptionalType:
                fail(OPTIONAL_APPLIED_TWICE.format(type=type_), i)
            type_ = OptionalType(type_)
        elif tok[:1] == "[":
            type_ = ListType(type_, _list_size(tok, i))
        else:
            return type_, alias, depth, i
        i += 1
        level += 1
        if nest + level > MAX_TYPE_DEPTH:
            fail(_TOO_DEEP.format(depth=MAX_TYPE_DEPTH), i - 1)
        if t[i] == "(":
            if alias is not None:
                fail(TWO_ALIAS_ANNOTATIONS, i)
            if tok == "?":
                fail(ALIAS_AFTER_OPTIONAL, i)
            depth = level
            alias, i = _alias(t, i)


def _list_size(tok: str, i: int) -> int | None:
    """The size in list suffix token ``tok`` (``[]``, ``[2]``, ``[ 2 ]``); None when unsized."""
    if tok[-1] != "]" or len(tok) == 1:
        fail(_UNCLOSED_SUFFIX, i, 1)
    size_text = tok[1:-1].strip(_WHITESPACE)
    if not size_text:
        return None
    if not (size_text.isdigit() and size_text.isascii()):
        fail(_BAD_SIZE.format(tok=shown(tok)), i)
    digits = size_text.lstrip("0") or "0"
    if len(digits) > _SIZE_DIGITS or int(digits) > _SIZE_MAX:
        fail(_BIG_SIZE.format(tok=shown(tok)), i)
    return int(digits)


def _tuple(t: list[str], i: int, nest: int) -> tuple[Type, int]:
    elems: list[Type] = []
    i += 1
    while True:
        elem, alias, _, j = parse_type_tokens(t, i, nest + 1)
        if alias is not None:
            fail(ALIAS_INSIDE.format(where="a tuple type"), i)
        elems.append(elem)
        i = j
        if t[i] == ",":
            i += 1
        elif t[i] == ")":
            return TupleType(tuple(elems)), i + 1
        else:
            fail(EXPECTED_TUPLE_END.format(found=shown(t[i])), i)


def _container(t: list[str], i: int, nest: int) -> tuple[Type, int]:
    """``Dict(K, V)``, ``Future(T)``, ``Await(T)`` or ``RRef(T)`` starting at its name."""
    tok = t[i]
    if t[i + 1] != "(":
        example = "Dict(str, Tensor)" if tok == "Dict" else f"{tok}(Tensor)"
        fail(CONTAINER_NEEDS_PARENS.format(name=tok, example=example), i)
    elem_start = i + 2
    key, alias, _, i = parse_type_tokens(t, elem_start, nest + 1)
    if alias is not None:
        fail(ALIAS_INSIDE.format(where=f"'{tok}(...)'"), elem_start)
    type_: Type
    if tok == "Dict":
        if t[i] != ",":
            fail(EXPECTED_DICT_COMMA.format(found=shown(t[i])), i)
        value_start = i + 1
        value, alias, _, i = parse_type_tokens(t, value_start, nest + 1)
        if alias is not None:
            fail(ALIAS_INSIDE.format(where="'Dict(...)'"), value_start)
        type_ = DictType(key, value)
    else:
        type_ = _CONTAINERS[tok](key)
    if t[i] != ")":
        fail(EXPECTED_CONTAINER_END.format(name=tok, found=shown(t[i])), i)
    return type_, i + 1


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
        fail(EXPECTED_ALIAS_END.format(found=shown(t[i])), i)
    return _make_alias(before, after, write), i + 1


def _alias_set(t: list[str], i: int) -> tuple[tuple[str, ...], int]:
    names: list[str] = []
    while True:
        tok = t[i]
        if tok != "*" and not (is_ident(tok) and "." not in tok):
            fail(EXPECTED_ALIAS_SET.format(found=shown(tok)), i)
        check_name(tok, i, "an alias set")
        names.append(tok)
        i += 1
        if t[i] != "|":
            return tuple(names), i
        i += 1


def _unknown_type(tok: str) -> str:
    import difflib

    known = sorted(BASE_TYPE_NAMES | {"Dict", "Future", "Await", "RRef"})
    close = difflib.get_close_matches(tok, known, n=1) if len(tok) <= 40 else []
    hint = DID_YOU_MEAN_TYPE.format(name=close[0]) if close else BUILTIN_TYPES_ARE.format(names=", ".join(known))
    return UNKNOWN_TYPE.format(type=shown(tok), hint=hint)
