"""Timing helpers shared by the benchmark modules.

Each benchmark module exposes ``run() -> Report``. Every figure is the *median* of
several repeats, printed with the spread of the repeats (fastest-slowest) beside it:
the machines are noisy, and a row whose spread is wide says so rather than hiding
behind its best run. Each row's ratio is its median over the median of the report's
baseline row, measured in the same run.
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType

__all__ = ["Timing", "Row", "Report", "timing", "samples", "optional_import"]


@dataclass(frozen=True)
class Timing:
    """Seconds per call in each repeat of a measurement."""

    samples: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples:
            raise ValueError("a timing needs at least one repeat")

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)

    def scaled(self, factor: float) -> Timing:
        """The same repeats, each multiplied by ``factor`` (e.g. 1/n for per-item figures)."""
        return Timing(tuple(s * factor for s in self.samples))

    def shifted(self, offset: float) -> Timing:
        """The same repeats, each plus ``offset`` (e.g. minus a start-up cost)."""
        return Timing(tuple(s + offset for s in self.samples))


def samples(values: Iterable[float]) -> Timing:
    """A timing from measurements already taken, one per repeat."""
    return Timing(tuple(values))


def timing(fn: Callable[[], object], *, number: int, repeat: int = 5) -> Timing:
    """Seconds per call of ``fn`` in each of ``repeat`` runs of ``number`` calls."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return samples(runs)


def optional_import(name: str) -> ModuleType | None:
    """Import a comparison peer if the bench extra installed it, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@dataclass
class Row:
    name: str
    timing: Timing | None  # None: the peer is not installed
    note: str = ""


@dataclass
class Report:
    title: str
    unit: str  # "us", "ns" or "ms"
    baseline: str  # name of the row the ratios are taken against
    target: str  # the goal, in words, as the issue states it
    rows: list[Row] = field(default_factory=list)
    also: list[Report] = field(default_factory=list)  # rendered after this one

    def add(self, name: str, timing: Timing | None, note: str = "") -> None:
        self.rows.append(Row(name, timing, note))

    def timing(self, name: str) -> Timing | None:
        for row in self.rows:
            if row.name == name:
                return row.timing
        raise KeyError(name)

    def seconds(self, name: str) -> float | None:
        """The median of row ``name``."""
        found = self.timing(name)
        return None if found is None else found.median

    def render(self) -> str:
        scale = {"us": 1e6, "ns": 1e9, "ms": 1e3}[self.unit]
        base = self.seconds(self.baseline)
        width = max(len(r.name) for r in self.rows)
        lines = [
            f"## {self.title}",
            f"target: {self.target}",
            f"  {'':<{width}}  {'median':>13}  {'spread (fastest-slowest)':>24}  {'ratio':>8}  repeats",
        ]
        for row in self.rows:
            if row.timing is None:
                lines.append(f"  {row.name:<{width}}  {'(not installed)':>13}  {row.note}")
                continue
            t = row.timing
            figure = f"{t.median * scale:10.2f} {self.unit}"
            spread = f"{t.low * scale:.2f}-{t.high * scale:.2f}"
            ratio = f"{t.median / base:7.3f}x" if base else ""
            lines.append(f"  {row.name:<{width}}  {figure}  {spread:>24}  {ratio:>8}  {len(t.samples):>7}  {row.note}".rstrip())
        return "\n\n".join(["\n".join(lines), *(r.render() for r in self.also)])
