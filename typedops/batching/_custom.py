"""``register_vmap``: batching rules for ops defined with ``@op`` or ``Library``.

Note [User vmap rules]
~~~~~~~~~~~~~~~~~~~~~~
``op.register_vmap(rule)`` is ``torch.library.register_vmap``: the rule is called as
``rule(info, in_dims, *args, **kwargs)`` -- the op's own arguments, with each tensor
batched at the running level replaced by its physical tensor (the batch dimension where
it is, not moved), ``in_dims`` one entry per argument in schema order (the batch dimension
of a batched tensor, None for anything else; a list of them for a ``Tensor[]``), and
``info`` a ``VmapInfo`` (``batch_size``, ``randomness``). It returns ``(result,
out_dims)``: ``out_dims`` an int or None per output (a tuple for an op with several
outputs), the batch dimension of each result, or None for a result that is the same for
every sample. The rule runs with the level's tensors unwrapped, so the ops it calls see
plain tensors (or tensors batched at outer levels, which those levels batch).

Registration checks that the rule can be called that way (``inspect.Signature.bind``
with the op's arguments), and its static type is ``Callable[Concatenate[VmapInfo, InDims,
P], tuple[Any, OutDims]]`` over the op's parameters ``P``
(``TypedOperatorHandle.register_vmap``): mypy and pyright refuse a rule whose parameters
do not fit the op's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

from ..dispatch import RULE_REGISTRARS, DispatchKey, DispatchKeySet, Library, OperatorHandle
from ..tensor import Tensor
from ..vocabulary import ArgumentError, RegistrationError
from ._fallback import _open_blocks, forced, level_of, run_fallback
from ._levels import level_alive
from ._messages import RULE_NOT_CALLABLE, RULE_OUT_DIM_RANGE, RULE_OUT_DIMS, RULE_RESULT, RULE_SIGNATURE
from ._tensor import BatchedTensor, escaped, make_batched

__all__ = ["register_vmap", "install_registrar"]


def _check_rule(handle: OperatorHandle, rule: Any) -> None:
    schema = handle.schema
    op = schema.full_name
    if not callable(rule):
        raise RegistrationError(RULE_NOT_CALLABLE.format(op=op, kind=type(rule).__name__))
    params = "".join(f", {a.name}" for a in schema.positional)
    if schema.kwarg_only:
        params += ", *" + "".join(f", {a.name}" for a in schema.kwarg_only)
    try:
        signature = inspect.signature(rule)
    except (TypeError, ValueError):
        return  # a builtin or C callable: nothing to check before a call
    try:
        signature.bind(None, None, *(None for _ in schema.positional), **{a.name: None for a in schema.kwarg_only})
    except TypeError as error:
        name = getattr(rule, "__qualname__", repr(rule))
        raise RegistrationError(RULE_SIGNATURE.format(rule=name, op=op, problem=error, params=params)) from None


def _unwrap(value: object, level: int) -> tuple[object, object]:
    """(value for the rule, its in_dim)."""
    unchanged = value
    if isinstance(value, BatchedTensor) and value._batch_level == level:
        return value._batch_value, value._batch_dim
    if isinstance(value, list):
        items = cast("list[object]", cast("object", value))
        if any(isinstance(v, BatchedTensor) for v in items):
            pairs = [_unwrap(v, level) for v in items]
            return [p for p, _ in pairs], [d for _, d in pairs]
    return unchanged, None


def _type_name(value: object) -> str:
    return type(value).__name__


def _as_tuple(value: object, count: int) -> tuple[object, ...]:
    """``value`` as a tuple of ``count`` items: itself if it is a tuple, else repeated."""
    if isinstance(value, tuple):
        return cast("tuple[object, ...]", value)
    return (value,) * count


def _wrap(op: str, result: object, out_dims: object, count: int, level: int) -> object:
    results = (result,) if count == 1 else _as_tuple(result, 0)
    dims = _as_tuple(out_dims, count)
    if len(results) != count or len(dims) != count:
        raise ArgumentError(RULE_OUT_DIMS.format(op=op, out_dims=out_dims, count=count))
    wrapped: list[object] = []
    for value, d in zip(results, dims):
        if d is None:
            wrapped.append(value)
            continue
        if type(d) is not int or not isinstance(value, Tensor):
            raise ArgumentError(RULE_OUT_DIMS.format(op=op, out_dims=out_dims, count=count))
        rank = value.ndim
        if not -rank <= d < rank:  # a 0-dim result has no dimension to hold the batch
            raise ArgumentError(RULE_OUT_DIM_RANGE.format(op=op, dim=d, rank=rank, low=-rank))
        wrapped.append(make_batched(value, d % rank, level))
    return wrapped[0] if count == 1 else tuple(wrapped)


def register_vmap(handle: OperatorHandle, rule: Callable[..., Any]) -> Library:
    """Register ``rule`` as ``handle``'s batching rule: Note [User vmap rules]."""
    _check_rule(handle, rule)
    schema = handle.schema
    op = schema.full_name
    names = [a.name for a in schema.arguments]
    count = len(schema.returns)

    def kernel(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        level = level_of((*args, *kwargs.values()))
        if not level:
            return handle.redispatch(keys, *args, **kwargs)
        if _open_blocks and forced():
            return run_fallback(handle, keys, args, kwargs)
        running = level_alive(level)
        if running is None:
            escaped(level)
        new_args: list[object] = []
        in_dims: list[object] = []
        for value in args:
            unwrapped, d = _unwrap(value, level)
            new_args.append(unwrapped)
            in_dims.append(d)
        new_kwargs: dict[str, object] = {}
        for name in names[len(args) :]:
            new_kwargs[name], d = _unwrap(kwargs[name], level)
            in_dims.append(d)
        answer: object = rule(running.info, tuple(in_dims), *new_args, **new_kwargs)
        kind = _type_name(answer)
        pair = _as_tuple(answer, 0)
        if kind != "tuple" or len(pair) != 2:
            raise ArgumentError(RULE_RESULT.format(op=op, kind=kind))
        return _wrap(op, pair[0], pair[1], count, level)

    library = Library(schema.namespace, "IMPL")
    library.impl(handle, kernel, DispatchKey.Batched, with_keys=True, check=False)
    return library


def install_registrar() -> None:
    RULE_REGISTRARS["vmap"] = register_vmap
