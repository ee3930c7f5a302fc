"""What generated modules import at run time (kept small: no yaml, no codegen).

A generated library imports every name it needs from here in one statement: each
``from package import name`` statement costs microseconds (a package's goes through
importlib's Python-level fromlist handling), on every import of every library. So this
module re-exports what generated code uses -- schema builders and types, the dispatcher
names, the boxing helpers the unboxing wrappers call -- beside its own helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..vocabulary import ArgumentError, Device
from ..tensor import Tensor, keys_for_device, wrapped_scalar
from ..boxing import default_value, to_list, to_tuple, wrong_tuple
from ..dispatch import DispatchKey, DispatchKeySet, Library, binding_problem
from ..autograd import (
    AUTOGRAD_OTHER_BIT, BELOW_AUTOGRAD_MASK, Node, add_output_meta, below_autograd, check_inplace, edge_of, mark_view,
    rebase_view, not_implemented,
    out_not_differentiable, register_autograd_kernels, save, save_output, set_history, unpack,
)  # fmt: skip
from ..schema import (
    AwaitType, BaseType, ClassType, DictType, FunctionSchema, FutureType, ListType, OptionalType,
    RRefType, TupleType, TypeVar,
)  # fmt: skip
from ..schema import build_alias as alias
from ..schema import build_argument as argument
from ..schema import build_return as make_return
from ..schema import build_schema as schema

__all__ = [
    "choose", "lazy_method", "no_static_kernel", "kernel",
    # re-exported for generated code
    "Any", "Device", "Tensor", "keys_for_device", "wrapped_scalar", "default_value", "to_list", "to_tuple", "wrong_tuple",
    "DispatchKey", "DispatchKeySet", "Library", "AwaitType", "BaseType", "ClassType", "DictType",
    "FutureType", "ListType", "OptionalType", "RRefType", "TupleType", "TypeVar",
    "alias", "argument", "make_return", "schema",
    # for generated autograd kernels
    "AUTOGRAD_OTHER_BIT", "BELOW_AUTOGRAD_MASK", "Node", "add_output_meta", "below_autograd", "check_inplace",
    "edge_of", "mark_view", "rebase_view", "not_implemented",
    "out_not_differentiable", "register_autograd_kernels", "save", "save_output", "set_history", "unpack",
]  # fmt: skip


def choose(
    name: str, candidates: tuple[tuple[FunctionSchema, Callable[..., Any]], ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Call the first candidate whose schema binds the arguments (the ops packet's rule)."""
    reasons = []
    for overload, fn in candidates:  # (not 'schema': the module re-exports the builder)
        problem = binding_problem(overload, args, kwargs)
        if problem is None:
            return fn(*args, **kwargs)
        reasons.append(f"  {overload}: {problem}")
    raise ArgumentError(f"no overload of {name} takes these arguments. Candidates:\n" + "\n".join(reasons))


def kernel(
    key: DispatchKey, fn: Callable[..., Any], unboxing: Callable[..., Any] | None = None, *, with_keys: bool = False
) -> tuple[DispatchKey, Callable[..., Any], bool, Callable[..., Any] | None]:
    """One kernel of a generated op, as ``Library._define_generated`` takes it: ``fn`` for
    ``key``, with the factory of its unboxing wrapper; ``with_keys`` if it takes the key set."""
    return (key, fn, with_keys, unboxing)


def lazy_method(cls: type, name: str, handle: Any) -> Callable[..., Any]:
    """A method that, on first call, replaces itself on ``cls`` with the op's entry function."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        fn = handle.call
        setattr(cls, name, fn)
        return fn(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


def no_static_kernel(name: str, bits: int, backends: str) -> RuntimeError:
    return RuntimeError(
        f"{name} has no statically dispatched kernel for {DispatchKeySet.from_bits(bits)!r}; "
        f"this build dispatches statically to {backends} only -- regenerate with that backend "
        "in --static-dispatch, or use the dispatched build"
    )
