"""The recorded graph: nodes, edges, saved tensors, and what autograd kernels call to record.

Note [The graph]
~~~~~~~~~~~~~~~~
A recorded op makes one ``Node`` (its ``grad_fn``). The node's ``next_edges`` hold, per
differentiable input of the op, ``(node, input_nr)`` -- the input's own ``grad_fn`` and
which of that node's outputs the input is -- or None when the input needs no gradient. A
leaf that requires grad has an ``AccumulateGrad`` node instead of a grad_fn, made once
and kept on the tensor, which adds what reaches it into ``.grad``. The backward pass
(_engine.py) walks these edges from the outputs. ``next_functions`` shows them as PyTorch
does: ``((MulBackward0, 0), (AccumulateGrad, 0))``.

Note [Saved tensors and versions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A node keeps what its backward formula needs as ``SavedTensor``s: the tensor and the
version of its storage when it was saved (views share their base's storage, hence its
counter: Note [Shared version counter] in tensor/_storage.py). Unpacking at backward
compares the version and raises PyTorch's "modified by an inplace operation" error when
they differ. After a backward pass without ``retain_graph`` the node drops what it saved;
unpacking then raises the "backward through the graph a second time" error.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final

from ..tensor import AUTOGRAD_BIT_FOR_DEVICE, AUTOGRAD_BITS, Tensor
from ..vocabulary import ScalarType
from ._messages import FREED, LEAF_INPLACE, VERSION, VIEW_INPLACE, AutogradError

__all__ = [
    "Node",
    "AccumulateGrad",
    "SavedTensor",
    "AutogradMeta",
    "Edge",
    "gradient_edge",
    "edge_of",
    "save",
    "save_output",
    "unpack",
    "set_history",
    "check_inplace",
    "mark_view",
    "freed",
    "meta_of",
]

Edge = tuple["Node", int]
_SEQUENCE: Final = itertools.count()


class Node:
    """One recorded op of the graph: its backward is ``apply(grads) -> grads``.

    ``grads`` holds one gradient per output of the forward op (None where nothing flowed);
    the result holds one per entry of ``next_edges``.
    """

    __slots__ = ("next_edges", "out_meta", "seq", "pre_hooks", "retains", "released", "__weakref__")
    _name: ClassVar[str] = "Node"

    def __init__(self) -> None:
        self.next_edges: tuple[Edge | None, ...] = ()
        # (shape, dtype, device) of each output of the forward op, for checking and
        # materializing the gradients that flow in.
        self.out_meta: list[tuple[tuple[int, ...], ScalarType, Any]] = []
        self.seq = next(_SEQUENCE)
        self.pre_hooks: dict[int, list[Callable[[Tensor], Tensor | None]]] | None = None
        self.retains: dict[int, Tensor] | None = None
        self.released = False

    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((None, 0) if e is None else e for e in self.next_edges)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise NotImplementedError(f"{self.name()} has no backward")

    def release(self) -> None:
        """Drop saved tensors (after a backward pass without retain_graph)."""
        self.released = True

    def __repr__(self) -> str:
        return f"<{self.name()} object>"


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the gradient into the leaf's ``.grad``."""

    __slots__ = ("variable",)
    _name = "AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self.variable = variable
        self.out_meta = [meta_of(variable)]


class AutogradMeta:
    """Per-tensor autograd state beyond ``grad_fn``: the leaf's AccumulateGrad node, the
    leaf's hooks, the base of a recorded view."""

    __slots__ = ("accumulate", "edge", "hooks", "view_base", "retains_grad")

    def __init__(self) -> None:
        self.accumulate: AccumulateGrad | None = None
        self.edge: Edge | None = None  # (accumulate, 0), made once
        self.hooks: list[Callable[[Tensor], Tensor | None]] = []
        self.view_base: Tensor | None = None
        self.retains_grad = False


def autograd_meta(t: Tensor) -> AutogradMeta:
    meta: AutogradMeta | None = t._autograd_meta
    if meta is None:
        meta = t._autograd_meta = AutogradMeta()
    return meta


def meta_of(t: Tensor) -> tuple[tuple[int, ...], ScalarType, Any]:
    return (t._shape, t._dtype, t._device)


def gradient_edge(t: Tensor) -> Edge:
    """Where a gradient for ``t`` goes: its grad_fn, or its leaf's AccumulateGrad node."""
    fn = t.grad_fn
    if fn is not None:
        return fn, t._output_nr
    meta = autograd_meta(t)
    if meta.edge is None:
        meta.accumulate = AccumulateGrad(t)
        meta.edge = (meta.accumulate, 0)
    return meta.edge


def edge_of(t: Tensor | None) -> Edge | None:
    """``gradient_edge(t)`` for a tensor that requires grad, else None (every recorded op
    calls it per input: the common cases come first)."""
    if t is None:
        return None
    fn = t.grad_fn
    if fn is not None:
        return fn, t._output_nr
    if not t.key_bits & AUTOGRAD_BITS:
        return None
    meta: AutogradMeta | None = t._autograd_meta
    if meta is not None and meta.edge is not None:
        return meta.edge
    return gradient_edge(t)


class SavedTensor:
    """A tensor a node saved, with its version then (Note [Saved tensors and versions])."""

    __slots__ = ("tensor", "version", "output_nr")

    def __init__(self, tensor: Tensor, output_nr: int) -> None:
        self.tensor = tensor
        self.version = tensor._storage.version
        self.output_nr = output_nr  # -1: an input of the op


def save(t: Tensor | None) -> SavedTensor | None:
    return None if t is None else SavedTensor(t, -1)


def save_output(t: Tensor, output_nr: int = 0) -> SavedTensor:
    return SavedTensor(t, output_nr)


def unpack(saved: SavedTensor | None, node: Node) -> Any:
    """The saved tensor, after the version check; raises if the node freed its tensors."""
    if saved is None:
        if node.released:
            raise freed(node)
        return None
    t = saved.tensor
    now = t._storage.version
    if now != saved.version:
        what = f"{t._dtype.name} tensor of shape {list(t._shape)}"
        role = f"output {saved.output_nr}" if saved.output_nr >= 0 else "an input"
        raise AutogradError(VERSION.format(what=what, role=role, node=node.name(), now=now, saved=saved.version))
    return t


def freed(node: Node) -> AutogradError:
    return AutogradError(FREED.format(node=node.name()))


def set_history(result: Tensor, node: Node, output_nr: int = 0) -> None:
    """Make ``result`` output ``output_nr`` of ``node``: it requires grad and has a grad_fn."""
    result.key_bits |= AUTOGRAD_BIT_FOR_DEVICE[result._device.type]
    result.grad_fn = node
    if output_nr or result._output_nr:
        result._output_nr = output_nr
    node.out_meta.append((result._shape, result._dtype, result._device))


def check_inplace(t: Tensor, op: str) -> None:
    """Refuse an in-place op on a leaf that requires grad, or on a recorded view."""
    if t.requires_grad:
        if t.grad_fn is None:
            raise AutogradError(LEAF_INPLACE.format(op=op))
        meta: AutogradMeta | None = t._autograd_meta
        if meta is not None and meta.view_base is not None:
            raise AutogradError(VIEW_INPLACE.format(op=op))


def mark_view(result: Tensor, base: Tensor) -> None:
    """Remember that ``result`` is a recorded view of ``base`` (see check_inplace)."""
    autograd_meta(result).view_base = base
