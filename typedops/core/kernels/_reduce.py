"""Reductions over dimensions (``sum``, ``mean``, ``amax``, ``max``, ``min``, ``argmax``) and
matrix products (``matmul``, ``mm``)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Final, Optional, cast

from ...vocabulary import DimensionError, ScalarType, TensorError, UnsupportedError
from ...tensor import Tensor, array_of, broadcast_shapes, numel_of, wrap_dim
from ._common import call_op, data, fresh, meta_like, np_dtype, product_fast, write_out
from ._messages import (
    DIM_REPEATED,
    EMPTY_FULL_REDUCTION,
    EMPTY_REDUCTION_DIM,
    MATMUL_SCALAR,
    MATMUL_SHAPES,
    MEAN_DTYPE,
    NOT_A_MATRIX,
    OPERAND_DTYPES_DIFFER,
    ORDER_COMPLEX,
    SUM_OUT_DTYPE,
)

Shape = tuple[int, ...]


def reduced_dims(shape: Shape, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    """The wrapped dimensions a reduction runs over (all of them for None or []); a lone
    int is a list of one (``int[1]? dim``, as in PyTorch: ``x.sum(0)``). Dispatched calls
    arrive converted (Note [A lone int for a sized list] in dispatch/_entry.py); the
    callers of kernels themselves -- a --static-dispatch build's functions, a loaded
    program's static flavor -- pass what they were given, and rely on this."""
    if isinstance(dim, int):
        dim = (dim,)
    if not dim:
        return tuple(range(len(shape)))
    wrapped: list[int] = []
    for d in dim:
        w = wrap_dim(d, len(shape))
        if w in wrapped:
            raise TensorError(DIM_REPEATED.format(dim=w))
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
    return reduced_shape(self.shape, dims, keepdim), _sum_dtype(self, dtype), dims


def sum_dim_cpu(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    # _plan_sum without the result's shape, which numpy computes (every backward of a
    # broadcast op sums its gradient here: sum_to_size, a bias's gradient). numpy.add.reduce
    # is what ndarray.sum calls, without its Python frame; the dtypes come as sum_cpu's.
    if not keepdim and (dim is None or dim == []):  # every dimension, as sum.default: its kernel
        return sum_cpu(self, dtype=dtype)
    shape = self._shape
    one = cast("list[int]", dim)  # tested as such below
    if type(one) is list and len(one) == 1 and type(one[0]) is int and 0 <= one[0] < len(shape):
        axes: tuple[int, ...] = (one[0],)  # one wrapped dimension (reduced_dims' answer)
    else:
        axes = _axes(shape, reduced_dims(shape, dim))
    plan = _SUM_PLANS.get(self._dtype) if dtype is None else None
    result_dtype, np_dt = _sum_plan(self, dtype) if plan is None else plan
    array = self._array  # array_of in line, as sum_cpu (Note [Cached numpy view])
    if array is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
        array = self._fresh_array()
    if not keepdim and len(axes) == len(shape):  # all of them: into a new 0-dim array, as sum_cpu
        return _from_array0(_add_reduce(array, axes, np_dt, _empty((), np_dt)), result_dtype, self._device)
    return fresh(_add_reduce(array, axes, np_dt, None, keepdim), result_dtype, self._device)


def sum_dim_meta(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    shape, result_dtype, _ = _plan_sum(self, dim, keepdim, dtype)
    return meta_like(shape, result_dtype)


def _sum_out_dtype(self: Tensor, dtype: Optional[ScalarType], out: Tensor) -> ScalarType:
    """The dtype ``sum.IntList_out`` sums in: ``dtype`` if given (``out`` must have it), else
    ``out``'s, as PyTorch's."""
    if dtype is None:
        return out.dtype
    if out.dtype is not dtype:
        raise TensorError(SUM_OUT_DTYPE.format(dtype=dtype.name, out=out.dtype.name))
    return dtype


def sum_intlist_out_cpu(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType], out: Tensor
) -> Tensor:
    """``sum.dim_IntList`` written into ``out`` (resized to the result's shape)."""
    chosen = _sum_out_dtype(self, dtype, out)
    result = sum_dim_cpu(self, dim, keepdim, dtype=chosen)
    return write_out(out, array_of(result), result.shape, chosen)


def sum_intlist_out_meta(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType], out: Tensor
) -> Tensor:
    chosen = _sum_out_dtype(self, dtype, out)
    shape, _, _ = _plan_sum(self, dim, keepdim, chosen)
    return write_out(out, None, shape, chosen)


