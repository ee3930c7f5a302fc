"""Programs (issue 16): running and loading a saved program, against torch's lite interpreter.

Issue 16 targets, measured in one run against torch 2.13 (reference machine: torch lite
28 us per run of the MLP, torch eager 45 us, lite load 0.47 ms):

- run a 3-layer MLP (batch 32, width 64): the dispatcher-free ("static") flavor <= 1.0x
  torch's lite interpreter, the "dispatch" flavor <= 1.3x typedops eager;
- a 20-op program on 4-element tensors: per-op cost <= 1.0x a typedops eager call of the
  same ops;
- load the MLP: <= 1.0x torch's lite load of the same model.

Every figure is the median of several repeats, with their spread.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._torch_mlp import torch_mlp
from benchmarks._harness import Report, Timing, optional_import, timing
from typedops import Tensor, core, tensor, trace
from typedops.programs import compile_program

BATCH, WIDTH, LAYERS = 32, 64, 3


def _weights() -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) / 8, rng.standard_normal(WIDTH).astype(np.float32))
            for _ in range(LAYERS)]  # fmt: skip


def _mlp(weights: list[tuple[Tensor, Tensor]]) -> Any:
    def mlp(x: Tensor) -> Tensor:
        for index, (w, b) in enumerate(weights):
            x = core.add(core.matmul(x, w), b)
            if index < len(weights) - 1:
                x = core.relu(x)
        return x

    return mlp


def _kernels(weights: list[tuple[Tensor, Tensor]], x: Tensor) -> Tensor:
    """The MLP's CPU kernels called directly: what a static run calls, without the interpreter."""
    from typedops.core import kernels

    for index, (w, b) in enumerate(weights):
        x = kernels.add_cpu(kernels.matmul_cpu(x, w), b, alpha=1)
        if index < len(weights) - 1:
            x = kernels.relu_cpu(x)
    return x


def _numpy(weights: list[tuple[Any, Any]], x: Any) -> Any:
    """The numpy calls those kernels make, on arrays."""
    for index, (w, b) in enumerate(weights):
        x = np.matmul(x, w) + b
        if index < len(weights) - 1:
            x = np.maximum(x, 0)
    return x


def _save(program: Any, folder: Path, name: str) -> Path | None:
    save = getattr(program, "save", None)
    if save is None:
        return None
    path = folder / name
    save(path)
    return path


def _run_report(torch: Any, folder: Path) -> tuple[Report, Report, Any]:
    weights = _weights()
    ours = [(tensor(w.tolist()), tensor(b.tolist())) for w, b in weights]
    x = tensor(np.random.default_rng(1).standard_normal((BATCH, WIDTH)).astype(np.float32).tolist())
    mlp = _mlp(ours)
    program = trace(mlp, x)
    static, dispatched = compile_program(program, "static"), compile_program(program, "dispatch")
    n = 2000
    run = Report(
        f"run a {LAYERS}-layer MLP program (batch {BATCH}, width {WIDTH})", "us", "torch lite interpreter",
        "static flavor <= 1.0x torch's lite interpreter",
    )
    eager = Report(
        "the same run against typedops eager", "us", "typedops eager", "dispatch flavor <= 1.3x typedops eager"
    )
    lite = None
    if torch is not None:
        module = torch_mlp(torch, weights)
        tx = torch.from_numpy(np.asarray(x.numpy()))
        buffer = io.BytesIO(torch.jit.script(module)._save_to_buffer_for_lite_interpreter())
        lite = torch.jit.mobile._load_for_lite_interpreter(buffer)
        with torch.no_grad():
            run.add("torch lite interpreter", timing(lambda: lite(tx), number=n, repeat=7), "one thread")
            run.add("torch eager", timing(lambda: module(tx), number=n, repeat=7), "one thread")
    else:
        run.add("torch lite interpreter", None, "needs the bench extra")
    run.add("typedops core kernels called directly", timing(lambda: _kernels(ours, x), number=n, repeat=7),
            "the static flavor's floor: its kernels, no interpreter")  # fmt: skip
    arrays = [(np.asarray(w.numpy()), np.asarray(b.numpy())) for w, b in ours]
    xa = np.asarray(x.numpy())
    run.add("numpy calls alone", timing(lambda: _numpy(arrays, xa), number=n, repeat=7), "the kernels' numpy calls")
    static_t = timing(lambda: static.run(x), number=n, repeat=7)
    dispatch_t = timing(lambda: dispatched.run(x), number=n, repeat=7)
    eager_t = timing(lambda: mlp(x), number=n, repeat=7)
    run.add("typedops program, static flavor", static_t)
    run.add("typedops program, dispatch flavor", dispatch_t)
    run.add("typedops eager", eager_t)
    eager.add("typedops eager", eager_t)
    eager.add("typedops program, dispatch flavor", dispatch_t)
    eager.add("typedops program, static flavor", static_t)
    return run, eager, (program, lite, module if torch is not None else None)


