"""Batching rules of the view and join families (``shape``, ``dims``, ``dim``, ``new_dim``,
``cat``), and what every rule shares: Note [Rule families] in _rules.py.

A view's rule calls the view op on the physical tensor with its batch dimension first, so
the result is a view of the physical tensor -- it aliases the batched input exactly as the
op's result aliases its input, and in-place writes through it reach the input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

from ..dispatch import DispatchKeySet, OperatorHandle
from ..schema import FunctionSchema
from ..tensor import Tensor, wrap_dim
from ..vocabulary import TypedopsError
from ._core import core_op, expand_batch, pad_to_rank, probe, to_front
from ._fallback import _open_blocks, forced, level_of, run_fallback
from ._messages import EXPAND_NEW_MINUS_ONE, VmapError
from ._levels import RUNNING
from ._tensor import BATCHED_BIT, BatchedTensor, escaped, make_batched

__all__ = ["Family", "VIEW_FAMILIES", "call_below", "tensor_positions"]

Kernel = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Family:
    """A rule family: ``build(handle)`` makes an op's rule; ``fits(schema)`` says why the
    family cannot batch an op of that schema (None: it can)."""

    build: Callable[[OperatorHandle], Kernel]
    fits: Callable[[FunctionSchema], str | None]


def tensor_positions(schema: FunctionSchema) -> list[int]:
    """Positions of the positional ``Tensor`` arguments."""
    return [i for i, a in enumerate(schema.positional) if str(a.type) == "Tensor"]


def call_below(handle: OperatorHandle, keys: DispatchKeySet, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call ``handle`` on physical tensors: below ``Batched`` with the call's key set, or
    from the top when one of them is batched at a lower level (nested vmap)."""
    for a in args:
        if isinstance(a, Tensor) and a.key_bits & BATCHED_BIT:
            return handle.call(*args, **kwargs)
        if isinstance(a, list) and level_of([cast("object", a)]):
            return handle.call(*args, **kwargs)
    return handle.redispatch(keys, *args, **kwargs)


def _self_view(handle: OperatorHandle, adjust: Callable[[list[Any], int, int], None]) -> Kernel:
    """A rule for an op on ``self`` (first) whose other arguments ``adjust(new_args, rank,
    batch_size)`` rewrites in place for the physical tensor, batch dimension first."""

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if type(self) is not BatchedTensor:
            return handle.redispatch(keys, *args, **kwargs)
        if _open_blocks and forced():
            return run_fallback(handle, keys, args, kwargs)
        if self._batch_level not in RUNNING:
            escaped(self._batch_level)
        p = to_front(self._batch_value, self._batch_dim)
        new = [p, *args[1:]]
        try:
            adjust(new, len(self._shape), p.shape[0])
            out = call_below(handle, keys, new, kwargs)
        except TypedopsError as error:  # the op's own error for the sample (sizes of expand, view, permute)
            if not isinstance(error, VmapError):
                probe(handle, list(args), kwargs)
            raise
        return make_batched(out, 0, self._batch_level)

    return rule


def _fits_self(schema: FunctionSchema, names: tuple[str, ...], types: tuple[str, ...]) -> str | None:
    positional = schema.positional
    if not positional or str(positional[0].type) != "Tensor" or any("Tensor" in str(a.type) for a in schema.arguments[1:]):
        return "it must take one Tensor, first"
    found = [a for a in positional[1:] if a.name in names]
    if not found or any(str(a.type) not in types for a in found):
        return f"it needs an argument named {' or '.join(names)} of type {' or '.join(types)}"
    if len(schema.returns) != 1 or str(schema.returns[0].type) != "Tensor":
        return "it must return one Tensor"
    return None


# -- shape: view, reshape, expand (a size list; the batch size goes first) ---------------
_SIZE_NAMES: Final = ("size", "shape")


def _shape(handle: OperatorHandle) -> Kernel:
    index = next(i for i, a in enumerate(handle.schema.positional) if a.name in _SIZE_NAMES)
    expanding = handle.schema.name == "expand"

    def adjust(new: list[Any], rank: int, batch: int) -> None:
        size = list(new[index])
        if expanding:  # expand adds leading dimensions: the sample gets them after the batch
            for dim, target in enumerate(size[: len(size) - rank]):
                if target < 0:  # padding would turn the new dimension into an existing one of size 1
                    raise VmapError(EXPAND_NEW_MINUS_ONE.format(dim=dim, rank=rank))
            new[0] = pad_to_rank(new[0], len(size))
        new[index] = [batch, *size]

    return _self_view(handle, adjust)


def _fits_shape(schema: FunctionSchema) -> str | None:
    return _fits_self(schema, _SIZE_NAMES, ("SymInt[]", "int[]"))


