"""Views (results share their input's storage), layout changes, copies and joins.

View kernels only compute shapes, strides and offsets, so one kernel serves every
backend: they are registered for ``CompositeExplicitAutograd``. ``reshape``,
``transpose``, ``t``, ``flatten``, ``contiguous`` and ``stack`` are composites written
in terms of other core ops, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Optional

from ...vocabulary import (
    ArgumentError, ArgumentValueError, BoundedCache, DimensionError, MemoryFormat, ScalarType, TensorError,
    UnsupportedError,
)  # fmt: skip
from ...tensor import (
    broadcast_shapes,
    infer_size,
    numel_of,
    is_non_overlapping_and_dense,
    dense_strides_like,
    view_strides,
    wrap_dim,
)
from ...tensor import (
    NO_DATA, Tensor, check_write, contiguous_strides_cached, empty_tensor, make_view, numpy_dtype, view_with,
)  # fmt: skip
from ._common import call_op, data, meta_like, result_type
from ._messages import (
    AS_STRIDED_NEGATIVE,
    GEOMETRY_NOT_INTS,
    CAT_EMPTY,
    CAT_RANKS,
    CAT_SCALAR,
    CAT_SIZES,
    CONTIGUOUS_PRESERVE_FORMAT,
    EXPAND_MISMATCH,
    EXPAND_NEGATIVE,
    EXPAND_NEW_MINUS_ONE,
    EXPAND_TOO_FEW,
    FLATTEN_ORDER,
    META_COPY,
    NOT_VIEWABLE,
    OUT_SHAPE_MISMATCH,
    PERMUTE_DUPLICATE,
    PERMUTE_RANK,
    SELECT_OUT_OF_RANGE,
    SELECT_SCALAR,
    SLICE_SCALAR,
    SLICE_STEP,
    STACK_EMPTY,
    STACK_SIZES,
    STORAGE_TOO_SMALL,
    STRIDES_LENGTH,
    T_RANK,
)


# -- view kernels (CompositeExplicitAutograd) -----------------------------------------------
def as_strided(
    self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int]
) -> Tensor:
    if len(size) != len(stride):
        raise TensorError(STRIDES_LENGTH.format(strides=len(stride), sizes=len(size)))
    offset = self.storage_offset() if storage_offset is None else storage_offset
    if any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
        raise TensorError(AS_STRIDED_NEGATIVE.format(size=list(size), stride=list(stride), offset=offset))
    if all(n > 0 for n in size):
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed > self.storage.size:
            raise TensorError(STORAGE_TOO_SMALL.format(
                size=list(size), stride=list(stride), offset=offset, needed=needed, held=self.storage.size
            ))
    return make_view(self, size, stride, offset)


def detach(self: Tensor) -> Tensor:
    """A view of all of ``self`` with no history: the result carries no Autograd key, and
    shares ``self``'s storage and so its version counter (Note [Shared version counter])."""
    return make_view(self, self._shape, self._strides, self._offset)


