"""Real schemas from PyTorch, for the compatibility tests and benchmarks.

They come from the installed torch (the compat/bench extra); without it these return
None and the callers skip with a reason.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

__all__ = ["native_functions_yaml", "native_function_schemas", "jit_schemas"]


def native_functions_yaml() -> Path | None:
    """Path of native_functions.yaml inside the installed torchgen, or None."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "packaged/ATen/native/native_functions.yaml"
    return path if path.is_file() else None


@functools.cache
def native_function_schemas() -> list[str] | None:
    """Every ``func:`` line of native_functions.yaml, in file order."""
    path = native_functions_yaml()
    if path is None:
        return None
    import yaml

    entries: list[dict[str, Any]] = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return [str(e["func"]) for e in entries]


@functools.cache
def jit_schemas() -> list[str] | None:
    """Every operator schema TorchScript knows, as torch prints them."""
    if importlib.util.find_spec("torch") is None:
        return None
    torch: Any = importlib.import_module("torch")
    return [str(s) for s in torch._C._jit_get_all_schemas()]
