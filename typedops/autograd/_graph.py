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
unpacking then raises the "backward through the graph a second time" error. The generated
kernels keep a saved tensor as two fields of their node instead -- the tensor and its version
(``unpack_saved``) -- with no SavedTensor object between: Note [Nodes made by generated kernels].

Note [Nodes made by generated kernels]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Recording is on the path of every call on a tensor that requires grad, so the generated
autograd kernels (codegen's ``_derivatives_source.py``) make their node without a Python
``__init__`` frame: each generated node class sets ``__init__ = object.__init__`` (CPython
then calls object's C initializer directly), and the kernel writes every field of ``Node``
itself -- ``next_edges``, ``seq`` (from ``NODE_SEQUENCE``), ``pre_hooks``, ``retains``,
``released``, ``out_meta`` -- in the lines ``_node_lines`` emits. A field added to
``Node.__init__`` goes there too (tests/test_autograd.py checks that a recorded node
has every slot of ``Node`` set). The same kernels compute an input's edge in line for the
common cases (a leaf with its AccumulateGrad edge made, a non-leaf that is no view) and call
``edge_of`` for the rest, save a tensor as the pair ``s_x``/``v_x`` (the tensor, its
version), unpacked by ``unpack_saved`` with the version check and message of ``unpack``, and
give the result its Autograd key with one lookup, ``WITH_AUTOGRAD[key_bits]``. A result that
aliases no argument is a new tensor, whose ``_output_nr`` is the class default 0: only an
aliasing result's is reset.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final

from ..tensor import AUTOGRAD_BITS, Tensor, alias_of
from ..vocabulary import BACKEND_KEYS, DispatchKey, ScalarType, UnsupportedError, autograd_key_for
from ._grad_mode import is_grad_enabled
from ._messages import NO_BACKWARD, FREED, LEAF_INPLACE, VERSION, VIEW_INPLACE, VIEW_OF_LEAF_INPLACE, AutogradError

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
    "unpack_saved",
    "unpack_output",
    "NODE_SEQUENCE",
    "set_history",
    "WITH_AUTOGRAD",
    "check_inplace",
    "mark_view",
    "rebase_view",
    "CopySlices",
    "ViewOfBase",
    "freed",
    "meta_of",
]

Edge = tuple["Node", int]
NODE_SEQUENCE: Final = itertools.count()  # Node.seq: the recording order


class Node:
    """One recorded op of the graph: its backward is ``apply(grads) -> grads``.

    ``grads`` holds one gradient per output of the forward op (None where nothing flowed);
    the result holds one per entry of ``next_edges``.
    """

    __slots__ = ("next_edges", "out_meta", "seq", "pre_hooks", "retains", "released", "__weakref__")
    _name: ClassVar[str] = "Node"

    def __init__(self) -> None:
        # Note [Nodes made by generated kernels]: a field added here goes to their kernels too.
        self.next_edges: tuple[Edge | None, ...] = ()
        # (shape, dtype, device) of each output of the forward op, for checking and
        # materializing the gradients that flow in.
        self.out_meta: tuple[tuple[tuple[int, ...], ScalarType, Any], ...] = ()
        self.seq = next(NODE_SEQUENCE)
        self.pre_hooks: dict[int, list[Callable[[Tensor], Tensor | None]]] | None = None
        self.retains: dict[int, Tensor] | None = None
        self.released = False

    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((None, 0) if e is None else e for e in self.next_edges)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise UnsupportedError(NO_BACKWARD.format(node=self.name()))

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
        self.out_meta = (meta_of(variable),)


class AutogradMeta:
    """Per-tensor autograd state beyond ``grad_fn``: the leaf's AccumulateGrad node, the
    leaf's hooks, the base of a recorded view."""

    __slots__ = ("accumulate", "edge", "hooks", "view_base", "view_base_fn", "retains_grad")

    def __init__(self) -> None:
        self.accumulate: AccumulateGrad | None = None
        self.edge: Edge | None = None  # (accumulate, 0), made once
        self.hooks: list[Callable[[Tensor], Tensor | None]] = []
        self.view_base: Tensor | None = None
        self.view_base_fn: Node | None = None  # the base's grad_fn when this view's was made
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
        if t._autograd_meta is not None:
            fn = _fresh_view_fn(t, fn)
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
        if t._autograd_meta is not None:
            fn = _fresh_view_fn(t, fn)
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
        storage = tensor._storage  # Tensor._version, without the property: one per saved tensor
        self.version = 0 if storage is None else storage.version
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
    storage = t._storage  # Tensor._version, without the property
    now = 0 if storage is None else storage.version
    if now != saved.version:
        raise _modified(t, now, saved.version, saved.output_nr, node)
    return t


def unpack_saved(t: Tensor | None, version: int, node: Node, output_nr: int) -> Any:
    """``unpack`` for a tensor a generated kernel saved as the fields ``s_x``, ``v_x`` (the
    tensor, its version then): Note [Nodes made by generated kernels]. ``output_nr`` is
    which output of the node the tensor is, -1 for an input."""
    if t is None:
        if node.released:
            raise freed(node)
        return None
    storage = t._storage
    now = 0 if storage is None else storage.version
    if now != version:
        raise _modified(t, now, version, output_nr, node)
    return t


# Note [Saved outputs without a cycle]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An op whose formula reads its own result (exp, tanh, sigmoid, relu, sqrt...) saves it,
# and the result's grad_fn is the node: saving the result itself made a reference cycle,
# node -> result -> node, so a graph built and dropped without a backward (a forward pass
# with grad mode on, a graph kept with retain_graph) outlived its last reference until the
# garbage collector ran, and the tensors it held with it (those that had survived a
# collection could wait for a full one). PyTorch saves an output without its grad_fn for
# the same reason. A generated kernel saves ``alias_of(result)``: the same storage, so the
# same version counter (an in-place change of the result is still caught), and no
# history. ``unpack_output`` gives the formula that alias; under ``create_graph`` (grad
# mode on during backward) it gives a new alias whose grad_fn is the node again, so the
# formula's use of the result is differentiated through this node, as the result would be.
def unpack_output(t: Tensor | None, version: int, node: Node, output_nr: int) -> Any:
    """``unpack_saved`` for a saved output (Note [Saved outputs without a cycle])."""
    saved = unpack_saved(t, version, node, output_nr)
    if saved is None or not is_grad_enabled():
        return saved
    with_history = alias_of(saved)
    with_history.key_bits = WITH_AUTOGRAD[with_history.key_bits]
    with_history.grad_fn = node
    if output_nr:
        with_history._output_nr = output_nr
    return with_history


def _modified(t: Tensor, now: int, saved: int, output_nr: int, node: Node) -> AutogradError:
    what = f"{t._dtype.name} tensor of shape {list(t._shape)}"
    role = f"output {output_nr}" if output_nr >= 0 else "an input"
    return AutogradError(VERSION.format(what=what, role=role, node=node.name(), now=now, saved=saved))


def freed(node: Node) -> AutogradError:
    return AutogradError(FREED.format(node=node.name()))


class _WithAutograd(dict[int, int]):
    """A tensor's key bits -> the same bits with the Autograd key of the tensor's backend
    (``CPU`` -> ``AutogradCPU``; AutogradOther without a backend bit), filled on first use:
    one dict lookup where ``AUTOGRAD_BIT_FOR_DEVICE[t._device.type]`` reads two attributes
    besides. Emptied when it reaches ``_WITH_LIMIT`` entries (a program meets a few)."""

    def __missing__(self, bits: int) -> int:
        if len(self) >= _WITH_LIMIT:
            self.clear()
        backend = next((k for k in BACKEND_KEYS if bits >> k & 1), None)
        key = DispatchKey.AutogradOther if backend is None else autograd_key_for(backend)
        value = self[bits] = bits | 1 << key
        return value


_WITH_LIMIT: Final = 1024
WITH_AUTOGRAD: Final[dict[int, int]] = _WithAutograd()


def set_history(result: Tensor, node: Node, output_nr: int = 0) -> None:
    """Make ``result`` output ``output_nr`` of ``node``: it requires grad and has a grad_fn.
    The generated one-output kernels write these lines in line (codegen's ``_history``):
    a change here goes there too."""
    result.key_bits = WITH_AUTOGRAD[result.key_bits]
    result.grad_fn = node
    if output_nr or result._output_nr:
        result._output_nr = output_nr
    node.out_meta += ((result._shape, result._dtype, result._device),)


def check_inplace(t: Tensor, op: str, allow_view: bool = False) -> Tensor | None:
    """Refuse an in-place op on a leaf that requires grad (or on a view of one); for a
    recorded view, return its base, whose history the caller rebases (``rebase_view``) --
    or, without ``allow_view``, refuse."""
    if t.requires_grad:
        if t.grad_fn is None:
            raise AutogradError(LEAF_INPLACE.format(op=op))
        meta: AutogradMeta | None = t._autograd_meta
        if meta is not None and meta.view_base is not None:
            base = meta.view_base
            if not allow_view:
                raise AutogradError(VIEW_INPLACE.format(op=op))
            if base.grad_fn is None:
                raise AutogradError(VIEW_OF_LEAF_INPLACE.format(op=op))
            return base
    return None


def mark_view(result: Tensor, base: Tensor) -> None:
    """Remember that ``result`` is a recorded view of ``base``: Note [In-place on views]."""
    root = base._autograd_meta.view_base if base._autograd_meta is not None else None
    if root is not None:
        base = root  # a view of a view is a view of the first base
    meta = autograd_meta(result)
    meta.view_base = base
    meta.view_base_fn = base.grad_fn


# Note [In-place on views]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# An in-place op on a recorded view ``v`` of ``base`` changes ``base`` too. As PyTorch's
# CopySlices does, the base gets a new grad_fn, ``CopySlices``: the gradient of the new
# base flows to the old base with the view's elements zeroed, and the view's elements go
# to the op's node (which leads, through the old view, to the old base again). The view's
# grad_fn becomes a ``ViewOfBase`` node of the new base. Every other view of ``base`` made
# before is stale: when it is next used (``edge_of``/``gradient_edge``) it too gets a
# ``ViewOfBase`` node of the base's current history. Both nodes move gradients between
# geometries through the storage positions with ``linear_map``, which records itself, so
# they are differentiable again (Note [Differentiable storage maps] in _linear.py).
#
# Not yet as torch: a view of a base that does not require grad is recorded by no view op
# (its op ran below Autograd), so an in-place op writing values that require grad into it
# (``x = zeros(2); x[0] = w * 2``) gives the view a history but not the base: ``x`` stays
# without grad and ``w`` gets no gradient through it. torch keeps ``_base`` on every view.
# Build such a tensor out of place instead: ``core.stack``/``core.cat``, or
# ``core.index_put(x, [i], w * 2)``.


def _storage_index(t: Tensor) -> Any:
    import numpy as np

    shape = t.shape
    index = np.full(shape, t.storage_offset(), dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, t.stride())):
        index = index + (np.arange(n, dtype=np.int64) * s).reshape([n if i == d else 1 for i in range(len(shape))])
    return index


