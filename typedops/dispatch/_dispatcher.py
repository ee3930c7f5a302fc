"""The dispatcher singleton: every operator, every fallback, one lock.

Registration goes through ``Library`` (``_library.py``); this module owns the state it
changes. All changes happen under ``lock`` and end by recomputing the affected tables
(Note [Atomic tables]); lookups and calls take no lock. Reading the mutable parts of the
registry (fallbacks, an op's registrations, listings) takes it too (Note [Reading the
registry] in _operator.py).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, NoReturn

from ..vocabulary import BoundedCache, OperatorNotFoundError, RegistrationError
from ..schema import FunctionSchema
from ..vocabulary import AUTOGRAD_KEYS, DispatchKey
from ._collector import note_registration
from ._kernel import KernelKind, Registration, fallthrough
from ._messages import (
    ALREADY_DEFINED,
    ALREADY_DEFINED_WHERE,
    DEFINED_TWICE_IN_BATCH,
    DID_YOU_MEAN,
    FALLBACK_TWICE,
    KERNEL_TWICE,
    NAMES_HAVE_NAMESPACES,
    NO_SUCH_OPERATOR,
    OPERATOR_REMOVED,
    SECOND_DEF_LIBRARY,
)
from ._operator import OperatorEntry

if TYPE_CHECKING:
    from ._handle import OperatorHandle

__all__ = ["Dispatcher", "dispatcher", "GLOBAL_NAMESPACE"]

GLOBAL_NAMESPACE: Final = "_"
BUILTIN_SOURCE: Final = "<typedops built-in>"
_VIEWS_LIMIT: Final = 256

# Functionality keys every op falls through unless something registers for them, as in
# PyTorch: a tensor carries AutogradCPU, but an op without autograd support goes on to CPU.
_BUILTIN_FALLTHROUGHS: Final = (
    DispatchKey.BackendSelect,
    DispatchKey.Python,
    DispatchKey.ADInplaceOrView,
    *AUTOGRAD_KEYS,
    DispatchKey.Tracer,
    DispatchKey.Profiler,
    DispatchKey.Autocast,
    DispatchKey.Batched,
)


class Dispatcher:
    """Finds operators and holds the registry. Use the singleton ``typedops.dispatcher``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._ops: dict[str, OperatorEntry] = {}  # full name -> entry, in definition order
        # qualified name -> its overload, or a list of them when there are several (most
        # names have one: no list per op, see Note [Registration and the collector])
        self._overloads: dict[str, OperatorEntry | list[OperatorEntry]] = {}
        self._fallbacks: dict[str, dict[DispatchKey, list[Registration]]] = {}
        # namespace -> the fallback of each key for its ops (fallbacks_for); bounded, as a
        # program may use ever new namespaces, and cleared on any fallback change.
        self._fallback_view: BoundedCache[str, dict[DispatchKey, Registration]] = BoundedCache(
            _VIEWS_LIMIT, "fallback views by namespace"
        )
        self._def_libraries: dict[str, str] = {}  # namespace -> where its DEF library was made
        builtin = {
            key: [Registration(key, fallthrough, KernelKind.fallthrough, False, BUILTIN_SOURCE)]
            for key in _BUILTIN_FALLTHROUGHS
        }
        self._fallbacks[GLOBAL_NAMESPACE] = builtin
        # Called with an op's qualified name whenever an overload of it is defined or
        # removed (typedops.ops forgets what it cached for that name).
        self._listeners: list[Callable[[str], None]] = []

    def add_overloads_listener(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(qualified_name)`` after every definition or removal of an overload."""
        self._listeners.append(listener)

    def _overloads_changed(self, qualified: str) -> None:
        for listener in self._listeners:
            listener(qualified)

    # -- lookups ----------------------------------------------------------------------
    def find_op(self, name: str, overload_name: str = "") -> OperatorHandle | None:
        """The handle of ``ns::name`` with that overload (``"ns::name.overload"`` works too), or None."""
        entry = self._ops.get(_full_name(name, overload_name))
        return None if entry is None else entry.handle

    def find_schema_or_throw(self, name: str, overload_name: str = "") -> OperatorHandle:
        """Like ``find_op``, but raises ``OperatorNotFoundError`` suggesting near matches."""
        handle = self.find_op(name, overload_name)
        if handle is not None:
            return handle
        wanted = _full_name(name, overload_name)
        close = difflib.get_close_matches(wanted, list(self._ops), n=3, cutoff=0.6)
        message = NO_SUCH_OPERATOR.format(name=wanted)
        if close:
            message += DID_YOU_MEAN.format(names=" or ".join(repr(c) for c in close))
        if "::" not in wanted:
            message += NAMES_HAVE_NAMESPACES.format(stop="" if close else ".")
        raise OperatorNotFoundError(message)

    def all_ops(self) -> list[OperatorHandle]:
        """Every defined operator, in definition order."""
        return [entry.handle for entry in list(self._ops.values())]

    def overloads(self, qualified_name: str) -> list[OperatorEntry]:
        found = self._overloads.get(qualified_name)
        if found is None:
            return []
        return list(found) if isinstance(found, list) else [found]

    def namespaces(self) -> list[str]:
        with self.lock:  # iterating the registry (Note [Reading the registry])
            return sorted({e.schema.namespace for e in self._ops.values()})

    # -- fallbacks ----------------------------------------------------------------------
    def fallbacks_for(self, namespace: str) -> dict[DispatchKey, Registration]:
        """The fallback each key uses for ops of ``namespace`` (its own, else the global one)."""
        with self.lock:  # Note [Reading the registry]: a view made from half a change would stay
            view = self._fallback_view.get(namespace)
            if view is None:
                view = {k: stack[-1] for k, stack in self._fallbacks[GLOBAL_NAMESPACE].items() if stack}
                if namespace != GLOBAL_NAMESPACE:
                    own = self._fallbacks.get(namespace, {})
                    view.update({k: stack[-1] for k, stack in own.items() if stack})
                self._fallback_view.put(namespace, view)
            return view

    # -- registry changes (called by Library, under the lock) ---------------------------
    def claim_namespace(self, namespace: str, source: str) -> Callable[[], None]:
        with self.lock:
            first = self._def_libraries.get(namespace)
            if first is not None:
                raise RegistrationError(SECOND_DEF_LIBRARY.format(ns=namespace, first=first))
            self._def_libraries[namespace] = source

        def release() -> None:
            with self.lock:
                if self._def_libraries.get(namespace) == source:
                    del self._def_libraries[namespace]

        return release

    def define_all(
        self,
        schemas: Sequence[FunctionSchema],
        kernels: Sequence[Sequence[Registration]],
        source: str,
    ) -> list[OperatorEntry]:
        """Define ops, each with its kernels, in one step (Note [One define path] in _library.py).

        Everything is checked before anything changes, so a refused call leaves the
        registry as it was. Returns the entries; ``undefine(entry)`` undoes each.
        """
        names = [s.full_name for s in schemas]
        ops = self._ops
        with self.lock:
            if not ops.keys().isdisjoint(names):
                self._refuse_taken(schemas)
            if len(names) > 1 and len(set(names)) != len(names):
                twice = next(n for n in names if names.count(n) > 1)
                raise RegistrationError(ALREADY_DEFINED_WHERE.format(name=twice, where=DEFINED_TWICE_IN_BATCH))
            entries: list[OperatorEntry] = []
            for schema, full_name, regs in zip(schemas, names, kernels):
                entry = self._insert(schema, full_name, source)
                if regs:
                    registrations = entry.registrations
                    for reg in regs:
                        registrations.setdefault(reg.key, []).append(reg)
                entries.append(entry)
        note_registration()  # Note [Registration bursts] in _collector.py
        return entries

    def _refuse_taken(self, schemas: Sequence[FunctionSchema]) -> NoReturn:
        schema = next(s for s in schemas if s.full_name in self._ops)
        existing = self._ops[schema.full_name]
        raise RegistrationError(ALREADY_DEFINED.format(
            name=schema.full_name, source=existing.source, schema=existing.schema,
            qualified=schema.qualified_name, overload=schema.overload_name or "other",
        ))

    def _insert(self, schema: FunctionSchema, full_name: str, source: str) -> OperatorEntry:
        """A new entry in the registry. Callers hold the lock and have checked the name."""
        entry = OperatorEntry(schema, full_name, source, self)
        self._ops[full_name] = entry
        qualified = f"{schema.namespace}::{schema.name}" if schema.namespace else schema.name
        found = self._overloads.get(qualified)
        if found is None:
            self._overloads[qualified] = entry
        elif isinstance(found, list):
            found.append(entry)
        else:
            self._overloads[qualified] = [found, entry]
        self._overloads_changed(qualified)
        return entry

    def undefine(self, entry: OperatorEntry) -> None:
        """Remove ``entry``'s definition; nothing happens if it is already removed.

        A method, not a closure per op: ops are defined by the thousand, and a closure
        is four more objects for the garbage collector (Note [Registration and the
        collector])."""
        with self.lock:
            if self._ops.get(entry.full_name) is not entry:
                return
            del self._ops[entry.full_name]
            qualified = entry.schema.qualified_name
            found = self._overloads[qualified]
            if isinstance(found, list):
                found.remove(entry)
                if len(found) == 1:
                    self._overloads[qualified] = found[0]
            else:
                del self._overloads[qualified]
            entry.mark_removed()
            self._overloads_changed(qualified)

    def is_defined(self, entry: OperatorEntry) -> bool:
        return self._ops.get(entry.full_name) is entry

    def register_kernel(self, entry: OperatorEntry, reg: Registration, allow_override: bool) -> Callable[[], None]:
        with self.lock:
            if self._ops.get(entry.full_name) is not entry:
                raise OperatorNotFoundError(OPERATOR_REMOVED.format(name=entry.full_name, then="register on"))
            stack = entry.registrations.setdefault(reg.key, [])
            if stack and not allow_override:
                raise RegistrationError(KERNEL_TWICE.format(name=entry.full_name, key=reg.key.name, source=stack[-1].source))
            stack.append(reg)
            if entry.has_tables:  # else the first call computes them (Note [Atomic tables])
                entry.recompute()
        note_registration()  # Note [Registration bursts] in _collector.py

        def remove() -> None:
            with self.lock:
                regs = entry.registrations.get(reg.key, [])
                if reg not in regs:
                    return
                regs.remove(reg)
                if not regs:
                    del entry.registrations[reg.key]
                entry.drop_wrappers(reg)
                if self._ops.get(entry.full_name) is entry and entry.has_tables:
                    entry.recompute()

        return remove

    def register_fallback(self, namespace: str, reg: Registration, allow_override: bool) -> Callable[[], None]:
        with self.lock:
            stack = self._fallbacks.setdefault(namespace, {}).setdefault(reg.key, [])
            user = [r for r in stack if r.source != BUILTIN_SOURCE]
            if user and not allow_override:
                scope = "every namespace" if namespace == GLOBAL_NAMESPACE else f"namespace {namespace!r}"
                raise RegistrationError(FALLBACK_TWICE.format(scope=scope, key=reg.key.name, source=user[-1].source))
            stack.append(reg)
            self._fallbacks_changed(namespace)

        def remove() -> None:
            with self.lock:
                own = self._fallbacks.get(namespace, {})
                regs = own.get(reg.key, [])
                if reg in regs:
                    regs.remove(reg)
                    if not regs:  # nothing is kept for a key, or a namespace, without fallbacks
                        del own[reg.key]
                        if not own and namespace != GLOBAL_NAMESPACE:
                            del self._fallbacks[namespace]
                    self._fallbacks_changed(namespace)

        return remove

    def _fallbacks_changed(self, namespace: str) -> None:
        self._fallback_view.clear()  # fallbacks change rarely: the views are remade on demand
        for entry in self._ops.values():
            if namespace in (GLOBAL_NAMESPACE, entry.schema.namespace):
                if entry.has_tables:
                    entry.recompute()

    # -- seeing inside ------------------------------------------------------------------
    def dump_state(self) -> str:
        """Every op's registrations and computed table, and every fallback: for comparing states."""
        with self.lock:
            parts: list[str] = []
            for namespace in sorted(self._fallbacks):
                for key, stack in sorted(self._fallbacks[namespace].items()):
                    for reg in stack:
                        parts.append(f"fallback {namespace} {key.name}: {reg.describe()} at {reg.source}")
            parts += [f"DEF library {ns} at {src}" for ns, src in sorted(self._def_libraries.items())]
            for entry in self._ops.values():
                parts.append(entry.dump())
                parts.append(entry.dump_table())
            return "\n".join(parts)


def _full_name(name: str, overload_name: str) -> str:
    return f"{name}.{overload_name}" if overload_name else name


dispatcher: Final = Dispatcher()
