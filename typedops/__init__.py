"""typedops: a type-checked operator library for Python.

The public surface, grouped by topic; implementation lives in ``_``-prefixed modules.
"""

from ._dtypes import Device, Layout, MemoryFormat, Scalar, ScalarType, SymInt
from ._errors import SchemaInferenceError, SchemaParseError, TypedopsError
from ._tensor import Tensor, tensor
from .dispatch import DispatchKey, DispatchKeySet

__all__ = [
    # errors
    "TypedopsError",
    "SchemaParseError",
    "SchemaInferenceError",
    # tensors and the value types schemas name
    "Tensor",
    "tensor",
    "Scalar",
    "SymInt",
    "ScalarType",
    "Layout",
    "Device",
    "MemoryFormat",
    # dispatch
    "DispatchKey",
    "DispatchKeySet",
]
__version__ = "0.1.0"
