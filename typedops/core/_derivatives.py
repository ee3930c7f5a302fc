"""Helpers the formulas of derivatives.yaml call (besides the core ops themselves).

Each is built from core ops called through the dispatcher, so with ``create_graph=True``
what they compute is recorded too and can be differentiated again. The code generator's
allow-list of formula functions is ``HELPERS`` plus the core ops' functional names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..autograd import conj, linear_map
from ..tensor import Tensor, wrap_array
from ..vocabulary import Scalar
from . import _generated as F

__all__ = [
    "HELPERS",
    "sum_to_size",
    "scale",
    "scale_negated",
    "pow_backward",
    "clamp_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "minmax_backward",
    "sign",
    "sgn",
    "conj",
    "sum_backward",
    "mean_backward",
    "amax_backward",
    "max_dim_backward",
    "evenly_distribute_backward",
    "matmul_backward_self",
    "matmul_backward_other",
    "inverse_permutation",
    "select_backward",
    "slice_backward",
    "index_backward",
    "index_put_self_backward",
    "squeeze_backward",
    "cat_backward",
    "as_strided_backward",
]


def sum_to_size(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """``grad`` summed over the dimensions broadcasting added or expanded, to ``shape``."""
    if grad._shape == shape:  # the common case: a saved shape is the tensor's own tuple
        return grad
    shape = tuple(shape)
    if grad._shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1]
    if dims and len(dims) == lead:  # only broadcasting's leading dimensions: no reshape after
        return _sum_dims(grad, dims, False)
    if dims:
        grad = _sum_dims(grad, dims, True)
    return grad if grad.shape == shape else F.reshape(grad, list(shape))


def _sum_dims(x: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    """``sum`` over several dimensions (the functional ``sum`` reads ``int[1]`` as exactly one)."""
    result: Tensor = F.sum__dim_IntList.call(x, dims, keepdim)  # the handle ops.core.sum.dim_IntList, without the lookups
    return result


def scale(grad: Tensor, alpha: Scalar) -> Tensor:
    """``grad * conj(alpha)``, skipped for ``alpha == 1``; ``-grad`` for ``alpha == -1``
    (``sub``'s, without a wrapped number)."""
    if alpha == 1:
        return grad
    if alpha == -1:
        return F.neg(grad)
    return grad * (alpha.conjugate() if isinstance(alpha, complex) else alpha)


def scale_negated(grad: Tensor, alpha: Scalar) -> Tensor:
    """``-grad * conj(alpha)``: ``sub``'s gradient for ``other``."""
    if alpha == 1:
        return F.neg(grad)
    if alpha == -1:
        return grad
    return grad * -(alpha.conjugate() if isinstance(alpha, complex) else alpha)


def pow_backward(grad: Tensor, self: Tensor, exponent: Scalar) -> Tensor:
    if exponent == 0:
        return F.zeros_like(grad)
    return grad * conj(exponent * self ** (exponent - 1))


def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    """``pow.Tensor_Tensor``'s gradient for ``self``: 0 where the exponent is 0, as torch's."""
    zero = exponent == 0
    safe = F.where(zero, exponent + 1, exponent)  # self ** 0 there: no 0 * inf (numpy would warn)
    value = grad * conj(safe * F.pow(self, safe - 1))
    return F.where(zero, F.zeros_like(value), value)


def pow_backward_exponent(grad: Tensor, self: Tensor, exponent: Tensor, result: Tensor) -> Tensor:
    """``pow.Tensor_Tensor``'s gradient for ``exponent``: ``grad * conj(result * log(self))``,
    0 where ``self`` is 0 and the exponent not negative (torch's, where log would be -inf)."""
    zero = F.bitwise_and(self == 0, exponent >= 0)
    safe = F.where(zero, self + 1, self)  # log(1) there: no 0 * -inf (numpy would warn)
    # the log in the result's dtype, as torch's: an int or float32 base under a float64
    # exponent would give a float32 log, a float64 gradient right to 1e-8 only
    value = grad * conj(result * F.log(safe.to(result.dtype)))
    return F.where(zero, F.zeros_like(value), value)


def clamp_backward(grad: Tensor, self: Tensor, min: Scalar | None, max: Scalar | None) -> Tensor:  # noqa: A002
    """``clamp``'s gradient: ``grad`` where ``min <= self <= max`` (a NaN element: 0), as torch's."""
    inside = (self >= min) if min is not None else None
    if max is not None:
        below = self <= max
        inside = below if inside is None else F.bitwise_and(inside, below)
    assert inside is not None  # clamp refused a call without bounds
    return F.where(inside, grad, F.zeros_like(grad))


def minmax_backward(grad: Tensor, self: Tensor, other: Tensor, is_max: bool) -> Tensor:
    """The gradient of ``maximum``/``minimum`` for ``self``: where it was chosen; half on ties."""
    chosen = F.gt(self, other) if is_max else F.lt(self, other)
    tie = F.eq(self, other)
    zero = F.zeros_like(grad)
    return F.where(chosen, grad, F.where(tie, grad / 2, zero))


def sign(x: Tensor) -> Tensor:
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


def sgn(x: Tensor) -> Tensor:
    """``sign`` for a real tensor; ``x / abs(x)`` (0 at 0) for a complex one, as PyTorch's ``sgn``."""
    if not x.dtype.is_complex:
        return sign(x)
    magnitude = F.abs(x)
    zero = F.eq(magnitude, 0.0)
    return F.where(zero, F.zeros_like(x), x / F.where(zero, magnitude + 1, magnitude))


def _wrap(dims: Sequence[int] | None, ndim: int) -> list[int]:
    if dims is None or len(dims) == 0:
        return list(range(ndim))
    return sorted(d % ndim if ndim else 0 for d in dims)


def _restore(grad: Tensor, ndim: int, dims: Sequence[int] | None, keepdim: bool) -> Tensor:
    """``grad`` with the reduced dimensions put back as size 1 (unless ``keepdim`` kept them)."""
    if keepdim or ndim == 0:
        return grad
    for d in _wrap(dims, ndim):
        grad = F.unsqueeze(grad, d)
    return grad


def sum_backward(grad: Tensor, shape: Sequence[int], dim: Sequence[int] | None, keepdim: bool) -> Tensor:
    if not grad._shape:  # a sum of everything (or of a 0-dim tensor): expand adds the dimensions
        return grad.expand(list(shape))
    return _restore(grad, len(shape), dim, keepdim).expand(list(shape))


def mean_backward(grad: Tensor, shape: Sequence[int], dim: Sequence[int] | None, keepdim: bool) -> Tensor:
    """``grad`` divided by the number of elements each result averaged, put back to ``shape``
    (divided first: the gradient is no larger than the result). An empty reduction's input
    is empty, and so is its gradient: nothing to divide."""
    ndim = len(shape)
    count = 1
    for d in _wrap(dim, ndim) if ndim else ():
        count *= shape[d]
    return sum_backward(grad / count if count else grad, shape, dim, keepdim)


def amax_backward(grad: Tensor, self: Tensor, result: Tensor, dim: Sequence[int], keepdim: bool) -> Tensor:
    """Shared equally among the elements equal to the maximum, as PyTorch does."""
    g = _restore(grad, self.ndim, dim, keepdim)
    mask = F.eq(self, _restore(result, self.ndim, dim, keepdim)).to(grad.dtype)
    count = _sum_dims(mask, _wrap(dim, self.ndim), True) if self.ndim else mask
    return g * mask / count


def max_dim_backward(grad: Tensor, shape: Sequence[int], dim: int, indices: Tensor, keepdim: bool) -> Tensor:
    """The gradient flows to the element each index picked."""
    ndim = len(shape)
    if ndim == 0:
        return grad
    d = dim % ndim
    g = grad if keepdim else F.unsqueeze(grad, d)
    index = indices if keepdim else F.unsqueeze(indices, d)
    positions = F.reshape(F.arange(shape[d]), [shape[d] if i == d else 1 for i in range(ndim)])
    return F.eq(positions, index).to(grad.dtype) * g


def evenly_distribute_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """The gradient of ``max()``/``min()`` of every element: shared equally among the
    elements equal to the result (the NaN ones, when the result is NaN), as PyTorch does."""
    nan = F.ne(result, result)  # a 0-dim bool: whether the result is NaN
    mask = F.where(nan, F.ne(self, self), F.eq(self, result)).to(grad.dtype)
    return mask * (grad / F.sum(mask))


def matmul_backward_self(grad: Tensor, self: Tensor, other: Tensor) -> Tensor:
    if len(self._shape) == 2 and len(other._shape) == 2:  # mm's case: (k, n) @ (n, m)
        return F.matmul(grad, F.transpose(other, 0, 1))  # of self's shape: nothing to sum
    vector, by_vector = len(self._shape) == 1, len(other._shape) == 1
    if vector and by_vector:
        return grad * other
    if vector:  # (n) @ (..., n, m) -> (..., m)
        g = F.matmul(F.unsqueeze(grad, -2), F.transpose(other, -1, -2))
        return sum_to_size(F.squeeze(g, -2), self._shape)
    if by_vector:  # (..., k, n) @ (n) -> (..., k)
        return sum_to_size(F.unsqueeze(grad, -1) * other, self._shape)
    return sum_to_size(F.matmul(grad, F.transpose(other, -1, -2)), self._shape)


def matmul_backward_other(grad: Tensor, self: Tensor, other: Tensor) -> Tensor:
    if len(self._shape) == 2 and len(other._shape) == 2:  # mm's case: (k, n) @ (n, m)
        return F.matmul(F.transpose(self, 0, 1), grad)  # of other's shape: nothing to sum
    vector, by_vector = len(self._shape) == 1, len(other._shape) == 1
    if vector and by_vector:
        return grad * self
    if by_vector:  # (..., k, n) @ (n) -> (..., k)
        g = F.matmul(F.transpose(self, -1, -2), F.unsqueeze(grad, -1))
        return sum_to_size(F.squeeze(g, -1), other._shape)
    if vector:  # (n) @ (..., n, m) -> (..., m)
        return sum_to_size(F.unsqueeze(self, -1) * F.unsqueeze(grad, -2), other._shape)
    return sum_to_size(F.matmul(F.transpose(self, -1, -2), grad), other._shape)


def inverse_permutation(dims: Sequence[int]) -> list[int]:
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return inverse


def _scatter_along(grad: Tensor, dim: int, size: int, positions: Sequence[int]) -> Tensor:
    """``grad`` (``len(positions)`` long at ``dim``) placed at ``positions`` of a zero tensor
    ``size`` long there: a product with a 0/1 selection matrix, so it stays differentiable."""
    import numpy as np

    from ..tensor import numpy_dtype

    select = np.zeros((len(positions), size), dtype=numpy_dtype(grad.dtype))
    select[np.arange(len(positions)), np.asarray(positions, dtype=np.int64)] = 1
    moved = F.transpose(grad, dim, -1)
    placed = F.matmul(moved, wrap_array(select, grad.dtype, grad.device))
    return F.transpose(placed, dim, -1)


def select_backward(grad: Tensor, shape: Sequence[int], dim: int, index: int) -> Tensor:
    d = dim % len(shape)
    return _scatter_along(F.unsqueeze(grad, d), d, shape[d], [index % shape[d]])


def slice_backward(
    grad: Tensor, shape: Sequence[int], dim: int, start: int | None, end: int | None, step: int
) -> Tensor:
    d = dim % len(shape)
    positions = range(shape[d])[slice(start, end, step)]
    if len(positions) == shape[d]:
        return grad
    return _scatter_along(grad, d, shape[d], list(positions))


def index_backward(grad: Tensor, self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    """``index.Tensor``'s gradient: ``grad`` added at the positions it read (a position read
    twice gets both), zeros elsewhere (Note [Advanced indexing] in kernels/_index.py)."""
    return F.index_put(F.zeros_like(self, dtype=grad.dtype), indices, grad, True)


def index_put_self_backward(grad: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool) -> Tensor:
    """``index_put``'s gradient for ``self``: ``grad`` with the written positions zeroed
    (all of ``grad`` when the values were added to them)."""
    return grad if accumulate else F.index_put(grad, indices, F.zeros_like(values, dtype=grad.dtype), False)


def squeeze_backward(grad: Tensor, shape: Sequence[int], dim: int) -> Tensor:
    if not shape:
        return grad
    d = dim % len(shape)
    return F.unsqueeze(grad, d) if shape[d] == 1 else grad


def cat_backward(grad: Tensor, dim: int, shapes: Sequence[Sequence[int]]) -> list[Tensor | None]:
    grads: list[Tensor | None] = []
    d = dim % grad.ndim
    start = 0
    for shape in shapes:
        if len(shape) == 1 and shape[0] == 0 and grad.ndim != 1:
            grads.append(None)  # the legacy empty tensor cat skips
            continue
        grads.append(F.slice(grad, d, start, start + shape[d]))
        start += shape[d]
    return grads


def _storage_indices(shape: Sequence[int], strides: Sequence[int], offset: int) -> Any:
    """The storage index of every element of a strided geometry, as a numpy array of ``shape``."""
    import numpy as np

    index = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        index = index + (np.arange(n, dtype=np.int64) * s).reshape([n if i == d else 1 for i in range(len(shape))])
    return index


def as_strided_backward(
    grad: Tensor, self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None
) -> Tensor:
    """Scatter-add ``grad`` into the storage positions the result viewed, then read the
    input's positions back, each storage slot shared by several input elements (an
    expanded input) divided among them, as PyTorch does. Both steps are ``linear_map``s,
    which record themselves, so this gradient is differentiable again."""
    import numpy as np

    out_index = _storage_indices(size, stride, self.storage_offset() if storage_offset is None else storage_offset)
    in_index = _storage_indices(self.shape, self.stride(), self.storage_offset())
    span = int(max(out_index.max(initial=0), in_index.max(initial=0))) + 1
    storage = linear_map(grad, out_index.reshape(-1), np.arange(out_index.size), None, (span,))
    counts = np.bincount(in_index.reshape(-1), minlength=span)
    shares = 1.0 / np.maximum(counts[in_index.reshape(-1)], 1)
    return linear_map(storage, np.arange(in_index.size), in_index.reshape(-1), shares, tuple(self.shape))


HELPERS: Final = frozenset(__all__) - {"HELPERS"}


def original(t: Tensor) -> Tensor:
    """A copy of ``t`` made before an in-place op overwrites it, for a formula that reads the
    value it had (Note [What a node saves] in typedops/codegen/_derivatives.py). The copy is
    recorded (a ``CloneBackward0`` of ``t``'s history before the write), as PyTorch's
    ``original_self`` is, so that double backward through the formula sees it."""
    copy: Tensor = F.clone(t)
    return copy
