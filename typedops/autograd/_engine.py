"""The backward pass: ``backward`` and ``grad`` over the recorded graph.

Note [Engine order]
~~~~~~~~~~~~~~~~~~~
The engine first walks the graph from the outputs' edges and counts, per node, the edges
that point at it. A node runs once every such edge has delivered its gradient (its count
reaches zero), so it sees the sum of all of them: a topological order. Among ready nodes
the one recorded last runs first (a heap on the recording sequence number), as PyTorch
orders its CPU queue; in ``backward()`` a leaf's AccumulateGrad node runs as soon as it
is ready, as PyTorch's (Note [The engine's loop]). Gradients arriving at the same node input are added. With
``inputs`` (``grad()``), only nodes from which an input is reachable run, the gradient
reaching each input is captured instead of accumulated, and no ``.grad`` changes.

Before a node runs, the tensor hooks registered on its outputs run (a hook's result
replaces the gradient), then ``retain_grad`` tensors get theirs. Its backward runs under
``no_grad()``, or with grad mode on when ``create_graph`` is set, so that the formulas'
own ops are recorded and the gradients can be differentiated again.

Note [The engine's loop]
~~~~~~~~~~~~~~~~~~~~~~~~
The loop body runs once per node of the graph, so its common case is kept free of work
it does not need. ``backward()`` (no ``inputs``) has a loop of its own, ``_run_all``:
there is nothing to capture and every node runs. It applies a node and hands each
result to the node its edge leads to in one pass (no per-node list of checked results,
no helper frames); a one-output node that received nothing runs nothing. An
AccumulateGrad node never enters the heap: it runs (its leaf's hooks, then ``.grad``;
it has no edges and saves nothing to release) the moment its last gradient arrives, as
PyTorch's engine gives AccumulateGrad nodes the highest priority -- so two leaves of
one op accumulate in edge order, and hooks on leaves fire where torch's do. The hooks
step is entered only for a node with hooks or retained gradients; an input buffer is
made only when the first gradient for it arrives, and each gradient's shape is checked
with one tuple comparison (out_meta keeps shapes as tuples, as ``Tensor.shape`` is),
the slower checks running only when it fails. The ready heap holds ``(-seq, node)``:
the recording sequence numbers are unique, so two entries never compare their nodes.
The loop relies on ``len(node.out_meta)`` being the node's number of outputs and on
``Tensor.shape`` being a tuple. ``grad()`` (and ``backward(inputs=...)``) keeps the
general loop, which captures and skips the nodes no input depends on, and runs
AccumulateGrad nodes from the heap.

Note [Complex gradients]
~~~~~~~~~~~~~~~~~~~~~~~~
As in PyTorch, the gradient of a real loss ``L`` with respect to a complex tensor
``z = a + ib`` is ``dL/da + i dL/db`` (twice the conjugate Wirtinger derivative
``dL/d(conj z)``): the direction of steepest ascent, so gradient descent works unchanged.
For a holomorphic ``f`` the formula is then ``grad * conj(f'(z))``, which is why the
formulas of derivatives.yaml conjugate (``grad * conj(other)`` for ``mul``). A loss must be
real for ``backward()`` without a gradient: a complex scalar output refuses an implicit
one. A ``grad_outputs`` of another dtype than its output is refused when either is
complex. A complex gradient flowing into a real input keeps its real part (``real`` in
_linear.py), as PyTorch's ``handle_r_to_c`` does; a real one into a complex input becomes
complex.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ..dispatch import dispatcher
from ..tensor import (
    AUTOGRAD_BITS,
    Tensor,
    cached_contiguous_strides,
    empty_meta,
    empty_tensor,
    is_contiguous_strides,
    is_non_overlapping_and_dense,
    numpy_dtype,
)
from ..vocabulary import ArgumentValueError, MemoryFormat, ScalarType
from ._grad_mode import enable_grad, no_grad
from ._graph import AccumulateGrad, Edge, Node, gradient_edge
from ._linear import real
from ._messages import (
    GRAD_OUTPUTS_COUNT,
    EMPTY_INPUTS,
    GRAD_DTYPE,
    GRAD_SHAPE,
    HOOK_CHANGED,
    IMPLICIT_COMPLEX,
    IMPLICIT_GRAD,
    INPUT_NO_GRAD,
    INVALID_GRAD_COUNT,
    INVALID_GRAD_SHAPE,
    MATERIALIZE_UNUSED,
    NO_GRAD_FN,
    UNUSED_INPUT,
    AutogradError,
)

__all__ = ["backward", "grad", "run_backward", "filled"]


def filled(shape: tuple[int, ...], dtype: ScalarType, device: Any, value: float) -> Tensor:
    """A new tensor of ``shape`` holding ``value`` everywhere (no graph)."""
    import numpy as np  # not at import: `import typedops` does not load numpy

    if device.type == "meta":
        return empty_meta(shape, dtype)
    # np.full's result is new and C-contiguous: the tensor owns it (no copy, as wrap_array makes).
    # A 0-dim one (backward()'s implicit gradient) is np.array's, one C call where np.full makes two.
    array = np.array(value, numpy_dtype(dtype)) if not shape else np.full(shape, value, dtype=numpy_dtype(dtype))
    return Tensor._from_array(array, dtype, device)


def filled_like(like: Tensor, value: float) -> Tensor:
    """``filled(like.shape, like.dtype, like.device, value)``; for a tensor subclass (a fake
    tensor, a wrapper) made by ops dispatched on ``like``, so the subclass makes its own kind
    -- the seed torch's engine makes with ``ones_like``."""
    if type(like) is Tensor:
        return filled(like.shape, like.dtype, like.device, value)
    made: Tensor = dispatcher.find_schema_or_throw("core::zeros_like")(like)
    return made if value == 0 else made.fill_(value)


