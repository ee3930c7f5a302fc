"""The autograd methods of ``Tensor`` (``backward``, ``detach``, ``retain_grad``,
``register_hook``): the tensor layer declares them and calls what this module installs
(``AUTOGRAD_METHODS``), because it sits below autograd."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from typing import Any, Final

from ..tensor import AUTOGRAD_METHODS, Tensor, make_view
from ..dispatch import dispatcher
from ._engine import backward
from ._grad_mode import is_grad_enabled
from ._graph import Node, autograd_meta
from ._messages import HOOK_NO_GRAD, NOT_CALLABLE_HOOK, RETAIN_NO_GRAD, AutogradError
from ..vocabulary import ArgumentError

__all__ = ["RemovableHandle", "install_methods", "detach"]

Hook = Callable[[Tensor], "Tensor | None"]


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Hook], hook: Hook) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


# Note [detach is an op]
# ~~~~~~~~~~~~~~~~~~~~~~
# ``Tensor.detach()`` calls the core op ``core::detach`` (as PyTorch's calls ``aten::detach``),
# so the keys above autograd see it: ``typedops.trace`` records it and a program replays
# it, modes and the profiler see it. Its kernel makes the same view this method made
# before: no history, no Autograd key, the same storage and so the same version counter;
# its autograd kernel records nothing (``output_differentiability: [False]``). The op is
# looked up on the first call (core sits above this package) and its entry function then
# replaces this method's; before the core library is loaded the view is made directly.
_DETACH_OP: Final = "core::detach"


def detach(self: Tensor) -> Tensor:
    """A view of ``self``'s data with no history and no Autograd key (shares the version
    counter), made by the op ``core::detach`` (Note [detach is an op])."""
    handle = dispatcher.find_op(_DETACH_OP)
    if handle is None:
        return make_view(self, self.shape, self.stride(), self.storage_offset())
    entry: Any = handle.call
    AUTOGRAD_METHODS["detach"] = entry
    result: Tensor = entry(self)
    return result


def _backward(
    self: Tensor,
    gradient: Tensor | None,
    retain_graph: bool | None,
    create_graph: bool,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    backward(self, None if gradient is None else [gradient], retain_graph, create_graph, inputs)


def _retain_grad(self: Tensor) -> None:
    if not self.requires_grad:
        raise AutogradError(RETAIN_NO_GRAD)
    node: Node | None = self.grad_fn
    if node is None:
        return  # a leaf keeps its .grad anyway
    if node.retains is None:
        node.retains = {}
    node.retains[self._output_nr] = self  # a cycle node -> tensor -> node; the gc frees it
    autograd_meta(self).retains_grad = True


def _register_hook(self: Tensor, hook: Hook) -> RemovableHandle:
    if not callable(hook):
        raise ArgumentError(NOT_CALLABLE_HOOK.format(type=type(hook).__name__))
    if not self.requires_grad:
        raise AutogradError(HOOK_NO_GRAD)
    node: Node | None = self.grad_fn
    hooks: list[Hook]
    if node is None:
        hooks = autograd_meta(self).hooks
    else:
        if node.pre_hooks is None:
            node.pre_hooks = {}
        hooks = node.pre_hooks.setdefault(self._output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def install_methods() -> None:
    AUTOGRAD_METHODS.update(
        backward=_backward, detach=detach, retain_grad=_retain_grad, register_hook=_register_hook,
        is_grad_enabled=is_grad_enabled,  # Tensor.numpy() reads it (Note [numpy() of a tensor that requires grad])
    )
