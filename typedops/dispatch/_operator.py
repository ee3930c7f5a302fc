"""One operator: its schema, its registrations, and its computed dispatch tables.

Note [Table precedence]
~~~~~~~~~~~~~~~~~~~~~~~
For each runtime key the computed table holds the first of:

1. a kernel registered directly for the key;
2. a ``CompositeExplicitAutograd`` kernel, for backend keys;
3. a ``CompositeImplicitAutograd`` kernel, for backend and autograd keys -- except for an
   autograd key whose backend has a direct kernel or the op has a
   ``CompositeExplicitAutograd`` kernel (then autograd must not decompose: the backend
   kernel is the implementation, and the autograd key falls through to it);
4. an ``Autograd`` alias kernel, for autograd keys;
5. the backend fallback for the key (the op's namespace's, else the global one);
6. missing: calling raises ``NoKernelError``.

The slot for an *empty* key set (an op called with no tensors, whose BackendSelect key
fell through) takes the ``CompositeExplicitAutograd`` kernel, else the
``CompositeImplicitAutograd`` one, as PyTorch's does.

A key whose slot is a fallthrough kernel is cleared from the op's *mask*; every call
ANDs its key set with the mask before picking the highest key, so a fallthrough costs
nothing per call.

Note [Atomic tables]
~~~~~~~~~~~~~~~~~~~~
A table is an immutable tuple: slot ``i`` (for ``i >= 1``) serves runtime key ``i - 1``,
slot 0 the empty key set, and the last item is the mask. Registration computes a new
tuple under the dispatcher's lock and publishes it with one attribute assignment; a
call reads the attribute once, so it sees the old table or the new one, never a mix.
A newly defined op computes its tables on first use (defining thousands of ops at
import stays cheap); that first computation also takes the lock.

Calls do not index the table directly: each table version comes with a *slot cache*, a
dict from a call's incoming key bits to the ready-to-call slot (fallthroughs masked,
highest key picked, and for kernels that take the key set, the set already bound).
The hot path is one dict subscript; a miss computes the slot from that cache's own
table. A new table gets a new cache, published together with it.

Note [Unboxed twins of boxed kernels]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An unboxed call reaching a boxed kernel goes through a generated boxing wrapper: it
builds a stack of the arguments, calls the kernel, checks and pops the returns. A kernel
that wants the call's arguments as Python arguments anyway (the Python key's fallback
hands them to a mode's handler as ``args`` and ``kwargs``) may carry an *unboxed twin*,
``Boxed(fn, unboxed=twin)``: unboxed calls (and the direct boxed calls of Note [Direct
boxed calls] in _entry.py) then reach ``twin(op, keys, *args, **kwargs)`` -- the
positional arguments by position, the keyword-only ones by name in schema order, every
default filled -- which returns what the op returns (a tuple for several results); boxed
calls and redispatches still reach ``fn`` with the stack. The twin must behave as the
boxed kernel does.

Note [Reading the registry]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Only the published tables and slot caches are read without the lock. Everything else
the registry holds -- an op's ``registrations`` (a dict of lists, changed in place), its
kept wrappers, the dispatcher's fallbacks and fallback views -- is read under the lock
too: a reader iterating it while a registration changes it would raise ("dictionary
changed size during iteration", a ``KeyError``) or see half a change. So ``dump``,
``dump_table``, ``slots``, the ``NoKernelError`` message and ``fallbacks_for`` read
under the lock, and see the state before or after each registration. A slot cache's
miss builds a kernel's wrappers without the lock (that may compile code), then keeps
them under it, and only while the registration is in the current table: the op's
library may have been closed meanwhile (``mark_removed`` drops every kept wrapper),
and that call still finishes on the table it started with.
"""

from __future__ import annotations

import enum
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from typing_extensions import assert_never

from ..vocabulary import ArgumentValueError, NoKernelError, OperatorNotFoundError
from ..boxing import CallShape, conversions_for, make_boxing, make_unboxing, shape_and_defaults
from ..schema import FunctionSchema
from ..vocabulary import (
    AUTOGRAD_KEYS,
    BACKEND_KEYS,
    NUM_RUNTIME_KEYS,
    DispatchKey,
    DispatchKeySet,
    backend_key_for,
)
from ._entry import DEVICE_HINT_SHIFT, backend_by_device, make_entries
from ._kernel import Boxed, KernelKind, Registration, bind_keys, fallthrough
from ._messages import (
    EMPTY_TENSOR_LIST,
    NO_DISPATCH_KEY,
    NO_KERNEL,
    OPERATOR_REMOVED,
)