def _root_grads(
    outputs: Sequence[Tensor], grad_outputs: Sequence[Tensor | None] | None
) -> list[Tensor]:
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise AutogradError(GRAD_OUTPUTS_COUNT.format(got=len(grad_outputs), expected=len(outputs)))
    grads: list[Tensor] = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise AutogradError(NO_GRAD_FN.format(index=i))
        if g is None:
            if out.numel() != 1:
                raise AutogradError(IMPLICIT_GRAD.format(shape=list(out.shape)))
            if out.dtype.is_complex:
                raise AutogradError(IMPLICIT_COMPLEX.format(dtype=out.dtype.name))
            g = filled_like(out, 1.0)
        elif tuple(g.shape) != tuple(out.shape):
            raise AutogradError(GRAD_SHAPE.format(index=i, got=list(g.shape), expected=list(out.shape)))
        elif g.dtype is not out.dtype and (g.dtype.is_complex or out.dtype.is_complex):
            raise AutogradError(GRAD_DTYPE.format(index=i, got=g.dtype.name, expected=out.dtype.name))
        else:
            _ = g.storage  # the caller keeps it: no leaf steals it (Note [Stealing a gradient])
        grads.append(g)
    return grads


def _dependencies(roots: list[Edge]) -> dict[Node, int]:
    """Per node reachable from ``roots``, how many edges point at it (Note [Engine order]).
    A node enters the dict when first reached and is walked then, once."""
    deps: dict[Node, int] = {}
    stack: list[Node] = []
    for node, _ in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        for edge in stack.pop().next_edges:
            if edge is not None:
                nxt = edge[0]
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    stack.append(nxt)
    return deps


