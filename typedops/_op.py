"""``@op`` and typed operator handles: operator calls mypy can check.

``@op("ns::name")`` turns a typed function into an operator: its schema is inferred from
the annotations, the op is defined, and the function becomes its
``CompositeExplicitAutograd`` kernel. The result is an ``Op[P, R]`` whose call has the
function's exact parameters ``P`` and result ``R``, so a type checker checks every call.
``OperatorHandle.typed(prototype)`` gives a ``TypedOperatorHandle[P, R]`` for an op
defined from schema text, after checking that the prototype matches the schema.

Note [Typed handle calls]
~~~~~~~~~~~~~~~~~~~~~~~~~
Calling an *instance* runs ``type(obj).__call__``, which costs a further 100-300 ns per
call over calling a function (measured on the project machines) -- as much as the whole
dispatch. So, like ``functools.singledispatch``, ``@op`` and ``typed()`` return a
*function* carrying ``schema``, ``call_boxed``, ``register_kernel`` and the rest as
attributes: for ``@op`` the op's generated entry itself, for ``typed()`` a copy of it
(same code and closure, its own attributes). ``Op`` and ``TypedOperatorHandle`` are runtime-checkable protocols that
describe it to type checkers; ``isinstance(f, Op)`` works.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any, Literal, Protocol, TypeVar, cast, overload, runtime_checkable

from typing_extensions import ParamSpec

from .dispatch import DispatchKey, DispatchKeySet, Library, OperatorHandle
from .dispatch._signature import check_kernel_signature
from .schema import FunctionSchema, infer_schema

__all__ = ["op", "Op", "TypedOperatorHandle", "typed"]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
F = TypeVar("F", bound=Callable[..., Any])


@runtime_checkable
class TypedOperatorHandle(Protocol[P, R_co]):
    """An operator whose calls are checked statically: ``P`` are its parameters and
    ``R`` its result. Made by ``OperatorHandle.typed(prototype)``."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    @property
    def handle(self) -> OperatorHandle:
        """The untyped handle (dumps, lookups)."""
        ...

    @property
    def schema(self) -> FunctionSchema: ...

    @property
    def name(self) -> str:
        """The qualified name, ``ns::name``."""
        ...

    @property
    def overload_name(self) -> str: ...

    def call_boxed(self, stack: list[Any]) -> None:
        """Call with the arguments on ``stack``; the returns replace them."""
        ...

    def redispatch(self, keys: DispatchKeySet, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Continue a call below the highest key of ``keys``."""
        ...

    def redispatch_boxed(self, keys: DispatchKeySet, stack: list[Any]) -> None: ...

    def dump(self) -> str: ...

    def dump_table(self) -> str: ...


@runtime_checkable
class Op(TypedOperatorHandle[P, R_co], Protocol[P, R_co]):
    """An operator defined by ``@op`` from a typed function: call it like the function.

    ``register_kernel(key)`` adds kernels for other keys and ``register_fake`` a Meta
    kernel (shapes and dtypes only); both check the kernel's signature against the schema.
    """

    @property
    def library(self) -> Library:
        """The library holding the op's registrations; ``library.remove()`` undoes them."""
        ...

    @property
    def default_kernel(self) -> Callable[P, R_co]:
        """The function ``@op`` decorated (the op's CompositeExplicitAutograd kernel)."""
        ...

    @overload
    def register_kernel(self, key: DispatchKey | str) -> Callable[[F], F]: ...

    @overload
    def register_kernel(self, key: DispatchKey | str, fn: F, *, allow_override: bool = False) -> F: ...

    def register_kernel(
        self, key: DispatchKey | str, fn: F | None = None, *, allow_override: bool = False
    ) -> F | Callable[[F], F]:
        """Register ``fn`` as the op's kernel for ``key``; a decorator when ``fn`` is omitted."""
        ...

    def register_fake(self, fn: F, *, allow_override: bool = False) -> F:
        """Register ``fn`` as the Meta kernel: it computes result shapes and dtypes only."""
        ...


def _function_for(handle: OperatorHandle, *, copy: bool = True) -> Any:
    """A function running ``handle``'s generated entry, carrying the handle's attributes:
    a new function object (same code and closure), or with ``copy=False`` the entry
    itself (for @op, the one owner of its op's entry)."""
    entry = handle._entry
    call = entry.call
    if copy:
        fn: Any = types.FunctionType(
            call.__code__, call.__globals__, handle.schema.name, call.__defaults__, call.__closure__
        )
        fn.__kwdefaults__ = call.__kwdefaults__
    else:
        fn = call
    fn.__qualname__ = entry.full_name
    schema = entry.schema
    fn.__dict__.update(
        handle=handle,
        schema=schema,
        name=schema.qualified_name,
        overload_name=schema.overload_name,
        call_boxed=entry.call_boxed,
        redispatch=entry.redispatch,
        redispatch_boxed=entry.redispatch_boxed,
        dump=handle.dump,
        dump_table=handle.dump_table,
    )
    return fn


def typed(handle: OperatorHandle, prototype: Callable[P, R]) -> TypedOperatorHandle[P, R]:
    """``handle.typed(prototype)``: see ``OperatorHandle.typed``."""
    check_kernel_signature(handle.schema, prototype, with_keys=False, prototype=True)
    result = _function_for(handle)
    _describe_as(result, prototype)
    return cast("TypedOperatorHandle[P, R]", result)


def _describe_as(result: Any, fn: Callable[..., Any]) -> None:
    """Give the op function ``fn``'s module, docstring and signature (``inspect.signature``
    follows ``__wrapped__``), as ``functools.wraps`` would, minus its name: the op's
    function keeps the op's name."""
    result.__module__ = getattr(fn, "__module__", None) or result.__module__
    result.__doc__ = getattr(fn, "__doc__", None)
    result.__wrapped__ = fn


class _Registrar:
    """An ``@op`` function's ``register_kernel`` and ``register_fake`` (bound methods of
    one small object rather than two closures: three objects for the garbage collector
    instead of six, per op; see Note [Registration and the collector])."""

    __slots__ = ("library", "handle")

    def __init__(self, library: Library, handle: OperatorHandle) -> None:
        self.library = library
        self.handle = handle

    def register_kernel(self, key: DispatchKey | str, kernel: Any = None, *, allow_override: bool = False) -> Any:
        def register(k: Any) -> Any:
            self.library.impl(self.handle, k, key, allow_override=allow_override)
            return k

        return register if kernel is None else register(kernel)

    def register_fake(self, kernel: Any, *, allow_override: bool = False) -> Any:
        self.library.impl(self.handle, kernel, DispatchKey.Meta, allow_override=allow_override)
        return kernel


def op(
    name: str,
    *,
    mutates_args: Iterable[str] | Literal["unknown"] = (),
    lib: Library | None = None,
) -> Callable[[Callable[P, R]], Op[P, R]]:
    """Define an operator from a typed function, which becomes its default kernel.

    ``name`` is ``"ns::name"`` or ``"ns::name.overload"``. ``mutates_args`` names the
    tensor parameters the function writes to. Registrations go into ``lib`` when given
    (so a ``with Library(...)`` block scopes them), else into a library the op keeps.
    """
    namespace, sep, _ = name.partition("::")
    if not sep or not namespace:
        raise ValueError(f"@op needs a namespaced name such as 'myops::{name.rpartition('::')[2]}', not {name!r}")

    def decorate(fn: Callable[P, R]) -> Op[P, R]:
        schema = infer_schema(fn, name=name, mutates_args=mutates_args)
        library = lib if lib is not None else Library(namespace, "FRAGMENT")
        # Define with the kernel in one step; its signature is checked (the schema came
        # from it), so nothing is inferred twice.
        handle = library._define_with_kernel(schema, DispatchKey.CompositeExplicitAutograd, fn)
        result = _function_for(handle, copy=False)
        _describe_as(result, fn)
        result.library = library
        result.default_kernel = fn
        registrar = _Registrar(library, handle)
        result.register_kernel = registrar.register_kernel
        result.register_fake = registrar.register_fake
        return cast("Op[P, R]", result)

    return decorate
