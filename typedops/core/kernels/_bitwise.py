"""Bitwise ops on bool and integer tensors: ``&``, ``|``, ``^`` and ``~``, and the in-place
``&=``, ``|=``, ``^=``, as torch's.

The result's dtype is the operands' promoted one (``bool & int64`` is int64); a floating or
complex operand is refused, as PyTorch refuses it (a NotImplementedError). ``~`` of a bool tensor is
its logical not, of an integer one its bitwise complement. The in-place forms write into
``self`` when the promoted dtype casts into it (``bool_mask &= int_tensor`` is refused, as
torch refuses it) and the broadcast shape is ``self``'s. A number operand (``.Scalar``,
``.Scalar_Tensor``) is a wrapped number (Note [Scalar overloads] in _scalars.py). Nothing
here is differentiable (derivatives.yaml marks the outputs so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...vocabulary import Scalar, ScalarType, UnsupportedError
from ...tensor import Tensor, broadcast_shapes, check_write, wrapped_scalar
from ._common import (
    call_op, check_inplace_shape, data, elementwise_meta, elementwise_result, finish_inplace, result_type,
)  # fmt: skip
from ._messages import BITWISE_DTYPE
from ._pointwise import _cast  # pyright: ignore[reportPrivateUsage] -- one package

__all__ = [
    "bitwise_and_cpu", "bitwise_and_meta", "bitwise_or_cpu", "bitwise_or_meta", "bitwise_xor_cpu", "bitwise_xor_meta",
    "bitwise_not_cpu", "bitwise_not_meta",
    "bitwise_and__cpu", "bitwise_and__meta", "bitwise_or__cpu", "bitwise_or__meta",
    "bitwise_xor__cpu", "bitwise_xor__meta",
    "bitwise_and_scalar_composite", "bitwise_or_scalar_composite", "bitwise_xor_scalar_composite",
    "bitwise_and_scalar_tensor_composite", "bitwise_or_scalar_tensor_composite", "bitwise_xor_scalar_tensor_composite",
]  # fmt: skip

Shape = tuple[int, ...]
_INTEGRAL: Final = frozenset(
    {ScalarType.bool, ScalarType.uint8, ScalarType.int8, ScalarType.int16, ScalarType.int32, ScalarType.int64}
)


def _checked(dtype: ScalarType, name: str) -> ScalarType:
    if dtype not in _INTEGRAL:
        raise UnsupportedError(BITWISE_DTYPE.format(name=name, dtype=dtype.name))
    return dtype


def _plan(self: Tensor, other: Tensor, name: str) -> tuple[Shape, ScalarType]:
    return broadcast_shapes(self.shape, other.shape), _checked(result_type(self, other), name)


def _binary(name: str, function: str) -> tuple[Callable[[Tensor, Tensor], Tensor], Callable[[Tensor, Tensor], Tensor]]:
    def cpu(self: Tensor, other: Tensor) -> Tensor:
        import numpy as np

        _, dtype = _plan(self, other, name)
        result = getattr(np, function)(_cast(self, dtype), _cast(other, dtype))
        return elementwise_result(result, dtype, self._device, self, other)

    def meta(self: Tensor, other: Tensor) -> Tensor:
        return elementwise_meta(*_plan(self, other, name), self, other)

    cpu.__name__ = cpu.__qualname__ = f"{name}_cpu"
    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    return cpu, meta


bitwise_and_cpu, bitwise_and_meta = _binary("bitwise_and", "bitwise_and")
bitwise_or_cpu, bitwise_or_meta = _binary("bitwise_or", "bitwise_or")
bitwise_xor_cpu, bitwise_xor_meta = _binary("bitwise_xor", "bitwise_xor")

Kernel = Callable[[Tensor, Tensor], Tensor]


def _in_place(name: str, function: str) -> tuple[Kernel, Kernel]:
    def plan(self: Tensor, other: Tensor) -> ScalarType:
        check_write(self, other)
        shape, dtype = _plan(self, other, name)
        check_inplace_shape(self, shape)
        return dtype

    def cpu(self: Tensor, other: Tensor) -> Tensor:
        import numpy as np

        dtype = plan(self, other)
        return finish_inplace(self, getattr(np, function)(_cast(self, dtype), _cast(other, dtype)), dtype)

    def meta(self: Tensor, other: Tensor) -> Tensor:
        return finish_inplace(self, None, plan(self, other))

    cpu.__name__ = cpu.__qualname__ = f"{name}__cpu"
    meta.__name__ = meta.__qualname__ = f"{name}__meta"
    return cpu, meta


bitwise_and__cpu, bitwise_and__meta = _in_place("bitwise_and_", "bitwise_and")
bitwise_or__cpu, bitwise_or__meta = _in_place("bitwise_or_", "bitwise_or")
bitwise_xor__cpu, bitwise_xor__meta = _in_place("bitwise_xor_", "bitwise_xor")


def _with_numbers(name: str) -> tuple[Callable[[Tensor, Scalar], Tensor], Callable[[Scalar, Tensor], Tensor]]:
    """The ``.Scalar`` and ``.Scalar_Tensor`` composites of ``name``: the number wrapped."""

    def scalar(self: Tensor, other: Scalar) -> Tensor:
        result: Tensor = call_op(name, "Tensor")(self, wrapped_scalar(other, self._device))
        return result

    def scalar_tensor(self: Scalar, other: Tensor) -> Tensor:
        result: Tensor = call_op(name, "Tensor")(wrapped_scalar(self, other._device), other)
        return result

    scalar.__name__ = scalar.__qualname__ = f"{name}_scalar_composite"
    scalar_tensor.__name__ = scalar_tensor.__qualname__ = f"{name}_scalar_tensor_composite"
    return scalar, scalar_tensor


bitwise_and_scalar_composite, bitwise_and_scalar_tensor_composite = _with_numbers("bitwise_and")
bitwise_or_scalar_composite, bitwise_or_scalar_tensor_composite = _with_numbers("bitwise_or")
bitwise_xor_scalar_composite, bitwise_xor_scalar_tensor_composite = _with_numbers("bitwise_xor")


def bitwise_not_cpu(self: Tensor) -> Tensor:
    import numpy as np

    dtype = _checked(self.dtype, "bitwise_not")
    result = np.logical_not(data(self)) if dtype is ScalarType.bool else np.invert(data(self))
    return elementwise_result(result, dtype, self._device, self)


def bitwise_not_meta(self: Tensor) -> Tensor:
    return elementwise_meta(self.shape, _checked(self.dtype, "bitwise_not"), self)
