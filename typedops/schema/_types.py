"""The schema type model: frozen dataclasses that print exactly as the grammar writes them.

Alias annotations are *not* part of a type: ``Tensor(a!)`` is the type ``Tensor`` on an
argument whose ``alias`` is ``a!``. That keeps ``arg.type == TENSOR`` meaningful and puts
the aliasing facts where the rest of the library reads them (see ``Argument.alias``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..vocabulary import SchemaError
from ._messages import (
    ALIAS_WITHOUT_NAMES,
    BAD_ALIAS_SET_NAME,
    BAD_CLASS_TYPE,
    BAD_TYPE_VARIABLE,
    BUILTIN_TYPE_VARIABLE,
    EMPTY_TUPLE_TYPE,
    NEGATIVE_LIST_SIZE,
    OPTIONAL_TWICE,
    RESERVED,
    UNKNOWN_BASE_TYPE,
)

__all__ = [
    "AliasInfo",
    "Type",
    "BaseType",
    "TypeVar",
    "ClassType",
    "OptionalType",
    "ListType",
    "DictType",
    "TupleType",
    "FutureType",
    "AwaitType",
    "RRefType",
    "BASE_TYPE_NAMES",
    "RESERVED_WORDS",
    "RESERVED",
    "CLASS_PREFIX",
    "class_path_problem",
    "TENSOR",
    "INT",
    "SYM_INT",
    "FLOAT",
    "BOOL",
    "STR",
    "COMPLEX",
    "SCALAR",
    "SCALAR_TYPE",
    "LAYOUT",
    "DEVICE",
    "MEMORY_FORMAT",
    "ANY",
]

# The words torch's lexer reserves (TorchScript keywords): no name in a schema may be one.
RESERVED_WORDS: Final = frozenset(
    {
        "and", "as", "assert", "break", "class", "continue", "def", "del", "elif", "else",
        "for", "global", "if", "import", "in", "is", "not", "or", "pass", "raise", "return",
        "while", "with", "True", "False", "None", "Ellipsis",
    }
)  # fmt: skip

# Every built-in type name the grammar accepts. The first block is the set used by
# native_functions.yaml; the second comes from TorchScript's operator registry.
BASE_TYPE_NAMES: Final = frozenset(
    {
        "Tensor", "int", "SymInt", "float", "bool", "str", "complex", "Scalar",
        "ScalarType", "Layout", "Device", "DeviceIndex", "MemoryFormat", "Generator",
        "Storage", "Stream", "QScheme", "Dimname", "SymBool", "SymFloat", "Any",
        "NoneType", "AnyClassType", "AnyEnumType", "Capsule",
    }
)  # fmt: skip


class Type:
    """Base of every schema type. Subclasses are frozen and compare structurally."""

    __slots__ = ()

    def is_tensor_like(self) -> bool:
        """Whether values of this type can carry tensors the dispatcher must see.

        True for ``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]`` and optional or
        sized forms of those; false for containers such as ``Dict(str, Tensor)``.
        """
        return False


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """An alias annotation: ``(a)``, ``(a!)``, ``(a -> *)``, ``(b|a)``, ``(*)``.

    ``before`` is the alias set the value belongs to on entry, ``after`` the set it
    belongs to on exit (empty when the annotation has no arrow), and ``is_write``
    whether the operator writes to it.
    """

    before: tuple[str, ...]
    after: tuple[str, ...] = ()
    is_write: bool = False

    def __post_init__(self) -> None:
        if not self.before:
            raise SchemaError(ALIAS_WITHOUT_NAMES)
        for name in self.before + self.after:
            if name != "*" and not (name.isidentifier() and name.isascii()):
                raise SchemaError(BAD_ALIAS_SET_NAME.format(name=name))
            if name in RESERVED_WORDS:
                raise SchemaError(RESERVED.format(name=name, what="an alias set"))

    def __str__(self) -> str:
        text = "|".join(self.before)
        if self.is_write:
            text += "!"
        if self.after:
            text += " -> " + "|".join(self.after)
        return f"({text})"


@dataclass(frozen=True, slots=True)
class BaseType(Type):
    """A built-in type named by one word: ``Tensor``, ``int``, ``Scalar``, ..."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in BASE_TYPE_NAMES:
            raise SchemaError(UNKNOWN_BASE_TYPE.format(name=self.name, names=sorted(BASE_TYPE_NAMES)))

    def __str__(self) -> str:
        return self.name

    def is_tensor_like(self) -> bool:
        return self.name == "Tensor"


