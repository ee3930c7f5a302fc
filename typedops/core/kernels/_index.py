"""Advanced indexing: ``index.Tensor`` (``x[mask]``, ``x[idx]``) and ``index_put`` /
``index_put_`` (``x[mask] = v``), as torch's.

Note [Advanced indexing]
~~~~~~~~~~~~~~~~~~~~~~~~
``indices`` holds one entry per leading dim of ``self`` (None: the whole dim): an integer
tensor (int64 or int32; uint8 is taken as bool, and other dtypes refused, as torch) picks
positions along its dim, a bool tensor of k dims is a mask over the next k dims (its
``True`` positions, in order). The integer tensors broadcast together; the result has
their broadcast shape where the indexed dims were when those are next to each other, else
in front -- numpy's rule for a tuple of arrays, which the CPU kernel hands to numpy as
such. A position out of range is an IndexError with torch's words, before anything is
read or written.

``index`` returns a new tensor (a copy, contiguous). ``index_put`` writes ``values``,
broadcast to the indexed shape and of ``self``'s dtype (torch's rule; ``x[i] = v``
converts ``v`` first), at those positions of a copy of ``self`` (``index_put_``: of
``self``); with ``accumulate`` a position named twice gets every value added
(``np.add.at``), without it one of them, as torch says. Gradients: ``index``'s is
``index_put`` of zeros with ``accumulate``; ``index_put``'s is the gradient with the
written positions zeroed for ``self``, and the gradient at those positions, summed to
``values``' shape, for ``values``.

The Meta kernels know the result's shape from integer indices only: a bool mask's count
of ``True`` is in its data, so on meta (and fake) tensors it is an ``UnsupportedError``,
as torch's dynamic output shapes are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ...vocabulary import DimensionError, ScalarType, TensorError, UnsupportedError
from ...tensor import Tensor, broadcast_shapes, check_write, numpy_dtype
from ._common import data, fresh, meta_like
from ._messages import (
    INDEX_BOOL_SHAPE,
    INDEX_DTYPE,
    INDEX_MASK_ON_META,
    INDEX_OUT_OF_BOUNDS,
    INDEX_PUT_DTYPE,
    INDEX_PUT_SHAPE,
    INDEX_TOO_MANY,
)

__all__ = ["index_cpu", "index_meta", "index_put_cpu", "index_put_meta", "index_put__cpu", "index_put__meta"]

Shape = tuple[int, ...]
_INTEGERS = frozenset({ScalarType.int64, ScalarType.int32})


def _checked(self: Tensor, indices: Sequence[Optional[Tensor]]) -> None:
    """Refuse index tensors of another dtype and indices for more dims than ``self`` has."""
    dims = 0
    for index in indices:
        if index is None:
            dims += 1
            continue
        if index.dtype not in _INTEGERS and index.dtype not in (ScalarType.bool, ScalarType.uint8):
            raise DimensionError(INDEX_DTYPE.format(dtype=index.dtype.name))
        dims += index.ndim if index.dtype in (ScalarType.bool, ScalarType.uint8) else 1
    if dims > self.ndim:
        raise DimensionError(INDEX_TOO_MANY.format(count=dims, ndim=self.ndim))


def _numpy_indices(self: Tensor, indices: Sequence[Optional[Tensor]]) -> tuple[Any, ...]:
    """``indices`` as numpy's index tuple, each position checked against its dim."""
    import numpy as np

    _checked(self, indices)
    found: list[Any] = []
    dim = 0
    for index in indices:
        if index is None:
            found.append(slice(None))
            dim += 1
            continue
        values = data(index)
        if index.dtype in (ScalarType.bool, ScalarType.uint8):
            mask_shape = self.shape[dim : dim + index.ndim]
            if tuple(index.shape) != tuple(mask_shape):
                raise DimensionError(
                    INDEX_BOOL_SHAPE.format(shape=list(index.shape), dim=dim, self_shape=list(mask_shape))
                )
            found.append(values.astype(bool, copy=False))
            dim += index.ndim
            continue
        size = self.shape[dim]
        positions = values.astype(np.int64, copy=False)
        if positions.size and (positions.min() < -size or positions.max() >= size):
            bad = int(positions.min()) if positions.min() < -size else int(positions.max())
            raise DimensionError(INDEX_OUT_OF_BOUNDS.format(index=bad, dim=dim, size=size))
        found.append(positions)
        dim += 1
    return tuple(found)


def _result_shape(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Shape:
    """The shape ``index`` gives for integer ``indices`` (numpy's placement rule)."""
    _checked(self, indices)
    if any(i is not None and i.dtype in (ScalarType.bool, ScalarType.uint8) for i in indices):
        raise UnsupportedError(INDEX_MASK_ON_META)
    positions = [d for d, i in enumerate(indices) if i is not None]
    if not positions:
        return tuple(self.shape)
    broadcast: Shape = ()
    for index in indices:
        broadcast = broadcast if index is None else tuple(broadcast_shapes(broadcast, index.shape))
    rest = list(self.shape[len(indices) :])
    kept = [self.shape[d] for d, i in enumerate(indices) if i is None]
    if positions == list(range(positions[0], positions[-1] + 1)):  # next to each other: in place
        before = list(self.shape[: positions[0]])
        after = [self.shape[d] for d in range(positions[-1] + 1, len(indices))]
        return (*before, *broadcast, *after, *rest)
    return (*broadcast, *kept, *rest)


def index_cpu(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    picked = data(self)[_numpy_indices(self, indices)]
    return fresh(picked.copy(), self.dtype, self.device)


def index_meta(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    return meta_like(_result_shape(self, indices), self.dtype)


def _same_dtype(self: Tensor, values: Tensor) -> None:
    if values.dtype is not self.dtype:
        raise TensorError(INDEX_PUT_DTYPE.format(self=self.dtype.name, values=values.dtype.name))


def _put(target: Any, where: tuple[Any, ...], values: Tensor, dtype: ScalarType, accumulate: bool) -> None:
    import numpy as np

    picked_shape = target[where].shape
    source = data(values).astype(numpy_dtype(dtype))
    try:
        source = np.broadcast_to(source, picked_shape)
    except ValueError:
        raise TensorError(INDEX_PUT_SHAPE.format(values=list(values.shape), shape=list(picked_shape))) from None
    if accumulate:
        np.add.at(target, where, source)
    else:
        target[where] = source


def index_put_cpu(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool) -> Tensor:
    _same_dtype(self, values)
    where = _numpy_indices(self, indices)
    result = data(self).copy()
    _put(result, where, values, self.dtype, accumulate)
    return fresh(result, self.dtype, self.device)


def index_put_meta(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool) -> Tensor:
    _same_dtype(self, values)
    _checked(self, indices)
    return meta_like(self.shape, self.dtype)


def index_put__cpu(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool) -> Tensor:
    check_write(self, values)
    _same_dtype(self, values)
    where = _numpy_indices(self, indices)
    _put(data(self), where, values, self.dtype, accumulate)
    return self


def index_put__meta(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool) -> Tensor:
    check_write(self, values)
    _same_dtype(self, values)
    _checked(self, indices)
    return self
