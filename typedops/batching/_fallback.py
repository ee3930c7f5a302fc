"""The boxed fallback on ``Batched``: every op works under vmap, one sample at a time.

Note [The for-loop fallback]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An op without a batching rule reaches this one boxed kernel (write-up 002 in shared/seeds/
ends with it). It finds the highest vmap level among the arguments on the stack (Note
[Levels]); with none -- a call on plain tensors inside vmap -- it passes the call on below
``Batched``. Otherwise:

1. A ``CompositeImplicitAutograd`` op runs its composite kernel on the batched tensors
   themselves: the ops it calls are batched in turn (PyTorch decomposes such ops too).
2. Any other op runs once per sample: every argument batched at the level -- a tensor, or
   a tensor of a ``Tensor[]`` -- is replaced by its sample (``select`` on the batch
   dimension), the op is called on the stack of samples below ``Batched`` (or from the top,
   when a sample is itself batched at a lower level), and each returned tensor is
   ``stack``-ed over the samples into a result batched at the level. Selecting and stacking
   go through the dispatcher, so autograd records them.
3. Ops that write an argument (``Tensor(a!)``, in-place and ``out=``) write each sample's
   slice of the physical tensor, and return the argument itself; a written argument that
   is not batched while another is raises PyTorch's in-place error (its samples would all
   write one tensor). Ops returning a view refuse: stacked samples would be a copy, and a
   later in-place write through the "view" would silently miss its base.

The first loop over an op warns, once per op, that it is slow. ``force_fallback()`` makes
every op take this path even where a rule exists (tests, benchmarks).
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from typing import Any, Final, cast

from ..dispatch import DispatchKey, DispatchKeySet, Library, OperatorHandle, boxed, call_through_stack
from ..schema import FunctionSchema
from ..tensor import Tensor
from ._core import core_op
from ._messages import (
    FALLBACK_EMPTY,
    FALLBACK_NO_RETURNS,
    FALLBACK_SLOW,
    FALLBACK_RESIZE,
    FALLBACK_VIEW,
    INPLACE,
    VmapError,
)
from ._tensor import BatchedTensor, live_level, make_batched

__all__ = ["force_fallback", "forced", "fallback", "level_of", "install_fallback", "run_fallback"]

_CIA: Final = DispatchKey.CompositeImplicitAutograd

# Note [Forcing the fallback]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# force_fallback() sets a context variable (per thread and task) and keeps one item per
# open block, in the whole process, in a list; a rule tests the list first, so it pays one
# global load while no block is open anywhere. A forced op with a rule runs the fallback as
# if it had none, except that view ops loop too: their results are stacked copies, equal
# in value to the rule's views (what tests and benchmarks compare) but not aliasing their
# input. Entering appends an item and leaving pops one: each is one C call, atomic under
# the GIL, so threads opening and closing blocks at once lose no change, with no lock (as
# Note [The open-blocks list] in dispatch/_tls.py keeps the include/exclude blocks). A
# nonempty list only sends a rule on to ``forced()``, which reads this context's own
# variable.
_FORCED: Final = contextvars.ContextVar[bool]("typedops_vmap_force_fallback", default=False)
_open_blocks: Final[list[None]] = []


@contextmanager
def force_fallback() -> Generator[None, None, None]:
    """Make every op called in this block (this thread and asyncio task) take the
    for-loop fallback, even where a batching rule exists: for tests and benchmarks."""
    token = _FORCED.set(True)
    _open_blocks.append(None)
    try:
        yield
    finally:
        _open_blocks.pop()
        _FORCED.reset(token)


def forced() -> bool:
    """Whether ``force_fallback()`` is open in this context."""
    return bool(_open_blocks) and _FORCED.get()


def items_of(value: object) -> list[object]:
    """A list or tuple's items (a ``Tensor[]`` on a stack), else ``[value]``."""
    if isinstance(value, (list, tuple)):
        return list(cast("list[object]", value))
    return [value]


def level_of(values: Iterable[object]) -> int:
    """The highest vmap level among the batched tensors in ``values`` (lists and tuples
    searched one deep), 0 when there is none."""
    level = 0
    for v in values:
        if isinstance(v, BatchedTensor):
            if v._batch_level > level:
                level = v._batch_level
        elif isinstance(v, (list, tuple)):
            for t in items_of(cast("object", v)):
                if isinstance(t, BatchedTensor) and t._batch_level > level:
                    level = t._batch_level
    return level


_warned: Final[set[str]] = set()


def fallback(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any], *, views: bool = False) -> None:
    """The boxed kernel on ``Batched``: Note [The for-loop fallback]. ``views`` lets view
    ops loop too (only for ``force_fallback``: their results are copies)."""
    schema = op.schema
    base = len(stack) - len(schema.arguments)
    level = level_of(stack[base:])
    if not level:
        op.redispatch_boxed(keys, stack)
        return
    live_level(level)
    if op.has_kernel_for(_CIA):
        op.redispatch_boxed(keys, stack)
        return
    _for_loop(op, keys, stack, base, level, views)