_OPS = ["add", "mul", "sub", "maximum", "neg", "abs", "exp", "sigmoid", "tanh", "minimum"]
_BINARY = ("add", "mul", "sub", "maximum", "minimum")


def _chain_of(functions: list[tuple[Any, bool]]) -> Any:
    def chain(a: Tensor, b: Tensor) -> Tensor:
        """20 element-wise ops, the functions looked up beforehand (as a user's code would
        bind them), so the eager row times the calls alone."""
        x = a
        for fn, binary in functions:
            x = fn(x, b) if binary else fn(x)
        return x

    return chain


def _per_op_report() -> Report:
    a, b = tensor([0.5, -1.0, 2.0, 0.25]), tensor([1.0, 0.5, -0.5, 2.0])
    chain = _chain_of([(getattr(core, name), name in _BINARY) for name in (_OPS * 2)[:20]])
    program = trace(chain, a, b)
    assert len(program.calls) == 20
    static, dispatched = compile_program(program, "static"), compile_program(program, "dispatch")
    n = 2000
    report = Report("a 20-op program on 4-element tensors, per op", "us", "typedops eager call",
                    "per-op cost <= 1.0x a typedops eager call of the same ops")  # fmt: skip
    report.add("typedops eager call", timing(lambda: chain(a, b), number=n, repeat=7).scaled(1 / 20))
    report.add("typedops program, dispatch flavor", timing(lambda: dispatched.run(a, b), number=n, repeat=7).scaled(1 / 20))
    report.add("typedops program, static flavor", timing(lambda: static.run(a, b), number=n, repeat=7).scaled(1 / 20))
    return report


def _load_report(torch: Any, folder: Path, program: Any, module: Any) -> Report:
    report = Report(f"load the {LAYERS}-layer MLP", "ms", "torch lite load",
                    "load <= 1.0x torch's lite load of the same model")  # fmt: skip
    n = 100
    if torch is not None:
        data = torch.jit.script(module)._save_to_buffer_for_lite_interpreter()
        saved = folder / "mlp.ptl"
        saved.write_bytes(data)
        # File to runnable, as typedops' rows: torch reads the saved file by its path.
        report.add("torch lite load", timing(lambda: torch.jit.mobile._load_for_lite_interpreter(str(saved)),
                                             number=n, repeat=7), "file to runnable")  # fmt: skip
        report.add("torch lite load from memory", timing(
            lambda: torch.jit.mobile._load_for_lite_interpreter(io.BytesIO(data)), number=n, repeat=7),
            "the same bytes already in a BytesIO")  # fmt: skip
    else:
        report.add("torch lite load", None, "needs the bench extra")
    path = _save(program, folder, "mlp.program")
    if path is not None:
        import typedops

        load: Any = getattr(typedops, "load")
        report.add("typedops load, dispatch flavor", timing(lambda: load(path), number=n, repeat=7), "file to runnable")
        report.add("typedops load, static flavor", timing(lambda: load(path, flavor="static"), number=n, repeat=7),
                   "file to runnable")  # fmt: skip
    compiled = Timing(timing(lambda: compile_program(program, "static"), number=n, repeat=7).samples)
    report.add("typedops compile_program (in memory)", compiled,
               "the interpreter's share: fit calls, check values, resolve ops, assemble")  # fmt: skip
    return report


def run() -> list[Report]:
    torch = optional_import("torch")
    if torch is not None:
        optional_import("torch.jit.mobile")  # _load_for_lite_interpreter (a plain import needs torch to type-check)

        # One intra-op thread, as typedops runs: with its default threads on 2 cores shared
        # with other work, torch's small matmuls wait on each other (~10x slower here).
        torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        run_report, eager_report, (program, _, module) = _run_report(torch, Path(folder))
        return [run_report, eager_report, _per_op_report(), _load_report(torch, Path(folder), program, module)]
