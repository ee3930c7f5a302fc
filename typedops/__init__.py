"""typedops: a type-checked operator library for Python.

The public surface, grouped by topic; implementation lives in ``_``-prefixed modules.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .batching import vmap
from .custom_ops import Op, op
from .dispatch import (
    Library,
    OperatorHandle,
    RegistrationHandle,
    TypedOperatorHandle,
    boxed,
    bulk_registration,
    dispatcher,
    exclude_keys,
    fallthrough,
    include_keys,
    ops,
    register_bundled_library,
)
from .modes import DispatchMode, FakeTensor, FakeTensorMode
from .tensor import Tensor, tensor
from .vocabulary import (
    Device,
    DispatchKey,
    DispatchKeySet,
    DType,
    Generator,
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
    "DType",
    "Layout",
    "Device",
    "MemoryFormat",
    "Generator",
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
    # the boxed path's other consumers: tracing, profiling, dispatch modes, fake tensors
    "trace",
    "Program",
    "profile",
    "DispatchMode",
    "FakeTensorMode",
    "FakeTensor",
    "opcheck",
    # programs that outlive the process
    "load",
    "ProgramFormatError",
    # autograd
    "autograd",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    # batching
    "vmap",
]
__version__ = "0.1.0"


def _load_core() -> Any:
    # import_module, not ``from . import core``: that would ask __getattr__ below first.
    return import_module(f"{__name__}.core")


# The package, not the dispatcher, names its bundled library (Note [Loading the core
# library] in dispatch/_ops.py): ops.core loads it on first use.
register_bundled_library("core", _load_core)

# Imported on first use, so ``import typedops`` does not pay for them: name -> its package.
# (The modes are imported above: their Python-key fallback is registered at import.)
_ON_FIRST_USE = {
    "trace": "tracing",
    "Program": "tracing",
    "profile": "profiler",
    "opcheck": "testing",
    "load": "programs",
    "ProgramFormatError": "programs",
}

if TYPE_CHECKING:
    from . import core as core
    from . import func as func
    from .profiler import profile as profile
    from .programs import ProgramFormatError as ProgramFormatError
    from .programs import load as load
    from .testing import opcheck as opcheck
    from .tracing import Program as Program
    from .tracing import trace as trace
else:

    def __getattr__(name: str) -> Any:
        """``typedops.core`` imports the bundled core library on first use (see Note
        [Loading the core library] in dispatch/_ops.py); ``trace``, ``Program``,
        ``profile``, ``opcheck``, ``load`` and ``ProgramFormatError`` import their packages
        on first use, and ``typedops.func`` its package."""
        if name == "core":
            return _load_core()
        if name == "func":  # typedops.func after ``import typedops``, as torch.func
            return import_module(f"{__name__}.func")
        package = _ON_FIRST_USE.get(name)
        if package is not None:
            value = getattr(import_module(f"{__name__}.{package}"), name)
            globals()[name] = value
            return value
        raise AttributeError(f"module 'typedops' has no attribute {name!r}")
