"""``clamp``: each element limited to ``[min, max]``, as torch's.

The bounds are numbers (``Scalar?``); either may be None, not both. The result's dtype is
promoted as with the bounds as wrapped numbers (``int64 tensor .clamp(min=1.5)`` is
float32); a bound is then converted to that dtype as ``fill_``'s value is (Note [Scalars in
a tensor's dtype] in _common.py: ``uint8 .clamp(min=-1)`` bounds at 255, as torch does).
NaN elements stay NaN; a NaN bound makes every element NaN; ``min > max`` gives ``max``
everywhere; an element equal to a bound is kept (``-0.0`` stays ``-0.0`` under ``min=0.0``),
as torch's (numpy's ``clip`` would give the bound). Complex tensors, and a bool
tensor with bool bounds, are refused; a complex bound of a float tensor is converted to its dtype (its imaginary part
must be 0), and of an integer one refused, as torch's.
"""

from __future__ import annotations

from typing import Optional

from ...vocabulary import Scalar, ScalarType, TensorError, UnsupportedError
from ...tensor import Tensor, wrapped_scalar
from ._common import as_stored, elementwise_meta, elementwise_result, result_type, scalar_overflow
from ._messages import CLAMP_BOOL, CLAMP_COMPLEX, CLAMP_NO_BOUNDS
from ._pointwise import _cast  # pyright: ignore[reportPrivateUsage] -- one package

__all__ = ["clamp_cpu", "clamp_meta"]


def _plan(self: Tensor, min: Optional[Scalar], max: Optional[Scalar]) -> ScalarType:  # noqa: A002 -- torch's names
    if min is None and max is None:
        raise TensorError(CLAMP_NO_BOUNDS)
    if self.dtype.is_complex:
        raise UnsupportedError(CLAMP_COMPLEX)
    bounds = [wrapped_scalar(v, self._device) for v in (min, max) if v is not None]
    dtype = result_type(self, *bounds)
    if dtype is ScalarType.bool:  # bool bounds of a bool tensor (a float bound promotes it, as torch's)
        raise UnsupportedError(CLAMP_BOOL)
    if dtype.is_complex:  # a complex bound: a float tensor keeps its dtype, as torch's (below)
        if not self.dtype.is_floating_point:
            raise UnsupportedError(CLAMP_COMPLEX)
        dtype = self.dtype
    for name, value in (("min", min), ("max", max)):
        if value is not None:
            error = scalar_overflow(value, dtype, name)
            if error is not None:
                raise error
    return dtype


def clamp_cpu(self: Tensor, min: Optional[Scalar], max: Optional[Scalar]) -> Tensor:  # noqa: A002
    import numpy as np

    dtype = _plan(self, min, max)
    low = None if min is None else as_stored(min, dtype)
    high = None if max is None else as_stored(max, dtype)
    values = _cast(self, dtype)
    result = values
    with np.errstate(invalid="ignore"):
        # x where it is inside (a tie keeps x: -0.0 stays -0.0, as torch's; np.clip would
        # give the bound), the bound where x is past it, NaN everywhere for a NaN bound
        for bound, past in ((low, np.less), (high, np.greater)):
            if bound is None:
                continue
            if bound != bound:  # NaN
                result = np.full_like(result, bound)
            else:
                result = np.where(past(result, bound), np.asarray(bound, dtype=values.dtype), result)
    return elementwise_result(np.asarray(result).astype(values.dtype, copy=False), dtype, self._device, self)


def clamp_meta(self: Tensor, min: Optional[Scalar], max: Optional[Scalar]) -> Tensor:  # noqa: A002
    return elementwise_meta(self.shape, _plan(self, min, max), self)
