"""Memory overlap between a written tensor and the tensors an op reads, as PyTorch checks it.

Note [Writes that overlap their inputs]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An in-place or ``out=`` op writes memory that its inputs may also name. numpy copies an
overlapping operand first, so any overlap would silently compute *something*; PyTorch
refuses the two cases whose answer would depend on the order of the writes, and so do we:

- the written tensor names one memory location more than once (``zeros(1).expand(3)``): a
  dimension of size > 1 with stride 0, on a tensor that is not non-overlapping and dense;
- an input shares *part* of the written memory (``x[1:].add_(x[:-1])``): both tensors
  non-overlapping and dense, on one storage, their spans intersecting but not equal (or
  equal with other strides). The same tensor, or the same span with the same strides, is
  a full overlap: element ``i`` reads before it writes ``i`` (``x.add_(x)``), allowed.

A tensor that is not non-overlapping and dense (``x[::2]``) is "too hard" to decide and
passes, as in PyTorch; so does a tensor without elements. Ops that write without reading
(``fill_``, ``zero_``) and reductions with ``out=`` check nothing, as PyTorch's don't.
The Meta kernels check the first case too, which the strides decide (PyTorch's meta
kernels check neither): a run on meta or fake tensors refuses what the CPU run would.
The second needs a storage, which a meta tensor does not have.

A tensor whose storage is not made yet owns its array alone (Note [Storage made on
demand] in _tensor.py: a view makes its base's storage first), and its strides are
contiguous, so ``check_write`` returns at once for it: the fast paths pay one slot read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..vocabulary import TensorError
from ._messages import INTERNAL_OVERLAP, PARTIAL_OVERLAP
from ._strides import is_non_overlapping_and_dense, numel_of

if TYPE_CHECKING:
    from ._tensor import Tensor

__all__ = ["check_write", "has_internal_overlap", "partially_overlaps"]


def has_internal_overlap(t: Tensor) -> bool:
    """Whether some memory location holds more than one of ``t``'s elements, as far as
    PyTorch decides it (Note [Writes that overlap their inputs])."""
    shape, strides = t._shape, t._strides
    if 0 not in strides or is_non_overlapping_and_dense(shape, strides):
        return False
    return any(s == 0 and n > 1 for n, s in zip(shape, strides))


def partially_overlaps(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` share some but not all of their memory (Note [Writes that
    overlap their inputs]); False when that is too hard to decide."""
    if a is b or a._storage is None or a._storage is not b._storage:
        return False
    a_numel, b_numel = numel_of(a._shape), numel_of(b._shape)
    if not a_numel or not b_numel:
        return False
    if not (is_non_overlapping_and_dense(a._shape, a._strides) and is_non_overlapping_and_dense(b._shape, b._strides)):
        return False
    a_begin, b_begin = a._offset, b._offset
    a_end, b_end = a_begin + a_numel, b_begin + b_numel  # dense: the span is numel slots
    if a_begin == b_begin and a_end == b_end:
        return a._strides != b._strides
    return a_begin < b_end and b_begin < a_end


def check_write(out: Tensor, *inputs: Tensor) -> None:
    """Refuse a write into ``out`` that reads ``inputs``, as PyTorch does (Note [Writes that
    overlap their inputs]); nothing is written when it raises."""
    if out._storage is None:  # owns its array, laid out contiguously: nothing overlaps
        return
    if has_internal_overlap(out):
        raise TensorError(INTERNAL_OVERLAP)
    for t in inputs:
        if partially_overlaps(out, t):
            raise TensorError(PARTIAL_OVERLAP)