def _needed(deps: dict[Node, int], targets: set[Node]) -> set[Node]:
    """The nodes from which some target is reachable (the targets included)."""
    needed: dict[Node, bool] = {}

    def visit(root: Node) -> bool:
        # Iterative post-order: a node is needed if it is a target or a successor is.
        stack: list[tuple[Node, int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0 and node in needed:
                continue
            edges = node.next_edges
            if i < len(edges):
                stack.append((node, i + 1))
                edge = edges[i]
                if edge is not None and edge[0] not in needed:
                    stack.append((edge[0], 0))
                continue
            needed[node] = node in targets or any(e is not None and needed.get(e[0], False) for e in edges)
        return needed[root]

    for node in deps:
        visit(node)
    return {node for node, yes in needed.items() if yes}


def _add(a: Tensor | None, b: Tensor) -> Tensor:
    return b if a is None else a + b


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor | None] | None,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
) -> list[Tensor | None]:
    """The backward pass (Note [Engine order]); with ``inputs``, their captured gradients."""
    grads = _root_grads(outputs, grad_outputs)
    roots = [gradient_edge(t) for t in outputs]
    deps = _dependencies(roots)
    buffers: dict[Node, list[Tensor | None]] = {}
    for (root, nr), g in zip(roots, grads):
        first = buffers.setdefault(root, [None] * (len(root.out_meta) or 1))
        first[nr] = _add(first[nr], g)
    # The heap holds (-seq, node): sequence numbers are unique, so nodes are never compared.
    ready = [(-node.seq, node) for node, count in deps.items() if not count]
    heapq.heapify(ready)
    mode = enable_grad() if create_graph else no_grad()
    if inputs is None:
        with mode:
            _run_all(ready, deps, buffers, retain_graph, create_graph)
        return []
    captures: dict[Edge, list[int]] = {}
    for index, t in enumerate(inputs):
        if not t.requires_grad:
            raise AutogradError(INPUT_NO_GRAD.format(index=index))
        captures.setdefault(gradient_edge(t), []).append(index)
    needed = _needed(deps, {node for node, _ in captures})
    captured: list[Tensor | None] = [None] * len(inputs)
    pop = heapq.heappop
    with mode:
        while ready:
            node = pop(ready)[1]
            found = buffers.pop(node, None)
            buffer: list[Tensor | None] = [None] * (len(node.out_meta) or 1) if found is None else found
            if node.pre_hooks or node.retains or isinstance(node, AccumulateGrad):
                _call_pre_hooks(node, buffer)
            for nr, arrived in enumerate(buffer):
                for index in captures.get((node, nr), ()):
                    if arrived is not None and not create_graph and arrived.requires_grad:
                        arrived = arrived.detach()
                    captured[index] = arrived
            if node in needed and not isinstance(node, AccumulateGrad):
                results = _apply(node, buffer)
                if not retain_graph:
                    node.release()
            else:
                results = [None] * len(node.next_edges)
            _deliver(node, results, deps, buffers, ready)
    return captured


def _run_all(
    ready: list[tuple[int, Node]],
    deps: dict[Node, int],
    buffers: dict[Node, list[Tensor | None]],
    retain_graph: bool,
    create_graph: bool,
) -> None:
    """``backward()``'s loop (no ``inputs``): every node runs, leaves accumulate. Note
    [The engine's loop]."""
    pop, push = heapq.heappop, heapq.heappush
    while ready:
        node = pop(ready)[1]
        found = buffers.pop(node, None)
        if type(node) is AccumulateGrad:  # a root leaf (backward() on a leaf)
            _leaf(node, found, create_graph)
            continue
        edges = node.next_edges
        if found is None or (len(found) == 1 and found[0] is None):
            results: Sequence[Tensor | None] = ()  # nothing flowed in: nothing flows on
        else:
            if node.pre_hooks or node.retains:
                _call_pre_hooks(node, found)
            results = node.apply(found) if len(found) == 1 else _apply_multi(node, found)
            if len(results) != len(edges):
                raise AutogradError(
                    INVALID_GRAD_COUNT.format(node=node.name(), got=len(results), expected=len(edges))
                )
        if not retain_graph:
            node.release()
        for i, edge in enumerate(edges):
            if edge is None:
                continue
            nxt, nr = edge
            g = results[i] if results else None
            if g is not None:
                shape, dtype, _ = nxt.out_meta[nr]
                if g._shape != shape:  # a tuple, as out_meta's (else compared as tuples there)
                    g = _validate(node, i, g, edge)
                elif g._dtype is not dtype:
                    g = g.to(dtype)
                slot = buffers.get(nxt)
                if slot is None:
                    slot = buffers[nxt] = [None] * (len(nxt.out_meta) or 1)
                before = slot[nr]
                slot[nr] = g if before is None else before + g
            left = deps[nxt] - 1
            deps[nxt] = left
            if not left:
                if type(nxt) is AccumulateGrad:  # a leaf runs as soon as it is ready
                    _leaf(nxt, buffers.pop(nxt, None), create_graph)
                else:
                    push(ready, (-nxt.seq, nxt))


