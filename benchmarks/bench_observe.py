"""Observing calls: the profiler on vs off, and a pass-through dispatch mode (issue 15).

Targets (reference machine): ``typedops.profile()`` adds <= 1.5 us per op call (torch's
profiler adds several us); a pass-through ``DispatchMode`` adds <= 1 us per call (torch's
``TorchDispatchMode`` adds ~4.3 us). Both are measured here against torch's in the same
run; the rows' notes give each added cost (the row minus its own baseline).

The op is a (Tensor, Tensor, float) -> Tensor op with a trivial kernel, so the figures
are the machinery's; torch's peer is ``torch.add`` on one-element tensors. Every figure
is the median of several repeats (with its spread), the repeats of all rows interleaved
so that the machine's drift hits each row alike.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from benchmarks._harness import Report, Timing, optional_import, samples
from typedops import DispatchMode, Tensor, op, profile, tensor

_fresh = itertools.count()
N = 20_000
REPEATS = 9


def _per_call(fn: Callable[[], object], around: Callable[[], Any] | None = None) -> float:
    """Seconds per call of ``fn`` over N calls, inside ``around()`` (a context manager) if given."""
    if around is None:
        start = time.perf_counter()
        for _ in range(N):
            fn()
        return (time.perf_counter() - start) / N
    with around():
        start = time.perf_counter()
        for _ in range(N):
            fn()
        return (time.perf_counter() - start) / N


class _PassThrough(DispatchMode):
    def __typedops_dispatch__(self, op: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return op(*args, **kwargs)


def _cases(torch: Any) -> dict[str, tuple[Callable[[], object], Callable[[], Any] | None]]:
    x, y, out = tensor([1.0]), tensor([2.0]), tensor([0.0])

    def kernel(a: Tensor, b: Tensor, alpha: float) -> Tensor:
        return out

    f = op(f"bench_observe_{next(_fresh)}::f")(kernel)
    cases: dict[str, tuple[Callable[[], object], Callable[[], Any] | None]] = {
        "typedops call, nothing on": (lambda: f(x, y, 2.0), None),
        "typedops call inside typedops.profile()": (lambda: f(x, y, 2.0), profile),
        "typedops call inside a pass-through DispatchMode": (lambda: f(x, y, 2.0), _PassThrough),
    }
    if torch is not None:
        a, b = torch.ones(1), torch.ones(1)
        dispatch = optional_import("torch.utils._python_dispatch")

        class TorchPassThrough(dispatch.TorchDispatchMode):  # type: ignore[misc, name-defined]
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                return func(*args, **(kwargs or {}))

        cases["torch.add, nothing on"] = (lambda: torch.add(a, b), None)
        cases["torch.add inside torch.profiler.profile()"] = (lambda: torch.add(a, b), torch.profiler.profile)
        cases["torch.add inside a pass-through TorchDispatchMode"] = (lambda: torch.add(a, b), TorchPassThrough)
    return cases


def _measure(cases: dict[str, tuple[Callable[[], object], Callable[[], Any] | None]]) -> dict[str, Timing]:
    """Per case, one sample per round; rounds interleave the cases (a burst of load hits all)."""
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(REPEATS):
        for name, (fn, around) in cases.items():
            runs[name].append(_per_call(fn, around))
    return {name: samples(run) for name, run in runs.items()}


def _added(best: dict[str, Timing], row: str, base: str) -> str:
    return f"adds {(best[row].median - best[base].median) * 1e9:,.0f} ns (medians)"


def run() -> list[Report]:
    torch = optional_import("torch")
    best = _measure(_cases(torch))
    ours, theirs = "typedops call, nothing on", "torch.add, nothing on"
    profiling = Report(
        title="The profiler on vs off, per op call",
        unit="ns",
        baseline=ours,
        target="typedops.profile() adds <= 1.5 us per call (torch's profiler adds several us); same run",
    )
    modes = Report(
        title="A pass-through dispatch mode, per op call",
        unit="ns",
        baseline=ours,
        target="a pass-through DispatchMode adds <= 1 us per call (TorchDispatchMode ~4.3 us); same run",
    )
    for report, mine, peer in (
        (profiling, "typedops call inside typedops.profile()", "torch.add inside torch.profiler.profile()"),
        (modes, "typedops call inside a pass-through DispatchMode", "torch.add inside a pass-through TorchDispatchMode"),
    ):
        report.add(ours, best[ours])
        report.add(mine, best[mine], _added(best, mine, ours))
        if torch is None:
            report.add(peer, None)
            continue
        report.add(theirs, best[theirs])
        report.add(peer, best[peer], _added(best, peer, theirs))
    return [profiling, modes]
