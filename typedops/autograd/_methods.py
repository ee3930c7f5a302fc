"""The autograd methods of ``Tensor`` (``backward``, ``detach``, ``retain_grad``,
``register_hook``): the tensor layer declares them and calls what this module installs
(``AUTOGRAD_METHODS``), because it sits below autograd."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..tensor import AUTOGRAD_METHODS, Tensor, make_view
from ._engine import backward
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


def detach(self: Tensor) -> Tensor:
    """A view of ``self``'s data with no history and no Autograd key (shares the version counter)."""
    return make_view(self, self.shape, self.stride(), self.storage_offset())


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
        backward=_backward, detach=detach, retain_grad=_retain_grad, register_hook=_register_hook
    )
