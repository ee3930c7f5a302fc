"""``typedops trace-ops``: run a script and record every operator it calls, nested calls too.

An observer of the profiler (``typedops.profiler.add_observer``) records ``op.full_name``
of every call while ``observing()`` turns the Profiler key on for the script's run, so a
composite kernel's own op calls are seen as well: the same boxed fallback the profiler
times calls with, not a second one.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..profiler import add_observer, observing

__all__ = ["trace_ops", "ops_yaml"]


def trace_ops(script: Path, argv: Sequence[str] = ()) -> list[str]:
    """Run ``script`` as ``__main__`` and return the sorted full names of the ops it called."""
    seen: set[str] = set()

    def record(op: Any, args: Any) -> None:
        seen.add(op.full_name)

    saved_argv = sys.argv[:]
    sys.argv = [str(script), *argv]
    try:
        with add_observer(record), observing():
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved_argv
    return sorted(seen)


def ops_yaml(names: Sequence[str], script: str) -> str:
    """An op-list yaml (for ``typedops codegen --ops``) naming ``names``."""
    lines = [f"# Operators called by {script}, recorded by typedops trace-ops.", *(f"- {n}" for n in names)]
    return "\n".join(lines) + "\n" if names else lines[0] + "\n[]\n"
