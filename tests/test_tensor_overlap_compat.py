"""Overlapping writes against torch (make compat): for in-place and out= ops on random
strided views of one storage, typedops refuses exactly what torch refuses, with torch's
message, and computes what torch computes where the answer does not depend on the order
of the writes (Note [Writes that overlap their inputs] in typedops/tensor/_overlap.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from typedops import Tensor, core
from typedops.vocabulary import TensorError

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

SPAN = 12
Geometry = tuple[tuple[int, ...], tuple[int, ...], int]


@st.composite
def _geometry(draw: st.DrawFn, shape: tuple[int, ...]) -> Geometry:
    """Strides and an offset placing ``shape`` inside a storage of SPAN elements."""
    strides = tuple(draw(st.integers(0, 4)) for _ in shape)
    reach = sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    offset = draw(st.integers(0, max(0, SPAN - 1 - reach)))
    return shape, strides, offset


def _fits(g: Geometry) -> bool:
    shape, strides, offset = g
    return not all(shape) or offset + sum((n - 1) * s for n, s in zip(shape, strides)) < SPAN


def _addresses(g: Geometry) -> list[int]:
    shape, strides, offset = g
    return [offset + int(np.dot(i, strides)) for i in np.ndindex(*shape)] if all(shape) else []


# name: (typedops call, torch call), each given the written view and the read view.
_OPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
    "add_": (lambda o, i: o.add_(i), lambda o, i: o.add_(i)),
    "mul_": (lambda o, i: o.mul_(i), lambda o, i: o.mul_(i)),
    "sub_ alpha": (lambda o, i: o.sub_(i, alpha=2), lambda o, i: o.sub_(i, alpha=2)),
    "div_": (lambda o, i: o.div_(i), lambda o, i: o.div_(i)),
    "copy_": (lambda o, i: o.copy_(i), lambda o, i: o.copy_(i)),
    "exp_": (lambda o, i: o.exp_(), lambda o, i: o.exp_()),
    "mul_ by 3": (lambda o, i: o.mul_(3), lambda o, i: o.mul_(3)),
    "add out": (lambda o, i: core.add(i, i, out=o), lambda o, i: torch.add(i, i, out=o)),
    "sqrt out": (lambda o, i: core.sqrt(i, out=o), lambda o, i: torch.sqrt(i, out=o)),
}


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3), min_size=1, max_size=2).map(tuple),
    data=st.data(),
    op=st.sampled_from(sorted(_OPS)),
)
def test_overlapping_writes_are_refused_and_computed_as_torch_does(
    shape: tuple[int, ...], data: st.DataObject, op: str
) -> None:
    written, read = data.draw(_geometry(shape)), data.draw(_geometry(shape))
    if not (_fits(written) and _fits(read)):
        return
    values = (np.arange(SPAN, dtype=np.float32) + 1) / 4
    ours_base, theirs_base = Tensor.from_numpy(values.copy()), torch.from_numpy(values.copy())
    ours_call, theirs_call = _OPS[op]
    theirs_error = ours_error = None
    try:
        theirs_call(torch.as_strided(theirs_base, *written), torch.as_strided(theirs_base, *read))
    except RuntimeError as e:
        theirs_error = str(e)
    try:
        ours_call(core.as_strided(ours_base, list(written[0]), list(written[1]), written[2]),
                  core.as_strided(ours_base, list(read[0]), list(read[1]), read[2]))  # fmt: skip
    except TensorError as e:
        ours_error = str(e)
        assert ours_base.numpy().tolist() == values.tolist()  # refused before writing
    assert ours_error == theirs_error
    out_at, in_at = _addresses(written), _addresses(read)
    unique = len(set(out_at)) == len(out_at)
    apart = not set(out_at) & set(in_at) or (out_at == in_at) or op in ("exp_", "mul_ by 3")
    if theirs_error is None and unique and apart:  # an answer that does not depend on write order
        np.testing.assert_allclose(ours_base.numpy(), theirs_base.numpy(), rtol=1e-6, equal_nan=True)
