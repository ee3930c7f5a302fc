"""``typedops trace-ops``: run a script and record every operator it calls, nested calls too.

A boxed fallback on ``DispatchKey.Profiler`` for every namespace records ``op.full_name``
and redispatches; ``include_keys(Profiler)`` turns it on for the script's run, so a
composite kernel's own op calls pass through it as well.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..dispatch import DispatchKey, DispatchKeySet, Library, include_keys

__all__ = ["trace_ops", "ops_yaml"]


def trace_ops(script: Path, argv: Sequence[str] = ()) -> list[str]:
    """Run ``script`` as ``__main__`` and return the sorted full names of the ops it called."""
    seen: set[str] = set()

    def record(op: Any, keys: DispatchKeySet, stack: list[Any]) -> None:
        seen.add(op.full_name)
        op.redispatch_boxed(keys, stack)

    saved_argv = sys.argv[:]
    sys.argv = [str(script), *argv]
    try:
        with Library("_", "IMPL") as lib:
            lib.fallback(record, DispatchKey.Profiler)
            with include_keys(DispatchKey.Profiler):
                runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved_argv
    return sorted(seen)


def ops_yaml(names: Sequence[str], script: str) -> str:
    """An op-list yaml (for ``typedops codegen --ops``) naming ``names``."""
    lines = [f"# Operators called by {script}, recorded by typedops trace-ops.", *(f"- {n}" for n in names)]
    return "\n".join(lines) + "\n" if names else lines[0] + "\n[]\n"