def run_fallback(op: OperatorHandle, keys: DispatchKeySet, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The fallback for an op with a rule under ``force_fallback()`` (Note [Forcing the
    fallback]): the returns as the op's unboxed call gives them."""
    return call_through_stack(op, lambda stack: fallback(op, keys, stack, views=True), args, kwargs)


def _check_schema(schema: FunctionSchema, views: bool) -> None:
    for index, ret in enumerate(schema.returns):
        if ret.alias is not None and not ret.is_write and not views:
            raise VmapError(FALLBACK_VIEW.format(op=schema.full_name))
        if str(ret.type) not in ("Tensor", "Tensor[]"):
            raise VmapError(FALLBACK_NO_RETURNS.format(op=schema.full_name, index=index, kind=ret.type))
    if not schema.returns:
        raise VmapError(FALLBACK_NO_RETURNS.format(op=schema.full_name, index=0, kind="nothing"))


def _written_returns(schema: FunctionSchema) -> list[int | None]:
    """Per return, the argument it is (a written alias), or None for a new tensor."""
    result: list[int | None] = []
    for ret in schema.returns:
        found = None
        if ret.is_write and ret.alias is not None:
            for i, arg in enumerate(schema.arguments):
                if arg.is_write and arg.alias is not None and arg.alias.before == ret.alias.before:
                    found = i
        result.append(found)
    return result


def _batch_size(args: list[Any], level: int) -> int:
    for v in args:
        for t in items_of(v):
            if isinstance(t, BatchedTensor) and t._batch_level == level:
                return t._batch_value.shape[t._batch_dim]
    raise AssertionError("a batched argument exists at the level")


def _check_writes(schema: FunctionSchema, args: list[Any], level: int) -> None:
    for i, arg in enumerate(schema.arguments):
        if not arg.is_write:
            continue
        for t in items_of(args[i]):
            if t is not None and not (isinstance(t, BatchedTensor) and t._batch_level == level):
                raise VmapError(INPLACE.format(op=schema.full_name))


# Note [Writes that resize]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The loop hands an op each sample of a batched ``out=`` (or in-place) tensor as a view
# of the batch. An op that must resize its ``out`` resizes that view: its writes land
# across the neighbouring samples' memory, and the batched tensor keeps its old shape, so
# the result would be silently wrong. torch.vmap refuses every ``out=`` op in its
# fallback; here an ``out=`` of the per-sample result's shape works (each sample is
# written in place), and one that would be resized is refused after the first sample
# that resizes it, with the written batches put back as they were (saved before the
# loop: the fallback is the slow path already, and warns so).
def _written_batches(schema: FunctionSchema, args: list[Any]) -> list[BatchedTensor]:
    return [t for i, arg in enumerate(schema.arguments) if arg.is_write for t in items_of(args[i]) if isinstance(t, BatchedTensor)]


def _written_samples(schema: FunctionSchema, sample: list[Any]) -> list[Tensor]:
    return [t for i, arg in enumerate(schema.arguments) if arg.is_write for t in items_of(sample[i]) if isinstance(t, Tensor)]


def _sample(value: Any, level: int, index: int) -> Any:
    if isinstance(value, BatchedTensor) and value._batch_level == level:
        return core_op("select", "int").call(value._batch_value, value._batch_dim, index)
    if isinstance(value, (list, tuple)):  # a Tensor?[] given as a tuple too (index_put((i,), v))
        return [_sample(v, level, index) for v in items_of(cast("object", value))]
    return value


def _for_loop(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any], base: int, level: int, views: bool) -> None:
    schema = op.schema
    _check_schema(schema, views)
    args = stack[base:]
    _check_writes(schema, args, level)
    size = _batch_size(args, level)
    if size == 0:
        raise VmapError(FALLBACK_EMPTY.format(op=schema.full_name))
    if schema.full_name not in _warned:
        _warned.add(schema.full_name)
        warnings.warn(FALLBACK_SLOW.format(op=schema.full_name), UserWarning, stacklevel=2)
    written = _written_batches(schema, args)
    saved = [(t, t._batch_value.clone()) for t in written]  # Note [Writes that resize]
    results: list[list[Any]] = []
    for index in range(size):
        sample = [_sample(v, level, index) for v in args]
        targets = _written_samples(schema, sample)
        before = [t._shape for t in targets]
        nested = level_of(sample) != 0
        if nested:
            op.call_boxed(sample)
        else:
            op.redispatch_boxed(keys, sample)
        if [t._shape for t in targets] != before:
            for t, values in saved:
                t._batch_value.copy_(values)
            raise VmapError(FALLBACK_RESIZE.format(op=schema.full_name, before=list(next(b for t, b in zip(targets, before) if t._shape != b))))
        results.append(sample)
    del stack[base:]
    stack.extend(_stacked(schema, args, results, level))


def _stacked(schema: FunctionSchema, args: list[Any], results: list[list[Any]], level: int) -> list[Any]:
    stack_op = core_op("stack")
    out: list[Any] = []
    for position, written in enumerate(_written_returns(schema)):
        if written is not None:
            out.append(args[written])
            continue
        per_sample = [r[position] for r in results]
        if isinstance(per_sample[0], Tensor):
            out.append(make_batched(stack_op.call(per_sample, 0), 0, level))
        else:
            count = len(per_sample[0])
            out.append([make_batched(stack_op.call([r[k] for r in per_sample], 0), 0, level) for k in range(count)])
    return out


def install_fallback() -> Library:
    """Register the for-loop fallback on ``Batched`` for every namespace."""
    library = Library("_", "IMPL")
    library.fallback(boxed(fallback), DispatchKey.Batched)
    return library

