"""``vmap``: run a function written for one sample over a batch (torch.func.vmap's surface).

``vmap(f, in_dims, out_dims)(*args)`` opens a level (Note [Levels]), wraps each batched
argument as a ``BatchedTensor`` of that level, calls ``f``, and turns each output back into
a plain tensor with the batch dimension at its ``out_dim``. While it runs, the ``Batched``
key is in this context's include set, so every op call in ``f`` -- also one on plain tensors
or with no tensor at all (``randn``) -- meets the batching layer: random ops can then obey
``randomness``, and calls on plain tensors pass straight through (docs/vmap.md, "Batched
tensors and levels").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

from ..dispatch import DispatchKey, include_keys
from ..tensor import Tensor
from ._core import core_op, expand_batch, movedim
from ._levels import SAME_DRAWS, Level, Randomness, SameDraws, pop_level, push_level
from ._messages import (
    BAD_CHUNK_SIZE,
    BAD_RANDOMNESS,
    BATCH_SIZES,
    IN_DIM_NOT_INT,
    IN_DIM_NOT_TENSOR,
    IN_DIM_RANGE,
    IN_DIMS_STRUCTURE,
    IN_DIMS_TYPE,
    NO_INPUTS,
    NOTHING_TO_MAP,
    OUT_DIM_NONE_BATCHED,
    OUT_DIM_RANGE,
    OUT_DIMS_STRUCTURE,
    OUT_DIMS_TYPE,
    OUT_NOT_TENSOR,
)
from ._tensor import BatchedTensor, make_batched
from ._tree import Spec, broadcast_dims, flatten, leaf_paths, unflatten
from ..vocabulary import ArgumentValueError

__all__ = ["vmap"]

F = TypeVar("F", bound=Callable[..., Any])
_RANDOMNESS: Final = ("error", "different", "same")
_include_batched: Final = include_keys(DispatchKey.Batched)


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or repr(fn)


def vmap(
    fn: F,
    in_dims: int | tuple[Any, ...] = 0,
    out_dims: int | tuple[Any, ...] | None = 0,
    *,
    randomness: Randomness = "error",
    chunk_size: int | None = None,
) -> F:
    """``fn`` mapped over a batch dimension of its arguments (``torch.func.vmap``).

    ``in_dims``: per positional argument, the dimension that runs over the batch -- an int
    (negative counts from the end), None (not batched), or for a tuple, list or dict
    argument the same structure of those; one int or None stands for everything below it.
    Keyword arguments are not batched. ``out_dims``: where each output gets the batch
    dimension (None: the output must not depend on the batch). ``randomness``: what a random
    op inside does -- "error" (raise), "different" (new values per sample) or "same".
    ``chunk_size``: run that many samples at a time (memory for speed).
    """
    if randomness not in _RANDOMNESS:
        raise ArgumentValueError(BAD_RANDOMNESS.format(randomness=randomness))
    if chunk_size is not None and not _positive_int(chunk_size):
        raise ArgumentValueError(BAD_CHUNK_SIZE.format(chunk_size=chunk_size))
    if not isinstance(in_dims, (int, tuple)):  # pyright: ignore[reportUnnecessaryIsInstance] -- untyped callers
        raise ArgumentValueError(IN_DIMS_TYPE.format(fn=_name(fn), in_dims=in_dims, kind=type(in_dims)))
    _check_out_dims(fn, out_dims)
    mode = randomness

    flat = None if chunk_size is not None else _flat_dims(in_dims)

    @functools.wraps(fn)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if flat is not None:
            found = _fast_dims(args, (flat,) * len(args) if isinstance(flat, int) else flat)
            if found is not None:
                return _run(fn, out_dims, mode, list(args), found[0], None, found[1], kwargs)
        return _call(fn, in_dims, out_dims, mode, chunk_size, args, kwargs)

    return cast("F", vmapped)


# Note [Flat arguments]
# ~~~~~~~~~~~~~~~~~~~~~
# Most calls pass tensors and plain values with an int in_dims or a flat tuple of ints and
# Nones. For those, vmap skips flattening and matching structures: ``_flat_dims`` reads
# the in_dims once, when vmap() is called, and ``_fast_dims`` checks one call's arguments
# against them, returning None -- the general path, which also raises the errors -- on
# anything else (a container argument, a non-tensor with an int in_dim, a dim out of
# range, batch sizes that differ).
def _flat_dims(in_dims: object) -> int | tuple[int | None, ...] | None:
    if type(in_dims) is int:
        return in_dims
    if isinstance(in_dims, tuple):
        items = cast("tuple[object, ...]", cast("object", in_dims))
        if all(d is None or type(d) is int for d in items):
            return cast("tuple[int | None, ...]", items)
    return None


def _fast_dims(args: tuple[Any, ...], dims: tuple[int | None, ...]) -> tuple[list[int | None], int] | None:
    if len(dims) != len(args):
        return None
    checked: list[int | None] = []
    size = -1
    for value, d in zip(args, dims):
        if type(value) in _CONTAINERS:
            return None
        if d is not None:
            if not isinstance(value, Tensor):
                return None
            shape = value._shape
            n = len(shape)
            if not -n <= d < n:
                return None
            if d < 0:
                d += n
            if size < 0:
                size = shape[d]
            elif shape[d] != size:
                return None
        checked.append(d)
    return (checked, size) if size >= 0 else None


_CONTAINERS: Final = (tuple, list, dict)


def _kind(value: object) -> str:
    return str(type(value))


def _single(out_dims: object) -> object:
    """A single output's out_dim: an int, None, or the one item of a one-item tuple (as torch.vmap)."""
    unchanged = out_dims
    if isinstance(out_dims, tuple):
        items = cast("tuple[object, ...]", cast("object", out_dims))
        if len(items) == 1:
            return items[0]
    return unchanged