def _leaf(node: AccumulateGrad, found: list[Tensor | None] | None, create_graph: bool) -> None:
    """An AccumulateGrad node's work: its leaf's hooks (on the tensor), then ``.grad``."""
    if found is not None and found[0] is not None:
        if node.variable._autograd_meta.hooks:  # a leaf's AccumulateGrad has its meta
            _call_pre_hooks(node, found)
        _accumulate(node.variable, found[0], create_graph)


def _apply_multi(node: Node, buffer: list[Tensor | None]) -> Sequence[Tensor | None]:
    """``node.apply`` for a multi-output node; unused outputs get zeros (all-None: skipped)."""
    if all(g is None for g in buffer):
        return [None] * len(node.next_edges)
    if any(g is None for g in buffer):
        buffer = [filled(*m, 0.0) if g is None else g for g, m in zip(buffer, node.out_meta)]
    return node.apply(buffer)


def _deliver(
    node: Node,
    results: Sequence[Tensor | None],
    deps: dict[Node, int],
    buffers: dict[Node, list[Tensor | None]],
    ready: list[tuple[int, Node]],
) -> None:
    """Add ``node``'s results into the buffers of the nodes its edges lead to; push the
    nodes that have now received all their gradients."""
    for edge, result in zip(node.next_edges, results):
        if edge is None:
            continue
        nxt = edge[0]
        if result is not None:
            slot = buffers.get(nxt)
            if slot is None:
                slot = buffers[nxt] = [None] * (len(nxt.out_meta) or 1)
            nr = edge[1]
            before = slot[nr]
            slot[nr] = result if before is None else before + result
        left = deps[nxt] - 1
        deps[nxt] = left
        if not left:
            heapq.heappush(ready, (-nxt.seq, nxt))


def _call_pre_hooks(node: Node, buffer: list[Tensor | None]) -> None:
    if isinstance(node, AccumulateGrad):
        g = buffer[0]
        meta = node.variable._autograd_meta
        if g is not None and meta is not None:
            for hook in meta.hooks:
                g = _run_hook(hook, g)
            buffer[0] = g
        return
    if node.pre_hooks:
        for nr, hooks in node.pre_hooks.items():
            g = buffer[nr]
            if g is None:
                continue
            for hook in hooks:
                g = _run_hook(hook, g)
            buffer[nr] = g
    if node.retains:
        for nr, t in node.retains.items():
            g = buffer[nr]
            if g is not None:
                t.grad = g.detach().clone() if t.grad is None else t.grad + g.detach()  # a copy, as PyTorch's


def _run_hook(hook: Any, g: Tensor) -> Tensor:
    """A tensor hook's result, which replaces ``g`` -- unless None; it must keep g's shape and dtype."""
    _ = g.storage  # the hook may keep ``g``: no leaf steals it (Note [Stealing a gradient])
    new = hook(g)
    if new is None:
        return g
    _ = new.storage
    for what, was, got in (("size", list(g.shape), list(new.shape)), ("type", g.dtype.name, new.dtype.name)):
        if was != got:
            name = getattr(hook, "__name__", type(hook).__name__)
            raise AutogradError(HOOK_CHANGED.format(hook=name, what=what, was=was, got=got))
    return new  # type: ignore[no-any-return]


