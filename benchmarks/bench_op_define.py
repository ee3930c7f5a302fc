"""Defining an operator from a typed function: ``@op`` vs ``torch.library.custom_op``.

Issue 5: ``@op`` on a fresh function (schema inference, definition, registration,
generated wrappers taken from the cache) <= 50 us (custom_op: ~1,200 us on the
reference machine). Issue 10: the per-op cost the same in batches of 1, 100 and 10,000
ops (the 10,000-op batch within ~1.3x of the 100-op batch), with the garbage collector
enabled as a user has it.

The functions are made beforehand, so only the decoration is timed; all share one
signature shape, as most ops of a library do, so after the first the generated code
comes from the cache. Each batch defines into a fresh namespace; its ops are removed
after it, and after a 10,000-op batch a full collection (untimed) clears them away, so
no batch walks another's garbage. (Not after the small batches: a full collection
leaves the next few operations slower, about 20 us instead of 11 for one @op,
measured, as the memory it freed is reused cold.) The batches run round-robin. torch is
imported before anything is timed, so every row sees the same heap (some 170,000
objects, which the collector walks on each full collection).

A plain loop is a registration burst (Note [Registration bursts] in
dispatch/_collector.py): its full collections are postponed until just after it. The
10,000-op batch is also run inside ``typedops.bulk_registration()`` (the collector
paused, Note [Registration and the collector]), and both 10,000-op variants once more
with a full collection after the batch timed in: either batch's objects are walked by
one full collection soon after it, and the "+ gc.collect()" rows charge that walk to
the batch.

A second table gives the same batches in CPU time (``time.process_time``) of this
process, read around the same code: on a loaded machine a 10,000-op batch runs long
enough to be descheduled for its share of the other processes' time, while the median
of many short batches escapes it, so the wall-clock ratio of the two overstates what
the batch costs. The collector's work is CPU time, and counts in both.
"""

from __future__ import annotations

import gc
import itertools
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from benchmarks._harness import Report, optional_import, samples
from typedops import Library, Tensor, bulk_registration, op

_fresh = itertools.count()
ROUNDS = 5
BIG = 10_000


def _functions(n: int, annotations: dict[str, Any]) -> list[Callable[..., Any]]:
    made = []
    for _ in range(n):

        def kernel(x: Any, y: Any, alpha: float) -> Any:
            return x

        kernel.__annotations__ = dict(annotations)
        made.append(kernel)
    return made


OURS = {"x": Tensor, "y": Tensor, "alpha": float, "return": Tensor}


def _time_ours(
    n: int, block: Callable[[], AbstractContextManager[Any]] = nullcontext, collect: bool = False
) -> tuple[float, float]:
    """Wall and CPU seconds per op of ``@op`` on ``n`` fresh functions (then a full
    collection, if asked)."""
    ns = f"bench_op_define_{next(_fresh)}"
    functions = _functions(n, OURS)
    lib = Library(ns, "FRAGMENT")
    op(f"{ns}::warm", lib=lib)(_functions(1, OURS)[0])
    cpu = time.process_time()
    start = time.perf_counter()
    with block():
        for i, fn in enumerate(functions):
            op(f"{ns}::f{i}", lib=lib)(fn)
    if collect:
        gc.collect()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    lib.remove()
    if n >= BIG:
        gc.collect()  # the garbage of 10,000 removed ops must not fall on the next batch
    return elapsed / n, cpu / n


def _time_torch(torch: Any, n: int = 30) -> tuple[float, float]:
    ns = f"bench_op_define_{next(_fresh)}"
    functions = _functions(n, {"x": torch.Tensor, "y": torch.Tensor, "alpha": float, "return": torch.Tensor})
    cpu = time.process_time()
    start = time.perf_counter()
    for i, fn in enumerate(functions):
        torch.library.custom_op(f"{ns}::f{i}", mutates_args=())(fn)
    return (time.perf_counter() - start) / n, (time.process_time() - cpu) / n


VARIANTS: dict[str, tuple[int, Callable[[], tuple[float, float]]]] = {
    # name: (batches per round, one batch's seconds per op)
    "typedops @op, batch of 1": (10, lambda: _time_ours(1)),
    "typedops @op, batch of 100": (4, lambda: _time_ours(100)),
    f"typedops @op, batch of {BIG:,}": (1, lambda: _time_ours(BIG)),
    f"typedops @op, batch of {BIG:,} in bulk_registration()": (1, lambda: _time_ours(BIG, bulk_registration)),
    f"typedops @op, batch of {BIG:,} + gc.collect()": (1, lambda: _time_ours(BIG, collect=True)),
    f"typedops @op, batch of {BIG:,} in bulk_registration() + gc.collect()": (
        1, lambda: _time_ours(BIG, bulk_registration, collect=True)),
}  # fmt: skip
TORCH = "torch.library.custom_op, batch of 30"


def _report(clock: str) -> Report:
    return Report(
        title=f"Defining an op from a typed (Tensor, Tensor, float) -> Tensor function (per op, {clock})",
        unit="us",
        baseline="typedops @op, batch of 100",
        target=f"<= 50 us, <= 0.042x custom_op (~1,200 us, reference machine); batch of {BIG:,} <= ~1.3x batch of 100",
    )


def run() -> Report:
    torch = optional_import("torch")
    wall, cpu = _report("wall clock"), _report("CPU time")
    wall.also.append(cpu)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in [*VARIANTS, TORCH]}
    gc.collect()
    for _ in range(ROUNDS):
        for name, (batches, measure) in VARIANTS.items():
            runs[name] += [measure() for _ in range(batches)]
        if torch is not None:
            runs[TORCH].append(_time_torch(torch))
    for name in [*VARIANTS, TORCH]:
        for index, report in enumerate((wall, cpu)):
            report.add(name, samples(r[index] for r in runs[name]) if runs[name] else None)
    return wall
