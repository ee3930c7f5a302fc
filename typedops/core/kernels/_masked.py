"""``masked_fill``: ``value`` where a bool ``mask`` is true, ``self`` elsewhere, as torch's.

Composites of ``where`` (and ``copy_`` for the in-place forms), so gradients, vmap, traces
and fake tensors come from their parts. As torch's: the mask must be bool and broadcast
with ``self`` (the out-of-place result has the broadcast shape; the in-place form keeps
``self``'s), the result keeps ``self``'s dtype (``value`` is converted to it, and refused
if it does not fit), and a tensor ``value`` must have 0 dims.
"""

from __future__ import annotations

from ...vocabulary import Scalar, ScalarType, TensorError
from ...tensor import Tensor
from ._common import call_op, scalar_overflow
from ._messages import MASKED_FILL_MASK, MASKED_FILL_VALUE

__all__ = [
    "masked_fill_scalar_composite", "masked_fill_tensor_composite",
    "masked_fill__scalar_composite", "masked_fill__tensor_composite",
]  # fmt: skip


def _value_of(self: Tensor, mask: Tensor, value: Scalar) -> Tensor:
    if mask.dtype is not ScalarType.bool:
        raise TensorError(MASKED_FILL_MASK.format(dtype=mask.dtype.name))
    error = scalar_overflow(value, self.dtype, "value")
    if error is not None:
        raise error
    filled: Tensor = call_op("scalar_tensor")(value, dtype=self.dtype, layout=None, device=self.device, pin_memory=None)
    return filled


def _tensor_value(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    if mask.dtype is not ScalarType.bool:
        raise TensorError(MASKED_FILL_MASK.format(dtype=mask.dtype.name))
    if value.ndim:
        raise TensorError(MASKED_FILL_VALUE.format(ndim=value.ndim))
    converted: Tensor = value if value.dtype is self.dtype else value.to(self.dtype)
    return converted


def masked_fill_scalar_composite(self: Tensor, mask: Tensor, value: Scalar) -> Tensor:
    result: Tensor = call_op("where", "self")(mask, _value_of(self, mask, value), self)
    return result


def masked_fill_tensor_composite(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    result: Tensor = call_op("where", "self")(mask, _tensor_value(self, mask, value), self)
    return result


def masked_fill__scalar_composite(self: Tensor, mask: Tensor, value: Scalar) -> Tensor:
    filled: Tensor = call_op("where", "self")(mask, _value_of(self, mask, value), self)
    result: Tensor = call_op("copy_")(self, filled, False)
    return result


def masked_fill__tensor_composite(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    filled: Tensor = call_op("where", "self")(mask, _tensor_value(self, mask, value), self)
    result: Tensor = call_op("copy_")(self, filled, False)
    return result
