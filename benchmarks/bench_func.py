"""Function transforms (issue 14): per-sample gradients, ``vmap(grad(loss))``.

Target, against its peer measured in the same run:
- per-sample gradients of a 2-layer MLP's loss (in 32, hidden 64, out 10, ``tanh``, mean
  squared error) for a batch of 64, ``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)``:
  at most 1.5x ``torch.func`` on the same.

Ratios are taken against torch on one thread (its default intra-op threads contend with
the other agents on a 2-core machine; that row is shown too). Also shown, for scale: the
same typedops call with every op forced onto the for-loop fallback, and a Python loop of
``grad`` over the 64 samples.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._harness import Report, optional_import, timing
from typedops import Tensor, core
from typedops.func import force_fallback, grad, vmap

BATCH, IN, HIDDEN, OUT = 64, 32, 64, 10
NUMBER = 40
REPEAT = 7


def _loss(lib: Any) -> Callable[[dict[str, Any], Any, Any], Any]:
    """One sample's loss, written once for both libraries."""

    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = lib.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        d = out - y
        return (d * d).mean()

    return loss


def _data() -> tuple[dict[str, np.ndarray[Any, Any]], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    shapes = {"w1": (IN, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, OUT), "b2": (OUT,)}
    params = {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for k, s in shapes.items()}
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y = rng.standard_normal((BATCH, OUT)).astype(np.float32)
    return params, x, y


def _per_sample(torch: Any) -> Report:
    # Ratios against torch on one thread: its default intra-op threads contend with the other
    # agents on this 2-core machine and make it slower and noisier, not a fair peer for a
    # single-threaded library (both rows are shown).
    baseline = "torch.func, 1 thread" if torch is not None else "typedops"
    report = Report(f"per-sample gradients, 2-layer MLP ({IN}-{HIDDEN}-{OUT}), batch {BATCH}", "ms",
                    baseline, "<= 1.5x torch.func")  # fmt: skip
    arrays, x_np, y_np = _data()
    params = {k: Tensor.from_numpy(v) for k, v in arrays.items()}
    x, y = Tensor.from_numpy(x_np), Tensor.from_numpy(y_np)
    ours = vmap(grad(_loss(core)), in_dims=(None, 0, 0))
    expected = None
    if torch is not None:
        tparams = {k: torch.from_numpy(v) for k, v in arrays.items()}
        tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
        theirs = torch.func.vmap(torch.func.grad(_loss(torch)), in_dims=(None, 0, 0))
        expected = {k: v.numpy() for k, v in theirs(tparams, tx, ty).items()}
        report.add("torch.func", timing(lambda: theirs(tparams, tx, ty), number=NUMBER, repeat=REPEAT))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        report.add("torch.func, 1 thread", timing(lambda: theirs(tparams, tx, ty), number=NUMBER, repeat=REPEAT))
        torch.set_num_threads(threads)
    got = ours(params, x, y)
    if expected is not None:  # the rows time the same computation
        for k, v in expected.items():
            np.testing.assert_allclose(got[k].numpy(), v, rtol=1e-4, atol=1e-5)
    report.add("typedops", timing(lambda: ours(params, x, y), number=NUMBER, repeat=REPEAT))

    def forced() -> None:
        with force_fallback():
            ours(params, x, y)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's once-per-op performance warning
        report.add("typedops, fallback forced", timing(forced, number=4, repeat=3))
    one = grad(_loss(core))
    rows = [(Tensor.from_numpy(x_np[i].copy()), Tensor.from_numpy(y_np[i].copy())) for i in range(BATCH)]
    report.add("typedops, a loop of grad", timing(lambda: [one(params, a, b) for a, b in rows], number=4, repeat=3))
    return report


def run() -> list[Report]:
    return [_per_sample(optional_import("torch"))]
