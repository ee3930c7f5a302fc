"""Small helpers more than one test module uses."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from typedops.dispatch import call_overload
from typedops.schema import FunctionSchema
from typedops.vocabulary import ArgumentError

__all__ = ["bound_overload", "with_manifest"]


def with_manifest(data: bytes, text: bytes) -> bytes:
    """The program file ``data`` with its ``program.json`` replaced by ``text`` (every
    other member as it was)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    contents["program.json"] = text
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    return out.getvalue()


def bound_overload(name: str, schemas: list[FunctionSchema], args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The index of the overload ``call_overload`` (the binding rule, with Note [out=None])
    calls, or None when it binds none."""
    candidates = [(s, (lambda i: lambda *a, **k: i)(i)) for i, s in enumerate(schemas)]
    try:
        found: int = call_overload(name, candidates, args, kwargs)
    except ArgumentError:
        return None
    return found
