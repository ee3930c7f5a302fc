"""Defining an operator from a typed function: ``@op`` vs ``torch.library.custom_op``.

Issue 5: ``@op`` on a fresh function (schema inference, definition, registration,
generated wrappers taken from the cache) <= 50 us (custom_op: ~1,200 us on the
reference machine). The functions are made beforehand, so only the decoration is timed;
all share one signature shape, as most ops of a library do, so after the first the
generated code comes from the cache.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from benchmarks._harness import Report, optional_import
from typedops import Library, Tensor, op

_fresh = itertools.count()
N = 300


def _functions(n: int, annotations: dict[str, Any]) -> list[Callable[..., Any]]:
    made = []
    for _ in range(n):

        def kernel(x: Any, y: Any, alpha: float) -> Any:
            return x

        kernel.__annotations__ = dict(annotations)
        made.append(kernel)
    return made


def _time_ours() -> float:
    ns = f"bench_op_define_{next(_fresh)}"
    functions = _functions(N, {"x": Tensor, "y": Tensor, "alpha": float, "return": Tensor})
    with Library(ns, "FRAGMENT") as lib:
        op(f"{ns}::warm", lib=lib)(_functions(1, functions[0].__annotations__)[0])
        start = time.perf_counter()
        for i, fn in enumerate(functions):
            op(f"{ns}::f{i}", lib=lib)(fn)
        return (time.perf_counter() - start) / N


def _time_torch(torch: Any) -> float:
    ns = f"bench_op_define_{next(_fresh)}"
    n = N // 10
    functions = _functions(n, {"x": torch.Tensor, "y": torch.Tensor, "alpha": float, "return": torch.Tensor})
    start = time.perf_counter()
    for i, fn in enumerate(functions):
        torch.library.custom_op(f"{ns}::f{i}", mutates_args=())(fn)
    return (time.perf_counter() - start) / n


def run() -> Report:
    report = Report(
        title="Defining an op from a typed (Tensor, Tensor, float) -> Tensor function (per op)",
        unit="us",
        baseline="typedops @op",
        target="<= 50 us; torch.library.custom_op ~1,200 us (reference machine)",
    )
    report.add("typedops @op", min(_time_ours() for _ in range(5)))
    torch = optional_import("torch")
    if torch is not None:
        report.add("torch.library.custom_op", min(_time_torch(torch) for _ in range(3)))
    return report
