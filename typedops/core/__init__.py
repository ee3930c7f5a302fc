"""The core op library: operators in namespace ``core``, declared in
``native_functions.yaml`` with their kernels in ``typedops.core.kernels``.

``typedops/core/_generated`` is generated from the yaml (``make codegen``; a test fails
when it is stale). Importing this package registers the ops (``typedops.ops.core.add``),
installs the ``variants: method`` ops on ``Tensor`` (``x.add(y)``), and exposes the typed
functional API::

    from typedops import core
    core.add(x, y, alpha=2)

``import typedops`` does not import it (that budget is ``import numpy``'s); the first use of
``typedops.ops.core`` or of a core method on a tensor does. See Note [Loading the core
library] in typedops/dispatch/_ops.py.
"""

from typing import TYPE_CHECKING, Any

from . import _generated
from ._generated import __all__ as __all__
from ._generated import autograd as _autograd  # pyright: ignore[reportUnusedImport] -- registers the autograd kernels



def load_static_wrappers() -> None:
    """Register the core library's static unboxing wrappers (CPU and Meta) in the runtime's
    table, for dispatcher-free programs (Note [Static unboxing wrappers] in
    typedops/codegen/_unboxing.py); the second call costs one dict lookup."""
    from ._generated import unboxing as _unboxing  # pyright: ignore[reportUnusedImport] -- registers them


if TYPE_CHECKING:
    from ._generated import *  # noqa: F403 -- the typed functional API (_generated/__init__.pyi)
else:

    def __getattr__(name: str) -> Any:
        """The functional API, bound here on first use (see _generated/__init__.py), so
        later loads of ``core.<name>`` are plain module attributes."""
        value = getattr(_generated, name)
        globals()[name] = value
        return value
