"""Signature shapes: what generated call code depends on, and nothing more.

Note [Wrapper cache]
~~~~~~~~~~~~~~~~~~~~
Generated code is compiled once per *shape* and shared: every ``(Tensor, Tensor) ->
Tensor`` op uses the same compiled unboxing wrapper. A shape records only what changes
the generated text -- how many positional arguments, the Python names of keyword-only
ones (they are passed by keyword), which arguments carry tensors and how, which have
defaults, how many returns. Op names, default values and kernels are bound when a
compiled factory is called, never written into the source.

Positional arguments' names are not part of a shape (their ``ArgShape.name`` is empty):
the source calls them by placeholder names, and code that must take them under the
schema's names (the dispatch entries, which may be called with keywords) gets a copy of
its compiled code with the parameters renamed (``renamed`` in _source.py), which costs
no compilation and no source. So a program that defines and removes ops with ever new
argument names compiles nothing new, and the compiled factories, kept in bounded caches,
stay few (Note [Generated source]).
"""

from __future__ import annotations

import enum

from typing import Any, Final, NamedTuple

from ..vocabulary import ArgumentValueError, BoundedCache
from ..schema import BaseType, DictType, FunctionSchema, ListType, OptionalType, TupleType, Type
from ._messages import PYTHON_NAME_CLASH, VARARG_OPERATOR
from ._values import default_value, python_name

__all__ = [
    "TensorUse", "CheckKind", "ArgCheck", "ArgShape", "CallShape", "call_shape", "shape_and_defaults",
    "tensor_use", "arg_check", "positional_names",
]  # fmt: skip


class TensorUse(str, enum.Enum):
    """How an argument carries tensors the dispatcher must look at."""

    # str's own hash, in C: shapes are cache keys, hashed on every op definition
    # (Enum's __hash__ is written in Python).
    __hash__ = str.__hash__

    none = "none"
    tensor = "Tensor"
    optional = "Tensor?"
    list = "Tensor[]"
    optional_list = "Tensor?[]"


def tensor_use(type_: Type) -> TensorUse:
    """Which of the dispatch-relevant tensor forms ``type_`` is."""
    if not type_.is_tensor_like():
        return TensorUse.none
    if isinstance(type_, OptionalType):
        inner = type_.elem
        if isinstance(inner, ListType):
            # 'Tensor[]?': a list or None; treat as an optional list of tensors.
            return TensorUse.optional_list
        return TensorUse.optional
    if isinstance(type_, ListType):
        return TensorUse.optional_list if isinstance(type_.elem, OptionalType) else TensorUse.list
    return TensorUse.tensor


class CheckKind(str, enum.Enum):
    """The fast check a boxed call makes on an argument's value (see ``arg_check``)."""

    __hash__ = str.__hash__  # first: the members below shadow the builtins in this body

    tensor = "tensor"  # no test of its own: the key extraction checks it
    none = "none"  # not checked (Any, type variables, classes)
    slow = "slow"  # the full ``mismatch`` check on every call (lists, dicts, tuples)
    int_list = "int_list"  # a list or tuple of exact ints; else (a lone int for int[N]...) slow
    # An exact-type test per base type (subclasses go to the slow check, which accepts them):
    int = "int"
    float = "float"
    bool = "bool"
    scalar = "scalar"
    complex = "complex"
    str = "str"
    scalar_type = "scalar_type"
    layout = "layout"
    memory_format = "memory_format"
    device = "device"


class ArgCheck(NamedTuple):
    """An argument's fast check: its kind, whether None passes too, and for a sized int
    list (``int[1] dim``) its size, which a lone int stands for (Note [A lone int for a
    sized list] in dispatch/_entry.py)."""

    kind: CheckKind
    optional: bool = False
    size: int | None = None


# How a boxed call checks an argument's value quickly (see arg_check).
_CHECK_BY_BASE: Final = {
    "int": CheckKind.int, "SymInt": CheckKind.int, "DeviceIndex": CheckKind.int,
    "float": CheckKind.float, "SymFloat": CheckKind.float,
    "bool": CheckKind.bool, "SymBool": CheckKind.bool,
    "Scalar": CheckKind.scalar, "complex": CheckKind.complex, "str": CheckKind.str,
    "ScalarType": CheckKind.scalar_type, "Layout": CheckKind.layout,
    "MemoryFormat": CheckKind.memory_format, "Device": CheckKind.device,
}  # fmt: skip
_UNCHECKED: Final = frozenset({"Any", "Generator", "Storage", "Stream", "QScheme", "Dimname", "Capsule", "AnyClassType", "AnyEnumType"})
_INT_NAMES: Final = frozenset({"int", "SymInt"})
_TENSOR_CHECK: Final = ArgCheck(CheckKind.tensor)
_NO_CHECK: Final = ArgCheck(CheckKind.none)
_SLOW_CHECK: Final = ArgCheck(CheckKind.slow)


def arg_check(type_: Type) -> ArgCheck:
    """The fast check a boxed call makes on a value of ``type_`` (see ``CheckKind``)."""
    if type_.is_tensor_like():
        return _TENSOR_CHECK
    optional = isinstance(type_, OptionalType)
    inner = type_.elem if isinstance(type_, OptionalType) else type_
    if isinstance(inner, BaseType):
        if inner.name in _UNCHECKED:
            return _NO_CHECK
        kind = _CHECK_BY_BASE.get(inner.name)
        if kind is not None:
            return ArgCheck(kind, optional)
    if isinstance(inner, ListType) and isinstance(inner.elem, BaseType) and inner.elem.name in _INT_NAMES:
        return ArgCheck(CheckKind.int_list, optional, inner.size)
    if isinstance(inner, (ListType, TupleType, DictType)):
        return _SLOW_CHECK
    return _NO_CHECK


