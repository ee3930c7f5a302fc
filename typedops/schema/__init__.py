"""The schema language: the model, its parser and printer, inference and compatibility.

Everything users and the rest of typedops need is importable from here::

    from typedops.schema import parse_schema, FunctionSchema, Argument
"""

from ..vocabulary import SchemaInferenceError, SchemaParseError
from ._build import alias as build_alias
from ._build import argument as build_argument
from ._build import make_return as build_return
from ._build import schema as build_schema
from ._classes import register_tensor_class, tensor_class
from ._compat import is_backward_compatible_with, is_subtype
from ._defaults import DefaultValue, EnumDefault, format_literal, literal_value
from ._infer import infer_schema
from ._python_signature import signature_from_schema
from ._model import Argument, FunctionSchema, Return, SchemaKind
from ._parser import parse_schema, parse_type
from ._types import (
    ANY,
    BOOL,
    COMPLEX,
    DEVICE,
    FLOAT,
    INT,
    LAYOUT,
    MEMORY_FORMAT,
    SCALAR,
    SCALAR_TYPE,
    STR,
    SYM_INT,
    TENSOR,
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

__all__ = [
    # parsing and printing
    "parse_schema",
    "parse_type",
    "SchemaParseError",
    # the model
    "FunctionSchema",
    "Argument",
    "Return",
    "SchemaKind",
    "AliasInfo",
    # types
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
    # defaults
    "DefaultValue",
    "EnumDefault",
    "literal_value",
    "format_literal",
    # compatibility
    "is_backward_compatible_with",
    "is_subtype",
    # inference
    "infer_schema",
    "signature_from_schema",
    "SchemaInferenceError",
    # unchecked builders for code that already checked (the parser, inference, generated code)
    "build_schema",
    "build_argument",
    "build_return",
    "build_alias",
    # the class annotations name Tensor with, registered by the tensor layer
    "register_tensor_class",
    "tensor_class",
]