# -- dims: permute (a permutation of every dimension) -----------------------------------------
def _dims(handle: OperatorHandle) -> Kernel:
    def adjust(new: list[Any], rank: int, batch: int) -> None:
        new[1] = [0, *(wrap_dim(d, rank) + 1 for d in new[1])]

    return _self_view(handle, adjust)


def _fits_dims(schema: FunctionSchema) -> str | None:
    return _fits_self(schema, ("dims",), ("int[]",))


# -- dim and new_dim: transpose, select, slice, squeeze / unsqueeze -------------------------
_DIM_NAMES: Final = ("dim", "dim0", "dim1")


def _dim_rule(handle: OperatorHandle, extra: int) -> Kernel:
    """Each int ``dim``-named argument shifts past the batch dimension after being checked
    against one sample's rank (plus ``extra`` for ops that insert a dimension)."""
    indices = [i for i, a in enumerate(handle.schema.positional) if a.name in _DIM_NAMES]

    def adjust(new: list[Any], rank: int, batch: int) -> None:
        for i in indices:
            new[i] = wrap_dim(new[i], rank + extra) + 1

    shifted = _self_view(handle, adjust)
    if extra:
        return shifted

    def rule(keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if type(self) is not BatchedTensor or self._shape or (_open_blocks and forced()):
            return shifted(keys, *args, **kwargs)
        return _zero_dim_samples(handle, keys, indices, args, kwargs)

    return rule


def _zero_dim_samples(handle: OperatorHandle, keys: DispatchKeySet, indices: list[int], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Note [Dims of 0-dim samples]."""
    self = args[0]
    if self._batch_level not in RUNNING:
        escaped(self._batch_level)
    sample = probe(handle, list(args), kwargs)  # the op's own error for a 0-dim sample, else its result's rank
    p = core_op("unsqueeze").call(to_front(self._batch_value, self._batch_dim), 1)
    new = [p, *args[1:]]
    for i in indices:
        new[i] = wrap_dim(new[i], 1) + 1
    out = call_below(handle, keys, new, kwargs)
    if out.ndim - 1 > sample.ndim:
        out = core_op("squeeze", "dim").call(out, 1)
    return make_batched(out, 0, self._batch_level)


# Note [Dims of 0-dim samples]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A 0-dim tensor takes dim 0 and -1 as if it had one dimension (``transpose(0, -1)`` and
# ``squeeze(0)`` return it), but a batch of 0-dim samples is a 1-d physical tensor, which
# has no dimension after the batch dimension for them to shift to. The rule probes the op
# on a 0-dim meta sample first (Note [Probing a sample] in _core.py), which raises what the
# op raises without vmap (``select() cannot be applied to a 0-dim tensor.``); then it gives
# each sample the dimension of size 1 the op sees (``unsqueeze(p, 1)``), calls the op on
# that, and drops the dimension again where the probe's result has none. Every step is a
# view, so the result still aliases the input.


def _fits_dim(schema: FunctionSchema) -> str | None:
    return _fits_self(schema, _DIM_NAMES, ("int",))


# -- cat: Tensor[] joined along dim -----------------------------------------------------------
def _cat(handle: OperatorHandle) -> Kernel:
    """Join along ``dim`` (checked against the first tensor's rank): batched tensors with
    their batch dimension first, unbatched ones expanded over the batch."""

    def rule(keys: DispatchKeySet, tensors: Any, dim: int = 0) -> Any:
        level = level_of([tensors])
        if not level:
            return handle.redispatch(keys, tensors, dim)
        if _open_blocks and forced():
            return run_fallback(handle, keys, (tensors, dim), {})
        if level not in RUNNING:
            escaped(level)
        if any(not t._shape for t in tensors):  # cat's own error for 0-dim samples (1-d physical tensors)
            probe(handle, [tensors, dim])
        batch = next(t._batch_value.shape[t._batch_dim] for t in tensors
                     if type(t) is BatchedTensor and t._batch_level == level)  # fmt: skip
        physical = [
            to_front(t._batch_value, t._batch_dim)
            if type(t) is BatchedTensor and t._batch_level == level
            else expand_batch(t, batch)
            for t in tensors
        ]
        shift = wrap_dim(dim, tensors[0].ndim) + 1
        return make_batched(call_below(handle, keys, [physical, shift], {}), 0, level)

    return rule


def _fits_cat(schema: FunctionSchema) -> str | None:
    if [str(a.type) for a in schema.arguments] != ["Tensor[]", "int"]:
        return "it must take (Tensor[] tensors, int dim)"
    return None


VIEW_FAMILIES: Final = {
    "shape": Family(_shape, _fits_shape),
    "dims": Family(_dims, _fits_dims),
    "dim": Family(lambda handle: _dim_rule(handle, 0), _fits_dim),
    "new_dim": Family(lambda handle: _dim_rule(handle, 1), _fits_dim),
    "cat": Family(_cat, _fits_cat),
}
