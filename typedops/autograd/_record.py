"""What autograd kernels call besides _graph.py, and the two boxed fallbacks of the layer.

Note [Redispatch below Autograd]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An autograd kernel continues the call with the keys *below* the autograd keys (ADInplaceOrView,
Python, BackendSelect, the backends): ``below_autograd(keys)`` keeps those and puts
AutogradOther on top, because ``redispatch`` continues below the highest key of the set it
is given. The generated core kernels call what that redispatch would, without its frame:
the op's slot for ``keys & BELOW_AUTOGRAD_MASK`` (``unboxed_slots(handle).cache[bits]``,
read on every call, as a registration replaces the cache; the bits come from the dict
``BELOW_AUTOGRAD[keys]``, as a key set's own ``&`` is a Python method and even
``int.__and__(keys, mask)`` costs a slot-wrapper call, several times a dict lookup; with
the dispatch trace on, those slots go through ``redispatch``, so the trace shows the hop). Whatever serves the
keys below autograd -- ADInplaceOrView, a mode at the Python key, the backend -- still
sees the call. The generated core kernels do not also exclude the Autograd keys in the
thread-local set, as PyTorch's ``AutoDispatchBelowAutograd`` does: the core backend
kernels call no op on their tensor arguments (Note [Nested op calls] in core/kernels),
and the exclusion costs a context-variable write per recorded op. Kernels of other
libraries may call ops freely, so the fallbacks here and custom-op rules do exclude them.

Note [ADInplaceOrView]
~~~~~~~~~~~~~~~~~~~~~~
Every tensor carries ADInplaceOrView. One boxed fallback serves that key, limited
(``Boxed.only_for``) to ops whose schema writes an argument (``Tensor(a!)``, which ``@op``'s
``mutates_args`` produces too); for all other ops the key falls through at no cost. It runs
the op below itself, then bumps the version counter of every written tensor -- once per
op, whatever its kernels do -- so a saved tensor changed in place is caught at backward.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..dispatch import AUTOGRAD_KEYS, DispatchKey, DispatchKeySet, Library, OperatorHandle, bound_to_keys, boxed
from ..schema import FunctionSchema
from ..tensor import Tensor, bump_version, read_only_error, tensors_in
from ._grad_mode import no_grad
from ._graph import Node, check_inplace, edge_of, meta_of, set_history
from ..vocabulary import ScalarType
from ._messages import (
    NO_FORMULA, NOT_IMPLEMENTED, OUT_NOT_DIFFERENTIABLE, UNDIFFERENTIABLE_DTYPE, YAML_NOT_IMPLEMENTED, AutogradError,
)  # fmt: skip

__all__ = [
    "below_autograd",
    "BELOW_AUTOGRAD_MASK",
    "BELOW_AUTOGRAD",
    "AUTOGRAD_OTHER_BIT",
    "add_output_meta",
    "not_implemented",
    "out_not_differentiable",
    "DIFFERENTIABLE_DTYPES",
    "undifferentiable_dtype",
    "register_autograd_kernels",
    "install_fallbacks",
    "NotImplementedBackward",
    "check_written",
]

BELOW_AUTOGRAD_MASK: Final = (1 << DispatchKey.AutogradOther) - 1
AUTOGRAD_OTHER_BIT: Final = 1 << DispatchKey.AutogradOther


class _BelowAutograd(dict[int, int]):
    """``keys -> keys & BELOW_AUTOGRAD_MASK``, filled on first use (a key set is an int, and
    its hash is the int's). Bounded: it is emptied when it reaches ``_BELOW_LIMIT`` entries
    (a program meets a few dozen key sets)."""

    def __missing__(self, keys: int) -> int:
        if len(self) >= _BELOW_LIMIT:
            self.clear()
        bits = self[keys] = int(keys) & BELOW_AUTOGRAD_MASK
        return bits


_BELOW_LIMIT: Final = 4096
# The keys below autograd of a key set, for the generated kernels: Note [Redispatch below Autograd].
BELOW_AUTOGRAD: Final[dict[int, int]] = _BelowAutograd()


def below_autograd(keys: int) -> int:
    """The key set to redispatch with to land below autograd (Note [Redispatch below Autograd])."""
    return (keys & BELOW_AUTOGRAD_MASK) | AUTOGRAD_OTHER_BIT


def add_output_meta(node: Node, output: Tensor) -> None:
    """Record a non-differentiable output's metadata (keeps output numbering)."""
    node.out_meta += (meta_of(output),)


def not_implemented(op: str, input_name: str) -> AutogradError:
    return AutogradError(NOT_IMPLEMENTED.format(op=op, why=YAML_NOT_IMPLEMENTED.format(input=input_name)))


def out_not_differentiable(op: str) -> AutogradError:
    return AutogradError(OUT_NOT_DIFFERENTIABLE.format(op=op))


# The dtypes a recorded output may have: a gradient is a floating point or complex tensor.
DIFFERENTIABLE_DTYPES: Final = frozenset(
    {ScalarType.float16, ScalarType.bfloat16, ScalarType.float32, ScalarType.float64,
     ScalarType.complex64, ScalarType.complex128}
)  # fmt: skip


def undifferentiable_dtype(op: str, dtype: ScalarType) -> AutogradError:
    """The error of an op that, with an input requiring grad, made an output of ``dtype``
    (not in ``DIFFERENTIABLE_DTYPES``): Note [Outputs of a chosen dtype] in
    typedops/codegen/_derivatives_source.py."""
    return AutogradError(UNDIFFERENTIABLE_DTYPE.format(op=op, dtype=dtype.name))


def register_autograd_kernels(library: Library, kernels: Iterable[tuple[OperatorHandle, Any]]) -> None:
    """Register generated autograd kernels for the Autograd key. Each is generated as a
    factory: ``factory(keys)`` returns the kernel for calls with that key set (Note [Kernels
    bound to their keys] in typedops/dispatch/_kernel.py)."""
    for handle, factory in kernels:
        library.impl(handle, bound_to_keys(factory), DispatchKey.Autograd, with_keys=True, check=False)


class NotImplementedBackward(Node):
    """The node of an op without an autograd rule: backward through it raises."""

    __slots__ = ("op",)
    _name = "NotImplemented"

    def __init__(self, op: str) -> None:
        super().__init__()
        self.op = op

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise AutogradError(NOT_IMPLEMENTED.format(op=self.op, why=NO_FORMULA))


@functools.lru_cache(maxsize=4096)
def _written(schema: FunctionSchema) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(schema.arguments) if a.is_write)


