"""Batching (issue 14): what rules buy over the for-loop fallback, and vmap's cost against
torch.vmap, measured in the same run.

Targets:
- ``vmap`` of a pointwise ``add``/``mul`` chain over a batch of 64 (4-element samples) with
  the core rules: at least 20x faster than the same with ``force_fallback()``;
- ``vmap`` of a 5-op function with rules, batch 8, 4-element samples: at most 1.0x
  ``torch.vmap`` on the same function. Rows give the whole vmapped call, and its overhead:
  the call minus the same five ops called by hand on the batched tensors, per library.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from benchmarks._harness import Report, Timing, optional_import, samples, timing
from typedops import Tensor, core, vmap
from typedops.batching import force_fallback

REPEAT = 7
assert core.add is not None  # loads the core library: its ops and the Tensor operators


def chain(a: Any, b: Any) -> Any:
    """An add/mul chain of six ops (works on typedops and torch tensors)."""
    c = a + b
    c = c * a
    c = c + b
    c = c * b
    c = c + a
    return c * c


def five(x: Any, w: Any) -> Any:
    """Five ops: mul, add, mul, sub, sum over the sample."""
    y = x * w
    y = y + x
    y = y * y
    y = y - w
    return y.sum(0)


def _interleaved(fns: dict[str, Any], number: int) -> dict[str, Timing]:
    """Time each function ``REPEAT`` times, taking turns, so a burst of load on the shared
    machine hits every row alike."""
    runs: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(REPEAT):
        for name, fn in fns.items():
            runs[name].append(timing(fn, number=number, repeat=1).median)
    return {name: samples(values) for name, values in runs.items()}


def _rules_vs_fallback(torch: Any) -> Report:
    report = Report("vmap of an add/mul chain (6 ops), batch 64, 4-element samples", "us", "rules",
                    ">= 20x faster with rules than with the fallback forced")  # fmt: skip
    a = Tensor.from_numpy(np.random.default_rng(0).random((64, 4), dtype=np.float32))
    b = Tensor.from_numpy(np.random.default_rng(1).random((64, 4), dtype=np.float32))
    batched = vmap(chain)
    report.add("rules", timing(lambda: batched(a, b), number=300, repeat=REPEAT))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with force_fallback():
            report.add("fallback forced", timing(lambda: batched(a, b), number=5, repeat=REPEAT))
    if torch is not None:
        ta, tb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy())
        tchain = torch.vmap(chain)
        report.add("torch.vmap (peer)", timing(lambda: tchain(ta, tb), number=300, repeat=REPEAT))
    else:
        report.add("torch.vmap (peer)", None, "pip install -e '.[bench]'")
    return report


def _overhead(torch: Any) -> Report:
    baseline = "torch.vmap(f)(x, w)" if torch is not None else "typedops vmap(f)(x, w)"
    report = Report("vmap of a 5-op function with rules, batch 8, 4-element samples", "us", baseline,
                    "typedops <= 1.0x torch.vmap")  # fmt: skip
    x = Tensor.from_numpy(np.random.default_rng(2).random((8, 4), dtype=np.float32))
    w = Tensor.from_numpy(np.random.default_rng(3).random(4, dtype=np.float32))
    f = vmap(five, in_dims=(0, None))
    fns: dict[str, Any] = {
        "typedops vmap(f)(x, w)": lambda: f(x, w),
        "typedops by hand": lambda: (((x * w + x) * (x * w + x)) - w).sum(1),
    }
    if torch is not None:
        tx, tw = torch.from_numpy(x.numpy().copy()), torch.from_numpy(w.numpy().copy())
        tf = torch.vmap(five, in_dims=(0, None))
        fns["torch.vmap(f)(x, w)"] = lambda: tf(tx, tw)
        fns["torch by hand"] = lambda: (((tx * tw + tx) * (tx * tw + tx)) - tw).sum(1)
    times = _interleaved(fns, 2000)
    if torch is not None:
        report.add("torch.vmap(f)(x, w)", times["torch.vmap(f)(x, w)"])
    report.add("typedops vmap(f)(x, w)", times["typedops vmap(f)(x, w)"])
    if torch is not None:
        shift = -times["torch by hand"].median
        report.add("torch overhead (vmap minus by hand)", times["torch.vmap(f)(x, w)"].shifted(shift))
    shift = -times["typedops by hand"].median
    report.add("typedops overhead (vmap minus by hand)", times["typedops vmap(f)(x, w)"].shifted(shift))
    return report


def run() -> list[Report]:
    torch = optional_import("torch")
    if torch is not None:
        torch.set_num_threads(1)
    return [_rules_vs_fallback(torch), _overhead(torch)]
