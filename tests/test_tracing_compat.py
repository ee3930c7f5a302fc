"""typedops.trace against torch.jit.trace (``make compat``): what a traced program records
and how it replays, on the cases where torch's tracer has the behaviour."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typedops.core  # noqa: F401 -- loads the core library: Tensor's operators
from typedops import Tensor, trace

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def _ours(values: list[Any], dtype: Any) -> Tensor:
    return Tensor.from_numpy(np.array(values, dtype=dtype))


def test_detach_is_recorded_as_an_op_as_torchs_tracer_records_aten_detach() -> None:
    theirs = torch.jit.trace(lambda a: a.detach() * 2, torch.tensor([1.0, 2.0]))
    assert "aten::detach" in str(theirs.graph)
    ours = trace(lambda a: a.detach() * 2, _ours([1.0, 2.0], np.float32))
    assert "core::detach" in ours.ops()
    new = [10.0, 20.0]
    assert ours(_ours(new, np.float32)).tolist() == theirs(torch.tensor(new)).tolist()
