"""The Profiler key's boxed fallback: times every op call, feeds sessions and observers.

Note [What the profiler records]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
One boxed fallback on ``DispatchKey.Profiler`` serves every op while any profile or
observing block is open (Note [Fallbacks registered while in use] in dispatch/_scoped.py);
a block turns the key on for its own thread and asyncio task. Per call the fallback reads
two clocks and appends one tuple to each open session of the caller's context:
``(op handle, start ns, end ns, thread id, input shapes or None)``. Everything else --
names, total and self times, per-op sums, percentages, the Chrome trace -- is computed
when a report is asked for, so the call pays only for the clocks and the append.

Self time is total time minus the total time of the op calls made directly inside it,
found from the intervals, thread by thread (``_report.with_self_times``): a call's
interval holds those of the calls it makes. Calls of different asyncio tasks never
interleave on one thread: a kernel never awaits, so an op call begins and ends before
another task runs there.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Optional, TypeGuard, cast

from ..vocabulary import DispatchKey, DispatchKeySet
from ..tensor import Tensor
from ..dispatch import OperatorHandle, ScopedFallback, include_keys

__all__ = ["Session", "SESSIONS", "FALLBACK", "PROFILER_ON", "Observers", "OBSERVERS", "shapes_of", "Event"]

# (op, start ns, end ns, thread id, input shapes or None)
Event = tuple[OperatorHandle, int, int, int, Optional[tuple[Any, ...]]]
ObserverPair = tuple[Optional[Callable[..., Any]], Optional[Callable[..., Any]]]


class Session:
    """What one profile block records (its events), and whether it wants input shapes."""

    __slots__ = ("record_shapes", "events", "started")

    def __init__(self, record_shapes: bool) -> None:
        self.record_shapes = record_shapes
        self.events: list[Event] = []
        self.started = time.perf_counter_ns()


SESSIONS: Final = contextvars.ContextVar[tuple[Session, ...]]("typedops_profile_sessions", default=())


class Observers:
    """The users' observers, process-wide: a tuple replaced (never changed) under a lock."""

    __slots__ = ("pairs", "_lock")

    def __init__(self) -> None:
        self.pairs: tuple[ObserverPair, ...] = ()
        self._lock = threading.Lock()

    def add(self, pair: ObserverPair) -> None:
        with self._lock:
            self.pairs = (*self.pairs, pair)

    def remove(self, pair: ObserverPair) -> None:
        with self._lock:
            self.pairs = tuple(p for p in self.pairs if p is not pair)


OBSERVERS: Final = Observers()


def shapes_of(args: Sequence[Any]) -> tuple[Any, ...]:
    """Each argument's shape as torch's profiler shows it: a tensor's sizes, a list of
    them for a tensor list, ``[]`` for anything else."""
    shapes: list[Any] = []
    for value in args:
        if isinstance(value, Tensor):
            shapes.append(list(value.shape))
        elif _is_tensor_list(value):
            shapes.append([list(v.shape) for v in value])
        else:
            shapes.append([])
    return tuple(shapes)


def _is_tensor_list(value: object) -> TypeGuard[Sequence[Tensor]]:
    """Whether ``value`` is a non-empty list or tuple of tensors."""
    if not isinstance(value, (list, tuple)):
        return False
    items = cast("Sequence[object]", value)
    return len(items) > 0 and all(isinstance(v, Tensor) for v in items)


_now: Final = time.perf_counter_ns
_thread: Final = threading.get_ident


def _profiler_fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    sessions = SESSIONS.get()
    if OBSERVERS.pairs:
        _observed(op, keys, stack, sessions, OBSERVERS.pairs)
    elif len(sessions) == 1 and not sessions[0].record_shapes:
        # The common case, inlined: one session, no shapes (Note [What the profiler records]).
        start = _now()
        try:
            op.redispatch_boxed(keys, stack)
        finally:
            sessions[0].events.append((op, start, _now(), _thread(), None))
    elif sessions:
        _timed(op, keys, stack, sessions)
    else:
        op.redispatch_boxed(keys, stack)


def _timed(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any], sessions: tuple[Session, ...]) -> None:
    """Run the call below the Profiler key and append its event to ``sessions``."""
    shapes = None
    for session in sessions:
        if session.record_shapes:
            shapes = shapes_of(stack[len(stack) - len(op.schema.arguments) :])
            break
    start = _now()
    try:
        op.redispatch_boxed(keys, stack)
    finally:
        event = (op, start, _now(), _thread(), shapes)
        for session in sessions:
            session.events.append(event)


def _observed(
    op: OperatorHandle,
    keys: DispatchKeySet,
    stack: list[Any],
    sessions: tuple[Session, ...],
    observers: tuple[ObserverPair, ...],
) -> None:
    """The call while observers are registered: each ``start(op, args)`` sees the call's
    arguments before it runs, each ``end(op, token)`` gets what its start returned."""
    args = stack[len(stack) - len(op.schema.arguments) :]
    tokens = [None if start is None else start(op, args) for start, _ in observers]
    try:
        if sessions:
            _timed(op, keys, stack, sessions)
        else:
            op.redispatch_boxed(keys, stack)
    finally:
        for (_, end), token in zip(observers, tokens):
            if end is not None:
                end(op, token)


FALLBACK: Final = ScopedFallback(DispatchKey.Profiler, _profiler_fallback, "typedops.profile")
PROFILER_ON: Final = include_keys(DispatchKey.Profiler)