@dataclass(frozen=True, slots=True)
class TypeVar(Type):
    """A type variable such as ``t`` or ``tVal``: a lower-case name the op is generic in."""

    name: str

    def __post_init__(self) -> None:
        if not (self.name.isidentifier() and self.name.isascii() and self.name[:1].islower()):
            raise SchemaError(BAD_TYPE_VARIABLE.format(name=self.name))
        if self.name in BASE_TYPE_NAMES:
            raise SchemaError(BUILTIN_TYPE_VARIABLE.format(name=self.name))
        if self.name in RESERVED_WORDS:
            raise SchemaError(RESERVED.format(name=self.name, what="a type variable"))

    def __str__(self) -> str:
        return self.name


CLASS_PREFIX: Final = "__torch__.torch.classes."


def class_path_problem(name: str) -> str | None:
    """Why ``name`` is not a class type path ``__torch__.torch.classes.ns.Name`` (None if it is)."""
    parts = name.split(".")
    if (
        name.startswith(CLASS_PREFIX)
        and len(parts) >= 5
        and all(p.isidentifier() and p.isascii() for p in parts)
    ):
        return None
    return BAD_CLASS_TYPE.format(name=name)


@dataclass(frozen=True, slots=True)
class ClassType(Type):
    """A registered class, named by its dotted path: ``__torch__.torch.classes.ns.Name``."""

    qualified_name: str

    def __post_init__(self) -> None:
        problem = class_path_problem(self.qualified_name)
        if problem is not None:
            raise SchemaError(problem)

    def __str__(self) -> str:
        return self.qualified_name


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    """``T?``: a value of ``T`` or ``None``."""

    elem: Type

    def __post_init__(self) -> None:
        if isinstance(self.elem, OptionalType):
            raise SchemaError(OPTIONAL_TWICE.format(elem=self.elem))

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()


@dataclass(frozen=True, slots=True)
class ListType(Type):
    """``T[]``, or ``T[N]`` for a list the op expects to have N elements."""

    elem: Type
    size: int | None = None

    def __post_init__(self) -> None:
        if self.size is not None and self.size < 0:
            raise SchemaError(NEGATIVE_LIST_SIZE.format(size=self.size))

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()


@dataclass(frozen=True, slots=True)
class DictType(Type):
    """``Dict(K, V)``."""

    key: Type
    value: Type

    def __str__(self) -> str:
        return f"Dict({self.key}, {self.value})"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """``(T1, T2, ...)`` used as one type, e.g. ``(str, tVal)[] inputs``."""

    elems: tuple[Type, ...]

    def __post_init__(self) -> None:
        if not self.elems:
            raise SchemaError(EMPTY_TUPLE_TYPE)

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elems)) + ")"


@dataclass(frozen=True, slots=True)
class FutureType(Type):
    """``Future(T)``."""

    elem: Type

    def __str__(self) -> str:
        return f"Future({self.elem})"


@dataclass(frozen=True, slots=True)
class AwaitType(Type):
    """``Await(T)``."""

    elem: Type

    def __str__(self) -> str:
        return f"Await({self.elem})"


@dataclass(frozen=True, slots=True)
class RRefType(Type):
    """``RRef(T)``."""

    elem: Type

    def __str__(self) -> str:
        return f"RRef({self.elem})"


TENSOR: Final = BaseType("Tensor")
INT: Final = BaseType("int")
SYM_INT: Final = BaseType("SymInt")
FLOAT: Final = BaseType("float")
BOOL: Final = BaseType("bool")
STR: Final = BaseType("str")
COMPLEX: Final = BaseType("complex")
SCALAR: Final = BaseType("Scalar")
SCALAR_TYPE: Final = BaseType("ScalarType")
LAYOUT: Final = BaseType("Layout")
DEVICE: Final = BaseType("Device")
MEMORY_FORMAT: Final = BaseType("MemoryFormat")
ANY: Final = BaseType("Any")
