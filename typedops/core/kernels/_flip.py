"""``flip``: the elements in reverse order along some dims (a copy), as torch's; also
``reversed(x)`` (``x.flip(0)``: Note [Tensors as sequences] in tensor/_tensor.py).

A negative dim counts from the end; a dim named twice is refused, as torch refuses it; no
dims gives a copy. Its gradient is the gradient flipped the same way (derivatives.yaml).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...vocabulary import TensorError
from ...tensor import Tensor, wrap_dim
from ._common import data, fresh, meta_like
from ._messages import FLIP_DUPLICATES

__all__ = ["flip_cpu", "flip_meta"]


def _axes(self: Tensor, dims: Sequence[int]) -> tuple[int, ...]:
    axes = tuple(wrap_dim(d, max(self.ndim, 1)) for d in dims)
    for i, axis in enumerate(axes):
        if axis in axes[:i]:
            raise TensorError(FLIP_DUPLICATES.format(dim=axis))
    return axes if self.ndim else ()


def flip_cpu(self: Tensor, dims: Sequence[int]) -> Tensor:
    import numpy as np

    return fresh(np.flip(data(self), _axes(self, dims)).copy(), self.dtype, self.device)


def flip_meta(self: Tensor, dims: Sequence[int]) -> Tensor:
    _axes(self, dims)
    return meta_like(self.shape, self.dtype)
