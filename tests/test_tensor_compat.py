"""typedops.tensor against torch.tensor: the dtype each kind of data gets (make compat)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# Bad input raises what torch raises, as a builtin (tests/test_errors_rooted.py pins ours).
@pytest.mark.parametrize(
    ("ours", "theirs", "builtin", "same_message"),
    [
        (lambda: typedops.tensor([[1], [1, 2]]), lambda: torch.tensor([[1], [1, 2]]), ValueError, False),
        (lambda: typedops.tensor([1.0], dtype=cast(Any, "float32")), lambda: torch.tensor([1.0], dtype="float32"), TypeError,
         False),
        (lambda: typedops.tensor([1.0], dtype=cast(Any, np.float32)), lambda: torch.tensor([1.0], dtype=np.float32), TypeError,
         False),
        (lambda: typedops.core.arange(float("inf")), lambda: torch.arange(float("inf")), RuntimeError, True),
        (lambda: typedops.core.arange(float("nan")), lambda: torch.arange(float("nan")), RuntimeError, True),
        (lambda: typedops.core.cat([]), lambda: torch.cat([]), ValueError, False),
    ],
    ids=["ragged", "str dtype", "numpy dtype", "arange inf", "arange nan", "cat []"],
)  # fmt: skip
def test_bad_input_raises_the_builtin_torch_raises(ours: Any, theirs: Any, builtin: type[Exception],
                                                   same_message: bool) -> None:  # fmt: skip
    with pytest.raises(builtin) as mine:
        ours()
    with pytest.raises(builtin) as torchs:
        theirs()
    assert isinstance(mine.value, typedops.TypedopsError)
    if same_message:
        assert str(mine.value) == str(torchs.value)


@settings(max_examples=80, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=4), data=st.data())
def test_clone_preserves_the_strides_torch_preserves(shape: list[int], data: st.DataObject) -> None:
    # preserve_format copies a non-overlapping and dense tensor stride for stride (a
    # permutation, with or without size-1 dims); a sliced one gets the suggested format.
    from typedops import core

    order = data.draw(st.permutations(range(len(shape))))
    step = data.draw(st.sampled_from([1, 2]))
    numel = int(np.prod(shape))
    ours = core.arange(float(numel)).view(shape).permute(list(order))
    theirs = torch.arange(float(numel)).view(shape).permute(order)
    if step == 2 and ours.shape[-1] > 1:
        ours, theirs = core.slice(ours, -1, 0, None, 2), theirs[..., ::2]
    assert ours.stride() == theirs.stride()
    ours_clone, theirs_clone = ours.clone(), theirs.clone()
    assert ours_clone.stride() == theirs_clone.stride()
    assert ours_clone.tolist() == theirs_clone.tolist()
