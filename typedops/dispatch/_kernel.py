"""What a registration holds: kernels, fallthrough and boxed markers, source locations."""

from __future__ import annotations

import enum
import functools
import os
import sys
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, NamedTuple

from ..boxing import bad_returns
from ..vocabulary import ArgumentError, BoundedCache, DispatchKey
from ._messages import BOXED_NOT_A_FUNCTION

__all__ = [
    "Fallthrough", "fallthrough", "Boxed", "boxed", "call_through_stack", "KernelKind", "Registration", "caller_location",
    "bound_to_keys", "bind_keys",
]  # fmt: skip


class Fallthrough:
    """The fallthrough kernel: "nothing to do at this key, go on to the next one".

    Registered for an op (``lib.impl("op", typedops.fallthrough, "Tracer")``) or as a
    fallback, it costs nothing per call: the key is masked out of the op's key set when
    its table is computed.
    """

    _instance: Fallthrough | None = None

    def __new__(cls) -> Fallthrough:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "typedops.fallthrough"


fallthrough: Final = Fallthrough()


class Boxed:
    """A boxed kernel ``fn(op, keys, stack) -> None``, marked so registration knows its convention.

    ``only_for(schema, keys)``, when given, limits a *fallback* to the ops it accepts (``keys``:
    those the op has kernels for): for the others its key falls through, at no cost per
    call (ADInplaceOrView serves only ops with a mutable argument).

    ``unboxed(op, keys, *args, **kwargs)``, when given, is the same kernel in the unboxed
    convention, which unboxed calls reach instead of a generated boxing wrapper (Note
    [Unboxed twins of boxed kernels] in _operator.py).
    """

    __slots__ = ("fn", "only_for", "unboxed")

    def __init__(
        self,
        fn: Callable[[Any, Any, list[Any]], None],
        only_for: Callable[[Any, Any], bool] | None = None,
        unboxed: Callable[..., Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise ArgumentError(BOXED_NOT_A_FUNCTION.format(kind=type(fn).__name__))
        self.fn = fn
        self.only_for = only_for
        self.unboxed = unboxed

    def __call__(self, op: Any, keys: Any, stack: list[Any]) -> None:
        self.fn(op, keys, stack)

    def __repr__(self) -> str:
        return f"boxed({getattr(self.fn, '__qualname__', self.fn)!r})"


def call_through_stack(op: Any, run: Callable[[list[Any]], object], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """An unboxed call of ``op`` (``args`` and ``kwargs`` as an unboxed twin receives them:
    Note [Unboxed twins of boxed kernels] in _operator.py) made by the boxed ``run(stack)``
    on the stack of its arguments: the returns checked, and given back as the unboxed call
    returns them (None, the one value, or a tuple), as a generated boxing wrapper does."""
    stack = [*args, *kwargs.values()]
    run(stack)
    count = len(op.schema.returns)
    if len(stack) != count:
        raise bad_returns(op, stack, count)
    return None if count == 0 else stack[0] if count == 1 else tuple(stack)


def boxed(fn: Callable[[Any, Any, list[Any]], None], only_for: Callable[[Any, Any], bool] | None = None) -> Boxed:
    """Mark ``fn(op, keys, stack)`` as a boxed kernel (usable as a decorator); see ``Boxed``
    for ``only_for``."""
    return Boxed(fn, only_for)


# Note [Kernels bound to their keys]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A kernel registered ``with_keys`` receives the key set first; an unboxed slot serves it as
# ``functools.partial(kernel, keys)``. Calling a Python function through a partial goes
# through C (the interpreter cannot run it in its own frame loop as it does a direct
# Python-to-Python call), and the kernel then works out from the keys what it needs on
# every call -- for a generated autograd kernel, the bits below autograd. That hop was the
# larger part of what recording an op costs on small tensors. ``bound_to_keys(factory)``
# makes a with-keys kernel from ``factory(keys) -> kernel(*args)``: a slot cache calls the
# factory once per key set and serves calls with the function it returns, a plain Python
# function the entry calls directly. Boxed calls and ``kernel(keys, ...)`` itself reach
# the same functions, made once per key set.
_FACTORIES: Final[weakref.WeakKeyDictionary[Callable[..., Any], Callable[[Any], Callable[..., Any]]]] = (
    weakref.WeakKeyDictionary()
)
_MADE_LIMIT: Final = 64  # functions a bound kernel keeps for its own calls; a program meets a few key sets


def bound_to_keys(factory: Callable[[Any], Callable[..., Any]]) -> Callable[..., Any]:
    """A kernel to register ``with_keys=True, check=False`` (it takes ``(keys, *args,
    **kwargs)``, so its signature says nothing of the op's) that ``factory(keys)`` binds to
    each key set (Note [Kernels bound to their keys]); it has the factory's name."""
    made: dict[Any, Callable[..., Any]] = {}

    def kernel(keys: Any, *args: Any, **kwargs: Any) -> Any:
        fn = made.get(keys)
        if fn is None:
            if len(made) >= _MADE_LIMIT:
                made.clear()
            fn = made[keys] = factory(keys)
        return fn(*args, **kwargs)

    kernel.__name__ = getattr(factory, "__name__", kernel.__name__)
    kernel.__qualname__ = getattr(factory, "__qualname__", kernel.__qualname__)
    _FACTORIES[kernel] = factory
    return kernel


def bind_keys(kernel: Callable[..., Any], keys: Any) -> Callable[..., Any]:
    """What serves calls with ``keys`` of a kernel registered ``with_keys``: the function its
    factory makes if it is ``bound_to_keys``, else ``kernel`` with ``keys`` bound first."""
    factory = _FACTORIES.get(kernel)
    return functools.partial(kernel, keys) if factory is None else factory(keys)


class KernelKind(enum.Enum):
    """How a registered kernel is called (its calling convention)."""

    unboxed = "unboxed"  # a typed function: fn(*args) -> returns (or fn(keys, *args))
    boxed = "boxed"  # a Boxed kernel: fn(op, keys, stack), popping arguments, pushing returns
    fallthrough = "fallthrough"  # typedops.fallthrough: never called, its key is masked out


class _Fields(NamedTuple):
    key: DispatchKey
    fn: Any
    kind: KernelKind
    with_keys: bool
    source: str
    # For an unboxed kernel of generated code: the factory, written into the generated
    # module, that makes its unboxing wrapper (``unboxing(fn)``); None: compiled on first use.
    unboxing: Any = None


class Registration(_Fields):
    """One kernel or fallback as registered: what, where from, and how it is called.

    ``kind`` is its ``KernelKind``; ``with_keys`` marks an unboxed kernel whose first
    parameter receives the dispatch key set.

    Immutable, and compared by identity: two registrations of the same kernel are two
    entries on a key's stack, each removed on its own, each with its own wrappers. A
    tuple rather than a frozen dataclass, whose constructor costs three times as much
    (every ``@op`` makes one).
    """

    __slots__ = ()
    __eq__ = object.__eq__  # pyright: ignore[reportAssignmentType] -- identity, not tuple, equality on purpose
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def describe(self) -> str:
        if self.kind is KernelKind.fallthrough:
            return "fallthrough"
        name = getattr(self.fn.fn if isinstance(self.fn, Boxed) else self.fn, "__qualname__", repr(self.fn))
        keyed = ", takes keys" if self.with_keys else ""
        return f"{self.kind.value} {name}{keyed}"


_PACKAGE_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The registration machinery: a registration's source is the first frame outside these,
# so code inside the package that registers ops (the demo, the core library) is named.
# Layers above the dispatcher that register on a user's behalf (@op) add their folder.
_machinery: tuple[str, ...] = tuple(
    os.path.join(_PACKAGE_DIR, part) + os.sep for part in ("dispatch", "boxing", "schema")
)
# File name -> whether it is machinery (cleared when the machinery grows).
_inside_machinery: Final[BoundedCache[str, bool]] = BoundedCache(1024, "registration machinery files")


def add_registration_machinery(folder: str) -> None:
    """Count code under ``folder`` as registration machinery: ``caller_location`` names
    the first frame outside it (the user's line that asked for the registration)."""
    global _machinery
    _machinery = (*_machinery, os.path.join(os.path.abspath(folder), ""))
    _inside_machinery.clear()


def _is_inside(filename: str) -> bool:
    inside = _inside_machinery.get(filename)
    if inside is None:
        # Imported modules' code names absolute paths: abspath (tens of microseconds the
        # first time, on every library's import) only for the others.
        path = filename if os.path.isabs(filename) else os.path.abspath(filename)
        inside = filename.startswith("<typedops") or path.startswith(_machinery)
        _inside_machinery.put(filename, inside)
    return inside


def caller_location() -> str:
    """``file:line`` of the nearest caller outside typedops' registration machinery."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not _is_inside(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"
