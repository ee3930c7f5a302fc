"""``OperatorHandle``: what users hold to call, inspect and redispatch an operator."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from typing_extensions import ParamSpec

from ..schema import FunctionSchema
from ..vocabulary import DispatchKey, DispatchKeySet, RegistrationError
from ._trace import TRACE_ENABLED
from ._typed import TypedOperatorHandle, typed
from ._messages import (
    AUTOGRAD_NOT_LOADED,
    BATCHING_NOT_LOADED,
)

if TYPE_CHECKING:
    from ._operator import OperatorEntry

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["OperatorHandle", "RULE_REGISTRARS", "SlotSource", "unboxed_slots"]

# Rule registration the functionality layers install (they sit above this one): name ->
# fn(handle, rule, **options). ``register_autograd`` calls RULE_REGISTRARS["autograd"],
# ``register_vmap`` RULE_REGISTRARS["vmap"].
RULE_REGISTRARS: Final[dict[str, Callable[..., Any]]] = {}


class _EntryCall:
    """``OperatorHandle.call`` before the entry functions are bound: generates them."""

    def __get__(self, handle: OperatorHandle | None, owner: type | None = None) -> Any:
        if handle is None:
            return self
        return handle._bind_entries().call  # binds the entries (and so shadows this descriptor)


class OperatorHandle:
    """A handle on one operator overload.

    ``handle(*args)`` dispatches unboxed, ``handle.call_boxed(stack)`` boxed;
    ``handle.call`` is the generated entry function itself (the fastest way in).
    ``redispatch``/``redispatch_boxed`` continue a call below the highest key of the
    key set a kernel or fallback received.
    """

    # '__dict__' is made only when _bind_entries() stores the op's entry functions on the
    # instance, where they shadow the methods below (one call less on every later use).
    # That happens on the first call through the handle, not when the op is defined: an
    # op called only through its @op function or by name never makes the dict (Note
    # [Registration and the collector]).
    __slots__ = ("_entry", "_call", "__dict__")

    def __init__(self, entry: OperatorEntry) -> None:
        self._entry = entry
        # until the first call binds the entry function: the entry itself, whose __call__
        # binds it (Note [Handle calls without a frame]; no object more per op)
        self._call: Callable[..., Any] = entry

    def _bind_entries(self) -> OperatorEntry:
        """Make ``call``/``call_boxed``/``redispatch``/``redispatch_boxed`` the generated
        functions themselves (generating them if need be); returns the entry."""
        entry = self._entry
        call, redispatch, call_boxed, redispatch_boxed = entry.entries()
        self.__dict__.update(call=call, call_boxed=call_boxed, redispatch=redispatch, redispatch_boxed=redispatch_boxed)
        self._call = call
        return entry

    # -- identity ----------------------------------------------------------------------
    @property
    def schema(self) -> FunctionSchema:
        return self._entry.schema

    @property
    def name(self) -> str:
        """The qualified name, ``ns::name``."""
        return self._entry.schema.qualified_name

    @property
    def overload_name(self) -> str:
        return self._entry.schema.overload_name

    @property
    def full_name(self) -> str:
        return self._entry.full_name

    def __repr__(self) -> str:
        return f"<OperatorHandle {self._entry.schema}>"

    # -- calling ------------------------------------------------------------------------
    # ``call`` is a non-data descriptor, so the entry function _bind_entries() stores on the
    # instance shadows it: after the first call, ``handle.call`` is one dict read.
    call: Any = _EntryCall()

    # Note [Handle calls without a frame]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # ``handle(*args)`` looks ``__call__`` up on the class and, for a descriptor, calls its
    # ``__get__``. ``OperatorHandle.__call__`` is the member descriptor of the slot
    # ``_call`` (set below the class), so that lookup reads the slot -- the op's entry
    # function -- in C, and the call runs no Python frame of its own: a ``def __call__``
    # forwarding ``*args`` cost about 100 ns per call, and the earlier
    # ``property(attrgetter("call"))`` 20-40 ns more than the slot (a getter call and a
    # generic attribute load; measured on CPython 3.11 with the thread's CPU clock).
    # Until the first call the slot holds the op's ``OperatorEntry``, whose ``__call__``
    # binds the entry functions (``_bind_entries``, which sets the slot) and calls. See
    # also Note [Typed handle calls] in _typed.py.
    if TYPE_CHECKING:

        def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def call_boxed(self, stack: list[Any]) -> None:
        """Call with the arguments on ``stack``; the returns replace them."""
        self._bind_entries().call_boxed(stack)

    def redispatch(self, keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        """Continue an unboxed call below the highest key of ``keys``."""
        return self._bind_entries().redispatch(keys, *args, **kwargs)

    def redispatch_boxed(self, keys: DispatchKeySet, stack: list[Any]) -> None:
        """Continue a boxed call below the highest key of ``keys``."""
        self._bind_entries().redispatch_boxed(keys, stack)

    def typed(self, prototype: Callable[P, R]) -> TypedOperatorHandle[P, R]:
        """A handle whose calls mypy checks against ``prototype``'s signature.

        The prototype's inferred schema must match the op's (names, positions, types and
        returns), else ``SchemaMismatchError`` names the differences -- so the static
        types cannot silently disagree with the registered schema.
        """
        return typed(self, prototype)

    def register_autograd(self, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None) -> Any:
        """Give the op a backward rule (see ``TypedOperatorHandle.register_autograd``);
        returns the registration's handle (``remove()`` undoes it)."""
        registrar = RULE_REGISTRARS.get("autograd")
        if registrar is None:
            raise RegistrationError(AUTOGRAD_NOT_LOADED)
        return registrar(self, backward, setup_context=setup_context)

    def register_vmap(self, rule: Callable[..., Any]) -> Any:
        """Give the op a batching rule (see ``TypedOperatorHandle.register_vmap``); returns
        the registration's handle (``remove()`` undoes it)."""
        registrar = RULE_REGISTRARS.get("vmap")
        if registrar is None:
            raise RegistrationError(BATCHING_NOT_LOADED)
        return registrar(self, rule)

    def remove(self) -> None:
        """Remove the op's definition (as leaving the library that defined it would);
        calls through any handle of it then raise ``OperatorNotFoundError``."""
        definition = self._entry.definition
        if definition is not None:
            definition.remove()

    # -- seeing inside ----------------------------------------------------------------
    def has_kernel_for(self, key: DispatchKey | str) -> bool:
        """Whether a kernel is registered for ``key`` itself (a runtime or an alias key;
        fallbacks do not count), as torch's ``_dispatch_has_kernel_for_dispatch_key``."""
        return bool(self._entry.registrations.get(DispatchKey.parse(key)))

    def dump(self) -> str:
        """The schema and every registration with its key and source ``file:line``."""
        return self._entry.dump()

    def dump_table(self) -> str:
        """The computed table: each key's slot marked kernel, composite, fallback, fallthrough or missing."""
        return self._entry.dump_table()


