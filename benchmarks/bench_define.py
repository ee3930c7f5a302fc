"""Defining operators: ``Library.define`` of every native_functions.yaml schema.

Issue 4: defining all 2,584 schemas into a fresh namespace takes <= 0.5x the time
``torch.library.Library.define`` takes for the same (torch: ~22 us per op on the
reference machine). Each repeat uses a new namespace, so nothing is defined twice, and
typedops' type-interning table is cleared first (every schema is parsed afresh).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from benchmarks._harness import Report, optional_import
from tests.corpus import native_function_schemas
from typedops import Library
from typedops.schema import _canonical

_fresh = itertools.count()


def _time_ours(schemas: list[str]) -> float:
    _canonical.clear_type_table()
    lib = Library(f"bench_define_{next(_fresh)}", "DEF")
    start = time.perf_counter()
    for s in schemas:
        lib.define(s)
    elapsed = time.perf_counter() - start
    lib.remove()
    return elapsed


def _time_torch(torch: Any, schemas: list[str]) -> float:
    lib = torch.library.Library(f"bench_define_{next(_fresh)}", "DEF")
    start = time.perf_counter()
    for s in schemas:
        lib.define(s)
    elapsed = time.perf_counter() - start
    lib._destroy()
    return float(elapsed)


def run() -> Report:
    schemas = native_function_schemas()
    report = Report(
        title=f"Library.define of {len(schemas) if schemas else 0} native_functions.yaml schemas (per op)",
        unit="us",
        baseline="typedops Library.define",
        target="<= 0.5x torch.library.Library.define (torch ~22 us per op on the reference machine)",
    )
    if not schemas:
        report.add("typedops Library.define", None, "needs torch (bench extra) for the yaml")
        return report
    n = len(schemas)
    report.add("typedops Library.define", min(_time_ours(schemas) for _ in range(5)) / n)
    torch: Any = optional_import("torch")
    if torch is not None:
        report.add("torch.library.Library.define", min(_time_torch(torch, schemas) for _ in range(3)) / n)
    return report
