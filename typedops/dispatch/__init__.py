"""The dispatcher: keys and key sets, operators and their tables, registration."""

from ._collector import bulk_registration
from ._dispatcher import Dispatcher, dispatcher
from ._handle import RULE_REGISTRARS, OperatorHandle, SlotSource, unboxed_slots
from ._kernel import Boxed, Fallthrough, add_registration_machinery, boxed, bound_to_keys, call_through_stack, fallthrough
from ..vocabulary import (
    ALIAS_KEYS,
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    DispatchKey,
    DispatchKeySet,
    alias_expansion,
    autograd_key_for,
    backend_key_for,
)
from ._signature import check_kernel_signature
from ._typed import (
    AutogradContext,
    Gradients,
    InDims,
    OutDims,
    TypedOperatorHandle,
    VmapInfo,
    describe_as,
    function_for,
    typed,
)
from ._entry import check_devices, one_device, selects_backend_by_device
from ._library import DefinitionHandle, Library, RegistrationHandle
from ._scoped import ScopedFallback
from ._ops import (
    OpNamespace,
    OpOverloadPacket,
    binding_problem,
    call_overload,
    load_lazy_library,
    ops,
    register_bundled_library,
)
from ._tls import (
    KeysChanged,
    allow_keys,
    exclude_keys,
    include_keys,
    local_exclude,
    local_include,
    python_fallback,
    python_modes,
    set_python_modes,
)

__all__ = [
    # keys
    "DispatchKey",
    "DispatchKeySet",
    "BACKEND_KEYS",
    "AUTOGRAD_KEYS",
    "ALIAS_KEYS",
    "alias_expansion",
    "autograd_key_for",
    "backend_key_for",
    "include_keys",
    "exclude_keys",
    "allow_keys",
    "KeysChanged",
    "local_include",
    "local_exclude",
    "python_fallback",
    "python_modes",
    "set_python_modes",
    # registration
    "Library",
    "RegistrationHandle",
    "DefinitionHandle",
    "bulk_registration",
    "fallthrough",
    "Fallthrough",
    "boxed",
    "Boxed",
    "call_through_stack",
    "add_registration_machinery",
    "ScopedFallback",
    "selects_backend_by_device",
    "bound_to_keys",
    # finding and calling
    "Dispatcher",
    "dispatcher",
    "OperatorHandle",
    "SlotSource",
    "unboxed_slots",
    "ops",
    "OpNamespace",
    "OpOverloadPacket",
    "register_bundled_library",
    "load_lazy_library",
    # typed handles
    "TypedOperatorHandle",
    "AutogradContext",
    "Gradients",
    "VmapInfo",
    "InDims",
    "OutDims",
    "RULE_REGISTRARS",
    "typed",
    "function_for",
    "describe_as",
    # what layers above check kernels and calls with
    "check_kernel_signature",
    "binding_problem",
    "check_devices",
    "one_device",
    "call_overload",
]
