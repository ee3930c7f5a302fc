"""``pow`` with a tensor exponent (``x ** y``) and with a number base (``2 ** x``).

Note [Integer powers]
~~~~~~~~~~~~~~~~~~~~~
PyTorch raises integers to negative integer powers element by element, as C does: ``1``
stays 1, ``-1`` alternates, anything else gives 0 (``tensor([2]) ** tensor([-1])`` is
``[0]``); only a negative *number* exponent (``pow.Tensor_Scalar``) is refused. numpy
refuses every negative integer exponent, so such elements are computed here from that rule
and the rest by numpy. Bools have no ``pow`` (a NotImplementedError, as torch's).
"""

from __future__ import annotations

from typing import Any

from ...vocabulary import Scalar, ScalarType, UnsupportedError
from ...tensor import Tensor, broadcast_shapes, check_write, wrapped_scalar
from ._common import (
    call_op, category, check_inplace_shape, elementwise_meta, elementwise_result, finish_inplace, result_type,
)  # fmt: skip
from ._messages import POW_BOOL
from ._pointwise import _cast, _plan_pow  # pyright: ignore[reportPrivateUsage] -- one package

__all__ = [
    "pow_tensor_tensor_cpu", "pow_tensor_tensor_meta", "pow_scalar_composite",
    "pow__scalar_cpu", "pow__scalar_meta", "pow__tensor_cpu", "pow__tensor_meta",
]  # fmt: skip

Shape = tuple[int, ...]
_INT: int = category(ScalarType.int64)


def _plan(self: Tensor, exponent: Tensor) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, exponent)
    if dtype is ScalarType.bool:
        raise UnsupportedError(POW_BOOL)
    return broadcast_shapes(self.shape, exponent.shape), dtype


def _integer_power(a: Any, b: Any) -> Any:
    """``a ** b`` of integer arrays with negative exponents among ``b`` (Note [Integer powers])."""
    import numpy as np

    a, b = np.broadcast_arrays(a, b)
    negative = b < 0
    result = np.power(a, np.where(negative, 0, b))
    odd = (b % 2) != 0
    ones = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(result.dtype)
    return np.where(negative, ones, result)


def _tensor_power(self: Tensor, exponent: Tensor, dtype: ScalarType) -> Any:
    import numpy as np

    a, b = _cast(self, dtype), _cast(exponent, dtype)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if category(dtype) == _INT and (b < 0).any():
            return _integer_power(a, b)
        return np.power(a, b)


def pow_tensor_tensor_cpu(self: Tensor, exponent: Tensor) -> Tensor:
    _, dtype = _plan(self, exponent)
    return elementwise_result(_tensor_power(self, exponent, dtype), dtype, self._device, self, exponent)


def pow_tensor_tensor_meta(self: Tensor, exponent: Tensor) -> Tensor:
    return elementwise_meta(*_plan(self, exponent), self, exponent)


def pow_scalar_composite(self: Scalar, exponent: Tensor) -> Tensor:
    """``2 ** x``: the number wrapped (Note [Scalar overloads] in _scalars.py), then
    ``pow.Tensor_Tensor``."""
    result: Tensor = call_op("pow", "Tensor_Tensor")(wrapped_scalar(self, exponent._device), exponent)
    return result


# -- in place: x **= 2, x **= y (pow_.Scalar, pow_.Tensor) ----------------------------------
def pow__scalar_cpu(self: Tensor, exponent: Scalar) -> Tensor:
    import numpy as np

    check_write(self)
    _, dtype = _plan_pow(self, exponent)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return finish_inplace(self, _cast(self, dtype) ** exponent, dtype)


def pow__scalar_meta(self: Tensor, exponent: Scalar) -> Tensor:
    check_write(self)
    return finish_inplace(self, None, _plan_pow(self, exponent)[1])


def _plan_inplace(self: Tensor, exponent: Tensor) -> ScalarType:
    check_write(self, exponent)
    shape, dtype = _plan(self, exponent)
    check_inplace_shape(self, shape)
    return dtype


def pow__tensor_cpu(self: Tensor, exponent: Tensor) -> Tensor:
    dtype = _plan_inplace(self, exponent)
    return finish_inplace(self, _tensor_power(self, exponent, dtype), dtype)


def pow__tensor_meta(self: Tensor, exponent: Tensor) -> Tensor:
    return finish_inplace(self, None, _plan_inplace(self, exponent))
