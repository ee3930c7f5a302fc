"""Every differentiable core op against finite differences (gradcheck, float64), and the
second derivatives of the pointwise ops, matmul and the reductions (gradgradcheck)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from typedops import ScalarType, Tensor, core, op, ops, tensor
from typedops.autograd import AutogradError, gradcheck, gradgradcheck
from typedops.dispatch import AutogradContext

F64 = ScalarType.float64
RNG = np.random.default_rng(13)


def rand(*shape: int, low: float = -1.0, high: float = 1.0, grad: bool = True) -> Tensor:
    return tensor(RNG.uniform(low, high, size=shape), dtype=F64, requires_grad=grad)


def pos(*shape: int) -> Tensor:
    return rand(*shape, low=0.5, high=2.0)


# (name, function, inputs): each row one op or one argument variant.
CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("add", lambda a, b: core.add(a, b), lambda: (rand(2, 3), rand(2, 3))),
    ("add broadcast alpha", lambda a, b: core.add(a, b, alpha=2.5), lambda: (rand(2, 3), rand(3))),
    ("add scalar", lambda a: core.add(a, 2.0), lambda: (rand(3),)),
    ("sub", lambda a, b: core.sub(a, b, alpha=0.5), lambda: (rand(2, 1), rand(1, 3))),
    ("mul broadcast", lambda a, b: core.mul(a, b), lambda: (rand(2, 3), rand(2, 1))),
    ("mul scalar", lambda a: core.mul(a, 3.0), lambda: (rand(3),)),
    ("div", lambda a, b: core.div(a, b), lambda: (rand(2, 3), pos(3))),
    ("pow", lambda a: core.pow(a, 3), lambda: (rand(4),)),
    ("pow fractional", lambda a: core.pow(a, 0.5), lambda: (pos(4),)),
    # remainder away from its steps (a / b stays inside one integer interval under the perturbation)
    ("remainder", lambda a, b: core.remainder(a, b), lambda: (rand(2, 3, low=2.1, high=2.9), rand(3, low=1.1, high=1.3))),
    ("remainder scalar", lambda a: a % 0.75, lambda: (rand(3, low=0.8, high=1.4),)),
    ("rmod", lambda b: 5.0 % b, lambda: (rand(3, low=2.6, high=2.9),)),
    ("remainder in place", lambda a, b: (lambda c: (c.__imod__(b), c)[1])(a * 1),
     lambda: (rand(3, low=2.1, high=2.9), rand(3, low=1.1, high=1.3))),  # fmt: skip
    ("maximum", lambda a, b: core.maximum(a, b), lambda: (rand(2, 3), rand(3))),
    ("minimum", lambda a, b: core.minimum(a, b), lambda: (rand(2, 3), rand(2, 3))),
    ("neg", lambda a: core.neg(a), lambda: (rand(3),)),
    ("abs", lambda a: core.abs(a), lambda: (rand(5),)),
    ("exp", core.exp, lambda: (rand(3),)),
    ("exp2", core.exp2, lambda: (rand(3),)),
    ("expm1", core.expm1, lambda: (rand(3),)),
    ("log", core.log, lambda: (pos(3),)),
    ("log2", core.log2, lambda: (pos(3),)),
    ("log10", core.log10, lambda: (pos(3),)),
    ("log1p", core.log1p, lambda: (pos(3),)),
    ("sqrt", core.sqrt, lambda: (pos(3),)),
    ("rsqrt", core.rsqrt, lambda: (pos(3),)),
    ("reciprocal", core.reciprocal, lambda: (pos(3),)),
    ("sigmoid", core.sigmoid, lambda: (rand(3),)),
    ("sin", core.sin, lambda: (rand(3),)),
    ("cos", core.cos, lambda: (rand(3),)),
    ("tan", core.tan, lambda: (rand(3),)),
    ("asin", core.asin, lambda: (rand(3, low=-0.8, high=0.8),)),
    ("acos", core.acos, lambda: (rand(3, low=-0.8, high=0.8),)),
    ("atan", core.atan, lambda: (rand(3),)),
    ("sinh", core.sinh, lambda: (rand(3),)),
    ("cosh", core.cosh, lambda: (rand(3),)),
    ("tanh", core.tanh, lambda: (rand(3),)),
    ("relu", core.relu, lambda: (rand(6),)),
    # relu's gradient op; its own gradient for self is zero (gradcheck compares the rows)
    ("threshold_backward", lambda g, a: core.threshold_backward(g, a, 0.2),
     lambda: (rand(2, 3), rand(2, 3))),  # fmt: skip
    ("threshold_backward broadcast", lambda g, a: core.threshold_backward(g, a, 0.2),
     lambda: (rand(3), rand(2, 3))),  # fmt: skip
    ("where", lambda c, a, b: core.where(c, a, b),
     lambda: (tensor([True, False, True]), rand(2, 3), rand(3))),  # fmt: skip
    ("sum", lambda a: core.sum(a), lambda: (rand(2, 3),)),
    ("sum dim", lambda a: core.sum(a, [1]), lambda: (rand(2, 3),)),
    ("sum dims keepdim", lambda a: ops.core.sum.dim_IntList(a, [0, -1], True), lambda: (rand(2, 3, 2),)),
    ("mean", lambda a: core.mean(a), lambda: (rand(2, 3),)),
    ("mean dim", lambda a: core.mean(a, [1], True), lambda: (rand(2, 3),)),
    ("mean dims", lambda a: core.mean(a, [0, -1], False), lambda: (rand(2, 3, 2),)),
    ("mean 0-dim", lambda a: core.mean(a), lambda: (rand(),)),
    ("amax", lambda a: core.amax(a, [1]), lambda: (rand(2, 3),)),
    ("max dim", lambda a: core.max(a, 1)[0], lambda: (rand(2, 3),)),
    ("max dim keepdim", lambda a: core.max(a, 0, True)[0], lambda: (rand(2, 3),)),
    ("max", lambda a: core.max(a), lambda: (rand(2, 3),)),
    ("max method 0-dim", lambda a: a.max(), lambda: (rand(),)),
    ("min", lambda a: core.min(a), lambda: (rand(2, 3),)),
    ("min dim", lambda a: core.min(a, 1)[0], lambda: (rand(2, 3),)),
    ("min dim keepdim", lambda a: a.min(0, True)[0], lambda: (rand(2, 3),)),
    ("squeeze all", lambda a: a.squeeze(), lambda: (rand(2, 1, 3, 1),)),
    ("matmul 2d", lambda a, b: core.matmul(a, b), lambda: (rand(2, 3), rand(3, 4))),
    ("matmul batched", lambda a, b: core.matmul(a, b), lambda: (rand(2, 2, 3), rand(3, 2))),
    ("matmul vector", lambda a, b: core.matmul(a, b), lambda: (rand(2, 3), rand(3))),
    ("matmul vector left", lambda a, b: core.matmul(a, b), lambda: (rand(3), rand(3, 2))),
    ("matmul dot", lambda a, b: core.matmul(a, b), lambda: (rand(3), rand(3))),
    ("mm", lambda a, b: core.mm(a, b), lambda: (rand(2, 3), rand(3, 2))),
    ("view", lambda a: a.view([3, 2]), lambda: (rand(2, 3),)),
    ("reshape", lambda a: core.reshape(a, [6]), lambda: (rand(2, 3),)),
    ("permute", lambda a: core.permute(a, [2, 0, 1]), lambda: (rand(2, 3, 2),)),
    ("transpose", lambda a: core.transpose(a, 0, 1), lambda: (rand(2, 3),)),
    ("t", lambda a: core.t(a), lambda: (rand(2, 3),)),
    ("select", lambda a: core.select(a, 1, -1), lambda: (rand(2, 3),)),
    ("slice step", lambda a: core.slice(a, 1, 0, 5, 2), lambda: (rand(2, 5),)),
    ("slice", lambda a: core.slice(a, 0, 1), lambda: (rand(3, 2),)),
    ("unsqueeze", lambda a: core.unsqueeze(a, 1), lambda: (rand(2, 3),)),
    ("squeeze", lambda a: core.squeeze(a, 1), lambda: (rand(2, 1, 3),)),
    ("expand", lambda a: a.expand([2, 3]), lambda: (rand(1, 3),)),
    ("flatten", lambda a: core.flatten(a), lambda: (rand(2, 3),)),
    ("contiguous of a view", lambda a: core.transpose(a, 0, 1).contiguous(), lambda: (rand(2, 3),)),
    ("clone", lambda a: core.clone(a), lambda: (rand(3),)),
    ("cat", lambda a, b: core.cat([a, b], 1), lambda: (rand(2, 1), rand(2, 3))),
    ("stack", lambda a, b: core.stack([a, b]), lambda: (rand(3), rand(3))),
    ("_to_copy", lambda a: core._to_copy(a, dtype=F64), lambda: (rand(3),)),
    ("as_strided", lambda a: core.as_strided(a, [2, 2], [1, 2], 1), lambda: (rand(6),)),
    ("as_strided overlapping", lambda a: core.as_strided(a, [3, 2], [1, 1]), lambda: (rand(4),)),
    ("as_strided of an expanded input", lambda a: core.as_strided(a.expand([3, 2]), [2], [1]), lambda: (rand(1, 2),)),
    ("to dtype and back", lambda a: a.to(ScalarType.float32).to(F64) * 0 + a, lambda: (rand(3),)),
    ("in-place on a non-leaf", lambda a, b: (a * 1).mul_(b).exp_(), lambda: (rand(3), rand(3))),
    ("in-place on a view", lambda a, b: (lambda c: (core.select(c, 0, 0).mul_(b), c * a)[1])(a * 1),
     lambda: (rand(2, 3), rand(3))),
    ("copy_ into a non-leaf", lambda a, b: (a * 1).copy_(b) * a, lambda: (rand(3), rand(3))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(case: tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]) -> None:
    _, fn, make = case
    assert gradcheck(fn, make())


SECOND_ORDER = [c for c in CASES if c[0] in {
    "add broadcast alpha", "mul broadcast", "div", "pow", "neg", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "sum", "sum dim", "max", "min", "min dim", "squeeze all", "mean", "mean dim", "mean dims", "matmul 2d", "matmul batched", "mm", "select", "slice step",
    "transpose", "cat", "maximum", "abs", "relu", "threshold_backward",
    # views: their backward is recorded too (as_strided's and the in-place-on-view nodes' through linear_map)
    "view", "reshape", "permute", "t", "slice", "unsqueeze", "squeeze", "expand", "flatten", "contiguous of a view",
    "as_strided", "as_strided overlapping", "as_strided of an expanded input", "in-place on a non-leaf",
    "in-place on a view", "copy_ into a non-leaf",
}]  # fmt: skip


def _cube_through(view: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    return lambda a: view(a) * view(a) * view(a)


# Nonlinear functions of views: the second derivative is not zero, and reaches the input
# only through the recorded backward of the view.
THROUGH_VIEWS: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("transpose", _cube_through(lambda a: core.transpose(a, 0, 1)), lambda: (rand(2, 3),)),
    ("select", _cube_through(lambda a: core.select(a, 1, 1)), lambda: (rand(2, 3),)),
    ("slice step", _cube_through(lambda a: core.slice(a, 1, 0, 3, 2)), lambda: (rand(2, 3),)),
    ("expand", _cube_through(lambda a: a.expand([3, 2])), lambda: (rand(1, 2),)),
    ("as_strided", _cube_through(lambda a: core.as_strided(a, [2, 2], [1, 1])), lambda: (rand(4),)),
    ("stale view after an in-place op on another view",
     lambda a, b: (lambda c: (lambda w: (core.select(c, 0, 0).mul_(b), w * w * c)[1])(core.slice(c, 0, 0, 2)))(a * 1),
     lambda: (rand(2, 3), rand(3))),
    ("in-place mul reads the original self", lambda a, b: (a * 1).mul_(b) * a, lambda: (rand(3), rand(3))),
]  # fmt: skip


@pytest.mark.parametrize("case", THROUGH_VIEWS, ids=[c[0] for c in THROUGH_VIEWS])
def test_second_derivatives_through_views(case: tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]) -> None:
    _, fn, make = case
    assert gradgradcheck(fn, make())


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_derivatives_match_finite_differences(
    case: tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]],
) -> None:
    _, fn, make = case
    assert gradgradcheck(fn, make())


def test_gradcheck_catches_a_wrong_rule() -> None:
    x = rand(3)
    with pytest.raises(AutogradError, match="gradcheck failed for input 0, element 0: numerical"):
        gradcheck(lambda a: core.mul(a, a).detach().requires_grad_() * a, (x,))


def test_gradcheck_wants_float64() -> None:
    with pytest.raises(AutogradError, match=r"gradcheck needs float64 \(or complex128\) inputs"):
        gradcheck(core.exp, (tensor([1.0], requires_grad=True),))


def test_gradcheck_wants_an_input_that_requires_grad() -> None:
    with pytest.raises(AutogradError) as info:
        gradcheck(core.exp, (rand(2, grad=False),))
    assert str(info.value) == (
        "gradcheck expects at least one input tensor to require gradient, but none of them have "
        "requires_grad=True: set it on the inputs to check"
    )


def test_gradcheck_returns_false_without_raise_exception() -> None:
    assert gradcheck(lambda a: core.mul(a, a).detach().requires_grad_() * a, (rand(3),), raise_exception=False) is False


@op("agops::square_detached")
def square_detached(x: Tensor) -> Tensor:
    return core.mul(x, x)


def _square_detached_backward(ctx: AutogradContext, grad: Tensor) -> Tensor:
    (x,) = ctx.saved_tensors
    return Tensor.from_numpy(grad.detach().numpy() * 2 * x.detach().numpy())  # right values, computed outside the graph


square_detached.register_autograd(
    _square_detached_backward, setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0])
)


def test_gradgradcheck_fails_when_a_first_derivative_is_not_recorded() -> None:
    """A gradient computed outside the recorded ops has no second derivative: gradgradcheck
    compares zeros with the finite differences instead of skipping that output."""
    x = rand(3)
    assert gradcheck(square_detached, (x,))
    with pytest.raises(AutogradError, match="gradcheck failed for input 0, element 0: numerical 1.0"):
        gradgradcheck(square_detached, (x,))


def test_not_implemented_in_the_yaml_raises_when_differentiated(tmp_path: Any) -> None:
    from typedops.autograd import not_implemented

    error = not_implemented("core::as_strided", "self")
    assert str(error).startswith(
        "the derivative for 'core::as_strided' is not implemented: derivatives.yaml marks the gradient of "
        "'self' not_implemented. Register one with register_autograd(backward) on the op"
    )


def test_every_op_with_a_backend_kernel_is_covered() -> None:
    """Each core op with a CPU kernel has an entry (or is an in-place/out variant of one)."""
    from typedops import dispatcher

    missing = []
    for handle in dispatcher.all_ops():
        if handle.schema.namespace != "core":
            continue
        dump = handle.dump()
        if ("CPU:" in dump or "CompositeExplicitAutograd:" in dump) and "Autograd:" not in dump:
            if any(a.type.is_tensor_like() for a in handle.schema.arguments):
                missing.append(handle.full_name)
    assert missing == []


# -- complex inputs: PyTorch's convention (Note [Complex gradients] in autograd/_engine.py) ----

C128 = ScalarType.complex128


def crand(*shape: int) -> Tensor:
    values = RNG.uniform(0.2, 0.9, size=shape) + 1j * RNG.uniform(0.2, 0.9, size=shape)
    return tensor(values, dtype=C128, requires_grad=True)


COMPLEX: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    *[(name, getattr(core, name), lambda: (crand(3),))
      for name in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
                   "sigmoid", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "abs", "neg"]],
    ("mul", lambda a, b: a * b, lambda: (crand(2, 3), crand(3))),
    ("div", lambda a, b: a / b, lambda: (crand(3), crand(3))),
    ("add alpha", lambda a, b: core.add(a, b, alpha=2.0), lambda: (crand(3), crand(3))),
    ("pow", lambda a: a ** 3, lambda: (crand(3),)),
    ("matmul", lambda a, b: a @ b, lambda: (crand(2, 3), crand(3, 2))),
    ("matmul vector", lambda a, b: a @ b, lambda: (crand(2, 3), crand(3))),
    ("mm", core.mm, lambda: (crand(2, 2), crand(2, 2))),
    ("sum", lambda a: core.sum(a, [1]), lambda: (crand(2, 3),)),
    ("as_strided", lambda a: core.as_strided(a, [2, 2], [1, 1]) ** 2, lambda: (crand(4),)),
    ("real and complex mixed", lambda a, b: a * b, lambda: (rand(3), crand(3))),
    ("to complex and back", lambda a: core.abs(a.to(C128) * a), lambda: (rand(3),)),
]  # fmt: skip


@pytest.mark.parametrize("case", COMPLEX, ids=[c[0] for c in COMPLEX])
def test_complex_gradients_match_finite_differences(case: tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]) -> None:
    _, fn, make = case
    assert gradcheck(fn, make())
    assert gradgradcheck(fn, make())


@op("agops::cmul_unconjugated")
def cmul_unconjugated(x: Tensor, y: Tensor) -> Tensor:
    return core.mul(x, y)


def _unconjugated(ctx: AutogradContext, grad: Tensor) -> tuple[Tensor, Tensor]:
    x, y = ctx.saved_tensors
    return grad * y, grad * x  # the real formula: wrong for complex inputs, which need conj(y), conj(x)


cmul_unconjugated.register_autograd(
    _unconjugated, setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0], inputs[1])
)


def test_gradcheck_catches_a_missing_conjugation() -> None:
    assert gradcheck(cmul_unconjugated, (rand(2), rand(2)))  # real inputs: right
    with pytest.raises(AutogradError, match=r"gradcheck failed for input 0, element 0 \((real|imaginary) part\)"):
        gradcheck(cmul_unconjugated, (crand(2), crand(2)))


def test_a_complex_loss_needs_a_gradient() -> None:
    z = crand(2)
    with pytest.raises(AutogradError) as info:
        core.sum(z * z).backward()
    assert str(info.value) == (
        "grad can be implicitly created only for real scalar outputs but got complex128. Pass gradient= "
        "(a tensor of the output's dtype), or make the loss real first"
    )
    with pytest.raises(AutogradError) as info:
        (z * z).backward(tensor([1.0, 1.0], dtype=F64))
    assert str(info.value) == (
        "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in "
        "dtype: grad_output[0] has a dtype of float64 and output[0] has a dtype of complex128. Pass a gradient "
        "of the output's dtype"
    )
    core.abs(z).sum().backward()  # a real loss of a complex tensor: z / |z|
    assert z.grad is not None and np.allclose(z.grad.numpy(), z.detach().numpy() / np.abs(z.detach().numpy()))


def test_a_complex_gradient_into_a_real_input_keeps_its_real_part() -> None:
    x = rand(2)
    (x * tensor([1j, 2 + 1j], dtype=C128)).backward(tensor([1 + 1j, 1 - 1j], dtype=C128))
    assert x.grad is not None and x.grad.dtype is F64
    assert x.grad.tolist() == pytest.approx([1.0, 1.0])  # Re((1+1j) * conj(1j)), Re((1-1j) * conj(2+1j))


def test_gradcheck_takes_one_tensor_and_strided_inputs() -> None:
    x = rand(2, 3)
    assert gradcheck(core.sin, x) and gradgradcheck(core.sin, x)
    strided = core.transpose(rand(3, 2).detach(), 0, 1).requires_grad_()
    assert not strided.is_contiguous()
    assert gradcheck(lambda a: core.matmul(a, a.t()), (strided,))
    with pytest.raises(AutogradError, match="gradcheck failed"):
        gradcheck(lambda a: core.mul(a, a).detach().requires_grad_() * a, strided)


def test_mean_is_one_node_as_in_pytorch() -> None:
    x = rand(2, 3)
    y, z = core.mean(x), core.mean(x, [1], False)
    assert y.grad_fn is not None and z.grad_fn is not None
    assert (y.grad_fn.name(), z.grad_fn.name()) == ("MeanBackward0", "MeanBackward1")
    assert [n.name() for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    y.backward()
    assert x.grad is not None and x.grad.tolist() == [[1 / 6] * 3] * 2


def test_the_mean_of_an_empty_tensor_is_nan_and_its_gradient_empty() -> None:
    x = rand(0, 3)
    y = core.mean(x)
    assert np.isnan(y.item())
    y.backward()
    assert x.grad is not None and x.grad.shape == (0, 3)
    z = core.mean(rand(2, 0), [1], False)
    assert z.shape == (2,) and np.isnan(z.detach().numpy()).all()


# -- outputs of a chosen dtype: Note [Outputs of a chosen dtype] in codegen/_derivatives_source.py
UNDIFFERENTIABLE = (
    r"core::{op}\(\): autograd does not support outputs of dtype {dtype} \(only floating point and complex "
    r"tensors have gradients\), but an input requires grad\. Call it under typedops\.no_grad\(\) or on detach\(\)ed inputs"
)


@pytest.mark.parametrize("dtype", [ScalarType.int64, ScalarType.int32, ScalarType.bool, ScalarType.uint8])
def test_a_cast_to_an_undifferentiable_dtype_records_nothing(dtype: ScalarType) -> None:
    x = tensor([1.5, 2.5], requires_grad=True)
    y = x.to(dtype)
    assert (y.requires_grad, y.grad_fn, y.dtype) == (False, None, dtype)
    z = x.to(ScalarType.complex64)
    assert z.requires_grad and z.grad_fn is not None and z.grad_fn.name() == "ToCopyBackward0"


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("sum", lambda x: core.sum(x, dtype=ScalarType.int64)),
        ("sum.dim_IntList", lambda x: core.sum(x, [0], dtype=ScalarType.int64)),
    ],
)
def test_a_reduction_to_an_undifferentiable_dtype_raises(op: str, call: Callable[[Any], Any]) -> None:
    x = tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(AutogradError, match=UNDIFFERENTIABLE.format(op=op, dtype="int64")):
        call(x)
    assert not call(x.detach()).requires_grad
    assert core.sum(x, dtype=ScalarType.float64).grad_fn is not None


def test_grad_of_a_cast_to_int_is_zero() -> None:
    from typedops.func import grad

    g = grad(lambda x: (x * 2).sum().to(ScalarType.int64))(tensor([1.5, 2.5]))
    assert g.tolist() == [0.0, 0.0]
