"""Code generation: an op yaml -> registration, typed functions and methods, and stubs.

``typedops codegen OPS_YAML --out DIR`` and ``typedops stubgen MODULE... --out DIR`` (see
``typedops.cli``), or from Python::

    from typedops.codegen import generate, write_files
    write_files(generate(Path("ops.yaml"), Path("mypkg/_ops"), namespace="myops"))

Generated modules import only ``typedops.runtime``, never this package; importing it stays
cheap all the same: the generator's modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._files import stale_files, write_files
    from ._generate import PACKAGE, generate, obsolete_files
    from ._model import CodegenError
    from ._stubgen import stubgen
    from ._trace_ops import ops_yaml, trace_ops

__all__ = ["generate", "PACKAGE", "write_files", "stale_files", "obsolete_files", "CodegenError", "trace_ops", "ops_yaml", "stubgen"]

_WHERE = {
    "generate": "_generate", "obsolete_files": "_generate", "PACKAGE": "_generate", "write_files": "_files", "stale_files": "_files",
    "CodegenError": "_model", "trace_ops": "_trace_ops", "ops_yaml": "_trace_ops", "stubgen": "_stubgen",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