# Sums keep a floating or complex dtype; integers and bools sum in int64.
_SUMS_IN_OWN_DTYPE: Final = frozenset(t for t in ScalarType if t.is_floating_point or t.is_complex)


def _sum_dtype(self: Tensor, dtype: Optional[ScalarType]) -> ScalarType:
    if dtype is not None:
        return dtype
    own = self._dtype
    return own if own in _SUMS_IN_OWN_DTYPE else ScalarType.int64


# numpy.add.reduce, numpy.empty and numpy.true_divide, bound with the first plan (imports
# stay numpy-free; a function-level ``import numpy`` costs about 0.2 us a call).
_add_reduce: Any = None
_empty: Any = None
_true_divide: Any = None
# A full sum's plan by the tensor's dtype, when no dtype is given: (result dtype, its numpy
# dtype). Made on first use per dtype (bfloat16, which numpy cannot store, never is).
_SUM_PLANS: Final[dict[ScalarType, tuple[ScalarType, Any]]] = {}
_from_array: Final = Tensor._from_array
_from_array0: Final = Tensor._from_array0


def _sum_plan(self: Tensor, dtype: Optional[ScalarType]) -> tuple[ScalarType, Any]:
    global _add_reduce, _empty, _true_divide
    if _add_reduce is None:
        import numpy

        _empty, _true_divide = numpy.empty, numpy.true_divide
        _add_reduce = numpy.add.reduce  # last: the test above reads it (threads may race here)
    result_dtype = _sum_dtype(self, dtype)
    plan = (result_dtype, np_dtype(result_dtype))  # raises for bfloat16
    if dtype is None:
        _SUM_PLANS[self._dtype] = plan
    return plan


