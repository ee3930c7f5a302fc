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

Note [grad inside vmap]
~~~~~~~~~~~~~~~~~~~~~~~
``Batched`` sits above the Autograd keys, so inside ``vmap`` the batching layer unwraps
first and autograd records on the physical tensors, which hold every sample. A batched
argument is lifted at its bottom: the plain physical tensor becomes the leaf and is
wrapped again, level by level, as the caller's argument was (``_unwrap``/``_wrap``). The
output is then a batch of scalars; seeding the backward pass with ones gives each
sample's gradient in its own slice of the leaf, since no sample's output depends on
another sample's slice.

An argument that is *not* batched at some running level (``vmap(grad(f), in_dims=(None,
0))(params, x)``) would get the sum over that batch of the per-sample gradients: every
sample's output reaches the one shared tensor. So before lifting, ``_materialize`` makes it
batched at every running level where it is not, as an expanded view of the same data
(``unsqueeze(0).expand(...)``, no copy) -- then each sample reaches only its own slice,
and its gradient comes out per sample, as torch.func's does. torch.func gets the same
result differently: its grad level sits inside the vmap level, so the backward formulas
themselves run batched; here autograd is below batching, so the batch must be in the
leaf. The expand goes through the dispatcher, so when the argument requires grad an
enclosing level still differentiates through it.

Note [The backward pass below batching]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Inside ``vmap`` the ``Batched`` key is in the include set, so every op call meets the
batching layer, which passes calls on plain tensors straight down. The backward pass of
a ``grad`` only ever sees plain tensors -- autograd sits below batching, so every node
was recorded, and saved its tensors, after the batching layer had unwrapped them -- so
``grad`` runs it with ``Batched`` excluded: the formulas' ops skip that pass-through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..autograd import AccumulateGrad, Node, edge_of, set_history
from ..batching import BatchedTensor, Level, current_levels, make_batched
from ..tensor import Tensor, empty_meta, make_view, numpy_dtype
from ..dispatch import DispatchKey, DispatchKeySet, local_include

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
    view = t.detach()  # the op, so a trace records it (Note [detach is an op] in autograd/_methods.py)
    node = AliasBackward()
    node.next_edges = (edge_of(t),)
    set_history(view, node)
    return view


def _fresh_leaf(t: Tensor) -> Tensor:
    leaf = t.detach()  # no history, no Autograd key; the op, so a trace records it
    leaf.requires_grad_()
    return leaf


Chain = tuple[tuple[int, int], ...]  # (level, batch dim) of each wrapper, lowest level first


def _unwrap(t: Tensor) -> tuple[Tensor, Chain]:
    """The plain tensor at the bottom of ``t``'s batching wrappers, and the wrappers."""
    chain: list[tuple[int, int]] = []
    while isinstance(t, BatchedTensor):
        chain.append((t._batch_level, t._batch_dim))
        t = t._batch_value
    chain.reverse()
    return t, tuple(chain)


def _wrap(t: Tensor, chain: Chain) -> Tensor:
    """``t`` wrapped as ``chain`` says (``_unwrap``'s inverse)."""
    for level, bdim in chain:
        t = make_batched(t, bdim, level)
    return t


def _materialize(t: Tensor, levels: tuple[Level, ...], outer: bool) -> Tensor:
    """``t`` batched at every running level: expanded where it is not (Note [grad inside vmap])."""
    bottom, chain = _unwrap(t)
    dims = dict(chain)
    if all(level.level in dims for level in levels):
        return t
    sizes = {level.level: level.batch_size for level in levels}
    current = bottom
    for number in sorted({*dims, *sizes}):
        if number in dims:
            current = make_batched(current, dims[number], number)
        else:
            current = make_batched(_expand(current, sizes[number], outer), 0, number)
    return current


# The keys that see every op call: while one is on (a trace, a dispatch mode), a view made
# directly would be a tensor they never saw (typedops.trace would freeze it as a constant).
_WATCHERS: Final = int(DispatchKeySet([DispatchKey.Tracer, DispatchKey.Python]))


def _expand(t: Tensor, size: int, outer: bool) -> Tensor:
    """``t`` as ``size`` equal samples, batch dimension first: a view with stride 0."""
    if type(t) is Tensor and not (outer and t.requires_grad) and not int(local_include()) & _WATCHERS:
        # Nothing would record the expand: make the view directly, not through two ops.
        return make_view(t, (size, *t._shape), (0, *t._strides), t._offset)
    return t.unsqueeze(0).expand([size, *t.shape])


def _lift_plain(t: Tensor, outer: bool) -> tuple[Tensor, bool]:
    if outer and t.requires_grad:
        return _alias(t), False
    return _fresh_leaf(t), True


def lift(t: Tensor, outer: bool) -> Lifted:
    """``t`` lifted for differentiation (Notes [Lifting an argument], [grad inside vmap])."""
    levels = current_levels()
    if not levels and not isinstance(t, BatchedTensor):
        leaf, fresh = _lift_plain(t, outer)
        return Lifted(leaf, leaf, fresh)
    bottom, chain = _unwrap(_materialize(t, levels, outer))
    leaf, fresh = _lift_plain(bottom, outer)
    return Lifted(_wrap(leaf, chain), leaf, fresh, lambda g: _wrap(g, chain))


def physical(t: Tensor) -> Tensor:
    """The plain tensor autograd records on for ``t``."""
    return _unwrap(t)[0] if isinstance(t, BatchedTensor) else t


def lower(t: Tensor, keep: Callable[[Tensor], bool]) -> Tensor:
    """``t`` without its history unless ``keep(t)``: a result of this level."""
    bottom, chain = _unwrap(t)
    if bottom.requires_grad and not keep(bottom):
        return _wrap(bottom.detach(), chain)  # the op, so a trace records it
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
