"""Small helpers more than one test module uses."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

from typedops.dispatch import call_overload
from typedops.programs import ProgramFormatError, load
from typedops.schema import FunctionSchema
from typedops.vocabulary import ArgumentError

__all__ = ["archive_contents", "bound_overload", "identical_tensors", "load_outcome", "manifest_paths", "with_manifest",
           "zipped"]


def archive_contents(data: bytes) -> dict[str, bytes]:
    """Every member of the zip ``data`` (a program file), by name, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zipped(contents: dict[str, bytes]) -> bytes:
    """A zip of ``contents``, in their order."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    return out.getvalue()


def with_manifest(data: bytes, text: bytes) -> bytes:
    """The program file ``data`` with its ``program.json`` replaced by ``text`` (every
    other member as it was)."""
    contents = archive_contents(data)
    contents["program.json"] = text
    return zipped(contents)


def load_outcome(data: bytes) -> str:
    """'loaded', or the ProgramFormatError's ``where: problem``; anything else fails the test."""
    try:
        load(io.BytesIO(data))
    except ProgramFormatError as error:
        return f"{error.where}: {error.problem}"
    return "loaded"


def manifest_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path (keys and indices) of ``node`` and of everything inside it."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += manifest_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += manifest_paths(value, (*path, index))
    return found


def bound_overload(name: str, schemas: list[FunctionSchema], args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The index of the overload ``call_overload`` (the binding rule, with Note [out=None])
    calls, or None when it binds none."""
    candidates = [(s, (lambda i: lambda *a, **k: i)(i)) for i, s in enumerate(schemas)]
    try:
        found: int = call_overload(name, candidates, args, kwargs)
    except ArgumentError:
        return None
    return found


def identical_tensors(got: Any, expected: Any) -> None:
    """``got`` and ``expected`` (a tensor, or a tuple or list of them) are the same kind of
    result with the same dtypes, shapes, strides, devices and -- on CPU -- bytes."""
    gots = got if isinstance(got, (tuple, list)) else [got]
    expecteds = expected if isinstance(expected, (tuple, list)) else [expected]
    assert type(got) is type(expected) and len(gots) == len(expecteds)
    for a, b in zip(gots, expecteds):
        assert (a.dtype, a.shape, a.stride(), a.device) == (b.dtype, b.shape, b.stride(), b.device)
        if a.device.type == "cpu":
            assert np.asarray(a.numpy()).tobytes() == np.asarray(b.numpy()).tobytes()