def _apply(node: Node, buffer: list[Tensor | None]) -> Sequence[Tensor | None]:
    """Run ``node``'s backward (never an AccumulateGrad: the loops handle those) on its
    gradients; check and cast what it returns for the inputs its edges lead to."""
    edges = node.next_edges
    if len(buffer) == 1:  # most nodes: one output
        if buffer[0] is None:
            return [None] * len(edges)
    elif all(g is None for g in buffer):
        return [None] * len(edges)
    elif any(g is None for g in buffer):
        # A multi-output op where only some outputs were used: zeros for the others.
        buffer = [filled(*m, 0.0) if g is None else g for g, m in zip(buffer, node.out_meta)]
    results = node.apply(buffer)
    if len(results) != len(edges):
        raise AutogradError(INVALID_GRAD_COUNT.format(node=node.name(), got=len(results), expected=len(edges)))
    checked: list[Tensor | None] = []
    for i, (g, edge) in enumerate(zip(results, edges)):
        if g is None or edge is None:
            checked.append(None)
            continue
        shape, dtype, _ = edge[0].out_meta[edge[1]]
        if g._shape != shape:  # a tuple, as out_meta's (else compared as tuples below)
            g = _validate(node, i, g, edge)
        elif g._dtype is not dtype:
            g = g.to(dtype)
        checked.append(g)
    return checked


def _validate(node: Node, index: int, g: Tensor, edge: Edge) -> Tensor:
    """Check a gradient against the input it flows to; cast it to that input's dtype."""
    target, nr = edge
    shape, dtype, _ = target.out_meta[nr]
    if tuple(g.shape) != tuple(shape):
        raise AutogradError(
            INVALID_GRAD_SHAPE.format(node=node.name(), index=index, got=list(g.shape), expected=list(shape))
        )
    if g.dtype is not dtype:
        g = real(g, dtype) if g.dtype.is_complex and not dtype.is_complex else g.to(dtype)
    return g


# Note [Stealing a gradient]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# A leaf's first gradient becomes its ``.grad`` without a copy only when nothing else can
# see it, as PyTorch's AccumulateGrad steals a gradient only at a use count of one:
# otherwise ``(a + b).sum().backward()`` left ``a.grad is b.grad`` (one stride-0 expanded
# view), and ``a.grad.zero_()`` wrote into ``b.grad``. "Nothing else sees it" is a result
# whose storage was never made (Note [Storage made on demand] in tensor/_tensor.py: no
# view, no in-place write, no ``.storage``) and whose array owns its memory. Stealing
# makes the storage, so the same tensor delivered to a second leaf is copied; hooks see
# gradients only after their storage is made, and a gradient given to ``backward`` has it
# made too. Everything else -- and every gradient under ``create_graph``, as in PyTorch --
# is copied. A non-leaf's retained gradient is always a copy.
#
# Note [Gradient layout contract]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As PyTorch's AccumulateGrad, a leaf's first ``.grad`` has the leaf's layout when the
# leaf is non-overlapping and dense (a permuted or channels-last parameter gets a
# gradient of the same strides): a gradient is stolen only when its strides equal the
# leaf's on every dim of size above 1 (and no size-1 dim has stride 0), and is otherwise
# copied into a new tensor of the leaf's exact strides. A leaf of any other layout takes
# a contiguous gradient, and gets a contiguous copy of any other. A gradient that obeys
# the contract but may be seen elsewhere (a view: PyTorch would steal it) is copied
# stride for stride (``preserve_format``). Later gradients add to ``.grad`` out of place,
# which keeps its layout (Note [Element-wise result strides] in tensor/_strides.py: the
# first operand wins).


