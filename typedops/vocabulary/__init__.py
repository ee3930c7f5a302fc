"""The vocabulary every layer shares: errors, value types (dtypes, devices, layouts),
dispatch keys with key sets, and the one bounded cache every layer's memos use. It
imports nothing else of typedops (PyTorch keeps the same things in c10/core, below both
its tensors and its dispatcher).
"""

from ._cache import BoundedCache
from ._dtypes import PYTHON_TYPE_DTYPES, SYM_INT_MARKER, Device, DType, Generator, Layout, MemoryFormat, Scalar, ScalarType, SymInt
from ._errors import (
    ArgumentError,
    ArgumentOverflowError,
    ArgumentValueError,
    DimensionError,
    NoKernelError,
    OperatorAttributeError,
    OperatorNotFoundError,
    RegistrationError,
    SchemaError,
    SchemaInferenceError,
    SchemaLookupError,
    SchemaMismatchError,
    SchemaParseError,
    StackError,
    TensorError,
    OutOfMemoryError,
    TypedopsError,
    UnsupportedError,
)
from ._keys import (
    ALIAS_KEYS,
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    EMPTY_KEYSET,
    NUM_RUNTIME_KEYS,
    DispatchKey,
    DispatchKeySet,
    alias_expansion,
    autograd_key_for,
    backend_key_for,
)

__all__ = [
    # errors
    "TypedopsError",
    "SchemaParseError",
    "SchemaInferenceError",
    "SchemaMismatchError",
    "RegistrationError",
    "OperatorNotFoundError",
    "NoKernelError",
    "SchemaError",
    "SchemaLookupError",
    "OperatorAttributeError",
    "ArgumentError",
    "ArgumentValueError",
    "ArgumentOverflowError",
    "StackError",
    "TensorError",
    "OutOfMemoryError",
    "DimensionError",
    "UnsupportedError",
    # value types
    "ScalarType",
    "PYTHON_TYPE_DTYPES",
    "DType",
    "Layout",
    "MemoryFormat",
    "Device",
    "Generator",
    "SymInt",
    "Scalar",
    "SYM_INT_MARKER",
    # dispatch keys
    "DispatchKey",
    "DispatchKeySet",
    "BACKEND_KEYS",
    "AUTOGRAD_KEYS",
    "ALIAS_KEYS",
    "EMPTY_KEYSET",
    "NUM_RUNTIME_KEYS",
    "alias_expansion",
    "autograd_key_for",
    "backend_key_for",
    # caches
    "BoundedCache",
]
