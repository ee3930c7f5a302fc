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

            close = difflib.get_close_matches(key, cls.__members__, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"unknown dispatch key {key!r}{hint} (keys: {', '.join(cls.__members__)})"
            ) from None

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


class DispatchKeySet:
    """An immutable set of runtime dispatch keys, stored as one int bit mask.

    ``highest()`` is the key a call with this set dispatches to; iteration goes from the
    highest priority down, the order in which a call meets the keys.
    """

    __slots__ = ("bits",)
    bits: int

    def __init__(self, keys: Iterable[DispatchKey | str] | DispatchKey = ()) -> None:
        if isinstance(keys, DispatchKey):
            keys = (keys,)
        bits = 0
        for key in keys:
            k = DispatchKey.parse(key)
            if k.is_alias:
                expanded = ", ".join(e.name for e in alias_expansion(k))
                raise ValueError(
                    f"{k.name} is an alias key and cannot be in a DispatchKeySet; "
                    f"use the runtime keys it stands for ({expanded})"
                )
            bits |= 1 << k
        object.__setattr__(self, "bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> DispatchKeySet:
        ks = object.__new__(cls)
        object.__setattr__(ks, "bits", bits)
        return ks

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DispatchKeySet is immutable")

    # -- set algebra ---------------------------------------------------------------
    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self.bits | other.bits)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self.bits & other.bits)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self.bits & ~other.bits)

    def add(self, key: DispatchKey) -> DispatchKeySet:
        return self | DispatchKeySet(key)

    def remove(self, key: DispatchKey) -> DispatchKeySet:
        return self - DispatchKeySet(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, DispatchKey) and not key.is_alias and bool(self.bits >> key & 1)

    def __bool__(self) -> bool:
        return self.bits != 0

    def __len__(self) -> int:
        return self.bits.bit_count()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DispatchKeySet) and other.bits == self.bits

    def __hash__(self) -> int:
        return hash(self.bits)

    # -- priority ----------------------------------------------------------------------
    def highest(self) -> DispatchKey:
        """The highest-priority key; ``ValueError`` for the empty set."""
        if not self.bits:
            raise ValueError("an empty DispatchKeySet has no highest key")
        return _RUNTIME_KEYS[self.bits.bit_length() - 1]

    def below(self, key: DispatchKey) -> DispatchKeySet:
        """The keys of lower priority than ``key``: where a redispatch continues."""
        return DispatchKeySet.from_bits(self.bits & ((1 << key) - 1))

    def highest_backend(self) -> DispatchKey | None:
        backend_bits = self.bits & _BACKEND_MASK
        return _RUNTIME_KEYS[backend_bits.bit_length() - 1] if backend_bits else None

    def __iter__(self) -> Iterator[DispatchKey]:
        bits = self.bits
        while bits:
            top = bits.bit_length() - 1
            yield _RUNTIME_KEYS[top]
            bits &= ~(1 << top)

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"


_BACKEND_MASK: Final = sum(1 << k for k in BACKEND_KEYS)
EMPTY_KEYSET: Final = DispatchKeySet()
