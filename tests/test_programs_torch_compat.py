"""The zoo's MLP against torch's lite interpreter (issue 16, ``make compat``): the same
module scripted and saved with ``_save_for_lite_interpreter``, loaded with
``_load_for_lite_interpreter``; the typedops program traced with torch's weights, saved
and loaded gives torch's outputs in both flavors."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import typedops
from benchmarks._torch_mlp import torch_mlp
from typedops import Tensor, core, trace

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def test_the_mlp_program_with_torchs_weights_gives_the_lite_interpreters_outputs(tmp_path: Path) -> None:
    mobile = importlib.import_module("torch.jit.mobile")  # _load_for_lite_interpreter
    rng = np.random.default_rng(7)
    weights = [(rng.standard_normal((16, 16)).astype(np.float32) / 4, rng.standard_normal(16).astype(np.float32))
               for _ in range(3)]  # fmt: skip
    module = torch_mlp(torch, weights)
    torch.jit.script(module)._save_for_lite_interpreter(str(tmp_path / "mlp.ptl"))
    lite = mobile._load_for_lite_interpreter(str(tmp_path / "mlp.ptl"))

    # torch's weights, read back from the module (not from the arrays it was made of)
    ours = [(Tensor.from_numpy(getattr(module, f"w{i}").detach().numpy().copy()),
             Tensor.from_numpy(getattr(module, f"b{i}").detach().numpy().copy())) for i in range(3)]  # fmt: skip

    def mlp(x: Tensor) -> Tensor:
        for index, (w, b) in enumerate(ours):
            x = core.add(core.matmul(x, w), b)
            if index < 2:
                x = core.relu(x)
        return x

    trace(mlp, Tensor.from_numpy(np.zeros((8, 16), np.float32))).save(tmp_path / "mlp.program")
    x = rng.standard_normal((8, 16)).astype(np.float32)
    with torch.no_grad():
        expected: Any = lite(torch.from_numpy(x)).numpy()
    for flavor in ("dispatch", "static"):
        loaded = typedops.load(tmp_path / "mlp.program", flavor=flavor)
        got = np.asarray(loaded.run(Tensor.from_numpy(x.copy())).numpy())
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