def _owned(g: Tensor) -> bool:
    array = g._array
    return g._storage is None and array is not None and array.base is None


def _obeys_layout(g: Tensor, variable: Tensor) -> bool:
    """Whether ``g`` may become ``variable``'s ``.grad`` as it is: Note [Gradient layout contract]."""
    strides, shape = g._strides, g._shape
    if strides == variable._strides and strides == cached_contiguous_strides(shape):
        return True  # the common case: both contiguous (no stride of 0)
    if not is_non_overlapping_and_dense(variable._shape, variable._strides):
        return is_contiguous_strides(shape, strides)
    return all(s == v if n != 1 else s != 0 for n, s, v in zip(shape, strides, variable._strides))


def _copy_for(g: Tensor, variable: Tensor) -> Tensor:
    """A copy of ``g`` in the layout ``variable``'s ``.grad`` takes: Note [Gradient layout contract]."""
    if not is_non_overlapping_and_dense(variable._shape, variable._strides):
        return g.clone(memory_format=MemoryFormat.contiguous_format)
    copied = empty_tensor(variable._shape, g._dtype, g._device, dense_strides=variable._strides)
    return copied.copy_(g)


def _accumulate(variable: Tensor, g: Tensor | None, create_graph: bool) -> None:
    if g is None:
        return
    if not create_graph and g.key_bits & AUTOGRAD_BITS:  # g.requires_grad, without the property
        g = g.detach()
    old = variable._grad
    if old is None:
        if create_graph or not _obeys_layout(g, variable):
            g = _copy_for(g, variable)  # Note [Stealing a gradient]
        elif not _owned(g):
            g = g.clone(memory_format=MemoryFormat.preserve_format)  # the strides PyTorch's stolen view has
        else:
            _ = g.storage  # made now: a second delivery of ``g`` is not owned, and is copied
        variable.grad = g
    elif g._dtype is old._dtype and g._shape == old._shape:
        # The sum has .grad's shape, dtype and device, which the setter checked when .grad
        # was set: it is stored without the setter's check (every step of a training loop).
        variable._grad = old + g
    else:
        variable.grad = old + g


def _tensors(value: Tensor | Sequence[Tensor]) -> list[Tensor]:
    return [value] if isinstance(value, Tensor) else list(value)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad`` (``Tensor.backward``); with
    ``inputs``, into the ``.grad`` of those tensors only (leaves or not), as PyTorch does."""
    outputs = _tensors(tensors)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        run_backward(outputs, grad_tensors, retain, create_graph)
        return
    targets = list({id(t): t for t in _tensors(inputs)}.values())  # each tensor once
    if not targets:
        raise AutogradError(EMPTY_INPUTS.format(fn="backward"))
    for t, g in zip(targets, run_backward(outputs, grad_tensors, retain, create_graph, targets)):
        if not t.retains_grad:  # retain_grad() accumulated it already
            _accumulate(t, g, create_graph)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.
    An input the outputs do not depend on raises, or gets None with ``allow_unused``, or
    zeros with ``materialize_grads`` (``allow_unused`` defaults to ``materialize_grads``)."""
    if materialize_grads and allow_unused is False:
        raise ArgumentValueError(MATERIALIZE_UNUSED)
    outs, ins = _tensors(outputs), _tensors(inputs)
    if not ins:
        raise AutogradError(EMPTY_INPUTS.format(fn="grad"))
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    result = run_backward(outs, grad_outputs, create_graph if retain_graph is None else retain_graph, create_graph, ins)
    for index, g in enumerate(result):
        if g is None and materialize_grads:
            x = ins[index]
            result[index] = filled(x.shape, x.dtype, x.device, 0.0)
        elif g is None and not allow_unused:
            raise AutogradError(UNUSED_INPUT.format(index=index))
    return tuple(result)
