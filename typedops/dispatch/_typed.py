"""Typed operator handles: operator calls a type checker can check.

``OperatorHandle.typed(prototype)`` gives a ``TypedOperatorHandle[P, R]`` for an op
defined from schema text, after checking that the prototype matches the schema; ``@op``
(typedops.custom_ops) builds its ``Op[P, R]`` on the same function-making helpers.

Note [Typed handle calls]
~~~~~~~~~~~~~~~~~~~~~~~~~
Calling an *instance* runs ``type(obj).__call__``, which costs a further 100-300 ns per
call over calling a function (measured on the project machines) -- as much as the whole
dispatch. So, like ``functools.singledispatch``, ``@op`` and ``typed()`` return a
*function* carrying ``schema``, ``call_boxed``, ``register_kernel`` and the rest as
attributes: for ``@op`` the op's generated entry itself, for ``typed()`` a copy of it
(same code and closure, its own attributes). ``Op`` and ``TypedOperatorHandle`` are
runtime-checkable protocols that describe it to type checkers; ``isinstance(f, Op)`` works.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional, Protocol, TypeVar, Union, cast, runtime_checkable

from typing_extensions import Concatenate, ParamSpec

from ..schema import FunctionSchema
from ..vocabulary import DispatchKeySet
from ._signature import check_kernel_signature

if TYPE_CHECKING:
    from ..tensor import Tensor
    from ._handle import OperatorHandle

__all__ = [
    "TypedOperatorHandle", "AutogradContext", "Gradients", "VmapInfo", "InDims", "OutDims", "typed", "function_for",
    "describe_as",
]  # fmt: skip

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class AutogradContext(Protocol):
    """What a backward rule registered with ``register_autograd`` receives first (the
    autograd layer's ``BackwardContext`` implements it)."""

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """Per differentiable (tensor) input of the op: whether its gradient is needed."""
        ...

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """The tensors ``save_for_backward`` kept, after their version check."""
        ...

    def save_for_backward(self, *tensors: Tensor | None) -> None: ...

    def mark_non_differentiable(self, *outputs: Tensor) -> None: ...


# What a backward rule returns: one gradient (or None) per tensor input of the op; a
# single one may be returned bare.
Gradients = Union["Tensor", None, tuple[Optional["Tensor"], ...]]


@dataclass(frozen=True, slots=True)
class VmapInfo:
    """What a vmap rule registered with ``register_vmap`` receives first (torch's ``info``):
    the running vmap's batch size and randomness mode. (Plain data, defined here so that the
    typed handles below can name it; the batching layer makes them.)"""

    batch_size: int
    randomness: Literal["error", "different", "same"]


# A vmap rule's ``in_dims``: per argument of the op, the batch dimension of a batched tensor
# or None -- a list of those for a Tensor[] argument.
InDims = tuple[Any, ...]
# What a vmap rule returns beside its result: the batch dimension of each output (None: the
# same for every sample), a tuple of them for an op with several outputs.
OutDims = Union[int, None, tuple[Optional[int], ...]]


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

    def register_autograd(
        self,
        backward: Callable[[AutogradContext, R_co], Gradients],
        *,
        setup_context: Callable[[AutogradContext, tuple[Any, ...], R_co], None] | None = None,
    ) -> Any:
        """Give the op a backward rule (``torch.library.register_autograd``): ``backward(ctx,
        grad)`` gets the gradient of the op's result -- typed as the result ``R`` -- and
        returns one gradient per tensor input, in order (None for one without). Checked
        against the schema now, and by type checkers statically."""
        ...

    def register_vmap(self, rule: Callable[Concatenate[VmapInfo, InDims, P], tuple[Any, OutDims]]) -> Any:
        """Give the op a batching rule (``torch.library.register_vmap``): ``rule(info, in_dims,
        *args, **kwargs)`` takes the op's arguments -- typed as the op's parameters ``P`` --
        with the batched tensors' physical tensors, and returns ``(result, out_dims)``.
        Checked against the schema now, and by type checkers statically."""
        ...


def function_for(handle: OperatorHandle, *, copy: bool = True) -> Any:
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
        register_autograd=handle.register_autograd,
        register_vmap=handle.register_vmap,
    )
    return fn


def typed(handle: OperatorHandle, prototype: Callable[P, R]) -> TypedOperatorHandle[P, R]:
    """``handle.typed(prototype)``: see ``OperatorHandle.typed``."""
    check_kernel_signature(handle.schema, prototype, with_keys=False, prototype=True)
    result = function_for(handle)
    describe_as(result, prototype)
    return cast("TypedOperatorHandle[P, R]", result)


def describe_as(result: Any, fn: Callable[..., Any]) -> None:
    """Give the op function ``fn``'s module, docstring and signature (``inspect.signature``
    follows ``__wrapped__``), as ``functools.wraps`` would, minus its name: the op's
    function keeps the op's name."""
    result.__module__ = getattr(fn, "__module__", None) or result.__module__
    result.__doc__ = getattr(fn, "__doc__", None)
    result.__wrapped__ = fn
