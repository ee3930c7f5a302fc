"""Floor division and remainder (``a // b``, ``a % b``, ``a //= b``, ``a %= b``):
``floor_divide`` and ``remainder``, their in-place forms and their ``.Scalar`` overloads
(Note [Scalar overloads] in _scalars.py).

As in PyTorch, both round toward negative infinity: ``floor_divide`` is ``floor(a / b)``
(numpy's ``floor_divide``, Python's ``//``) and ``remainder`` takes the divisor's sign
(``-7 % 3 == 2``): ``fmod`` moved by the divisor where their signs differ, PyTorch's
formula, so a zero result keeps the dividend's sign (numpy's ``remainder`` gives it the
divisor's). Integer division by zero
raises (numpy would give 0 with a warning); a floating one gives inf or nan. Bool and
complex operands are refused, as PyTorch refuses them.
"""

from __future__ import annotations

from typing import Any, Final

from ...vocabulary import Scalar, ScalarType, TensorError, UnsupportedError
from ...tensor import Tensor, broadcast_shapes, check_write, numpy_dtype, wrapped_scalar
from ._common import (
    call_op, check_inplace_shape, data, elementwise_meta, elementwise_result, finish_inplace, result_type, write_out,
)  # fmt: skip
from ._messages import INTEGER_DIVISION_BY_ZERO, NOT_FOR_DTYPE

__all__ = [
    "floor_divide_cpu", "floor_divide_meta", "remainder_cpu", "remainder_meta",
    "floor_divide__cpu", "floor_divide__meta", "remainder__cpu", "remainder__meta",
    "floor_divide_scalar_composite", "remainder_scalar_composite", "remainder_scalar_tensor_composite",
    "floor_divide__scalar_composite", "remainder__scalar_composite",
    "floor_divide_out_cpu", "floor_divide_out_meta", "remainder_out_cpu", "remainder_out_meta",
    "remainder_scalar_out_composite",
]  # fmt: skip

Shape = tuple[int, ...]
_INTEGERS: Final = frozenset(
    {ScalarType.uint8, ScalarType.int8, ScalarType.int16, ScalarType.int32, ScalarType.int64}
)


def _plan(self: Tensor, other: Tensor, name: str) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, other)
    if dtype is ScalarType.bool or dtype.is_complex:
        raise UnsupportedError(NOT_FOR_DTYPE.format(name=name, dtype=dtype.name))
    return broadcast_shapes(self.shape, other.shape), dtype


def _operands(self: Tensor, other: Tensor, dtype: ScalarType, name: str) -> tuple[Any, Any]:
    a, b = data(self), data(other)
    np_dt = numpy_dtype(dtype)
    a = a if a.dtype == np_dt else a.astype(np_dt)
    b = b if b.dtype == np_dt else b.astype(np_dt)
    if dtype in _INTEGERS and not b.all():
        raise TensorError(INTEGER_DIVISION_BY_ZERO.format(name=name))
    return a, b


def _floor_divide_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    import numpy as np

    a, b = _operands(self, other, dtype, "floor_divide")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(a, b)


def _remainder_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    import numpy as np

    a, b = _operands(self, other, dtype, "remainder")
    with np.errstate(divide="ignore", invalid="ignore"):
        mod: Any = np.fmod(a, b)  # a zero keeps the dividend's sign (-0.0 % 3 is -0.0), as PyTorch's
        where: Any = np.where  # its stub's overloads leave Any arguments' result unknown to pyright
        return where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _plan_inplace(self: Tensor, other: Tensor, name: str) -> ScalarType:
    shape, dtype = _plan(self, other, name)
    check_inplace_shape(self, shape)
    return dtype


def floor_divide_cpu(self: Tensor, other: Tensor) -> Tensor:
    _, dtype = _plan(self, other, "floor_divide")
    return elementwise_result(_floor_divide_values(self, other, dtype), dtype, self._device, self, other)


def floor_divide_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan(self, other, "floor_divide"), self, other)


def remainder_cpu(self: Tensor, other: Tensor) -> Tensor:
    _, dtype = _plan(self, other, "remainder")
    return elementwise_result(_remainder_values(self, other, dtype), dtype, self._device, self, other)


def remainder_meta(self: Tensor, other: Tensor) -> Tensor:
    return elementwise_meta(*_plan(self, other, "remainder"), self, other)


def floor_divide_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan(self, other, "floor_divide")
    return write_out(out, _floor_divide_values(self, other, dtype), shape, dtype, self, other)


def floor_divide_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan(self, other, "floor_divide")
    return write_out(out, None, shape, dtype, self, other)


def remainder_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan(self, other, "remainder")
    return write_out(out, _remainder_values(self, other, dtype), shape, dtype, self, other)


def remainder_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan(self, other, "remainder")
    return write_out(out, None, shape, dtype, self, other)


def floor_divide__cpu(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    dtype = _plan_inplace(self, other, "floor_divide_")
    return finish_inplace(self, _floor_divide_values(self, other, dtype), dtype)


def floor_divide__meta(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    return finish_inplace(self, None, _plan_inplace(self, other, "floor_divide_"))


def remainder__cpu(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    dtype = _plan_inplace(self, other, "remainder_")
    return finish_inplace(self, _remainder_values(self, other, dtype), dtype)


def remainder__meta(self: Tensor, other: Tensor) -> Tensor:
    check_write(self, other)
    return finish_inplace(self, None, _plan_inplace(self, other, "remainder_"))


def floor_divide_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("floor_divide")(self, wrapped_scalar(other, self.device))
    return result


def remainder_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("remainder", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def remainder_scalar_tensor_composite(self: Scalar, other: Tensor) -> Tensor:
    result: Tensor = call_op("remainder", "Tensor")(wrapped_scalar(self, other.device), other)
    return result


def remainder_scalar_out_composite(self: Tensor, other: Scalar, *, out: Tensor) -> Tensor:
    result: Tensor = call_op("remainder", "Tensor_out")(self, wrapped_scalar(other, self.device), out=out)
    return result


def floor_divide__scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("floor_divide_", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def remainder__scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("remainder_", "Tensor")(self, wrapped_scalar(other, self.device))
    return result
