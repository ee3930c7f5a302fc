"""The ``.Scalar`` overloads: a Python number where the op's ``Tensor`` overload takes a tensor.

Note [Scalar overloads]
~~~~~~~~~~~~~~~~~~~~~~~
PyTorch's Python bindings accept a number for a tensor operand of a fixed set of ops (add,
sub, mul, div, the comparisons, where, ...) and make it a *wrapped number*: a 0-dim tensor
that promotes as a Python number does (``int64 tensor - 2.5`` is float32). typedops states
the same thing in its schemas: each such op has a ``.Scalar`` overload (``sub.Scalar``,
``div_.Scalar``, ``where.ScalarOther``, ...), the generated choosers pick it for a number
(after the tensor overload, so tensor calls take the same path as before), and its kernel
is a ``CompositeImplicitAutograd`` that wraps the number (``wrapped_scalar``) and calls the
``Tensor`` overload through the dispatcher. Autograd, batching, tracing and the meta
kernels therefore see the ``Tensor`` overload's call and need no rule of their own.
"""

from __future__ import annotations

from ...vocabulary import Scalar
from ...tensor import Tensor, wrapped_scalar
from ._common import call_op

__all__ = [
    "add_scalar_composite", "mul_scalar_composite", "sub_scalar_composite", "div_scalar_composite",
    "add__scalar_composite", "sub__scalar_composite", "mul__scalar_composite", "div__scalar_composite",
    "eq_scalar_composite", "ne_scalar_composite", "lt_scalar_composite", "le_scalar_composite",
    "gt_scalar_composite", "ge_scalar_composite",
    "where_scalar_self_composite", "where_scalar_other_composite", "where_scalar_composite",
]  # fmt: skip


def add_scalar_composite(self: Tensor, other: Scalar, alpha: Scalar) -> Tensor:
    result: Tensor = call_op("add", "Tensor")(self, wrapped_scalar(other, self.device), alpha=alpha)
    return result


def mul_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("mul", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def sub_scalar_composite(self: Tensor, other: Scalar, alpha: Scalar) -> Tensor:
    result: Tensor = call_op("sub", "Tensor")(self, wrapped_scalar(other, self.device), alpha=alpha)
    return result


def div_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("div", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def add__scalar_composite(self: Tensor, other: Scalar, alpha: Scalar) -> Tensor:
    result: Tensor = call_op("add_", "Tensor")(self, wrapped_scalar(other, self.device), alpha=alpha)
    return result


def sub__scalar_composite(self: Tensor, other: Scalar, alpha: Scalar) -> Tensor:
    result: Tensor = call_op("sub_", "Tensor")(self, wrapped_scalar(other, self.device), alpha=alpha)
    return result


def mul__scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("mul_", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def div__scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("div_", "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def _compare(name: str, self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op(name, "Tensor")(self, wrapped_scalar(other, self.device))
    return result


def eq_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("eq", self, other)


def ne_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("ne", self, other)


def lt_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("lt", self, other)


def le_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("le", self, other)


def gt_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("gt", self, other)


def ge_scalar_composite(self: Tensor, other: Scalar) -> Tensor:
    return _compare("ge", self, other)


def where_scalar_self_composite(condition: Tensor, self: Scalar, other: Tensor) -> Tensor:
    result: Tensor = call_op("where", "self")(condition, wrapped_scalar(self, other.device), other)
    return result


def where_scalar_other_composite(condition: Tensor, self: Tensor, other: Scalar) -> Tensor:
    result: Tensor = call_op("where", "self")(condition, self, wrapped_scalar(other, self.device))
    return result


def where_scalar_composite(condition: Tensor, self: Scalar, other: Scalar) -> Tensor:
    device = condition.device
    result: Tensor = call_op("where", "self")(condition, wrapped_scalar(self, device), wrapped_scalar(other, device))
    return result
