"""Reports over a profile's events: per-op statistics, the table, the Chrome trace."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Final, cast

from ..vocabulary import ArgumentValueError
from . import _messages as msg
from ._record import Event

__all__ = ["OpStats", "FunctionEvent", "op_stats", "render_table", "chrome_trace", "function_events"]


@dataclass(frozen=True, slots=True)
class OpStats:
    """One op's calls (with ``shapes``, one op and input shapes): times in nanoseconds."""

    name: str
    count: int
    total_ns: int
    self_ns: int
    shapes: tuple[Any, ...] | None = None

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.count


@dataclass(frozen=True, slots=True)
class FunctionEvent:
    """One op call: its start (ns since the profile began), total and self time, thread."""

    name: str
    start_ns: int
    total_ns: int
    self_ns: int
    thread: int
    shapes: tuple[Any, ...] | None


# (op, start ns, total ns, self ns, thread, shapes)
Timed = tuple[Any, int, int, int, int, Any]


def with_self_times(events: Sequence[Event]) -> list[Timed]:
    """Each event with its total and self time (Note [What the profiler records] in
    _record.py): per thread, in order of start (a caller before its callees), a stack of
    the calls still running finds each call's direct caller."""
    order = sorted(range(len(events)), key=lambda i: (events[i][3], events[i][1], -events[i][2]))
    inner = [0] * len(events)
    running: list[int] = []
    thread = None
    for i in order:
        _, start, end, th, _ = events[i]
        if th != thread:
            running.clear()
            thread = th
        while running and events[running[-1]][2] <= start:
            running.pop()
        if running:
            inner[running[-1]] += end - start
        running.append(i)
    return [(op, s, e - s, e - s - inner[i], th, sh) for i, (op, s, e, th, sh) in enumerate(events)]


def function_events(events: Sequence[Event], started: int) -> list[FunctionEvent]:
    return [FunctionEvent(op.full_name, s - started, t, own, th, sh) for op, s, t, own, th, sh in with_self_times(events)]


def op_stats(events: Sequence[Event], group_by_shapes: bool = False) -> list[OpStats]:
    """Per op (and input shapes, when grouped by them), in order of first call."""
    sums: dict[tuple[Any, Any], list[int]] = {}
    for op, _, total, own, _, shapes in with_self_times(events):
        key = (op, _hashable(shapes) if group_by_shapes else None)
        entry = sums.get(key)
        if entry is None:
            sums[key] = [1, total, own]
        else:
            entry[0] += 1
            entry[1] += total
            entry[2] += own
    return [
        OpStats(op.full_name, c, t, s, shapes if group_by_shapes else None)
        for (op, shapes), (c, t, s) in sums.items()
    ]


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in cast("Sequence[object]", value))
    return value


_SORT_KEYS: Final[dict[str, Callable[[OpStats], Any]]] = {
    "self_time": lambda s: -s.self_ns,
    "self_cpu_time_total": lambda s: -s.self_ns,
    "total_time": lambda s: -s.total_ns,
    "cpu_time_total": lambda s: -s.total_ns,
    "avg_time": lambda s: -s.avg_ns,
    "cpu_time": lambda s: -s.avg_ns,
    "count": lambda s: -s.count,
    "name": lambda s: s.name,
}


def sort_stats(stats: list[OpStats], sort_by: str) -> list[OpStats]:
    key = _SORT_KEYS.get(sort_by)
    if key is None:
        raise ArgumentValueError(msg.BAD_SORT_KEY.format(key=sort_by))
    return sorted(stats, key=lambda s: (key(s), s.name))


def format_time(ns: float) -> str:
    """A duration as torch's profiler tables show it: us, ms or s with three decimals."""
    us = ns / 1000
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def render_table(stats: list[OpStats], sort_by: str, row_limit: int | None, with_shapes: bool) -> str:
    """The table torch's ``key_averages().table()`` prints, for these statistics."""
    if row_limit is not None and (type(row_limit) is not int or row_limit < 1):
        raise ArgumentValueError(msg.BAD_ROW_LIMIT.format(value=row_limit))
    rows = sort_stats(stats, sort_by)[:row_limit]
    base = sum(s.self_ns for s in stats) or 1
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    if with_shapes:
        headers.append("Input Shapes")
    body = [
        [
            s.name,
            f"{100 * s.self_ns / base:.2f}%",
            format_time(s.self_ns),
            f"{100 * s.total_ns / base:.2f}%",
            format_time(s.total_ns),
            format_time(s.avg_ns),
            str(s.count),
        ]
        + ([_shapes_text(s.shapes)] if with_shapes else [])
        for s in rows
    ]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]
    rule = "  ".join("-" * w for w in widths)

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:]))]).rstrip()

    lines = [rule, line(headers), rule, *(line(r) for r in body), rule]
    lines.append(f"Self CPU time total: {format_time(sum(s.self_ns for s in stats))}")
    return "\n".join(lines)


def _shapes_text(shapes: tuple[Any, ...] | None) -> str:
    return "" if shapes is None else str([_listed(s) for s in shapes])


def _listed(shape: object) -> object:
    """A recorded shape as torch shows it: a tuple as a list."""
    return list(cast("tuple[object, ...]", shape)) if isinstance(shape, tuple) else shape


def chrome_trace(events: Sequence[FunctionEvent]) -> dict[str, Any]:
    """The Chrome trace event format (chrome://tracing, Perfetto): one complete ("X")
    event per op call, times in microseconds since the profile began."""
    pid = os.getpid()
    trace: list[dict[str, Any]] = []
    for e in events:
        event: dict[str, Any] = {
            "name": e.name, "cat": "cpu_op", "ph": "X", "ts": e.start_ns / 1000,
            "dur": e.total_ns / 1000, "pid": pid, "tid": e.thread,
        }  # fmt: skip
        if e.shapes is not None:
            event["args"] = {"Input Dims": [_listed(s) for s in e.shapes]}
        trace.append(event)
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def write_chrome_trace(events: Sequence[FunctionEvent], path: str | os.PathLike[str]) -> None:
    import json  # here: json costs milliseconds to import, and import typedops pays for this module

    Path(path).write_text(json.dumps(chrome_trace(events)))
