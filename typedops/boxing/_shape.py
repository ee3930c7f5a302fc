"""Signature shapes: what generated call code depends on, and nothing more.

Note [Wrapper cache]
~~~~~~~~~~~~~~~~~~~~
Generated code is compiled once per *shape* and shared: every ``(Tensor, Tensor) ->
Tensor`` op uses the same compiled unboxing wrapper. A shape records only what changes
the generated text -- how many positional arguments, the Python names of keyword-only
ones (they are passed by keyword), which arguments carry tensors and how, which have
defaults, how many returns. Op names, default values and kernels are bound when a
compiled factory is called, never written into the source.
"""

from __future__ import annotations

import enum

from typing import Any, Final, NamedTuple

from ..vocabulary import ArgumentValueError
from ..schema import Argument, BaseType, DictType, FunctionSchema, ListType, OptionalType, TupleType, Type
from ._values import default_value, python_name

__all__ = ["TensorUse", "ArgShape", "CallShape", "call_shape", "shape_and_defaults", "tensor_use", "check_kind"]


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


# How a boxed call checks an argument's value quickly (see check_kind).
_CHECK_BY_BASE: Final = {
    "int": "int", "SymInt": "int", "DeviceIndex": "int",
    "float": "float", "SymFloat": "float",
    "bool": "bool", "SymBool": "bool",
    "Scalar": "scalar", "complex": "complex", "str": "str",
    "ScalarType": "scalar_type", "Layout": "layout", "MemoryFormat": "memory_format",
    "Device": "device",
}  # fmt: skip
_UNCHECKED: Final = frozenset({"Any", "Generator", "Storage", "Stream", "QScheme", "Dimname", "Capsule", "AnyClassType", "AnyEnumType"})


def check_kind(type_: Type) -> str:
    """The fast check a boxed call makes on a value of ``type_``.

    ``"tensor"``: the key extraction already checks it; a base-type kind (``"int"``,
    ``"float"``, ...) and ``"opt_"`` + kind: an exact-type test (subclasses go to the slow
    check, which accepts them); ``"slow"``: the full ``mismatch`` check every call
    (lists, dicts, tuples); ``"none"``: not checked (``Any``, type variables, classes).
    """
    if type_.is_tensor_like():
        return "tensor"
    optional = isinstance(type_, OptionalType)
    inner = type_.elem if isinstance(type_, OptionalType) else type_
    if isinstance(inner, BaseType):
        if inner.name in _UNCHECKED:
            return "none"
        kind = _CHECK_BY_BASE.get(inner.name)
        if kind is not None:
            return f"opt_{kind}" if optional else kind
    if isinstance(inner, (ListType, TupleType, DictType)):
        return "slow"
    return "none"


class ArgShape(NamedTuple):
    name: str  # the Python parameter name (schema name, keywords get a trailing '_')
    kwarg_only: bool
    has_default: bool
    tensors: TensorUse
    check: str  # see check_kind


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
        raise ArgumentValueError(
            f"{schema.full_name} takes or returns '...'; typedops operators need a fixed "
            "argument and return list"
        )
    # Argument names are ASCII identifiers (the schema model checks them); python_name
    # renames Python keywords, so every name is safe to write into generated code.
    args: list[ArgShape] = []
    for args_of, kwarg_only in ((schema.positional, False), (schema.kwarg_only, True)):
        for arg in args_of:
            type_ = arg.type
            key = (arg.name, kwarg_only, arg.default is None, id(type_))
            known = _arg_shapes.get(key)
            if known is None or known[0] is not type_:
                tensors, check = _type_facts(type_)
                known = (type_, ArgShape(python_name(arg.name), kwarg_only, arg.default is not None, tensors, check))
                if len(_arg_shapes) >= _SHAPES_LIMIT:
                    _arg_shapes.clear()
                _arg_shapes[key] = known  # keeps the type alive, so its id stays its own
            args.append(known[1])
    return CallShape(tuple(args), len(schema.returns))


def shape_and_defaults(schema: FunctionSchema) -> tuple[CallShape, tuple[Any, ...]]:
    """``schema``'s call shape and the Python values of its defaults, in argument order.

    Remembered per argument list: schemas that share their ``Argument`` objects (schema
    inference shares them, Note [Argument cache] in schema/_infer.py) share the result, so
    ``@op`` on the hundredth ``(x: Tensor, y: Tensor)`` function does no work here. Keyed by
    the arguments' ids, with the argument tuples held so those ids stay theirs.
    """
    positional, kwarg_only = schema.positional, schema.kwarg_only
    key = (*map(id, positional), -1, *map(id, kwarg_only), len(schema.returns))
    known = _conventions.get(key)
    if known is not None:
        return known[2], known[3]
    shape = call_shape(schema)
    defaults = tuple(default_value(a) for a in (*positional, *kwarg_only) if a.default is not None)
    if len(_conventions) >= _SHAPES_LIMIT:
        _conventions.clear()
    _conventions[key] = (positional, kwarg_only, shape, defaults)
    return shape, defaults


_conventions: dict[tuple[int, ...], tuple[tuple[Argument, ...], tuple[Argument, ...], CallShape, tuple[Any, ...]]] = {}


# (argument name, keyword-only, no default, id of its type) -> (the type, its ArgShape):
# ops share their arguments' shapes (``Tensor self`` is in most of them), so each is made
# once and the shapes of a library's ops are a few shared objects.
_SHAPES_LIMIT: Final = 4096
_arg_shapes: dict[tuple[str, bool, bool, int], tuple[Type, ArgShape]] = {}


# Type object -> (its TensorUse, its check kind), by identity: types are shared objects
# (the parser interns them, inference caches them), and walking one costs microseconds.
_facts_by_id: dict[int, tuple[Type, TensorUse, str]] = {}


def _type_facts(type_: Type) -> tuple[TensorUse, str]:
    known = _facts_by_id.get(id(type_))
    if known is not None and known[0] is type_:
        return known[1], known[2]
    facts = (tensor_use(type_), check_kind(type_))
    if len(_facts_by_id) >= 4096:
        _facts_by_id.clear()
    _facts_by_id[id(type_)] = (type_, *facts)  # keeps the type alive, so its id stays its own
    return facts