# Note [View geometry caches]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``view`` and ``transpose`` compute a shape and strides from nothing but the input's
# shape and strides and their own int arguments, and a program views the same few
# shapes over and over. So each remembers its geometry in a BoundedCache keyed by exactly
# those inputs: a hit is one key tuple and one dict lookup (~60 ns), where ``view``'s
# infer_size, numel_of and two contiguous-strides lookups cost ~250 ns and
# ``transpose``'s dim checks and list swaps ~100 ns (8x8 float32, CPython 3.11, thread
# CPU clock). The offset is not part of the geometry: the view keeps its input's. The
# geometry's shape and strides are tuples already, so the view is made by ``view_with``,
# which skips make_view's conversions (~20 ns). (Setting the view's fields in line here
# would save its frame too, ~20 ns a view, but which fields a Tensor must have set is the
# tensor layer's business: Note [Tensor fields with class defaults].) A cache holds up to
# 4096 geometries.
# - Only calls that succeed are stored: a bad call misses every time and raises its
#   own error from the checking path (``_view_geometry``, ``_transpose_geometry``).
# - Only exact ints reach a geometry. Every checked entry point refuses other sizes and
#   dims before the kernel runs; a call that bypasses those checks (``redispatch``,
#   whose caller passes checked values, as PyTorch's typed redispatch assumes) is not
#   type-tested on a hit -- that would cost the hit path more than the cache saves. Keys
#   compare by value (``4.0 == 4``, ``True == 1``), so such a call that hits gets the
#   int geometry, which is what the int call computes; one that misses is refused by the
#   checking path (``_exact_ints``), so no geometry of other values is ever built, stored
#   or handed out.
# - A 0-dim tensor's transpose is not stored (its array has no axes to swap); it takes
#   the checking path, which checks its dims as PyTorch does.
_Geometry = tuple[tuple[int, ...], tuple[int, ...]]
_INTS: Final = frozenset({int})
_GEOMETRY_LIMIT: Final = 4096
_view_geometries: Final[BoundedCache[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], _Geometry]] = (
    BoundedCache(_GEOMETRY_LIMIT, "view shapes and strides")
)
_transpose_geometries: Final[BoundedCache[tuple[tuple[int, ...], tuple[int, ...], int, int], tuple[
    tuple[int, ...], tuple[int, ...], int, int
]]] = BoundedCache(_GEOMETRY_LIMIT, "transpose shapes, strides and dims")  # fmt: skip
_view_geometry_hit: Final = _view_geometries.get  # dict.get itself: Note [Bounded caches]
_transpose_geometry_hit: Final = _transpose_geometries.get


def view(self: Tensor, size: Sequence[int]) -> Tensor:
    """A view of ``self`` in ``size`` (one -1 inferred); Note [View geometry caches]."""
    old_shape, old_strides = self._shape, self._strides
    geometry = _view_geometry_hit((old_shape, old_strides, tuple(size)))
    if geometry is None:
        geometry = _view_geometry(old_shape, old_strides, tuple(size))
    shape, strides = geometry
    return view_with(self, shape, strides)


def _view_geometry(old_shape: tuple[int, ...], old_strides: tuple[int, ...], size: tuple[int, ...]) -> _Geometry:
    """The checked shape and strides of a view in ``size``, stored when ``size`` is all
    ints (Note [View geometry caches])."""
    _exact_ints("view", "size", size)
    shape = infer_size(size, numel_of(old_shape))
    if old_strides == contiguous_strides_cached(old_shape):  # the common case: no search
        strides = contiguous_strides_cached(shape)
    else:
        found = view_strides(old_shape, old_strides, shape)
        if found is None:
            raise TensorError(NOT_VIEWABLE)
        strides = found
    _view_geometries.put((old_shape, old_strides, size), (shape, strides))
    return shape, strides


