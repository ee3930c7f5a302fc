"""What generated modules import at run time (kept small: no yaml, no codegen).

A generated library imports every name it needs from here in one statement: each
``from package import name`` statement costs microseconds (a package's goes through
importlib's Python-level fromlist handling), on every import of every library. So this
module re-exports what generated code uses -- schema builders and types, the dispatcher
names, the boxing helpers the unboxing wrappers call -- beside its own helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from ..vocabulary import ArgumentError, Device, NoKernelError
from ..tensor import AUTOGRAD_BIT_FOR_DEVICE, AUTOGRAD_BITS, CPU, Tensor, alias_of, keys_for_device, wrapped_scalar
from ..boxing import broadcast, default_value, is_number, python_number, to_list, to_tuple, wrong_tuple
from ..dispatch import DispatchKey, DispatchKeySet, Library, check_devices, one_device, unboxed_slots
from ..dispatch import call_overload as choose  # the one overload-resolution rule
from ..autograd import (
    AUTOGRAD_OTHER_BIT, BELOW_AUTOGRAD, BELOW_AUTOGRAD_MASK, DIFFERENTIABLE_DTYPES, NODE_SEQUENCE, Node, SavedTensor, add_output_meta,
    below_autograd, check_inplace, edge_of, mark_view, rebase_view, not_implemented,
    out_not_differentiable, register_autograd_kernels, undifferentiable_dtype, save, save_output, set_history, unpack, unpack_saved,
    unpack_output, WITH_AUTOGRAD,
)  # fmt: skip
from ..batching import register_vmap_rules
from ..schema import (
    AwaitType, BaseType, ClassType, DictType, FutureType, ListType, OptionalType,
    RRefType, TupleType, TypeVar,
)  # fmt: skip
from ..schema import build_alias as alias
from ..schema import build_argument as argument
from ..schema import build_return as make_return
from ..schema import build_schema as schema
from ._messages import NO_STATIC_KERNEL

__all__ = [
    "choose", "lazy_method", "lazy_entry", "no_static_kernel", "list_bits", "device_bits", "static_entry_points", "kernel", "check_devices", "one_device",
    "register_static_wrappers", "static_wrapper", "StaticWrapper", "StaticEntry",
    # re-exported for generated code
    "Any", "ArgumentError", "CPU", "Device", "Tensor", "keys_for_device", "wrapped_scalar", "is_number", "python_number", "default_value", "to_list", "to_tuple", "broadcast", "wrong_tuple",
    "DispatchKey", "DispatchKeySet", "Library", "AwaitType", "BaseType", "ClassType", "DictType",
    "FutureType", "ListType", "OptionalType", "RRefType", "TupleType", "TypeVar",
    "alias", "argument", "make_return", "schema",
    # for generated batching rules
    "register_vmap_rules",
    # for generated autograd kernels
    "AUTOGRAD_BITS", "AUTOGRAD_BIT_FOR_DEVICE", "AUTOGRAD_OTHER_BIT", "BELOW_AUTOGRAD", "BELOW_AUTOGRAD_MASK", "NODE_SEQUENCE",
    "Node", "SavedTensor", "add_output_meta",
    "below_autograd", "check_inplace", "edge_of", "unboxed_slots", "mark_view", "rebase_view", "not_implemented",
    "out_not_differentiable", "DIFFERENTIABLE_DTYPES", "undifferentiable_dtype", "register_autograd_kernels", "save", "save_output", "set_history", "unpack", "unpack_saved", "WITH_AUTOGRAD",
    "alias_of", "unpack_output",
]  # fmt: skip


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


def lazy_entry(namespace: dict[str, Any], name: str, handle: Any) -> Callable[..., Any]:
    """A stand-in for ``handle``'s entry function as the global ``name`` of ``namespace``:
    its first call puts the entry function there (Note [Entry functions as globals] in
    typedops/codegen/_api.py), then calls it."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        fn = handle.call
        namespace[name] = fn
        return fn(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


# Note [Static unboxing wrappers] in typedops/codegen/_unboxing.py: a generated module of
# static unboxing wrappers registers them here by op full name ("core::add.Tensor"),
# each op's boxed and unboxed wrapper, with the backends they dispatch to; the program
# interpreter's static flavor reads them.
StaticWrapper = Callable[[list[Any]], None]  # wrapper(stack): the arguments on the stack become the returns


@dataclass(frozen=True, slots=True)
class StaticEntry:
    """One op's generated static wrappers: ``boxed(stack)`` and ``unboxed(*arguments)``
    (every argument positionally, in schema order; returns what the kernel returns),
    dispatching statically to ``backends`` (``"CPU, Meta"``)."""

    boxed: StaticWrapper
    unboxed: Callable[..., Any]
    backends: str


_static_wrappers: dict[str, StaticEntry] = {}


def register_static_wrappers(backends: str, wrappers: dict[str, tuple[StaticWrapper, Callable[..., Any]]]) -> None:
    """Record generated static wrappers (op full name -> ``(boxed, unboxed)``) that
    dispatch statically to ``backends``; a later module's replace earlier ones."""
    for name, (boxed, unboxed) in wrappers.items():
        _static_wrappers[name] = StaticEntry(boxed, unboxed, backends)


def static_wrapper(full_name: str) -> StaticEntry | None:
    """The static wrappers registered for ``full_name``, or None."""
    return _static_wrappers.get(full_name)


_CPU_BITS: Final = 1 << DispatchKey.CPU


def list_bits(tensors: Iterable[Any]) -> int:
    """The key bits of a tensor list's tensors (a ``Tensor?[]``'s None items skipped), for
    the statically dispatched code the generators write (one definition for all of it)."""
    bits = 0
    for t in tensors:
        if t is not None:
            bits |= t.key_bits
    return bits


def device_bits(device: Any) -> int:
    """The key bits of the backend a factory's ``device`` argument names (CPU for None)."""
    return _CPU_BITS if device is None else int(keys_for_device(Device.parse(device)))


def no_static_kernel(name: str, bits: int, backends: str) -> NoKernelError:
    """The error of a statically dispatched call whose key has no kernel in this build (the
    dispatched path raises the same class for a missing kernel)."""
    keys = DispatchKeySet.from_bits(bits)
    return NoKernelError(
        NO_STATIC_KERNEL.format(name=name, keys=keys, backends=backends),
        name,
        keys,
        keys.highest() if keys else None,
        (),
    )


def static_entry_points(functions: dict[str, Callable[..., Any]]) -> None:
    """Name a ``--static-dispatch`` build's function of each op (full name -> function) for
    opcheck's ``test_static_dispatch``. The testing layer is imported here, not with the
    runtime: only static builds call this."""
    from ..testing import register_static_functions

    register_static_functions(functions)
