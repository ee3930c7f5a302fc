"""The dispatcher: keys and key sets, operators and their tables, registration."""

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

__all__ = [
    "DispatchKey",
    "DispatchKeySet",
    "BACKEND_KEYS",
    "AUTOGRAD_KEYS",
    "ALIAS_KEYS",
    "alias_expansion",
    "autograd_key_for",
    "backend_key_for",
]
