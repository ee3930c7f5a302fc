"""``all`` and ``any``: whether every (some) element is nonzero, over the tensor or a dim.

As torch's: the result is bool, except for a uint8 input, whose result is uint8 (0 or 1);
an empty tensor is ``all`` true and ``any`` false; NaN counts as nonzero. The dim forms
take a negative dim and ``keepdim``. Not differentiable (derivatives.yaml marks them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...vocabulary import ScalarType
from ...tensor import Tensor, empty_meta, numpy_dtype, wrap_dim
from ._common import data, fresh

__all__ = [
    "all_cpu", "all_meta", "any_cpu", "any_meta", "all_dim_cpu", "all_dim_meta", "any_dim_cpu", "any_dim_meta",
]  # fmt: skip


def _result_dtype(self: Tensor) -> ScalarType:
    return ScalarType.uint8 if self.dtype is ScalarType.uint8 else ScalarType.bool


def _dim_shape(self: Tensor, dim: int, keepdim: bool) -> tuple[int, tuple[int, ...]]:
    d = wrap_dim(dim, max(self.ndim, 1))
    shape = list(self.shape)
    if shape:
        if keepdim:
            shape[d] = 1
        else:
            del shape[d]
    return d, tuple(shape)


def _forms(name: str) -> tuple[Callable[..., Tensor], ...]:
    def full_cpu(self: Tensor) -> Tensor:
        import numpy as np

        value: Any = getattr(np, name)(data(self))
        dtype = _result_dtype(self)
        return fresh(np.asarray(value).astype(numpy_dtype(dtype)), dtype, self._device)

    def full_meta(self: Tensor) -> Tensor:
        return empty_meta((), _result_dtype(self))

    def dim_cpu(self: Tensor, dim: int, keepdim: bool) -> Tensor:
        import numpy as np

        d, _ = _dim_shape(self, dim, keepdim)
        array = data(self)
        value: Any = getattr(np, name)(array, axis=d, keepdims=keepdim) if array.ndim else getattr(np, name)(array)
        dtype = _result_dtype(self)
        return fresh(np.asarray(value).astype(numpy_dtype(dtype)), dtype, self._device)

    def dim_meta(self: Tensor, dim: int, keepdim: bool) -> Tensor:
        return empty_meta(_dim_shape(self, dim, keepdim)[1], _result_dtype(self))

    for kernel, suffix in ((full_cpu, "_cpu"), (full_meta, "_meta"), (dim_cpu, "_dim_cpu"), (dim_meta, "_dim_meta")):
        kernel.__name__ = kernel.__qualname__ = f"{name}{suffix}"
    return full_cpu, full_meta, dim_cpu, dim_meta


all_cpu, all_meta, all_dim_cpu, all_dim_meta = _forms("all")
any_cpu, any_meta, any_dim_cpu, any_dim_meta = _forms("any")
