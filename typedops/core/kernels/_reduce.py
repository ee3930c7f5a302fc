"""Reductions over dimensions (``sum``, ``mean``, ``amax``, ``max.dim``, ``argmax``) and
matrix products (``matmul``, ``mm``)."""

# Checked by pyright in standard mode, not strict yet: what it narrows from Any, yaml or
# numpy values is partially unknown to it (issue 12; mypy --strict checks it in full).
# pyright: standard

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ...vocabulary import ScalarType
from ...tensor import broadcast_shapes, numel_of, wrap_dim
from ...tensor import Tensor, numpy_dtype, wrapped_scalar
from ._common import call_op, data, meta_like, wrap

Shape = tuple[int, ...]


def reduced_dims(shape: Shape, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    """The wrapped dimensions a reduction runs over (all of them for None or []); a lone
    int is a list of one (``int[1]? dim``, as in PyTorch: ``x.sum(0)``)."""
    if isinstance(dim, int):
        dim = (dim,)
    if not dim:
        return tuple(range(len(shape)))
    wrapped: list[int] = []
    for d in dim:
        w = wrap_dim(d, len(shape))
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return tuple(sorted(wrapped))


def reduced_shape(shape: Shape, dims: Sequence[int], keepdim: bool) -> Shape:
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _axes(shape: Shape, dims: Sequence[int]) -> tuple[int, ...]:
    """numpy axes for ``dims``; a 0-dim tensor reduces over nothing."""
    return tuple(d for d in dims if d < len(shape))


# -- sum / mean ---------------------------------------------------------------------------
def _plan_sum(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, dtype: Optional[ScalarType]
) -> tuple[Shape, ScalarType, tuple[int, ...]]:
    dims = reduced_dims(self.shape, dim)
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else ScalarType.int64
    return reduced_shape(self.shape, dims, keepdim), dtype, dims


def sum_dim_cpu(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    shape, result_dtype, dims = _plan_sum(self, dim, keepdim, dtype)
    values = data(self).sum(axis=_axes(self.shape, dims), dtype=numpy_dtype(result_dtype), keepdims=keepdim)
    return wrap(values, result_dtype)


def sum_dim_meta(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    shape, result_dtype, _ = _plan_sum(self, dim, keepdim, dtype)
    return meta_like(shape, result_dtype)


def sum_composite(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    result: Tensor = call_op("sum", "dim_IntList")(self, None, False, dtype=dtype)
    return result


def mean_dim_composite(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    chosen = self.dtype if dtype is None else dtype
    if not (chosen.is_floating_point or chosen.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {chosen.name}"
        )
    dims = reduced_dims(self.shape, dim)
    count = numel_of([self.shape[d] for d in _axes(self.shape, dims)])
    total: Tensor = call_op("sum", "dim_IntList")(self, dim, keepdim, dtype=dtype)
    result: Tensor = call_op("div", "Tensor")(total, wrapped_scalar(count, total.device))
    return result


def mean_composite(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    result: Tensor = call_op("mean", "dim")(self, None, False, dtype=dtype)
    return result


# -- amax / max.dim / argmax -------------------------------------------------------------------
def _check_nonempty(self: Tensor, dims: Sequence[int], name: str) -> None:
    for d in _axes(self.shape, dims):
        if self.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
            )


def _plan_amax(self: Tensor, dim: Sequence[int], keepdim: bool) -> tuple[Shape, tuple[int, ...]]:
    dims = reduced_dims(self.shape, dim)
    _check_nonempty(self, dims, "amax")
    return reduced_shape(self.shape, dims, keepdim), dims


def amax_cpu(self: Tensor, dim: Sequence[int], keepdim: bool) -> Tensor:
    shape, dims = _plan_amax(self, dim, keepdim)
    return wrap(data(self).max(axis=_axes(self.shape, dims), keepdims=keepdim), self.dtype)


def amax_meta(self: Tensor, dim: Sequence[int], keepdim: bool) -> Tensor:
    shape, _ = _plan_amax(self, dim, keepdim)
    return meta_like(shape, self.dtype)


def _plan_max_dim(self: Tensor, dim: int, keepdim: bool) -> tuple[Shape, int]:
    d = wrap_dim(dim, self.ndim)
    _check_nonempty(self, (d,), "max")
    return reduced_shape(self.shape, (d,) if self.ndim else (), keepdim), d


def max_dim_cpu(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    import numpy as np

    shape, d = _plan_max_dim(self, dim, keepdim)
    array = data(self) if self.ndim else data(self).reshape(1)
    indices = np.argmax(array, axis=d, keepdims=keepdim)
    values = np.take_along_axis(array, indices if keepdim else np.expand_dims(indices, d), axis=d)
    values = values.reshape(shape)
    return wrap(values, self.dtype), wrap(np.asarray(indices).reshape(shape), ScalarType.int64)


def max_dim_meta(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    shape, _ = _plan_max_dim(self, dim, keepdim)
    return meta_like(shape, self.dtype), meta_like(shape, ScalarType.int64)


def argmax_composite(self: Tensor, dim: Optional[int], keepdim: bool) -> Tensor:
    if dim is not None:
        indices: Tensor = call_op("max", "dim")(self, dim, keepdim)[1]
        return indices
    flat: Tensor = call_op("reshape")(self, [-1])
    index: Tensor = call_op("max", "dim")(flat, 0, False)[1]
    if keepdim:
        kept: Tensor = call_op("reshape")(index, [1] * self.ndim)
        return kept
    return index


# -- matrix products ------------------------------------------------------------------------
def _shapes_error(a: Shape, b: Shape) -> RuntimeError:
    def show(s: Shape) -> str:
        return "x".join(str(n) for n in s) if s else "scalar"

    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({show(a)} and {show(b)})")


def _check_same_dtype(self: Tensor, other: Tensor) -> ScalarType:
    if self.dtype is not other.dtype:
        raise RuntimeError(
            f"expected both operands to have the same dtype, but got: {self.dtype.name} != {other.dtype.name}"
        )
    return self.dtype


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """numpy/PyTorch matmul: 1-D operands gain and then lose a dimension; batches broadcast."""
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D"
        )
    left = (1,) + a if len(a) == 1 else a
    right = b + (1,) if len(b) == 1 else b
    if left[-1] != right[-2]:
        raise _shapes_error(a, b)
    batch = broadcast_shapes(left[:-2], right[:-2])
    shape = batch + (left[-2], right[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def matmul_cpu(self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    dtype = _check_same_dtype(self, other)
    matmul_shape(self.shape, other.shape)
    return wrap(np.matmul(data(self), data(other)), dtype)


def matmul_meta(self: Tensor, other: Tensor) -> Tensor:
    dtype = _check_same_dtype(self, other)
    return meta_like(matmul_shape(self.shape, other.shape), dtype)


def _plan_mm(self: Tensor, mat2: Tensor) -> tuple[Shape, ScalarType]:
    if self.ndim != 2:
        raise RuntimeError(f"self must be a matrix, but it is {self.ndim}-D")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, but it is {mat2.ndim}-D")
    dtype = _check_same_dtype(self, mat2)
    return matmul_shape(self.shape, mat2.shape), dtype


def mm_cpu(self: Tensor, mat2: Tensor) -> Tensor:
    _, dtype = _plan_mm(self, mat2)
    return wrap(data(self) @ data(mat2), dtype)


def mm_meta(self: Tensor, mat2: Tensor) -> Tensor:
    return meta_like(*_plan_mm(self, mat2))