def _exact_ints(op: str, argument: str, values: tuple[object, ...]) -> None:
    """Refuse what only an unchecked call can pass (Note [View geometry caches])."""
    if not _INTS.issuperset(map(type, values)):
        raise ArgumentError(GEOMETRY_NOT_INTS.format(op=op, argument=argument, values=list(values)))


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    if len(dims) != self.ndim:
        raise TensorError(PERMUTE_RANK.format(ndim=self.ndim, count=len(dims)))
    wrapped = [wrap_dim(d, self.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise TensorError(PERMUTE_DUPLICATE.format(dims=list(dims)))
    strides = self.stride()
    return make_view(
        self, [self.shape[d] for d in wrapped], [strides[d] for d in wrapped], self.storage_offset()
    )


def select(self: Tensor, dim: int, index: int) -> Tensor:
    if self.ndim == 0:
        raise DimensionError(SELECT_SCALAR)
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise DimensionError(SELECT_OUT_OF_RANGE.format(index=index, size=list(self.shape), dim=d))
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
        raise DimensionError(SLICE_SCALAR)
    if step <= 0:
        raise ArgumentValueError(SLICE_STEP)
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
        raise TensorError(EXPAND_TOO_FEW.format(count=len(size), ndim=self.ndim))
    lead = len(size) - self.ndim
    shape: list[int] = []
    strides: list[int] = []
    for i, target in enumerate(size):
        if i < lead:
            if target < 0:
                raise TensorError(EXPAND_NEW_MINUS_ONE.format(dim=i))
            shape.append(target)
            strides.append(0)
            continue
        have = self.shape[i - lead]
        stride = self.stride()[i - lead]
        if target == -1:
            target = have
        elif target < 0:
            raise TensorError(EXPAND_NEGATIVE.format(target=target, dim=i))
        if have != target:
            if have != 1:
                raise TensorError(
                    EXPAND_MISMATCH.format(target=target, have=have, dim=i, size=list(size), shape=list(self.shape))
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
    geometry = _transpose_geometry_hit((self._shape, self._strides, dim0, dim1))
    if geometry is None:
        if not self._shape:  # a scalar takes dims 0 and -1 (and checks them, as PyTorch does)
            wrap_dim(dim0, 0)
            wrap_dim(dim1, 0)
            return make_view(self, self._shape, self._strides, self._offset)
        geometry = _transpose_geometry(self._shape, self._strides, dim0, dim1)
    shape, strides, a, b = geometry
    view = view_with(self, shape, strides)
    # The view's numpy array is the base's, axes swapped (Note [Cached numpy view] in
    # tensor/_tensor.py): cheaper than building it from the storage when a kernel reads it,
    # as every matmul gradient's transpose is read.
    array = self._array
    if array is not None:
        storage = view._storage
        if storage is not None and self._array_buffer is storage.buffer:
            view._array = array.swapaxes(a, b)
            view._array_buffer = self._array_buffer
    return view


def _transpose_geometry(
    shape: tuple[int, ...], strides: tuple[int, ...], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """The shape, strides and wrapped dims of a transpose of a tensor with 1 or more dims,
    stored when both dims are ints (Note [View geometry caches])."""
    _exact_ints("transpose", "dim0, dim1", (dim0, dim1))
    n = len(shape)
    a = dim0 if 0 <= dim0 < n else wrap_dim(dim0, n)  # wrap_dim only for negative (or bad) dims
    b = dim1 if 0 <= dim1 < n else wrap_dim(dim1, n)
    new_shape, new_strides = list(shape), list(strides)
    new_shape[a], new_shape[b] = shape[b], shape[a]
    new_strides[a], new_strides[b] = strides[b], strides[a]
    geometry = (tuple(new_shape), tuple(new_strides), a, b)
    _transpose_geometries.put((shape, strides, dim0, dim1), geometry)
    return geometry


def t_composite(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise TensorError(T_RANK.format(ndim=self.ndim))
    result: Tensor = call_op("transpose", "int")(self, 0, -1)
    return result


def flatten_composite(self: Tensor, start_dim: int, end_dim: int) -> Tensor:
    if self.ndim == 0:
        scalar: Tensor = call_op("reshape")(self, [1])
        return scalar
    start, end = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if start > end:
        raise TensorError(FLATTEN_ORDER)
    shape = list(self.shape[:start]) + [-1 if self.numel() else 0] + list(self.shape[end + 1 :])
    if start == end:
        shape = list(self.shape)
    result: Tensor = call_op("reshape")(self, shape)
    return result


def contiguous_composite(self: Tensor, *, memory_format: MemoryFormat) -> Tensor:
    """``self`` if it is already laid out in ``memory_format``, else a copy that is."""
    if memory_format is MemoryFormat.preserve_format:
        raise TensorError(CONTIGUOUS_PRESERVE_FORMAT)
    if self.is_contiguous(memory_format=memory_format):
        return self
    result: Tensor = call_op("clone")(self, memory_format=memory_format)
    return result


# -- copies (CPU and Meta) ---------------------------------------------------------------
def _clone_target(self: Tensor, memory_format: Optional[MemoryFormat]) -> Tensor:
    fmt = MemoryFormat.preserve_format if memory_format is None else memory_format
    if fmt is MemoryFormat.preserve_format:
        # As PyTorch's empty_like: a non-overlapping and dense tensor's strides are kept
        # stride for stride; any other's dims keep their order, laid out densely.
        strides = self.stride()
        if not is_non_overlapping_and_dense(self.shape, strides):
            strides = dense_strides_like(self.shape, strides)
        return empty_tensor(self.shape, self.dtype, self.device, dense_strides=strides)
    return empty_tensor(self.shape, self.dtype, self.device, fmt)


def clone_cpu(self: Tensor, *, memory_format: Optional[MemoryFormat]) -> Tensor:
    result = _clone_target(self, memory_format)
    data(result)[...] = data(self)
    return result


def clone_meta(self: Tensor, *, memory_format: Optional[MemoryFormat]) -> Tensor:
    return _clone_target(self, memory_format)


def _same_data(self: Tensor, src: Tensor) -> bool:
    """Whether ``src`` is ``self``'s very elements (a view of the same storage, offset,
    sizes, strides and dtype): PyTorch's ``copy_`` then returns at once, checking nothing."""
    return self is src or (
        self._storage is not None and self._storage is src._storage and self._offset == src._offset
        and self._strides == src._strides and self._shape == src._shape and self._dtype is src._dtype
    )  # fmt: skip


def _check_copy(self: Tensor, src: Tensor) -> None:
    if not _same_data(self, src):  # copying elements onto themselves writes nothing
        check_write(self, src)
    shape = broadcast_shapes(self.shape, src.shape)
    if shape != self.shape:
        raise TensorError(OUT_SHAPE_MISMATCH.format(shape=list(self.shape), broadcast=list(shape)))


def copy__cpu(self: Tensor, src: Tensor, non_blocking: bool) -> Tensor:
    _check_copy(self, src)
    data(self)[...] = data(src).astype(numpy_dtype(self.dtype))
    return self


def copy__meta(self: Tensor, src: Tensor, non_blocking: bool) -> Tensor:
    _check_copy(self, src)
    if src.is_meta and not self.is_meta:
        raise UnsupportedError(META_COPY.format(no_data=NO_DATA))
    if not self.is_meta:  # a meta source was ruled out: copying real data into a real tensor
        data(self)[...] = data(src).astype(numpy_dtype(self.dtype))
    return self


# -- joins ----------------------------------------------------------------------------------
def _plan_cat(tensors: Sequence[Tensor], dim: int) -> tuple[tuple[int, ...], ScalarType, list[Tensor]]:
    if not tensors:
        raise TensorError(CAT_EMPTY)
    dtype = result_type(*tensors)
    # PyTorch skips legacy empty 1-D tensors (shape [0]) when the others have more dims.
    parts = [t for t in tensors if t.shape != (0,)] or [tensors[0]]
    ref = parts[0]
    if ref.ndim == 0:
        raise TensorError(CAT_SCALAR)
    d = wrap_dim(dim, ref.ndim)
    total = 0
    for i, t in enumerate(parts):
        if t.ndim != ref.ndim:
            raise TensorError(CAT_RANKS.format(a=ref.ndim, b=t.ndim))
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise TensorError(CAT_SIZES.format(dim=d, expected=ref.shape[k], got=t.shape[k], index=i))
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
        raise TensorError(STACK_EMPTY)
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise TensorError(STACK_SIZES.format(first=list(first.shape), shape=list(t.shape), index=i))
    d = wrap_dim(dim, first.ndim + 1)
    unsqueeze_op = call_op("unsqueeze")
    result: Tensor = call_op("cat")([unsqueeze_op(t, d) for t in tensors], d)
    return result


def squeeze_composite(self: Tensor) -> Tensor:
    """``squeeze()``: a view without any dimension of size 1 (under vmap, of the logical
    shape only: a composite sees the batched tensor's own dimensions). The kept dims keep
    their strides, as PyTorch's do: ``view`` gives them so for a tensor with elements, in
    one call; for an empty tensor it would give contiguous strides, so that takes one
    ``squeeze.dim`` per size-1 dimension, last first."""
    if self.numel():
        result: Tensor = call_op("view")(self, [n for n in self.shape if n != 1])
        return result
    squeeze_dim_op = call_op("squeeze", "dim")
    ones = [d for d, n in enumerate(self.shape) if n == 1]
    result = squeeze_dim_op(self, ones.pop() if ones else 0)  # a new view even with none
    for d in reversed(ones):
        result = squeeze_dim_op(result, d)
    return result
