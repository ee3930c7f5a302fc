"""opcheck's ``test_autograd``: the op's autograd rule against finite differences.

Note [opcheck's autograd check]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every floating (or complex) tensor among the arguments becomes a leaf that requires grad:
a contiguous float64 (complex128) copy, since finite differences need double precision
(Note [Finite differences] in autograd/_gradcheck.py). Arguments the schema declares
written (``Tensor(a!)``) are not differentiated -- a leaf may not be written in place --
but passed as a fresh copy on every call, so an in-place op's rule is checked through its
other arguments. ``gradcheck`` then compares, for each leaf, the gradients the op's rule
gives (its derivatives.yaml formula, or the rule given to ``register_autograd``) with
central differences of the op's floating results. An op with no floating argument or no
floating result has nothing to check, and neither has an ``out=`` variant (not
differentiable, as in PyTorch) or an op whose own autograd kernel leaves its floating
results without history (declared not differentiable: ``detach``; an op with no rule at
all reaches the autograd fallback, and fails). An op without a rule fails: its backward raises the
"derivative ... is not implemented" error, which names the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..autograd import AutogradError, gradcheck
from ..dispatch import DispatchKey, OperatorHandle
from ..tensor import Tensor, array_of, wrap_array
from ..vocabulary import ScalarType
from . import _messages as msg
from ._values import clone, map_tensors, tensors_of

__all__ = ["check_autograd"]


def _differentiable(t: Tensor) -> bool:
    return not t.is_meta and (t.dtype.is_floating_point or t.dtype.is_complex)


def _leaf(t: Tensor) -> Tensor:
    import numpy as np

    dtype = ScalarType.complex128 if t.dtype.is_complex else ScalarType.float64
    values = np.array(array_of(t), dtype=np.complex128 if t.dtype.is_complex else np.float64, order="C")
    return wrap_array(values, dtype, t.device).requires_grad_()


def _floating_results(result: Any) -> tuple[Tensor, ...]:
    return tuple(t for t in tensors_of(result) if t.dtype.is_floating_point or t.dtype.is_complex)


def check_autograd(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    schema = op.schema
    if schema.is_out_fn:
        return None  # out= variants are not differentiable, as in PyTorch
    names: list[str] = []  # the argument each leaf stands for
    leaves: list[Tensor] = []
    positional = [a.name for a in schema.positional]

    def as_leaves(name: str, value: Any) -> Any:
        written = any(a.name == name and a.is_write for a in schema.arguments)

        def replace(t: Tensor) -> Tensor:
            if not _differentiable(t):
                return t
            if written:
                return _leaf(t).detach()
            names.append(name)
            leaves.append(_leaf(t))
            return leaves[-1]

        return map_tensors(value, replace)

    template_args = tuple(as_leaves(n, v) for n, v in zip(positional, args))
    template_kwargs = {k: as_leaves(k, v) for k, v in kwargs.items()}
    if not leaves:
        return None

    def results(chosen: dict[int, Tensor]) -> tuple[Tensor, ...]:
        call_args, call_kwargs = _substitute(template_args, chosen), _substitute(template_kwargs, chosen)
        return _floating_results(op(*call_args, **call_kwargs))

    try:
        if not results({}):
            return None
    except Exception as error:  # noqa: BLE001 -- reported as the check's finding
        return msg.AUTOGRAD_NO_FLOAT64.format(error=f"{type(error).__name__}: {error}")
    own_kernel = op.has_kernel_for(DispatchKey.Autograd)  # not the fallback, which records for any op
    for name, leaf in zip(names, leaves):

        def through(value: Tensor, leaf: Tensor = leaf) -> tuple[Tensor, ...]:
            return results({id(leaf): value})

        if own_kernel and not any(t.requires_grad for t in through(leaf)):
            continue  # its autograd kernel makes no result differentiable (detach)
        try:
            gradcheck(through, [leaf])
        except AutogradError as error:
            problem = str(error).replace("for input 0, ", "at ", 1)
            return msg.AUTOGRAD_DIFFERS.format(arg=name, error=problem)
    return None


def _substitute(value: Any, chosen: dict[int, Tensor]) -> Any:
    """``value`` with the leaf being checked replaced by its current value, and every other
    tensor by a fresh copy without history (a written argument must start from the same
    values on every call; the other leaves are constants)."""
    return map_tensors(value, lambda t: chosen[id(t)] if id(t) in chosen else clone(t.detach()))
