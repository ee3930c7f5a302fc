"""Lifting the differentiated arguments of ``grad`` and lowering its results.

Note [Lifting an argument]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``grad`` differentiates with respect to a tensor of its own, never the caller's: the
caller's tensor keeps its flags, history and ``.grad``. The lifted tensor shares the
caller's data (a view, as ``detach()`` is) and is either

- a *fresh leaf* (``detach()`` then ``requires_grad_()``), when nothing enclosing records
  the argument; or
- an *alias*: a view recorded with an ``AliasBackward0`` node whose one edge leads to the
  argument's own history, when the argument requires grad and grad mode was on at the
  call. The enclosing graph continues through it (Note [When grad records its own
  backward] in _grad.py).

Autograd records on plain tensors, so what is lifted is the argument's *physical* tensor;
``Lifted.seen`` is what ``f`` receives and ``Lifted.rewrap`` turns a gradient of the leaf
into a gradient of the argument as the caller passed it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..autograd import AccumulateGrad, Node, edge_of, set_history
from ..tensor import Tensor, empty_meta, make_view, numpy_dtype

__all__ = ["Lifted", "lift", "lower", "physical", "reaches_outside", "filled_like", "AliasBackward"]


def _same(t: Tensor) -> Tensor:
    return t


@dataclass(frozen=True)
class Lifted:
    """One differentiated tensor: what ``f`` sees, the plain tensor autograd differentiates
    with respect to, whether that is a fresh leaf, and how its gradient is given back."""

    seen: Tensor
    leaf: Tensor
    fresh: bool
    rewrap: Callable[[Tensor], Tensor] = _same


class AliasBackward(Node):
    """The node of a lifted alias: the gradient passes through unchanged."""

    __slots__ = ()
    _name = "AliasBackward0"

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        return (grads[0],)


def _alias(t: Tensor) -> Tensor:
    view = make_view(t, t._shape, t._strides, t._offset)
    node = AliasBackward()
    node.next_edges = (edge_of(t),)
    set_history(view, node)
    return view


def _fresh_leaf(t: Tensor) -> Tensor:
    leaf = make_view(t, t._shape, t._strides, t._offset)  # detach(): no history, no Autograd key
    leaf.requires_grad_()
    return leaf


def lift(t: Tensor, outer: bool) -> Lifted:
    """``t`` lifted for differentiation (Note [Lifting an argument])."""
    if outer and t.requires_grad:
        leaf = _alias(t)
        return Lifted(leaf, leaf, False)
    leaf = _fresh_leaf(t)
    return Lifted(leaf, leaf, True)


def physical(t: Tensor) -> Tensor:
    """The plain tensor autograd records on for ``t``."""
    return t


def lower(t: Tensor, keep: Callable[[Tensor], bool]) -> Tensor:
    """``t`` without its history unless ``keep(t)``: a result of this level."""
    if t.requires_grad and not keep(t):
        return make_view(t, t._shape, t._strides, t._offset)
    return t


def reaches_outside(t: Tensor, fresh: set[int]) -> bool:
    """Whether ``t``'s graph reaches a tensor requiring grad other than the fresh leaves
    (by id) of one ``grad`` call: whether an enclosing level can differentiate ``t``."""
    if not t.requires_grad:
        return False
    root = t.grad_fn
    if root is None:
        return id(t) not in fresh
    stack: list[Node] = [root]
    seen = {id(root)}
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in fresh:
                return True
            continue
        for edge in node.next_edges:
            if edge is not None and id(edge[0]) not in seen:
                seen.add(id(edge[0]))
                stack.append(edge[0])
    return False


def filled_like(t: Tensor, value: float) -> Tensor:
    """A new plain tensor of ``t``'s shape, dtype and device holding ``value`` (no history)."""
    import numpy as np

    if t._device.type == "meta":
        return empty_meta(t._shape, t._dtype)
    array: Any = np.full(t._shape, value, dtype=numpy_dtype(t._dtype))
    return Tensor._from_array(array, t._dtype, t._device)
