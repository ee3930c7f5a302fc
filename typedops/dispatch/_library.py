"""``Library``: the scoped registration API (``TORCH_LIBRARY`` / ``TORCH_LIBRARY_IMPL``).

Every ``define``, ``impl`` and ``fallback`` returns a handle whose ``remove()`` undoes it;
a ``Library`` is a context manager, and leaving it removes everything it registered, in
reverse order, restoring the registry exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, Final, Literal, Optional, Union

from ..vocabulary import DispatchKey
from ..vocabulary import ArgumentError, ArgumentValueError, RegistrationError
from ..schema import FunctionSchema, parse_schema
from ._collector import bulk_registration
from ._dispatcher import GLOBAL_NAMESPACE, Dispatcher, dispatcher
from ._handle import OperatorHandle
from ._kernel import Boxed, Fallthrough, KernelKind, Registration, caller_location
from ._messages import (
    ONE_KEY_LIBRARY,
    BAD_LIBRARY_KIND,
    BAD_NAMESPACE,
    DEFINE_OTHER_NAMESPACE,
    DEFINE_OTHER_NAMESPACE_UNCHECKED,
    FALLBACK_ALIAS_KEY,
    FALLBACK_NEEDS_KEY,
    FALLBACK_NOT_A_FUNCTION,
    GLOBAL_NAMESPACE_IMPL_ONLY,
    IMPL_CANNOT_DEFINE,
    IMPL_OTHER_NAMESPACE,
    KERNEL_NOT_A_FUNCTION,
)
from ._signature import check_kernel_signature

__all__ = ["Library", "RegistrationHandle"]

LibraryKind = Literal["DEF", "FRAGMENT", "IMPL"]
_KINDS: Final = ("DEF", "FRAGMENT", "IMPL")
# Bound once: reading a member off its Enum class costs ~50 ns, and @op makes a registration.
_UNBOXED: Final = KernelKind.unboxed
_NO_KERNELS: Final[tuple[tuple[Registration, ...]]] = ((),)  # one op defined without kernels
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
    """The registration of an op's definition; ``op`` is the defined operator's handle.

    It undoes the definition through the dispatcher rather than through a closure of
    its own: ops are defined by the thousand (Note [Registration and the collector]).
    """

    __slots__ = ("op",)

    def __init__(self, op: OperatorHandle) -> None:
        self._undo = None  # unused: remove() goes through the dispatcher
        self.op = op

    @property
    def description(self) -> str:
        return f"definition of {self.op.full_name}"

    def remove(self) -> None:
        entry = self.op._entry
        entry.dispatcher.undefine(entry)

    @property
    def active(self) -> bool:
        entry = self.op._entry
        return entry.dispatcher.is_defined(entry)


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
            raise ArgumentValueError(BAD_LIBRARY_KIND.format(kinds=", ".join(_KINDS), kind=kind))
        if ns != GLOBAL_NAMESPACE and not (ns.isidentifier() and ns.isascii()):
            raise ArgumentValueError(BAD_NAMESPACE.format(ns=ns))
        if ns == GLOBAL_NAMESPACE and kind != "IMPL":
            raise ArgumentValueError(GLOBAL_NAMESPACE_IMPL_ONLY)
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
        return self._define_all([self._namespaced(schema)], _NO_KERNELS, caller_location())[0]

    def define_many(self, schemas: Iterable[str | FunctionSchema]) -> list[OperatorHandle]:
        """Define many operators in one step, as ``define`` would one by one.

        Every schema is parsed and checked before anything is defined, so a refused call
        (a parse error, a name already defined or given twice) defines none of them. The
        garbage collector is paused meanwhile (``bulk_registration``): defining thousands
        of ops costs per op what defining a few does (Note [Registration and the
        collector]).
        """
        self._check_kind()
        with bulk_registration():
            parsed = [self._namespaced(s) for s in schemas]
            return self._define_all(parsed, [()] * len(parsed), caller_location())

    def _namespaced(self, schema: str | FunctionSchema) -> FunctionSchema:
        if isinstance(schema, str) and "::" not in schema.partition("(")[0]:
            schema = f"{self.ns}::{schema.lstrip()}"  # cheaper than rebuilding the parsed schema
        parsed = parse_schema(schema) if isinstance(schema, str) else schema
        if parsed.namespace and parsed.namespace != self.ns:
            raise RegistrationError(DEFINE_OTHER_NAMESPACE.format(name=parsed.full_name, ns=self.ns, other=parsed.namespace))
        return parsed if parsed.namespace else _with_namespace(parsed, self.ns)

    # Note [One define path]
    # ~~~~~~~~~~~~~~~~~~~~~~
    # define, define_many, @op's _define_with_kernel and generated registration's
    # _define_generated all end here: one dispatcher call that checks every name before
    # defining any, then one DefinitionHandle per op (OperatorHandle.remove() and leaving
    # the library undo it). They differ only in what they check first and whether the
    # collector is paused (bulk_registration) around the batch.
    def _define_all(
        self, schemas: Sequence[FunctionSchema], kernels: Sequence[Sequence[Registration]], source: str
    ) -> list[OperatorHandle]:
        entries = self._dispatcher.define_all(schemas, kernels, source)
        handles: list[OperatorHandle] = []
        for entry in entries:
            entry.definition = definition = DefinitionHandle(entry.handle)
            self._handles.append(definition)
            handles.append(entry.handle)
        return handles

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
        with bulk_registration():
            kernels = [[_generated_registration(reg, source) for reg in regs] for _, regs in ops]
            return self._define_all(schemas, kernels, source)

    def _define_with_kernel(self, schema: FunctionSchema, key: DispatchKey, fn: Callable[..., Any]) -> OperatorHandle:
        """Define one op with one unboxed kernel, whose signature the caller checked: what
        ``@op`` does with an inferred schema (``_define_generated`` for a single op, minus
        its batch bookkeeping)."""
        self._check_defines(schema)
        source = caller_location()
        return self._define_all([schema], [[Registration(key, fn, _UNBOXED, False, source)]], source)[0]

    def _check_defines(self, schema: FunctionSchema) -> None:
        """Refuse a namespaced schema this library cannot define (the unchecked paths)."""
        self._check_kind()
        if schema.namespace != self.ns:
            raise RegistrationError(
                DEFINE_OTHER_NAMESPACE_UNCHECKED.format(name=schema.full_name, ns=self.ns, other=schema.namespace)
            )

    def _own_key(self, key: DispatchKey) -> DispatchKey:
        """``key``, if this library may register for it: a library made for one key
        registers for that key only, as in PyTorch."""
        if self.key is not None and key is not self.key:
            raise RegistrationError(ONE_KEY_LIBRARY.format(library=repr(self), own=self.key.name, key=key.name, ns=self.ns))
        return key

    def _check_kind(self) -> None:
        if self.kind == "IMPL":
            raise RegistrationError(IMPL_CANNOT_DEFINE.format(library=repr(self), ns=self.ns))

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
        chosen = self._own_key(DispatchKey.parse(key)) if key is not None else default
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
            raise ArgumentValueError(FALLBACK_NEEDS_KEY.format(library=repr(self)))
        chosen = self._own_key(DispatchKey.parse(key)) if key is not None else self.key
        assert chosen is not None
        if chosen.is_alias:
            raise RegistrationError(FALLBACK_ALIAS_KEY.format(key=chosen.name))
        if isinstance(fn, Fallthrough):
            reg = Registration(chosen, fn, _FALLTHROUGH, False, caller_location())
        else:
            boxed_fn = fn.fn if isinstance(fn, Boxed) else fn
            only_for = fn.only_for if isinstance(fn, Boxed) else None
            twin = fn.unboxed if isinstance(fn, Boxed) else None
            if not callable(boxed_fn):
                raise ArgumentError(FALLBACK_NOT_A_FUNCTION.format(kind=type(fn).__name__))
            reg = Registration(chosen, Boxed(boxed_fn, only_for, twin), _BOXED, False, caller_location())
        undo = self._dispatcher.register_fallback(self.ns, reg, allow_override)
        scope = "every namespace" if self.ns == GLOBAL_NAMESPACE else f"namespace {self.ns!r}"
        return self._keep(RegistrationHandle(undo, f"{chosen.name} fallback for {scope}"))

    def _resolve(self, name: str | OperatorHandle) -> Any:
        if isinstance(name, OperatorHandle):
            # That very op: registering through a stale handle must not reach a newer op
            # of the same name (the dispatcher refuses a removed entry).
            ns = name.schema.namespace
            if self.ns != GLOBAL_NAMESPACE and ns != self.ns:
                raise RegistrationError(IMPL_OTHER_NAMESPACE.format(library=repr(self), ns=self.ns, name=name.full_name, other=ns))
            return name._entry
        qualified = name if "::" in name else f"{self.ns}::{name}"
        ns = qualified.partition("::")[0]
        if self.ns != GLOBAL_NAMESPACE and ns != self.ns:
            raise RegistrationError(IMPL_OTHER_NAMESPACE.format(library=repr(self), ns=self.ns, name=qualified, other=ns))
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
        raise ArgumentError(KERNEL_NOT_A_FUNCTION.format(kind=type(fn).__name__))
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
