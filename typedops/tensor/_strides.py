"""Shape and stride arithmetic: pure Python, no numpy (``import typedops`` stays fast).

Strides count elements, not bytes, as in PyTorch. The memory-format rules follow
PyTorch's exactly (write-up 003): a channels-last tensor of shape ``(N, C, H, W)`` has
strides ``(H*W*C, 1, W*C, C)``, and dimensions of size 1 never break contiguity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ..vocabulary import ArgumentValueError, DimensionError, MemoryFormat, TensorError
from ._messages import (
    DIMENSION_OUT_OF_RANGE,
    FORMAT_NEEDS_RANK,
    AMBIGUOUS_INFERRED_DIMENSION,
    INVALID_SHAPE_DIMENSION,
    PRESERVE_IS_NO_LAYOUT,
    SHAPE_INVALID_FOR_SIZE,
    SIZES_DO_NOT_BROADCAST,
    TWO_INFERRED_DIMENSIONS,
)

__all__ = [
    "contiguous_strides",
    "strides_for_format",
    "is_contiguous_strides",
    "is_channels_last_strides",
    "suggest_memory_format",
    "is_non_overlapping_and_dense",
    "dense_strides_like",
    "elementwise_strides",
    "broadcast_shapes",
    "infer_size",
    "view_strides",
    "wrap_dim",
    "numel_of",
]

# Dimension orders from the fastest-varying (stride 1) outwards.
_CHANNELS_LAST_ORDER: Final = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}
_FORMAT_RANK: Final = {MemoryFormat.channels_last: 4, MemoryFormat.channels_last_3d: 5}


def numel_of(shape: Sequence[int]) -> int:
    return math.prod(shape)  # C: a third of a Python loop's cost on a short shape


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides; a size-0 or size-1 dimension counts as size 1, as in PyTorch."""
    strides = [0] * len(shape)
    step = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def _ordered_strides(shape: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def _check_rank(shape: Sequence[int], memory_format: MemoryFormat) -> None:
    rank = _FORMAT_RANK[memory_format]
    if len(shape) != rank:
        raise TensorError(
            FORMAT_NEEDS_RANK.format(rank=rank, format=memory_format.name, shape=list(shape), ndim=len(shape))
        )


def strides_for_format(shape: Sequence[int], memory_format: MemoryFormat) -> tuple[int, ...]:
    """The dense strides of ``shape`` laid out in ``memory_format`` (not ``preserve_format``)."""
    if memory_format is MemoryFormat.contiguous_format:
        return contiguous_strides(shape)
    if memory_format is MemoryFormat.preserve_format:
        raise ArgumentValueError(PRESERVE_IS_NO_LAYOUT)
    _check_rank(shape, memory_format)
    return _ordered_strides(shape, _CHANNELS_LAST_ORDER[len(shape)])


def is_contiguous_strides(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major dense, ignoring size-1 dimensions; every empty tensor is contiguous."""
    if numel_of(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_channels_last_strides(shape: Sequence[int], strides: Sequence[int], memory_format: MemoryFormat) -> bool:
    """Dense in the channels-last order for the tensor's rank (False for other ranks).

    Unlike the row-major check, an empty tensor is not channels-last by default: its
    strides decide, as in PyTorch."""
    order = _CHANNELS_LAST_ORDER.get(len(shape))
    if order is None or len(shape) != _FORMAT_RANK[memory_format]:
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill ``numel`` slots exactly once in some order of the dims (a
    permutation of a row-major layout; size-1 dims are ignored), as PyTorch's test of the
    same name: what ``preserve_format`` copies stride for stride."""
    if 0 in shape:  # no elements: nothing overlaps
        return True
    dims = sorted((stride, size) for size, stride in zip(shape, strides) if size != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def dense_strides_like(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """Dense strides laying the dims out in the order ``strides`` does (PyTorch's
    ``infer_dense_strides``: what ``preserve_format`` gives a tensor that is not
    non-overlapping and dense). Dims are ordered innermost first by stride, a dim of stride
    0 keeping its row-major place, equal strides putting the smaller size inside; the order
    is found by a stable insertion sort starting from the row-major order."""
    ndim = len(shape)
    order = _iteration_order(shape, [list(strides)])  # one tensor's dims, innermost first
    result = [0] * ndim
    step = 1
    for d in order:
        result[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(result)


# Note [Element-wise result strides]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An out-of-place element-wise op (unary, binary, with a wrapped number, ``where``) lays
# its result out as PyTorch's TensorIterator does, from its inputs' shapes and strides:
# - when every input has the result's shape (nothing broadcasts), all row-major
#   contiguous gives row-major strides; else all channels-last (rank 4) gives
#   channels-last strides; else all non-overlapping and dense *with equal strides* gives
#   the first input's strides, stride for stride (size-1 dims included);
# - otherwise the dims are sorted innermost first by an insertion sort starting from the
#   row-major order: two dims are compared by the first input (in argument order) that
#   has a nonzero stride for both -- the smaller stride goes inside; with equal strides
#   the dim of the larger size goes outside, else the next input decides -- and a
#   broadcast dim (size 1 in an input, more in the result; or missing) counts as stride
#   0, which leaves the comparison to the next input. If no swap happened the result is
#   row-major; else its strides are dense in the sorted order (each the product of the
#   sizes inside it, size-0 dims included).
# So one input's permutation is kept (``x.exp()`` of a channels-last ``x`` is
# channels-last), the first input wins where inputs disagree, and a tensor meeting a
# broadcast operand or a number keeps its own order. In-place and ``out=`` forms write
# into their tensors and keep their layouts; an ``out=`` tensor that must be resized
# takes the out-of-place result's layout, as PyTorch restrides it. The CPU kernels give numpy's result these
# strides, wrapping it when numpy chose the same (the usual case) and copying it once
# otherwise; the Meta kernels make empty tensors with them (core/kernels/_common.py,
# ``elementwise_result`` and ``elementwise_meta``).
def elementwise_strides(shape: Sequence[int], inputs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> tuple[int, ...]:
    """The strides of an element-wise op's result of ``shape`` (the broadcast of the
    inputs' shapes) on ``inputs``, each ``(shape, strides)`` in argument order: Note
    [Element-wise result strides]."""
    ndim = len(shape)
    if ndim <= 1:
        return contiguous_strides(shape)
    if all(tuple(s) == tuple(shape) for s, _ in inputs):
        fast = _same_shape_strides(shape, inputs)
        if fast is not None:
            return fast
    order = _iteration_order(shape, [_broadcast_strides(shape, s, t) for s, t in inputs])
    if order == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    result = [0] * ndim
    step = 1
    for d in order:
        result[d] = step
        step *= shape[d]
    return tuple(result)


def _same_shape_strides(
    shape: Sequence[int], inputs: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> tuple[int, ...] | None:
    """TensorIterator's layouts for inputs of the result's shape, or None to sort."""
    if all(is_contiguous_strides(shape, t) for _, t in inputs):
        return contiguous_strides(shape)
    if all(is_channels_last_strides(shape, t, MemoryFormat.channels_last) for _, t in inputs):
        return strides_for_format(shape, MemoryFormat.channels_last)
    first = tuple(inputs[0][1])
    if all(tuple(t) == first for _, t in inputs) and is_non_overlapping_and_dense(shape, first):
        return first
    return None


def _broadcast_strides(shape: Sequence[int], own_shape: Sequence[int], strides: Sequence[int]) -> list[int]:
    """``strides`` seen in the result's ``shape``: 0 for a broadcast or missing dim."""
    offset = len(shape) - len(own_shape)
    result = [0] * len(shape)
    for i, (size, stride) in enumerate(zip(own_shape, strides)):
        if not (size == 1 and shape[offset + i] != 1):
            result[offset + i] = stride
    return result


def _iteration_order(shape: Sequence[int], strides: Sequence[list[int]]) -> list[int]:
    """The dims innermost first, by the insertion sort of Note [Element-wise result strides]."""

    def compare(d0: int, d1: int) -> int:  # 1: d0 (now inside d1) goes outside; -1: stays; 0: open
        for per_dim in strides:
            s0, s1 = per_dim[d0], per_dim[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    ndim = len(shape)
    order = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        moving = i
        for j in range(i - 1, -1, -1):
            compared = compare(order[j], order[moving])
            if compared > 0:
                order[j], order[moving] = order[moving], order[j]
                moving = j
            elif compared < 0:
                break
    return order


def suggest_memory_format(shape: Sequence[int], strides: Sequence[int]) -> MemoryFormat:
    """What ``preserve_format`` keeps: channels-last when the tensor is laid out so (and
    not also row-major), else the contiguous format."""
    if is_contiguous_strides(shape, strides):
        return MemoryFormat.contiguous_format
    for memory_format in (MemoryFormat.channels_last, MemoryFormat.channels_last_3d):
        if is_channels_last_strides(shape, strides, memory_format):
            return memory_format
    return MemoryFormat.contiguous_format


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of two shapes, with PyTorch's error when they do not fit."""
    ndim = max(len(a), len(b))
    result = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        da = len(a) - 1 - offset
        db = len(b) - 1 - offset
        sa = a[da] if da >= 0 else 1
        sb = b[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise TensorError(SIZES_DO_NOT_BROADCAST.format(sa=sa, sb=sb, i=i))
        result[i] = sb if sa == 1 else sa
    return tuple(result)


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """``shape`` with one ``-1`` filled in so that it holds ``numel`` elements."""
    if math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)  # the common call: no -1, the right size (C-level tests only)
    known = 1
    infer_at: int | None = None
    for i, size in enumerate(shape):
        if size == -1:
            if infer_at is not None:
                raise TensorError(TWO_INFERRED_DIMENSIONS)
            infer_at = i
        elif size < 0:
            raise TensorError(INVALID_SHAPE_DIMENSION.format(size=size, index=i, shape=list(shape)))
        else:
            known *= size
    result = list(shape)
    if infer_at is not None and known != 0 and numel % known == 0:
        result[infer_at] = numel // known
        return tuple(result)
    if infer_at is None and known == numel:
        return tuple(result)
    if infer_at is not None and known == 0 and numel == 0:
        raise TensorError(AMBIGUOUS_INFERRED_DIMENSION.format(shape=list(shape)))
    raise TensorError(SHAPE_INVALID_FOR_SIZE.format(shape=list(shape), numel=numel))


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """Strides that show the same elements in ``new_shape`` without copying, or None.

    Dimensions are grouped into chunks that are contiguous with each other; a new
    dimension may split or merge dimensions only within one chunk (PyTorch's rule).
    """
    if not shape:
        return tuple(1 for _ in new_shape)
    numel = numel_of(shape)
    if numel == 0:
        return contiguous_strides(new_shape) if tuple(shape) != tuple(new_shape) else tuple(strides)
    result = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        chunk_ends = tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        )
        if chunk_ends:
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                result[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(result)


def wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative index into ``ndim`` dimensions (a scalar has range [-1, 0])."""
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise DimensionError(DIMENSION_OUT_OF_RANGE.format(low=-rank, high=rank - 1, dim=dim))
    return dim + rank if dim < 0 else dim
