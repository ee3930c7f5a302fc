"""Defining operators: ``Library.define`` of every native_functions.yaml schema.

Issue 4: defining all 2,584 schemas into a fresh namespace takes <= 0.5x the time
``torch.library.Library.define`` takes for the same (torch: ~22 us per op on the
reference machine); issue 10: at the *median* of runs, with the garbage collector
enabled as a user has it. Each repeat uses a new namespace, so nothing is defined twice,
and typedops' type-interning table is cleared first (every schema is parsed afresh).

The variants run round-robin, one repeat of each per round, so the machine's noise and
the collector's state (nothing here calls ``gc.collect()``; each repeat inherits what
the previous ones left, as code in a running program does) fall on all of them alike.
torch is imported before anything is timed, so every row sees the same heap.

- one ``define`` call per op: what issue 4 measured;
- the same inside ``typedops.bulk_registration()`` and with ``Library.define_many``:
  the collector paused for the batch (Note [Registration and the collector]); the one
  full collection a paused batch leaves for later is not in its figure;
- the same with the collector off (``gc.disable()``): not a user's setting, it shows
  what the collector costs the first row.

A second table gives the same runs in CPU time (``time.process_time``) of this process,
which a loaded machine disturbs less than wall-clock time.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable
from typing import Any

from benchmarks._harness import Report, samples, optional_import
from tests.corpus import native_function_schemas
from typedops import Library, bulk_registration
from typedops.schema import _canonical

_fresh = itertools.count()
ROUNDS = 9


def _one_by_one(lib: Library, schemas: list[str]) -> None:
    for s in schemas:
        lib.define(s)


def _in_block(lib: Library, schemas: list[str]) -> None:
    with bulk_registration():
        for s in schemas:
            lib.define(s)


def _many(lib: Library, schemas: list[str]) -> None:
    lib.define_many(schemas)


def _collector_off(lib: Library, schemas: list[str]) -> None:
    gc.disable()
    try:
        for s in schemas:
            lib.define(s)
    finally:
        gc.enable()


def _time_ours(define: Callable[[Library, list[str]], None], schemas: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds per op."""
    _canonical.clear_type_table()
    lib = Library(f"bench_define_{next(_fresh)}", "DEF")
    cpu = time.process_time()
    start = time.perf_counter()
    define(lib, schemas)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    lib.remove()
    return elapsed / len(schemas), cpu / len(schemas)


def _time_torch(torch: Any, schemas: list[str]) -> tuple[float, float]:
    lib = torch.library.Library(f"bench_define_{next(_fresh)}", "DEF")
    cpu = time.process_time()
    start = time.perf_counter()
    for s in schemas:
        lib.define(s)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    lib._destroy()
    return elapsed / len(schemas), cpu / len(schemas)


VARIANTS: dict[str, Callable[[Library, list[str]], None]] = {
    "typedops Library.define, one call per op": _one_by_one,
    "typedops Library.define in bulk_registration()": _in_block,
    "typedops Library.define_many": _many,
    "typedops Library.define, collector off (diagnostic)": _collector_off,
}
TORCH = "torch.library.Library.define"


def _report(clock: str, n: int, has_torch: bool) -> Report:
    return Report(
        title=f"Library.define of {n} native_functions.yaml schemas (per op, {clock})",
        unit="us",
        baseline=TORCH if has_torch else "typedops Library.define, one call per op",
        target="<= 0.5x torch.library.Library.define at the median (torch ~22 us per op on the reference machine)",
    )


def run() -> Report:
    torch: Any = optional_import("torch")
    schemas = native_function_schemas()
    if not schemas:
        report = _report("wall clock", 0, False)
        report.add("typedops Library.define, one call per op", None, "needs torch (bench extra) for the yaml")
        return report
    wall, cpu = _report("wall clock", len(schemas), torch is not None), _report("CPU time", len(schemas), torch is not None)
    wall.also.append(cpu)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in [*VARIANTS, TORCH]}
    for _ in range(ROUNDS):
        for name, define in VARIANTS.items():
            runs[name].append(_time_ours(define, schemas))
        if torch is not None:
            runs[TORCH].append(_time_torch(torch, schemas))
    for name in [*VARIANTS, TORCH]:
        for index, report in enumerate((wall, cpu)):
            report.add(name, samples(r[index] for r in runs[name]) if runs[name] else None)
    return wall
