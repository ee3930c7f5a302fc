"""view and transpose against torch, through their geometry caches (Note [View geometry
caches] in typedops/core/kernels/_views.py): each call twice, and the caches are kept
from example to example, so entries one tensor put serve the others (make compat)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from typedops import Tensor, ops

pytestmark = pytest.mark.compat
torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")


def _bases(shape: list[int], order: list[int], step: int) -> tuple[Tensor, Any]:
    """The same strided tensor in both libraries: a permutation of a contiguous tensor of
    zeros, every ``step``-th element of its first dimension."""
    ours: Tensor = ops.core.permute.default(ops.core.zeros.default(shape), order)
    if ours.ndim:
        ours = ops.core.slice.Tensor(ours, 0, None, None, step)
    theirs = torch.zeros(shape).permute(order)
    return ours, (theirs[::step] if theirs.ndim else theirs)


def _outcome(call: Any) -> tuple[object, ...]:
    """The view's geometry, or the builtin class and message of the error raised."""
    try:
        t = call()
    except IndexError as e:
        return IndexError, str(e)
    except RuntimeError as e:
        return RuntimeError, str(e)
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), data=st.data())
def test_views_match_torch_twice(shape: list[int], data: st.DataObject) -> None:
    order = list(data.draw(st.permutations(range(len(shape)))))
    ours, theirs = _bases(shape, order, data.draw(st.integers(1, 2)))
    size = data.draw(st.lists(st.integers(-1, 6), min_size=0, max_size=3))
    expected = _outcome(lambda: theirs.view(size))
    first, second = (_outcome(lambda: ops.core.view.default(ours, size)) for _ in range(2))
    assert first == second
    # The geometry, or the same builtin error saying what torch's says first (ours may
    # go on to name the fix).
    if isinstance(expected[0], tuple):
        assert first == expected
    else:
        assert first[0] is expected[0] and str(first[1]).startswith(str(expected[1])), (first, expected)


@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), data=st.data())
def test_transposes_match_torch_twice(shape: list[int], data: st.DataObject) -> None:
    order = list(data.draw(st.permutations(range(len(shape)))))
    ours, theirs = _bases(shape, order, 1)
    dims = data.draw(st.tuples(st.integers(-5, 4), st.integers(-5, 4)))
    expected = _outcome(lambda: theirs.transpose(*dims))
    for _ in range(2):
        assert _outcome(lambda: ops.core.transpose.int(ours, *dims)) == expected
