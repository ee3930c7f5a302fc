"""typedops: a type-checked operator library for Python.

The public surface, grouped by topic; implementation lives in ``_``-prefixed modules.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .custom_ops import Op, op
from .dispatch import (
    Library,
    OperatorHandle,
    RegistrationHandle,
    TypedOperatorHandle,
    boxed,
    dispatcher,
    exclude_keys,
    fallthrough,
    include_keys,
    ops,
    register_bundled_library,
)
from .tensor import Tensor, tensor
from .vocabulary import (
    Device,
    DispatchKey,
    DispatchKeySet,
    Layout,
    MemoryFormat,
    NoKernelError,
    OperatorNotFoundError,
    RegistrationError,
    Scalar,
    ScalarType,
    SchemaInferenceError,
    SchemaMismatchError,
    SchemaParseError,
    SymInt,
    TypedopsError,
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
    "OperatorHandle",
    "fallthrough",
    "boxed",
    "dispatcher",
    "ops",
    # autograd
    "autograd",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
]
__version__ = "0.1.0"


def _load_core() -> Any:
    # import_module, not ``from . import core``: that would ask __getattr__ below first.
    return import_module(f"{__name__}.core")


# The package, not the dispatcher, names its bundled library (Note [Loading the core
# library] in dispatch/_ops.py): ops.core loads it on first use.
register_bundled_library("core", _load_core)

if TYPE_CHECKING:
    from . import core as core
else:

    def __getattr__(name: str) -> Any:
        """``typedops.core`` imports the bundled core library on first use (see Note
        [Loading the core library] in dispatch/_ops.py)."""
        if name == "core":
            return _load_core()
        raise AttributeError(f"module 'typedops' has no attribute {name!r}")
