"""Hypothesis strategies for random but valid schema objects.

One strategy per model class: ``types()``, ``alias_infos()``, ``arguments()``,
``returns()`` and ``function_schemas()``, plus ``default_values(type_)`` for the
defaults an argument of a given type may take. Every object is built through its
public constructor, so everything drawn here is a schema the model accepts; the
property tests then hold the printer and both parser paths to it.

The defaults follow the rules of ``default_mismatch`` in ``typedops/schema/_defaults.py``
written out independently (which literal kinds and which bare names each base type
takes), so a parser that starts refusing a valid default fails the round trip.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Sequence
from typing import Final

from hypothesis import strategies as st

from typedops.schema import (
    AliasInfo,
    Argument,
    AwaitType,
    BaseType,
    ClassType,
    DefaultValue,
    DictType,
    EnumDefault,
    FunctionSchema,
    FutureType,
    ListType,
    OptionalType,
    Return,
    RRefType,
    TupleType,
    Type,
    TypeVar,
    format_literal,
)
from typedops.schema._types import BASE_TYPE_NAMES, RESERVED_WORDS

__all__ = [
    "identifiers",
    "types",
    "alias_infos",
    "default_values",
    "arguments",
    "returns",
    "function_schemas",
    "suffix_count",
    "respace",
    "WHITESPACE",
]

# -- names ---------------------------------------------------------------------------------

# Names that look like something else in schema text: types, literals, keywords.
_TRICKY_NAMES: Final = (
    "self", "out", "Tensor", "int", "Dict", "Future", "from", "lambda", "inf", "nan",
    "t", "_", "__and__", "a1",
)  # fmt: skip


def _names(first: str, max_size: int = 6) -> st.SearchStrategy[str]:
    """Names starting with a character of ``first``, then identifier characters."""
    rest = st.text(string.ascii_letters + string.digits + "_", max_size=max_size)
    return st.builds(str.__add__, st.sampled_from(first), rest)


identifiers: Final = st.one_of(
    _names(string.ascii_letters + "_").filter(lambda name: name not in RESERVED_WORDS),
    st.sampled_from(_TRICKY_NAMES),
)
"""ASCII identifiers, the names of operators, arguments, returns and alias sets."""

# -- types ---------------------------------------------------------------------------------

_base_types: Final = st.sampled_from(sorted(BASE_TYPE_NAMES)).map(BaseType)
# A type variable is lower-case; the lower-case base type names (int, str, ...) are not
# type variables.
_type_vars: Final = (
    _names(string.ascii_lowercase, max_size=4)
    .filter(lambda name: name not in BASE_TYPE_NAMES and name not in RESERVED_WORDS)
    .map(TypeVar)
)
_class_types: Final = st.lists(identifiers, min_size=2, max_size=3).map(
    lambda parts: ClassType("__torch__.torch.classes." + ".".join(parts))
)


def _optional(elem: Type) -> Type:
    """``elem?``, or ``elem`` itself when it is already optional (never ``T??``)."""
    return elem if isinstance(elem, OptionalType) else OptionalType(elem)


def _compound(children: st.SearchStrategy[Type]) -> st.SearchStrategy[Type]:
    sizes = st.none() | st.integers(min_value=0, max_value=12)
    return st.one_of(
        children.map(_optional),
        st.builds(ListType, children, sizes),
        st.builds(DictType, children, children),
        st.lists(children, min_size=1, max_size=3).map(lambda elems: TupleType(tuple(elems))),
        st.builds(FutureType, children),
        st.builds(AwaitType, children),
        st.builds(RRefType, children),
    )


@functools.cache
def types(max_leaves: int = 4) -> st.SearchStrategy[Type]:
    """Any schema type: base types, type variables, classes and containers of them."""
    leaves = st.one_of(_base_types, _type_vars, _class_types)
    return st.recursive(leaves, _compound, max_leaves=max_leaves)


def suffix_count(type_: Type) -> int:
    """How many ``?``/``[]`` suffixes the printed type ends with (the valid alias depths)."""
    count = 0
    while isinstance(type_, (OptionalType, ListType)):
        count += 1
        type_ = type_.elem
    return count


# -- alias annotations ---------------------------------------------------------------------

_alias_sets: Final = st.lists(identifiers | st.just("*"), min_size=1, max_size=3).map(tuple)


@functools.cache
def alias_infos() -> st.SearchStrategy[AliasInfo]:
    """``(a)``, ``(a!)``, ``(a|b -> *)``, ...: any before set, optional after set and write."""
    return st.builds(
        AliasInfo,
        before=_alias_sets,
        after=st.just(()) | _alias_sets,
        is_write=st.booleans(),
    )


# -- defaults ------------------------------------------------------------------------------

_ints: Final = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_KIND_VALUES: Final[dict[str, st.SearchStrategy[DefaultValue]]] = {
    "int": _ints,
    "float": st.floats(),  # includes inf, -inf and nan
    "bool": st.booleans(),
    "str": st.text(max_size=6),
}
# The literal kinds each base type takes as a default (TorchScript writes enum
# defaults as their integer codes) and a few of the bare names it takes. Other base
# types (Tensor, Any, SymFloat, ...) and type variables take no default but None, and
# that only when optional.
_LITERAL_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "bool": ("bool",),
    "int": ("int",), "SymInt": ("int",), "DeviceIndex": ("int",),
    "float": ("int", "float"), "complex": ("float",),
    "Scalar": ("int", "float", "bool"),
    "str": ("str",), "Device": ("str",),
    "ScalarType": ("int",), "MemoryFormat": ("int",), "Layout": ("int",),
}  # fmt: skip
_NAMED_DEFAULTS: Final[dict[str, tuple[str, ...]]] = {
    "int": ("Mean", "Sum"),
    "ScalarType": ("float", "long", "int", "bool", "complex128"),
    "MemoryFormat": ("contiguous_format", "preserve_format", "channels_last"),
    "Layout": ("strided", "sparse_coo"),
}  # fmt: skip
# The element types a list default may have (torch reads list constants of these only).
_LIST_ELEMENTS: Final = ("bool", "int", "SymInt", "DeviceIndex", "float", "complex", "ScalarType", "MemoryFormat", "Layout")
# 'complex' takes float literals only: a float strategy whose values all print as floats.
_FLOAT_ONLY: Final = st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: "e" in repr(v) or "." in repr(v))


def _base_atoms(name: str) -> list[st.SearchStrategy[DefaultValue]]:
    """Strategies for the non-None, non-list defaults base type ``name`` takes."""
    options = [
        _FLOAT_ONLY if name == "complex" else _KIND_VALUES[kind] for kind in _LITERAL_KINDS.get(name, ())
    ]
    names = _NAMED_DEFAULTS.get(name, ())
    if names:
        options.append(st.sampled_from(names).map(EnumDefault))
    return options


def _list_elem(type_: Type) -> str | None:
    """The element type name of a list type that takes list defaults, else None."""
    if isinstance(type_, ListType) and isinstance(type_.elem, BaseType) and type_.elem.name in _LIST_ELEMENTS:
        return type_.elem.name
    return None


def _atoms(type_: Type) -> list[st.SearchStrategy[DefaultValue]]:
    """Strategies for the defaults of ``type_`` that are not list literals."""
    options: list[st.SearchStrategy[DefaultValue]] = []
    if isinstance(type_, OptionalType):
        options.append(st.none())
        type_ = type_.elem
    elem = _list_elem(type_)
    if elem is not None and isinstance(type_, ListType) and type_.size is not None:
        options.extend(_base_atoms(elem))  # a lone value is broadcast: 'int[2] stride=1'
    elif isinstance(type_, BaseType):
        options.extend(_base_atoms(type_.name))
    return options


@functools.cache  # types are hashable, and building strategies is slow
def default_values(type_: Type) -> st.SearchStrategy[DefaultValue] | None:
    """Python values whose ``format_literal`` text the parser takes as a default of ``type_``.

    None when ``type_`` takes no default at all (``Tensor``, ``Dict(str, int)``, ...).
    """
    options = _atoms(type_)
    inner = type_.elem if isinstance(type_, OptionalType) else type_
    elem = _list_elem(inner)
    if elem is not None and inner is type_:  # an optional list takes no list literal
        options.append(st.lists(st.one_of(*_base_atoms(elem)), max_size=3).map(tuple))
    return st.one_of(*options) if options else None


# -- arguments and returns -----------------------------------------------------------------


_maybe_alias: Final = st.none() | alias_infos()


def alias_depths(type_: Type) -> list[int]:
    """Where an alias annotation may go: after the base type (0) or after a list suffix."""
    depths = [0]
    suffixes: list[Type] = []
    while isinstance(type_, (OptionalType, ListType)):
        suffixes.append(type_)
        type_ = type_.elem
    for level, suffix in enumerate(reversed(suffixes), start=1):
        if isinstance(suffix, ListType):
            depths.append(level)
    return depths


@st.composite
def _typed_alias(draw: st.DrawFn, type_: Type) -> tuple[AliasInfo | None, int]:
    """An alias annotation (or none) and a depth that is valid for ``type_``."""
    alias = draw(_maybe_alias)
    depth = draw(st.sampled_from(alias_depths(type_))) if alias else 0
    return alias, depth


@st.composite
def arguments(draw: st.DrawFn, name: st.SearchStrategy[str] = identifiers) -> Argument:
    """``Tensor(a!)[] self``, ``int[2]? dim=[0, 1]``, ...: a type, an alias, maybe a default."""
    type_ = draw(types())
    alias, depth = draw(_typed_alias(type_))
    values = default_values(type_)
    default = None
    if values is not None and draw(st.booleans()):
        default = format_literal(draw(values))
    return Argument(draw(name), type_, default, alias=alias, alias_depth=depth)


@st.composite
def returns(draw: st.DrawFn, name: st.SearchStrategy[str | None] = st.none() | identifiers) -> Return:
    """``Tensor``, ``Tensor(a!) out``, ``(str, t)[]``, ...: a type, an alias, maybe a name."""
    type_ = draw(types())
    alias, depth = draw(_typed_alias(type_))
    return Return(type_, draw(name), alias=alias, alias_depth=depth)


# -- schemas -------------------------------------------------------------------------------


@st.composite
def function_schemas(draw: st.DrawFn, max_arguments: int = 5) -> FunctionSchema:
    """A whole schema: names, positional and keyword-only arguments, returns, ``...``.

    Argument names are unique, and so are the names of named returns.
    """
    arg_names = draw(st.lists(identifiers, max_size=max_arguments, unique=True))
    args = [draw(arguments(st.just(name))) for name in arg_names]
    n_positional = draw(st.integers(min_value=0, max_value=len(args)))
    # Required positional arguments come before defaulted ones; varargs take no defaults.
    positional = sorted(args[:n_positional], key=lambda a: a.has_default)
    is_vararg = draw(st.booleans()) and not any(a.has_default for a in args)
    is_varret = draw(st.booleans())
    rets: list[Return] = []
    if not is_varret:
        ret_names = draw(st.lists(st.none() | identifiers, max_size=3).filter(_unique_names))
        rets = [draw(returns(st.just(name))) for name in ret_names]
    return FunctionSchema(
        draw(identifiers),
        namespace=draw(st.just("") | identifiers),
        overload_name=draw(st.just("") | identifiers),
        positional=tuple(positional),
        kwarg_only=tuple(args[n_positional:]),
        returns=tuple(rets),
        is_vararg=is_vararg,
        is_varret=is_varret,
    )


def _unique_names(names: list[str | None]) -> bool:
    named = [n for n in names if n is not None]
    return len(set(named)) == len(named)


# -- re-spacing ----------------------------------------------------------------------------

# ASCII whitespace, as torch's lexer skips it.
WHITESPACE: Final = (" ", "\t", "\n", "  ", "\r\n", " \t\n", "\f", "\v")
# '[', ']', ',', a sign before a number, or an item: '[0, -1e-05]' -> [ 0 , - 1e-05 ].
_LIST_PIECE_RE: Final = re.compile(r"[\[\],]|-(?=[0-9.])|[^\[\],\s]+")


def _pieces(tokens: list[str], index: int) -> list[str]:
    """Token ``tokens[index]`` split where torch's lexer would split it (and spaces may go)."""
    tok = tokens[index]
    if tok[:1] == "[" and tok[-1:] == "]" and '"' not in tok and "'" not in tok:
        return _LIST_PIECE_RE.findall(tok)
    if tok == "::":
        return [":", ":"]
    is_op_name = index == 0 or (index == 2 and tokens[1] == "::")
    if is_op_name and "." in tok:
        parts = tok.split(".")
        return [p for part in parts for p in (part, ".")][:-1]
    if tok[:1] == "-" and tok[1:2] and tok[1] in "0123456789.":
        return ["-", tok[1:]]
    return [tok]


def respace(text: str, choose: Callable[[Sequence[str]], str]) -> str:
    """``text`` with its whitespace changed around every token, keeping its meaning.

    Each run of whitespace becomes another (``choose`` picks from WHITESPACE), and
    whitespace may appear (or not: ``choose`` also picks from ``("",)``) between any two
    tokens that touched, and inside tokens torch's lexer reads as several: ``[ 2 ]``,
    ``[0 , - 1]``, ``aten : : add . Tensor``, ``- 1``. Quoted strings are kept whole.
    """
    from typedops.schema._lexer import TOKEN_RE

    matches = [m for m in TOKEN_RE.finditer(text) if m.group(1)]
    tokens = [m.group(1) for m in matches]
    out: list[str] = []
    for index, match in enumerate(matches):
        spaced_before = match.start(1) > match.start()
        for n, piece in enumerate(_pieces(tokens, index)):
            if n == 0 and spaced_before:
                out.append(choose(WHITESPACE))
            elif out:
                out.append(choose(("",) + WHITESPACE))
            out.append(piece)
    if text[-1:].isspace():
        out.append(choose(WHITESPACE))
    return "".join(out)