from ._handle import OperatorHandle

if TYPE_CHECKING:
    from ._dispatcher import Dispatcher

__all__ = ["OperatorEntry", "Slot", "SlotRule", "SlotCache"]

_RUNTIME_KEYS: Final = tuple(DispatchKey(i) for i in range(NUM_RUNTIME_KEYS))
_AUTOGRAD: Final = frozenset(AUTOGRAD_KEYS)
_BACKENDS: Final = frozenset(BACKEND_KEYS)
CEA: Final = DispatchKey.CompositeExplicitAutograd
CIA: Final = DispatchKey.CompositeImplicitAutograd
AUTOGRAD_ALIAS: Final = DispatchKey.Autograd



class SlotRule(enum.Enum):
    """Which rule of Note [Table precedence] chose a slot's registration."""

    kernel = "kernel"  # 1. registered for the key itself
    composite_explicit = "CompositeExplicitAutograd"  # 2.
    composite_implicit = "CompositeImplicitAutograd"  # 3.
    autograd_alias = "Autograd"  # 4.
    fallback = "fallback"  # 5.
    missing = "missing"  # 6. (the registration is None)


_KERNEL: Final = SlotRule.kernel
_CEA_RULE: Final = SlotRule.composite_explicit
_CIA_RULE: Final = SlotRule.composite_implicit
_MISSING: Final = SlotRule.missing
_FALLTHROUGH: Final = KernelKind.fallthrough

# (registration chosen, the rule that chose it); registration None means missing.
Slot = tuple["Registration | None", SlotRule]


_CACHE_LIMIT: Final = 256  # distinct incoming key sets remembered per table version
_BACKEND_SELECT: Final = int(DispatchKey.BackendSelect)
_RUNTIME_BITS: Final = (1 << NUM_RUNTIME_KEYS) - 1


class SlotCache(dict[int, Callable[..., Any]]):
    """Incoming key bits -> the callable that serves them, for one table version.

    The table holds the chosen registration per slot (None: missing or fallthrough); the
    wrapper a registration needs is built here, on the first call that reaches it. For
    the unboxed path (``boxed`` false) a value takes the call's arguments; for the boxed
    path it takes the stack, with the op handle and key set bound.
    """

    __slots__ = ("table", "entry", "boxed")

    def __init__(self, table: tuple[Any, ...], entry: OperatorEntry, *, boxed: bool) -> None:
        # No dict.__init__(): called without arguments it does nothing (ops are defined by
        # the thousand, and each makes two caches).
        self.table = table
        self.entry = entry
        self.boxed = boxed

    def __missing__(self, bits: int) -> Callable[..., Any]:
        entry = self.entry
        table = self.table
        masked = bits & table[-1]  # clears a device hint too (Note [Factories in one hop] in _entry.py)
        keys = DispatchKeySet.from_bits(masked)
        reg = table[masked.bit_length()]
        result: Callable[..., Any]
        hinted = bits >> DEVICE_HINT_SHIFT
        if hinted and reg is not None and masked.bit_length() - 1 == _BACKEND_SELECT and backend_by_device(reg.fn):
            result = self[hinted]  # the slot the marked kernel's redispatch would reach
        elif self.boxed:
            slot = entry._missing_boxed if reg is None else entry._wrappers(reg)[1]
            result = functools.partial(slot, entry.handle, keys)
        elif reg is None:
            result = functools.partial(entry._missing, keys)
        else:
            fn, keyed = entry._wrappers(reg)[0]
            result = bind_keys(fn, keys) if keyed else fn
        if len(self) < _CACHE_LIMIT:
            self[bits] = result
        return result


class _RemovedCache(SlotCache):
    """The cache of an op whose definition was removed: every call raises."""

    def __missing__(self, bits: int) -> Callable[..., Any]:
        entry = self.entry
        keys = DispatchKeySet.from_bits(bits & _RUNTIME_BITS)  # without a device hint
        if self.boxed:
            return functools.partial(entry._removed_boxed, entry.handle, keys)
        return functools.partial(entry._removed, keys)


class _PendingCache(SlotCache):
    """The cache of an op whose tables are not computed yet: the first call computes them."""

    def __init__(self, entry: OperatorEntry, *, boxed: bool) -> None:
        self.table = ()
        self.entry = entry
        self.boxed = boxed

    def __missing__(self, bits: int) -> Callable[..., Any]:
        self.entry.ensure_tables()
        real = self.entry.boxed_cache if self.boxed else self.entry.cache
        return real[bits]


