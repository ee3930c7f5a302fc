"""``ScopedFallback``: one global boxed fallback, registered while anybody uses it.

Note [Fallbacks registered while in use]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Tracing and profiling each own a functionality key (``Tracer``, ``Profiler``) and serve
it with one boxed fallback for every namespace. The fallback is registered when the first
session opens (in any thread or task) and removed when the last one closes, so while
nobody traces or profiles every op's table holds the built-in fallthrough again, and the
key is free for users' own fallbacks (tests and tools register them). Registering
recomputes the tables of the ops already called (about 10 µs an op); a call never pays
anything: sessions turn the key on for their own thread and task with ``include_keys``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..vocabulary import DispatchKey, RegistrationError
from ._dispatcher import GLOBAL_NAMESPACE
from ._library import Library
from ._messages import SCOPED_FALLBACK_TAKEN

__all__ = ["ScopedFallback"]


class ScopedFallback:
    """``fn(op, keys, stack)`` as the global fallback for ``key`` while ``acquire()``
    calls outnumber ``release()`` calls. ``user`` names the facility in errors."""

    __slots__ = ("key", "_fn", "_user", "_lock", "_count", "_library")

    def __init__(self, key: DispatchKey, fn: Callable[[Any, Any, list[Any]], None], user: str) -> None:
        self.key = key
        self._fn = fn
        self._user = user
        self._lock = threading.Lock()
        self._count = 0
        self._library: Library | None = None

    def acquire(self) -> None:
        with self._lock:
            if self._count == 0:
                library = Library(GLOBAL_NAMESPACE, "IMPL")
                try:
                    library.fallback(self._fn, self.key)
                except RegistrationError as error:
                    raise RegistrationError(SCOPED_FALLBACK_TAKEN.format(user=self._user, key=self.key.name, error=error)) from None
                self._library = library
            self._count += 1

    def release(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count == 0 and self._library is not None:
                self._library.remove()
                self._library = None

    @property
    def active(self) -> bool:
        """Whether the fallback is registered now."""
        return self._count > 0