def sum_cpu(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    """The sum of every element (``sum.dim_IntList`` over all dimensions, without its plan).

    numpy's full reduction returns a numpy scalar, and turning that into a 0-dim array
    costs a third of the call; reducing into a new 0-dim array (``out=``) does not. The
    common call (no ``dtype``) finds its dtypes with one dict lookup (``_SUM_PLANS``)."""
    plan = _SUM_PLANS.get(self._dtype) if dtype is None else None
    result_dtype, np_dt = _sum_plan(self, dtype) if plan is None else plan
    array = self._array  # array_of in line, as binary_fast has it (Note [Cached numpy view])
    if array is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
        array = self._fresh_array()
    return _from_array0(_add_reduce(array, None, np_dt, _empty((), np_dt)), result_dtype, self._device)


def sum_meta(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    return meta_like((), _sum_dtype(self, dtype))


def _mean_dtype(self: Tensor, dtype: Optional[ScalarType]) -> ScalarType:
    """The result's dtype: floating or complex only (integers are refused, as PyTorch does)."""
    chosen = self._dtype if dtype is None else dtype
    if chosen not in _SUMS_IN_OWN_DTYPE:  # floating or complex
        raise TensorError(MEAN_DTYPE.format(dtype=chosen.name))
    return chosen


def _divide_in_place(total: Any, count: int) -> Any:
    """``total / count`` written into ``total`` (a new array of a floating or complex dtype),
    as ``div`` by a wrapped number computes it; numpy's slow ``errstate`` only for an empty
    reduction (0 / 0, a NaN as PyTorch gives). Called after ``_sum_plan`` (which binds
    ``_true_divide``)."""
    if count:
        return _true_divide(total, count, out=total)
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(total, count, out=total)


def mean_dim_cpu(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    """The sum over ``dim`` (as ``sum.dim_IntList`` computes it, in the result's dtype)
    divided by the number of elements reduced."""
    if not keepdim and (dim is None or dim == []):  # every dimension, as mean.default: its kernel
        return mean_cpu(self, dtype=dtype)
    result_dtype = _mean_dtype(self, dtype)
    shape = self._shape
    axes = _axes(shape, reduced_dims(shape, dim))
    _, np_dt = _sum_plan(self, dtype)
    count = numel_of([shape[d] for d in axes])
    if not keepdim and len(axes) == len(shape):  # all of them: into a new 0-dim array, as mean_cpu
        total = _add_reduce(array_of(self), axes, np_dt, _empty((), np_dt))
        return _from_array0(_divide_in_place(total, count), result_dtype, self._device)
    import numpy as np

    total = np.asarray(_add_reduce(array_of(self), axes, np_dt, None, keepdim))  # a numpy scalar for a 0-dim keepdim
    return fresh(_divide_in_place(total, count), result_dtype, self._device)


def mean_dim_meta(
    self: Tensor, dim: Optional[Sequence[int]], keepdim: bool, *, dtype: Optional[ScalarType]
) -> Tensor:
    result_dtype = _mean_dtype(self, dtype)
    dims = reduced_dims(self.shape, dim)
    return meta_like(reduced_shape(self.shape, dims, keepdim), result_dtype)


def mean_cpu(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    """The mean of every element: ``sum_cpu``'s reduction into a new 0-dim array, divided
    in place by the number of elements (one kernel and, under autograd, one node:
    ``MeanBackward0``, where the composite made two and a wrapped number)."""
    result_dtype = _mean_dtype(self, dtype)
    plan = _SUM_PLANS.get(result_dtype) if dtype is None else None
    _, np_dt = _sum_plan(self, dtype) if plan is None else plan
    array = self._array  # array_of in line, as sum_cpu (Note [Cached numpy view])
    if array is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
        array = self._fresh_array()
    total = _add_reduce(array, None, np_dt, _empty((), np_dt))
    return _from_array0(_divide_in_place(total, array.size), result_dtype, self._device)


def mean_meta(self: Tensor, *, dtype: Optional[ScalarType]) -> Tensor:
    return meta_like((), _mean_dtype(self, dtype))


# -- amax / max.dim / argmax -------------------------------------------------------------------
def _check_nonempty(self: Tensor, dims: Sequence[int], name: str) -> None:
    for d in _axes(self.shape, dims):
        if self.shape[d] == 0:
            raise DimensionError(EMPTY_REDUCTION_DIM.format(name=name, dim=d))


def _plan_amax(self: Tensor, dim: Sequence[int], keepdim: bool) -> tuple[Shape, tuple[int, ...]]:
    dims = reduced_dims(self.shape, dim)
    _check_nonempty(self, dims, "amax")
    return reduced_shape(self.shape, dims, keepdim), dims


def amax_cpu(self: Tensor, dim: Sequence[int], keepdim: bool) -> Tensor:
    _shape, dims = _plan_amax(self, dim, keepdim)
    values = data(self).max(axis=_axes(self.shape, dims), keepdims=keepdim)  # a new array
    return fresh(values, self.dtype, self._device)


def amax_meta(self: Tensor, dim: Sequence[int], keepdim: bool) -> Tensor:
    shape, _ = _plan_amax(self, dim, keepdim)
    return meta_like(shape, self.dtype)


def _check_ordered(self: Tensor, name: str) -> None:
    if self._dtype.is_complex:
        raise UnsupportedError(ORDER_COMPLEX.format(name=name, dtype=self._dtype.name))


def _plan_max_dim(self: Tensor, dim: int, keepdim: bool, name: str = "max") -> tuple[Shape, int]:
    _check_ordered(self, name)
    d = wrap_dim(dim, self.ndim)
    _check_nonempty(self, (d,), name)
    return reduced_shape(self.shape, (d,) if self.ndim else (), keepdim), d


def _extreme_dim(self: Tensor, dim: int, keepdim: bool, name: str) -> tuple[Tensor, Tensor]:
    """``max.dim``/``min.dim``: the values and the index of the first of each along ``dim``."""
    import numpy as np

    shape, d = _plan_max_dim(self, dim, keepdim, name)
    array = data(self) if self.ndim else data(self).reshape(1)
    indices = (np.argmax if name == "max" else np.argmin)(array, axis=d, keepdims=keepdim)
    values = np.take_along_axis(array, indices if keepdim else np.expand_dims(indices, d), axis=d)
    values = values.reshape(shape)
    return fresh(values, self.dtype, self._device), fresh(np.asarray(indices).reshape(shape), ScalarType.int64, self._device)


def max_dim_cpu(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    return _extreme_dim(self, dim, keepdim, "max")


def max_dim_meta(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    shape, _ = _plan_max_dim(self, dim, keepdim)
    return meta_like(shape, self.dtype), meta_like(shape, ScalarType.int64)


def min_dim_cpu(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    return _extreme_dim(self, dim, keepdim, "min")


def min_dim_meta(self: Tensor, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    shape, _ = _plan_max_dim(self, dim, keepdim, "min")
    return meta_like(shape, self.dtype), meta_like(shape, ScalarType.int64)


# -- max() / min(): of every element -------------------------------------------------------------
def _check_extreme(self: Tensor, name: str) -> None:
    _check_ordered(self, name)
    if numel_of(self._shape) == 0:
        raise TensorError(EMPTY_FULL_REDUCTION.format(name=name))


def max_cpu(self: Tensor) -> Tensor:
    """The largest element (NaN if any is NaN), as a 0-dim tensor."""
    _check_extreme(self, "max")
    return fresh(data(self).max(), self.dtype, self._device)


def min_cpu(self: Tensor) -> Tensor:
    """The smallest element (NaN if any is NaN), as a 0-dim tensor."""
    _check_extreme(self, "min")
    return fresh(data(self).min(), self.dtype, self._device)


def max_meta(self: Tensor) -> Tensor:
    _check_ordered(self, "max")  # a meta tensor's emptiness is not checked, as in PyTorch
    return meta_like((), self.dtype)


def min_meta(self: Tensor) -> Tensor:
    _check_ordered(self, "min")
    return meta_like((), self.dtype)


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
def _shapes_error(a: Shape, b: Shape) -> TensorError:
    def show(s: Shape) -> str:
        return "x".join(str(n) for n in s) if s else "scalar"

    return TensorError(MATMUL_SHAPES.format(a=show(a), b=show(b)))


def _check_same_dtype(self: Tensor, other: Tensor) -> ScalarType:
    if self.dtype is not other.dtype:
        raise TensorError(OPERAND_DTYPES_DIFFER.format(a=self.dtype.name, b=other.dtype.name))
    return self.dtype


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """numpy/PyTorch matmul: 1-D operands gain and then lose a dimension; batches broadcast."""
    if not a or not b:
        raise TensorError(MATMUL_SCALAR.format(a=len(a), b=len(b)))
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


# Note [2-D products by dot]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's ``ndarray.dot`` reaches BLAS with less work per call than ``matmul`` (8x8
# float32: about 0.35 us against 0.85; 32x64 @ 64x64: 2.9 against 4.1). For two
# C-contiguous 2-D float32 or float64 operands, or transposes of such (the matmul
# gradients' ``grad @ other.T``, which BLAS takes as a transposed operand without a copy),
# both call the same BLAS routine (gemm, or gemv/dot/syrk for the shapes they
# special-case alike), and the results are equal bit for bit
# (tests/test_core_kernels.py checks it over random shapes and layouts). They are not
# for other layouts (matmul runs its own loop where dot copies first) or for complex
# dtypes, so those, and every other dtype and rank, keep ``matmul``.
_DOT_EXACT: Final = frozenset({ScalarType.float32, ScalarType.float64})
_dot: Any = None  # numpy.ndarray.dot, bound on first use (imports stay numpy-free)


def dot_function() -> Any:
    """``numpy.ndarray.dot``, as matmul_cpu and mm_cpu call it (their array rule: Note
    [Array rules] in _arrays.py)."""
    global _dot
    if _dot is None:
        import numpy

        _dot = numpy.ndarray.dot
    return _dot


def _dot_fits(t: Tensor) -> bool:
    """Whether ``t`` is a C-contiguous 2-D tensor or the transpose of one (Note [2-D
    products by dot])."""
    shape, strides = t._shape, t._strides
    return len(shape) == 2 and (
        (strides[1] == 1 and strides[0] == shape[1]) or (strides[0] == 1 and strides[1] == shape[0])
    )


def matmul_cpu(self: Tensor, other: Tensor) -> Tensor:
    # numpy's matmul rules are PyTorch's.
    global _dot
    dtype = self._dtype
    # _dot_fits for both, in line (this is matmul's hot path). Unpacking the strides tests
    # "2-D" too, in fewer steps than len() and indexing: ~25 ns of an 8x8 product.
    try:
        a0, a1 = self._strides
        b0, b1 = other._strides
    except ValueError:  # not both 2-D
        fits = False
    else:
        fits = (
            dtype in _DOT_EXACT and dtype is other._dtype
            and ((a1 == 1 and a0 == self._shape[1]) or (a0 == 1 and a1 == self._shape[0]))
            and ((b1 == 1 and b0 == other._shape[1]) or (b0 == 1 and b1 == other._shape[0]))
        )  # fmt: skip
    if fits:
        if _dot is None:
            import numpy

            _dot = numpy.ndarray.dot
        left = self._array  # array_of for both, in line (Note [Cached numpy view])
        if left is None or (self._storage is not None and self._array_buffer is not self._storage.buffer):
            left = self._fresh_array()
        right = other._array
        if right is None or (other._storage is not None and other._array_buffer is not other._storage.buffer):
            right = other._fresh_array()
        try:
            # dot of two 2-D arrays is a new C-contiguous array of their dtype: no checks
            # left for product_fast to make (Note [2-D products by dot]).
            return _from_array(_dot(left, right), dtype, self._device)
        except ValueError:
            result = None  # shapes that do not fit: the plan below raises PyTorch's error
    else:
        result = product_fast(self, other, operator.matmul)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType] -- untyped in typeshed
    if result is not None:
        return result
    import numpy as np

    dtype = _check_same_dtype(self, other)
    matmul_shape(self.shape, other.shape)
    return fresh(np.matmul(data(self), data(other)), dtype, self._device)


def matmul_meta(self: Tensor, other: Tensor) -> Tensor:
    dtype = _check_same_dtype(self, other)
    return meta_like(matmul_shape(self.shape, other.shape), dtype)


def _plan_mm(self: Tensor, mat2: Tensor) -> tuple[Shape, ScalarType]:
    if self.ndim != 2:
        raise TensorError(NOT_A_MATRIX.format(name="self", ndim=self.ndim))
    if mat2.ndim != 2:
        raise TensorError(NOT_A_MATRIX.format(name="mat2", ndim=mat2.ndim))
    dtype = _check_same_dtype(self, mat2)
    return matmul_shape(self.shape, mat2.shape), dtype


def mm_cpu(self: Tensor, mat2: Tensor) -> Tensor:
    global _dot
    _, dtype = _plan_mm(self, mat2)
    if dtype in _DOT_EXACT and _dot_fits(self) and _dot_fits(mat2):  # Note [2-D products by dot]
        if _dot is None:
            import numpy

            _dot = numpy.ndarray.dot
        return fresh(_dot(data(self), data(mat2)), dtype, self._device)
    return fresh(data(self) @ data(mat2), dtype, self._device)


def mm_meta(self: Tensor, mat2: Tensor) -> Tensor:
    return meta_like(*_plan_mm(self, mat2))
