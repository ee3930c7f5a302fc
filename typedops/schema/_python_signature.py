"""The reverse of schema inference: a ``FunctionSchema`` -> a typed Python signature.

Stubs and typed handles use it. For every type both directions support,
``infer_schema`` of the signature made here gives back the schema (a property test in
tests/test_schema_infer.py holds them to it).
"""

from __future__ import annotations

import functools
import inspect
import keyword
import types
from typing import Any, Optional

from ..vocabulary import SchemaInferenceError
from ..vocabulary import Device, Generator, Layout, MemoryFormat, Scalar, ScalarType, SchemaError, SymInt
from ._classes import tensor_class
from ._defaults import DefaultValue, EnumDefault, literal_value
from ._infer import _DICT_KEYS, _EMPTY, _ENUMS
from ._messages import (
    _DEFAULT_ORDER,
    _NO_PYTHON_DEFAULT,
    _NO_PYTHON_FORM,
    _PYTHON_KEYWORD,
    _SIZED_RETURN,
    _VARARG_SCHEMA,
    ARGUMENT_SUBJECT,
    LONE_VALUE_UNSIZED,
    NO_VALUE_OF_TYPE,
    NUMBERED_RETURN,
    SIZED_LIST_NEEDS,
    THE_RETURN,
)
from ._model import Argument, FunctionSchema
from ._types import BaseType, DictType, ListType, OptionalType, Type

__all__ = ["signature_from_schema"]



@functools.cache
def _python_bases() -> dict[str, object]:
    """Schema base type name -> Python annotation (Note [Tensor class by registration])."""
    return {
        "Tensor": tensor_class(), "int": int, "SymInt": SymInt, "float": float, "bool": bool,
        "str": str, "complex": complex, "Scalar": Scalar, "ScalarType": ScalarType,
        "Layout": Layout, "Device": Device, "MemoryFormat": MemoryFormat, "Generator": Generator,
    }  # fmt: skip


def _python_type(type_: Type) -> Any:
    """The Python annotation for ``type_``, or None when it has none."""
    if isinstance(type_, BaseType):
        return _python_bases().get(type_.name)
    if isinstance(type_, OptionalType):
        inner = _python_type(type_.elem)
        return None if inner is None else Optional[inner]
    if isinstance(type_, ListType):
        inner = _python_type(type_.elem)
        if inner is None or type_.size == 0:
            return None
        if type_.size is None:
            return types.GenericAlias(list, (inner,))
        return types.GenericAlias(tuple, (inner,) * type_.size)
    if isinstance(type_, DictType) and type_.key in _DICT_KEYS:
        value = _python_type(type_.value)
        return None if value is None else types.GenericAlias(dict, (_python_type(type_.key), value))
    return None


def _python_default(type_: Type, value: DefaultValue) -> object:
    """Schema default ``value`` as the Python value a parameter of ``type_`` takes.

    Raises ``LookupError``/``ValueError`` when it is no such value.
    """
    if value is None:
        return None
    if isinstance(type_, OptionalType):
        type_ = type_.elem
    if isinstance(type_, ListType):
        if isinstance(value, tuple):
            if type_.size is not None and len(value) != type_.size:
                raise SchemaError(SIZED_LIST_NEEDS.format(type=type_, size=type_.size))  # 'int[1] dim=[]'
            return tuple(_python_default(type_.elem, v) for v in value)
        if type_.size is None:
            raise SchemaError(LONE_VALUE_UNSIZED)
        return (_python_default(type_.elem, value),) * type_.size  # 'int[2] stride=1'
    if isinstance(type_, BaseType):
        enum = _ENUMS.get(type_.name)
        if enum is not None and isinstance(value, EnumDefault):
            return enum[value.name]
        if enum is not None and type(value) is int:
            return enum(value)  # TorchScript writes enum defaults as their code
        if type_.name == "Device" and isinstance(value, str):
            return Device.parse(value)
    if isinstance(value, (EnumDefault, tuple)):
        raise SchemaError(NO_VALUE_OF_TYPE.format(value=value, type=type_))
    return value


def signature_from_schema(schema: FunctionSchema) -> inspect.Signature:
    """The Python signature of a kernel for ``schema``: annotations, defaults and return.

    Annotations use typedops' types (``Tensor``, ``Optional[...]``, ``list[...]``,
    ``tuple[int, int]`` for ``int[2]``, the enums); defaults are Python values (enum
    members, ``Device``, tuples for lists). Alias annotations have no Python form and
    are dropped: pass the written arguments to ``infer_schema`` as ``mutates_args``.
    Raises ``SchemaInferenceError`` naming the argument whose type has no Python form.
    """
    full = schema.full_name
    if schema.is_vararg or schema.is_varret:
        raise SchemaInferenceError(_VARARG_SCHEMA.format(schema=full))
    params: list[inspect.Parameter] = []
    seen_default = False
    for arg in schema.positional:
        if arg.default is not None:
            seen_default = True
        elif seen_default:
            raise SchemaInferenceError(_DEFAULT_ORDER.format(name=arg.name, schema=full))
        params.append(_python_parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, full))
    for arg in schema.kwarg_only:
        params.append(_python_parameter(arg, inspect.Parameter.KEYWORD_ONLY, full))
    return inspect.Signature(params, return_annotation=_python_returns(schema))


def _python_parameter(arg: Argument, kind: inspect._ParameterKind, full: str) -> inspect.Parameter:
    if keyword.iskeyword(arg.name):
        raise SchemaInferenceError(_PYTHON_KEYWORD.format(name=arg.name, schema=full))
    annotation = _python_type(arg.type)
    if annotation is None:
        raise SchemaInferenceError(_NO_PYTHON_FORM.format(
            subject=ARGUMENT_SUBJECT.format(name=arg.name), schema=full, type=arg.type
        ))
    default: object = _EMPTY
    if arg.default is not None:
        try:
            default = _python_default(arg.type, literal_value(arg.default))
        except (LookupError, ValueError):
            raise SchemaInferenceError(_NO_PYTHON_DEFAULT.format(
                name=arg.name, schema=full, text=arg.default, type=arg.type
            )) from None
    return inspect.Parameter(arg.name, kind, default=default, annotation=annotation)


def _python_returns(schema: FunctionSchema) -> object:
    returns = schema.returns
    if not returns:
        return None
    if len(returns) == 1 and isinstance(returns[0].type, ListType) and returns[0].type.size is not None:
        raise SchemaInferenceError(_SIZED_RETURN.format(schema=schema.full_name, type=returns[0].type))
    annotations: list[object] = []
    for index, ret in enumerate(returns):
        annotation = _python_type(ret.type)
        if annotation is None:
            subject = THE_RETURN if len(returns) == 1 else NUMBERED_RETURN.format(index=index)
            raise SchemaInferenceError(_NO_PYTHON_FORM.format(
                subject=subject, schema=schema.full_name, type=ret.type
            ))
        annotations.append(annotation)
    if len(annotations) == 1:
        return annotations[0]
    return types.GenericAlias(tuple, tuple(annotations))
