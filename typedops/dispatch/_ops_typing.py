"""``Ops``: the type of ``typedops.ops`` for type checkers.

The namespaces of the bundled library are generated from its yaml into
``_ops_typing.pyi`` beside this module, which checkers read instead of it (Note [Typing
what core installs] in typedops/codegen/_stubs.py). This real module is what a checker
falls back to without the stub: every namespace dynamic, never ``Any``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typedops_namespaces import Namespaces

from ._ops import OpNamespace

__all__ = ["Ops"]


class Ops(Namespaces):
    """``typedops.ops`` as checkers see it (declared in _ops_typing.pyi)."""

    if TYPE_CHECKING:

        def __getattr__(self, namespace: str) -> OpNamespace: ...
