"""Dispatch modes: ``with Mode():`` sends every op call of the block to
``Mode.__typedops_dispatch__`` -- the counterpart of torch's ``TorchDispatchMode``.

Note [The mode stack]
~~~~~~~~~~~~~~~~~~~~~
Each thread and asyncio task has its own stack of modes (a tuple in the dispatcher's
per-context state: Note [The Python key's modes] in dispatch/_tls.py). Entering a mode
pushes it and turns on the ``Python`` key for the caller's context (``include_keys``);
leaving removes that very mode, wherever it is on the stack, so modes
that exit out of order (a generator suspended inside one) leave the others in force.

One boxed fallback on the ``Python`` key serves every op, registered when this package is
imported (as PyTorch registers its Python fallback at start-up): a call meets it after
autograd and before the backend, boxed or unboxed alike. The fallback pops the innermost
mode for the duration of the handler -- so the handler's own ``op(*args, **kwargs)``
continues to the next mode, or to the kernels -- and splits the stack into the schema's
positional arguments and keyword-only ones, as the handler receives them.

Note [Tensor subclasses that dispatch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tensor whose ``key_bits`` carry the ``Python`` key reaches the fallback even with no mode
on the stack (a fake tensor used after its ``with FakeTensorMode():`` block). The fallback
then asks the first argument whose class is registered with ``dispatch_on_class`` (a
tensor or in a tensor list) to handle the call: ``cls.__typedops_dispatch__(op, types,
args, kwargs)``. A call that finds neither a mode nor such a class passes through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar, cast

from ..vocabulary import AUTOGRAD_KEYS, BoundedCache, DispatchKey, DispatchKeySet
from ..tensor import Tensor
from ..dispatch import (
    Library,
    OperatorHandle,
    call_through_stack,
    include_keys,
    python_fallback,
    python_modes,
    set_python_modes,
)

__all__ = ["DispatchMode", "current_modes", "dispatch_on_class", "PYTHON_FALLBACK"]

_get_modes: Final[Callable[[], "tuple[DispatchMode, ...]"]] = python_modes
_PYTHON_ON: Final = include_keys(DispatchKey.Python)
_DISPATCH_CLASSES: Final[set[type]] = set()  # Note [Tensor subclasses that dispatch]
_M = TypeVar("_M", bound="DispatchMode")


class DispatchMode:
    """Subclass and define ``__typedops_dispatch__(self, op, types, args, kwargs)``; every
    op call made inside ``with MyMode():`` (in that thread and asyncio task) reaches it,
    with ``op`` the ``OperatorHandle``, ``types`` the classes of the tensor arguments,
    ``args`` the schema's positional arguments and ``kwargs`` its keyword-only ones.
    Inside the handler the mode is popped: ``op(*args, **kwargs)`` continues to the next
    mode or to the kernels. Modes stack; the innermost one sees a call first."""

    def __typedops_dispatch__(
        self, op: OperatorHandle, types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        return op(*args, **kwargs)

    def __enter__(self: _M) -> _M:
        set_python_modes((*_get_modes(), self))
        _PYTHON_ON.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        _PYTHON_ON.__exit__(*exc)
        modes = _get_modes()
        for i in range(len(modes) - 1, -1, -1):  # Note [The mode stack]: this mode, wherever it is
            if modes[i] is self:
                set_python_modes(modes[:i] + modes[i + 1 :])
                break


def current_modes() -> tuple[DispatchMode, ...]:
    """This thread's and task's mode stack, innermost last."""
    return _get_modes()


def dispatch_on_class(cls: type) -> None:
    """Let tensors of ``cls`` (which carry the Python key) handle calls with no mode on
    the stack: Note [Tensor subclasses that dispatch]."""
    _DISPATCH_CLASSES.add(cls)


class _Split:
    """How the fallback splits an op's stack: positional count, keyword-only names, the
    number of returns, and where tensors can be (Note [The mode stack])."""

    __slots__ = ("positional", "names", "count", "returns", "tensor_positions", "plain_types")

    def __init__(self, op: OperatorHandle) -> None:
        schema = op.schema
        self.positional = len(schema.positional)
        self.names = tuple(a.name for a in schema.kwarg_only)
        self.count = len(schema.arguments)
        self.returns = len(schema.returns)
        self.tensor_positions = tuple(i for i, a in enumerate(schema.arguments) if a.type.is_tensor_like())
        self.plain_types: tuple[type, ...] = (Tensor,) if self.tensor_positions else ()


# Bounded: ops removed by a closed Library must not stay alive here (Note [Bounded caches]).
_SPLITS: Final[BoundedCache[OperatorHandle, _Split]] = BoundedCache(4096, "mode splits by op")
_PLAIN: Final = (Tensor,)


def _split_of(op: OperatorHandle) -> _Split:
    return _SPLITS.put(op, _Split(op))


def _tensor_types(values: Sequence[object], positions: tuple[int, ...]) -> tuple[type, ...]:
    """The classes of the tensors among ``values`` (at ``positions``), each once."""
    found: list[type] = []
    for i in positions:
        value = values[i]
        if isinstance(value, (list, tuple)):
            for item in cast("Sequence[object]", value):
                if item is not None and type(item) not in found:
                    found.append(type(item))
        elif value is not None and type(value) not in found:
            found.append(type(value))
    return _PLAIN if found == [Tensor] else tuple(found)


def _call_handler(handler: Callable[..., Any], op: OperatorHandle, stack: list[Any]) -> None:
    """Call ``handler(op, types, args, kwargs)`` with the call on ``stack``; its result
    replaces the arguments."""
    split = _SPLITS.get(op) or _split_of(op)
    base = len(stack) - split.count
    values = stack[base:]
    positional = split.positional
    if split.names:
        args = tuple(values[:positional])
        kwargs = dict(zip(split.names, values[positional:]))
    else:
        args = tuple(values)
        kwargs = {}
    for i in split.tensor_positions:  # the common case, plain tensors, without a call
        if type(values[i]) is not Tensor:
            types = _tensor_types(values, split.tensor_positions)
            break
    else:
        types = split.plain_types
    result = handler(op, types, args, kwargs)
    del stack[base:]
    if split.returns == 1:
        stack.append(result)
    elif split.returns:
        stack.extend(result)


def _dispatching_class(values: list[object]) -> Any:
    for value in values:
        kind = type(value)
        if kind in _DISPATCH_CLASSES:
            return kind
        if kind is list or kind is tuple:
            for item in cast("Sequence[object]", value):
                if type(item) in _DISPATCH_CLASSES:
                    return type(item)
    return None


# Note [Handlers call below the keys above Python]
# A call reaches the Python key after the keys above it did their work (the autograd
# keys recorded it, ADInplaceOrView bumped the versions of what it writes). Calls a
# handler makes -- ``op(*args)`` going on to the kernels, a fake tensor's Meta kernel --
# skip those keys, as in PyTorch, where the dispatcher restores the key state the call
# had at the Python key: else every in-place op under a mode would bump twice. The
# dispatcher's ``python_fallback`` runs the handler so (Note [Hiding included keys] in
# dispatch/_tls.py), with the mode popped (Note [The mode stack]).
_ABOVE_PYTHON_BITS: Final = int(DispatchKeySet([DispatchKey.ADInplaceOrView, *AUTOGRAD_KEYS]))


def _handle(mode: DispatchMode, op: OperatorHandle, stack: list[Any]) -> None:
    """Call ``mode``'s handler with the call on ``stack`` (its mode already popped)."""
    split = _SPLITS.get(op) or _split_of(op)
    if split.names or len(stack) != split.count:
        _call_handler(mode.__typedops_dispatch__, op, stack)
        return
    # _call_handler, inlined for the common case: no keyword-only arguments.
    for i in split.tensor_positions:  # plain tensors, without a call
        if type(stack[i]) is not Tensor:
            types = _tensor_types(stack, split.tensor_positions)
            break
    else:
        types = split.plain_types
    result = mode.__typedops_dispatch__(op, types, tuple(stack), {})
    stack.clear()
    if split.returns == 1:
        stack.append(result)
    elif split.returns:
        stack.extend(result)


