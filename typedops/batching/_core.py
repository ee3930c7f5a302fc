"""The core ops the batching layer calls on physical tensors (moving, padding, slicing and
stacking batch dimensions), looked up by name on first use.

The batching layer sits below the core library, so it cannot import it: it reaches the ops
through the dispatcher's ``ops.core`` namespace, which loads the core library when first
read. Calls go through the dispatcher, so autograd records them and tracing sees them.
"""

from __future__ import annotations

from typing import Any, Final, cast

from ..dispatch import DispatchKey, OperatorHandle, exclude_keys, ops
from ..tensor import Tensor
from ..vocabulary import Device

__all__ = ["core_op", "movedim", "to_front", "pad_to_rank", "expand_batch", "probe"]

_META: Final = Device("meta")

_HANDLES: Final[dict[tuple[str, str], OperatorHandle]] = {}


def core_op(name: str, overload: str = "default") -> OperatorHandle:
    """The handle of ``core::name.overload`` (remembered after the first lookup)."""
    handle = _HANDLES.get((name, overload))
    if handle is None:
        handle = _HANDLES[(name, overload)] = getattr(getattr(ops.core, name), overload)
    return handle


def movedim(t: Tensor, source: int, destination: int) -> Tensor:
    """``t`` with dimension ``source`` moved to ``destination`` (both non-negative): a
    permute view through the dispatcher, or ``t`` itself when nothing moves."""
    if source == destination:
        return t
    order = [d for d in range(t.ndim) if d != source]
    order.insert(destination, source)
    result: Tensor = core_op("permute").call(t, order)
    return result


def to_front(t: Tensor, bdim: int) -> Tensor:
    """The physical tensor ``t`` with its batch dimension ``bdim`` first."""
    return t if bdim == 0 else movedim(t, bdim, 0)


def pad_to_rank(t: Tensor, rank: int) -> Tensor:
    """A physical tensor with its batch dimension first, given size-1 dimensions after the
    batch dimension until one sample has ``rank`` dimensions (for broadcasting against
    samples of that rank)."""
    missing = rank - (t.ndim - 1)
    if missing <= 0:
        return t
    shape = [t.shape[0], *([1] * missing), *t.shape[1:]]
    result: Tensor = core_op("reshape").call(t, shape)
    return result


def expand_batch(t: Tensor, batch_size: int) -> Tensor:
    """An unbatched ``t`` seen as a batch of ``batch_size`` equal samples (batch dimension
    first; an expand view, no copy)."""
    front: Tensor = core_op("unsqueeze").call(t, 0)
    result: Tensor = core_op("expand").call(front, [batch_size, *t.shape])
    return result


# Note [Probing a sample]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Where the physical tensors cannot stand for the samples -- a batch of 0-dim samples is a
# 1-d tensor, which matmul accepts and whose dims differ -- a rule calls the op on meta
# tensors shaped like the samples: it raises exactly the error the op raises without vmap,
# and its result says the rank of a sample's result. No data is touched, and the keys that
# watch calls (a trace, a dispatch mode, the profiler) are excluded: they never see it.
_UNSEEN: Final = [DispatchKey.Python, DispatchKey.Tracer, DispatchKey.Profiler, DispatchKey.Batched]


def probe(handle: OperatorHandle, args: list[Any], kwargs: dict[str, Any] | None = None) -> Any:
    """``handle`` called on meta tensors shaped like one sample of each tensor of ``args``
    (and of the lists among them): Note [Probing a sample]."""
    empty = core_op("empty", "memory_format")

    def sample(a: Any) -> Any:
        if isinstance(a, Tensor):
            return empty.call(list(a.shape), dtype=a.dtype, device=_META)
        return [sample(t) for t in cast("list[object]", a)] if isinstance(a, list) else a

    with exclude_keys(_UNSEEN):
        return handle.call(*(sample(a) for a in args), **(kwargs or {}))
