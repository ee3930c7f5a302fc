"""``typedops.profile()``, ``observing()`` and ``add_observer``: the profiler's front door."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from ..vocabulary import ArgumentError
from ..dispatch import OperatorHandle
from . import _messages as msg
from ._record import FALLBACK, OBSERVERS, PROFILER_ON, SESSIONS, ObserverPair, Session
from ._report import FunctionEvent, OpStats, function_events, op_stats, render_table, write_chrome_trace

__all__ = ["Profile", "profile", "observing", "add_observer", "ObserverHandle"]


class _ProfilerOn:
    """A block with the Profiler key on in this thread and task (the fallback registered)."""

    __slots__ = ()

    def __enter__(self) -> None:
        FALLBACK.acquire()
        PROFILER_ON.__enter__()

    def __exit__(self, *exc: object) -> None:
        PROFILER_ON.__exit__(*exc)
        FALLBACK.release()


class Profile:
    """A profiling block: ``with typedops.profile() as prof:`` records every op call the
    block makes (in its thread and asyncio task, nested calls too); the reports read it
    afterwards (or during: they see the calls so far)."""

    def __init__(self, record_shapes: bool = False) -> None:
        self.record_shapes = record_shapes
        self._session = Session(record_shapes)
        self._on = _ProfilerOn()

    def __enter__(self) -> Profile:
        self._on.__enter__()
        SESSIONS.set((*SESSIONS.get(), self._session))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sessions = SESSIONS.get()
        SESSIONS.set(tuple(s for s in sessions if s is not self._session))
        self._on.__exit__(exc_type, exc, tb)

    # -- reports -------------------------------------------------------------------------
    def events(self) -> list[FunctionEvent]:
        """Every recorded op call, in the order the calls finished."""
        return function_events(self._session.events, self._session.started)

    def stats(self, group_by_shapes: bool = False) -> list[OpStats]:
        """Per op -- and per input shapes, if grouped by them (needs ``record_shapes``) --
        the count, total and self time, in order of first call."""
        return op_stats(self._session.events, group_by_shapes)

    def counts(self) -> dict[str, int]:
        """Op full name -> number of calls."""
        return {s.name: s.count for s in self.stats()}

    def table(self, sort_by: str = "self_time", row_limit: int | None = None, group_by_shapes: bool = False) -> str:
        """The table torch's profiler prints (``key_averages().table()``): per op the self
        and total time with their share, the average and the count, sorted by
        ``sort_by`` (self_time, total_time, avg_time, count, name, or torch's names)."""
        grouped = group_by_shapes and self.record_shapes
        return render_table(self.stats(grouped), sort_by, row_limit, grouped)

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the Chrome trace event JSON (open it in chrome://tracing or Perfetto)."""
        write_chrome_trace(self.events(), path)


def profile(record_shapes: bool = False) -> Profile:
    """Profile the op calls of a ``with`` block: ``with typedops.profile() as prof:``."""
    return Profile(record_shapes)


def observing() -> _ProfilerOn:
    """A block whose op calls (in its thread and asyncio task) the observers see."""
    return _ProfilerOn()


class ObserverHandle:
    """One observer pair; ``remove()`` (or leaving it as a ``with`` block) removes it."""

    __slots__ = ("_pair",)

    def __init__(self, pair: ObserverPair) -> None:
        self._pair: ObserverPair | None = pair

    def remove(self) -> None:
        pair, self._pair = self._pair, None
        if pair is not None:
            OBSERVERS.remove(pair)

    def __enter__(self) -> ObserverHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_observer(
    start: Callable[[OperatorHandle, Sequence[Any]], Any] | None,
    end: Callable[[OperatorHandle, Any], None] | None = None,
) -> ObserverHandle:
    """Call ``start(op, args)`` before and ``end(op, token)`` after every op call made
    inside ``typedops.profile()`` or ``typedops.profiler.observing()`` blocks, in every
    thread: ``token`` is what ``start`` returned, ``args`` the call's arguments (read
    them, do not change them). As PyTorch's ``RecordFunction`` callbacks."""
    for which, fn in (("start", start), ("end", end)):
        if fn is not None and not callable(fn):
            raise ArgumentError(msg.BAD_OBSERVER.format(which=which, kind=type(fn).__name__))
    if start is None and end is None:
        raise ArgumentError(msg.NO_OBSERVER)
    pair: ObserverPair = (start, end)
    OBSERVERS.add(pair)
    return ObserverHandle(pair)