class ArgShape(NamedTuple):
    # A keyword-only argument's Python name (schema name, keywords get a trailing '_');
    # empty for a positional one (Note [Wrapper cache]).
    name: str
    kwarg_only: bool
    has_default: bool
    tensors: TensorUse
    check: ArgCheck


class CallShape(NamedTuple):
    """A calling convention's shape: a tuple of tuples of strings and flags, so the caches
    of compiled code hash and compare it in C."""

    args: tuple[ArgShape, ...]
    returns: int

    @property
    def positional(self) -> tuple[ArgShape, ...]:
        return tuple(a for a in self.args if not a.kwarg_only)

    @property
    def kwarg_only(self) -> tuple[ArgShape, ...]:
        return tuple(a for a in self.args if a.kwarg_only)

    def describe(self) -> str:
        """A readable name for file names of generated code: ``(Tensor, Tensor, *, alpha) -> 1``."""
        parts = [a.tensors.value if a.tensors is not TensorUse.none else "_" for a in self.positional]
        if self.kwarg_only:
            parts.append("*")
            parts.extend(a.name for a in self.kwarg_only)
        return f"({', '.join(parts)}) -> {self.returns}"


def call_shape(schema: FunctionSchema) -> CallShape:
    """The shape of ``schema``'s calling convention. Refuses what generated code cannot take."""
    if schema.is_vararg or schema.is_varret:
        raise ArgumentValueError(VARARG_OPERATOR.format(op=schema.full_name))
    # Argument names are ASCII identifiers (the schema model checks them); python_name
    # renames Python keywords, so every name is safe to write into generated code.
    args: list[ArgShape] = []
    for args_of, kwarg_only in ((schema.positional, False), (schema.kwarg_only, True)):
        for arg in args_of:
            type_ = arg.type
            name = arg.name if kwarg_only else ""  # Note [Wrapper cache]
            key = (name, kwarg_only, arg.default is None, id(type_))
            known = _arg_shapes.get(key)
            if known is None:
                tensors, check = _type_facts(type_)
                shape = ArgShape(python_name(name) if name else "", kwarg_only, arg.default is not None, tensors, check)
                known = _arg_shapes.put(key, shape, keep=type_)  # keeps the type, so its id stays its own
            args.append(known)
    if len({python_name(a.name) for a in schema.arguments}) != len(args):
        _refuse_python_name_clash(schema)
    return CallShape(tuple(args), len(schema.returns))


def positional_names(schema: FunctionSchema) -> tuple[str, ...]:
    """The Python parameter names of ``schema``'s positional arguments, which its shape
    leaves out (Note [Wrapper cache])."""
    return tuple(python_name(a.name) for a in schema.positional)


def _refuse_python_name_clash(schema: FunctionSchema) -> None:
    """Two arguments whose Python names are one name (``def`` becomes ``def_``, beside a
    ``def_``) cannot both be parameters; the user must rename one."""
    seen: dict[str, str] = {}
    for arg in schema.arguments:
        name = python_name(arg.name)
        if name in seen:
            raise ArgumentValueError(
                PYTHON_NAME_CLASH.format(first=seen[name], second=arg.name, op=schema.full_name, name=name)
            )
        seen[name] = arg.name


def shape_and_defaults(schema: FunctionSchema) -> tuple[CallShape, tuple[Any, ...]]:
    """``schema``'s call shape and the Python values of its defaults, in argument order.

    Remembered per argument list: schemas that share their ``Argument`` objects (schema
    inference shares them, Note [Argument cache] in schema/_infer.py) share the result, so
    ``@op`` on the hundredth ``(x: Tensor, y: Tensor)`` function does no work here. Keyed by
    the arguments' ids, with the argument tuples kept by the entry so those ids stay theirs
    (Note [Bounded caches] in vocabulary/_cache.py).
    """
    positional, kwarg_only = schema.positional, schema.kwarg_only
    key = (*map(id, positional), -1, *map(id, kwarg_only), len(schema.returns))
    known = _conventions.get(key)
    if known is not None:
        return known
    shape = call_shape(schema)
    defaults = tuple(default_value(a) for a in (*positional, *kwarg_only) if a.default is not None)
    return _conventions.put(key, (shape, defaults), keep=(positional, kwarg_only))


_SHAPES_LIMIT: Final = 4096
_conventions: Final[BoundedCache[tuple[int, ...], tuple[CallShape, tuple[Any, ...]]]] = BoundedCache(
    _SHAPES_LIMIT, "call shapes by argument ids"
)


# (argument name, keyword-only, no default, id of its type) -> its ArgShape, the type kept
# by the entry: ops share their arguments' shapes (``Tensor self`` is in most of them), so
# each is made once and the shapes of a library's ops are a few shared objects.
_arg_shapes: Final[BoundedCache[tuple[str, bool, bool, int], ArgShape]] = BoundedCache(
    _SHAPES_LIMIT, "argument shapes"
)


# id of a type object -> (its TensorUse, its check kind), the type kept by the entry:
# types are shared objects (the parser interns them, inference caches them), and walking
# one costs microseconds.
_facts_by_id: Final[BoundedCache[int, tuple[TensorUse, ArgCheck]]] = BoundedCache(_SHAPES_LIMIT, "type facts by id")


def _type_facts(type_: Type) -> tuple[TensorUse, ArgCheck]:
    known = _facts_by_id.get(id(type_))
    if known is not None:
        return known
    return _facts_by_id.put(id(type_), (tensor_use(type_), arg_check(type_)), keep=type_)
