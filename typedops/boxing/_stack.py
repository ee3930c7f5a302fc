"""The boxed calling convention's stack.

A boxed kernel is ``fn(op, keys, stack) -> None``: the call's arguments are the top
values of ``stack`` in schema order; the kernel pops them and pushes its returns, in
order (a tuple return spreads over several slots, ``()`` pushes nothing).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypeAlias

from ..vocabulary import StackError
from ._messages import STACK_DROP, STACK_LAST, STACK_PEEK

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
        raise StackError(STACK_PEEK.format(i=i, n=n, size=len(stack)))
    return stack[len(stack) - n + i]


def last(stack: Stack, n: int) -> list[Any]:
    """The top ``n`` values, deepest first, left in place."""
    if n > len(stack):
        raise StackError(STACK_LAST.format(n=n, size=len(stack)))
    return stack[len(stack) - n :]


def drop(stack: Stack, n: int) -> None:
    """Remove the top ``n`` values."""
    if n > len(stack):
        raise StackError(STACK_DROP.format(n=n, size=len(stack)))
    if n:
        del stack[-n:]
