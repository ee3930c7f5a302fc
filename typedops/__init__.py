"""typedops: a type-checked operator library for Python.

The public surface, grouped by topic; implementation lives in ``_``-prefixed modules.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any, Final

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
from ._core_methods import NAMES as _CORE_METHOD_NAMES
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


# Note [Methods that load the core library]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The core library installs its Tensor methods and operators (``x.sum()``, ``x + y``)
# when it is loaded, and ``import typedops`` does not load it (Note [Loading the core
# library] in dispatch/_ops.py). Until then each of those names (``_core_methods.NAMES``,
# generated with the library) is a stand-in that loads the library -- which sets the real
# method over it -- and calls the real one: ``typedops.tensor([1.0]) + 1`` works as the
# stubs say, where it raised TypeError. Tensor gets no ``__getattr__`` hook for this:
# every attribute load would pay for it.
def _loads_core(name: str) -> Any:
    def stand_in(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        _load_core()
        if getattr(Tensor, name) is stand_in:  # the library did not install it: Python's
            delattr(Tensor, name)  # AttributeError below, as without a stand-in
        return getattr(self, name)(*args, **kwargs)

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__doc__ = "Loads the core library, which puts the method here (Note [Methods that load the core library])."
    return stand_in


for _name in _CORE_METHOD_NAMES:
    if _name not in vars(Tensor):
        setattr(Tensor, _name, _loads_core(_name))

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


# PyTorch's dtype names (``torch.float32``, ``torch.long``): ``typedops.float32`` is
# ``ScalarType.float32``, ``typedops.long`` ``ScalarType.int64``. Defined last, as ``float``,
# ``int`` and ``bool`` hide the builtins in this module from here on; not in ``__all__``,
# so ``from typedops import *`` leaves the builtins alone.
uint8: Final = ScalarType.uint8
int8: Final = ScalarType.int8
int16: Final = ScalarType.int16
short: Final = ScalarType.int16
int32: Final = ScalarType.int32
int: Final = ScalarType.int32  # noqa: A001 -- torch.int
int64: Final = ScalarType.int64
long: Final = ScalarType.int64
float16: Final = ScalarType.float16
half: Final = ScalarType.float16
bfloat16: Final = ScalarType.bfloat16
float32: Final = ScalarType.float32
float: Final = ScalarType.float32  # noqa: A001 -- torch.float
float64: Final = ScalarType.float64
double: Final = ScalarType.float64
complex64: Final = ScalarType.complex64
cfloat: Final = ScalarType.complex64
complex128: Final = ScalarType.complex128
cdouble: Final = ScalarType.complex128
bool: Final = ScalarType.bool  # noqa: A001 -- torch.bool
