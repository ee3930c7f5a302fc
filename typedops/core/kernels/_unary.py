"""Unary math kernels: each op in PyTorch's three forms, made from one numpy expression.

``log(x)``, ``log_(x)`` (in place) and ``log.out(x, out=y)``. Integers and bools compute
in the default float dtype, so ``log`` of an int tensor is float32, and ``log_`` of one is
refused as PyTorch refuses it (the float result cannot be cast back to the integers).
The Meta kernels are shared by the whole family, one per form: the result's shape and
dtype do not depend on the function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...vocabulary import ScalarType
from ...tensor import Tensor, check_write, numpy_dtype
from ._common import data, elementwise_meta, elementwise_result, finish_inplace, write_out

__all__ = [
    "unary_float_meta", "unary_float__meta", "unary_float_out_meta",
    "exp_cpu", "exp__cpu", "exp_out_cpu", "exp2_cpu", "exp2__cpu", "exp2_out_cpu",
    "expm1_cpu", "expm1__cpu", "expm1_out_cpu", "log_cpu", "log__cpu", "log_out_cpu",
    "log2_cpu", "log2__cpu", "log2_out_cpu", "log10_cpu", "log10__cpu", "log10_out_cpu",
    "log1p_cpu", "log1p__cpu", "log1p_out_cpu", "sqrt_cpu", "sqrt__cpu", "sqrt_out_cpu",
    "rsqrt_cpu", "rsqrt__cpu", "rsqrt_out_cpu", "reciprocal_cpu", "reciprocal__cpu", "reciprocal_out_cpu",
    "sigmoid_cpu", "sigmoid__cpu", "sigmoid_out_cpu", "sin_cpu", "sin__cpu", "sin_out_cpu",
    "cos_cpu", "cos__cpu", "cos_out_cpu", "tan_cpu", "tan__cpu", "tan_out_cpu",
    "asin_cpu", "asin__cpu", "asin_out_cpu", "acos_cpu", "acos__cpu", "acos_out_cpu",
    "atan_cpu", "atan__cpu", "atan_out_cpu", "sinh_cpu", "sinh__cpu", "sinh_out_cpu",
    "cosh_cpu", "cosh__cpu", "cosh_out_cpu", "tanh_cpu", "tanh__cpu", "tanh_out_cpu",
]  # fmt: skip


Unary = Callable[[Tensor], Tensor]
UnaryOut = Callable[..., Tensor]  # (self, *, out) -> out


def _float_dtype(self: Tensor) -> ScalarType:
    """Math on integers and bools gives the default float dtype."""
    return self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else ScalarType.float32


def _compute(expression: Callable[[Any, Any], Any], self: Tensor, dtype: ScalarType) -> Any:
    """``expression(numpy, values)`` over ``self``'s values in the result ``dtype``."""
    import numpy as np

    # Out-of-domain inputs give nan or inf, as in PyTorch, without numpy's warnings.
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        values = data(self) if self.dtype is dtype else data(self).astype(numpy_dtype(dtype))
        return expression(np, values)


def _forms(name: str, expression: Callable[[Any, Any], Any]) -> tuple[Unary, Unary, UnaryOut]:
    """The CPU kernels of ``name``, ``name_`` and ``name.out`` computing ``expression``."""

    def functional(self: Tensor) -> Tensor:
        dtype = _float_dtype(self)
        return elementwise_result(_compute(expression, self, dtype), dtype, self._device, self)

    def in_place(self: Tensor) -> Tensor:
        check_write(self)
        dtype = _float_dtype(self)
        # The cast check comes first: a refused call computes nothing.
        return finish_inplace(self, _compute(expression, self, dtype) if dtype is self.dtype else None, dtype)

    def out_form(self: Tensor, *, out: Tensor) -> Tensor:
        dtype = _float_dtype(self)
        return write_out(out, _compute(expression, self, dtype), self.shape, dtype, self)

    for kernel, suffix in ((functional, "_cpu"), (in_place, "__cpu"), (out_form, "_out_cpu")):
        kernel.__name__ = kernel.__qualname__ = f"{name}{suffix}"
    return functional, in_place, out_form


def unary_float_meta(self: Tensor) -> Tensor:
    """The Meta kernel of every math op that maps integers to the default float dtype."""
    return elementwise_meta(self.shape, _float_dtype(self), self)


def unary_float__meta(self: Tensor) -> Tensor:
    """The Meta kernel of their in-place forms: refuses what the CPU kernel refuses."""
    check_write(self)
    return finish_inplace(self, None, _float_dtype(self))


def unary_float_out_meta(self: Tensor, *, out: Tensor) -> Tensor:
    """The Meta kernel of their ``out=`` forms."""
    return write_out(out, None, self.shape, _float_dtype(self), self)


# name: numpy expression (the yaml declares each op's three forms with these kernels)
exp_cpu, exp__cpu, exp_out_cpu = _forms("exp", lambda np, a: np.exp(a))
exp2_cpu, exp2__cpu, exp2_out_cpu = _forms("exp2", lambda np, a: np.exp2(a))
expm1_cpu, expm1__cpu, expm1_out_cpu = _forms("expm1", lambda np, a: np.expm1(a))
log_cpu, log__cpu, log_out_cpu = _forms("log", lambda np, a: np.log(a))
log2_cpu, log2__cpu, log2_out_cpu = _forms("log2", lambda np, a: np.log2(a))
log10_cpu, log10__cpu, log10_out_cpu = _forms("log10", lambda np, a: np.log10(a))
log1p_cpu, log1p__cpu, log1p_out_cpu = _forms("log1p", lambda np, a: np.log1p(a))
sqrt_cpu, sqrt__cpu, sqrt_out_cpu = _forms("sqrt", lambda np, a: np.sqrt(a))
rsqrt_cpu, rsqrt__cpu, rsqrt_out_cpu = _forms("rsqrt", lambda np, a: 1 / np.sqrt(a))
reciprocal_cpu, reciprocal__cpu, reciprocal_out_cpu = _forms("reciprocal", lambda np, a: 1 / a)
sigmoid_cpu, sigmoid__cpu, sigmoid_out_cpu = _forms("sigmoid", lambda np, a: 1 / (1 + np.exp(-a)))
sin_cpu, sin__cpu, sin_out_cpu = _forms("sin", lambda np, a: np.sin(a))
cos_cpu, cos__cpu, cos_out_cpu = _forms("cos", lambda np, a: np.cos(a))
tan_cpu, tan__cpu, tan_out_cpu = _forms("tan", lambda np, a: np.tan(a))
asin_cpu, asin__cpu, asin_out_cpu = _forms("asin", lambda np, a: np.arcsin(a))
acos_cpu, acos__cpu, acos_out_cpu = _forms("acos", lambda np, a: np.arccos(a))
atan_cpu, atan__cpu, atan_out_cpu = _forms("atan", lambda np, a: np.arctan(a))
sinh_cpu, sinh__cpu, sinh_out_cpu = _forms("sinh", lambda np, a: np.sinh(a))
cosh_cpu, cosh__cpu, cosh_out_cpu = _forms("cosh", lambda np, a: np.cosh(a))
tanh_cpu, tanh__cpu, tanh_out_cpu = _forms("tanh", lambda np, a: np.tanh(a))
