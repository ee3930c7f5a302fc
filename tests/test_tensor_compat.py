"""typedops.tensor against torch.tensor: the dtype each kind of data gets (make compat)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typedops

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

_DATA: list[Any] = [
    [1, 2], [1.5], [True], [1 + 2j], 3, 2.5,
    *(np.zeros(2, dtype) for dtype in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                       np.uint8, np.bool_, np.complex64, np.complex128)),
    np.float64(1.5), np.int32(3), np.float16(0.5),
]  # fmt: skip


@pytest.mark.parametrize("data", _DATA, ids=lambda d: f"{type(d).__name__}:{getattr(d, 'dtype', '')}")
def test_tensor_infers_torchs_dtype(data: Any) -> None:
    ours = typedops.tensor(data)
    theirs = torch.tensor(data)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert ours.tolist() == theirs.tolist()