def check_written(values: Sequence[Any], written: Iterable[int], op: str) -> None:
    """``check_inplace`` on each tensor of the written arguments (``values[i]`` for each
    ``i`` of ``written``) of a call of ``op`` about to be recorded."""
    for i in written:
        for t in tensors_in([values[i]]):
            check_inplace(t, op)


def _inplace_or_view(op: OperatorHandle, keys: Any, stack: list[Any]) -> None:
    """Note [ADInplaceOrView]."""
    schema = op.schema
    base = len(stack) - len(schema.arguments)
    written = tensors_in(stack[base + i] for i in _written(schema))
    try:
        op.redispatch_boxed(keys, stack)
    except ValueError as error:  # numpy's "assignment destination is read-only", a kernel's own
        found = read_only_error(written, schema.full_name)
        if found is None:
            raise
        raise found from error
    for t in written:
        bump_version(t)


def _autograd_fallback(op: OperatorHandle, keys: Any, stack: list[Any]) -> None:
    """The Autograd kernel of ops without one: outputs get a node that raises at backward."""
    schema = op.schema
    base = len(stack) - len(schema.arguments)
    args = stack[base:]
    inputs = tensors_in(args)
    edges = [edge_of(t) for t in inputs if t.requires_grad]
    below = DispatchKeySet.from_bits(below_autograd(int(keys)))
    if not edges:
        op.redispatch_boxed(below, stack)
        return
    if schema.is_out_fn:
        raise out_not_differentiable(schema.full_name)
    check_written(args, _written(schema), schema.full_name)
    with no_grad():
        op.redispatch_boxed(below, stack)
    outputs = [t for t in tensors_in(stack[base:]) if t._dtype in DIFFERENTIABLE_DTYPES]
    if outputs:
        node = NotImplementedBackward(schema.full_name)
        node.next_edges = tuple(edges)
        for i, t in enumerate(outputs):
            set_history(t, node, i)


def _mutates(schema: FunctionSchema, keys: frozenset[DispatchKey]) -> bool:
    # A CompositeImplicitAutograd op (sub_, zero_) writes through the ops it calls, which
    # bump the versions themselves: as in PyTorch, it has no ADInplaceOrView kernel.
    return schema.is_mutable and DispatchKey.CompositeImplicitAutograd not in keys


def install_fallbacks() -> Library:
    """Register the Autograd and ADInplaceOrView fallbacks for every namespace."""
    library = Library("_", "IMPL")
    for key in AUTOGRAD_KEYS:
        library.fallback(boxed(_autograd_fallback), key)
    library.fallback(boxed(_inplace_or_view, only_for=_mutates), DispatchKey.ADInplaceOrView)
    return library
