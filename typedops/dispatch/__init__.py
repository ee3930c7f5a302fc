"""The dispatcher: keys and key sets, operators and their tables, registration."""

from ._collector import bulk_registration
from ._dispatcher import Dispatcher, dispatcher
from ._handle import OperatorHandle
from ._kernel import Boxed, Fallthrough, boxed, fallthrough
from ._keys import (
    ALIAS_KEYS,
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    DispatchKey,
    DispatchKeySet,
    alias_expansion,
    autograd_key_for,
    backend_key_for,
)
from ._library import DefinitionHandle, Library, RegistrationHandle
from ._ops import OpNamespace, OpOverloadPacket, ops
from ._tls import exclude_keys, include_keys, local_exclude, local_include

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
    "local_include",
    "local_exclude",
    # registration
    "Library",
    "RegistrationHandle",
    "DefinitionHandle",
    "bulk_registration",
    "fallthrough",
    "Fallthrough",
    "boxed",
    "Boxed",
    # finding and calling
    "Dispatcher",
    "dispatcher",
    "OperatorHandle",
    "ops",
    "OpNamespace",
    "OpOverloadPacket",
]
