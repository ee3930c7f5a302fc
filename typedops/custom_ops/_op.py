"""``@op``: operators from typed functions.

``@op("ns::name")`` turns a typed function into an operator: its schema is inferred from
the annotations, the op is defined, and the function becomes its
``CompositeExplicitAutograd`` kernel. The result is an ``Op[P, R]`` whose call has the
function's exact parameters ``P`` and result ``R``, so a type checker checks every call.
It is a function, not an instance (Note [Typed handle calls] in dispatch/_typed.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, Protocol, TypeVar, cast, overload, runtime_checkable

from typing_extensions import ParamSpec

from ..vocabulary import ArgumentValueError, DispatchKey
from ..dispatch import Library, OperatorHandle, TypedOperatorHandle, describe_as, function_for
from ..schema import infer_schema
from ._messages import OP_NAME_WITHOUT_NAMESPACE

__all__ = ["op", "Op"]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
F = TypeVar("F", bound=Callable[..., Any])


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


class _Registrar:
    """What an ``@op`` function's ``register_kernel`` and ``register_fake`` register into.
    Each is a small callable object rather than a bound method of one shared object or a
    closure: two objects for the garbage collector per op, not three or more (Note
    [Registration and the collector])."""

    __slots__ = ("library", "handle")

    def __init__(self, library: Library, handle: OperatorHandle) -> None:
        self.library = library
        self.handle = handle


class _RegisterKernel(_Registrar):
    __slots__ = ()

    def __call__(self, key: DispatchKey | str, kernel: Any = None, *, allow_override: bool = False) -> Any:
        def register(k: Any) -> Any:
            self.library.impl(self.handle, k, key, allow_override=allow_override)
            return k

        return register if kernel is None else register(kernel)


class _RegisterFake(_Registrar):
    __slots__ = ()

    def __call__(self, kernel: Any, *, allow_override: bool = False) -> Any:
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
        raise ArgumentValueError(OP_NAME_WITHOUT_NAMESPACE.format(name=name.rpartition("::")[2], given=name))

    def decorate(fn: Callable[P, R]) -> Op[P, R]:
        schema = infer_schema(fn, name=name, mutates_args=mutates_args)
        library = lib if lib is not None else Library(namespace, "FRAGMENT")
        # Define with the kernel in one step; its signature is checked (the schema came
        # from it), so nothing is inferred twice.
        handle = library._define_with_kernel(schema, DispatchKey.CompositeExplicitAutograd, fn)
        result = function_for(handle, copy=False)
        describe_as(result, fn)
        result.library = library
        result.default_kernel = fn

        result.register_kernel = _RegisterKernel(library, handle)
        result.register_fake = _RegisterFake(library, handle)
        return cast("Op[P, R]", result)

    return decorate
