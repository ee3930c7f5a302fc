"""The view kernels' geometry caches (Note [View geometry caches] in
typedops/core/kernels/_views.py): a hit gives what the checking path computes, the key
tells apart every input the geometry depends on, and bad calls raise every time."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import typedops.core.kernels._views as views
from typedops import Tensor, ops
from typedops.vocabulary import ArgumentError

NOT_VIEWABLE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def view(t: Tensor, size: list[int]) -> Tensor:
    result: Tensor = ops.core.view.default(t, size)
    return result


def transpose(t: Tensor, dim0: int, dim1: int) -> Tensor:
    result: Tensor = ops.core.transpose.int(t, dim0, dim1)
    return result


def geometry(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return t.shape, t.stride(), t.storage_offset()


def fresh(shape: tuple[int, ...]) -> Tensor:
    return Tensor.from_numpy(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


@pytest.fixture(autouse=True)
def cold_caches() -> None:
    views._view_geometries.clear()
    views._transpose_geometries.clear()


def test_the_view_key_holds_the_strides() -> None:
    # Same shape (2, 6), other strides: the contiguous one views as [12], the transposed
    # one cannot; a key without the strides would hand the second the first's geometry.
    assert geometry(view(fresh((2, 6)), [12])) == ((12,), (1,), 0)
    transposed = transpose(fresh((6, 2)), 0, 1)
    for _ in range(2):
        with pytest.raises(RuntimeError) as info:
            view(transposed, [12])
        assert str(info.value) == NOT_VIEWABLE


def test_the_view_key_holds_the_shape() -> None:
    # Same strides (3, 1), other shapes: -1 infers from each tensor's own size.
    assert view(fresh((2, 3)), [-1]).shape == (6,)
    assert view(fresh((4, 3)), [-1]).shape == (12,)


def test_a_hit_is_what_the_checking_path_gives() -> None:
    base = transpose(fresh((4, 3, 2)), 1, 2)  # shape (4, 2, 3), strides (6, 1, 2)
    cold = geometry(view(base, [4, -1, 3]))
    assert len(views._view_geometries) == 1
    warm = geometry(view(base, [4, -1, 3]))
    assert cold == warm == ((4, 2, 3), (6, 1, 2), 0)


def test_views_keep_their_own_offset_on_a_hit() -> None:
    base = fresh((3, 4))
    row = ops.core.select.int(base, 0, 2)  # offset 8, shape (4,)
    assert geometry(view(fresh((4,)), [2, 2])) == ((2, 2), (2, 1), 0)
    hit = view(row, [2, 2])
    assert geometry(hit) == ((2, 2), (2, 1), 8) and hit.tolist() == [[8.0, 9.0], [10.0, 11.0]]
    assert hit.storage is base.storage and hit._version == base._version


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ([-1, -1], "only one dimension can be inferred"),
        ([5, -1], "shape '[5, -1]' is invalid for input of size 6"),
        ([7], "shape '[7]' is invalid for input of size 6"),
        ([-2, -3], "invalid shape dimension -2 at index 0 of shape [-2, -3]"),
    ],
)
def test_bad_views_raise_every_time_and_are_not_stored(size: list[int], message: str) -> None:
    t = fresh((2, 3))
    for _ in range(2):
        with pytest.raises(RuntimeError) as info:
            view(t, size)
        assert str(info.value) == message
    assert len(views._view_geometries) == 0


def test_sizes_that_are_not_ints_never_make_a_geometry() -> None:
    # Only a call that skips the entry's checks (a direct kernel call, redispatch) can
    # pass floats or bools: a miss refuses them, so no float geometry is built or stored.
    t = fresh((2, 3))
    message = "^view\\(\\): size must be ints, got \\[6.0\\]: a call that skips the argument checks"
    with pytest.raises(ArgumentError, match=message):
        views.view(t, cast(Any, (6.0,)))
    with pytest.raises(ArgumentError, match="^transpose\\(\\): dim0, dim1 must be ints, got \\[True, 0\\]"):
        views.transpose(t, cast(Any, True), 0)
    assert len(views._view_geometries) == len(views._transpose_geometries) == 0
    with pytest.raises(ArgumentError, match=message):
        ops.core.view.default.redispatch(t.keys, t, [6.0])
    assert [type(n) for n in view(t, [6]).shape] == [int]
    # A hit is not type-tested: 6.0 == 6 finds the int geometry, the int call's answer.
    assert [type(n) for n in ops.core.view.default.redispatch(t.keys, t, [6.0]).shape] == [int]


def test_a_meta_view_hits_a_cpu_views_entry_and_stays_meta() -> None:
    assert geometry(view(fresh((2, 3)), [3, 2])) == ((3, 2), (2, 1), 0)
    m = ops.core._to_copy.default(fresh((2, 3)), device="meta")
    viewed = view(m, [3, 2])
    assert viewed.is_meta and geometry(viewed) == ((3, 2), (2, 1), 0)


def test_transpose_keys_hold_the_dims_and_strides() -> None:
    t = fresh((2, 3, 4))
    assert geometry(transpose(t, 0, 2)) == ((4, 3, 2), (1, 4, 12), 0)
    assert geometry(transpose(t, -1, 0)) == ((4, 3, 2), (1, 4, 12), 0)
    assert geometry(transpose(t, 1, 2)) == ((2, 4, 3), (12, 1, 4), 0)
    other = ops.core.permute.default(fresh((2, 4, 3)), [0, 2, 1])  # shape (2, 3, 4), strides (12, 1, 3)
    assert geometry(transpose(other, 0, 2)) == ((4, 3, 2), (3, 1, 12), 0)
    for _ in range(2):
        with pytest.raises(IndexError) as info:
            transpose(t, 0, 3)
        assert str(info.value) == "Dimension out of range (expected to be in range of [-3, 2], but got 3)"


def test_a_scalars_transpose_checks_its_dims_every_time() -> None:
    s = ops.core.view.default(fresh((1,)), [])
    for _ in range(2):
        assert geometry(transpose(s, 0, -1)) == ((), (), 0)
        with pytest.raises(IndexError) as info:
            transpose(s, 0, 1)
        assert str(info.value) == "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    assert len(views._transpose_geometries) == 0


def test_a_hit_transpose_still_swaps_the_cached_array() -> None:
    t = fresh((2, 3))
    transpose(t, 0, 1)  # stored
    t.numpy()  # t now has its cached numpy view
    hit = transpose(t, 0, 1)
    assert hit._array is not None and np.shares_memory(hit._array, t.numpy())
    assert hit.tolist() == t.numpy().T.tolist()


@given(
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_views_of_permuted_tensors_match_numpy_twice(shape: list[int], data: st.DataObject) -> None:
    base = fresh(tuple(shape))
    order = data.draw(st.permutations(range(len(shape))))
    permuted = ops.core.permute.default(base, list(order))
    numel = int(np.prod(shape))
    sizes = [d for d in range(1, numel + 1) if numel % d == 0] or [0]
    first = data.draw(st.sampled_from(sizes))
    size = [first, -1] if numel else [first, 3, -1]
    outcomes: list[str] = []
    for _ in range(2):
        try:
            got = view(permuted, size)
        except RuntimeError as e:
            outcomes.append(str(e))
            continue
        assert got.storage is base.storage
        assert got.tolist() == permuted.numpy().reshape(size).tolist()
        outcomes.append(str(geometry(got)))
    assert outcomes[0] == outcomes[1]


def test_an_inferred_dimension_of_an_empty_tensor_is_ambiguous() -> None:
    # As torch: -1 beside a 0 could be any size when there are no elements.
    t = fresh((0, 3))
    with pytest.raises(RuntimeError) as info:
        view(t, [0, -1])
    assert str(info.value) == (
        "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 "
        "can be any value and is ambiguous; give that dimension's size instead of -1"
    )
    with pytest.raises(RuntimeError, match=r"into shape \[3, 0, -1\] because"):
        view(t, [3, 0, -1])
    assert view(t, [3, 0]).shape == (3, 0)
