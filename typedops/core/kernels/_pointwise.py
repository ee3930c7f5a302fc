"""Element-wise kernels: arithmetic with broadcasting and ``alpha``, unary math,
comparisons and ``where``, each with its in-place and ``out=`` forms.

A CPU kernel and its Meta twin share one ``_plan_*`` function that checks the arguments
and computes the result's shape and dtype, so the two cannot disagree.
"""

# Checked by pyright in standard mode, not strict yet: what it narrows from Any, yaml or
# numpy values is partially unknown to it (issue 12; mypy --strict checks it in full).
# pyright: standard

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...vocabulary import Scalar, ScalarType
from ...tensor import broadcast_shapes
from ...tensor import Tensor, numpy_dtype, wrapped_scalar
from ._common import (
    call_op,
    category,
    data,
    finish_inplace,
    meta_like,
    result_type,
    wrap,
    write_out,
)

Shape = tuple[int, ...]

# -- add / mul / div ------------------------------------------------------------------------
_ALPHA_INT: Final = "For integral input tensors, argument alpha must not be a floating point number."


def _plan_add(self: Tensor, other: Tensor, alpha: Scalar) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, other)
    if not (dtype.is_floating_point or dtype.is_complex) and isinstance(alpha, (float, complex)):
        raise RuntimeError(_ALPHA_INT)
    return broadcast_shapes(self.shape, other.shape), dtype


def _add_values(self: Tensor, other: Tensor, alpha: Scalar, dtype: ScalarType) -> Any:
    np_dtype = numpy_dtype(dtype)
    a = data(self).astype(np_dtype)
    b = data(other).astype(np_dtype)
    if alpha == 1:
        return a + b
    if dtype is ScalarType.bool:
        return a | (b & bool(alpha))
    return a + b * alpha


def add_cpu(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    return wrap(_add_values(self, other, alpha, dtype), dtype)


def add_meta(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    return meta_like(*_plan_add(self, other, alpha))


def _check_inplace_shape(self: Tensor, shape: Shape) -> None:
    if shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}"
        )


def add__cpu(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, _add_values(self, other, alpha, dtype), dtype)