def _handle_unboxed(mode: DispatchMode, op: OperatorHandle, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``_handle`` for an unboxed call: the entry passed the schema's positional arguments
    and its keyword-only ones by name, defaults filled (Note [Unboxed twins of boxed
    kernels] in dispatch/_operator.py), just as the handler takes them."""
    split = _SPLITS.get(op) or _split_of(op)
    if split.returns != 1:  # the boxed way checks how many results the handler gave
        return call_through_stack(op, lambda stack: _handle(mode, op, stack), args, kwargs)
    if split.names:
        types = _tensor_types([*args, *kwargs.values()], split.tensor_positions)
    else:
        for i in split.tensor_positions:  # plain tensors, without a call
            if type(args[i]) is not Tensor:
                types = _tensor_types(args, split.tensor_positions)
                break
        else:
            types = split.plain_types
    return mode.__typedops_dispatch__(op, types, args, kwargs)


def _no_mode(op: OperatorHandle, keys: DispatchKeySet, stack: list[Any]) -> None:
    """No mode on the stack: a tensor carrying the Python key brought the call here (Note
    [Tensor subclasses that dispatch])."""
    cls = _dispatching_class(stack) if _DISPATCH_CLASSES else None
    if cls is None:
        op.redispatch_boxed(keys, stack)
    else:
        _call_handler(cls.__typedops_dispatch__, op, stack)


_python_fallback: Final = python_fallback(_handle, _handle_unboxed, _no_mode, _ABOVE_PYTHON_BITS)
_LIBRARY: Final = Library("_", "IMPL")
PYTHON_FALLBACK: Final = _LIBRARY.fallback(_python_fallback, DispatchKey.Python)
