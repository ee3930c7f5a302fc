"""Writes that overlap their inputs (typedops/tensor/_overlap.py): what counts as internal
and partial overlap, and that every in-place and out= kernel refuses them before writing
(Note [Writes that overlap their inputs]); torch's answers are in test_tensor_overlap_compat.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from typedops import FakeTensorMode, Tensor, core
from typedops.vocabulary import TensorError
from typedops.tensor import has_internal_overlap, partially_overlaps

INTERNAL = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
PARTIAL = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def _base() -> Tensor:
    return core.arange(0.0, 6.0)


def _part(x: Tensor, start: int, end: int, step: int = 1) -> Tensor:
    return core.slice(x, 0, start, end, step)


def test_internal_overlap_is_a_stride_of_0_over_more_than_one_element() -> None:
    assert has_internal_overlap(core.zeros([1]).expand([3]))
    assert has_internal_overlap(core.zeros([2, 1]).expand([2, 3]))
    assert not has_internal_overlap(core.zeros([1]).expand([1]))  # one element: nothing repeats
    assert not has_internal_overlap(core.zeros([2, 3]))
    assert not has_internal_overlap(_part(_base(), 0, 6, 2))  # gaps, no repeats
    assert not has_internal_overlap(core.zeros([0, 1]).expand([0, 3]))  # no elements


def test_partial_overlap_needs_one_storage_dense_operands_and_spans_that_meet_unequally() -> None:
    x = _base()
    assert partially_overlaps(_part(x, 1, 6), _part(x, 0, 5))
    assert partially_overlaps(x.view([2, 3]), x.view([3, 2]).t())  # same span, other strides
    assert not partially_overlaps(x, x)
    assert not partially_overlaps(x.view([2, 3]), x.view([2, 3]))  # same span and strides: full
    assert not partially_overlaps(_part(x, 0, 3), _part(x, 3, 6))  # disjoint spans
    assert not partially_overlaps(_part(x, 1, 4), _part(x, 0, 6, 2))  # not dense: too hard, passes
    assert not partially_overlaps(_part(x, 0, 0), x)  # no elements
    assert not partially_overlaps(_part(x, 1, 6), _part(_base(), 0, 5))  # another storage


_Write = Callable[[Tensor], object]
# Each writes part of x while reading another part of it (or writes an expanded tensor).
_PARTIAL_WRITES: list[tuple[str, _Write]] = [
    ("add_", lambda x: _part(x, 1, 6).add_(_part(x, 0, 5))),
    ("add_ alpha", lambda x: _part(x, 1, 6).add_(_part(x, 0, 5), alpha=2)),
    ("sub_", lambda x: _part(x, 1, 6).sub_(_part(x, 0, 5))),
    ("mul_", lambda x: _part(x, 1, 6).mul_(_part(x, 0, 5))),
    ("div_", lambda x: _part(x, 1, 6).div_(_part(x, 0, 5))),
    ("floor_divide_", lambda x: _part(x, 1, 6).floor_divide_(_part(x, 0, 5))),
    ("remainder_", lambda x: _part(x, 1, 6).remainder_(_part(x, 0, 5))),
    ("copy_", lambda x: _part(x, 1, 6).copy_(_part(x, 0, 5))),
    ("add out", lambda x: core.add(_part(x, 0, 5), _part(x, 0, 5), out=_part(x, 1, 6))),
    ("exp out", lambda x: core.exp(_part(x, 0, 5), out=_part(x, 1, 6))),
    ("add_ transposed", lambda x: x.view([2, 3]).add_(x.view([3, 2]).t())),
]
_INTERNAL_WRITES: list[tuple[str, _Write]] = [
    ("add_", lambda x: x.add_(x)),
    ("mul_ by a number", lambda x: x.mul_(2)),
    ("exp_", lambda x: x.exp_()),
    ("copy_", lambda x: x.copy_(core.ones([2, 3]))),
    ("add out", lambda x: core.add(core.ones([2, 3]), core.ones([2, 3]), out=x)),
]


@pytest.mark.parametrize("write", [w for _, w in _PARTIAL_WRITES], ids=[n for n, _ in _PARTIAL_WRITES])
def test_a_write_over_part_of_an_input_is_refused_and_writes_nothing(write: _Write) -> None:
    x = _base()
    with pytest.raises(TensorError, match=f"^{PARTIAL.replace('(', '[(]').replace(')', '[)]')}$") as caught:
        write(x)
    assert isinstance(caught.value, RuntimeError)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("write", [w for _, w in _INTERNAL_WRITES], ids=[n for n, _ in _INTERNAL_WRITES])
def test_a_write_into_a_tensor_overlapping_itself_is_refused_and_writes_nothing(write: _Write) -> None:
    base = core.zeros([2, 1])
    with pytest.raises(TensorError, match="^unsupported operation: more than one element"):
        write(base.expand([2, 3]))
    assert base.tolist() == [[0.0], [0.0]]


@pytest.mark.parametrize("write", [w for _, w in _PARTIAL_WRITES], ids=[n for n, _ in _PARTIAL_WRITES])
def test_meta_kernels_refuse_what_the_cpu_kernels_refuse(write: _Write) -> None:
    with FakeTensorMode(), pytest.raises(TensorError, match="^unsupported operation: some elements"):
        write(_base())


def test_writes_that_overlap_fully_or_not_at_all_or_too_hard_to_tell_go_ahead() -> None:
    x = _base()
    assert x.add_(x).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert core.add(x, x, out=x).tolist() == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    assert x.copy_(x).tolist() == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    y = _base()
    assert _part(y, 0, 3).add_(_part(y, 3, 6)).tolist() == [3.0, 5.0, 7.0]
    z = _base()
    _part(z, 1, 4).add_(_part(z, 0, 6, 2))  # the input is not dense: PyTorch does not decide either
    w = _base()
    assert core.sum(w.view([2, 3]), [0], out=_part(w, 0, 3)).tolist() == [3.0, 5.0, 7.0]  # reductions: no check


def test_writes_that_read_nothing_may_overlap_themselves() -> None:
    base = core.zeros([2, 1])
    base.expand([2, 3]).fill_(2.0)
    assert base.tolist() == [[2.0], [2.0]]
    base.expand([2, 3]).zero_()
    assert base.tolist() == [[0.0], [0.0]]


def test_copying_elements_onto_themselves_checks_nothing_as_torch() -> None:
    # PyTorch's copy_ returns at once for a source that is the same elements (same storage,
    # offset, sizes, strides, dtype), even an expanded one, which any other write refuses.
    base = core.zeros([1])
    a, b = base.expand([2]), base.expand([2])
    assert a.copy_(b) is a and base.tolist() == [0.0]
    x = _base()
    assert x.view([2, 3]).copy_(x.view([2, 3])).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
