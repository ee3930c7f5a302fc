"""Views (results share their input's storage), layout changes, copies and joins.

View kernels only compute shapes, strides and offsets, so one kernel serves every
backend: they are registered for ``CompositeExplicitAutograd``. ``reshape``,
``transpose``, ``t``, ``flatten``, ``contiguous`` and ``stack`` are composites written
in terms of other core ops, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ...vocabulary import MemoryFormat, ScalarType
from ...tensor import (
    broadcast_shapes,
    infer_size,
    suggest_memory_format,
    view_strides,
    wrap_dim,
)
from ...tensor import (
    NO_DATA, Tensor, contiguous_strides_cached, empty_tensor, make_view, numpy_dtype,
)  # fmt: skip
from ._common import call_op, data, meta_like, result_type


# -- view kernels (CompositeExplicitAutograd) -----------------------------------------------
def as_strided(
    self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int]
) -> Tensor:
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} sizes")
    offset = self.storage_offset() if storage_offset is None else storage_offset
    if any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(
            f"as_strided: sizes, strides and the storage offset must be non-negative, got size={list(size)}, "
            f"stride={list(stride)}, storage_offset={offset}"
        )
    if all(n > 0 for n in size):
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed > self.storage.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} need "
                f"{needed} elements, but the storage holds {self.storage.size}"
            )
    return make_view(self, size, stride, offset)


_NOT_VIEWABLE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def view(self: Tensor, size: Sequence[int]) -> Tensor:
    shape = infer_size(size, self.numel())
    old_shape, old_strides = self.shape, self.stride()
    if old_strides == contiguous_strides_cached(old_shape):  # the common case: no search
        return make_view(self, shape, contiguous_strides_cached(shape), self.storage_offset())
    strides = view_strides(old_shape, old_strides, shape)
    if strides is None:
        raise RuntimeError(_NOT_VIEWABLE)
    return make_view(self, shape, strides, self.storage_offset())


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(): number of dims don't match in permute: the tensor has "
            f"{self.ndim} dimensions but dims has {len(dims)}"
        )
    wrapped = [wrap_dim(d, self.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"permute(): duplicate dims are not allowed (dims={list(dims)})")
    strides = self.stride()
    return make_view(
        self, [self.shape[d] for d in wrapped], [strides[d] for d in wrapped], self.storage_offset()
    )


def select(self: Tensor, dim: int, index: int) -> Tensor:
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}"
        )
    if index < 0:
        index += size
    strides = self.stride()
    return make_view(
        self,
        self.shape[:d] + self.shape[d + 1 :],
        strides[:d] + strides[d + 1 :],
        self.storage_offset() + index * strides[d],
    )


def slice_(self: Tensor, dim: int, start: Optional[int], end: Optional[int], step: int) -> Tensor:
    if self.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise ValueError("slice step must be positive")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    lo = 0 if start is None else (start + size if start < 0 else start)
    hi = size if end is None else (end + size if end < 0 else end)
    lo = min(max(lo, 0), size)
    hi = min(max(hi, lo), size)
    length = (hi - lo + step - 1) // step
    strides = list(self.stride())
    shape = list(self.shape)
    offset = self.storage_offset() + lo * strides[d]
    shape[d] = length
    strides[d] *= step
    return make_view(self, shape, strides, offset)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = wrap_dim(dim, self.ndim + 1)
    shape = list(self.shape)
    strides = list(self.stride())
    new_stride = shape[d] * strides[d] if d < self.ndim else 1
    shape.insert(d, 1)
    strides.insert(d, new_stride)
    return make_view(self, shape, strides, self.storage_offset())


def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[d] != 1:
        return make_view(self, self.shape, self.stride(), self.storage_offset())
    strides = self.stride()
    return make_view(self, self.shape[:d] + self.shape[d + 1 :], strides[:d] + strides[d + 1 :], self.storage_offset())


def expand(self: Tensor, size: Sequence[int], *, implicit: bool) -> Tensor:
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({self.ndim})"
        )
    lead = len(size) - self.ndim
    shape: list[int] = []
    strides: list[int] = []
    for i, target in enumerate(size):
        if i < lead:
            if target < 0:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {i}")
            shape.append(target)
            strides.append(0)
            continue
        have = self.shape[i - lead]
        stride = self.stride()[i - lead]
        if target == -1:
            target = have
        if have != target:
            if have != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size ({have}) "
                    f"at non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(self.shape)}"
                )
            stride = 0
        shape.append(target)
        strides.append(stride)
    return make_view(self, shape, strides, self.storage_offset())


# -- composite views ---------------------------------------------------------------------
def reshape_composite(self: Tensor, shape: Sequence[int]) -> Tensor:
    """A view when the strides allow one, else a contiguous copy viewed in ``shape``."""
    size = infer_size(shape, self.numel())
    if view_strides(self.shape, self.stride(), size) is not None:
        result: Tensor = call_op("view")(self, list(size))
        return result
    copied: Tensor = call_op("clone")(self, memory_format=MemoryFormat.contiguous_format)
    viewed: Tensor = call_op("view")(copied, list(size))
    return viewed


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with two dimensions swapped (its own kernel: a view op on the hot path)."""
    shape, strides = self.shape, self.stride()
    if not shape:
        return make_view(self, shape, strides, self.storage_offset())
    a, b = wrap_dim(dim0, len(shape)), wrap_dim(dim1, len(shape))
    new_shape, new_strides = list(shape), list(strides)
    new_shape[a], new_shape[b] = shape[b], shape[a]
    new_strides[a], new_strides[b] = strides[b], strides[a]
    return make_view(self, new_shape, new_strides, self.storage_offset())


