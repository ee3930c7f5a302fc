"""register_autograd: custom backward rules, checked at registration and at backward."""

from __future__ import annotations

import gc
import re
import weakref
from typing import Any

import pytest

from typedops import Library, RegistrationError, ScalarType, Tensor, core, dispatcher, op, tensor
from typedops.autograd import AutogradError, grad, gradcheck, gradgradcheck, no_grad
from typedops.dispatch import AutogradContext

F64 = ScalarType.float64


def t(data: Any) -> Tensor:
    return tensor(data, dtype=F64, requires_grad=True)


@op("agcustom::scaled_mul")
def scaled_mul(x: Tensor, y: Tensor, factor: float) -> Tensor:
    return core.mul(core.mul(x, y), factor)


def _setup(ctx: AutogradContext, inputs: tuple[Any, ...], output: Tensor) -> None:
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.factor = inputs[2]  # type: ignore[attr-defined]  # a rule keeps plain values on ctx


def _backward(ctx: AutogradContext, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    x, y = ctx.saved_tensors
    factor = ctx.factor  # type: ignore[attr-defined]
    gx = grad * y * factor if ctx.needs_input_grad[0] else None
    gy = grad * x * factor if ctx.needs_input_grad[1] else None
    return gx, gy


scaled_mul.register_autograd(_backward, setup_context=_setup)


def test_a_registered_rule_gives_gradients() -> None:
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    out = scaled_mul(x, y, 2.0)
    assert out.grad_fn.name() == "scaled_mulBackward"
    out.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [6.0, 8.0]
    assert y.grad is not None and y.grad.tolist() == [2.0, 4.0]


def test_needs_input_grad_and_gradcheck() -> None:
    x, y = t([1.0, -2.0]), tensor([3.0, 4.0], dtype=F64)
    out = scaled_mul(x, y, 0.5)
    out.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [1.5, 2.0]
    assert gradcheck(lambda a, b: scaled_mul(a, b, 1.5), (t([0.3, 0.7]), t([1.1, -0.4])))
    assert gradgradcheck(lambda a, b: scaled_mul(a, b, 1.5), (t([0.3, 0.7]), t([1.1, -0.4])))


def test_saved_tensors_are_version_checked() -> None:
    x = t([1.0])
    y = core.mul(t([2.0]), 1.0)
    out = scaled_mul(x, y, 1.0)
    y.add_(tensor([1.0], dtype=F64))
    with pytest.raises(AutogradError, match="is at version 1; expected version 0 instead"):
        out.sum().backward()


def test_a_rule_for_a_handle_defined_from_schema_text() -> None:
    with Library("agcustom_lib", "DEF") as lib:
        lib.define("double(Tensor x) -> Tensor")
        lib.impl("double", lambda x: core.mul(x, 2.0), "CompositeExplicitAutograd", check=False)
        handle = dispatcher.find_schema_or_throw("agcustom_lib::double")
        handle.register_autograd(lambda ctx, grad: grad * 2)
        x = t([1.0, 5.0])
        handle(x).sum().backward()
        assert x.grad is not None and x.grad.tolist() == [2.0, 2.0]


def test_wrong_number_of_gradients_at_backward() -> None:
    @op("agcustom::pair")
    def pair(x: Tensor, y: Tensor) -> Tensor:
        return core.add(x, y)

    pair.register_autograd(lambda ctx, grad: grad)
    with pytest.raises(AutogradError, match=r"returned 1 gradients; it must return 2 \(one per differentiable input: x, y\)"):
        pair(t([1.0]), t([1.0])).sum().backward()
    pair.library.remove()


def test_mark_non_differentiable() -> None:
    @op("agcustom::rounded")
    def rounded(x: Tensor) -> tuple[Tensor, Tensor]:
        return core.mul(x, 1.0), core.mul(x, 1.0)

    def setup(ctx: AutogradContext, inputs: tuple[Any, ...], output: tuple[Tensor, Tensor]) -> None:
        ctx.mark_non_differentiable(output[1])

    def backward(ctx: AutogradContext, grads: tuple[Tensor, Tensor]) -> Tensor:
        return grads[0]

    rounded.register_autograd(backward, setup_context=setup)
    a, b = rounded(t([1.0]))
    assert a.requires_grad and not b.requires_grad
    rounded.library.remove()


@pytest.mark.parametrize(
    ("rule", "setup", "message"),
    [
        (lambda ctx: None, None, "it takes 1 positional parameters, not 2 (ctx, grad)"),
        (lambda ctx, g, h: None, None, "it takes 3 positional parameters, not 2 (ctx, grad)"),
        ("not a function", None, "it is a str, not a function"),
        (lambda ctx, g: g, lambda ctx, inputs: None, "it must take exactly 3 positional parameters"),
    ],
)
def test_registration_checks_the_rule_against_the_schema(rule: Any, setup: Any, message: str) -> None:
    @op("agcustom::checked")
    def checked(x: Tensor, y: Tensor) -> Tensor:
        return core.add(x, y)

    try:
        with pytest.raises(RegistrationError, match=re.escape(message)):
            checked.register_autograd(rule, setup_context=setup)
    finally:
        checked.library.remove()


def test_a_tuple_return_annotation_must_fit_the_inputs() -> None:
    @op("agcustom::annotated")
    def annotated(x: Tensor, y: Tensor) -> Tensor:
        return core.add(x, y)

    def three(ctx: AutogradContext, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return grad, grad, grad

    with pytest.raises(RegistrationError, match="its return annotation has 3 gradients for 2 differentiable inputs"):
        annotated.register_autograd(three)
    annotated.library.remove()


def test_an_op_without_tensor_inputs_has_nothing_to_differentiate() -> None:
    @op("agcustom::no_tensors")
    def no_tensors(n: int) -> Tensor:
        return tensor([float(n)])

    with pytest.raises(RegistrationError, match="has no Tensor input to differentiate"):
        no_tensors.register_autograd(lambda ctx, g: g)
    no_tensors.library.remove()


# -- a rule that saves the op's output (Note [Saved outputs without a cycle] in autograd/_graph.py)


@op("agcustom::exp_saving_output")
def exp_saving_output(x: Tensor) -> Tensor:
    return core.exp(x)


def _save_output(ctx: AutogradContext, inputs: tuple[Any, ...], output: Tensor) -> None:
    ctx.save_for_backward(output)


def _exp_backward(ctx: AutogradContext, grad: Tensor) -> Tensor:
    (result,) = ctx.saved_tensors
    return grad * result


exp_saving_output.register_autograd(_exp_backward, setup_context=_save_output)


def test_a_saved_output_makes_no_cycle_through_the_node() -> None:
    """A graph dropped without a backward is freed by reference counting alone: the node
    keeps the output's alias, not the output (which holds the node)."""
    gc.collect()
    gc.disable()
    try:
        x = t([0.5, 1.0])
        y = exp_saving_output(x)
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
        z = scaled_mul(t([1.0]), t([2.0]), 1.0)  # ctx holds no node either (only while the rule runs)
        inputs_only = weakref.ref(z.grad_fn)
        del z
        assert inputs_only() is None
    finally:
        gc.enable()


def test_a_saved_output_gives_first_and_second_derivatives() -> None:
    x = t([0.5, -1.0])
    y = exp_saving_output(x)
    (first,) = grad(y.sum(), x, create_graph=True)
    assert first is not None and first.requires_grad and first.tolist() == core.exp(x).tolist()
    (second,) = grad(first.sum(), x)
    assert second is not None and second.tolist() == core.exp(x).tolist()  # through the node again: exp's derivative
    assert gradgradcheck(exp_saving_output, (t([0.3, -0.2]),))


def test_a_saved_output_is_version_checked_as_an_output() -> None:
    y = exp_saving_output(t([1.0]))
    with no_grad():
        y.mul_(tensor([2.0], dtype=F64))
    with pytest.raises(AutogradError, match="output 0 of exp_saving_outputBackward, is at version 1; expected version 0"):
        y.sum().backward()


@pytest.mark.compat
def test_a_saved_output_differentiates_twice_as_in_torch() -> None:
    torch = pytest.importorskip("torch", reason="compares with PyTorch; needs the compat extra: make compat")

    def exp(x: Any) -> Any:
        return x.exp()

    theirs = torch.library.custom_op("agcustom_compat::exp_saving_output", exp, mutates_args=(), schema="(Tensor x) -> Tensor")

    def setup(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.save_for_backward(output)

    def backward(ctx: Any, grad_: Any) -> Any:
        (result,) = ctx.saved_tensors
        return grad_ * result

    theirs.register_autograd(backward, setup_context=setup)
    values = [0.5, -1.0, 2.0]
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (tfirst,) = torch.autograd.grad(theirs(tx).sum(), tx, create_graph=True)
    (tsecond,) = torch.autograd.grad((tfirst * tfirst).sum(), tx)
    x = t(values)
    (first,) = grad(exp_saving_output(x).sum(), x, create_graph=True)
    assert first is not None
    (second,) = grad((first * first).sum(), x)
    assert second is not None and first.tolist() == pytest.approx(tfirst.tolist()) and second.tolist() == pytest.approx(tsecond.tolist())
