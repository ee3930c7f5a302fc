"""Importing the core library's kernels while its generated code is being replaced.

Note [Regenerating the core library]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The generator imports a library's kernels to check their signatures. The core library's
kernels live in ``typedops.core.kernels``, and importing a submodule runs its package's
``__init__`` first -- ``typedops/core/__init__.py``, which imports the generated library,
``typedops/core/_generated``, the very code being regenerated. After a kernel is renamed
or removed, that stale code names a kernel that no longer exists, so ``make codegen``
failed on the import of the old output instead of writing the new one.

So while the generator makes the bundled library (``--bundled``) in a process that has
not imported the core library yet (``make codegen`` runs in a fresh one), ``typedops.core``
is a bare package module: its ``__path__`` finds the submodules, its ``__init__`` does not
run. Afterwards the bare module and the submodules imported under it are taken out of
``sys.modules``, so the next ``import typedops.core`` runs the real ``__init__`` and imports
the kernels again as attributes of the real package. A process that has imported the core
library keeps it as it is. (Another thread importing ``typedops.core`` while the generator
runs would get the bare package: the generator is a command-line tool, run alone.)
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["core_kernels_alone"]

_CORE: str = "typedops.core"


@contextmanager
def core_kernels_alone(kernels: str | None) -> Generator[None, None, None]:
    """While the body runs, kernels under ``typedops.core`` import without the package's
    ``__init__`` (Note [Regenerating the core library])."""
    if kernels is None or not kernels.startswith(_CORE + ".") or _CORE in sys.modules:
        yield
        return
    spec = importlib.util.find_spec(_CORE)
    if spec is None:  # pragma: no cover -- this module is part of the package it looks for
        yield
        return
    bare = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    sys.modules[_CORE] = bare
    try:
        yield
    finally:
        if sys.modules.get(_CORE) is bare:
            # Forget the submodules imported under the bare package too: the real package,
            # imported later, then imports them afresh and gets them as its attributes.
            for name in [n for n in sys.modules if n.startswith(_CORE + ".") and n not in before]:
                del sys.modules[name]
            del sys.modules[_CORE]
