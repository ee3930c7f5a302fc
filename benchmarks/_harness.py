"""Timing helpers shared by the benchmark modules.

Each benchmark module exposes ``run() -> Report``. Times are the best of several
repeats (the machines are noisy; the minimum is the least disturbed figure), and every
row is shown as a ratio to the report's baseline row, measured in the same run.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

__all__ = ["Row", "Report", "best_time", "optional_import"]


def best_time(fn: Callable[[], object], *, number: int, repeat: int = 5) -> float:
    """Best seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / number


def optional_import(name: str) -> ModuleType | None:
    """Import a comparison peer if the bench extra installed it, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@dataclass
class Row:
    name: str
    seconds: float | None  # None: the peer is not installed
    note: str = ""


@dataclass
class Report:
    title: str
    unit: str  # "us" or "ns"
    baseline: str  # name of the row the ratios are taken against
    target: str  # the goal, in words, as the issue states it
    rows: list[Row] = field(default_factory=list)

    def add(self, name: str, seconds: float | None, note: str = "") -> None:
        self.rows.append(Row(name, seconds, note))

    def seconds(self, name: str) -> float | None:
        for row in self.rows:
            if row.name == name:
                return row.seconds
        raise KeyError(name)

    def render(self) -> str:
        scale = {"us": 1e6, "ns": 1e9, "ms": 1e3}[self.unit]
        base = self.seconds(self.baseline)
        width = max(len(r.name) for r in self.rows)
        lines = [f"## {self.title}", f"target: {self.target}"]
        for row in self.rows:
            if row.seconds is None:
                lines.append(f"  {row.name:<{width}}  {'(not installed)':>12}  {row.note}")
                continue
            ratio = f"{row.seconds / base:8.2f}x" if base else ""
            figure = f"{row.seconds * scale:10.2f} {self.unit}"
            lines.append(f"  {row.name:<{width}}  {figure}  {ratio}  {row.note}".rstrip())
        return "\n".join(lines)