class _Unset(SlotCache):
    """The cache of an op whose entry functions are not generated yet. Nothing calls it:
    ``entries()`` puts pending caches in its place before any generated code exists, so
    an op that is defined but never called makes no caches at all."""

    def __init__(self) -> None:
        self.table = ()

    def __missing__(self, bits: int) -> Callable[..., Any]:
        raise AssertionError("an op's caches are read before its entry functions exist")


_UNSET: Final = _Unset()


class OperatorEntry:
    """The dispatcher's record of one operator. Users see it through ``OperatorHandle``."""

    # Slots: a library defines thousands of these, and the hot path reads .cache.
    __slots__ = (
        "schema", "full_name", "source", "dispatcher", "registrations", "_wrapped", "_lock",
        "handle", "definition", "cache", "boxed_cache", "_entries", "_shape", "_defaults",
        "_table", "device_check",
    )  # fmt: skip

    def __init__(self, schema: FunctionSchema, full_name: str, source: str, dispatcher: Dispatcher) -> None:
        self.schema = schema
        self.full_name = full_name
        self.source = source
        self.dispatcher = dispatcher
        self.registrations: dict[DispatchKey, list[Registration]] = {}
        # Made on first use: most defined ops are never called (fewer objects for the GC).
        self._wrapped: dict[Registration, tuple[tuple[Callable[..., Any], bool], Callable[..., None]]] | None = None
        self._lock: threading.RLock = dispatcher.lock
        self.handle: OperatorHandle = OperatorHandle(self)
        self.definition: Any = None  # the DefinitionHandle that undoes the definition
        # Made on first use, so defining thousands of ops stays cheap: the shape and
        # defaults (for generated code), the entry functions, the slot caches and the
        # tables, all under the lock (Note [Registration and the collector]). The class
        # has no __getattr__ on purpose: it would slow every attribute load on the hot
        # path.
        self.cache: SlotCache = _UNSET
        self.boxed_cache: SlotCache = _UNSET
        self._entries: tuple[Callable[..., Any], ...] | None = None
        self._shape: CallShape | None = None
        self._defaults: tuple[Any, ...] = ()
        self._table: tuple[Any, ...] | None = None  # None until computed
        self.device_check = False  # Note [One device per call] in _entry.py

    @property
    def shape(self) -> CallShape:
        if self._shape is None:
            with self._lock:
                if self._shape is None:
                    shape, self._defaults = shape_and_defaults(self.schema)
                    self._shape = shape  # last: it marks both as ready
        return self._shape

    @property
    def defaults(self) -> tuple[Any, ...]:
        self.shape  # noqa: B018  # computes the defaults too
        return self._defaults

    def entries(self) -> tuple[Callable[..., Any], ...]:
        """``(call, redispatch, call_boxed, redispatch_boxed)``, generated on first use."""
        if self._entries is None:
            with self._lock:
                if self._entries is None:
                    if self.cache is _UNSET:  # the first call computes the tables
                        self.boxed_cache = _PendingCache(self, boxed=True)
                        self.cache = _PendingCache(self, boxed=False)
                    self._entries = make_entries(self)
        return self._entries

    @property
    def call(self) -> Callable[..., Any]:
        return self.entries()[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The first call through ``handle(...)``: bind the handle's entry functions, then
        call (Note [Handle calls without a frame] in _handle.py)."""
        return self.handle._bind_entries().call(*args, **kwargs)

    @property
    def redispatch(self) -> Callable[..., Any]:
        return self.entries()[1]

    @property
    def call_boxed(self) -> Callable[..., Any]:
        return self.entries()[2]

    @property
    def redispatch_boxed(self) -> Callable[..., Any]:
        return self.entries()[3]

    @property
    def table(self) -> tuple[Any, ...]:
        """The computed table: a registration (or None) per slot, then the mask."""
        self.ensure_tables()
        assert self._table is not None
        return self._table

    def ensure_tables(self) -> None:
        if not self.has_tables:
            with self._lock:
                if not self.has_tables:
                    self.recompute()

    def recompute(self) -> None:
        """Compute and publish the table. Callers hold the dispatcher lock."""
        regs: list[Registration | None] = []
        mask = 0
        for index, (reg, _) in enumerate(self.slots()):
            if reg is not None and reg.kind is _FALLTHROUGH:
                regs.append(None)
            else:
                regs.append(reg)
                if index:
                    mask |= 1 << (index - 1)
        table = (*regs, mask)
        # Each cache carries its own table, and a call reads a cache attribute once, so
        # it sees one complete version (see Note [Atomic tables]). The caches go first:
        # _table marks the tables as computed, and a pending cache that finds them
        # computed reads the caches.
        self.boxed_cache = SlotCache(table, self, boxed=True)
        self.cache = SlotCache(table, self, boxed=False)
        self._table = table

    def mark_removed(self) -> None:
        """After the op's definition is removed, every call through old handles raises."""
        table = (*([None] * (NUM_RUNTIME_KEYS + 1)), -1)
        self.boxed_cache = _RemovedCache(table, self, boxed=True)
        self.cache = _RemovedCache(table, self, boxed=False)
        self._table = table
        self.registrations.clear()
        self._wrapped = None

    def _removed(self, keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        raise OperatorNotFoundError(OPERATOR_REMOVED.format(name=self.full_name, then="call"))

    def _removed_boxed(self, op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
        self._removed(keys)

    @property
    def has_tables(self) -> bool:
        return self._table is not None

    def slots(self) -> list[Slot]:
        """The registration chosen for the empty key set, then for each runtime key.
        Callers hold the lock (Note [Reading the registry])."""
        regs = {key: stack[-1] for key, stack in self.registrations.items() if stack}
        fallbacks = self.dispatcher.fallbacks_for(self.schema.namespace)
        result: list[Slot] = []
        if CEA in regs:
            result.append((regs[CEA], _CEA_RULE))
        elif CIA in regs:
            result.append((regs[CIA], _CIA_RULE))
        else:
            result.append((None, _MISSING))
        for key in _RUNTIME_KEYS:
            result.append(self._choose(key, regs, fallbacks, self.schema))
        return result

    @staticmethod
    def _choose(
        key: DispatchKey,
        regs: dict[DispatchKey, Registration],
        fallbacks: dict[DispatchKey, Registration],
        schema: FunctionSchema,
    ) -> Slot:
        direct = regs.get(key)
        if direct is not None:
            return direct, _KERNEL
        if key in _BACKENDS and CEA in regs:
            return regs[CEA], _CEA_RULE
        if CIA in regs and (key in _BACKENDS or key in _AUTOGRAD):
            backend = backend_key_for(key)
            backend_has_kernel = CEA in regs or (backend is not None and backend in regs)
            if key in _BACKENDS or not backend_has_kernel:
                return regs[CIA], _CIA_RULE
        if key in _AUTOGRAD and AUTOGRAD_ALIAS in regs:
            return regs[AUTOGRAD_ALIAS], SlotRule.autograd_alias
        fallback = fallbacks.get(key)
        if fallback is not None:
            only_for = fallback.fn.only_for if isinstance(fallback.fn, Boxed) else None
            if only_for is not None and not only_for(schema, frozenset(regs)):
                # A fallback limited to some ops (see Boxed): the others fall through.
                return Registration(key, fallthrough, _FALLTHROUGH, False, fallback.source), SlotRule.fallback
            return fallback, SlotRule.fallback
        return None, _MISSING

    def _wrappers(self, reg: Registration) -> tuple[tuple[Callable[..., Any], bool], Callable[..., None]]:
        """(unboxed slot, boxed slot) for a registration, built once and kept.

        Called by slot caches on a miss, without the lock; the dict of kept wrappers is
        read once here and changed only under the lock (Note [Reading the registry])."""
        wrapped = self._wrapped
        cached = None if wrapped is None else wrapped.get(reg)
        if cached is not None:
            return cached
        result = self._build_wrappers(reg)
        with self._lock:
            # Only registrations in the current table are remembered: a call still holding
            # an old cache (the registration removed, or the op's library closed meanwhile)
            # uses its wrapper once, but must not bring it back.
            if self._table is not None and any(r is reg for r in self._table):
                if self._wrapped is None:
                    self._wrapped = {}
                result = self._wrapped.setdefault(reg, result)
        return result

    def _build_wrappers(self, reg: Registration) -> tuple[tuple[Callable[..., Any], bool], Callable[..., None]]:
        kind = reg.kind
        if kind is KernelKind.boxed:
            fn = reg.fn.fn if isinstance(reg.fn, Boxed) else reg.fn
            twin = reg.fn.unboxed if isinstance(reg.fn, Boxed) else None
            if twin is not None:  # Note [Unboxed twins of boxed kernels]
                return (functools.partial(twin, self.handle), True), fn
            return (make_boxing(self.shape, fn, self.handle), True), fn
        if kind is KernelKind.unboxed:
            if reg.unboxing is not None:  # written ahead of time by the code generator
                return (reg.fn, reg.with_keys), reg.unboxing(reg.fn)
            conversions = conversions_for(self.schema, reg.fn, with_keys=reg.with_keys)
            unboxing = make_unboxing(self.shape, reg.fn, keyed=reg.with_keys, conversions=conversions)
            return (reg.fn, reg.with_keys), unboxing
        if kind is KernelKind.fallthrough:
            raise AssertionError(f"{reg.describe()} has no wrappers: tables hold None for fallthroughs")
        assert_never(kind)

    def drop_wrappers(self, reg: Registration) -> None:
        if self._wrapped is not None:
            self._wrapped.pop(reg, None)

    # -- missing kernels --------------------------------------------------------------
    def _missing(self, keys: DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        if not keys:
            self._refuse_empty_lists(args, kwargs)
        raise self.no_kernel(keys)

    def _missing_boxed(self, op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
        if not keys:
            self._refuse_empty_lists(stack[len(stack) - len(self.schema.arguments) :], {})
        raise self.no_kernel(keys)

    def _refuse_empty_lists(self, args: Any, kwargs: dict[str, Any]) -> None:
        """A call with no dispatch key whose ``Tensor[]`` argument is empty (``cat([])``)
        had no tensor to dispatch on: say that, not which kernels are missing."""
        for index, argument in enumerate(self.schema.arguments):
            value = args[index] if index < len(args) else kwargs.get(argument.name)
            if str(argument.type) == "Tensor[]" and isinstance(value, (list, tuple)) and not value:
                raise ArgumentValueError(EMPTY_TENSOR_LIST.format(op=self.full_name, arg=argument.name))

    def no_kernel(self, keys: DispatchKeySet) -> NoKernelError:
        with self._lock:  # Note [Reading the registry]
            available = tuple(k for k, stack in self.registrations.items() if stack)
        names = ", ".join(k.name for k in available) or "none"
        if not keys:
            message = NO_DISPATCH_KEY.format(op=self.full_name, names=names, name=self.schema.name)
            return NoKernelError(message, self.full_name, keys, None, available)
        key = keys.highest()
        message = NO_KERNEL.format(op=self.full_name, key=key.name, keys=keys, names=names, name=self.schema.name)
        return NoKernelError(message, self.full_name, keys, key, available)

    # -- seeing inside --------------------------------------------------------------
    def dump(self) -> str:
        with self._lock:  # one state of the registry (Note [Reading the registry])
            return self._dump()

    def _dump(self) -> str:
        removed = " (removed: its library was closed)" if isinstance(self.cache, _RemovedCache) else ""
        lines = [f"{self.schema}", f"  defined at {self.source}{removed}"]
        for key in sorted(self.registrations):
            for depth, reg in enumerate(reversed(self.registrations[key])):
                shadowed = " (overridden)" if depth else ""
                lines.append(f"  {key.name}: {reg.describe()} at {reg.source}{shadowed}")
        return "\n".join(lines)

    def dump_table(self) -> str:
        with self._lock:  # one state of the registry (Note [Reading the registry])
            slots = self.slots()
        width = max(len(k.name) for k in _RUNTIME_KEYS)
        lines = [f"computed dispatch table for {self.full_name}:"]
        order = [(f"{k.name}", slots[k + 1]) for k in reversed(_RUNTIME_KEYS)]
        order.append(("(no keys)", slots[0]))
        for label, (reg, how) in order:
            lines.append(f"  {label:<{width}}  {_describe_slot(reg, how)}")
        return "\n".join(lines)


def _describe_slot(reg: Registration | None, how: SlotRule) -> str:
    if reg is None:
        return "missing"
    if reg.kind is KernelKind.fallthrough:
        return f"fallthrough ({'fallback' if how is SlotRule.fallback else 'kernel'} at {reg.source})"
    if how is SlotRule.fallback:
        return f"fallback: {reg.describe()} at {reg.source}"
    if how is SlotRule.kernel:
        return f"kernel: {reg.describe()} at {reg.source}"
    if how is SlotRule.autograd_alias:
        return f"kernel [Autograd alias]: {reg.describe()} at {reg.source}"
    if how is SlotRule.composite_explicit or how is SlotRule.composite_implicit:
        return f"composite [{how.value}]: {reg.describe()} at {reg.source}"
    if how is SlotRule.missing:
        raise AssertionError(f"a missing slot holds {reg.describe()}; it holds no registration")
    assert_never(how)
