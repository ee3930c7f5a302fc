"""``x[index]`` and ``x[index] = value`` on ``Tensor``: Note [Basic indexing].

Note [Basic indexing]
~~~~~~~~~~~~~~~~~~~~~
As torch's (and numpy's) *basic* indexing: an index is one item or a tuple of them, each
an integer (any object with ``__index__``: ``np.int64(1)``, a 0-dim integer tensor), a
slice, ``None`` or ``...``. The result is a view of ``x`` made by the core view
ops, so autograd, vmap, tracing and fake tensors see the ops it is made of:

- an integer ``i`` is ``select(dim, i)`` (the dim goes; ``-1`` is the last element);
- a slice ``a:b:c`` is ``slice(dim, a, b, c)`` (a full ``:`` is no op; a step must be
  positive, as torch's; ``value`` assigned to a view is fitted to it as torch's
  ``copy_to`` does: leading dims of size 1 dropped, then expanded);
- ``None`` is ``unsqueeze(dim)``, a new dim of size 1;
- ``...`` stands for as many ``:`` as the other items leave dims (one at most, as numpy
  says; torch 2.13 takes several).

An index that makes no view (``x[...]``, ``x[:]`` of a 0-dim tensor, ``x[()]``) gives a
view of all of ``x`` (``view`` to the same shape), not ``x`` itself, as torch.
``x[index] = value`` writes into that view: ``fill_`` for a number, ``copy_`` for a
tensor (broadcast to the view's shape), so version counters and autograd see an in-place
op.

Tensors, lists, numpy arrays and bools among the items (*advanced* indexing: ``x[mask]``,
``x[[0, 2]]``, ``x[:, idx]``; ``x[True]`` is a 0-dim mask, a new dim of size 1 in a copy,
as torch's) are applied after the basic items, as torch applies them:
each stands at the view's dim it is met at (a bool mask covers as many dims as it has),
and ``index.Tensor`` picks a copy of those elements (Note [Advanced indexing] in
core/kernels/_index.py); ``x[mask] = v`` is ``index_put_`` of ``v`` converted to ``x``'s
dtype.

The errors are torch's: an integer out of range, too many indices and a float index are
IndexErrors (``DimensionError``), another kind of index a TypeError (``ArgumentError``), a
zero or negative step a ValueError.
"""

from __future__ import annotations

import operator
from types import EllipsisType
from typing import TYPE_CHECKING, Any, SupportsIndex, Union, cast

from ..boxing import is_number, python_number, type_name
from ..vocabulary import ArgumentError, ArgumentValueError, DimensionError, ScalarType
from ._messages import (
    INDEX_OUT_OF_RANGE,
    INDEX_TYPE,
    INDEX_VALUE_TYPE,
    INDEX_ZERO_DIM,
    SLICE_BOUND,
    SLICE_STEP,
    TOO_MANY_INDICES,
    TWO_ELLIPSES,
)

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from ._tensor import Tensor

__all__ = ["Index", "index_into", "write_into"]

_HUGE_STEP = 2**40

IndexItem: TypeAlias = Union[SupportsIndex, slice, EllipsisType, None, "Tensor", "list[Any]"]
Index: TypeAlias = Union[IndexItem, "tuple[IndexItem, ...]"]


def _is_integer(item: object, tensor_class: type[Tensor]) -> bool:
    if isinstance(item, bool):
        return False
    if isinstance(item, tensor_class):  # a 0-dim integer tensor indexes as its value (uint8: a mask)
        dtype = item._dtype
        return not item._shape and dtype in (ScalarType.int64, ScalarType.int32, ScalarType.int16, ScalarType.int8)
    if getattr(item, "ndim", 0) != 0 or getattr(getattr(item, "dtype", None), "kind", "i") == "b":
        return False  # a numpy array, or a numpy bool: a mask
    return hasattr(type(item), "__index__")


def index_into(self: Tensor, index: Any, tensor_class: type[Tensor]) -> Tensor:
    """``self[index]``: Note [Basic indexing]."""
    view, advanced = _apply(self, index, tensor_class)
    if advanced is not None:  # a copy of the picked elements: Note [Advanced indexing] in core/kernels/_index.py
        return view.index(advanced)
    if view is self:  # no view made: a view of all of self, as torch's alias (view saves
        return self.view(list(self._shape))  # nothing for autograd, batches, and traces shape-only)
    return view


