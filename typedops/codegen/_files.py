"""Writing generated files: only when changed, atomically, all computed before any is written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["write_files", "stale_files"]


def stale_files(files: Mapping[Path, str]) -> list[Path]:
    """The paths whose content on disk differs from ``files`` (or that do not exist)."""
    stale: list[Path] = []
    for path, text in sorted(files.items()):
        try:
            current = path.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError):
            current = None
        if current != text:
            stale.append(path)
    return stale


def write_files(files: Mapping[Path, str]) -> list[Path]:
    """Write each changed file through a temporary file in its directory and ``os.replace``
    (a reader never sees half a file); unchanged files keep their mtime. Returns the paths
    written."""
    written: list[Path] = []
    for path in stale_files(files):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(files[path])
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        written.append(path)
    return written
