"""The boxed calling convention's stack.

A boxed kernel is ``fn(op, keys, stack) -> None``: the call's arguments are the top
values of ``stack`` in schema order; the kernel pops them and pushes its returns, in
order (a tuple return spreads over several slots, ``()`` pushes nothing).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypeAlias

from ..vocabulary import StackError

__all__ = ["Stack", "push", "pop", "peek", "drop", "last"]

Stack: TypeAlias = "list[Any]"


def push(stack: Stack, *values: Any) -> None:
    """Push ``values`` in order."""
    stack.extend(values)


def pop(stack: Stack) -> Any:
    """Pop the top value."""
    return stack.pop()


def peek(stack: Stack, i: int, n: int) -> Any:
    """Argument ``i`` of the top ``n`` values (0 is the deepest of them), left in place."""
    if not 0 <= i < n <= len(stack):
        raise StackError(f"peek({i}, {n}) on a stack of {len(stack)} values")
    return stack[len(stack) - n + i]


def last(stack: Stack, n: int) -> list[Any]:
    """The top ``n`` values, deepest first, left in place."""
    if n > len(stack):
        raise StackError(f"last({n}) on a stack of {len(stack)} values")
    return stack[len(stack) - n :]


def drop(stack: Stack, n: int) -> None:
    """Remove the top ``n`` values."""
    if n > len(stack):
        raise StackError(f"drop({n}) on a stack of {len(stack)} values")
    if n:
        del stack[-n:]
