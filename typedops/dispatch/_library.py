"""``Library``: the scoped registration API (``TORCH_LIBRARY`` / ``TORCH_LIBRARY_IMPL``).

Every ``define``, ``impl`` and ``fallback`` returns a handle whose ``remove()`` undoes it;
a ``Library`` is a context manager, and leaving it removes everything it registered, in
reverse order, restoring the registry exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Final, Literal, Optional, Union

from ..vocabulary import DispatchKey
from ..vocabulary import ArgumentError, ArgumentValueError, RegistrationError
from ..schema import FunctionSchema, parse_schema
from ._dispatcher import GLOBAL_NAMESPACE, Dispatcher, dispatcher
from ._handle import OperatorHandle
from ._kernel import Boxed, Fallthrough, KernelKind, Registration, caller_location
from ._signature import check_kernel_signature

__all__ = ["Library", "RegistrationHandle"]

LibraryKind = Literal["DEF", "FRAGMENT", "IMPL"]
_KINDS: Final = ("DEF", "FRAGMENT", "IMPL")
# Bound once: reading a member off its Enum class costs ~50 ns, and @op makes a registration.
_UNBOXED: Final = KernelKind.unboxed
_BOXED: Final = KernelKind.boxed
_FALLTHROUGH: Final = KernelKind.fallthrough

# A kernel as generated registration code passes it: (key, kernel, with_keys[, unboxing]).
GeneratedKernel = Union[
    tuple[DispatchKey, Callable[..., Any], bool],
    tuple[DispatchKey, Callable[..., Any], bool, Optional[Callable[..., Any]]],
]


def _generated_registration(kernel: GeneratedKernel, source: str) -> Registration:
    unboxing = kernel[3] if len(kernel) == 4 else None
    return Registration(kernel[0], kernel[1], _UNBOXED, kernel[2], source, unboxing)


class RegistrationHandle:
    """One registration; ``remove()`` undoes it (a second ``remove()`` does nothing)."""

    __slots__ = ("_undo", "_description")

    def __init__(self, undo: Callable[[], None], description: str) -> None:
        self._undo: Callable[[], None] | None = undo
        self._description = description

    @property
    def description(self) -> str:
        return self._description

    def remove(self) -> None:
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    @property
    def active(self) -> bool:
        return self._undo is not None

    def __repr__(self) -> str:
        state = "" if self.active else " (removed)"
        return f"<RegistrationHandle {self.description}{state}>"


class DefinitionHandle(RegistrationHandle):
    """The registration of an op's definition; ``op`` is the defined operator's handle."""

    __slots__ = ("op",)

    def __init__(self, undo: Callable[[], None], op: OperatorHandle) -> None:
        self._undo = undo
        self.op = op

    @property
    def description(self) -> str:
        return f"definition of {self.op.full_name}"


class Library:
    """Registers operators, kernels and fallbacks for one namespace.

    - ``Library("myops", "DEF")`` defines the namespace's operators (one per namespace);
      ``"FRAGMENT"`` adds more definitions from elsewhere; ``"IMPL"`` only adds kernels,
      by default for its ``key``.
    - ``Library("_", "IMPL", key)`` registers fallbacks for every namespace.
    """

    def __init__(
        self,
        ns: str,
        kind: LibraryKind,
        key: DispatchKey | str | None = None,
        *,
        dispatcher_: Dispatcher = dispatcher,
    ) -> None:
        if kind not in _KINDS:
            raise ArgumentValueError(f"Library kind must be one of {', '.join(_KINDS)}, not {kind!r}")
        if ns != GLOBAL_NAMESPACE and not (ns.isidentifier() and ns.isascii()):
            raise ArgumentValueError(f"namespace {ns!r} must be an identifier (or '_' for fallbacks of every namespace)")
        if ns == GLOBAL_NAMESPACE and kind != "IMPL":
            raise ArgumentValueError("namespace '_' takes only IMPL libraries, for fallbacks of every namespace")
        self.ns = ns
        self.kind: LibraryKind = kind
        self.key = None if key is None else DispatchKey.parse(key)
        self.source = caller_location()
        self._dispatcher = dispatcher_
        self._handles: list[RegistrationHandle] = []
        if kind == "DEF":
            release = dispatcher_.claim_namespace(ns, self.source)
            self._handles.append(RegistrationHandle(release, f"DEF library of {ns!r}"))

    def __repr__(self) -> str:
        key = f", {self.key.name!r}" if self.key is not None else ""
        return f"Library({self.ns!r}, {self.kind!r}{key}) at {self.source}"

    # -- scope ----------------------------------------------------------------------
    def __enter__(self) -> Library:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    def remove(self) -> None:
        """Undo every registration this library made, newest first."""
        while self._handles:
            self._handles.pop().remove()

    def _keep(self, handle: RegistrationHandle) -> RegistrationHandle:
        self._handles.append(handle)
        return handle

    # -- define ------------------------------------------------------------------------
    def define(self, schema: str | FunctionSchema) -> OperatorHandle:
        """Define an operator from schema text (namespace optional) and return its handle."""
        self._check_kind()
        if isinstance(schema, str) and "::" not in schema.partition("(")[0]:
            schema = f"{self.ns}::{schema.lstrip()}"  # cheaper than rebuilding the parsed schema
        parsed = parse_schema(schema) if isinstance(schema, str) else schema
        if parsed.namespace and parsed.namespace != self.ns:
            raise RegistrationError(
                f"cannot define {parsed.full_name} in a library for namespace {self.ns!r}; "
                f"drop the namespace or use Library({parsed.namespace!r}, ...)"
            )
        if not parsed.namespace:
            parsed = _with_namespace(parsed, self.ns)
        entry, undefine = self._dispatcher.define(parsed, caller_location())
        definition = DefinitionHandle(undefine, entry.handle)
        entry.definition = definition  # OperatorHandle.remove() undoes it
        self._keep(definition)
        return entry.handle

    def _define_generated(self, ops: Sequence[tuple[FunctionSchema, Sequence[GeneratedKernel]]]) -> list[OperatorHandle]:
        """Define many ops with their kernels in one step, for generated registration code.

        ``ops`` holds, per op, its schema (namespaced, already validated) and its
        ``(key, kernel, with_keys[, unboxing])`` kernels, whose signatures the generator
        checked; ``unboxing`` is the factory of the kernel's unboxing wrapper that the
        generator wrote into its module (else it is compiled on first use). It
        does what ``define`` and ``impl(..., check=False)`` would, op by op, but takes the
        lock once and finds the source location once. Each op's definition can still be
        removed on its own (``handle.remove()``); leaving the library removes them all.
        """
        schemas = [schema for schema, _ in ops]
        for schema in schemas:
            self._check_defines(schema)
        source = caller_location()
        kernels = [[_generated_registration(reg, source) for reg in regs] for _, regs in ops]
        entries, undos = self._dispatcher.define_generated(schemas, kernels, source)
        for entry, undo in zip(entries, undos):
            definition = DefinitionHandle(undo, entry.handle)
            entry.definition = definition
            self._handles.append(definition)
        return [entry.handle for entry in entries]

    def _define_with_kernel(self, schema: FunctionSchema, key: DispatchKey, fn: Callable[..., Any]) -> OperatorHandle:
        """Define one op with one unboxed kernel, whose signature the caller checked: what
        ``@op`` does with an inferred schema (``_define_generated`` for a single op, minus
        its batch bookkeeping)."""
        self._check_defines(schema)
        source = caller_location()
        entry, undo = self._dispatcher.define(schema, source, Registration(key, fn, _UNBOXED, False, source))
        entry.definition = definition = DefinitionHandle(undo, entry.handle)
        self._handles.append(definition)
        return entry.handle

    def _check_defines(self, schema: FunctionSchema) -> None:
        """Refuse a namespaced schema this library cannot define (the unchecked paths)."""
        self._check_kind()
        if schema.namespace != self.ns:
            raise RegistrationError(
                f"cannot define {schema.full_name} in a library for namespace {self.ns!r}; "
                f"use Library({schema.namespace!r}, 'FRAGMENT')"
            )

    def _check_kind(self) -> None:
        if self.kind == "IMPL":
            raise RegistrationError(
                f"{self!r} is an IMPL library and cannot define operators; use "
                f"Library({self.ns!r}, 'DEF') or 'FRAGMENT'"
            )

    # -- impl -----------------------------------------------------------------------------
    def impl(
        self,
        name: str | OperatorHandle,
        fn: Callable[..., Any] | Boxed | Fallthrough,
        key: DispatchKey | str | None = None,
        *,
        allow_override: bool = False,
        with_keys: bool = False,
        check: bool = True,
    ) -> RegistrationHandle:
        """Register ``fn`` as the kernel of op ``name`` for ``key``.

        ``fn`` is an unboxed typed function (its annotations must match the schema), a
        boxed kernel marked with ``typedops.boxed``, or ``typedops.fallthrough``. With
        ``with_keys=True`` an unboxed kernel receives the dispatch key set first. The key
        defaults to the library's key, else ``CompositeImplicitAutograd``.

        ``check=False`` skips inferring the kernel's schema from its annotations: only for
        generated registration code whose generator already checked the kernel.
        """
        entry = self._resolve(name)
        # 'is None', not 'or': DispatchKey.CPU is 0, so it is falsy.
        default = self.key if self.key is not None else DispatchKey.CompositeImplicitAutograd
        chosen = DispatchKey.parse(key) if key is not None else default
        reg = _registration(chosen, fn, with_keys, caller_location(), entry.schema, check)
        undo = self._dispatcher.register_kernel(entry, reg, allow_override)
        return self._keep(RegistrationHandle(undo, f"{chosen.name} kernel of {entry.full_name}"))

    def fallback(
        self,
        fn: Boxed | Callable[..., None] | Fallthrough,
        key: DispatchKey | str | None = None,
        *,
        allow_override: bool = False,
    ) -> RegistrationHandle:
        """Register a boxed fallback ``fn(op, keys, stack)`` for ``key``.

        It serves every op of this library's namespace that has no kernel for the key
        (every namespace, for ``Library('_', 'IMPL')``). ``typedops.fallthrough`` makes
        the key fall through for those ops.
        """
        if key is None and self.key is None:
            raise ArgumentValueError(f"{self!r} has no key; pass one: lib.fallback(fn, 'Tracer')")
        chosen = DispatchKey.parse(key) if key is not None else self.key
        assert chosen is not None
        if chosen.is_alias:
            raise RegistrationError(
                f"fallbacks are registered for runtime keys, not the alias key {chosen.name}"
            )
        if isinstance(fn, Fallthrough):
            reg = Registration(chosen, fn, _FALLTHROUGH, False, caller_location())
        else:
            boxed_fn = fn.fn if isinstance(fn, Boxed) else fn
            only_for = fn.only_for if isinstance(fn, Boxed) else None
            if not callable(boxed_fn):
                raise ArgumentError(f"a fallback is a function fn(op, keys, stack), not {type(fn).__name__}")
            reg = Registration(chosen, Boxed(boxed_fn, only_for), _BOXED, False, caller_location())
        undo = self._dispatcher.register_fallback(self.ns, reg, allow_override)
        scope = "every namespace" if self.ns == GLOBAL_NAMESPACE else f"namespace {self.ns!r}"
        return self._keep(RegistrationHandle(undo, f"{chosen.name} fallback for {scope}"))

    def _resolve(self, name: str | OperatorHandle) -> Any:
        if isinstance(name, OperatorHandle):
            # That very op: registering through a stale handle must not reach a newer op
            # of the same name (the dispatcher refuses a removed entry).
            ns = name.schema.namespace
            if self.ns != GLOBAL_NAMESPACE and ns != self.ns:
                raise RegistrationError(
                    f"{self!r} registers kernels for namespace {self.ns!r}, not for {name.full_name}; "
                    f"use Library({ns!r}, 'IMPL')"
                )
            return name._entry
        qualified = name if "::" in name else f"{self.ns}::{name}"
        ns = qualified.partition("::")[0]
        if self.ns != GLOBAL_NAMESPACE and ns != self.ns:
            raise RegistrationError(
                f"{self!r} registers kernels for namespace {self.ns!r}, not for {qualified}; "
                f"use Library({ns!r}, 'IMPL')"
            )
        handle = self._dispatcher.find_schema_or_throw(qualified)
        return handle._entry


def _registration(
    key: DispatchKey, fn: Any, with_keys: bool, source: str, schema: FunctionSchema, check: bool = True
) -> Registration:
    if isinstance(fn, Fallthrough):
        return Registration(key, fn, _FALLTHROUGH, False, source)
    if isinstance(fn, Boxed):
        return Registration(key, fn, _BOXED, False, source)
    if not callable(fn):
        raise ArgumentError(
            f"a kernel is a typed function, typedops.boxed(fn) or typedops.fallthrough, not {type(fn).__name__}"
        )
    if check:
        check_kernel_signature(schema, fn, with_keys=with_keys)
    return Registration(key, fn, _UNBOXED, with_keys, source)


def _with_namespace(schema: FunctionSchema, ns: str) -> FunctionSchema:
    return FunctionSchema(
        schema.name,
        namespace=ns,
        overload_name=schema.overload_name,
        positional=schema.positional,
        kwarg_only=schema.kwarg_only,
        returns=schema.returns,
        is_vararg=schema.is_vararg,
        is_varret=schema.is_varret,
    )
