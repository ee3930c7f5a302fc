"""Dispatch keys and key sets.

Note [Key priority]
~~~~~~~~~~~~~~~~~~~
A runtime key's value is its bit position in a ``DispatchKeySet``, and a higher bit is a
higher priority: the key a call dispatches to is the highest bit of its key set, found
with one ``int.bit_length()``. Backends take the low bits, functionality keys sit above
them in the order PyTorch uses (the dispatcher write-up in shared/seeds/ walks through
it): a call first meets batching, then autocast, tracing, autograd, ADInplaceOrView, user
Python modes, BackendSelect, and finally lands on a backend kernel.

Alias keys (``Autograd``, ``CompositeImplicitAutograd``, ``CompositeExplicitAutograd``)
are not bits: they name a group of runtime keys and are expanded when a dispatch table
is computed (see Note [Table precedence] in _operator.py).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import Final

from ._errors import ArgumentValueError
from ._messages import (
    ALIAS_KEY_IN_KEYSET,
    ALIAS_KEY_OPERAND,
    DID_YOU_MEAN_KEY,
    EMPTY_KEYSET_HIGHEST,
    UNKNOWN_DISPATCH_KEY,
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


class DispatchKey(enum.IntEnum):
    """Runtime keys in priority order (lowest first), then the alias keys."""

    # -- backends -------------------------------------------------------------
    CPU = 0
    Meta = 1
    PrivateUse1 = 2
    PrivateUse2 = 3
    PrivateUse3 = 4
    # -- functionality, lowest priority first ---------------------------------
    BackendSelect = 5
    Python = 6
    ADInplaceOrView = 7
    AutogradOther = 8
    AutogradCPU = 9
    AutogradMeta = 10
    AutogradPrivateUse1 = 11
    AutogradPrivateUse2 = 12
    AutogradPrivateUse3 = 13
    Tracer = 14
    Profiler = 15
    Autocast = 16
    Batched = 17
    # -- alias keys: never in a key set, expanded when tables are computed -----
    Autograd = 64
    CompositeImplicitAutograd = 65
    CompositeExplicitAutograd = 66

    @property
    def is_alias(self) -> bool:
        return self >= _FIRST_ALIAS

    @property
    def is_backend(self) -> bool:
        return self <= DispatchKey.PrivateUse3

    @classmethod
    def parse(cls, key: DispatchKey | str) -> DispatchKey:
        """A key from itself or its name; the error lists the names on a typo."""
        if isinstance(key, DispatchKey):
            return key
        try:
            return cls[key]
        except KeyError:
            import difflib

            by_lower = {name.lower(): name for name in cls.__members__}
            close = difflib.get_close_matches(key.lower(), list(by_lower), n=1)
            hint = DID_YOU_MEAN_KEY.format(name=by_lower[close[0]]) if close else ""
            keys = ", ".join(cls.__members__)
            raise ArgumentValueError(UNKNOWN_DISPATCH_KEY.format(key=key, hint=hint, keys=keys)) from None

    def __repr__(self) -> str:
        return f"DispatchKey.{self.name}"

    def __str__(self) -> str:
        return self.name


_FIRST_ALIAS: Final = 64
NUM_RUNTIME_KEYS: Final = max(k for k in DispatchKey if k < _FIRST_ALIAS) + 1
_RUNTIME_KEYS: Final = tuple(k for k in DispatchKey if k < _FIRST_ALIAS)

BACKEND_KEYS: Final = tuple(k for k in _RUNTIME_KEYS if k.is_backend)
AUTOGRAD_KEYS: Final = (
    DispatchKey.AutogradOther,
    DispatchKey.AutogradCPU,
    DispatchKey.AutogradMeta,
    DispatchKey.AutogradPrivateUse1,
    DispatchKey.AutogradPrivateUse2,
    DispatchKey.AutogradPrivateUse3,
)
ALIAS_KEYS: Final = tuple(k for k in DispatchKey if k >= _FIRST_ALIAS)

_AUTOGRAD_FOR_BACKEND: Final = {
    DispatchKey.CPU: DispatchKey.AutogradCPU,
    DispatchKey.Meta: DispatchKey.AutogradMeta,
    DispatchKey.PrivateUse1: DispatchKey.AutogradPrivateUse1,
    DispatchKey.PrivateUse2: DispatchKey.AutogradPrivateUse2,
    DispatchKey.PrivateUse3: DispatchKey.AutogradPrivateUse3,
}
_BACKEND_FOR_AUTOGRAD: Final = {v: k for k, v in _AUTOGRAD_FOR_BACKEND.items()}


def autograd_key_for(backend: DispatchKey) -> DispatchKey:
    """The autograd key that goes with a backend (``CPU`` -> ``AutogradCPU``)."""
    return _AUTOGRAD_FOR_BACKEND.get(backend, DispatchKey.AutogradOther)


def backend_key_for(autograd: DispatchKey) -> DispatchKey | None:
    """The backend an autograd key belongs to (``AutogradCPU`` -> ``CPU``), if any."""
    return _BACKEND_FOR_AUTOGRAD.get(autograd)


def alias_expansion(key: DispatchKey) -> tuple[DispatchKey, ...]:
    """The runtime keys an alias key stands for; a runtime key stands for itself."""
    if key == DispatchKey.Autograd:
        return AUTOGRAD_KEYS
    if key == DispatchKey.CompositeExplicitAutograd:
        return BACKEND_KEYS
    if key == DispatchKey.CompositeImplicitAutograd:
        return AUTOGRAD_KEYS + BACKEND_KEYS
    return (key,)


class DispatchKeySet(int):
    """An immutable set of runtime dispatch keys: an ``int`` whose bit ``k`` is key ``k``.

    ``highest()`` is the key a call with this set dispatches to; iteration goes from the
    highest priority down, the order in which a call meets the keys. Being an int makes
    a key set as cheap to build and pass as the bit mask it is.
    """

    __slots__ = ()

    def __new__(cls, keys: Iterable[DispatchKey | str] | DispatchKey | str = ()) -> DispatchKeySet:
        if isinstance(keys, (DispatchKey, str)):
            keys = (keys,)  # one key (a str is a key name, not an iterable of names)
        bits = 0
        for key in keys:
            k = DispatchKey.parse(key)
            if k.is_alias:
                expanded = ", ".join(e.name for e in alias_expansion(k))
                raise ArgumentValueError(ALIAS_KEY_IN_KEYSET.format(key=k.name, expanded=expanded))
            bits |= 1 << k
        return int.__new__(cls, bits)

    @classmethod
    def from_bits(cls, bits: int) -> DispatchKeySet:
        """The key set whose bit mask is ``bits``."""
        return int.__new__(cls, bits)

    @property
    def bits(self) -> int:
        return int(self)

    # -- set algebra (results stay key sets) ----------------------------------------
    # The other operand is a key set (its bits) or a single key. A DispatchKey is an
    # IntEnum whose value is its bit *position*, so it must become 1 << key first.
    def __or__(self, other: int) -> DispatchKeySet:
        return int.__new__(DispatchKeySet, int(self) | _bits_of(other))

    def __and__(self, other: int) -> DispatchKeySet:
        return int.__new__(DispatchKeySet, int(self) & _bits_of(other))

    def __sub__(self, other: int) -> DispatchKeySet:
        return int.__new__(DispatchKeySet, int(self) & ~_bits_of(other))

    __ror__ = __or__
    __rand__ = __and__

    def add(self, key: DispatchKey) -> DispatchKeySet:
        return int.__new__(DispatchKeySet, int(self) | 1 << _runtime(key))

    def remove(self, key: DispatchKey) -> DispatchKeySet:
        return int.__new__(DispatchKeySet, int(self) & ~(1 << _runtime(key)))

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and key in DispatchKey.__members__:
            key = DispatchKey[key]
        return isinstance(key, DispatchKey) and not key.is_alias and bool(int(self) >> key & 1)

    def __len__(self) -> int:
        return int(self).bit_count()

    # -- priority ----------------------------------------------------------------------
    def highest(self) -> DispatchKey:
        """The highest-priority key; ``ValueError`` for the empty set."""
        if not self:
            raise ArgumentValueError(EMPTY_KEYSET_HIGHEST)
        return _RUNTIME_KEYS[int(self).bit_length() - 1]

    def below(self, key: DispatchKey) -> DispatchKeySet:
        """The keys of lower priority than ``key``: where a redispatch continues."""
        return int.__new__(DispatchKeySet, int(self) & ((1 << _runtime(key)) - 1))

    def highest_backend(self) -> DispatchKey | None:
        backend_bits = int(self) & _BACKEND_MASK
        return _RUNTIME_KEYS[backend_bits.bit_length() - 1] if backend_bits else None

    def __iter__(self) -> Iterator[DispatchKey]:
        bits = int(self)
        while bits:
            top = bits.bit_length() - 1
            yield _RUNTIME_KEYS[top]
            bits &= ~(1 << top)

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"

    __str__ = __repr__


def _bits_of(operand: int) -> int:
    if isinstance(operand, DispatchKey):
        return 1 << _runtime(operand)
    return int(operand)


def _runtime(key: DispatchKey) -> DispatchKey:
    if key.is_alias:
        raise ArgumentValueError(ALIAS_KEY_OPERAND.format(key=key.name))
    return key


_BACKEND_MASK: Final = sum(1 << k for k in BACKEND_KEYS)
EMPTY_KEYSET: Final = DispatchKeySet()
