"""Thread-local include and exclude key sets, changed only through context managers.

Note [Thread-local keys]
~~~~~~~~~~~~~~~~~~~~~~~~
Each thread has its own include set (keys added to every call's key set, e.g. Tracer
while tracing) and exclude set (keys removed, e.g. the autograd keys inside an autograd
kernel). Reading a ``threading.local`` on every call would cost more than the rest of
the dispatch, so a process-wide counter ``STATE.active`` says how many include/exclude
contexts are open in any thread. Calls read the thread-local sets only while it is
non-zero; a thread with nothing open then finds empty sets, so the answer is right in
every thread, and the common case (nothing open anywhere) costs one attribute load.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from typing import Any
from contextlib import AbstractContextManager, contextmanager

from ..vocabulary import DispatchKey, DispatchKeySet

__all__ = ["include_keys", "exclude_keys", "local_include", "local_exclude", "apply_local", "keep_flag_in", "STATE"]


class _State:
    __slots__ = ("active", "lock", "holders")

    def __init__(self) -> None:
        self.active = 0  # open include/exclude contexts, all threads together
        self.lock = threading.Lock()
        # Namespaces (the globals of generated entry code) that keep a copy of the
        # flag as '_tls_active', so the hot path reads one global instead of an attribute.
        self.holders: list[dict[str, Any]] = []

    def change(self, delta: int) -> None:
        with self.lock:
            self.active += delta
            for holder in self.holders:
                holder["_tls_active"] = self.active


STATE = _State()


def keep_flag_in(namespace: dict[str, Any]) -> None:
    """Keep ``namespace['_tls_active']`` equal to ``STATE.active`` from now on."""
    with STATE.lock:
        namespace["_tls_active"] = STATE.active
        STATE.holders.append(namespace)


class _Local(threading.local):
    def __init__(self) -> None:
        self.include = 0
        self.exclude = 0


_local = _Local()


def local_include() -> DispatchKeySet:
    """This thread's include set."""
    return DispatchKeySet.from_bits(_local.include)


def local_exclude() -> DispatchKeySet:
    """This thread's exclude set."""
    return DispatchKeySet.from_bits(_local.exclude)


def apply_local(bits: int) -> int:
    """``bits`` with this thread's include set added and exclude set removed."""
    local = _local
    return (bits | local.include) & ~local.exclude


def _as_bits(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> int:
    if isinstance(keys, DispatchKeySet):
        return int(keys)
    return int(DispatchKeySet(keys))  # a single key or key name counts as one key


@contextmanager
def _changed(include: int, exclude: int) -> Generator[None, None, None]:
    local = _local
    saved = (local.include, local.exclude)
    STATE.change(+1)
    try:
        # Including a key undoes an outer exclusion of it, and the other way round.
        local.include = (saved[0] | include) & ~exclude
        local.exclude = (saved[1] | exclude) & ~include
        yield
    finally:
        local.include, local.exclude = saved
        STATE.change(-1)


def include_keys(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> AbstractContextManager[None]:
    """Add ``keys`` to every call's key set in this thread, until the block exits.

    ``with include_keys(DispatchKey.Tracer): ...`` sends every op call in the block
    through the Tracer key first. Leaving the block (also by an exception) restores the
    sets exactly as they were.
    """
    return _changed(_as_bits(keys), 0)


def exclude_keys(keys: Iterable[DispatchKey | str] | DispatchKey | DispatchKeySet | str) -> AbstractContextManager[None]:
    """Remove ``keys`` from every call's key set in this thread, until the block exits."""
    return _changed(0, _as_bits(keys))