def t_composite(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    result: Tensor = call_op("transpose", "int")(self, 0, -1)
    return result


def flatten_composite(self: Tensor, start_dim: int, end_dim: int) -> Tensor:
    if self.ndim == 0:
        scalar: Tensor = call_op("reshape")(self, [1])
        return scalar
    start, end = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(self.shape[:start]) + [-1 if self.numel() else 0] + list(self.shape[end + 1 :])
    if start == end:
        shape = list(self.shape)
    result: Tensor = call_op("reshape")(self, shape)
    return result


def contiguous_composite(self: Tensor, *, memory_format: MemoryFormat) -> Tensor:
    """``self`` if it is already laid out in ``memory_format``, else a copy that is."""
    if memory_format is MemoryFormat.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(memory_format=memory_format):
        return self
    result: Tensor = call_op("clone")(self, memory_format=memory_format)
    return result


# -- copies (CPU and Meta) ---------------------------------------------------------------
def _clone_target(self: Tensor, memory_format: Optional[MemoryFormat]) -> Tensor:
    fmt = MemoryFormat.preserve_format if memory_format is None else memory_format
    if fmt is MemoryFormat.preserve_format:
        fmt = suggest_memory_format(self.shape, self.stride())
    return empty_tensor(self.shape, self.dtype, self.device, fmt)


def clone_cpu(self: Tensor, *, memory_format: Optional[MemoryFormat]) -> Tensor:
    result = _clone_target(self, memory_format)
    data(result)[...] = data(self)
    return result


def clone_meta(self: Tensor, *, memory_format: Optional[MemoryFormat]) -> Tensor:
    return _clone_target(self, memory_format)


def _check_copy(self: Tensor, src: Tensor) -> None:
    shape = broadcast_shapes(self.shape, src.shape)
    if shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}"
        )


def copy__cpu(self: Tensor, src: Tensor, non_blocking: bool) -> Tensor:
    _check_copy(self, src)
    data(self)[...] = data(src).astype(numpy_dtype(self.dtype))
    return self


def copy__meta(self: Tensor, src: Tensor, non_blocking: bool) -> Tensor:
    _check_copy(self, src)
    if src.is_meta and not self.is_meta:
        raise NotImplementedError(f"Cannot copy out of meta tensor; {NO_DATA}")
    if not self.is_meta:  # a meta source was ruled out: copying real data into a real tensor
        data(self)[...] = data(src).astype(numpy_dtype(self.dtype))
    return self


# -- joins ----------------------------------------------------------------------------------
def _plan_cat(tensors: Sequence[Tensor], dim: int) -> tuple[tuple[int, ...], ScalarType, list[Tensor]]:
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    dtype = result_type(*tensors)
    # PyTorch skips legacy empty 1-D tensors (shape [0]) when the others have more dims.
    parts = [t for t in tensors if t.shape != (0,)] or [tensors[0]]
    ref = parts[0]
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ref.ndim)
    total = 0
    for i, t in enumerate(parts):
        if t.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}"
            )
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                )
        total += t.shape[d]
    shape = ref.shape[:d] + (total,) + ref.shape[d + 1 :]
    return shape, dtype, parts


def cat_cpu(tensors: Sequence[Tensor], dim: int) -> Tensor:
    import numpy as np

    shape, dtype, parts = _plan_cat(tensors, dim)
    d = wrap_dim(dim, len(shape))
    result = empty_tensor(shape, dtype, parts[0].device)
    data(result)[...] = np.concatenate([data(t).astype(numpy_dtype(dtype)) for t in parts], axis=d)
    return result


def cat_meta(tensors: Sequence[Tensor], dim: int) -> Tensor:
    shape, dtype, _ = _plan_cat(tensors, dim)
    return meta_like(shape, dtype)


def stack_composite(tensors: Sequence[Tensor], dim: int) -> Tensor:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    d = wrap_dim(dim, first.ndim + 1)
    unsqueeze_op = call_op("unsqueeze")
    result: Tensor = call_op("cat")([unsqueeze_op(t, d) for t in tensors], d)
    return result
