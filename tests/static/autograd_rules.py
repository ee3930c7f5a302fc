"""Backward rules mypy must accept, and rules it must refuse (expected errors in comments).

Checked by tests/test_static_typing.py: the gradient a rule receives is typed as the op's
result ``R``, so a rule for the wrong result type or with the wrong arity is an error.
"""

from __future__ import annotations

from typing import Any

from typedops import Tensor, op
from typedops.dispatch import AutogradContext


@op("static_rules::scale")
def scale(x: Tensor, factor: float) -> Tensor:
    return x


@op("static_rules::split")
def split(x: Tensor) -> tuple[Tensor, Tensor]:
    return x, x


def scale_backward(ctx: AutogradContext, grad: Tensor) -> tuple[Tensor | None]:
    return (grad,)


def scale_setup(ctx: AutogradContext, inputs: tuple[Any, ...], output: Tensor) -> None:
    ctx.save_for_backward(inputs[0])


def split_backward(ctx: AutogradContext, grads: tuple[Tensor, Tensor]) -> Tensor:
    return grads[0] + grads[1]


def two_grads(ctx: AutogradContext, grad: Tensor, other: Tensor) -> Tensor:
    return grad


def wants_int(ctx: AutogradContext, grad: int) -> Tensor | None:
    return None


def returns_str(ctx: AutogradContext, grad: Tensor) -> str:
    return "no"


# Accepted.
scale.register_autograd(scale_backward, setup_context=scale_setup)
split.register_autograd(split_backward)

# Refused.
scale.register_autograd(split_backward)  # E: Argument 1 to "register_autograd" of "TypedOperatorHandle" has incompatible type "Callable[[AutogradContext, tuple[Tensor, Tensor]], Tensor]"; expected "Callable[[AutogradContext, Tensor], Tensor | tuple[Tensor | None, ...] | None]"  [arg-type]  # P: Argument of type "(ctx: AutogradContext, grads: tuple[Tensor, Tensor]) -> Tensor" cannot be assigned to parameter "backward" of type "(AutogradContext, Tensor) -> Gradients" in function "register_autograd"  [reportArgumentType]
scale.register_autograd(two_grads)  # E: Argument 1 to "register_autograd" of "TypedOperatorHandle" has incompatible type "Callable[[AutogradContext, Tensor, Tensor], Tensor]"; expected "Callable[[AutogradContext, Tensor], Tensor | tuple[Tensor | None, ...] | None]"  [arg-type]  # P: Argument of type "(ctx: AutogradContext, grad: Tensor, other: Tensor) -> Tensor" cannot be assigned to parameter "backward" of type "(AutogradContext, Tensor) -> Gradients" in function "register_autograd"  [reportArgumentType]
scale.register_autograd(wants_int)  # E: Argument 1 to "register_autograd" of "TypedOperatorHandle" has incompatible type "Callable[[AutogradContext, int], Tensor | None]"; expected "Callable[[AutogradContext, Tensor], Tensor | tuple[Tensor | None, ...] | None]"  [arg-type]  # P: Argument of type "(ctx: AutogradContext, grad: int) -> (Tensor | None)" cannot be assigned to parameter "backward" of type "(AutogradContext, Tensor) -> Gradients" in function "register_autograd"  [reportArgumentType]
scale.register_autograd(returns_str)  # E: Argument 1 to "register_autograd" of "TypedOperatorHandle" has incompatible type "Callable[[AutogradContext, Tensor], str]"; expected "Callable[[AutogradContext, Tensor], Tensor | tuple[Tensor | None, ...] | None]"  [arg-type]  # P: Argument of type "(ctx: AutogradContext, grad: Tensor) -> str" cannot be assigned to parameter "backward" of type "(AutogradContext, Tensor) -> Gradients" in function "register_autograd"  [reportArgumentType]
split.register_autograd(scale_backward)  # E: Argument 1 to "register_autograd" of "TypedOperatorHandle" has incompatible type "Callable[[AutogradContext, Tensor], tuple[Tensor | None]]"; expected "Callable[[AutogradContext, tuple[Tensor, Tensor]], Tensor | tuple[Tensor | None, ...] | None]"  [arg-type]  # P: Argument of type "(ctx: AutogradContext, grad: Tensor) -> tuple[Tensor | None]" cannot be assigned to parameter "backward" of type "(AutogradContext, tuple[Tensor, Tensor]) -> Gradients" in function "register_autograd"  [reportArgumentType]
