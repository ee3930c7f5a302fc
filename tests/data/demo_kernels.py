"""Numpy kernels for tests/data/demo_ops.yaml (the code generator's test library)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from typedops import Device, DispatchKey, DispatchKeySet, MemoryFormat, Scalar, ScalarType, Tensor, ops
from typedops.tensor import empty_meta, numpy_dtype


def add_tensor(self: Tensor, other: Tensor, *, alpha: Scalar = 1) -> Tensor:
    return Tensor.from_numpy(self.numpy() + alpha * other.numpy())


def add_meta(self: Tensor, other: Tensor, *, alpha: Scalar = 1) -> Tensor:
    return empty_meta(np.broadcast_shapes(self.shape, other.shape), self.dtype)


def add_scalar(self: Tensor, other: Scalar, alpha: Scalar = 1) -> Tensor:
    if self.is_meta:
        return empty_meta(self.shape, self.dtype)
    return Tensor.from_numpy(self.numpy() + alpha * other)


def add_out(self: Tensor, other: Tensor, *, alpha: Scalar = 1, out: Tensor) -> Tensor:
    np.add(self.numpy(), alpha * other.numpy(), out=out.numpy())
    return out


def add_inplace(self: Tensor, other: Tensor, *, alpha: Scalar = 1) -> Tensor:
    self.numpy()[...] += alpha * other.numpy()
    return self


def twice(self: Tensor) -> Tensor:
    """A composite kernel: it calls another op through the dispatcher."""
    result: Tensor = ops.demo.add.Tensor(self, self)
    return result


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return Tensor.from_numpy(np.concatenate([t.numpy() for t in tensors], axis=dim))


def clamp(self: Tensor, min: Optional[Scalar] = None, max: Optional[Scalar] = None) -> Tensor:
    return Tensor.from_numpy(np.clip(self.numpy(), min, max))


def full_backend_select(
    keys: DispatchKeySet,
    size: Sequence[int],
    fill_value: Scalar,
    *,
    dtype: Optional[ScalarType] = None,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
    device: Optional[Device] = None,
) -> Tensor:
    """Picks the backend from ``device`` (a factory has no tensor to take it from)."""
    backend = DispatchKey.Meta if device is not None and Device.parse(device).type == "meta" else DispatchKey.CPU
    result: Tensor = ops.demo.full.default.redispatch(
        keys.add(backend), size, fill_value, dtype=dtype, memory_format=memory_format, device=device
    )
    return result


def full_cpu(
    size: Sequence[int],
    fill_value: Scalar,
    *,
    dtype: Optional[ScalarType] = None,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
    device: Optional[Device] = None,
) -> Tensor:
    chosen = dtype if dtype is not None else ScalarType.float32
    return Tensor.from_numpy(np.full(tuple(size), fill_value, dtype=numpy_dtype(chosen)))


def full_meta(
    size: Sequence[int],
    fill_value: Scalar,
    *,
    dtype: Optional[ScalarType] = None,
    memory_format: MemoryFormat = MemoryFormat.contiguous_format,
    device: Optional[Device] = None,
) -> Tensor:
    return empty_meta(tuple(size), dtype if dtype is not None else ScalarType.float32)
