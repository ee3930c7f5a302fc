"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``is_grad_enabled``.

Note [Grad mode is the exclude set]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As in PyTorch, grad mode is not a flag autograd kernels read: ``no_grad()`` excludes every
Autograd key from the calls in its block (``typedops.dispatch.exclude_keys``), so those calls
never reach an autograd kernel and record nothing. ``enable_grad()`` lifts that exclusion
(``allow_keys``) without adding the keys to any call. The exclude set lives in a context
variable, so the mode is per thread and per asyncio task (Note [Thread-local keys] in
dispatch/_tls.py), and both work as context managers and decorators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from ..dispatch import AUTOGRAD_KEYS, DispatchKeySet, KeysChanged, allow_keys, exclude_keys, local_exclude

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "AUTOGRAD_KEY_SET"]

F = TypeVar("F", bound=Callable[..., Any])
AUTOGRAD_KEY_SET: Final = DispatchKeySet(AUTOGRAD_KEYS)
_AUTOGRAD_BITS: Final = int(AUTOGRAD_KEY_SET)


def is_grad_enabled() -> bool:
    """Whether ops called here record gradients (no enclosing ``no_grad``)."""
    return not int(local_exclude()) & _AUTOGRAD_BITS


def no_grad() -> KeysChanged:
    """A block (or decorator) in which ops record no gradients."""
    return exclude_keys(AUTOGRAD_KEY_SET)


def enable_grad() -> KeysChanged:
    """A block (or decorator) in which ops record gradients again, inside ``no_grad``."""
    return allow_keys(AUTOGRAD_KEY_SET)


class set_grad_enabled:  # noqa: N801 -- PyTorch's name; used like a function
    """Grad mode on or off: ``with set_grad_enabled(False): ...``, or as a decorator.

    Called on its own (``set_grad_enabled(False)``) it changes the mode at once, for the rest
    of the current thread or asyncio task, as PyTorch's does.
    """

    __slots__ = ("_block",)

    def __init__(self, mode: bool) -> None:
        self._block: KeysChanged | None = enable_grad() if mode else no_grad()
        self._block.__enter__()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        if self._block is not None:
            self._block.__exit__(*exc)
            self._block = None

    def __call__(self, fn: F) -> F:
        block = self._block
        assert block is not None, "set_grad_enabled(...) used as a decorator after its block ended"
        block.__exit__(None, None, None)  # as a decorator it acts per call, not from now on
        self._block = None
        return block(fn)
