"""The schema language: the model, its parser and printer, inference and compatibility.

Everything users and the rest of typedops need is importable from here::

    from typedops.schema import parse_schema, FunctionSchema, Argument
"""

from .._errors import SchemaInferenceError, SchemaParseError
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
]