def _apply(self: Tensor, index: Any, tensor_class: type[Tensor]) -> tuple[Tensor, list[Tensor | None] | None]:
    """The view the basic items of ``index`` make, and the ``indices`` of ``index.Tensor``
    for its tensors, lists and arrays (None: there are none)."""
    items = tuple(
        _as_tensor(item, self, tensor_class) if _advanced(item, tensor_class) or isinstance(item, bool) else item
        for item in _items(index)
    )
    consumed = 0
    ellipses = 0
    for item in items:
        if item is Ellipsis:
            ellipses += 1
        elif item is None:
            continue
        elif isinstance(item, slice) or _is_integer(item, tensor_class):
            consumed += 1
        elif isinstance(item, tensor_class):
            consumed += _span(item)
        elif isinstance(item, float) or type(item).__name__ == "bool":  # np.bool_ too, an IndexError as torch's
            raise DimensionError(INDEX_TYPE.format(kind=type_name(item)))
        else:  # a str, a dict...: a TypeError, as torch's
            raise ArgumentError(INDEX_TYPE.format(kind=type_name(item)))
    if ellipses > 1:
        raise DimensionError(TWO_ELLIPSES)
    ndim = len(self._shape)
    if consumed > ndim:
        if ndim == 0 and any(_is_integer(item, tensor_class) for item in items):
            raise DimensionError(INDEX_ZERO_DIM)
        raise DimensionError(TOO_MANY_INDICES.format(ndim=ndim))
    result = self
    dim = 0  # the result's dim the next item applies to
    source = 0  # the same dim of self, for messages
    picks: list[tuple[int, Tensor]] = []  # (the result dim it starts at, an index tensor), in order
    for item in items:
        if item is Ellipsis:
            dim += ndim - consumed
            source += ndim - consumed
        elif item is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif isinstance(item, slice):
            result = _sliced(result, dim, item)
            dim += 1
            source += 1
        elif _is_integer(item, tensor_class):
            i = operator.index(item)
            size = result._shape[dim]
            if not -size <= i < size:
                raise DimensionError(INDEX_OUT_OF_RANGE.format(index=i, dim=source, size=size))
            result = result.select(dim, i)
            source += 1
        else:
            picks.append((dim, item))
            dim += _span(item)
            source += _span(item)
    if not picks:
        return result, None
    indices: list[Tensor | None] = []
    d = 0
    for start, pick in picks:  # None for each dim before the next pick; a pick covers its span
        indices += [None] * (start - d)
        indices.append(pick)
        d = start + _span(pick)
    return result, indices


def _span(index: Tensor) -> int:
    """How many dims an index tensor covers: a bool mask its own, an integer tensor one."""
    return index.ndim if index.dtype in (ScalarType.bool, ScalarType.uint8) else 1


def _as_tensor(item: Any, self: Tensor, tensor_class: type[Tensor]) -> Tensor:
    """A list or numpy array of indices (or a mask) as a tensor on ``self``'s device."""
    if isinstance(item, tensor_class):
        return item
    from ._tensor import tensor

    picked = tensor(item, device=self.device)
    if picked.dtype.is_floating_point and not picked.numel():  # x[[]]: no positions, as torch's int64
        picked = picked.to(ScalarType.int64)
    return picked


def _items(index: object) -> tuple[Any, ...]:
    if isinstance(index, tuple):
        return index  # pyright: ignore[reportUnknownVariableType] -- a tuple of any items is an index
    return (index,)


def _advanced(item: object, tensor_class: type[Tensor]) -> bool:
    """A tensor, a list or a numpy array (a 0-dim bool one too) as an index item (advanced
    indexing)."""
    if isinstance(item, list):
        return True
    if isinstance(item, tensor_class):
        return not _is_integer(item, tensor_class)
    return getattr(item, "ndim", 0) != 0 or type(item).__name__ == "ndarray"


def _bound(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, SupportsIndex) or getattr(value, "ndim", 0) != 0:
        raise ArgumentError(SLICE_BOUND.format(kind=type_name(value)))
    return operator.index(value)


def _sliced(t: Tensor, dim: int, item: Any) -> Tensor:
    step = _bound(item.step)
    step = 1 if step is None else step
    if step <= 0:
        raise ArgumentValueError(SLICE_STEP)
    start, stop = _bound(item.start), _bound(item.stop)
    if start is None and stop is None and step == 1:
        return t
    if step > _HUGE_STEP:  # past any dim: the first element only (its stride would overflow int64)
        step = max(t._shape[dim], 1)
    return t.slice(dim, start, stop, step)


def _stripped(value: Tensor) -> Tensor:
    """``value`` without its leading dims of size 1, as torch's ``copy_to`` strips them."""
    shape = value._shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.view(list(shape[lead:])) if lead else value


def _fitted(value: Tensor, target: Tensor) -> Tensor:
    """``value`` stripped (``_stripped``) and expanded to ``target``'s shape, as torch's
    ``copy_to`` fits it (``x[1, 1] = tensor([5.0])``)."""
    if value._shape == target._shape:
        return value
    value = _stripped(value)
    return value if value._shape == target._shape else value.expand(list(target._shape))


def write_into(self: Tensor, index: Any, value: Any, tensor_class: type[Tensor]) -> None:
    """``self[index] = value``: Note [Basic indexing]."""
    if not isinstance(value, tensor_class):
        if not is_number(value):
            raise ArgumentError(INDEX_VALUE_TYPE.format(kind=type(value).__name__))
        value = python_number(value)  # np.float32(2): Note [Numbers that are not Python's]
    view, advanced = _apply(self, index, tensor_class)
    if advanced is not None:  # index_put_ of a tensor of self's dtype, as torch's
        if isinstance(value, tensor_class):
            values = _stripped(value if value.dtype is self.dtype else value.to(self.dtype))
        else:  # through an op: fill_'s overflow check, and a dispatch mode sees it
            values = self.new_full([], cast("bool | int | float | complex", value))
        view.index_put_(advanced, values)
    elif isinstance(value, tensor_class):
        view.copy_(_fitted(value, view))
    else:
        view.fill_(cast("bool | int | float | complex", value))
