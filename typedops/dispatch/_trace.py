"""The dispatch trace: ``TYPEDOPS_SHOW_DISPATCH_TRACE=1`` prints every dispatch.

Read once at import. When unset, the generated entry points contain no tracing code
at all, so it costs nothing; when set, they route every dispatch through the functions
below, which print the op, the key set, the chosen key and nest redispatches.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Final

from ..vocabulary import DispatchKeySet

if TYPE_CHECKING:
    from ._operator import OperatorEntry

__all__ = ["TRACE_ENABLED", "traced_call", "traced_call_boxed"]

TRACE_ENABLED: Final = os.environ.get("TYPEDOPS_SHOW_DISPATCH_TRACE", "") not in ("", "0")


class _Depth(threading.local):
    def __init__(self) -> None:
        self.value = 0


_depth = _Depth()


def _announce(op: OperatorEntry, label: str, keys: int, masked: int) -> None:
    # The key set shown is the one that picks the slot: fallthrough keys already removed.
    chosen = DispatchKeySet.from_bits(masked)
    target = chosen.highest().name if masked else "(no keys)"
    indent = "  " * _depth.value
    print(f"[dispatch] {indent}{op.full_name} {label}: {chosen!r} -> {target}", file=sys.stderr)


def traced_call(op: OperatorEntry, label: str, bits: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    _announce(op, label, bits, bits & op.table[-1])
    _depth.value += 1
    try:
        return op.cache[bits](*args, **kwargs)
    finally:
        _depth.value -= 1


def traced_call_boxed(op: OperatorEntry, label: str, bits: int, stack: list[Any]) -> None:
    _announce(op, label, bits, bits & op.table[-1])
    _depth.value += 1
    try:
        op.boxed_cache[bits](stack)
    finally:
        _depth.value -= 1
