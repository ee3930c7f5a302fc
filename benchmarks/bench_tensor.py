"""The tensor layer: small core ops end to end, a 1M-element add, and an MLP forward.

Issue 10 targets, each against peers measured in the same run: ``core.add(a, b)``,
``a + b``, ``a.add(b)`` and ``ops.core.add.Tensor(a, b)`` on two 4-element float32
tensors at most 1.0x ``torch.add`` and at most 4x numpy's ``a + b``; the same for
``mul``, ``sum``, ``matmul`` (8x8), a ``view``/``transpose`` chain and ``zeros((4,))``;
a 1M-element ``add`` at most 1.15x numpy; a 3-layer MLP forward (batch 32, width 64,
``matmul`` + ``add`` + ``relu``) at most 1.5x torch eager.

Rows are ratios to torch (the 1M add: to numpy); each typedops row's note gives its
ratio to numpy too (of the medians). Every figure is the median of several rounds, with
its spread, and each round times every row of its group once (the machines are shared:
a burst of load then hits the peers and typedops alike).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._harness import Report, Timing, optional_import, samples, timing
from typedops import Tensor, core, ops

# Short rounds, many of them: on a shared machine a short window is more often quiet.
N = 2_000
REPEAT = 31

Rows = list[tuple[str, Callable[[], object]]]


def _interleaved(rows: Rows, *, number: int, repeat: int) -> list[Timing]:
    """Seconds per call of each row, one sample per round: every round times each row
    once, so a burst of load on the (shared, noisy) machine hits all rows alike. Each
    round starts one row later, so every row follows every other equally often (torch's
    worker threads keep spinning for a while after a parallel op, slowing whatever runs
    next). Reported as the median of the rounds, with their spread."""
    runs: list[list[float]] = [[] for _ in rows]
    for r in range(repeat):
        for k in range(len(rows)):
            i = (r + k) % len(rows)
            runs[i].extend(timing(rows[i][1], number=number, repeat=1).samples)
    return [samples(run) for run in runs]


def _group(title: str, target: str, ours: Rows, torch_row: tuple[str, Callable[[], object]] | None,
           numpy_row: tuple[str, Callable[[], object]], *, number: int = N) -> Report:  # fmt: skip
    """One report: the peers first (torch is the baseline when installed), then ours."""
    baseline = torch_row[0] if torch_row is not None else numpy_row[0]
    report = Report(title, "us", baseline, target)
    rows = ([torch_row] if torch_row is not None else []) + [numpy_row] + ours
    seconds = _interleaved(rows, number=number, repeat=REPEAT)
    first_ours = len(rows) - len(ours)
    numpy_median = seconds[first_ours - 1].median
    for i, ((name, _), t) in enumerate(zip(rows, seconds)):
        report.add(name, t, f"{t.median / numpy_median:.2f}x numpy" if i >= first_ours else "")
    return report


def _f32(*shape: int) -> Tensor:
    return Tensor.from_numpy(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7)


def _small(torch: Any) -> list[Report]:
    a, b = _f32(4), _f32(4)
    na, nb = a.numpy(), b.numpy()
    ta: Any = torch.from_numpy(na.copy()) if torch else None
    tb: Any = torch.from_numpy(nb.copy()) if torch else None
    m, n8 = _f32(8, 8), _f32(8, 8).numpy()
    tm: Any = torch.from_numpy(n8.copy()) if torch else None
    target = "<= 1.0x torch and <= 4x numpy"
    reports = []
    reports.append(_group("add, two 4-element float32 tensors", target, [
        ("core.add(a, b)", lambda: core.add(a, b)),
        ("a + b", lambda: a + b),
        ("a.add(b)", lambda: a.add(b)),
        ("ops.core.add.Tensor(a, b)", lambda: ops.core.add.Tensor(a, b)),
    ], ("torch.add(a, b)", lambda: torch.add(ta, tb)) if torch else None, ("numpy a + b", lambda: na + nb)))
    reports.append(_group("mul, two 4-element float32 tensors", target, [
        ("core.mul(a, b)", lambda: core.mul(a, b)),
        ("a * b", lambda: a * b),
        ("a.mul(b)", lambda: a.mul(b)),
        ("ops.core.mul.Tensor(a, b)", lambda: ops.core.mul.Tensor(a, b)),
    ], ("torch.mul(a, b)", lambda: torch.mul(ta, tb)) if torch else None, ("numpy a * b", lambda: na * nb)))
    reports.append(_group("sum of a 4-element float32 tensor", target, [
        ("core.sum(a)", lambda: core.sum(a)),
        ("a.sum()", lambda: a.sum()),
        ("ops.core.sum.default(a)", lambda: ops.core.sum.default(a)),
    ], ("torch.sum(a)", lambda: torch.sum(ta)) if torch else None, ("numpy a.sum()", lambda: na.sum())))
    reports.append(_group("matmul of two 8x8 float32 tensors", target, [
        ("core.matmul(a, b)", lambda: core.matmul(m, m)),
        ("a @ b", lambda: m @ m),
        ("a.matmul(b)", lambda: m.matmul(m)),
        ("ops.core.matmul.default(a, b)", lambda: ops.core.matmul.default(m, m)),
    ], ("torch.matmul(a, b)", lambda: torch.matmul(tm, tm)) if torch else None, ("numpy a @ b", lambda: n8 @ n8)))
    reports.append(_group("view then transpose of an 8x8 tensor", target, [
        ("a.view([4, 16]).transpose(0, 1)", lambda: m.view([4, 16]).transpose(0, 1)),
        ("core.transpose(a.view([4, 16]), 0, 1)", lambda: core.transpose(m.view([4, 16]), 0, 1)),
        ("ops.core.transpose.int(ops.core.view.default(a, [4, 16]), 0, 1)",
         lambda: ops.core.transpose.int(ops.core.view.default(m, [4, 16]), 0, 1)),
    ], ("torch a.view(4, 16).transpose(0, 1)", lambda: tm.view(4, 16).transpose(0, 1)) if torch else None,
        ("numpy a.reshape(4, 16).transpose(1, 0)", lambda: n8.reshape(4, 16).transpose(1, 0))))  # fmt: skip
    reports.append(_group("zeros((4,))", target, [
        ("core.zeros([4])", lambda: core.zeros([4])),
        ("ops.core.zeros.default([4])", lambda: ops.core.zeros.default([4])),
    ], ("torch.zeros(4)", lambda: torch.zeros(4)) if torch else None,
        ("numpy np.zeros(4, np.float32)", lambda: np.zeros(4, np.float32))))  # fmt: skip
    return reports


def _large(torch: Any) -> Report:
    a, b = _f32(1_000_000), _f32(1_000_000)
    na, nb = a.numpy(), b.numpy()
    rows: Rows = [("numpy a + b", lambda: na + nb)]
    if torch:
        ta, tb = torch.from_numpy(na.copy()), torch.from_numpy(nb.copy())
        rows.append(("torch.add(a, b)", lambda: torch.add(ta, tb)))
    rows += [("core.add(a, b)", lambda: core.add(a, b)), ("a + b", lambda: a + b)]
    report = Report("add, two 1M-element float32 tensors", "us", "numpy a + b", "<= 1.15x numpy")
    for (name, _), seconds in zip(rows, _interleaved(rows, number=20, repeat=REPEAT)):
        report.add(name, seconds)
    return report


def _mlp(torch: Any) -> Report:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64), dtype=np.float32)
    layers = [(rng.standard_normal((64, 64), dtype=np.float32) / 8, rng.standard_normal(64, dtype=np.float32))
              for _ in range(3)]  # fmt: skip
    ours = [(Tensor.from_numpy(w), Tensor.from_numpy(b)) for w, b in layers]
    tx = Tensor.from_numpy(x)

    def forward() -> Tensor:
        h = tx
        for w, b in ours:
            h = (h @ w + b).relu()
        return h

    def forward_numpy() -> Any:
        h = x
        for w, b in layers:
            h = np.maximum(h @ w + b, 0)
        return h

    torch_row = None
    if torch:
        theirs = [(torch.from_numpy(w.copy()), torch.from_numpy(b.copy())) for w, b in layers]
        t_in = torch.from_numpy(x.copy())

        def forward_torch() -> Any:
            h = t_in
            for w, b in theirs:
                h = torch.relu(torch.add(torch.matmul(h, w), b))
            return h

        torch_row = ("torch eager", forward_torch)
    return _group("3-layer MLP forward (batch 32, width 64: matmul + add + relu)", "<= 1.5x torch eager",
                  [("typedops (h @ w + b).relu()", forward)], torch_row, ("numpy", forward_numpy),
                  number=200)  # fmt: skip


def run() -> list[Report]:
    """One report per target group (torch keeps its default threads, as users run it)."""
    torch = optional_import("torch")
    return [*_small(torch), _large(torch), _mlp(torch)]
