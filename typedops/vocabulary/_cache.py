"""One bounded cache for every memo in typedops (annotations, types, argument shapes...).

Note [Bounded caches]
~~~~~~~~~~~~~~~~~~~~~
Every process-wide memo in typedops is a ``BoundedCache``: a dict with a size limit.

*Eviction.* When a ``put`` finds the cache full, the older half of its entries (in
insertion order) is dropped first. Memory stays bounded; a program whose working set
fits in the limit never misses twice; one that streams new keys (generated functions,
fresh annotation objects) keeps its most recent half instead of starting cold; and a hit
does no bookkeeping (an LRU would reorder on every hit, on the hottest paths typedops
has). Dropping half at once keeps a put amortised O(1).

*Hits run in C.* ``cache.get`` is the underlying dict's own ``get``, bound once, so a
lookup costs what a plain dict lookup costs: schema inference, ``@op`` and shape
computation look up several entries per call.

*Keys holding ``id()``s.* Hashing a ``typing`` alias or a schema type runs Python code,
so several caches key on ``id(obj)`` (hashing an int runs in C). An id is only unique
among *live* objects: once ``obj`` dies, a new object may get its id and would wrongly
hit its entry. So such entries are put with ``keep=obj``: the cache holds ``obj`` for as
long as the entry exists, so no other object can have its id while the entry can hit,
and a hit needs no identity check. An evicted entry lets go of ``obj``; a later object
with the same id then misses, as it must. (The alternative -- storing ``obj`` beside the
value and checking ``is`` on each hit -- costs every hit a tuple index and a compare,
and would still keep ``obj`` alive.) The cost: up to ``limit`` otherwise dead objects
stay alive, which the limit bounds.

*Threads.* ``get`` takes no lock (a dict lookup is atomic). ``put``, eviction and
``clear`` take the cache's lock, and ``put`` stores the kept object before the entry
while eviction drops the entry before the kept object, so an entry that can hit always
has its object kept. Two threads missing together both compute and both put; the second
put wins, and as every cached value is a pure function of its key, either is right.
"""

from __future__ import annotations

import threading
from itertools import islice
from typing import Final, Generic, Protocol, TypeVar, overload

from ._errors import ArgumentValueError
from ._messages import BAD_CACHE_LIMIT

__all__ = ["BoundedCache"]

_K = TypeVar("_K")
_V = TypeVar("_V")
_D = TypeVar("_D")
_K_contra = TypeVar("_K_contra", contravariant=True)
_V_co = TypeVar("_V_co", covariant=True)

class _Get(Protocol[_K_contra, _V_co]):
    """What ``BoundedCache.get`` is: ``dict.get`` of its entries."""

    @overload
    def __call__(self, key: _K_contra, /) -> _V_co | None: ...
    @overload
    def __call__(self, key: _K_contra, default: _D, /) -> _V_co | _D: ...


class BoundedCache(Generic[_K, _V]):
    """A dict of at most ``limit`` entries (Note [Bounded caches]).

    ``get(key[, default])`` is ``dict.get``; ``put(key, value, keep=obj)`` stores an
    entry, evicting the older half first if the cache is full, and keeps ``obj`` alive
    as long as the entry exists (for keys built from ``id(obj)``).
    """

    __slots__ = ("limit", "name", "get", "_data", "_kept", "_lock")

    get: _Get[_K, _V]  # the dict's own ``get`` (an instance slot): a hit costs a dict lookup

    def __init__(self, limit: int, name: str) -> None:
        if type(limit) is not int or limit < 2:
            raise ArgumentValueError(BAD_CACHE_LIMIT.format(limit=limit))
        self.limit: Final = limit
        self.name: Final = name  # what the cache holds, for its repr
        self._data: dict[_K, _V] = {}
        # Objects whose ids are part of a key, by that key (Note [Bounded caches]).
        self._kept: dict[_K, object] = {}
        self._lock = threading.Lock()
        # The dict's own C method in the 'get' slot: a hit costs a dict lookup. Set through
        # object.__setattr__ so type checkers keep the typed overloads declared above.
        object.__setattr__(self, "get", self._data.get)

    def put(self, key: _K, value: _V, *, keep: object = None) -> _V:
        """Store ``value`` under ``key`` and return it; hold ``keep`` while the entry lives."""
        data = self._data
        with self._lock:
            if len(data) >= self.limit and key not in data:
                self._evict()
            if keep is not None:
                self._kept[key] = keep  # before the entry can hit (Note [Bounded caches])
            data[key] = value
        return value

    def _evict(self) -> None:
        """Drop the older half of the entries, in insertion order. The caller holds the lock."""
        data, kept = self._data, self._kept
        for key in list(islice(data, len(data) - self.limit // 2)):
            del data[key]
            kept.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return f"<BoundedCache {self.name}: {len(self._data)} of {self.limit} entries>"
