"""Generated dispatch entry points: the code every operator call runs.

For each op four functions are generated (per signature shape, see Note [Wrapper cache]):

- ``call(*schema args)``: the unboxed entry. It ORs the key sets of exactly the
  tensor-bearing arguments (their positions are known from the schema), adds the global
  include set, applies the thread-local sets only if some thread has them open (Note
  [Thread-local keys]), masks out fallthrough keys, and calls the slot of the highest
  key -- passing the key set first to kernels that take it (boxed kernels through their
  boxing wrapper, unboxed ones registered ``with_keys``).
- ``redispatch(keys, *args)``: the same, continuing below the highest key of ``keys``.
- ``call_boxed(stack)`` and ``redispatch_boxed(keys, stack)``: the boxed path, reading
  the tensor arguments off the stack at the same schema positions.

When ``TYPEDOPS_SHOW_DISPATCH_TRACE=1`` is set at import, the generated code also prints
each dispatch (see _trace.py); otherwise it contains no tracing at all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from ..vocabulary import Device, Layout, MemoryFormat, ScalarType
from ..boxing import CallShape, TensorUse
from ..boxing import bad_returns, install, mismatch, wrong_tuple
from ._arguments import boxed_argument_error, explain_bad_tensors, fill_stack_defaults
from ..vocabulary import DispatchKey
from ._trace import TRACE_ENABLED, traced_call, traced_call_boxed
from ._tls import apply_local, keep_flag_in

if TYPE_CHECKING:
    from ._operator import OperatorEntry

__all__ = ["make_entries", "entry_source", "GLOBAL_INCLUDE"]

# Keys every call's key set includes (ops with no tensor argument pick their backend at
# BackendSelect; every other op falls through it).
GLOBAL_INCLUDE: Final = 1 << DispatchKey.BackendSelect


def _list_bits(tensors: Iterable[Any]) -> int:
    bits = 0
    for t in tensors:
        bits |= t.key_bits
    return bits


def _optional_list_bits(tensors: Iterable[Any] | None) -> int:
    bits = 0
    if tensors is not None:
        for t in tensors:
            if t is not None:
                bits |= t.key_bits
    return bits


def _extract(use: TensorUse, ref: str) -> str | None:
    if use is TensorUse.tensor:
        return f"{ref}.key_bits"
    if use is TensorUse.optional:
        return f"({ref}.key_bits if {ref} is not None else 0)"
    if use is TensorUse.list:
        return f"_list_bits({ref})"
    if use is TensorUse.optional_list:
        return f"_optional_list_bits({ref})"
    return None


def _key_lines(refs: list[tuple[str, TensorUse]], on_error: str) -> list[str]:
    parts = [e for ref, use in refs if (e := _extract(use, ref)) is not None]
    if not parts:
        return [
            f"        _b = {GLOBAL_INCLUDE}",
            "        if _tls_active:",
            "            _b = _apply(_b)",
        ]
    return [
        "        try:",
        f"            _b = {' | '.join(parts)} | {GLOBAL_INCLUDE}",
        "        except (AttributeError, TypeError):",
        f"            raise {on_error} from None",
        "        if _tls_active:",
        "            _b = _apply(_b)",
    ]


# Note [Direct boxed calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# call_boxed has already unpacked and checked the arguments, and the stack holds exactly
# them. So when no argument is list-typed (lists may need converting to the kernel's own
# sequence type, which the unboxing wrapper does), it calls the op's *unboxed* slot with
# the unpacked values and writes the result back: one call instead of three (slot
# partial, unboxing wrapper, kernel). A boxed kernel reached this way runs through its
# boxing wrapper, so it still sees a stack of the arguments. redispatch_boxed always takes
# the boxed path: a fallback's stack may hold more than the call's arguments.
def _direct_boxed(shape: CallShape) -> bool:
    return not any(
        a.tensors in (TensorUse.list, TensorUse.optional_list) or a.check == "slow" for a in shape.args
    )


_FAST_CHECKS: Final = {
    "int": "type({v}) is int",
    "float": "(type({v}) is float or type({v}) is int)",
    "bool": "type({v}) is bool",
    "scalar": "type({v}) in _SCALARS",
    "complex": "type({v}) in _COMPLEXES",
    "str": "type({v}) is str",
    "scalar_type": "type({v}) is _ScalarType",
    "layout": "type({v}) is _Layout",
    "memory_format": "type({v}) is _MemoryFormat",
    "device": "(type({v}) is _Device or type({v}) is str)",
}


def _check_expr(kind: str, index: int, ref: str) -> str | None:
    """A fast *accept* test for a boxed argument; None when nothing is to check."""
    if kind in ("tensor", "none"):
        return None
    if kind == "slow":
        return f"_fits(_op, {index}, {ref})"
    if kind.startswith("opt_"):
        return f"({ref} is None or {_FAST_CHECKS[kind[4:]].format(v=ref)})"
    return _FAST_CHECKS[kind].format(v=ref)


def entry_source(shape: CallShape, trace: bool) -> str:
    """Source of ``make(_op, *defaults)`` returning the four entry functions."""
    defaults = [f"_d{i}" for i in range(sum(1 for a in shape.args if a.has_default))]
    params: list[str] = []
    d = iter(defaults)
    for arg in shape.positional:
        params.append(f"{arg.name}={next(d)}" if arg.has_default else arg.name)
    if shape.kwarg_only:
        params.append("*")
        for arg in shape.kwarg_only:
            params.append(f"{arg.name}={next(d)}" if arg.has_default else arg.name)
    call_args = ", ".join(
        [a.name for a in shape.positional] + [f"{a.name}={a.name}" for a in shape.kwarg_only]
    )
    n = len(shape.args)
    sig = ", ".join(params)
    refs = [(a.name, a.tensors) for a in shape.args]
    locals_ = [f"_a{i}" for i in range(n)]
    stack_refs = [(local, a.tensors) for local, a in zip(locals_, shape.args)]
    checks = [c for i, a in enumerate(shape.args) if (c := _check_expr(a.check, i, locals_[i])) is not None]
    by_name = "{" + ", ".join(f"{a.name!r}: {a.name}" for a in shape.args if a.tensors is not TensorUse.none) + "}"

    def unboxed_dispatch(label: str) -> list[str]:
        if trace:
            kw = "{" + ", ".join(f"{a.name!r}: {a.name}" for a in shape.kwarg_only) + "}"
            positional = "(" + "".join(f"{a.name}, " for a in shape.positional) + ")"
            return [f"        return _traced(_op, {label!r}, _b, {positional}, {kw})"]
        return [f"        return _op.cache[_b]({call_args})"]

    def boxed_dispatch(label: str) -> list[str]:
        if trace:
            return [f"        _traced_boxed(_op, {label!r}, _b, stack)"]
        return ["        _op.boxed_cache[_b](stack)"]

    lines = [f"def make(_op{''.join(', ' + x for x in defaults)}):"]
    lines.append(f"    def call({sig}):")
    lines += _key_lines(refs, f"_op_bad_args(_op, {by_name})")
    lines += unboxed_dispatch("call")
    # XOR clears the top bit, with int's own operator (it stays in C).
    below = "        _b = _ks ^ (1 << (_ks.bit_length() - 1)) if _ks else 0"
    lines.append(f"    def redispatch(_ks{', ' if sig else ''}{sig}):")
    lines.append(below)
    lines += unboxed_dispatch("redispatch")
    lines.append("    def call_boxed(stack):")
    lines.append("        _filled = 0")
    lines.append(f"        if len(stack) != {n}:")
    lines.append("            _filled = _arity(_op, stack)")
    if n:
        lines.append(f"        {', '.join(locals_)}, = stack")
    lines += _key_lines(stack_refs, "_op_bad_stack(_op, stack, _filled)")
    if checks:
        lines.append(f"        if not ({' and '.join(checks)}):")
        lines.append("            _check_stack(_op, stack, _filled)")
    if trace or not _direct_boxed(shape):
        lines += boxed_dispatch("call_boxed")
        lines.append(f"        if len(stack) != {shape.returns}:")
        lines.append(f"            raise _bad_returns(_op, stack, {shape.returns})")
    else:
        # See Note [Direct boxed calls].
        local_args = ", ".join(
            [locals_[i] for i, a in enumerate(shape.args) if not a.kwarg_only]
            + [f"{a.name}={locals_[i]}" for i, a in enumerate(shape.args) if a.kwarg_only]
        )
        call = f"_op.cache[_b]({local_args})"
        if shape.returns == 0:
            lines += [f"        {call}", "        stack.clear()"]
        elif shape.returns == 1:
            # clear() and append() cost less than a slice assignment (measured).
            lines += [f"        _r = {call}", "        stack.clear()", "        stack.append(_r)"]
        else:
            lines += [
                f"        _r = {call}",
                f"        if len(_r) != {shape.returns}:",
                f"            raise _wrong_tuple(_op, _r, {shape.returns})",
                "        stack.clear()",
                "        stack.extend(_r)",
            ]
    lines.append("    def redispatch_boxed(_ks, stack):")
    # Fill omitted trailing defaults, as call_boxed does; a longer stack is allowed (see
    # Note [Direct boxed calls]: a fallback's stack may hold more than the arguments).
    lines.append(f"        if len(stack) < {n}:")
    lines.append("            _arity(_op, stack, 'redispatch_boxed')")
    lines.append(below)
    lines += boxed_dispatch("redispatch_boxed")
    lines.append("    return call, redispatch, call_boxed, redispatch_boxed")
    lines.append("")
    return "\n".join(lines)


def _bad_args(op: OperatorEntry, values: dict[str, Any]) -> TypeError:
    return explain_bad_tensors(op, values)


def _bad_stack(op: OperatorEntry, stack: list[Any], filled: int) -> TypeError:
    names = [a.name for a in op.schema.arguments]
    error = explain_bad_tensors(op, dict(zip(names, stack)), boxed=True)
    _unfill(stack, filled)
    return error


def _unfill(stack: list[Any], filled: int) -> None:
    """Take back the defaults a boxed call appended, so a refused call leaves the stack as given."""
    if filled:
        del stack[-filled:]


def _check_stack(op: OperatorEntry, stack: list[Any], filled: int) -> None:
    error = boxed_argument_error(op, stack)
    if error is not None:
        _unfill(stack, filled)
        raise error


def _fits(op: OperatorEntry, index: int, value: Any) -> bool:
    return mismatch(op.schema.arguments[index].type, value) is None


def _arity(op: OperatorEntry, stack: list[Any], entry: str = "call_boxed") -> int:
    return fill_stack_defaults(op, stack, entry)


# One namespace for all generated entry code: the thread-local flag is kept current in
# it (see Note [Thread-local keys]).
_GLOBALS: Final[dict[str, Any]] = {
    "_apply": apply_local,
    "_list_bits": _list_bits,
    "_optional_list_bits": _optional_list_bits,
    "_op_bad_args": _bad_args,
    "_op_bad_stack": _bad_stack,
    "_arity": _arity,
    "_bad_returns": bad_returns,
    "_wrong_tuple": wrong_tuple,
    "_check_stack": _check_stack,
    "_fits": _fits,
    "_SCALARS": frozenset({int, float, bool, complex}),
    "_COMPLEXES": frozenset({int, float, complex}),
    "_ScalarType": ScalarType,
    "_Layout": Layout,
    "_MemoryFormat": MemoryFormat,
    "_Device": Device,
    "_traced": traced_call,
    "_traced_boxed": traced_call_boxed,
}


keep_flag_in(_GLOBALS)


@functools.cache
def _factory(shape: CallShape, trace: bool) -> Callable[..., Any]:
    return install(entry_source(shape, trace), _GLOBALS, f"dispatch entry {shape.describe()}", "make")


def make_entries(op: OperatorEntry) -> tuple[Callable[..., Any], ...]:
    """The four entry functions for ``op``, from the compiled factory of its shape."""
    functions: tuple[Callable[..., Any], ...] = _factory(op.shape, TRACE_ENABLED)(op, *op.defaults)
    call = functions[0]
    call.__name__ = call.__qualname__ = op.schema.name
    return functions