class ViewOfBase(Node):
    """A view's node after its base changed in place: the gradient scattered into the base."""

    __slots__ = ("view_index", "base_index", "dtype", "device")
    _name = "AsStridedBackward0"

    def __init__(self, view: Tensor, base: Tensor) -> None:
        super().__init__()
        self.view_index = _storage_index(view)
        self.base_index = _storage_index(base)
        self.dtype, self.device = view._dtype, view._device
        self.next_edges = ((base.grad_fn, base._output_nr),)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        import numpy as np

        from ._linear import linear_map

        g = grads[0]
        assert g is not None
        span = int(max(self.view_index.max(initial=0), self.base_index.max(initial=0))) + 1
        storage = linear_map(g, self.view_index.reshape(-1), np.arange(self.view_index.size), None, (span,))
        base = self.base_index
        return (linear_map(storage, np.arange(base.size), base.reshape(-1), None, base.shape),)


class CopySlices(Node):
    """A base's node after an in-place op on one of its views (Note [In-place on views])."""

    __slots__ = ("view_index", "base_index")
    _name = "CopySlices"

    def __init__(self, view: Tensor, base: Tensor) -> None:
        super().__init__()
        self.view_index = _storage_index(view)
        self.base_index = _storage_index(base)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        import numpy as np

        from ._linear import linear_map

        g = grads[0]
        assert g is not None
        view, base = self.view_index, self.base_index
        span = int(max(view.max(initial=0), base.max(initial=0))) + 1
        storage = linear_map(g, base.reshape(-1), np.arange(base.size), None, (span,))
        to_view = linear_map(storage, np.arange(view.size), view.reshape(-1), None, view.shape)
        kept = (~np.isin(base, view)).reshape(-1).astype(np.float64)  # the view's positions zeroed
        to_base = linear_map(storage, np.arange(base.size), base.reshape(-1), kept, base.shape)
        return (to_base, to_view)


def rebase_view(view: Tensor, base: Tensor) -> None:
    """After an in-place op recorded on ``view`` (its grad_fn is the op's node), give
    ``base`` and ``view`` the history Note [In-place on views] describes."""
    old_base = edge_of(base)
    node = CopySlices(view, base)
    node.next_edges = (old_base, (view.grad_fn, view._output_nr))
    set_history(base, node, 0)
    view.grad_fn = ViewOfBase(view, base)
    view._output_nr = 0
    view.grad_fn.out_meta = (meta_of(view),)
    meta = autograd_meta(view)
    meta.view_base_fn = node


def _fresh_view_fn(t: Tensor, fn: Node) -> Node:
    """``t``'s grad_fn, remade if ``t`` is a view whose base changed in place since."""
    meta: AutogradMeta = t._autograd_meta
    base = meta.view_base
    if base is None or base.grad_fn is meta.view_base_fn:
        return fn
    fresh = ViewOfBase(t, base)
    fresh.out_meta = (meta_of(t),)
    t.grad_fn = fresh
    t._output_nr = 0
    meta.view_base_fn = base.grad_fn
    return fresh
