"""Checking and completing call arguments on the slow paths (errors, short boxed stacks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..vocabulary import ArgumentError, ArgumentOverflowError
from ..boxing import TensorUse, canonical, default_value, dtype_of_python_type, plain_number, is_overflow, mismatch, python_name, tensor_use, type_name
from ._messages import (
    BAD_BOXED_ARGUMENT,
    BAD_TENSOR_ARGUMENT,
    BAD_TENSOR_SOMEWHERE,
    BAD_UNBOXED_ARGUMENT,
    BOXED_CALL,
    ELEMENT_NOT_TENSOR,
    EXPECTED_TENSOR,
    EXPECTED_TENSOR_LIST,
    EXPECTED_TENSOR_OR_NONE,
    OVERFLOW_BOXED,
    OVERFLOW_FIX_INT,
    OVERFLOW_FIX_SCALAR,
    OVERFLOW_UNBOXED,
    STACK_MISSING,
    STACK_TOO_LONG,
)

if TYPE_CHECKING:
    from ..schema import Argument

    from ._operator import OperatorEntry

__all__ = ["explain_bad_tensors", "fill_stack_defaults", "boxed_argument_error", "fix_arguments", "check_overflow"]


def _is_tensor(value: Any) -> bool:
    return isinstance(getattr(value, "key_bits", None), int)


def explain_bad_tensors(op: OperatorEntry, values: dict[str, Any], *, boxed: bool = False) -> ArgumentError:
    """The error for a call whose tensor-typed argument is not a tensor (or list of them)."""
    for arg in op.schema.arguments:
        if arg.name not in values and python_name(arg.name) not in values:
            continue
        value: Any = values.get(arg.name, values.get(python_name(arg.name)))
        use = tensor_use(arg.type)
        if use is TensorUse.tensor and not _is_tensor(value):
            problem = EXPECTED_TENSOR.format(got=type_name(value))
        elif use is TensorUse.optional and value is not None and not _is_tensor(value):
            problem = EXPECTED_TENSOR_OR_NONE.format(got=type_name(value))
        elif use in (TensorUse.list, TensorUse.optional_list):
            allow_none = use is TensorUse.optional_list
            if value is None and allow_none:
                continue
            try:
                items = list[Any](value)  # pyright: ignore[reportArgumentType] -- None: the TypeError branch
            except TypeError:
                problem = EXPECTED_TENSOR_LIST.format(got=type_name(value))
            else:
                bad = [i for i, v in enumerate(items) if not (_is_tensor(v) or (allow_none and v is None))]
                if not bad:
                    continue
                problem = ELEMENT_NOT_TENSOR.format(index=bad[0], got=type_name(items[bad[0]]))
        else:
            continue
        where = BOXED_CALL.format(op=op.full_name) if boxed else op.full_name
        return ArgumentError(BAD_TENSOR_ARGUMENT.format(where=where, name=arg.name, type=arg.type, problem=problem))
    return ArgumentError(BAD_TENSOR_SOMEWHERE.format(op=op.full_name))


def boxed_argument_error(op: OperatorEntry, stack: list[Any]) -> ArgumentError | ArgumentOverflowError | None:
    """The error for the first stack value that does not fit its argument's schema type.
    (A lone value for a sized list stays on the stack; an unboxed kernel gets the list
    from its unboxing wrapper: ``conversions_for``.)"""
    for arg, value in zip(op.schema.arguments, stack):
        problem = mismatch(arg.type, value)
        if problem is not None:
            return _argument_error(op, arg, problem, boxed=True)
    return None


def _argument_error(op: OperatorEntry, arg: Argument, problem: str, *, boxed: bool) -> ArgumentError | ArgumentOverflowError:
    """The error of argument ``arg`` whose value has ``problem`` (``mismatch``'s text)."""
    if is_overflow(problem):
        fix = OVERFLOW_FIX_SCALAR if "Scalar" in str(arg.type) else OVERFLOW_FIX_INT
        template = OVERFLOW_BOXED if boxed else OVERFLOW_UNBOXED
        return ArgumentOverflowError(template.format(op=op.full_name, name=arg.name, type=arg.type, problem=problem, fix=fix))
    template = BAD_BOXED_ARGUMENT if boxed else BAD_UNBOXED_ARGUMENT
    return ArgumentError(template.format(op=op.full_name, name=arg.name, type=arg.type, problem=problem))


# Note [Ints too large for their argument]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An int argument is an int64 (Note [Ints are int64] in boxing/_ivalue.py). The entries'
# exact-type tests do not test an int's range (a comparison on every call of every op with
# an int or Scalar argument); the full check does, when a test fails. An int beyond int64
# that passes the test meets the kernel, which fails in its own way: numpy's bare
# OverflowError ("Python int too large to convert to C long"), a ValueError from printing
# a number of more than 4,300 digits into a message, or an error about a dimension no
# tensor has. So when the kernel raises, ``call`` and ``call_boxed`` run the full check on
# their arguments (the try costs nothing until it catches): an argument out of range gives
# its ArgumentOverflowError, naming the op, the argument and the fix, as PyTorch refuses
# such an argument before any kernel runs; with none, the kernel's error goes on. A
# composite kernel's inner call names the inner op first, then the outer entry, seeing
# the same value among its own arguments, names the op the caller called. An int beyond
# int64 that the kernel computes with (``alpha=2**63`` for a float tensor, as PyTorch
# does) is not refused.
def check_overflow(op: OperatorEntry, values: tuple[Any, ...], *, boxed: bool = False) -> None:
    """After a kernel's error: raise the ArgumentOverflowError of the first of the
    call's arguments ``values`` (every argument, in schema order) outside int64, if any
    (Note [Ints too large for their argument])."""
    for arg, value in zip(op.schema.arguments, values):
        problem = mismatch(arg.type, value)
        if problem is not None and is_overflow(problem):
            raise _argument_error(op, arg, problem, boxed=boxed) from None


# Note [Unboxed calls check like boxed ones]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The unboxed entry tests each non-tensor argument with an exact-type test (the boxed
# entry's), and only when one fails calls fix_arguments: it runs the full schema check --
# accepting what the boxed path accepts (an int for a float, a subclass, a lone int for
# 'int[1]'), and Python's number types for a dtype (Note [Python types as dtypes] in
# vocabulary/_dtypes.py) -- and returns the values the kernel receives (``canonical``), or raises the
# ArgumentError naming the op, the argument, its schema type and the value's type. So a
# kernel declared 'int' never sees 2.5, on any path, and the common call pays only the
# exact-type tests.
def fix_arguments(op: OperatorEntry, indices: tuple[int, ...], values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The checked arguments ``values`` (at schema positions ``indices``) as the kernel
    receives them, or the ArgumentError of the first that does not fit."""
    args = op.schema.arguments
    fixed: list[Any] = []
    for i, value in zip(indices, values):
        arg = args[i]
        value = dtype_of_python_type(arg.type, value)  # dtype=float: Note [Python types as dtypes]
        value = plain_number(arg.type, value)  # Note [Numbers that are not Python's]
        problem = mismatch(arg.type, value)
        if problem is not None:
            raise _argument_error(op, arg, problem, boxed=False)
        fixed.append(canonical(arg.type, value))
    return tuple(fixed)


def fill_stack_defaults(op: OperatorEntry, stack: list[Any], entry: str = "call_boxed") -> int:
    """Complete a boxed call whose stack omits trailing arguments that have defaults.

    Raises ``TypeError`` (leaving the stack as it was) when the stack holds too many
    values, or omits an argument that has no default; ``entry`` names the boxed entry
    point in the message.
    """
    args = op.schema.arguments
    have, want = len(stack), len(args)
    signature = ", ".join(str(a) for a in args)
    if have > want:
        raise ArgumentError(
            STACK_TOO_LONG.format(op=op.full_name, entry=entry, have=have, want=want, signature=signature)
        )
    missing = [a for a in args[have:] if not a.has_default]
    if missing:
        names = ", ".join(f"'{a.name}'" for a in missing)
        raise ArgumentError(STACK_MISSING.format(op=op.full_name, entry=entry, names=names, have=have, signature=signature))
    stack.extend(default_value(a) for a in args[have:])
    return want - have