def add__meta(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def add_out_cpu(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    return write_out(out, _add_values(self, other, alpha, dtype), shape, dtype)


def add_out_meta(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    shape, dtype = _plan_add(self, other, alpha)
    return write_out(out, None, shape, dtype)


def add_scalar_composite(self: Tensor, other: Scalar, alpha: Scalar) -> Tensor:
    result: Tensor = call_op("add", "Tensor")(self, wrapped_scalar(other, self.device), alpha=alpha)
    return result


def _negated(alpha: Scalar) -> Scalar:
    if isinstance(alpha, bool):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return -alpha


def _check_sub(self: Tensor, other: Tensor) -> None:
    if self.dtype is ScalarType.bool or other.dtype is ScalarType.bool:
        _negated(True)


def sub_composite(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    _check_sub(self, other)
    result: Tensor = call_op("add", "Tensor")(self, other, alpha=_negated(alpha))
    return result


def sub__composite(self: Tensor, other: Tensor, *, alpha: Scalar) -> Tensor:
    _check_sub(self, other)
    result: Tensor = call_op("add_", "Tensor")(self, other, alpha=_negated(alpha))
    return result


def sub_out_composite(self: Tensor, other: Tensor, *, alpha: Scalar, out: Tensor) -> Tensor:
    _check_sub(self, other)
    result: Tensor = call_op("add", "out")(self, other, alpha=_negated(alpha), out=out)
    return result


def _plan_mul(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    return broadcast_shapes(self.shape, other.shape), result_type(self, other)


def _mul_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    np_dtype = numpy_dtype(dtype)
    return data(self).astype(np_dtype) * data(other).astype(np_dtype)


def mul_cpu(self: Tensor, other: Tensor) -> Tensor:
    _, dtype = _plan_mul(self, other)
    return wrap(_mul_values(self, other, dtype), dtype)


def mul_meta(self: Tensor, other: Tensor) -> Tensor:
    return meta_like(*_plan_mul(self, other))


def mul__cpu(self: Tensor, other: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, _mul_values(self, other, dtype), dtype)


def mul__meta(self: Tensor, other: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def mul_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    return write_out(out, _mul_values(self, other, dtype), shape, dtype)


def mul_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_mul(self, other)
    return write_out(out, None, shape, dtype)


def mul_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("mul", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def _plan_div(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    """True division: integral and bool operands give the default float dtype."""
    dtype = result_type(self, other)
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = ScalarType.float32
    return broadcast_shapes(self.shape, other.shape), dtype


def _div_values(self: Tensor, other: Tensor, dtype: ScalarType) -> Any:
    import numpy as np

    np_dtype = numpy_dtype(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return data(self).astype(np_dtype) / data(other).astype(np_dtype)


def div_cpu(self: Tensor, other: Tensor) -> Tensor:
    _, dtype = _plan_div(self, other)
    return wrap(_div_values(self, other, dtype), dtype)


def div_meta(self: Tensor, other: Tensor) -> Tensor:
    return meta_like(*_plan_div(self, other))


def div__cpu(self: Tensor, other: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, _div_values(self, other, dtype), dtype)


def div__meta(self: Tensor, other: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    _check_inplace_shape(self, shape)
    return finish_inplace(self, None, dtype)


def div_out_cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    return write_out(out, _div_values(self, other, dtype), shape, dtype)


def div_out_meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
    shape, dtype = _plan_div(self, other)
    return write_out(out, None, shape, dtype)


# -- pow, maximum, minimum -----------------------------------------------------------------
def _plan_pow(self: Tensor, exponent: Scalar) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, wrapped_scalar(exponent, self.device))
    if category(dtype) <= 1 and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return self.shape, dtype


def pow_cpu(self: Tensor, exponent: Scalar) -> Tensor:
    import numpy as np

    _, dtype = _plan_pow(self, exponent)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return wrap(data(self).astype(numpy_dtype(dtype)) ** exponent, dtype)


def pow_meta(self: Tensor, exponent: Scalar) -> Tensor:
    return meta_like(*_plan_pow(self, exponent))


def _plan_extremum(self: Tensor, other: Tensor, name: str) -> tuple[Shape, ScalarType]:
    dtype = result_type(self, other)
    if dtype.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return broadcast_shapes(self.shape, other.shape), dtype


def maximum_cpu(self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_extremum(self, other, "maximum")
    return wrap(np.maximum(data(self), data(other)), dtype)


def maximum_meta(self: Tensor, other: Tensor) -> Tensor:
    return meta_like(*_plan_extremum(self, other, "maximum"))


def minimum_cpu(self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_extremum(self, other, "minimum")
    return wrap(np.minimum(data(self), data(other)), dtype)


def minimum_meta(self: Tensor, other: Tensor) -> Tensor:
    return meta_like(*_plan_extremum(self, other, "minimum"))


# -- unary ------------------------------------------------------------------------------------
def _check_neg(self: Tensor) -> ScalarType:
    if self.dtype is ScalarType.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return self.dtype


def neg_cpu(self: Tensor) -> Tensor:
    dtype = _check_neg(self)
    return wrap(-data(self), dtype)


def neg_meta(self: Tensor) -> Tensor:
    return meta_like(self.shape, _check_neg(self))


def abs_cpu(self: Tensor) -> Tensor:
    import numpy as np

    dtype = {ScalarType.complex64: ScalarType.float32, ScalarType.complex128: ScalarType.float64}.get(self.dtype, self.dtype)
    return wrap(np.abs(data(self)), dtype)


def abs_meta(self: Tensor) -> Tensor:
    dtype = {ScalarType.complex64: ScalarType.float32, ScalarType.complex128: ScalarType.float64}.get(self.dtype, self.dtype)
    return meta_like(self.shape, dtype)


def _check_relu(self: Tensor) -> ScalarType:
    if self.dtype is ScalarType.bool or self.dtype.is_complex:
        raise RuntimeError(f"relu is not implemented for {self.dtype.name} tensors")
    return self.dtype


def relu_cpu(self: Tensor) -> Tensor:
    import numpy as np

    dtype = _check_relu(self)
    return wrap(np.maximum(data(self), 0), dtype)


def relu_meta(self: Tensor) -> Tensor:
    return meta_like(self.shape, _check_relu(self))


def fill__cpu(self: Tensor, value: Scalar) -> Tensor:
    return finish_inplace(self, value, self.dtype)


def fill__meta(self: Tensor, value: Scalar) -> Tensor:
    return finish_inplace(self, None, self.dtype)


def zero__composite(self: Tensor) -> Tensor:
    result: Tensor = call_op("fill_", "Scalar")(self, 0)
    return result


# -- comparisons and where ---------------------------------------------------------------
def _plan_compare(self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    return broadcast_shapes(self.shape, other.shape), result_type(self, other)


def _make_compare(name: str) -> tuple[Callable[[Tensor, Tensor], Tensor], Callable[[Tensor, Tensor], Tensor]]:
    def cpu(self: Tensor, other: Tensor) -> Tensor:
        import numpy as np

        _, dtype = _plan_compare(self, other)
        np_dtype = numpy_dtype(dtype)
        ufunc = getattr(np, {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                             "gt": "greater", "ge": "greater_equal"}[name])  # fmt: skip
        return wrap(ufunc(data(self).astype(np_dtype), data(other).astype(np_dtype)), ScalarType.bool)

    def meta(self: Tensor, other: Tensor) -> Tensor:
        shape, _ = _plan_compare(self, other)
        return meta_like(shape, ScalarType.bool)

    cpu.__name__ = cpu.__qualname__ = f"{name}_cpu"
    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    return cpu, meta


eq_cpu, eq_meta = _make_compare("eq")
ne_cpu, ne_meta = _make_compare("ne")
lt_cpu, lt_meta = _make_compare("lt")
le_cpu, le_meta = _make_compare("le")
gt_cpu, gt_meta = _make_compare("gt")
ge_cpu, ge_meta = _make_compare("ge")


def eq_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("eq", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def gt_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("gt", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def _plan_where(condition: Tensor, self: Tensor, other: Tensor) -> tuple[Shape, ScalarType]:
    if condition.dtype is not ScalarType.bool:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.name}"
        )
    shape = broadcast_shapes(condition.shape, broadcast_shapes(self.shape, other.shape))
    return shape, result_type(self, other)


def where_cpu(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    import numpy as np

    _, dtype = _plan_where(condition, self, other)
    np_dtype = numpy_dtype(dtype)
    return wrap(np.where(data(condition), data(self).astype(np_dtype), data(other).astype(np_dtype)), dtype)


def where_meta(condition: Tensor, self: Tensor, other: Tensor) -> Tensor:
    return meta_like(*_plan_where(condition, self, other))
