"""Arguments, returns and function schemas: a lossless model of schema text.

``str(parse_schema(s)) == s`` for every schema written in the canonical spacing used by
``native_functions.yaml`` and TorchScript; a schema built in code prints in that same
canonical form. All classes are frozen and compare and hash structurally.
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass
from typing import Final

from ..vocabulary import SchemaError, SchemaLookupError
from ._defaults import LITERAL_RE, DefaultValue, default_mismatch, list_literal_text, literal_value
from ._messages import (
    ALIAS_AFTER_OPTIONAL_AT,
    ALIAS_TOO_DEEP,
    ARGUMENT_TWICE,
    DEFAULT_BEFORE_REQUIRED,
    DEFAULT_DOES_NOT_FIT,
    LIST_DEFAULT_SPACING,
    NO_DEFAULT,
    NO_SUCH_ARGUMENT,
    NOT_A_LITERAL,
    NOT_AN_IDENTIFIER,
    RESERVED,
    RETURN_NAME_TWICE,
    VARARGS_WITH_DEFAULT,
    VARRET_WITH_RETURNS,
)
from ._types import RESERVED_WORDS, AliasInfo, ListType, OptionalType, Type

__all__ = [
    "Argument", "Return", "FunctionSchema", "SchemaKind", "type_with_alias",
]  # fmt: skip

# In-place dunder methods: their schema name does not end with '_' but they mutate self.
_INPLACE_DUNDERS: Final = frozenset(
    f"__i{op}__"
    for op in ("add", "sub", "mul", "div", "mod", "pow", "and", "or", "xor",
               "lshift", "rshift", "matmul", "floordiv", "truediv")
)  # fmt: skip


def type_with_alias(type_: Type, alias: AliasInfo | None, depth: int) -> str:
    """Print ``type_`` with ``alias`` placed after ``depth`` ``?``/``[]`` suffixes.

    Depth 0 puts the annotation right after the innermost type (``Tensor(a!)[]``), depth
    1 after the first suffix (``t[](a!)``), and so on.
    """
    if alias is None:
        return str(type_)
    suffixes: list[str] = []
    inner = type_
    while isinstance(inner, (OptionalType, ListType)):
        suffixes.append("?" if isinstance(inner, OptionalType) else str(inner)[len(str(inner.elem)):])
        inner = inner.elem
    if depth > len(suffixes):
        raise SchemaError(ALIAS_TOO_DEEP.format(depth=depth, count=len(suffixes), type=type_))
    suffixes.reverse()
    if depth and suffixes[depth - 1] == "?":
        raise SchemaError(ALIAS_AFTER_OPTIONAL_AT.format(depth=depth, type=type_))
    parts = [str(inner)]
    for level, suffix in enumerate(suffixes):
        if level == depth:
            parts.append(str(alias))
        parts.append(suffix)
    if depth == len(suffixes):
        parts.append(str(alias))
    return "".join(parts)


def _check_name(kind: str, name: str) -> None:
    if not (name.isidentifier() and name.isascii()):
        raise SchemaError(NOT_AN_IDENTIFIER.format(kind=kind, name=name))
    if name in RESERVED_WORDS:
        raise SchemaError(RESERVED.format(name=name, what=f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"))


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument: ``Tensor(a!) self``, ``Scalar alpha=1``, ``int[1] dim=[]``.

    ``default`` is the literal text of the default (``None`` when there is none) and
    ``default_value`` its Python value. ``alias``/``alias_depth`` place the alias
    annotation in the type text (see ``type_with_alias``).
    """

    name: str
    type: Type
    default: str | None = None
    alias: AliasInfo | None = None
    alias_depth: int = 0

    def __post_init__(self) -> None:
        _check_name("argument name", self.name)
        if self.default is not None:
            if not LITERAL_RE.fullmatch(self.default):
                raise SchemaError(NOT_A_LITERAL.format(default=self.default, name=self.name))
            if self.default[:1] == "[" and list_literal_text(self.default) != self.default:
                canonical = list_literal_text(self.default)
                raise SchemaError(LIST_DEFAULT_SPACING.format(default=self.default, name=self.name, canonical=canonical))
            problem = default_mismatch(self.type, self.default)
            if problem is not None:
                raise SchemaError(
                    DEFAULT_DOES_NOT_FIT.format(default=self.default, type=self.type, name=self.name, problem=problem)
                )
        type_with_alias(self.type, self.alias, self.alias_depth)

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def default_value(self) -> DefaultValue:
        """The default as a Python value; raises ``LookupError`` when there is none."""
        if self.default is None:
            raise SchemaLookupError(NO_DEFAULT.format(name=self.name))
        return literal_value(self.default)

    @property
    def is_write(self) -> bool:
        """Whether the op writes to this argument (its alias annotation has ``!``)."""
        return self.alias is not None and self.alias.is_write

    def __str__(self) -> str:
        text = f"{type_with_alias(self.type, self.alias, self.alias_depth)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


