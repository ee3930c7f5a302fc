"""``TensorMethods``: the Tensor methods the core library installs, for type checkers.

Their types are generated from the core yaml into ``_methods.pyi`` beside this module,
which checkers read instead of it (Note [Typing what core installs] in
typedops/codegen/_stubs.py). ``Tensor`` derives from this class under ``TYPE_CHECKING``
only; at run time the core library installs the methods on ``Tensor`` itself. This real
module is what a checker falls back to without the stub: no methods, never ``Any``.
"""

from typedops_namespaces import TensorMethods as ProjectMethods

__all__ = ["TensorMethods"]


class TensorMethods(ProjectMethods):
    """The core library's Tensor methods (declared in _methods.pyi)."""

    __slots__ = ()
