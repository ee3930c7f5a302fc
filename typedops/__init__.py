"""typedops: a type-checked operator library for Python.

The public surface, grouped by topic; implementation lives in ``_``-prefixed modules.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._dtypes import Device, Layout, MemoryFormat, Scalar, ScalarType, SymInt
from ._errors import (
    NoKernelError,
    OperatorNotFoundError,
    RegistrationError,
    SchemaInferenceError,
    SchemaMismatchError,
    SchemaParseError,
    TypedopsError,
)
from ._op import Op, TypedOperatorHandle, op
from ._tensor import Tensor, tensor
from .dispatch import (
    DispatchKey,
    DispatchKeySet,
    Library,
    OperatorHandle,
    RegistrationHandle,
    boxed,
    bulk_registration,
    dispatcher,
    exclude_keys,
    fallthrough,
    include_keys,
    ops,
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
    # tensors and the value types schemas name
    "Tensor",
    "tensor",
    "Scalar",
    "SymInt",
    "ScalarType",
    "Layout",
    "Device",
    "MemoryFormat",
    # operators from typed functions
    "op",
    "Op",
    "TypedOperatorHandle",
    # dispatch
    "DispatchKey",
    "DispatchKeySet",
    "include_keys",
    "exclude_keys",
    "Library",
    "RegistrationHandle",
    "bulk_registration",
    "OperatorHandle",
    "fallthrough",
    "boxed",
    "dispatcher",
    "ops",
]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import core as core
else:

    def __getattr__(name: str) -> Any:
        """``typedops.core`` imports the bundled core library on first use (see Note
        [Loading the core library] in dispatch/_ops.py)."""
        if name == "core":
            return importlib.import_module("typedops.core")
        raise AttributeError(f"module 'typedops' has no attribute {name!r}")
