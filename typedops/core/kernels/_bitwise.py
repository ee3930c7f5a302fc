"""Bitwise ops on bool and integer tensors: ``&``, ``|``, ``^`` and ``~``, as torch's.

The result's dtype is the operands' promoted one (``bool & int64`` is int64); a floating or
complex operand is refused, as PyTorch refuses it (a NotImplementedError). ``~`` of a bool tensor is
its logical not, of an integer one its bitwise complement. Nothing here is differentiable
(derivatives.yaml marks the outputs so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...vocabulary import ScalarType, UnsupportedError
from ...tensor import Tensor, broadcast_shapes
from ._common import data, elementwise_meta, elementwise_result, result_type
from ._messages import BITWISE_DTYPE
from ._pointwise import _cast  # pyright: ignore[reportPrivateUsage] -- one package

__all__ = [
    "bitwise_and_cpu", "bitwise_and_meta", "bitwise_or_cpu", "bitwise_or_meta", "bitwise_xor_cpu", "bitwise_xor_meta",
    "bitwise_not_cpu", "bitwise_not_meta",
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


def bitwise_not_cpu(self: Tensor) -> Tensor:
    import numpy as np

    dtype = _checked(self.dtype, "bitwise_not")
    result = np.logical_not(data(self)) if dtype is ScalarType.bool else np.invert(data(self))
    return elementwise_result(result, dtype, self._device, self)


def bitwise_not_meta(self: Tensor) -> Tensor:
    return elementwise_meta(self.shape, _checked(self.dtype, "bitwise_not"), self)
