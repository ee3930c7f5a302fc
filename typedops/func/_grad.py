"""``grad`` and ``grad_and_value``: torch.func's gradient transforms on the autograd engine.

Note [grad on the autograd engine]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``grad(f)(*args)`` runs ``f`` on *lifted* copies of the differentiated arguments and asks
``typedops.autograd.grad`` for the gradient of the output with respect to them. A lifted
copy shares the caller's data but never the caller's tensor object: the caller's tensors
keep their ``requires_grad``, ``grad_fn`` and ``.grad`` (Note [Lifting an argument] in
_lift.py). ``f`` runs under ``enable_grad()``, so an enclosing ``no_grad()`` does not stop
the transform (a ``no_grad()`` inside ``f`` still does), as torch.func documents; grad mode
is the per-thread-and-task exclude set, so concurrent tasks never see each other's mode.

Note [When grad records its own backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch.func gives every ``grad`` a level, so that an enclosing transform (another ``grad``,
or plain autograd on tensors requiring grad) differentiates the results again, while this
level's own inputs are invisible to it. On one shared engine the same effect comes from
two rules:

- An argument that already requires grad (an enclosing ``grad``'s input, or a user's
  tensor) is lifted through a recorded identity node, so the enclosing graph continues
  through it; one that does not is lifted as a fresh leaf.
- The backward pass records itself (``create_graph``) only when grad mode was on at the
  call and the output's graph reaches a tensor requiring grad other than this call's
  fresh leaves: only then can an enclosing level differentiate the result. Results
  (gradients, value, aux) whose graph reaches nothing but this call's fresh leaves are
  detached, so they do not require grad -- torch.func's "unwrapped at this level".

So ``grad(grad(f))(x)`` works: the inner call's argument requires grad (the outer fresh
leaf), its graph reaches it, and the inner backward is recorded for the outer one. The
plain case -- the benchmark's ``vmap(grad(loss))`` -- records nothing extra.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, ParamSpec

from ..autograd import enable_grad, is_grad_enabled
from ..autograd import grad as autograd_grad
from ..batching import TreeSpec, current_levels, leaf_paths, tree_map
from ..batching import tree_flatten as flatten
from ..batching import tree_unflatten as unflatten
from ..dispatch import DispatchKey, exclude_keys
from ..tensor import Tensor
from ..vocabulary import ArgumentError, ArgumentValueError
from ._lift import Lifted, filled_like, lift, lower, physical, reaches_outside
from ._messages import (
    ARGNUM_RANGE,
    ARGNUMS_DUPLICATE,
    ARGNUMS_EMPTY,
    ARGNUMS_TYPE,
    AUX_NOT_PAIR,
    NOT_A_TENSOR_INPUT,
    NOT_FLOAT_INPUT,
    OUTPUT_NOT_SCALAR,
    OUTPUT_NOT_TENSOR,
    FuncError,
)

__all__ = ["grad", "grad_and_value", "ArgNums"]

P = ParamSpec("P")
ArgNums = int | tuple[int, ...]
_BELOW_BATCHING: Final = exclude_keys(DispatchKey.Batched)


def grad(fn: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False) -> Callable[P, Any]:
    """The function computing the gradient of ``fn``'s scalar output with respect to the
    positional arguments ``argnums`` (an int, or a tuple for a tuple of gradients).

    Each differentiated argument may be a tensor or a nest of tuples, lists and dicts of
    tensors; its gradient has the same nest. With ``has_aux=True``, ``fn`` returns
    ``(output, aux)`` and the function returns ``(gradient, aux)``.
    """

    @functools.wraps(fn)
    def grad_fn(*args: P.args, **kwargs: P.kwargs) -> Any:
        gradient, value = _grad_and_value(fn, argnums, has_aux, "grad(f)(*args)", args, kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return grad_fn


def grad_and_value(fn: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False) -> Callable[P, Any]:
    """As ``grad``, but the function returns ``(gradient, output)`` -- with ``has_aux``,
    ``(gradient, (output, aux))``."""

    @functools.wraps(fn)
    def grad_and_value_fn(*args: P.args, **kwargs: P.kwargs) -> Any:
        return _grad_and_value(fn, argnums, has_aux, "grad_and_value(f)(*args)", args, kwargs)

    return grad_and_value_fn


def _grad_and_value(
    fn: Callable[..., Any],
    argnums: ArgNums,
    has_aux: bool,
    api: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    indices = _check_argnums(argnums, len(args), api)
    outer = is_grad_enabled()  # before enable_grad(): Note [When grad records its own backward]
    new_args = list(args)
    lifted: list[Lifted] = []
    specs: list[tuple[TreeSpec, int]] = []
    for i in indices:
        leaves, spec = flatten(args[i])
        _check_inputs(leaves, spec, i, api)
        mine = [lift(x, outer) for x in leaves]
        lifted.extend(mine)
        new_args[i] = unflatten([m.seen for m in mine], spec)
        specs.append((spec, len(mine)))
    with enable_grad():
        output, aux = _split(fn(*new_args, **kwargs), has_aux, api)
        grads, recorded = _differentiate(output, lifted, outer)
    keep = _lowering(outer, {id(m.leaf) for m in lifted if m.fresh})
    if not recorded:
        grads = [g.detach() if g.requires_grad else g for g in grads]
    gradients = [lower(m.rewrap(g), keep) for m, g in zip(lifted, grads)]
    nests: list[Any] = []
    start = 0
    for spec, n in specs:
        nests.append(unflatten(gradients[start : start + n], spec))
        start += n
    gradient: Any = nests[0] if isinstance(argnums, int) else tuple(nests)
    value = output if recorded else lower(output, _never)  # Note [When grad records its own backward]
    if has_aux:
        return gradient, (value, tree_map(lambda x: lower(x, keep) if isinstance(x, Tensor) else x, aux))
    return gradient, value


def _never(t: Tensor) -> bool:
    return False


def _lowering(outer: bool, fresh: set[int]) -> Callable[[Tensor], bool]:
    """Whether a result keeps its graph: Note [When grad records its own backward]."""
    if not outer:
        return _never
    return lambda t: reaches_outside(t, fresh)


def _check_argnums(argnums: object, count: int, api: str) -> list[int]:
    """The differentiated positions, counted from 0, checked as torch.func checks them."""
    kind = type(argnums).__name__
    items: tuple[object, ...] = argnums if isinstance(argnums, tuple) else (argnums,)  # pyright: ignore[reportUnknownVariableType] -- checked below
    numbers = [a for a in items if isinstance(a, int) and not isinstance(a, bool)]
    if len(numbers) != len(items) or isinstance(argnums, bool):
        raise ArgumentError(ARGNUMS_TYPE.format(api=api, type=kind))
    if not numbers:
        raise ArgumentValueError(ARGNUMS_EMPTY.format(api=api))
    for a in numbers:
        if not -count <= a < count:
            raise ArgumentValueError(ARGNUM_RANGE.format(api=api, argnum=a, count=count))
    indices = [a % count for a in numbers]
    if len(set(indices)) != len(indices):
        raise ArgumentValueError(ARGNUMS_DUPLICATE.format(api=api, argnums=tuple(numbers)))
    return indices


def _check_inputs(leaves: list[Any], spec: TreeSpec, argnum: int, api: str) -> None:
    for j, x in enumerate(leaves):
        if isinstance(x, Tensor) and (x.dtype.is_floating_point or x.dtype.is_complex):
            continue
        where = leaf_paths(spec, f"args[{argnum}]")[j]
        if not isinstance(x, Tensor):
            raise ArgumentError(NOT_A_TENSOR_INPUT.format(api=api, where=where, type=type(x).__name__))
        raise ArgumentError(NOT_FLOAT_INPUT.format(api=api, where=where, dtype=x.dtype.name))


def _split(result: object, has_aux: bool, api: str) -> tuple[Tensor, object]:
    aux: object = None
    if has_aux:
        if not isinstance(result, tuple):
            raise FuncError(AUX_NOT_PAIR.format(api=api, what=type(result).__name__))
        pair: tuple[object, ...] = result  # pyright: ignore[reportUnknownVariableType] -- any tuple
        if len(pair) != 2:
            raise FuncError(AUX_NOT_PAIR.format(api=api, what=f"a tuple of {len(pair)}"))
        result, aux = pair
    if not isinstance(result, Tensor):
        raise FuncError(OUTPUT_NOT_TENSOR.format(api=api, type=type(result).__name__))
    if result.dim() != 0:
        raise FuncError(OUTPUT_NOT_SCALAR.format(api=api, ndim=result.dim(), shape=list(result.shape)))
    return result, aux


def _differentiate(output: Tensor, lifted: list[Lifted], outer: bool) -> tuple[list[Tensor], bool]:
    """The gradients of ``output`` at the lifted leaves (zeros where it does not depend on
    one), and whether the backward pass was recorded."""
    out = physical(output)
    leaves = [m.leaf for m in lifted]
    if not out.requires_grad:
        return [filled_like(t, 0.0) for t in leaves], False
    fresh = {id(m.leaf) for m in lifted if m.fresh}
    record = outer and reaches_outside(out, fresh)
    seed = None if out.numel() == 1 else filled_like(out, 1.0)
    if current_levels():
        with _BELOW_BATCHING:  # Note [The backward pass below batching] in _lift.py
            found = autograd_grad([out], leaves, [seed], retain_graph=True, create_graph=record, allow_unused=True)
    else:
        found = autograd_grad([out], leaves, [seed], retain_graph=True, create_graph=record, allow_unused=True)
    return [filled_like(t, 0.0) if g is None else g for g, t in zip(found, leaves)], record

