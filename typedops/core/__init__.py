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

from ..runtime import lazy_entry
from . import _generated
from ._generated import __all__ as __all__
from ._generated import autograd as _autograd  # pyright: ignore[reportUnusedImport] -- registers the autograd kernels



def load_static_wrappers() -> None:
    """Register the core library's static unboxing wrappers (CPU and Meta) in the runtime's
    table, for dispatcher-free programs (Note [Static unboxing wrappers] in
    typedops/codegen/_unboxing.py); the second call costs one dict lookup."""
    from ._generated import unboxing as _unboxing  # pyright: ignore[reportUnusedImport] -- registers them


# Note [The functional API without __getattr__]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CPython 3.11 specializes the load of ``core.add`` (``LOAD_ATTR_MODULE``: a check of the
# dict's version and an index) only on a module whose dict has no ``__getattr__``; with
# one (this module had it, to bind the API on first use) every ``core.<name>`` took the
# generic path, ~13 ns more per call (measured). So every name of the functional API is
# bound here at import: a name with several overloads is its generated chooser, and a
# name with one a stand-in (``runtime.lazy_entry``) whose first call generates the op's
# entry function and puts it in its place (generating them all at import would cost
# milliseconds). A stand-in taken before its first call (``from typedops.core import
# relu``) goes on forwarding to the entry function, at the cost of one call more.
if TYPE_CHECKING:
    from ._generated import *  # noqa: F403 -- the typed functional API (_generated/__init__.pyi)
else:

    def _bind_api() -> None:
        """Bind the functional API (Note [The functional API without __getattr__])."""
        namespace = globals()
        singles: dict[str, Any] = _generated._SINGLE
        for name in __all__:
            handle = singles.get(name)
            namespace[name] = getattr(_generated, name) if handle is None else lazy_entry(namespace, name, handle)

    _bind_api()
