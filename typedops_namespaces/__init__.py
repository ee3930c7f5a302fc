"""The op namespaces and Tensor methods a project adds to typedops, as type checkers see them.

``typedops.ops`` is typed as a class deriving from ``Namespaces`` and ``Tensor`` from
``TensorMethods`` (under ``TYPE_CHECKING`` only). Here both classes are empty: a
project's own ops are dynamic until it generates stubs.
``typedops stubgen MODULE... --out DIR`` (ops defined with ``@op`` or ``Library``) and
``typedops codegen OPS_YAML ... --stubs DIR`` (a yaml's ops and Tensor methods) write
``DIR/typedops_namespaces.pyi``, which a checker reads instead of this module when DIR is
on its stub path: pyright's ``stubPath`` is ``typings`` by default (no configuration with
``--out typings``), mypy needs ``mypy_path = typings``. See Note [Stubs for ops and methods]
in typedops/codegen/_stubs.py.

This is a top-level package of its own so that a project's stub can replace it whole: a
checker cannot take one module of an installed package from a stub folder.
"""

__all__ = ["Namespaces", "TensorMethods"]


class Namespaces:
    """``typedops.ops``' namespaces beyond those of typedops (none here)."""


class TensorMethods:
    """Tensor methods beyond those of the core library (none here)."""

    __slots__ = ()
