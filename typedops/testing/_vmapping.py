"""opcheck's ``test_vmap``: the op's batching rule against the for-loop fallback.

Note [opcheck's vmap check]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each tensor among the op's positional arguments (and each in a tensor list) gets a batch
of two along a new dimension 0: the sample itself and, for a floating or complex tensor,
a second sample with other values (``1.5 * x + 0.25``; other dtypes repeat the sample).
Keyword arguments are not batched, as ``vmap`` batches none. The op then runs under
``vmap`` twice on fresh copies: once as the batching layer picks (the op's rule -- the
``vmap:`` family of its yaml entry, or the one given to ``register_vmap`` -- or the
fallback for an op without one), once under ``force_fallback()``, which calls the op per
sample and stacks. The results, and the batched arguments afterwards (an in-place op's
writes), must agree up to rounding; so must whether they raise. An op without a tensor
among its positional arguments has nothing to batch.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, cast

from ..batching import force_fallback, vmap
from ..dispatch import OperatorHandle
from ..tensor import Tensor, array_of, wrap_array
from . import _messages as msg
from ._values import clone, close_values, describe, difference

__all__ = ["check_vmap"]

BATCH = 2


def _batch(t: Tensor) -> Tensor:
    import numpy as np

    sample = array_of(t)
    other = sample * 1.5 + 0.25 if t.dtype.is_floating_point or t.dtype.is_complex else sample
    return wrap_array(np.stack([sample, other.astype(sample.dtype)]), t.dtype, t.device)


def _batched(value: object) -> tuple[object, int | None]:
    unbatched: tuple[object, int | None] = (value, None)
    if isinstance(value, Tensor) and not value.is_meta:
        return _batch(value), 0
    if isinstance(value, (list, tuple)):
        items: list[object] = list(cast("list[object]", value))
        tensors = [v for v in items if isinstance(v, Tensor) and not v.is_meta]
        if items and len(tensors) == len(items):
            batched = [_batch(v) for v in tensors]
            return (batched if isinstance(value, list) else tuple(batched)), 0
    return unbatched


def _run(op: OperatorHandle, args: list[Any], in_dims: tuple[int | None, ...], kwargs: Mapping[str, Any]) -> Any:
    """The op under vmap on fresh copies: (result, arguments afterwards), or the exception."""
    call_args, call_kwargs = clone(args), clone(dict(kwargs))

    def per_sample(*sample: Any) -> Any:
        return op(*sample, **call_kwargs)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fallback's once-per-op "slow" warning
            return vmap(per_sample, in_dims)(*call_args), call_args
    except Exception as error:  # noqa: BLE001 -- compared with the other path's outcome
        return error


def _outcome(value: Any) -> str:
    return f"raises {type(value).__name__}: {value}" if isinstance(value, Exception) else f"gives {describe(value[0])}"


def check_vmap(op: OperatorHandle, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str | None:
    pairs = [_batched(v) for v in args]
    in_dims = tuple(d for _, d in pairs)
    if all(d is None for d in in_dims):
        return None
    batched = [v for v, _ in pairs]
    rule = _run(op, batched, in_dims, kwargs)
    with force_fallback():
        loop = _run(op, batched, in_dims, kwargs)
    if isinstance(rule, Exception) or isinstance(loop, Exception):
        if isinstance(rule, Exception) and isinstance(loop, Exception) and type(rule) is type(loop):
            return None  # the op cannot run on these batched arguments at all
        return msg.VMAP_DIFFERS.format(rule=_outcome(rule), loop=_outcome(loop))
    if not close_values(rule[0], loop[0]):
        text = _outcome(rule) + difference(rule[0], loop[0])
        return msg.VMAP_DIFFERS.format(rule=text, loop=_outcome(loop))
    if not close_values(rule[1], loop[1]):
        text = f"leaves its arguments as {describe(rule[1])}" + difference(rule[1], loop[1])
        return msg.VMAP_DIFFERS.format(rule=text, loop=f"as {describe(loop[1])}")
    return None
