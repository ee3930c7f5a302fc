"""``gradcheck`` and ``gradgradcheck``: backward rules checked against finite differences.

Note [Finite differences]
~~~~~~~~~~~~~~~~~~~~~~~~~
For each element ``j`` of each input that requires grad, the function is evaluated at
``x + eps`` and ``x - eps`` in that element (under ``no_grad``), giving one column of the
numerical Jacobian by central differences. The analytical Jacobian comes from one
``grad()`` call per output element with a one-hot ``grad_outputs``. Inputs must be float64:
in float32 the rounding of ``f(x +- eps)`` swamps a difference of size ``eps``.
``gradgradcheck`` applies the same check to the function ``(inputs, v) -> grad(f, inputs, v,
create_graph=True)``: the second derivatives, through the recorded backward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tensor import Tensor, array_of
from ..vocabulary import ScalarType
from ._engine import filled, grad
from ._grad_mode import enable_grad, no_grad
from ._messages import GRADCHECK_DTYPE, GRADCHECK_FAILED, AutogradError

__all__ = ["gradcheck", "gradgradcheck"]

Fn = Callable[..., Any]


def _outputs(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    return [v for v in value if isinstance(v, Tensor)]


def _numerical(fn: Fn, inputs: Sequence[Any], index: int, eps: float) -> list[list[float]]:
    """Per output element, the derivative by each element of ``inputs[index]``."""
    x = inputs[index]
    flat = array_of(x).reshape(-1) if x.is_contiguous() else None
    assert flat is not None, "gradcheck needs contiguous inputs"
    columns: list[list[float]] = []
    with no_grad():
        for j in range(flat.size):
            saved = float(flat[j])
            flat[j] = saved + eps
            plus = [float(v) for out in _outputs(fn(*inputs)) for v in array_of(out).reshape(-1)]
            flat[j] = saved - eps
            minus = [float(v) for out in _outputs(fn(*inputs)) for v in array_of(out).reshape(-1)]
            flat[j] = saved
            columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return [list(row) for row in zip(*columns)] if columns else []


def _analytical(fn: Fn, inputs: Sequence[Any], index: int) -> list[list[float]]:
    outputs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    x = inputs[index]
    rows: list[list[float]] = []
    for k, out in enumerate(outputs):
        for e in range(out.numel()):
            ones = [filled(o.shape, o.dtype, o.device, 0.0) for o in outputs]
            array_of(ones[k]).reshape(-1)[e] = 1.0
            (g,) = grad(outputs, [x], ones, retain_graph=True, allow_unused=True)
            rows.append([0.0] * x.numel() if g is None else [float(v) for v in array_of(g).reshape(-1)])
    return rows


def gradcheck(fn: Fn, inputs: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against finite differences (Note [Finite
    differences]); True, or ``AutogradError`` naming the first element that differs."""
    inputs = tuple(inputs)
    for index, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype is not ScalarType.float64:
            raise AutogradError(GRADCHECK_DTYPE.format(index=index, dtype=x.dtype.name))
        numerical = _numerical(fn, inputs, index, eps)
        analytical = _analytical(fn, inputs, index)
        for row_n, row_a in zip(numerical, analytical):
            for element, (n, a) in enumerate(zip(row_n, row_a)):
                if abs(n - a) > atol + rtol * abs(n):
                    raise AutogradError(
                        GRADCHECK_FAILED.format(
                            index=index, element=element, numerical=n, analytical=a, atol=atol, rtol=rtol
                        )
                    )
    return True


def gradgradcheck(fn: Fn, inputs: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """``gradcheck`` of the first derivatives of ``fn`` (recorded with ``create_graph=True``)."""
    inputs = tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    probe = [o.detach() for o in _outputs(fn(*inputs))]
    vs = [filled(o.shape, o.dtype, o.device, 0.0) for o in probe]
    for v in vs:
        array_of(v).reshape(-1)[...] = [0.5 + 0.25 * k for k in range(v.numel())]
        v.requires_grad_()

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        xs, grad_outputs = args[: len(inputs)], args[len(inputs) :]
        with enable_grad():  # also when gradcheck evaluates it under no_grad()
            outs = [o for o in _outputs(fn(*xs)) if o.requires_grad]
            gs = grad(outs, [xs[i] for i in diff], list(grad_outputs), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivatives, (*inputs, *vs), eps, atol, rtol)