# Note [Handle calls without a frame]: ``handle(...)`` reads the slot ``_call``.
setattr(OperatorHandle, "__call__", vars(OperatorHandle)["_call"])


class SlotSource(Protocol):
    """What ``unboxed_slots`` returns: ``.cache[bits]`` is the callable serving key bits ``bits``."""

    @property
    def cache(self) -> Mapping[int, Callable[..., Any]]: ...


def unboxed_slots(handle: OperatorHandle) -> SlotSource:
    """The op's unboxed slots: ``unboxed_slots(h).cache[bits](*args)`` is what
    ``h.redispatch(keys, *args)`` does when ``bits`` are ``keys`` below their highest key,
    without redispatch's frame (generated autograd kernels continue their calls so). Read
    ``.cache`` on every call: a registration replaces it. With the dispatch trace on, the
    slots go through ``redispatch``, so the trace still shows the call."""
    if TRACE_ENABLED:
        return _TracedSlots(handle)
    return handle._entry


class _TracedSlots:
    __slots__ = ("cache",)

    def __init__(self, handle: OperatorHandle) -> None:
        self.cache = _TracedCache(handle)


class _TracedCache(dict[int, Callable[..., Any]]):
    def __init__(self, handle: OperatorHandle) -> None:
        super().__init__()
        self.handle = handle

    def __missing__(self, bits: int) -> Callable[..., Any]:
        # redispatch continues below the highest key of its set: one bit above ``bits``.
        keys = DispatchKeySet.from_bits(bits | (1 << bits.bit_length()))
        return functools.partial(self.handle.redispatch, keys)