def _positive_int(value: object) -> bool:
    return type(value) is int and value > 0


def _check_out_dims(fn: Callable[..., Any], out_dims: Any) -> None:
    leaves, _ = flatten(out_dims)
    for d in leaves:
        if d is not None and type(d) is not int:
            raise ArgumentValueError(OUT_DIMS_TYPE.format(fn=_name(fn), out_dims=out_dims))


def _call(
    fn: Callable[..., Any],
    in_dims: Any,
    out_dims: Any,
    randomness: Randomness,
    chunk_size: int | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if not args:
        raise ArgumentValueError(NO_INPUTS.format(fn=_name(fn)))
    leaves, spec = flatten(args)
    dims = _in_dims(fn, in_dims, leaves, spec)
    size = _batch_size(fn, dims, leaves, spec)
    if chunk_size is None or chunk_size >= size:
        return _run(fn, out_dims, randomness, leaves, dims, spec, size, kwargs)
    return _chunked(fn, out_dims, randomness, chunk_size, leaves, dims, spec, size, kwargs)


def _in_dims(fn: Callable[..., Any], in_dims: Any, leaves: list[Any], spec: Spec) -> list[int | None]:
    """One checked, non-negative in_dim (or None) per flattened argument."""
    dims = broadcast_dims(in_dims, spec)
    if dims is None:
        dims_spec = flatten(in_dims)[1]
        raise ArgumentValueError(IN_DIMS_STRUCTURE.format(
            fn=_name(fn), in_dims=in_dims, dims_structure=dims_spec, inputs_structure=spec,
        ))  # fmt: skip
    checked: list[int | None] = []
    for value, d in zip(leaves, dims):
        if d is not None and type(d) is not int:
            raise ArgumentValueError(IN_DIM_NOT_INT.format(fn=_name(fn), in_dims=in_dims, in_dim=d))
        if d is not None and not isinstance(value, Tensor):
            raise ArgumentValueError(IN_DIM_NOT_TENSOR.format(fn=_name(fn), in_dims=in_dims, in_dim=d, kind=_kind(value)))
        if d is not None:
            ndim = value.ndim
            if not -ndim <= d < ndim:
                raise ArgumentValueError(IN_DIM_RANGE.format(fn=_name(fn), in_dims=in_dims, in_dim=d, ndim=ndim))
            d %= ndim
        checked.append(d)
    return checked


def _batch_size(fn: Callable[..., Any], dims: list[int | None], leaves: list[Any], spec: Spec) -> int:
    sizes = [(i, cast("Tensor", leaves[i]).shape[d]) for i, d in enumerate(dims) if d is not None]
    if not sizes:
        raise ArgumentValueError(NOTHING_TO_MAP)
    if any(s != sizes[0][1] for _, s in sizes):
        names = leaf_paths(spec, "args")
        raise ArgumentValueError(BATCH_SIZES.format(
            sizes=[s for _, s in sizes], names=", ".join(names[i] for i, _ in sizes),
        ))  # fmt: skip
    return sizes[0][1]


def _run(
    fn: Callable[..., Any],
    out_dims: Any,
    randomness: Randomness,
    leaves: list[Any],
    dims: list[int | None],
    spec: Spec | None,
    size: int,
    kwargs: dict[str, Any],
) -> Any:
    """One level: wrap, call, unwrap. ``spec`` None: the leaves are the arguments (Note
    [Flat arguments])."""
    level, token = push_level(size, randomness)
    try:
        with _include_batched:
            number = level.level
            wrapped = [v if d is None else make_batched(v, d, number) for v, d in zip(leaves, dims)]
            outputs = fn(*(wrapped if spec is None else unflatten(wrapped, spec)), **kwargs)
            if type(out_dims) is int and isinstance(outputs, Tensor):
                return _unwrap(fn, outputs, out_dims, out_dims, level)
            return _unwrap_outputs(fn, outputs, out_dims, level)
    finally:
        pop_level(token)


def _unwrap_outputs(fn: Callable[..., Any], outputs: Any, out_dims: Any, level: Level) -> Any:
    flat, spec = flatten(outputs)
    if spec.kind == "leaf":
        # A single tensor output takes an int, None or a one-element tuple (as torch.vmap).
        dims = broadcast_dims(_single(out_dims), spec)
    else:
        dims = broadcast_dims(out_dims, spec)
    if dims is None:
        dims_spec = flatten(out_dims)[1]
        raise ArgumentValueError(OUT_DIMS_STRUCTURE.format(
            fn=_name(fn), out_dims=out_dims, dims_structure=dims_spec, outputs_structure=spec,
        ))  # fmt: skip
    return unflatten([_unwrap(fn, v, d, out_dims, level) for v, d in zip(flat, dims)], spec)


def _unwrap(fn: Callable[..., Any], value: Any, out_dim: int | None, out_dims: Any, level: Level) -> Any:
    batched = isinstance(value, BatchedTensor) and value._batch_level == level.level
    if out_dim is None:
        if batched:
            raise ArgumentValueError(OUT_DIM_NONE_BATCHED.format(fn=_name(fn)))
        return value
    if not isinstance(value, Tensor):
        raise ArgumentValueError(OUT_NOT_TENSOR.format(fn=_name(fn), kind=_kind(value)))
    rank = value.ndim + 1
    if not -rank <= out_dim < rank:
        raise ArgumentValueError(OUT_DIM_RANGE.format(fn=_name(fn), out_dims=out_dims, out_dim=out_dim,
                                                      ndim=value.ndim, rank=rank))  # fmt: skip
    out_dim %= rank
    if isinstance(value, BatchedTensor) and value._batch_level == level.level:
        return movedim(value._batch_value, value._batch_dim, out_dim)
    # Not batched at this level: every sample is the same tensor (torch expands it too).
    return movedim(expand_batch(value, level.batch_size), 0, out_dim)


def _chunked(
    fn: Callable[..., Any],
    out_dims: Any,
    randomness: Randomness,
    chunk_size: int,
    leaves: list[Any],
    dims: list[int | None],
    spec: Spec,
    size: int,
    kwargs: dict[str, Any],
) -> Any:
    """vmap over ``chunk_size`` samples at a time, the outputs concatenated along their out_dims."""
    slice_op = core_op("slice", "Tensor")
    chunks: list[Any] = []
    same = SameDraws() if randomness == "same" else None
    token = SAME_DRAWS.set(same)
    try:
        for start in range(0, size, chunk_size):
            end = min(start + chunk_size, size)
            part = [v if d is None else slice_op.call(v, d, start, end, 1) for v, d in zip(leaves, dims)]
            if same is not None:
                same.cursor = 0  # Note [Same draws across chunks] in _levels.py
            chunks.append(_run(fn, out_dims, randomness, part, dims, spec, end - start, kwargs))
    finally:
        SAME_DRAWS.reset(token)
    flat_chunks = [flatten(c) for c in chunks]
    out_spec = flat_chunks[0][1]
    dims_out = broadcast_dims(_single(out_dims) if out_spec.kind == "leaf" else out_dims, out_spec)
    assert dims_out is not None, "each chunk's outputs were checked against out_dims"
    cat = core_op("cat")
    joined: list[Any] = []
    for i, d in enumerate(dims_out):
        parts = [fc[0][i] for fc in flat_chunks]
        joined.append(parts[0] if d is None else cat.call(parts, d % parts[0].ndim))
    return unflatten(joined, out_spec)
