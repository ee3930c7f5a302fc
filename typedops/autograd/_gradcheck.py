"""``gradcheck`` and ``gradgradcheck``: backward rules checked against finite differences.

Note [Finite differences]
~~~~~~~~~~~~~~~~~~~~~~~~~
Both Jacobians are taken over the real numbers: a complex input element is two real
coordinates (its real and imaginary parts), and so is a complex output element. The
numerical Jacobian perturbs each coordinate of each input that requires grad by ``+-eps``
(``+-eps*1j`` for an imaginary part) under ``no_grad``: central differences, one column per
coordinate. The analytical one takes one ``grad()`` per output coordinate, with a one-hot
``grad_outputs`` of 1 for a real part and ``1j`` for an imaginary part; by PyTorch's
convention (Note [Complex gradients] in _engine.py) the gradient that comes back holds
``dL/da + i dL/db`` for each input element ``a + ib``, so its real and imaginary parts are
the row's two entries. An output that does not require grad (or whose gradient does not
reach the input) has an analytical row of zeros, and its numerical row must be zero too --
so a first derivative computed outside the recorded ops fails ``gradgradcheck`` instead of
being skipped. Inputs must be float64 or complex128: in single precision the rounding of
``f(x +- eps)`` swamps a difference of size ``eps``. ``gradgradcheck`` applies the same
check to ``(inputs, v) -> grad(f, inputs, v, create_graph=True)``: the second derivatives,
through the recorded backward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tensor import Tensor, array_of
from ..vocabulary import ScalarType
from ._engine import filled, grad
from ._grad_mode import enable_grad, no_grad
from ._messages import GRADCHECK_DTYPE, GRADCHECK_FAILED, GRADCHECK_NO_INPUT, AutogradError

__all__ = ["gradcheck", "gradgradcheck"]

Fn = Callable[..., Any]
_PRECISE = (ScalarType.float64, ScalarType.complex128)


def _outputs(value: Any) -> list[Tensor]:
    """The outputs a Jacobian has rows for: the floating and complex tensors ``fn`` returned."""
    found = [value] if isinstance(value, Tensor) else [v for v in value if isinstance(v, Tensor)]
    return [t for t in found if t.dtype.is_floating_point or t.dtype.is_complex]


def _coordinates(outputs: list[Tensor]) -> list[float]:
    """The real coordinates of ``outputs``: per element its value, or real and imaginary parts."""
    values: list[float] = []
    for out in outputs:
        for v in array_of(out).reshape(-1):
            values.extend((float(v.real), float(v.imag)) if out.dtype.is_complex else (float(v),))
    return values


def _numerical(fn: Fn, inputs: Sequence[Any], index: int, eps: float) -> list[list[float]]:
    """Per output coordinate, the derivative by each coordinate of ``inputs[index]`` (its
    elements in row-major order, whatever its strides: written through its numpy view)."""
    import numpy as np

    x = inputs[index]
    values = array_of(x)
    steps = (eps, eps * 1j) if x.dtype.is_complex else (eps,)
    columns: list[list[float]] = []
    with no_grad():
        for j in np.ndindex(*values.shape):
            saved = values[j]
            for step in steps:
                values[j] = saved + step
                plus = _coordinates(_outputs(fn(*inputs)))
                values[j] = saved - step
                minus = _coordinates(_outputs(fn(*inputs)))
                values[j] = saved
                columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return [list(row) for row in zip(*columns)] if columns else []


def _analytical(fn: Fn, inputs: Sequence[Any], index: int) -> list[list[float]]:
    outputs = _outputs(fn(*inputs))
    differentiable = [o for o in outputs if o.requires_grad]
    x = inputs[index]
    width = x.numel() * (2 if x.dtype.is_complex else 1)
    rows: list[list[float]] = []
    for out in outputs:
        parts = (1.0, 1j) if out.dtype.is_complex else (1.0,)
        for e in range(out.numel()):
            for part in parts:
                if not out.requires_grad:
                    rows.append([0.0] * width)
                    continue
                ones = [filled(o.shape, o.dtype, o.device, 0.0) for o in differentiable]
                array_of(ones[next(k for k, o in enumerate(differentiable) if o is out)]).reshape(-1)[e] = part
                (g,) = grad(differentiable, [x], ones, retain_graph=True, allow_unused=True)
                rows.append([0.0] * width if g is None else _coordinates([g]))
    return rows


def _first_mismatch(numerical: list[list[float]], analytical: list[list[float]], atol: float, rtol: float) -> Any:
    for row_n, row_a in zip(numerical, analytical, strict=True):
        for column, (n, a) in enumerate(zip(row_n, row_a, strict=True)):
            if abs(n - a) > atol + rtol * abs(n):
                return column, n, a
    return None


def _as_tuple(inputs: Tensor | Sequence[Any]) -> tuple[Any, ...]:
    """``inputs`` as a tuple: one tensor alone, or the sequence's items (tensors or not)."""
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def gradcheck(
    fn: Fn,
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against finite differences (Note [Finite
    differences]): True, or ``AutogradError`` naming the first coordinate that differs
    (False instead, with ``raise_exception=False``). ``inputs`` may be one tensor."""
    inputs = _as_tuple(inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise AutogradError(GRADCHECK_NO_INPUT)
    for index in checked:
        x = inputs[index]
        if x.dtype not in _PRECISE:
            raise AutogradError(GRADCHECK_DTYPE.format(index=index, dtype=x.dtype.name))
        found = _first_mismatch(_numerical(fn, inputs, index, eps), _analytical(fn, inputs, index), atol, rtol)
        if found is None:
            continue
        if not raise_exception:
            return False
        column, n, a = found
        element = f"{column // 2} ({'imaginary' if column % 2 else 'real'} part)" if x.dtype.is_complex else column
        raise AutogradError(
            GRADCHECK_FAILED.format(index=index, element=element, numerical=n, analytical=a, atol=atol, rtol=rtol)
        )
    return True


def gradgradcheck(
    fn: Fn,
    inputs: Tensor | Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """``gradcheck`` of the first derivatives of ``fn`` (recorded with ``create_graph=True``)."""
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    probe = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    vs = [filled(o.shape, o.dtype, o.device, 0.0) for o in probe]
    for v in vs:
        values = [0.5 + 0.25 * k + (0.125j * (k + 1) if v.dtype.is_complex else 0) for k in range(v.numel())]
        array_of(v).reshape(-1)[...] = values
        v.requires_grad_()

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        xs, grad_outputs = args[: len(inputs)], args[len(inputs) :]
        with enable_grad():  # also when gradcheck evaluates it under no_grad()
            outs = [o for o in _outputs(fn(*xs)) if o.requires_grad]
            gs = grad(outs, [xs[i] for i in diff], list(grad_outputs), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivatives, (*inputs, *vs), eps, atol, rtol, raise_exception)