@dataclass(frozen=True, slots=True)
class Return:
    """One return: ``Tensor``, ``Tensor(a!)``, or named as in ``(Tensor values, Tensor indices)``."""

    type: Type
    name: str | None = None
    alias: AliasInfo | None = None
    alias_depth: int = 0

    def __post_init__(self) -> None:
        if self.name is not None:
            _check_name("return name", self.name)
        type_with_alias(self.type, self.alias, self.alias_depth)

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.is_write

    def __str__(self) -> str:
        text = type_with_alias(self.type, self.alias, self.alias_depth)
        return text if self.name is None else f"{text} {self.name}"


class SchemaKind(enum.Enum):
    """What an operator does to its inputs, read from its name and alias annotations."""

    functional = "functional"  # returns new values, writes nothing
    inplace = "inplace"  # add_: writes self and returns it
    out = "out"  # add.out: writes keyword-only out= arguments
    mutable = "mutable"  # writes some argument, none of the above


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """An operator schema: ``ns::name.overload(args, *, kwargs) -> returns``.

    ``positional`` and ``kwarg_only`` are the arguments either side of ``*``;
    ``arguments`` is both, in order. ``is_vararg``/``is_varret`` record a trailing
    ``...`` in the arguments or as the returns.
    """

    name: str
    _: KW_ONLY
    namespace: str = ""
    overload_name: str = ""
    positional: tuple[Argument, ...] = ()
    kwarg_only: tuple[Argument, ...] = ()
    returns: tuple[Return, ...] = ()
    is_vararg: bool = False
    is_varret: bool = False

    def __post_init__(self) -> None:
        _check_name("operator name", self.name)
        if self.namespace:
            _check_name("namespace", self.namespace)
        if self.overload_name:
            _check_name("overload name", self.overload_name)
        seen: set[str] = set()
        for arg in self.positional + self.kwarg_only:
            if arg.name in seen:
                raise SchemaError(ARGUMENT_TWICE.format(name=arg.name, schema=self.full_name))
            seen.add(arg.name)
        self._check_defaults_order()
        named = [r.name for r in self.returns if r.name is not None]
        if len(set(named)) != len(named):
            raise SchemaError(RETURN_NAME_TWICE.format(schema=self.full_name))
        if self.is_varret and self.returns:
            raise SchemaError(VARRET_WITH_RETURNS)

    def _check_defaults_order(self) -> None:
        defaulted = next((a.name for a in self.positional + self.kwarg_only if a.default is not None), "")
        if defaulted and self.is_vararg:
            raise SchemaError(VARARGS_WITH_DEFAULT.format(prev=defaulted))
        seen = ""
        for arg in self.positional:
            if arg.default is not None:
                seen = seen or arg.name
            elif seen:
                raise SchemaError(DEFAULT_BEFORE_REQUIRED.format(name=arg.name, prev=seen))

    @classmethod
    def parse(cls, text: str) -> FunctionSchema:
        """Parse schema text; the same as ``typedops.schema.parse_schema``."""
        from ._parser import parse_schema

        return parse_schema(text)

    # -- names ------------------------------------------------------------------
    @property
    def qualified_name(self) -> str:
        """``ns::name`` (just ``name`` when the schema has no namespace)."""
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    @property
    def full_name(self) -> str:
        """``ns::name.overload``, the name that identifies one overload."""
        base = self.qualified_name
        return f"{base}.{self.overload_name}" if self.overload_name else base

    # -- arguments ----------------------------------------------------------------
    @property
    def arguments(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    def argument(self, name: str) -> Argument:
        """The argument called ``name``; ``LookupError`` naming the choices otherwise."""
        for arg in self.positional + self.kwarg_only:
            if arg.name == name:
                return arg
        names = ", ".join(a.name for a in self.arguments) or "none"
        raise SchemaLookupError(NO_SUCH_ARGUMENT.format(schema=self.full_name, name=name, names=names))

    @property
    def out_arguments(self) -> tuple[Argument, ...]:
        """The keyword-only arguments the op writes its results into (``out=``)."""
        return tuple(a for a in self.kwarg_only if a.is_write)

    # -- what the op does ---------------------------------------------------------------
    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.positional + self.kwarg_only)

    @property
    def is_out_fn(self) -> bool:
        return any(a.is_write for a in self.kwarg_only)

    @property
    def is_inplace(self) -> bool:
        name = self.name
        if name.startswith("__") and name.endswith("__"):
            return name in _INPLACE_DUNDERS
        return name.endswith("_")

    @property
    def kind(self) -> SchemaKind:
        if self.is_inplace:
            return SchemaKind.inplace
        if self.is_out_fn:
            return SchemaKind.out
        if self.is_mutable:
            return SchemaKind.mutable
        return SchemaKind.functional

    # -- printing --------------------------------------------------------------------
    def __str__(self) -> str:
        parts = [str(a) for a in self.positional]
        if self.kwarg_only:
            parts.append("*")
            parts.extend(str(a) for a in self.kwarg_only)
        if self.is_vararg:
            parts.append("...")
        return f"{self.full_name}({', '.join(parts)}) -> {self._returns_text()}"

    def _returns_text(self) -> str:
        if self.is_varret:
            return "..."
        returns = self.returns
        # A lone return whose text starts with a tuple type, '(str, t)[]', is wrapped,
        # or it would read as a list of returns.
        if len(returns) == 1:
            text = str(returns[0])
            if not text.startswith("("):
                return text
            return f"({text})"
        return "(" + ", ".join(map(str, returns)) + ")"
