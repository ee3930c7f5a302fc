"""The dispatcher singleton: every operator, every fallback, one lock.

Registration goes through ``Library`` (``_library.py``); this module owns the state it
changes. All changes happen under ``lock`` and end by recomputing the affected tables
(Note [Atomic tables]); lookups and calls take no lock.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from ..vocabulary import OperatorNotFoundError, RegistrationError
from ..schema import FunctionSchema
from ..vocabulary import AUTOGRAD_KEYS, DispatchKey
from ._kernel import Registration, fallthrough
from ._operator import OperatorEntry

if TYPE_CHECKING:
    from ._handle import OperatorHandle

__all__ = ["Dispatcher", "dispatcher", "GLOBAL_NAMESPACE"]

GLOBAL_NAMESPACE: Final = "_"
BUILTIN_SOURCE: Final = "<typedops built-in>"

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
        self._overloads: dict[str, list[OperatorEntry]] = {}  # qualified name -> overloads
        self._fallbacks: dict[str, dict[DispatchKey, list[Registration]]] = {}
        self._fallback_view: dict[str, dict[DispatchKey, Registration]] = {}
        self._def_libraries: dict[str, str] = {}  # namespace -> where its DEF library was made
        builtin = {
            key: [Registration(key, fallthrough, "fallthrough", False, BUILTIN_SOURCE)]
            for key in _BUILTIN_FALLTHROUGHS
        }
        self._fallbacks[GLOBAL_NAMESPACE] = builtin

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
        message = f"no operator {wanted!r} is defined"
        if close:
            message += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        if "::" not in wanted:
            message += f"{'' if close else '.'} Operator names include their namespace, as in 'myops::scale'."
        raise OperatorNotFoundError(message)

    def all_ops(self) -> list[OperatorHandle]:
        """Every defined operator, in definition order."""
        return [entry.handle for entry in list(self._ops.values())]

    def overloads(self, qualified_name: str) -> list[OperatorEntry]:
        return list(self._overloads.get(qualified_name, ()))

    def namespaces(self) -> list[str]:
        return sorted({e.schema.namespace for e in self._ops.values()})

    # -- fallbacks ----------------------------------------------------------------------
    def fallbacks_for(self, namespace: str) -> dict[DispatchKey, Registration]:
        """The fallback each key uses for ops of ``namespace`` (its own, else the global one)."""
        view = self._fallback_view.get(namespace)
        if view is None:
            view = {k: stack[-1] for k, stack in self._fallbacks[GLOBAL_NAMESPACE].items() if stack}
            if namespace != GLOBAL_NAMESPACE:
                own = self._fallbacks.get(namespace, {})
                view.update({k: stack[-1] for k, stack in own.items() if stack})
            self._fallback_view[namespace] = view
        return view

    # -- registry changes (called by Library, under the lock) ---------------------------
    def claim_namespace(self, namespace: str, source: str) -> Callable[[], None]:
        with self.lock:
            first = self._def_libraries.get(namespace)
            if first is not None:
                raise RegistrationError(
                    f"namespace {namespace!r} already has a DEF library (created at {first}); "
                    f"add operators to it with Library({namespace!r}, 'FRAGMENT')"
                )
            self._def_libraries[namespace] = source

        def release() -> None:
            with self.lock:
                if self._def_libraries.get(namespace) == source:
                    del self._def_libraries[namespace]

        return release

    def define(
        self, schema: FunctionSchema, source: str, kernel: Registration | None = None
    ) -> tuple[OperatorEntry, Callable[[], None]]:
        """Define ``schema`` (with ``kernel`` registered in the same step, when given)."""
        full_name = schema.full_name
        with self.lock:
            existing = self._ops.get(full_name)
            if existing is not None:
                raise RegistrationError(
                    f"operator {schema.full_name} is already defined (at {existing.source}) as "
                    f"{existing.schema}; pick another overload name, e.g. "
                    f"'{schema.qualified_name}.{schema.overload_name or 'other'}(...)'"
                )
            entry = self._insert(schema, full_name, source)
            if kernel is not None:
                entry.registrations[kernel.key] = [kernel]
        return entry, self._undefine_for(entry)

    def define_generated(
        self,
        schemas: Sequence[FunctionSchema],
        kernels: Sequence[Sequence[Registration]],
        source: str,
    ) -> tuple[list[OperatorEntry], list[Callable[[], None]]]:
        """Define many ops, each with its kernels, in one step (see ``Library._define_generated``).

        Everything is checked before anything changes, so a refused call leaves the
        registry as it was. Returns the entries and, per op, the undo of its definition.
        """
        names = [s.full_name for s in schemas]
        with self.lock:
            taken = [n for n in names if n in self._ops]
            if taken or len(set(names)) != len(names):
                first = taken[0] if taken else next(n for n in names if names.count(n) > 1)
                where = f" (at {self._ops[first].source})" if first in self._ops else " (twice in this batch)"
                raise RegistrationError(f"operator {first} is already defined{where}")
            entries: list[OperatorEntry] = []
            undos: list[Callable[[], None]] = []
            for schema, full_name, regs in zip(schemas, names, kernels):
                entry = self._insert(schema, full_name, source)
                for reg in regs:
                    entry.registrations.setdefault(reg.key, []).append(reg)
                entries.append(entry)
                undos.append(self._undefine_for(entry))
        return entries, undos

    def _insert(self, schema: FunctionSchema, full_name: str, source: str) -> OperatorEntry:
        """A new entry in the registry. Callers hold the lock and have checked the name."""
        entry = OperatorEntry(schema, full_name, source, self)
        self._ops[full_name] = entry
        qualified = f"{schema.namespace}::{schema.name}" if schema.namespace else schema.name
        self._overloads.setdefault(qualified, []).append(entry)
        return entry

    def _undefine_for(self, entry: OperatorEntry) -> Callable[[], None]:
        def undefine() -> None:
            with self.lock:
                if self._ops.get(entry.full_name) is not entry:
                    return
                del self._ops[entry.full_name]
                overloads = self._overloads[entry.schema.qualified_name]
                overloads.remove(entry)
                if not overloads:
                    del self._overloads[entry.schema.qualified_name]
                entry.mark_removed()

        return undefine

    def register_kernel(self, entry: OperatorEntry, reg: Registration, allow_override: bool) -> Callable[[], None]:
        with self.lock:
            if self._ops.get(entry.full_name) is not entry:
                raise OperatorNotFoundError(
                    f"operator {entry.full_name} was removed (the library that defined it was "
                    "closed); define it again (for an @op function: apply @op again) and register on the new one"
                )
            stack = entry.registrations.setdefault(reg.key, [])
            if stack and not allow_override:
                raise RegistrationError(
                    f"{entry.full_name} already has a {reg.key.name} kernel (registered at "
                    f"{stack[-1].source}); pass allow_override=True to replace it while this "
                    "registration lives, or remove the first one"
                )
            stack.append(reg)
            if entry.has_tables:  # else the first call computes them (Note [Atomic tables])
                entry.recompute()

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
                raise RegistrationError(
                    f"{scope} already has a {reg.key.name} fallback (registered at "
                    f"{user[-1].source}); pass allow_override=True to replace it"
                )
            stack.append(reg)
            self._fallbacks_changed(namespace)

        def remove() -> None:
            with self.lock:
                regs = self._fallbacks.get(namespace, {}).get(reg.key, [])
                if reg in regs:
                    regs.remove(reg)
                    self._fallbacks_changed(namespace)

        return remove

    def _fallbacks_changed(self, namespace: str) -> None:
        if namespace == GLOBAL_NAMESPACE:
            self._fallback_view.clear()
        else:
            self._fallback_view.pop(namespace, None)
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
