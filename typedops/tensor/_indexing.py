"""``x[index]`` and ``x[index] = value`` on ``Tensor``: Note [Basic indexing].

Note [Basic indexing]
~~~~~~~~~~~~~~~~~~~~~
As torch's (and numpy's) *basic* indexing: an index is one item or a tuple of them, each
an integer (any object with ``__index__``: ``np.int64(1)``, a 0-dim integer tensor), a
slice, ``None``, ``...`` or a bool. The result is a view of ``x`` made by the core view
ops, so autograd, vmap, tracing and fake tensors see the ops it is made of:

- an integer ``i`` is ``select(dim, i)`` (the dim goes; ``-1`` is the last element);
- a slice ``a:b:c`` is ``slice(dim, a, b, c)`` (a full ``:`` is no op; a step must be
  positive, as torch's);
- ``None`` is ``unsqueeze(dim)``, a new dim of size 1; ``True`` is the same, ``False`` a
  new dim of size 0, as in torch;
- ``...`` stands for as many ``:`` as the other items leave dims (one at most, as numpy
  says; torch 2.13 takes several).

An index that makes no view (``x[...]``, ``x[:]`` of a 0-dim tensor, ``x[()]``) gives a
view of all of ``x`` (``as_strided`` over the same geometry), not ``x`` itself, as torch.
``x[index] = value`` writes into that view: ``fill_`` for a number, ``copy_`` for a
tensor (broadcast to the view's shape), so version counters and autograd see an in-place
op. Tensors and lists as indices (*advanced* indexing: ``x[mask]``, ``x[[0, 2]]``) are
refused with an ``UnsupportedError`` that names the ops that do the same
(``core.where``, ``masked`` arithmetic, ``select``/``cat``), until an ``index`` op exists.

The errors are torch's: an integer out of range, too many indices and a float index are
IndexErrors (``DimensionError``), another kind of index a TypeError (``ArgumentError``), a
zero or negative step a ValueError.
"""

from __future__ import annotations

import operator
from types import EllipsisType
from typing import TYPE_CHECKING, Any, SupportsIndex, Union, cast

from ..vocabulary import ArgumentError, ArgumentValueError, DimensionError, ScalarType, UnsupportedError
from ._messages import (
    ADVANCED_INDEX,
    INDEX_OUT_OF_RANGE,
    INDEX_TYPE,
    INDEX_VALUE_TYPE,
    INDEX_ZERO_DIM,
    SLICE_STEP,
    TOO_MANY_INDICES,
    TWO_ELLIPSES,
)

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from ._tensor import Tensor

__all__ = ["Index", "index_into", "write_into"]

IndexItem: TypeAlias = Union[SupportsIndex, slice, EllipsisType, None, "Tensor"]
Index: TypeAlias = Union[IndexItem, "tuple[IndexItem, ...]"]


def _is_integer(item: object, tensor_class: type[Tensor]) -> bool:
    if isinstance(item, bool):
        return False
    if isinstance(item, tensor_class):  # a 0-dim integer tensor indexes as its value
        dtype = item._dtype
        return not item._shape and not (dtype.is_floating_point or dtype.is_complex or dtype is ScalarType.bool)
    return hasattr(type(item), "__index__") and getattr(item, "ndim", 0) == 0  # not a numpy array


def index_into(self: Tensor, index: Any, tensor_class: type[Tensor]) -> Tensor:
    """``self[index]``: Note [Basic indexing]."""
    items = _items(index)
    consumed = 0
    ellipses = 0
    for item in items:
        if item is Ellipsis:
            ellipses += 1
        elif item is None or isinstance(item, bool):
            continue
        elif isinstance(item, slice) or _is_integer(item, tensor_class):
            consumed += 1
        elif _advanced(item, tensor_class):
            raise UnsupportedError(ADVANCED_INDEX.format(kind=_kind(item)))
        elif isinstance(item, float):
            raise DimensionError(INDEX_TYPE.format(kind=_kind(item)))
        else:  # a str, a dict...: a TypeError, as torch's
            raise ArgumentError(INDEX_TYPE.format(kind=_kind(item)))
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
    for item in items:
        if item is Ellipsis:
            dim += ndim - consumed
            source += ndim - consumed
        elif item is None or item is True:
            result = result.unsqueeze(dim)
            dim += 1
        elif item is False:
            result = result.unsqueeze(dim).slice(dim, 0, 0)
            dim += 1
        elif isinstance(item, slice):
            result = _sliced(result, dim, item)
            dim += 1
            source += 1
        else:
            i = operator.index(item)
            size = result._shape[dim]
            if not -size <= i < size:
                raise DimensionError(INDEX_OUT_OF_RANGE.format(index=i, dim=source, size=size))
            result = result.select(dim, i)
            source += 1
    if result is self:  # no view made: a view of all of self, as torch's alias
        result = self.as_strided(list(self._shape), list(self._strides), self._offset)
    return result


def _items(index: object) -> tuple[Any, ...]:
    if isinstance(index, tuple):
        return index  # pyright: ignore[reportUnknownVariableType] -- a tuple of any items is an index
    return (index,)


def _advanced(item: object, tensor_class: type[Tensor]) -> bool:
    """A tensor, a list or a numpy array as an index item (advanced indexing)."""
    return isinstance(item, (tensor_class, list)) or getattr(item, "ndim", 0) != 0


def _kind(item: object) -> str:
    return type(item).__name__


def _sliced(t: Tensor, dim: int, item: Any) -> Tensor:
    step = 1 if item.step is None else operator.index(item.step)
    if step <= 0:
        raise ArgumentValueError(SLICE_STEP)
    start = None if item.start is None else operator.index(item.start)
    stop = None if item.stop is None else operator.index(item.stop)
    if start is None and stop is None and step == 1:
        return t
    return t.slice(dim, start, stop, step)


def write_into(self: Tensor, index: Any, value: Any, tensor_class: type[Tensor]) -> None:
    """``self[index] = value``: Note [Basic indexing]."""
    target = index_into(self, index, tensor_class)
    if isinstance(value, tensor_class):
        target.copy_(value)
        return
    if not isinstance(value, (bool, int, float, complex)):
        import numpy as np

        if not isinstance(value, np.generic):
            raise ArgumentError(INDEX_VALUE_TYPE.format(kind=type(value).__name__))
        value = cast("bool | int | float | complex", value.item())  # np.float32(2): Note [Numbers that are not Python's]
    target.fill_(value)
